/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Helpers for the tests that run amdqp's kfd backend against the glue
 * stub (kmod/testing/, /sys/kernel/debug/amdqp_kfdstub). Same conventions
 * as ../amdqp/common.h: 0 or a value >= 0 on success, -errno on failure.
 */
#ifndef AMDQP_SELFTEST_STUB_H
#define AMDQP_SELFTEST_STUB_H

#include <stdarg.h>
#include <sys/prctl.h>
#include <sys/syscall.h>

#include "../amdqp/common.h"

#define STUB_DBG	"/sys/kernel/debug/amdqp_kfdstub"
#define STUB_MODULE	"amdqp_kfdstub"

static inline bool stub_available(void)
{
	return !access(STUB_DBG "/ctl", W_OK) &&
	       !access(AMDQP_DEV, R_OK | W_OK);
}

/* One command to the stub's ctl file; returns the write's -errno. */
static inline int __attribute__((format(printf, 1, 2)))
stub_cmd(const char *fmt, ...)
{
	char buf[160];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(buf, sizeof(buf), fmt, ap);
	va_end(ap);
	return write_str(STUB_DBG "/ctl", buf);
}

static inline int stub_stat(const char *name, uint64_t *v)
{
	return read_named(STUB_DBG "/stats", name, v);
}

static inline uint64_t stub_stat_v(const char *name)
{
	uint64_t v = ~0ULL;

	stub_stat(name, &v);
	return v;
}

/* The stub's view of one queue. */
struct stub_queue {
	int ctl;	/* queue-control suspended */
	int active;	/* mapped */
	int evicted;
	int reset;	/* its process has a reset queue on this device */
};

static inline int stub_queue(pid_t pid, uint32_t gpu, uint32_t qid,
			     struct stub_queue *out)
{
	char buf[16384], *line, *save = NULL;
	int ret = read_str(STUB_DBG "/state", buf, sizeof(buf));

	if (ret < 0)
		return ret;
	for (line = strtok_r(buf, "\n", &save); line;
	     line = strtok_r(NULL, "\n", &save)) {
		int p;
		unsigned int g, q;

		if (sscanf(line, "queue %d %u %u ctl=%d active=%d evicted=%d reset=%d",
			   &p, &g, &q, &out->ctl, &out->active, &out->evicted,
			   &out->reset) == 7 &&
		    p == pid && g == gpu && q == qid)
			return 0;
	}
	return -ENOENT;
}

/* -1 on error, else the ctl flag */
static inline int stub_ctl(pid_t pid, uint32_t gpu, uint32_t qid)
{
	struct stub_queue q;

	return stub_queue(pid, gpu, qid, &q) ? -1 : q.ctl;
}

/*
 * The stub's process entry of @pid: 0 and its live queue references in
 * *handles, or -ENOENT once it was released (exited and unreferenced).
 */
static inline int stub_proc(pid_t pid, int *exited, int *handles)
{
	char buf[16384], *line, *save = NULL;
	int ret = read_str(STUB_DBG "/state", buf, sizeof(buf));

	if (ret < 0)
		return ret;
	for (line = strtok_r(buf, "\n", &save); line;
	     line = strtok_r(NULL, "\n", &save)) {
		unsigned long long id;
		int p;

		if (sscanf(line, "proc %d id=%llu exited=%d handles=%d", &p,
			   &id, exited, handles) == 4 && p == pid)
			return 0;
	}
	return -ENOENT;
}

/*
 * The CU mask the stub queue's MQD carries (hex words, word 0 first, the
 * XCCs interleaved as AMDKFD_IOC_SET_CU_MASK lays them out) into @cu, and
 * whether a mask is imposed on it; 0 or -errno.
 */
static inline int stub_cu(pid_t pid, uint32_t gpu, uint32_t qid, int *imp,
			  char *cu, size_t len)
{
	char buf[16384], *line, *save = NULL, *c;
	int ret = read_str(STUB_DBG "/state", buf, sizeof(buf));

	if (ret < 0)
		return ret;
	for (line = strtok_r(buf, "\n", &save); line;
	     line = strtok_r(NULL, "\n", &save)) {
		int p;
		unsigned int g, q;

		if (sscanf(line, "queue %d %u %u", &p, &g, &q) != 3 ||
		    p != pid || g != gpu || q != qid)
			continue;
		c = strstr(line, " imp=");
		if (!c || sscanf(c, " imp=%d", imp) != 1)
			return -EPROTO;
		c = strstr(line, " cu=");
		if (!c)
			return -EPROTO;
		snprintf(cu, len, "%s", c + 4);
		return 0;
	}
	return -ENOENT;
}

/* Number of stub queues with a state line containing @what. */
static inline int stub_nr_with(const char *what)
{
	char buf[131072], *line, *save = NULL;
	int n = 0, ret = read_str(STUB_DBG "/state", buf, sizeof(buf));

	if (ret < 0)
		return ret;
	for (line = strtok_r(buf, "\n", &save); line;
	     line = strtok_r(NULL, "\n", &save))
		if (!strncmp(line, "queue ", 6) && strstr(line, what))
			n++;
	return n;
}

/* Number of queues of the whole stub with the ctl flag set. */
static inline int stub_nr_ctl(void)
{
	/* Room for a few hundred queues' lines. */
	char buf[131072], *line, *save = NULL;
	int n = 0, ret = read_str(STUB_DBG "/state", buf, sizeof(buf));

	if (ret < 0)
		return ret;
	for (line = strtok_r(buf, "\n", &save); line;
	     line = strtok_r(NULL, "\n", &save))
		if (!strncmp(line, "queue ", 6) && strstr(line, " ctl=1 "))
			n++;
	return n;
}

/* A first free gpu_id >= @base for a stub device of @mode. */
static inline int stub_new_device(uint32_t base, const char *mode)
{
	uint32_t id;
	int ret = -EEXIST;

	for (id = base; id < base + 500; id++) {
		ret = stub_cmd("dev_add %u %s 1", id, mode);
		if (!ret)
			return id;
		if (ret != -EEXIST)
			return ret;
	}
	return ret;
}

/*
 * A process that only exists to own fake queues (they need a live pid).
 * It dies with the test that started it, so that a test ended by a failed
 * assertion leaves no process holding the runner's output pipe open.
 */
static inline pid_t sleeper_start(void)
{
	pid_t parent = getpid(), pid = fork();

	if (!pid) {
		prctl(PR_SET_PDEATHSIG, SIGKILL);
		if (getppid() != parent)
			_exit(0);
		for (;;)
			pause();
	}
	return pid;
}

static inline void sleeper_stop(pid_t pid)
{
	if (pid <= 0)
		return;
	kill(pid, SIGKILL);
	waitpid(pid, NULL, 0);
}

static inline int kmod_rmmod(const char *name)
{
	return syscall(SYS_delete_module, name, O_NONBLOCK) ? -errno : 0;
}

static inline int kmod_insmod(const char *file, const char *params)
{
	const char *dir = getenv("AMDQP_MODULE_DIR");
	char path[512];
	int fd, ret;

	snprintf(path, sizeof(path), "%s/%s", dir && *dir ? dir : "/modules",
		 file);
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	ret = syscall(SYS_finit_module, fd, params, 0) ? -errno : 0;
	close(fd);
	return ret;
}

/* The kfd backend is bound (GET_VERSION backends). */
static inline int kfd_bound(void)
{
	struct amdqp_version v;
	int fd = qp_open(), ret;

	if (fd < 0)
		return fd;
	ret = qp_version(fd, &v);
	close(fd);
	return ret ? ret : !!(v.backends & AMDQP_BACKEND_KFD);
}

/* SUSPEND with a grace period; the batch result in *out. */
static inline int qp_suspend_grace(int fd, struct amdqp_queue_ref *refs,
				   uint32_t n, uint32_t grace_us,
				   struct amdqp_batch *out)
{
	struct amdqp_batch b = {
		.refs = (uintptr_t)refs, .count = n,
		.ref_size = sizeof(*refs), .grace_us = grace_us,
	};
	int ret = ioctl(fd, AMDQP_IOC_SUSPEND, &b) ? -errno : 0;

	if (out)
		*out = b;
	return ret;
}

#endif /* AMDQP_SELFTEST_STUB_H */
