/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Helpers shared by the amdqp selftests: /dev/amdqp and /dev/amdqp_sim
 * wrappers, sim devices through debugfs, and processes that own queues.
 *
 * Every helper returns 0 (or a value >= 0) on success and -errno on
 * failure, so that tests can write ASSERT_EQ(0, helper(...)) and see the
 * errno in the failure message.
 *
 * Helpers never use ASSERT_*(): they also run in forked children, where a
 * failed assertion would run the fixture teardown of the test process.
 */
#ifndef AMDQP_SELFTEST_COMMON_H
#define AMDQP_SELFTEST_COMMON_H

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <grp.h>
#include <poll.h>
#include <signal.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/types.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <linux/amdqp.h>
#include <linux/amdqp_sim.h>

#define AMDQP_DEV	"/dev/amdqp"
#define AMDQP_SIM_DEV	"/dev/amdqp_sim"
#define SIM_DBG		"/sys/kernel/debug/amdqp_sim"
#define AMDQP_PARAMS	"/sys/module/amdqp/parameters"

#define NSEC_PER_MSEC	1000000ULL
#define NSEC_PER_SEC	1000000000ULL

#define ARRAY_LEN(a)	(sizeof(a) / sizeof((a)[0]))

static inline uint64_t now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * NSEC_PER_SEC + ts.tv_nsec;
}

static inline void sleep_ms(unsigned int ms)
{
	struct timespec ts = { ms / 1000, (long)(ms % 1000) * 1000000L };

	while (nanosleep(&ts, &ts) && errno == EINTR)
		;
}

/* ---- files ---------------------------------------------------------- */

static inline int write_str(const char *path, const char *s)
{
	ssize_t n, len = strlen(s);
	int fd, err = 0;

	fd = open(path, O_WRONLY | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	n = write(fd, s, len);
	if (n < 0)
		err = -errno;
	else if (n != len)
		err = -EIO;
	close(fd);
	return err;
}

static inline int write_u64(const char *path, uint64_t v)
{
	char buf[32];

	snprintf(buf, sizeof(buf), "%llu\n", (unsigned long long)v);
	return write_str(path, buf);
}

static inline int read_str(const char *path, char *buf, size_t len)
{
	ssize_t n, got = 0;
	int fd;

	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	while ((size_t)got < len - 1) {
		n = read(fd, buf + got, len - 1 - got);
		if (n < 0) {
			int err = -errno;

			close(fd);
			return err;
		}
		if (!n)
			break;
		got += n;
	}
	buf[got] = 0;
	close(fd);
	return got;
}

static inline int read_u64(const char *path, uint64_t *v)
{
	char buf[64];
	int ret = read_str(path, buf, sizeof(buf));

	if (ret < 0)
		return ret;
	*v = strtoull(buf, NULL, 0);
	return 0;
}

/* Value of line "name value" in a text file (sim counters, amdqp stats). */
static inline int read_named(const char *path, const char *name, uint64_t *v)
{
	char buf[4096], *line, *save = NULL;
	size_t len = strlen(name);
	int ret = read_str(path, buf, sizeof(buf));

	if (ret < 0)
		return ret;
	for (line = strtok_r(buf, "\n", &save); line;
	     line = strtok_r(NULL, "\n", &save)) {
		if (!strncmp(line, name, len) &&
		    (line[len] == ' ' || line[len] == '\t' || line[len] == ':')) {
			char *p = line + len;

			while (*p == ' ' || *p == '\t' || *p == ':')
				p++;
			*v = strtoull(p, NULL, 0);
			return 0;
		}
	}
	return -ENOENT;
}

/* ---- sim devices (debugfs) ------------------------------------------ */

static inline bool sim_available(void)
{
	return !access(SIM_DBG "/new_device", W_OK) &&
	       !access(AMDQP_SIM_DEV, R_OK | W_OK) &&
	       !access(AMDQP_DEV, R_OK | W_OK);
}

static inline bool sim_device_exists(uint32_t gpu_id)
{
	char path[128];

	snprintf(path, sizeof(path), SIM_DBG "/gpu%u", gpu_id);
	return !access(path, F_OK);
}

/*
 * Create a sim device with the first free gpu_id >= @base. Returns the
 * gpu_id (> 0) or -errno. Tests pass distinct bases so that a device left
 * behind by a crashed test never collides with another test's.
 */
static inline int sim_new_device(uint32_t base, const char *mode,
				 unsigned int xcc, unsigned int slots)
{
	char buf[96];
	uint32_t id;
	int ret = -EEXIST;

	for (id = base; id < base + 500; id++) {
		if (sim_device_exists(id))
			continue;
		snprintf(buf, sizeof(buf), "%u %s %u %u\n", id, mode, xcc,
			 slots);
		ret = write_str(SIM_DBG "/new_device", buf);
		if (!ret)
			return id;
		if (ret != -EEXIST && ret != -EBUSY)
			return ret;
	}
	return ret;
}

static inline int sim_del_device(uint32_t gpu_id)
{
	char buf[32];

	snprintf(buf, sizeof(buf), "%u\n", gpu_id);
	return write_str(SIM_DBG "/del_device", buf);
}

/* Fixture teardown: close the fds and remove the device a setup made. */
static inline void sim_env_close(int qfd, int sfd, int gpu)
{
	if (sfd >= 0)
		close(sfd);
	if (qfd >= 0)
		close(qfd);
	if (gpu > 0)
		sim_del_device(gpu);
}

static inline void sim_knob_path(char *path, size_t len, uint32_t gpu_id,
				 const char *knob)
{
	snprintf(path, len, SIM_DBG "/gpu%u/%s", gpu_id, knob);
}

static inline int sim_knob_set(uint32_t gpu_id, const char *knob, uint64_t v)
{
	char path[160];

	sim_knob_path(path, sizeof(path), gpu_id, knob);
	return write_u64(path, v);
}

static inline int sim_knob_get(uint32_t gpu_id, const char *knob, uint64_t *v)
{
	char path[160];

	sim_knob_path(path, sizeof(path), gpu_id, knob);
	return read_u64(path, v);
}

static inline int sim_counter(uint32_t gpu_id, const char *name, uint64_t *v)
{
	char path[160];

	sim_knob_path(path, sizeof(path), gpu_id, "counters");
	return read_named(path, name, v);
}

/* ---- /dev/amdqp_sim -------------------------------------------------- */

static inline int sim_open(void)
{
	int fd = open(AMDQP_SIM_DEV, O_RDWR | O_CLOEXEC);

	return fd < 0 ? -errno : fd;
}

static inline int sim_create(int sfd, uint32_t gpu_id, uint32_t prio,
			     uint32_t *queue_id)
{
	struct amdqp_sim_create_queue c = { .gpu_id = gpu_id,
					    .priority = prio };

	int ret = ioctl(sfd, AMDQP_SIM_IOC_CREATE_QUEUE, &c) ? -errno : 0;

	*queue_id = ret ? 0 : c.queue_id;
	return ret;
}

static inline int sim_destroy(int sfd, uint32_t gpu_id, uint32_t queue_id)
{
	struct amdqp_sim_queue_id q = { .gpu_id = gpu_id,
					.queue_id = queue_id };

	return ioctl(sfd, AMDQP_SIM_IOC_DESTROY_QUEUE, &q) ? -errno : 0;
}

static inline int sim_submit(int sfd, uint32_t gpu_id, uint32_t queue_id,
			     uint64_t duration_ns, uint32_t count,
			     uint32_t width, uint64_t *seqno)
{
	struct amdqp_sim_submit s = {
		.gpu_id = gpu_id, .queue_id = queue_id,
		.duration_ns = duration_ns, .count = count, .width = width,
	};

	int ret = ioctl(sfd, AMDQP_SIM_IOC_SUBMIT, &s) ? -errno : 0;

	if (seqno)
		*seqno = ret ? 0 : s.seqno;
	return ret;
}

static inline int sim_wait(int sfd, uint32_t gpu_id, uint32_t queue_id,
			   uint64_t seqno, uint64_t timeout_ns,
			   uint64_t *completed_ns)
{
	struct amdqp_sim_wait w = {
		.gpu_id = gpu_id, .queue_id = queue_id, .seqno = seqno,
		.timeout_ns = timeout_ns,
	};

	if (ioctl(sfd, AMDQP_SIM_IOC_WAIT, &w))
		return -errno;
	if (completed_ns)
		*completed_ns = w.completed_ns;
	return 0;
}

static inline int sim_query(int sfd, uint32_t gpu_id, uint32_t queue_id,
			    struct amdqp_sim_query *out)
{
	memset(out, 0, sizeof(*out));
	out->gpu_id = gpu_id;
	out->queue_id = queue_id;
	return ioctl(sfd, AMDQP_SIM_IOC_QUERY, out) ? -errno : 0;
}

/* Poll QUERY until rptr reaches @rptr. */
static inline int sim_wait_rptr(int sfd, uint32_t gpu_id, uint32_t queue_id,
				uint64_t rptr, unsigned int timeout_ms)
{
	uint64_t end = now_ns() + timeout_ms * NSEC_PER_MSEC;
	struct amdqp_sim_query q;
	int ret;

	for (;;) {
		ret = sim_query(sfd, gpu_id, queue_id, &q);
		if (ret)
			return ret;
		if (q.rptr >= rptr)
			return 0;
		if (now_ns() > end)
			return -ETIMEDOUT;
		sleep_ms(5);
	}
}

/*
 * A user-mode queue (AMDQP_SIM_QUEUE_USERMODE) whose ring the caller will
 * map at @ring_va; *@mmap_offset is what to pass to mmap(2) on @sfd.
 */
static inline int sim_create_uq(int sfd, uint32_t gpu_id, uint32_t prio,
				uint64_t ring_va, uint64_t ring_size,
				uint32_t *queue_id, uint64_t *mmap_offset)
{
	struct amdqp_sim_create_queue c = {
		.gpu_id = gpu_id, .priority = prio, .ring_va = ring_va,
		.ring_size = ring_size, .flags = AMDQP_SIM_QUEUE_USERMODE,
	};
	int ret = ioctl(sfd, AMDQP_SIM_IOC_CREATE_QUEUE, &c) ? -errno : 0;

	*queue_id = ret ? 0 : c.queue_id;
	if (mmap_offset)
		*mmap_offset = ret ? 0 : c.mmap_offset;
	return ret;
}

/* The owner's UPDATE_QUEUE: @percentage 0 takes the queue off. */
static inline int sim_update_queue(int sfd, uint32_t gpu_id,
				   uint32_t queue_id, uint32_t percentage,
				   uint32_t prio)
{
	struct amdqp_sim_update_queue u = {
		.gpu_id = gpu_id, .queue_id = queue_id,
		.queue_percentage = percentage, .priority = prio,
	};

	return ioctl(sfd, AMDQP_SIM_IOC_UPDATE_QUEUE, &u) ? -errno : 0;
}

/* ---- /dev/amdqp ------------------------------------------------------ */

static inline int qp_open(void)
{
	int fd = open(AMDQP_DEV, O_RDWR | O_CLOEXEC);

	return fd < 0 ? -errno : fd;
}

static inline struct amdqp_queue_ref qref(pid_t pid, uint32_t gpu_id,
					  uint32_t queue_id)
{
	struct amdqp_queue_ref r = {
		.pid = pid, .gpu_id = gpu_id, .queue_id = queue_id,
	};

	return r;
}

/* SUSPEND/RESUME a batch; returns the ioctl's -errno, entries carry theirs. */
static inline int qp_batch(int fd, unsigned long cmd,
			   struct amdqp_queue_ref *refs, uint32_t n,
			   struct amdqp_batch *out)
{
	struct amdqp_batch b = {
		.refs = (uintptr_t)refs, .count = n,
		.ref_size = sizeof(*refs),
	};
	int ret;

	ret = ioctl(fd, cmd, &b) ? -errno : 0;
	if (out)
		*out = b;
	return ret;
}

/* One queue: returns the ioctl's -errno, or else the entry's result. */
static inline int qp_one(int fd, unsigned long cmd, pid_t pid,
			 uint32_t gpu_id, uint32_t queue_id, uint32_t *state)
{
	struct amdqp_queue_ref r = qref(pid, gpu_id, queue_id);
	int ret;

	r.result = 0x7777;	/* must be overwritten */
	ret = qp_batch(fd, cmd, &r, 1, NULL);
	if (ret)
		return ret;
	if (state)
		*state = r.state;
	return r.result;
}

/* One queue named by its ring VA (AMDQP_REF_BY_RING); like qp_one(). */
static inline int qp_one_ring(int fd, unsigned long cmd, pid_t pid,
			      uint64_t ring_va, uint32_t *state)
{
	struct amdqp_queue_ref r = {
		.pid = pid, .flags = AMDQP_REF_BY_RING, .ring_va = ring_va,
	};
	int ret;

	r.result = 0x7777;	/* must be overwritten */
	ret = qp_batch(fd, cmd, &r, 1, NULL);
	if (ret)
		return ret;
	if (state)
		*state = r.state;
	return r.result;
}

static inline int qp_suspend1(int fd, pid_t pid, uint32_t gpu_id,
			      uint32_t queue_id)
{
	return qp_one(fd, AMDQP_IOC_SUSPEND, pid, gpu_id, queue_id, NULL);
}

static inline int qp_resume1(int fd, pid_t pid, uint32_t gpu_id,
			     uint32_t queue_id)
{
	return qp_one(fd, AMDQP_IOC_RESUME, pid, gpu_id, queue_id, NULL);
}

static inline int qp_gpu_set(int fd, unsigned long cmd, uint32_t *gpus,
			     uint32_t n, uint32_t prio, struct amdqp_gpu_set *out)
{
	struct amdqp_gpu_set s = {
		.gpu_ids = (uintptr_t)gpus, .num_gpus = n, .priority = prio,
	};
	int ret = ioctl(fd, cmd, &s) ? -errno : 0;

	if (out)
		*out = s;
	return ret;
}

static inline int qp_set_priority(int fd, pid_t pid, uint32_t gpu_id,
				  uint32_t queue_id, uint32_t prio,
				  int *result)
{
	struct amdqp_set_priority sp = { .ref = qref(pid, gpu_id, queue_id),
					 .priority = prio };
	int ret;

	sp.ref.result = 0x7777;
	ret = ioctl(fd, AMDQP_IOC_SET_PRIORITY, &sp) ? -errno : 0;
	if (result)
		*result = sp.ref.result;
	return ret;
}

static inline int qp_version(int fd, struct amdqp_version *v)
{
	memset(v, 0, sizeof(*v));
	return ioctl(fd, AMDQP_IOC_GET_VERSION, v) ? -errno : 0;
}

/* Device info of @gpu_id via LIST_DEVICES. */
static inline int qp_dev_info(int fd, uint32_t gpu_id,
			      struct amdqp_device_info *out)
{
	struct amdqp_device_info infos[64];
	struct amdqp_list_devices l = {
		.devices = (uintptr_t)infos, .count = ARRAY_LEN(infos),
		.info_size = sizeof(infos[0]),
	};
	uint32_t i;

	if (ioctl(fd, AMDQP_IOC_LIST_DEVICES, &l))
		return -errno;
	for (i = 0; i < l.filled; i++) {
		if (infos[i].gpu_id == gpu_id) {
			*out = infos[i];
			return 0;
		}
	}
	return -ENOENT;
}

static inline uint64_t qp_sched_updates(int fd, uint32_t gpu_id)
{
	struct amdqp_device_info di;

	if (qp_dev_info(fd, gpu_id, &di))
		return ~0ULL;
	return di.sched_updates;
}

/* List the queues of @gpu_id (0: all) owned by @pid (0: all). */
static inline int qp_list(int fd, uint32_t gpu_id, pid_t pid,
			  struct amdqp_queue_info *infos, uint32_t cap,
			  uint32_t *n)
{
	struct amdqp_list_queues l = {
		.queues = (uintptr_t)infos, .count = cap,
		.info_size = sizeof(*infos), .gpu_id = gpu_id, .pid = pid,
	};

	*n = 0;
	if (ioctl(fd, AMDQP_IOC_LIST_QUEUES, &l))
		return -errno;
	*n = l.filled;
	return 0;
}

/* The entry of one queue; -ENOENT if it is not listed. */
static inline int qp_queue_info(int fd, pid_t pid, uint32_t gpu_id,
				uint32_t queue_id, struct amdqp_queue_info *out)
{
	struct amdqp_queue_info infos[256];
	uint32_t i, n = 0;
	int ret;

	ret = qp_list(fd, gpu_id, pid, infos, ARRAY_LEN(infos), &n);
	if (ret)
		return ret;
	for (i = 0; i < n; i++) {
		if (infos[i].gpu_id == gpu_id &&
		    infos[i].queue_id == queue_id &&
		    (!pid || infos[i].pid == (uint32_t)pid)) {
			*out = infos[i];
			return 0;
		}
	}
	return -ENOENT;
}

/* AMDQP_QSTATE_* of a queue as @fd sees it, or -errno. */
static inline int qp_state(int fd, pid_t pid, uint32_t gpu_id,
			   uint32_t queue_id)
{
	struct amdqp_queue_info qi;
	int ret = qp_queue_info(fd, pid, gpu_id, queue_id, &qi);

	return ret ? ret : (int)qi.state;
}

/* Wait until (state & mask) == want; returns the last state or -errno. */
static inline int qp_wait_state(int fd, pid_t pid, uint32_t gpu_id,
				uint32_t queue_id, uint32_t mask,
				uint32_t want, unsigned int timeout_ms)
{
	uint64_t end = now_ns() + timeout_ms * NSEC_PER_MSEC;
	int st;

	for (;;) {
		st = qp_state(fd, pid, gpu_id, queue_id);
		if (st < 0 || ((uint32_t)st & mask) == want)
			return st;
		if (now_ns() > end)
			return st;
		sleep_ms(10);
	}
}

static inline int qp_set_mask(int fd, uint64_t mask)
{
	struct amdqp_event_mask m = { .mask = mask };

	return ioctl(fd, AMDQP_IOC_SET_EVENT_MASK, &m) ? -errno : 0;
}

/*
 * Read events until one of @type concerning @gpu_id (0: any) and, if
 * non-zero, @queue_id arrives. Others are dropped. Returns 0 or -ETIMEDOUT.
 */
static inline int qp_wait_event(int fd, uint32_t type, uint32_t gpu_id,
				uint32_t queue_id, unsigned int timeout_ms,
				struct amdqp_event *out)
{
	uint64_t end = now_ns() + timeout_ms * NSEC_PER_MSEC;
	struct amdqp_event ev[16];

	if (out)
		memset(out, 0, sizeof(*out));
	for (;;) {
		struct pollfd p = { .fd = fd, .events = POLLIN };
		int64_t left = (int64_t)(end - now_ns());
		ssize_t n;
		int i;

		if (left <= 0)
			return -ETIMEDOUT;
		n = poll(&p, 1, left / (int64_t)NSEC_PER_MSEC + 1);
		if (n < 0 && errno != EINTR)
			return -errno;
		if (n <= 0)
			continue;
		n = read(fd, ev, sizeof(ev));
		if (n < 0) {
			if (errno == EAGAIN || errno == EINTR)
				continue;
			return -errno;
		}
		for (i = 0; i < n / (ssize_t)sizeof(ev[0]); i++) {
			if (ev[i].type != type)
				continue;
			if (gpu_id && ev[i].gpu_id != gpu_id)
				continue;
			if (queue_id && ev[i].queue_id != queue_id)
				continue;
			if (out)
				*out = ev[i];
			return 0;
		}
	}
}

/* ---- module parameters ---------------------------------------------- */

static inline int qp_param_get(const char *name, uint64_t *v)
{
	char path[160];

	snprintf(path, sizeof(path), AMDQP_PARAMS "/%s", name);
	return read_u64(path, v);
}

static inline int qp_param_set(const char *name, uint64_t v)
{
	char path[160];

	snprintf(path, sizeof(path), AMDQP_PARAMS "/%s", name);
	return write_u64(path, v);
}

/* ---- a process that owns queues -------------------------------------- */

#define OWNER_MAX_QUEUES	32

/*
 * A forked child that opens /dev/amdqp_sim, creates queues on request and
 * keeps them until told to exit (or killed). Commands go over a pipe; the
 * child answers every command with one struct owner_reply.
 */
struct owner {
	pid_t pid;
	int cmd;	/* parent writes */
	int reply;	/* parent reads */
};

struct owner_cmd {
	uint32_t op;		/* OWNER_* */
	uint32_t gpu_id;
	uint32_t arg;		/* priority, queue id */
	uint32_t arg2;		/* count */
	uint64_t duration_ns;
};

struct owner_reply {
	int32_t ret;
	uint32_t queue_id;
};

enum { OWNER_CREATE = 1, OWNER_DESTROY, OWNER_SUBMIT, OWNER_EXIT,
       OWNER_SETUID };

static inline int read_full(int fd, void *buf, size_t len)
{
	size_t got = 0;

	while (got < len) {
		ssize_t n = read(fd, (char *)buf + got, len - got);

		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			return n < 0 ? -errno : -EPIPE;
		got += n;
	}
	return 0;
}

static inline int write_full(int fd, const void *buf, size_t len)
{
	size_t put = 0;

	while (put < len) {
		ssize_t n = write(fd, (const char *)buf + put, len - put);

		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			return n < 0 ? -errno : -EPIPE;
		put += n;
	}
	return 0;
}

static inline void owner_main(int cmd, int reply)
{
	struct owner_cmd c;
	int sfd = -1;

	while (!read_full(cmd, &c, sizeof(c))) {
		struct owner_reply r = { 0 };

		if (c.op == OWNER_EXIT)
			_exit(0);
		if (c.op == OWNER_SETUID) {
			if (setgroups(0, NULL) || setgid(c.arg) ||
			    setuid(c.arg))
				r.ret = -errno;
		} else if (sfd < 0 && (sfd = sim_open()) < 0) {
			r.ret = sfd;
		} else if (c.op == OWNER_CREATE) {
			r.ret = sim_create(sfd, c.gpu_id, c.arg, &r.queue_id);
		} else if (c.op == OWNER_DESTROY) {
			r.ret = sim_destroy(sfd, c.gpu_id, c.arg);
		} else if (c.op == OWNER_SUBMIT) {
			r.ret = sim_submit(sfd, c.gpu_id, c.arg,
					   c.duration_ns, c.arg2, 0, NULL);
		} else {
			r.ret = -EINVAL;
		}
		if (write_full(reply, &r, sizeof(r)))
			_exit(1);
	}
	_exit(0);
}

static inline int owner_start(struct owner *o)
{
	int to_child[2], to_parent[2];

	if (pipe2(to_child, O_CLOEXEC) || pipe2(to_parent, O_CLOEXEC))
		return -errno;
	o->pid = fork();
	if (o->pid < 0)
		return -errno;
	if (!o->pid) {
		int fd;

		/* Hold nothing of the test's: no inherited holds or queues. */
		for (fd = 3; fd < 1024; fd++)
			if (fd != to_child[0] && fd != to_parent[1])
				close(fd);
		owner_main(to_child[0], to_parent[1]);
	}
	close(to_child[0]);
	close(to_parent[1]);
	o->cmd = to_child[1];
	o->reply = to_parent[0];
	return 0;
}

static inline int owner_call(struct owner *o, struct owner_cmd *c,
			     struct owner_reply *r)
{
	int ret = write_full(o->cmd, c, sizeof(*c));

	if (ret)
		return ret;
	ret = read_full(o->reply, r, sizeof(*r));
	return ret ? ret : r->ret;
}

static inline int owner_create(struct owner *o, uint32_t gpu_id,
			       uint32_t prio, uint32_t *queue_id)
{
	struct owner_cmd c = { .op = OWNER_CREATE, .gpu_id = gpu_id,
			       .arg = prio };
	struct owner_reply r;
	int ret = owner_call(o, &c, &r);

	if (!ret)
		*queue_id = r.queue_id;
	return ret;
}

static inline int owner_destroy(struct owner *o, uint32_t gpu_id,
				uint32_t queue_id)
{
	struct owner_cmd c = { .op = OWNER_DESTROY, .gpu_id = gpu_id,
			       .arg = queue_id };
	struct owner_reply r;

	return owner_call(o, &c, &r);
}

static inline int owner_submit(struct owner *o, uint32_t gpu_id,
			       uint32_t queue_id, uint64_t duration_ns,
			       uint32_t count)
{
	struct owner_cmd c = { .op = OWNER_SUBMIT, .gpu_id = gpu_id,
			       .arg = queue_id, .arg2 = count,
			       .duration_ns = duration_ns };
	struct owner_reply r;

	return owner_call(o, &c, &r);
}

/* Drop root in the child (before it opens anything). */
static inline int owner_setuid(struct owner *o, uid_t uid)
{
	struct owner_cmd c = { .op = OWNER_SETUID, .arg = uid };
	struct owner_reply r;

	return owner_call(o, &c, &r);
}

/* Ask the child to exit and reap it. Returns its wait status. */
static inline int owner_stop(struct owner *o)
{
	struct owner_cmd c = { .op = OWNER_EXIT };
	int status = -1;

	if (o->pid <= 0)
		return 0;
	write_full(o->cmd, &c, sizeof(c));
	close(o->cmd);
	close(o->reply);
	waitpid(o->pid, &status, 0);
	o->pid = 0;
	return status;
}

static inline void owner_kill(struct owner *o)
{
	if (o->pid <= 0)
		return;
	kill(o->pid, SIGKILL);
	close(o->cmd);
	close(o->reply);
	waitpid(o->pid, NULL, 0);
	o->pid = 0;
}

/* An address nothing is mapped at, hidden from the compiler's checks. */
static inline void *bad_ptr(void)
{
	uintptr_t v = 8;

	__asm__ volatile("" : "+r"(v));
	return (void *)v;
}

/* ---- numbers -------------------------------------------------------- */

static inline int cmp_u64(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;

	return x < y ? -1 : x > y;
}

/* Percentile @p (0..100) of @n samples; sorts them. */
static inline uint64_t percentile(uint64_t *v, unsigned int n, unsigned int p)
{
	unsigned int i;

	qsort(v, n, sizeof(*v), cmp_u64);
	i = (n * p + 99) / 100;
	return v[i ? i - 1 : 0];
}

#endif /* AMDQP_SELFTEST_COMMON_H */
