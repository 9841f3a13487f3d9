// SPDX-License-Identifier: GPL-2.0
/*
 * trust_tool - the tenant's side of trust-guest.sh (issue 25's adversarial
 * suite in the test VM). Each command first becomes UID:GID (no
 * supplementary groups, no capabilities left), then attacks:
 *
 *   trust_tool UID:GID run PROG [ARGS...]
 *	exec PROG as that user (busybox's su and setpriv vary by build)
 *   trust_tool UID:GID forge GPU PRIO SECONDS QID...
 *	a hand-made activity page (sealed memfd "amdqp-act", the right
 *	magic, this process's pid and start time) claiming priority PRIO
 *	(any 32-bit value) for the queues QID of GPU, marked busy, its
 *	doorbell count growing; also handed to amdqpd over its socket with
 *	wakes; held for SECONDS
 *   trust_tool UID:GID flood SECONDS CONNS
 *	CONNS connections to amdqpd's socket at once, again and again for
 *	SECONDS: garbage bytes, wake spam, status requests never read,
 *	fake REGISTER messages with no fd or a non-page fd
 *   trust_tool UID:GID burst GPU CALLS
 *	CALLS x (SUSPEND_BELOW 15 on GPU, RESUME_ALL): prints
 *	"ok=N ebusy=N other=N affected=N" (the caller's other processes'
 *	queues are what it can suspend)
 *   trust_tool UID:GID rawq GPU SECONDS
 *	registration by raw ioctls, no tagging layer: a sim queue created
 *	(KFD-style) at priority 16 and at 15, then SET_PRIORITY 15 and 16
 *	on the one made; prints "create16=E create15=E qid=N setprio15=E
 *	setprio16=E" (E: ok or the errno's name) and holds the queue for
 *	SECONDS
 *   trust_tool UID:GID bigpage SLOTS BYTES SECONDS
 *	a sealed page of BYTES bytes (the right magic) declaring SLOTS slots,
 *	as many live and busy as fit, naming no queue; handed over the
 *	socket with wakes for SECONDS
 *   trust_tool UID:GID garbage random|magic SECONDS
 *	a sealed page of random bytes; with "magic", a valid header over
 *	live slots of random contents; handed over the socket with wakes
 *	for SECONDS
 *   trust_tool UID:GID swap SECONDS
 *	a valid sealed page handed over the socket; once amdqpd took it (its
 *	ctl_flags) tries to truncate it, then puts another memfd at its fd
 *	number; wakes until SECONDS. Prints "adopted=yes|no truncate=E
 *	swapped fd=N"
 *
 * Exit status 0, 1 on a setup failure (2 usage).
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <grp.h>
#include <signal.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <time.h>
#include <unistd.h>

#include <linux/amdqp.h>
#include <linux/amdqp_sim.h>

#include "amdqp/activity.h"

static uint64_t now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

static int become(const char *spec)
{
	unsigned int uid, gid;

	if (sscanf(spec, "%u:%u", &uid, &gid) != 2) {
		fprintf(stderr, "trust_tool: UID:GID, not '%s'\n", spec);
		return -1;
	}
	if (setgroups(0, NULL) || setresgid(gid, gid, gid) ||
	    setresuid(uid, uid, uid)) {
		perror("trust_tool: setresuid");
		return -1;
	}
	return 0;
}

static int connect_daemon(void)
{
	struct sockaddr_un a = { .sun_family = AF_UNIX };
	int fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);

	if (fd < 0)
		return -1;
	snprintf(a.sun_path, sizeof(a.sun_path), "%s/%s", AMDQP_DAEMON_DIR,
		 AMDQP_DAEMON_SOCKET);
	if (connect(fd, (struct sockaddr *)&a, sizeof(a)) && errno != EINPROGRESS) {
		close(fd);
		return -1;
	}
	return fd;
}

static int send_fd(int sock, char msg, int fd)
{
	char cbuf[CMSG_SPACE(sizeof(int))] = { 0 };
	struct iovec iov = { .iov_base = &msg, .iov_len = 1 };
	struct msghdr mh = { .msg_iov = &iov, .msg_iovlen = 1 };
	struct cmsghdr *c;

	if (fd >= 0) {
		mh.msg_control = cbuf;
		mh.msg_controllen = sizeof(cbuf);
		c = CMSG_FIRSTHDR(&mh);
		c->cmsg_level = SOL_SOCKET;
		c->cmsg_type = SCM_RIGHTS;
		c->cmsg_len = CMSG_LEN(sizeof(int));
		memcpy(CMSG_DATA(c), &fd, sizeof(int));
	}
	return sendmsg(sock, &mh, MSG_NOSIGNAL) == 1 ? 0 : -1;
}

static uint64_t start_time(void)
{
	char buf[1024], *p;
	unsigned long long st = 0;
	FILE *f = fopen("/proc/self/stat", "r");
	int i;

	if (!f)
		return 0;
	if (!fgets(buf, sizeof(buf), f))
		buf[0] = 0;
	fclose(f);
	p = strrchr(buf, ')');
	/* field 3 follows ") "; start time is field 22: p ends on the blank before it */
	for (i = 3; p && i <= 22; i++)
		p = strchr(p + 1, ' ');
	if (p)
		sscanf(p + 1, "%llu", &st);
	return st;
}

static const char *err_name(int ret)
{
	switch (ret) {
	case 0:
		return "ok";
	case EINVAL:
		return "EINVAL";
	case EPERM:
		return "EPERM";
	case EACCES:
		return "EACCES";
	default:
		return strerror(ret);
	}
}

/* A sealed memfd of @bytes with the page's name; its mapping in *@map. */
static int sealed_memfd(size_t bytes, void **map)
{
	int fd = memfd_create(AMDQP_ACT_MEMFD_NAME,
			      MFD_CLOEXEC | MFD_ALLOW_SEALING);

	if (fd < 0 || ftruncate(fd, (off_t)bytes))
		return -1;
	*map = mmap(NULL, bytes, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
	if (*map == MAP_FAILED ||
	    fcntl(fd, F_ADD_SEALS, F_SEAL_SHRINK | F_SEAL_GROW | F_SEAL_SEAL)) {
		close(fd);
		return -1;
	}
	return fd;
}

/* A header as the tagging layer writes it, magic last, busy. */
static void page_header(struct amdqp_act_header *h, uint32_t bytes,
			uint32_t max_slots, uint32_t prio)
{
	h->version = AMDQP_ACT_VERSION;
	h->version_minor = AMDQP_ACT_VERSION_MINOR;
	h->size = bytes;
	h->slot_size = sizeof(struct amdqp_act_slot);
	h->max_slots = max_slots;
	h->pid = (uint32_t)getpid();
	h->flags = AMDQP_ACT_F_PRELOAD;
	h->start_time = start_time();
	h->priority = prio;
	h->hint_begin = 1; /* busy: begin != end */
	h->hint_last_ns = now_ns();
	__atomic_store_n(&h->magic, AMDQP_ACT_MAGIC, __ATOMIC_RELEASE);
}

/* Slot @i live and busy, naming queue @qid of @gpu. */
static void page_slot(struct amdqp_act_slot *s, uint32_t i, uint32_t gpu,
		      uint32_t prio, uint32_t qid)
{
	s->gpu_id = gpu;
	s->priority = prio;
	s->mechanism = AMDQP_ACT_MECH_AMDQP;
	s->queue_id = qid;
	s->ring_va = 0x7f0000000000ull + ((uint64_t)i << 20);
	s->write_index = 1;
	s->doorbells = 1;
	s->last_doorbell_ns = now_ns();
	__atomic_store_n(&s->state, AMDQP_ACT_SLOT_LIVE, __ATOMIC_RELEASE);
}

/*
 * Hands @fd to amdqpd and keeps the page's first @busy slots ringing, with
 * a wake each round, until @secs passed. @adopted runs once, when amdqpd
 * took the page (it writes ctl_flags of @watch) or after 10 s.
 */
static void register_and_ring(int fd, struct amdqp_act_page *pg,
			      uint32_t busy, unsigned int secs,
			      const struct amdqp_act_page *watch,
			      void (*adopted)(bool taken))
{
	uint64_t start = now_ns(), end = start + (uint64_t)secs * 1000000000ull;
	int sock = connect_daemon();
	uint32_t i;

	if (sock >= 0 && send_fd(sock, AMDQP_DAEMON_MSG_REGISTER, fd))
		fprintf(stderr, "trust_tool: REGISTER: %s\n", strerror(errno));
	printf("page: pid %d, socket %s\n", getpid(),
	       sock >= 0 ? "connected" : "refused");
	fflush(stdout);
	while (now_ns() < end) {
		if (adopted && (__atomic_load_n(&watch->hdr.ctl_flags,
						__ATOMIC_ACQUIRE) ||
				now_ns() - start > 10000000000ull)) {
			adopted(watch->hdr.ctl_flags != 0);
			adopted = NULL;
		}
		for (i = 0; pg && i < busy; i++) {
			pg->slots[i].write_index++;
			pg->slots[i].doorbells++;
			pg->slots[i].last_doorbell_ns = now_ns();
		}
		if (pg) {
			pg->hdr.busy_seq++;
			pg->hdr.hint_last_ns = now_ns();
		}
		if (sock >= 0)
			send_fd(sock, AMDQP_DAEMON_MSG_WAKE, -1);
		usleep(5000);
	}
}

static int forge(int argc, char **argv)
{
	uint32_t gpu = (uint32_t)strtoul(argv[0], NULL, 0);
	uint32_t prio = (uint32_t)strtoul(argv[1], NULL, 0);
	unsigned int secs = (unsigned int)strtoul(argv[2], NULL, 0);
	struct amdqp_act_page *pg;
	uint64_t end;
	int fd, sock, i, n = argc - 3;

	fd = memfd_create(AMDQP_ACT_MEMFD_NAME, MFD_CLOEXEC | MFD_ALLOW_SEALING);
	if (fd < 0 || ftruncate(fd, AMDQP_ACT_PAGE_SIZE) ||
	    fcntl(fd, F_ADD_SEALS, F_SEAL_SHRINK | F_SEAL_GROW | F_SEAL_SEAL)) {
		perror("trust_tool: memfd");
		return 1;
	}
	pg = mmap(NULL, AMDQP_ACT_PAGE_SIZE, PROT_READ | PROT_WRITE, MAP_SHARED,
		  fd, 0);
	if (pg == MAP_FAILED) {
		perror("trust_tool: mmap");
		return 1;
	}
	pg->hdr.version = AMDQP_ACT_VERSION;
	pg->hdr.version_minor = AMDQP_ACT_VERSION_MINOR;
	pg->hdr.size = AMDQP_ACT_PAGE_SIZE;
	pg->hdr.slot_size = sizeof(struct amdqp_act_slot);
	pg->hdr.max_slots = AMDQP_ACT_MAX_SLOTS;
	pg->hdr.pid = (uint32_t)getpid();
	pg->hdr.flags = AMDQP_ACT_F_PRELOAD;
	pg->hdr.start_time = start_time();
	pg->hdr.priority = prio;
	for (i = 0; i < n && i < (int)AMDQP_ACT_MAX_SLOTS; i++) {
		struct amdqp_act_slot *s = &pg->slots[i];

		s->gpu_id = gpu;
		s->priority = prio;
		s->mechanism = AMDQP_ACT_MECH_AMDQP;
		s->queue_id = (uint32_t)strtoul(argv[3 + i], NULL, 0);
		s->ring_va = 0x7f0000000000ull + ((uint64_t)i << 20);
		s->write_index = 1;
		s->doorbells = 1;
		s->last_doorbell_ns = now_ns();
		__atomic_store_n(&s->state, AMDQP_ACT_SLOT_LIVE, __ATOMIC_RELEASE);
	}
	pg->hdr.num_slots = (uint32_t)i;
	pg->hdr.hint_begin = 1; /* busy: begin != end */
	pg->hdr.hint_last_ns = now_ns();
	__atomic_store_n(&pg->hdr.magic, AMDQP_ACT_MAGIC, __ATOMIC_RELEASE);

	sock = connect_daemon();
	if (sock >= 0 && send_fd(sock, AMDQP_DAEMON_MSG_REGISTER, fd))
		fprintf(stderr, "trust_tool: REGISTER: %s\n", strerror(errno));
	printf("forged page: pid %d, %d slot(s), priority %u, socket %s\n",
	       getpid(), i, prio, sock >= 0 ? "connected" : "refused");
	fflush(stdout);
	end = now_ns() + (uint64_t)secs * 1000000000ull;
	while (now_ns() < end) {
		for (i = 0; i < (int)pg->hdr.num_slots; i++) {
			pg->slots[i].write_index++;
			pg->slots[i].doorbells++;
			pg->slots[i].last_doorbell_ns = now_ns();
		}
		pg->hdr.busy_seq++;
		pg->hdr.hint_last_ns = now_ns();
		if (sock >= 0)
			send_fd(sock, AMDQP_DAEMON_MSG_WAKE, -1);
		usleep(5000);
	}
	return 0;
}

static int flood(unsigned int secs, int conns)
{
	static const char garbage[] = "\x00\xffRRRR\x01SWWWWWWW{\"json\":[[[[";
	uint64_t end = now_ns() + (uint64_t)secs * 1000000000ull;
	unsigned long made = 0, refused = 0, sent = 0;
	int *fds = calloc((size_t)conns, sizeof(int));
	int devnull = open("/dev/null", O_RDONLY | O_CLOEXEC);
	int i, k;

	if (!fds)
		return 1;
	while (now_ns() < end) {
		for (i = 0; i < conns; i++) {
			fds[i] = connect_daemon();
			if (fds[i] < 0) {
				refused++;
				continue;
			}
			made++;
			switch (i % 5) {
			case 0: /* garbage */
				sent += send(fds[i], garbage, sizeof(garbage),
					     MSG_NOSIGNAL) > 0;
				break;
			case 1: /* wake spam */
				for (k = 0; k < 64; k++)
					sent += !send_fd(fds[i],
							 AMDQP_DAEMON_MSG_WAKE, -1);
				break;
			case 2: /* status asked, never read */
				sent += !send_fd(fds[i], AMDQP_DAEMON_MSG_STATUS,
						 -1);
				break;
			case 3: /* REGISTER without a page: /dev/null */
				sent += !send_fd(fds[i],
						 AMDQP_DAEMON_MSG_REGISTER,
						 devnull);
				break;
			default: /* REGISTER with no fd at all */
				sent += !send_fd(fds[i],
						 AMDQP_DAEMON_MSG_REGISTER, -1);
				break;
			}
		}
		usleep(20000);
		for (i = 0; i < conns; i++)
			if (fds[i] >= 0)
				close(fds[i]);
	}
	printf("flooded with %lu connections, %lu refused, %lu messages\n", made,
	       refused, sent);
	free(fds);
	return 0;
}

static int burst(uint32_t gpu, int calls)
{
	int fd = open("/dev/amdqp", O_RDWR | O_CLOEXEC);
	unsigned long ok = 0, ebusy = 0, other = 0, affected = 0;
	int i, last_errno = 0;

	if (fd < 0) {
		perror("trust_tool: /dev/amdqp");
		return 1;
	}
	for (i = 0; i < calls; i++) {
		struct amdqp_gpu_set s = { .gpu_ids = (uintptr_t)&gpu,
					   .num_gpus = 1, .priority = 15 };
		struct amdqp_gpu_set r = { .gpu_ids = (uintptr_t)&gpu,
					   .num_gpus = 1 };

		if (!ioctl(fd, AMDQP_IOC_SUSPEND_BELOW, &s)) {
			ok++;
			affected += s.affected;
		} else if (errno == EBUSY) {
			ebusy++;
		} else {
			other++;
			last_errno = errno;
		}
		ioctl(fd, AMDQP_IOC_RESUME_ALL, &r);
	}
	printf("ok=%lu ebusy=%lu other=%lu affected=%lu last_error=%s\n", ok,
	       ebusy, other, affected, last_errno ? strerror(last_errno) : "none");
	close(fd);
	return 0;
}

static int rawq(uint32_t gpu, unsigned int secs)
{
	struct amdqp_sim_create_queue c = { .gpu_id = gpu, .priority = 16 };
	struct amdqp_set_priority sp = { 0 };
	int sfd = open("/dev/amdqp_sim", O_RDWR | O_CLOEXEC);
	int qfd = open("/dev/amdqp", O_RDWR | O_CLOEXEC);
	int c16, c15, p15, p16;

	if (sfd < 0 || qfd < 0) {
		perror("trust_tool: /dev/amdqp_sim, /dev/amdqp");
		return 1;
	}
	c16 = ioctl(sfd, AMDQP_SIM_IOC_CREATE_QUEUE, &c) ? errno : 0;
	memset(&c, 0, sizeof(c));
	c.gpu_id = gpu;
	c.priority = AMDQP_PRIORITY_MAX;
	c15 = ioctl(sfd, AMDQP_SIM_IOC_CREATE_QUEUE, &c) ? errno : 0;
	sp.ref.pid = (uint32_t)getpid();
	sp.ref.gpu_id = gpu;
	sp.ref.queue_id = c.queue_id;
	sp.priority = AMDQP_PRIORITY_MAX;
	p15 = ioctl(qfd, AMDQP_IOC_SET_PRIORITY, &sp) ? errno : 0;
	sp.priority = AMDQP_PRIORITY_MAX + 1;
	p16 = ioctl(qfd, AMDQP_IOC_SET_PRIORITY, &sp) ? errno : 0;
	printf("create16=%s create15=%s qid=%u setprio15=%s setprio16=%s\n",
	       err_name(c16), err_name(c15), c15 ? 0 : c.queue_id,
	       err_name(p15), err_name(p16));
	fflush(stdout);
	sleep(secs);
	return 0;
}

static int bigpage(uint32_t slots, size_t bytes, unsigned int secs)
{
	struct amdqp_act_page *pg;
	uint32_t i, fit;
	int fd;

	if (bytes < sizeof(*pg))
		bytes = sizeof(*pg);
	fd = sealed_memfd(bytes, (void **)&pg);
	if (fd < 0) {
		perror("trust_tool: memfd");
		return 1;
	}
	fit = (uint32_t)((bytes - sizeof(pg->hdr)) / sizeof(pg->slots[0]));
	for (i = 0; i < slots && i < fit; i++)
		page_slot(&pg->slots[i], i, 0, 15, 100000 + i);
	pg->hdr.num_slots = slots;
	page_header(&pg->hdr, (uint32_t)bytes, slots, 15);
	printf("big page: %u slots declared, %u live, %zu bytes\n", slots, i,
	       bytes);
	register_and_ring(fd, pg, i, secs, NULL, NULL);
	return 0;
}

static int garbage(const char *mode, unsigned int secs)
{
	struct amdqp_act_page *pg;
	unsigned char *b;
	size_t i;
	int fd = sealed_memfd(AMDQP_ACT_PAGE_SIZE, (void **)&pg);

	if (fd < 0) {
		perror("trust_tool: memfd");
		return 1;
	}
	b = (unsigned char *)pg;
	srandom((unsigned int)getpid());
	for (i = 0; i < AMDQP_ACT_PAGE_SIZE; i++)
		b[i] = (unsigned char)random();
	if (!strcmp(mode, "magic")) {
		/* Header fields right, every slot live with random contents. */
		for (i = 0; i < AMDQP_ACT_MAX_SLOTS; i++)
			pg->slots[i].state = AMDQP_ACT_SLOT_LIVE;
		pg->hdr.num_slots = AMDQP_ACT_MAX_SLOTS;
		page_header(&pg->hdr, AMDQP_ACT_PAGE_SIZE, AMDQP_ACT_MAX_SLOTS,
			    (uint32_t)random());
	}
	printf("page of random bytes (%s)\n", mode);
	register_and_ring(fd, NULL, 0, secs, NULL, NULL);
	return 0;
}

static int swap_fd = -1;
static struct amdqp_act_page *swap_pg;

/* Truncate (sealed: refused), then another memfd at the same number. */
static void swap_page(bool taken)
{
	struct amdqp_act_page *other;
	int tr = ftruncate(swap_fd, 0) ? errno : 0;
	int fd = sealed_memfd(AMDQP_ACT_PAGE_SIZE, (void **)&other);

	if (fd < 0 || dup3(fd, swap_fd, O_CLOEXEC) < 0) {
		perror("trust_tool: swap");
		return;
	}
	close(fd);
	printf("adopted=%s truncate=%s swapped fd=%d\n", taken ? "yes" : "no",
	       err_name(tr), swap_fd);
	fflush(stdout);
}

static int swap(unsigned int secs)
{
	swap_fd = sealed_memfd(AMDQP_ACT_PAGE_SIZE, (void **)&swap_pg);
	if (swap_fd < 0) {
		perror("trust_tool: memfd");
		return 1;
	}
	page_slot(&swap_pg->slots[0], 0, 0, 7, 100000);
	swap_pg->hdr.num_slots = 1;
	page_header(&swap_pg->hdr, AMDQP_ACT_PAGE_SIZE, AMDQP_ACT_MAX_SLOTS, 7);
	register_and_ring(swap_fd, NULL, 0, secs, swap_pg, swap_page);
	return 0;
}

int main(int argc, char **argv)
{
	if (argc < 3)
		goto usage;
	if (become(argv[1]))
		return 1;
	if (!strcmp(argv[2], "run") && argc >= 4) {
		execvp(argv[3], argv + 3);
		perror("trust_tool: exec");
		return 1;
	}
	if (!strcmp(argv[2], "forge") && argc >= 7)
		return forge(argc - 3, argv + 3);
	if (!strcmp(argv[2], "flood") && argc == 5)
		return flood((unsigned int)strtoul(argv[3], NULL, 0),
			     atoi(argv[4]) > 0 ? atoi(argv[4]) : 1);
	if (!strcmp(argv[2], "burst") && argc == 5)
		return burst((uint32_t)strtoul(argv[3], NULL, 0), atoi(argv[4]));
	if (!strcmp(argv[2], "rawq") && argc == 5)
		return rawq((uint32_t)strtoul(argv[3], NULL, 0),
			    (unsigned int)strtoul(argv[4], NULL, 0));
	if (!strcmp(argv[2], "bigpage") && argc == 6)
		return bigpage((uint32_t)strtoul(argv[3], NULL, 0),
			       (size_t)strtoul(argv[4], NULL, 0),
			       (unsigned int)strtoul(argv[5], NULL, 0));
	if (!strcmp(argv[2], "garbage") && argc == 5)
		return garbage(argv[3], (unsigned int)strtoul(argv[4], NULL, 0));
	if (!strcmp(argv[2], "swap") && argc == 4)
		return swap((unsigned int)strtoul(argv[3], NULL, 0));
usage:
	fprintf(stderr,
		"usage: trust_tool UID:GID run PROG [ARGS...]\n"
		"       trust_tool UID:GID forge GPU PRIO SECONDS QID...\n"
		"       trust_tool UID:GID flood SECONDS CONNS\n"
		"       trust_tool UID:GID burst GPU CALLS\n"
		"       trust_tool UID:GID rawq GPU SECONDS\n"
		"       trust_tool UID:GID bigpage SLOTS BYTES SECONDS\n"
		"       trust_tool UID:GID garbage random|magic SECONDS\n"
		"       trust_tool UID:GID swap SECONDS\n");
	return 2;
}
