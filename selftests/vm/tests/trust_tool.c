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
 *
 * Exit status 0, 1 on a setup failure (2 usage).
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <grp.h>
#include <signal.h>
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
	/* field 3 follows ") "; start time is field 22 */
	for (i = 3; p && i < 22; i++)
		p = strchr(p + 1, ' ');
	if (p)
		sscanf(p + 1, "%llu", &st);
	return st;
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
usage:
	fprintf(stderr,
		"usage: trust_tool UID:GID run PROG [ARGS...]\n"
		"       trust_tool UID:GID forge GPU PRIO SECONDS QID...\n"
		"       trust_tool UID:GID flood SECONDS CONNS\n"
		"       trust_tool UID:GID burst GPU CALLS\n");
	return 2;
}
