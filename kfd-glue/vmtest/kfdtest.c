// SPDX-License-Identifier: GPL-2.0
/*
 * kfdtest: checks amdqp's kfd backend from inside the VM (no AMD GPU:
 * amdgpu loaded with a CPU-only KFD topology).
 *
 *   kfdtest --kfd      the kfd backend must be bound
 *   kfdtest --no-kfd   it must not be (amdgpu absent or unpatched)
 *
 * Prints one "ok - ..." / "not ok - ..." line per check (the host numbers
 * them into TAP) and exits 1 if any failed. Built static: the guest has no
 * libc.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <linux/amdqp.h>

static int failures;

static void check(int cond, const char *fmt, ...)
{
	va_list ap;

	printf("%s - ", cond ? "ok" : "not ok");
	va_start(ap, fmt);
	vprintf(fmt, ap);
	va_end(ap);
	printf("\n");
	fflush(stdout);
	if (!cond)
		failures++;
}

/* ioctl that is expected to fail: returns errno, or 0 if it succeeded */
static int ioctl_err(int fd, unsigned long req, void *arg)
{
	return ioctl(fd, req, arg) ? errno : 0;
}

int main(int argc, char **argv)
{
	struct amdqp_version ver;
	struct amdqp_list_devices ld;
	struct amdqp_device_info devs[16];
	struct amdqp_list_queues lq;
	struct amdqp_queue_info qinfo[4];
	struct amdqp_queue_ref ref;
	struct amdqp_batch b;
	struct stat st;
	int want_kfd, fd, r, i, nkfd;

	if (argc != 2 || (strcmp(argv[1], "--kfd") && strcmp(argv[1], "--no-kfd"))) {
		fprintf(stderr, "usage: %s --kfd|--no-kfd\n", argv[0]);
		return 2;
	}
	want_kfd = !strcmp(argv[1], "--kfd");

	if (want_kfd)
		check(stat("/dev/kfd", &st) == 0 && S_ISCHR(st.st_mode),
		      "/dev/kfd exists (CPU-only KFD topology)");

	fd = open("/dev/amdqp", O_RDWR);
	check(fd >= 0, "open /dev/amdqp (%s)", fd < 0 ? strerror(errno) : "ok");
	if (fd < 0)
		return 1;

	memset(&ver, 0, sizeof(ver));
	r = ioctl(fd, AMDQP_IOC_GET_VERSION, &ver);
	check(r == 0 && ver.major == AMDQP_VERSION_MAJOR,
	      "GET_VERSION (ABI %u.%u, backends 0x%x)", ver.major, ver.minor,
	      ver.backends);
	if (want_kfd)
		check(ver.backends & AMDQP_BACKEND_KFD,
		      "version reports the kfd backend bound");
	else
		check(!(ver.backends & AMDQP_BACKEND_KFD),
		      "version reports the kfd backend not bound");

	memset(&ld, 0, sizeof(ld));
	memset(devs, 0, sizeof(devs));
	ld.devices = (uintptr_t)devs;
	ld.count = 16;
	ld.info_size = sizeof(devs[0]);
	r = ioctl(fd, AMDQP_IOC_LIST_DEVICES, &ld);
	nkfd = 0;
	for (i = 0; r == 0 && i < (int)ld.filled && i < 16; i++)
		if (devs[i].backend == AMDQP_BACKEND_KFD)
			nkfd++;
	check(r == 0 && nkfd == 0,
	      "LIST_DEVICES: no kfd GPU device on a CPU-only topology (%d)",
	      r ? -errno : nkfd);

	memset(&lq, 0, sizeof(lq));
	lq.queues = (uintptr_t)qinfo;
	lq.count = 4;
	lq.info_size = sizeof(qinfo[0]);
	r = ioctl(fd, AMDQP_IOC_LIST_QUEUES, &lq);
	check(r == 0 && lq.count == 0 && lq.filled == 0,
	      "LIST_QUEUES: zero GPU queues (r=%d count=%u)", r ? -errno : 0,
	      lq.count);

	/* Malformed requests are rejected, well-formed ones act on nothing. */
	lq.flags = 1;
	r = ioctl_err(fd, AMDQP_IOC_LIST_QUEUES, &lq);
	check(r == EINVAL, "LIST_QUEUES with unknown flags: EINVAL (%s)",
	      strerror(r));

	r = ioctl_err(fd, _IOWR(AMDQP_IOC_MAGIC, 0x3f, struct amdqp_batch), &b);
	check(r == ENOTTY, "unknown ioctl: ENOTTY (%s)", strerror(r));

	memset(&ref, 0, sizeof(ref));
	ref.pid = getpid();
	ref.gpu_id = 0xdead;
	ref.queue_id = 0;
	memset(&b, 0, sizeof(b));
	b.refs = (uintptr_t)&ref;
	b.ref_size = sizeof(ref);

	b.count = 0;
	r = ioctl_err(fd, AMDQP_IOC_SUSPEND, &b);
	check(r == EINVAL, "SUSPEND of 0 queues: EINVAL (%s)", strerror(r));

	b.count = AMDQP_MAX_BATCH + 1;
	r = ioctl_err(fd, AMDQP_IOC_SUSPEND, &b);
	check(r == EINVAL || r == E2BIG, "SUSPEND over AMDQP_MAX_BATCH: rejected (%s)",
	      strerror(r));

	b.count = 1;
	b.pad = 1;
	r = ioctl_err(fd, AMDQP_IOC_SUSPEND, &b);
	check(r == EINVAL, "SUSPEND with non-zero pad: EINVAL (%s)", strerror(r));
	b.pad = 0;

	b.refs = 8;	/* unmapped user address */
	r = ioctl_err(fd, AMDQP_IOC_SUSPEND, &b);
	check(r == EFAULT, "SUSPEND with a bad pointer: EFAULT (%s)", strerror(r));
	b.refs = (uintptr_t)&ref;

	r = ioctl(fd, AMDQP_IOC_SUSPEND, &b);
	check((r == 0 && ref.result < 0 && b.done == 0) || (r && errno == ENOENT),
	      "SUSPEND of a queue that does not exist fails cleanly (r=%d result=%d)",
	      r ? -errno : 0, ref.result);

	ref.result = 0;
	r = ioctl(fd, AMDQP_IOC_RESUME, &b);
	check((r == 0 && ref.result < 0 && b.done == 0) || (r && errno == ENOENT),
	      "RESUME of a queue that does not exist fails cleanly (r=%d result=%d)",
	      r ? -errno : 0, ref.result);

	close(fd);
	return failures ? 1 : 0;
}
