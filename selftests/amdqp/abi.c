// SPDX-License-Identifier: GPL-2.0
/*
 * ABI checks for /dev/amdqp (and the sim's chardev): version, unknown
 * ioctls, structure sizes (shorter structs are zero-extended, longer ones
 * need a zero tail or get -E2BIG), reserved fields, bounds and bad
 * pointers, and dispatch on the whole command (direction and size bits).
 * Modelled on iommufd's cmd_length tests.
 */
#include "common.h"
#include "kselftest_harness.h"

#define ABI_GPU_BASE	1000

FIXTURE(abi) {
	int qfd;
	int sfd;
	int gpu;
	uint32_t qid;
};

FIXTURE_SETUP(abi)
{
	self->qfd = self->sfd = -1;
	self->gpu = 0;
	if (!sim_available())
		SKIP(return, "amdqp and amdqp_sim not loaded");
	self->gpu = sim_new_device(ABI_GPU_BASE, "hws", 2, 4);
	ASSERT_LT(0, self->gpu);
	self->qfd = qp_open();
	ASSERT_LE(0, self->qfd);
	self->sfd = sim_open();
	ASSERT_LE(0, self->sfd);
	ASSERT_EQ(0, sim_create(self->sfd, self->gpu, 5, &self->qid));
}

FIXTURE_TEARDOWN(abi)
{
	sim_env_close(self->qfd, self->sfd, self->gpu);
}

/* ioctl with a size of our choosing in the command number. */
static int ioc(int fd, unsigned int dir, unsigned int nr, unsigned int size,
	       void *arg)
{
	return ioctl(fd, _IOC(dir, AMDQP_IOC_MAGIC, nr, size), arg) ? -errno : 0;
}

#define RW	(_IOC_READ | _IOC_WRITE)

TEST_F(abi, version)
{
	struct amdqp_version v;

	memset(&v, 0xa5, sizeof(v));
	ASSERT_EQ(0, ioctl(self->qfd, AMDQP_IOC_GET_VERSION, &v));
	EXPECT_EQ(AMDQP_VERSION_MAJOR, v.major);
	EXPECT_LE(AMDQP_VERSION_MINOR, v.minor);
	EXPECT_EQ(AMDQP_MAX_BATCH, v.max_batch);
	EXPECT_EQ(AMDQP_PRIORITY_MAX, v.priority_max);
	EXPECT_TRUE(v.backends & AMDQP_BACKEND_SIM);
	EXPECT_LE(1, v.num_devices);
	EXPECT_EQ(0, v.pad);
	/* Since 1.2: default_ceiling, and the feature bits. */
	EXPECT_GE(AMDQP_PRIORITY_MAX, v.reserved);
	EXPECT_EQ(AMDQP_FEATURE_CEILING | AMDQP_FEATURE_STARVE |
		  AMDQP_FEATURE_CONFINE, v.features);	/* 1.3: CONFINE */
}

/* An older, shorter struct gets what fits and nothing beyond it. */
TEST_F(abi, version_short_and_long)
{
	unsigned char buf[sizeof(struct amdqp_version) + 16];
	struct amdqp_version v;
	size_t i;

	memset(buf, 0xa5, sizeof(buf));
	ASSERT_EQ(0, ioc(self->qfd, _IOC_READ, 0x00, 8, buf));
	memcpy(&v, buf, 8);
	EXPECT_EQ(AMDQP_VERSION_MAJOR, v.major);
	for (i = 8; i < sizeof(buf); i++) {
		ASSERT_EQ(0xa5, buf[i]) TH_LOG("byte %zu written", i);
	}

	/* A newer, longer struct: the kernel fills what it knows. */
	memset(buf, 0xa5, sizeof(buf));
	ASSERT_EQ(0, ioc(self->qfd, _IOC_READ, 0x00, sizeof(buf), buf));
	memcpy(&v, buf, sizeof(v));
	EXPECT_EQ(AMDQP_VERSION_MAJOR, v.major);
	EXPECT_EQ(AMDQP_MAX_BATCH, v.max_batch);
}

TEST_F(abi, unknown_ioctl)
{
	unsigned char buf[64] = { 0 };
	unsigned int nr;

	/* 0x09 is AMDQP_IOC_CEILINGS since ABI 1.2, 0x0a CONFINE since 1.3. */
	for (nr = 0x0b; nr <= 0x4f; nr++) {
		errno = 0;
		EXPECT_EQ(-1, ioctl(self->qfd, _IOWR(AMDQP_IOC_MAGIC, nr,
						       struct amdqp_batch), buf));
		EXPECT_EQ(ENOTTY, errno) TH_LOG("nr 0x%x", nr);
	}
	EXPECT_EQ(-1, ioctl(self->qfd, _IO('x', 0)));
	EXPECT_EQ(ENOTTY, errno);
	EXPECT_EQ(-1, ioctl(self->qfd, _IOWR('x', 4, struct amdqp_batch), buf));
	EXPECT_EQ(ENOTTY, errno);
	/* The sim's ioctls are not /dev/amdqp's, and the other way round. */
	EXPECT_EQ(-1, ioctl(self->qfd, AMDQP_SIM_IOC_QUERY, buf));
	EXPECT_EQ(ENOTTY, errno);
	EXPECT_EQ(-1, ioctl(self->sfd, AMDQP_IOC_GET_VERSION, buf));
	EXPECT_EQ(ENOTTY, errno);
	EXPECT_EQ(-1, ioctl(self->sfd, AMDQP_IOC_SUSPEND, buf));
	EXPECT_EQ(ENOTTY, errno);
}

TEST_F(abi, list_devices)
{
	struct amdqp_device_info infos[64], *mine = NULL;
	struct amdqp_list_devices l = { 0 };
	uint32_t i, total;

	/* Capacity 0: just the count. */
	ASSERT_EQ(0, ioctl(self->qfd, AMDQP_IOC_LIST_DEVICES, &l));
	EXPECT_LE(1, l.count);
	EXPECT_EQ(0, l.filled);
	EXPECT_EQ(sizeof(struct amdqp_device_info), l.info_size);
	total = l.count;

	memset(infos, 0, sizeof(infos));
	l = (struct amdqp_list_devices){ .devices = (uintptr_t)infos,
					 .count = ARRAY_LEN(infos),
					 .info_size = sizeof(infos[0]) };
	ASSERT_EQ(0, ioctl(self->qfd, AMDQP_IOC_LIST_DEVICES, &l));
	EXPECT_EQ(total, l.count);
	EXPECT_EQ(total, l.filled);
	for (i = 0; i < l.filled; i++)
		if (infos[i].gpu_id == (uint32_t)self->gpu)
			mine = &infos[i];
	ASSERT_NE(NULL, mine);
	EXPECT_EQ(AMDQP_BACKEND_SIM, mine->backend);
	EXPECT_EQ(AMDQP_SCHED_HWS, mine->sched_mode);
	EXPECT_EQ(2, mine->num_xcc);
	EXPECT_EQ(1, mine->num_queues);
	EXPECT_EQ(0, mine->num_suspended);
}

/* A caller that knows only the first 16 bytes of each entry. */
TEST_F(abi, list_devices_small_entries)
{
	unsigned char buf[64 * 16 + 16];
	struct amdqp_list_devices l = { .devices = (uintptr_t)buf,
					.count = 64, .info_size = 16 };
	struct amdqp_device_info di;
	uint32_t i;
	bool found = false;

	memset(buf, 0xa5, sizeof(buf));
	ASSERT_EQ(0, ioctl(self->qfd, AMDQP_IOC_LIST_DEVICES, &l));
	ASSERT_LE(1, l.filled);
	EXPECT_EQ(sizeof(struct amdqp_device_info), l.info_size);
	for (i = 0; i < l.filled; i++) {
		memcpy(&di, buf + i * 16, 16);
		if (di.gpu_id == (uint32_t)self->gpu) {
			found = true;
			EXPECT_EQ(AMDQP_SCHED_HWS, di.sched_mode);
		}
	}
	EXPECT_TRUE(found);
	EXPECT_EQ(0xa5, buf[l.filled * 16]);

	/* Entry sizes that are not a multiple of 8 or below 8. */
	l = (struct amdqp_list_devices){ .devices = (uintptr_t)buf,
					 .count = 1, .info_size = 4 };
	EXPECT_EQ(-1, ioctl(self->qfd, AMDQP_IOC_LIST_DEVICES, &l));
	EXPECT_EQ(EINVAL, errno);
	l.info_size = 12;
	EXPECT_EQ(-1, ioctl(self->qfd, AMDQP_IOC_LIST_DEVICES, &l));
	EXPECT_EQ(EINVAL, errno);
}

TEST_F(abi, list_queues)
{
	struct amdqp_queue_info qi, infos[4];
	uint64_t t = now_ns();
	uint32_t n = 99;

	ASSERT_EQ(0, qp_queue_info(self->qfd, getpid(), self->gpu, self->qid,
				   &qi));
	EXPECT_EQ(getpid(), (pid_t)qi.pid);
	EXPECT_EQ(getuid(), qi.uid);
	EXPECT_EQ(5, qi.priority);
	EXPECT_EQ(0, qi.state);
	EXPECT_EQ(0, qi.holders);
	EXPECT_EQ(AMDQP_BACKEND_SIM, qi.backend);
	EXPECT_NE(0, qi.ring_va);
	EXPECT_EQ(64 * 1024, qi.ring_size);
	EXPECT_EQ(0, qi.suspend_count);
	EXPECT_EQ(0, qi.suspended_ns);
	EXPECT_LT(0, qi.created_ns);
	EXPECT_GE(t, qi.created_ns);

	/* pid filter: a pid with no queues lists nothing. */
	ASSERT_EQ(0, qp_list(self->qfd, self->gpu, getppid(), infos, 4, &n));
	EXPECT_EQ(0, n);
}

TEST_F(abi, list_queues_bad)
{
	struct amdqp_queue_info qi[2];
	struct amdqp_list_queues l = { .queues = (uintptr_t)qi, .count = 2,
				       .info_size = sizeof(qi[0]),
				       .gpu_id = self->gpu };

	l.flags = 1;
	EXPECT_EQ(-1, ioctl(self->qfd, AMDQP_IOC_LIST_QUEUES, &l));
	EXPECT_EQ(EINVAL, errno);
	l.flags = 0;
	l.info_size = 3;
	EXPECT_EQ(-1, ioctl(self->qfd, AMDQP_IOC_LIST_QUEUES, &l));
	EXPECT_EQ(EINVAL, errno);
	l.info_size = sizeof(qi[0]);
	l.queues = 8;	/* unmapped */
	EXPECT_EQ(-1, ioctl(self->qfd, AMDQP_IOC_LIST_QUEUES, &l));
	EXPECT_EQ(EFAULT, errno);
	EXPECT_EQ(-1, ioctl(self->qfd, AMDQP_IOC_LIST_QUEUES, NULL));
	EXPECT_EQ(EFAULT, errno);
}

/*
 * Every ioctl that takes a struct: a longer struct whose tail is not zero
 * is -E2BIG; the same with a zero tail works.
 */
TEST_F(abi, long_struct_tail)
{
	struct amdqp_queue_ref ref = qref(getpid(), self->gpu, self->qid);
	struct amdqp_device_info di[8];
	struct amdqp_queue_info qi[8];
	uint32_t gpus[1] = { self->gpu };
	union {
		struct amdqp_list_devices ld;
		struct amdqp_list_queues lq;
		struct amdqp_set_priority sp;
		struct amdqp_batch b;
		struct amdqp_gpu_set gs;
		struct amdqp_event_mask em;
		unsigned char raw[256];
	} u;
	struct {
		unsigned int nr;
		unsigned int dir;
		unsigned int size;
	} cases[] = {
		{ 0x01, RW, sizeof(struct amdqp_list_devices) },
		{ 0x02, RW, sizeof(struct amdqp_list_queues) },
		{ 0x03, RW, sizeof(struct amdqp_set_priority) },
		{ 0x04, RW, sizeof(struct amdqp_batch) },
		{ 0x05, RW, sizeof(struct amdqp_batch) },
		{ 0x06, RW, sizeof(struct amdqp_gpu_set) },
		{ 0x07, RW, sizeof(struct amdqp_gpu_set) },
		{ 0x08, _IOC_WRITE, sizeof(struct amdqp_event_mask) },
	};
	unsigned int i, tail;

	for (i = 0; i < ARRAY_LEN(cases); i++) {
		for (tail = 0; tail < 2; tail++) {
			int ret;

			memset(&u, 0, sizeof(u));
			switch (cases[i].nr) {
			case 0x01:
				u.ld.devices = (uintptr_t)di;
				u.ld.count = 8;
				u.ld.info_size = sizeof(di[0]);
				break;
			case 0x02:
				u.lq.queues = (uintptr_t)qi;
				u.lq.count = 8;
				u.lq.info_size = sizeof(qi[0]);
				break;
			case 0x03:
				u.sp.ref = ref;
				u.sp.priority = 5;
				break;
			case 0x04:
			case 0x05:
				u.b.refs = (uintptr_t)&ref;
				u.b.count = 1;
				u.b.ref_size = sizeof(ref);
				break;
			case 0x06:
				u.gs.priority = 1;
				/* fallthrough */
			case 0x07:
				u.gs.gpu_ids = (uintptr_t)gpus;
				u.gs.num_gpus = 1;
				break;
			case 0x08:
				u.em.mask = 1ULL << AMDQP_EVENT_GPU_RESET;
				break;
			}
			u.raw[cases[i].size + 7] = tail ? 0x5a : 0;
			ret = ioc(self->qfd, cases[i].dir, cases[i].nr,
				  cases[i].size + 8, &u);
			if (tail) {
				EXPECT_EQ(-E2BIG, ret)
					TH_LOG("nr 0x%x nonzero tail",
					       cases[i].nr);
			} else {
				EXPECT_EQ(0, ret)
					TH_LOG("nr 0x%x zero tail",
					       cases[i].nr);
			}
		}
	}
	/* Whatever ran must not have left the queue suspended. */
	EXPECT_EQ(0, qp_state(self->qfd, getpid(), self->gpu, self->qid) &
		     AMDQP_QSTATE_SUSPENDED);
}

/* Short structs are zero-extended: a batch without count/ref_size is bad. */
TEST_F(abi, short_struct)
{
	struct amdqp_queue_ref ref = qref(getpid(), self->gpu, self->qid);
	struct amdqp_batch b = { .refs = (uintptr_t)&ref, .count = 1,
				 .ref_size = sizeof(ref) };

	EXPECT_EQ(-EINVAL, ioc(self->qfd, RW, 0x04, 8, &b));
	EXPECT_EQ(-EINVAL, ioc(self->qfd, RW, 0x04, 12, &b));
	EXPECT_EQ(-EINVAL, ioc(self->qfd, RW, 0x05, 8, &b));
	/* Up to ref_size is enough: the rest are zero/out fields. */
	EXPECT_EQ(0, ioc(self->qfd, RW, 0x04, 16, &b));
	EXPECT_EQ(0, ref.result);
	EXPECT_EQ(0, ioc(self->qfd, RW, 0x05, 16, &b));
	EXPECT_EQ(0, ref.result);
	EXPECT_EQ(0, qp_state(self->qfd, getpid(), self->gpu, self->qid));
}

TEST_F(abi, batch_bounds)
{
	struct amdqp_queue_ref *refs;
	struct amdqp_batch b;
	unsigned int i;

	refs = calloc(AMDQP_MAX_BATCH + 1, sizeof(*refs));
	ASSERT_NE(NULL, refs);
	for (i = 0; i <= AMDQP_MAX_BATCH; i++)
		refs[i] = qref(getpid(), self->gpu, 0xdead0000 + i);

	EXPECT_EQ(-EINVAL, qp_batch(self->qfd, AMDQP_IOC_SUSPEND, refs, 0,
				    NULL));
	EXPECT_EQ(-EINVAL, qp_batch(self->qfd, AMDQP_IOC_RESUME, refs, 0,
				    NULL));
	EXPECT_EQ(-EINVAL, qp_batch(self->qfd, AMDQP_IOC_SUSPEND, refs,
				    AMDQP_MAX_BATCH + 1, NULL));
	EXPECT_EQ(-EINVAL, qp_batch(self->qfd, AMDQP_IOC_RESUME, refs,
				    AMDQP_MAX_BATCH + 1, NULL));
	ASSERT_EQ(0, qp_batch(self->qfd, AMDQP_IOC_SUSPEND, refs,
			      AMDQP_MAX_BATCH, &b));
	EXPECT_EQ(0, b.done);
	for (i = 0; i < AMDQP_MAX_BATCH; i++) {
		ASSERT_EQ(-ENOENT, refs[i].result) TH_LOG("entry %u", i);
	}
	free(refs);
}

TEST_F(abi, batch_ref_size)
{
	/* Entries of 48 bytes: 40 known + a tail the kernel must skip. */
	unsigned char buf[2 * 48];
	struct amdqp_queue_ref r0 = qref(getpid(), self->gpu, self->qid);
	struct amdqp_queue_ref r1 = qref(getpid(), self->gpu, 0xdead);
	struct amdqp_batch b = { .refs = (uintptr_t)buf, .count = 2,
				 .ref_size = 48 };
	static const unsigned int bad[] = { 0, 4, 8, 12, 20, 44 };
	unsigned int i;

	memset(buf, 0, sizeof(buf));
	memcpy(buf, &r0, sizeof(r0));
	memcpy(buf + 48, &r1, sizeof(r1));
	ASSERT_EQ(0, ioctl(self->qfd, AMDQP_IOC_SUSPEND, &b));
	EXPECT_EQ(1, b.done);
	memcpy(&r0, buf, sizeof(r0));
	memcpy(&r1, buf + 48, sizeof(r1));
	EXPECT_EQ(0, r0.result);
	EXPECT_EQ(AMDQP_QSTATE_SUSPENDED | AMDQP_QSTATE_HELD, r0.state);
	EXPECT_EQ(-ENOENT, r1.result);
	for (i = 40; i < 48; i++) {
		EXPECT_EQ(0, buf[i]) TH_LOG("tail byte %u written", i);
	}

	/* A non-zero tail in an entry is E2BIG. */
	buf[48 + 47] = 1;
	b.done = 0;
	errno = 0;
	EXPECT_EQ(-1, ioctl(self->qfd, AMDQP_IOC_RESUME, &b));
	EXPECT_EQ(E2BIG, errno);
	buf[48 + 47] = 0;
	ASSERT_EQ(0, ioctl(self->qfd, AMDQP_IOC_RESUME, &b));
	EXPECT_EQ(1, b.done);

	for (i = 0; i < ARRAY_LEN(bad); i++) {
		b.ref_size = bad[i];
		errno = 0;
		EXPECT_EQ(-1, ioctl(self->qfd, AMDQP_IOC_SUSPEND, &b));
		EXPECT_EQ(EINVAL, errno) TH_LOG("ref_size %u", bad[i]);
	}
	EXPECT_EQ(0, qp_state(self->qfd, getpid(), self->gpu, self->qid));
}

TEST_F(abi, reserved_fields)
{
	struct amdqp_queue_ref ref = qref(getpid(), self->gpu, self->qid);
	struct amdqp_batch b;
	struct amdqp_set_priority sp;
	struct amdqp_gpu_set gs;
	struct amdqp_list_devices ld;
	struct amdqp_event_mask em;
	uint32_t gpus[1] = { self->gpu };
	int ret;

#define BATCH_INIT { .refs = (uintptr_t)&ref, .count = 1, \
		     .ref_size = sizeof(ref) }
	b = (struct amdqp_batch)BATCH_INIT;
	b.flags = 1;
	EXPECT_EQ(-1, ioctl(self->qfd, AMDQP_IOC_SUSPEND, &b));
	EXPECT_EQ(EINVAL, errno);
	b = (struct amdqp_batch)BATCH_INIT;
	b.flags = 0x80000000;
	EXPECT_EQ(-1, ioctl(self->qfd, AMDQP_IOC_RESUME, &b));
	EXPECT_EQ(EINVAL, errno);
	b = (struct amdqp_batch)BATCH_INIT;
	b.pad = 1;
	EXPECT_EQ(-1, ioctl(self->qfd, AMDQP_IOC_SUSPEND, &b));
	EXPECT_EQ(EINVAL, errno);
	b = (struct amdqp_batch)BATCH_INIT;
	b.grace_us = 1000;	/* only for suspend */
	EXPECT_EQ(-1, ioctl(self->qfd, AMDQP_IOC_RESUME, &b));
	EXPECT_EQ(EINVAL, errno);

	/* Unknown ref flags: the request or the entry is invalid. */
	b = (struct amdqp_batch)BATCH_INIT;
	ref.flags = 0x100;
	ref.result = 0;
	ret = ioctl(self->qfd, AMDQP_IOC_SUSPEND, &b) ? -errno : 0;
	if (ret) {
		EXPECT_EQ(-EINVAL, ret);
	} else {
		EXPECT_EQ(-EINVAL, ref.result);
	}
	ref.flags = 0;
	EXPECT_EQ(0, qp_state(self->qfd, getpid(), self->gpu, self->qid));

	sp = (struct amdqp_set_priority){ .ref = ref, .priority = 4,
					  .flags = 1 };
	EXPECT_EQ(-1, ioctl(self->qfd, AMDQP_IOC_SET_PRIORITY, &sp));
	EXPECT_EQ(EINVAL, errno);

	gs = (struct amdqp_gpu_set){ .gpu_ids = (uintptr_t)gpus,
				     .num_gpus = 1, .priority = 3, .flags = 1 };
	EXPECT_EQ(-1, ioctl(self->qfd, AMDQP_IOC_SUSPEND_BELOW, &gs));
	EXPECT_EQ(EINVAL, errno);
	gs.flags = 0;
	gs.pad = 1;
	EXPECT_EQ(-1, ioctl(self->qfd, AMDQP_IOC_SUSPEND_BELOW, &gs));
	EXPECT_EQ(EINVAL, errno);
	gs.pad = 0;
	gs.reserved = 1;
	EXPECT_EQ(-1, ioctl(self->qfd, AMDQP_IOC_SUSPEND_BELOW, &gs));
	EXPECT_EQ(EINVAL, errno);
	gs.reserved = 0;
	/* RESUME_ALL: priority and grace_us must be zero. */
	EXPECT_EQ(-1, ioctl(self->qfd, AMDQP_IOC_RESUME_ALL, &gs));
	EXPECT_EQ(EINVAL, errno);
	gs.priority = 0;
	gs.grace_us = 5;
	EXPECT_EQ(-1, ioctl(self->qfd, AMDQP_IOC_RESUME_ALL, &gs));
	EXPECT_EQ(EINVAL, errno);
	gs.grace_us = 0;
	gs.flags = 2;
	EXPECT_EQ(-1, ioctl(self->qfd, AMDQP_IOC_RESUME_ALL, &gs));
	EXPECT_EQ(EINVAL, errno);

	ld = (struct amdqp_list_devices){ .pad = 1 };
	EXPECT_EQ(-1, ioctl(self->qfd, AMDQP_IOC_LIST_DEVICES, &ld));
	EXPECT_EQ(EINVAL, errno);

	em.mask = 1ULL << (AMDQP_EVENT_MAX + 1);
	EXPECT_EQ(-1, ioctl(self->qfd, AMDQP_IOC_SET_EVENT_MASK, &em));
	EXPECT_EQ(EINVAL, errno);
	em.mask = 1ULL << 63;
	EXPECT_EQ(-1, ioctl(self->qfd, AMDQP_IOC_SET_EVENT_MASK, &em));
	EXPECT_EQ(EINVAL, errno);
#undef BATCH_INIT
}

/*
 * A request rejected for a reserved field must be rejected at once,
 * whatever its count says (the count was never validated).
 */
TEST_F_TIMEOUT(abi, reserved_fields_huge_count, 90)
{
	struct amdqp_queue_ref ref = qref(getpid(), self->gpu, self->qid);
	struct amdqp_batch b = { .refs = (uintptr_t)&ref, .count = 0x10000000,
				 .ref_size = sizeof(ref), .flags = 1 };
	uint64_t t0 = now_ns();

	EXPECT_EQ(-1, ioctl(self->qfd, AMDQP_IOC_SUSPEND, &b));
	EXPECT_EQ(EINVAL, errno);
	b.flags = 0;
	b.grace_us = 1;
	EXPECT_EQ(-1, ioctl(self->qfd, AMDQP_IOC_RESUME, &b));
	EXPECT_EQ(EINVAL, errno);
	EXPECT_GT(2 * NSEC_PER_SEC, now_ns() - t0)
		TH_LOG("two rejected ioctls took %llu ms",
		       (unsigned long long)((now_ns() - t0) / NSEC_PER_MSEC));
}

TEST_F(abi, priority_range)
{
	uint32_t gpus[1] = { self->gpu };
	struct amdqp_queue_info qi;
	struct amdqp_gpu_set gs;
	uint32_t q;
	int res;

	EXPECT_EQ(-EINVAL, qp_set_priority(self->qfd, getpid(), self->gpu,
					   self->qid, AMDQP_PRIORITY_MAX + 1,
					   &res));
	EXPECT_EQ(-EINVAL, qp_set_priority(self->qfd, getpid(), self->gpu,
					   self->qid, 0xffffffff, &res));
	ASSERT_EQ(0, qp_queue_info(self->qfd, getpid(), self->gpu, self->qid,
				   &qi));
	EXPECT_EQ(5, qi.priority);

	/* SUSPEND_BELOW takes 0..MAX like every level (16 was "all"). */
	EXPECT_EQ(-EINVAL, qp_gpu_set(self->qfd, AMDQP_IOC_SUSPEND_BELOW, gpus,
				      1, AMDQP_PRIORITY_MAX + 1, &gs));
	EXPECT_EQ(-EINVAL, qp_gpu_set(self->qfd, AMDQP_IOC_SUSPEND_BELOW, gpus,
				      1, 0xffffffff, &gs));
	ASSERT_EQ(0, qp_gpu_set(self->qfd, AMDQP_IOC_SUSPEND_BELOW, gpus, 1,
				AMDQP_PRIORITY_MAX, &gs));
	EXPECT_EQ(0, gs.affected);	/* our own queue is exempt */

	/* The sim refuses priorities out of range at creation. */
	EXPECT_EQ(-EINVAL, sim_create(self->sfd, self->gpu,
				      AMDQP_PRIORITY_MAX + 1, &q));
	ASSERT_EQ(0, sim_create(self->sfd, self->gpu, AMDQP_PRIORITY_MAX, &q));
	ASSERT_EQ(0, sim_create(self->sfd, self->gpu, AMDQP_PRIORITY_MIN, &q));
}

TEST_F(abi, gpu_set_bounds)
{
	uint32_t *gpus = calloc(AMDQP_MAX_BATCH + 1, sizeof(*gpus));
	struct amdqp_gpu_set gs;
	unsigned int i;
	int ret;

	ASSERT_NE(NULL, gpus);
	for (i = 0; i <= AMDQP_MAX_BATCH; i++)
		gpus[i] = self->gpu;
	EXPECT_EQ(-EINVAL, qp_gpu_set(self->qfd, AMDQP_IOC_SUSPEND_BELOW, gpus,
				      AMDQP_MAX_BATCH + 1, 1, &gs));
	EXPECT_EQ(-EINVAL, qp_gpu_set(self->qfd, AMDQP_IOC_RESUME_ALL, gpus,
				      AMDQP_MAX_BATCH + 1, 0, &gs));
	EXPECT_EQ(0, qp_gpu_set(self->qfd, AMDQP_IOC_RESUME_ALL, gpus,
				AMDQP_MAX_BATCH, 0, &gs));
	EXPECT_EQ(0, gs.affected);

	/* A gpu id that does not exist is an error, not "nothing". */
	gpus[0] = 0x7ffffff0;
	ret = qp_gpu_set(self->qfd, AMDQP_IOC_SUSPEND_BELOW, gpus, 1, 16, &gs);
	EXPECT_TRUE(ret == -ENODEV || ret == -EINVAL || ret == -ENOENT)
		TH_LOG("unknown gpu: %d", ret);
	free(gpus);
}

TEST_F(abi, bad_pointers)
{
	struct amdqp_queue_ref ref = qref(getpid(), self->gpu, self->qid);
	struct amdqp_batch b = { .refs = 0, .count = 1,
				 .ref_size = sizeof(ref) };
	struct amdqp_list_devices ld = { .devices = 8, .count = 4,
					 .info_size = 64 };
	struct amdqp_gpu_set gs = { .gpu_ids = 16, .num_gpus = 1,
				    .priority = 3 };
	void *ro;

	EXPECT_EQ(-1, ioctl(self->qfd, AMDQP_IOC_SUSPEND, &b));
	EXPECT_EQ(EFAULT, errno);
	b.refs = (uint64_t)-4096;
	EXPECT_EQ(-1, ioctl(self->qfd, AMDQP_IOC_SUSPEND, &b));
	EXPECT_EQ(EFAULT, errno);
	EXPECT_EQ(-1, ioctl(self->qfd, AMDQP_IOC_RESUME, &b));
	EXPECT_EQ(EFAULT, errno);
	/* The struct itself. */
	EXPECT_EQ(-1, ioctl(self->qfd, AMDQP_IOC_SUSPEND, NULL));
	EXPECT_EQ(EFAULT, errno);
	EXPECT_EQ(-1, ioctl(self->qfd, AMDQP_IOC_GET_VERSION, NULL));
	EXPECT_EQ(EFAULT, errno);
	EXPECT_EQ(-1, ioctl(self->qfd, AMDQP_IOC_SET_PRIORITY, (void *)8));
	EXPECT_EQ(EFAULT, errno);
	EXPECT_EQ(-1, ioctl(self->qfd, AMDQP_IOC_SET_EVENT_MASK, NULL));
	EXPECT_EQ(EFAULT, errno);
	EXPECT_EQ(-1, ioctl(self->qfd, AMDQP_IOC_LIST_DEVICES, &ld));
	EXPECT_EQ(EFAULT, errno);
	EXPECT_EQ(-1, ioctl(self->qfd, AMDQP_IOC_SUSPEND_BELOW, &gs));
	EXPECT_EQ(EFAULT, errno);
	gs.priority = 0;
	EXPECT_EQ(-1, ioctl(self->qfd, AMDQP_IOC_RESUME_ALL, &gs));
	EXPECT_EQ(EFAULT, errno);

	/* Readable but not writable refs: results cannot be written back. */
	ro = mmap(NULL, 4096, PROT_READ | PROT_WRITE,
		  MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	ASSERT_NE(MAP_FAILED, ro);
	memcpy(ro, &ref, sizeof(ref));
	ASSERT_EQ(0, mprotect(ro, 4096, PROT_READ));
	b.refs = (uintptr_t)ro;
	EXPECT_EQ(-1, ioctl(self->qfd, AMDQP_IOC_SUSPEND, &b));
	EXPECT_EQ(EFAULT, errno);
	/* Whatever happened, closing this fd would undo it; resume works. */
	memcpy(&ref, ro, sizeof(ref));
	munmap(ro, 4096);
	qp_resume1(self->qfd, getpid(), self->gpu, self->qid);
	EXPECT_EQ(0, qp_state(self->qfd, getpid(), self->gpu, self->qid) &
		     AMDQP_QSTATE_HELD);
}

/* Random bytes in every request: errors, never success or a crash. */
TEST_F(abi, garbage)
{
	static const unsigned long cmds[] = {
		AMDQP_IOC_LIST_DEVICES, AMDQP_IOC_LIST_QUEUES,
		AMDQP_IOC_SET_PRIORITY, AMDQP_IOC_SUSPEND, AMDQP_IOC_RESUME,
		AMDQP_IOC_SUSPEND_BELOW, AMDQP_IOC_RESUME_ALL,
		AMDQP_IOC_SET_EVENT_MASK,
	};
	unsigned char buf[256];
	struct amdqp_version v;
	unsigned int i, j, ok = 0;

	srandom(12345);
	for (i = 0; i < 400; i++) {
		unsigned long cmd = cmds[i % ARRAY_LEN(cmds)];

		for (j = 0; j < sizeof(buf); j++)
			buf[j] = random();
		if (!ioctl(self->qfd, cmd, buf)) {
			ok++;
			continue;
		}
		EXPECT_TRUE(errno == EINVAL || errno == EFAULT ||
			    errno == E2BIG || errno == ENOENT ||
			    errno == ENODEV || errno == EPERM)
			TH_LOG("cmd 0x%lx errno %d", cmd, errno);
	}
	/* All-random structs have non-zero reserved bits w.h.p. */
	EXPECT_GT(20, ok);
	ASSERT_EQ(0, qp_version(self->qfd, &v));
	EXPECT_EQ(0, qp_state(self->qfd, getpid(), self->gpu, self->qid) &
		     AMDQP_QSTATE_SUSPENDED);
}

TEST_F(abi, sim_bad_input)
{
	struct amdqp_sim_create_queue c = { .gpu_id = self->gpu,
					    .priority = 1, .flags = 1 };
	struct amdqp_sim_query q;
	uint32_t id;
	uint64_t seq;
	int other;

	EXPECT_EQ(-1, ioctl(self->sfd, AMDQP_SIM_IOC_CREATE_QUEUE, &c));
	EXPECT_EQ(EINVAL, errno);
	EXPECT_NE(0, sim_create(self->sfd, 0x7ffffff0, 1, &id));
	EXPECT_EQ(-EINVAL, sim_submit(self->sfd, self->gpu, self->qid, 1000, 0,
				      1, &seq));
	EXPECT_EQ(-EINVAL, sim_submit(self->sfd, self->gpu, self->qid, 1000,
				      4097, 1, &seq));
	EXPECT_EQ(-EINVAL, sim_submit(self->sfd, self->gpu, self->qid, 0, 1, 1,
				      &seq));
	EXPECT_EQ(-EINVAL, sim_submit(self->sfd, self->gpu, self->qid,
				      10 * NSEC_PER_SEC + 1, 1, 1, &seq));
	EXPECT_EQ(-ENOENT, sim_destroy(self->sfd, self->gpu, 0xdead));
	EXPECT_NE(0, sim_query(self->sfd, self->gpu, 0xdead, &q));
	memset(&q, 0, sizeof(q));
	q.gpu_id = self->gpu;
	q.queue_id = self->qid;
	q.pad = 1;
	EXPECT_EQ(-1, ioctl(self->sfd, AMDQP_SIM_IOC_QUERY, &q));
	EXPECT_EQ(EINVAL, errno);
	EXPECT_EQ(-1, ioctl(self->sfd, _IO(AMDQP_SIM_IOC_MAGIC, 0x4f)));
	EXPECT_EQ(ENOTTY, errno);

	/* Another fd cannot submit to or destroy our queue. */
	other = sim_open();
	ASSERT_LE(0, other);
	EXPECT_NE(0, sim_submit(other, self->gpu, self->qid, 1000, 1, 1, &seq));
	EXPECT_NE(0, sim_destroy(other, self->gpu, self->qid));
	close(other);
	EXPECT_EQ(0, qp_state(self->qfd, getpid(), self->gpu, self->qid));
}

/*
 * Dispatch checks the whole command: a known number with the wrong
 * direction bits is -ENOTTY, a size no version of the structure can have
 * (not a multiple of 8, below 8, above 4096) is -EINVAL, and sizes that
 * can be an older or newer version keep working.
 */
TEST_F(abi, cmd_wrong_direction_suspend)
{
	struct amdqp_queue_ref ref = qref(getpid(), self->gpu, self->qid);
	struct amdqp_batch b = { .refs = (uintptr_t)&ref, .count = 1,
				 .ref_size = sizeof(ref) };
	static const unsigned int dirs[] = { _IOC_WRITE, _IOC_READ, _IOC_NONE };
	unsigned int i;

	for (i = 0; i < ARRAY_LEN(dirs); i++) {
		EXPECT_EQ(-ENOTTY, ioc(self->qfd, dirs[i], 0x04, sizeof(b), &b))
			TH_LOG("dir %u", dirs[i]);
		EXPECT_EQ(0, qp_state(self->qfd, getpid(), self->gpu,
				      self->qid))
			TH_LOG("dir %u suspended the queue", dirs[i]);
		qp_resume1(self->qfd, getpid(), self->gpu, self->qid);
	}
	/* The right command still works. */
	ASSERT_EQ(0, ioc(self->qfd, RW, 0x04, sizeof(b), &b));
	EXPECT_EQ(0, ref.result);
	EXPECT_EQ(0, qp_resume1(self->qfd, getpid(), self->gpu, self->qid));
}

TEST_F(abi, cmd_wrong_direction_each)
{
	static const struct {
		unsigned int nr, dir, size;
	} bad[] = {
		{ 0x00, RW, sizeof(struct amdqp_version) },
		{ 0x00, _IOC_WRITE, sizeof(struct amdqp_version) },
		{ 0x01, _IOC_READ, sizeof(struct amdqp_list_devices) },
		{ 0x01, _IOC_WRITE, sizeof(struct amdqp_list_devices) },
		{ 0x02, _IOC_READ, sizeof(struct amdqp_list_queues) },
		{ 0x03, _IOC_WRITE, sizeof(struct amdqp_set_priority) },
		{ 0x05, _IOC_WRITE, sizeof(struct amdqp_batch) },
		{ 0x06, _IOC_WRITE, sizeof(struct amdqp_gpu_set) },
		{ 0x07, _IOC_READ, sizeof(struct amdqp_gpu_set) },
		{ 0x08, RW, sizeof(struct amdqp_event_mask) },
		{ 0x08, _IOC_READ, sizeof(struct amdqp_event_mask) },
		{ 0x08, _IOC_NONE, 0 },
	};
	unsigned char buf[64];
	unsigned int i;

	for (i = 0; i < ARRAY_LEN(bad); i++) {
		memset(buf, 0, sizeof(buf));
		if (bad[i].nr == 0x08)	/* a valid mask for the old code */
			buf[0] = 1 << AMDQP_EVENT_GPU_RESET;
		EXPECT_EQ(-ENOTTY, ioc(self->qfd, bad[i].dir, bad[i].nr,
				       bad[i].size, buf))
			TH_LOG("nr 0x%x dir %u", bad[i].nr, bad[i].dir);
	}
}

/* Sizes that cannot be any version of the structure. */
TEST_F(abi, cmd_wrong_size)
{
	static const unsigned int sizes[] = { 0, 4, 20, 28, 4104, 8192 };
	unsigned char *buf = calloc(1, 8192);
	unsigned int i;

	ASSERT_NE(NULL, buf);
	for (i = 0; i < ARRAY_LEN(sizes); i++) {
		/* All zero: count 0 asks for the number of devices only. */
		memset(buf, 0, 8192);
		EXPECT_EQ(-EINVAL, ioc(self->qfd, RW, 0x01, sizes[i], buf))
			TH_LOG("LIST_DEVICES size %u", sizes[i]);
		EXPECT_EQ(-EINVAL, ioc(self->qfd, _IOC_READ, 0x00, sizes[i],
				       buf))
			TH_LOG("GET_VERSION size %u", sizes[i]);
	}
	memset(buf, 0, 8192);
	buf[0] = 1 << AMDQP_EVENT_GPU_RESET;
	EXPECT_EQ(-EINVAL, ioc(self->qfd, _IOC_WRITE, 0x08, 4, buf));
	free(buf);
}

/* Older (shorter) and newer (longer, zero tail) versions are accepted. */
TEST_F(abi, cmd_extensible_sizes)
{
	unsigned char buf[4096];
	struct amdqp_list_devices l;

	memset(buf, 0, sizeof(buf));
	EXPECT_EQ(0, ioc(self->qfd, RW, 0x01, 16, buf));
	memcpy(&l, buf, 16);
	EXPECT_LE(1, l.count);
	memset(buf, 0, sizeof(buf));
	EXPECT_EQ(0, ioc(self->qfd, RW, 0x01, sizeof(buf), buf));
	memcpy(&l, buf, sizeof(l));
	EXPECT_LE(1, l.count);
	EXPECT_EQ(sizeof(struct amdqp_device_info), l.info_size);
	buf[sizeof(buf) - 1] = 1;
	EXPECT_EQ(-E2BIG, ioc(self->qfd, RW, 0x01, sizeof(buf), buf));
	memset(buf, 0, sizeof(buf));
	EXPECT_EQ(0, ioc(self->qfd, _IOC_READ, 0x00, 8, buf));
	EXPECT_EQ(AMDQP_VERSION_MAJOR, ((struct amdqp_version *)buf)->major);
}

/*
 * SET_PRIORITY writes ref.result back for every error ioctl.rst lists
 * for it (a request malformed as a whole excepted), and ref.state 0 when
 * no queue was looked up or found.
 */
TEST_F(abi, set_priority_result_written)
{
	struct amdqp_set_priority sp;
	int res;

	EXPECT_EQ(-EINVAL, qp_set_priority(self->qfd, getpid(), self->gpu,
					   self->qid, AMDQP_PRIORITY_MAX + 1,
					   &res));
	EXPECT_EQ(-EINVAL, res);

	memset(&sp, 0, sizeof(sp));
	sp.ref = qref(getpid(), self->gpu, self->qid);
	sp.priority = 1;
	sp.flags = 1;
	sp.ref.result = 0x7777;
	sp.ref.state = 0x7777;
	EXPECT_EQ(-1, ioctl(self->qfd, AMDQP_IOC_SET_PRIORITY, &sp));
	EXPECT_EQ(EINVAL, errno);
	EXPECT_EQ(-EINVAL, sp.ref.result);
	EXPECT_EQ(0, sp.ref.state);

	sp.flags = 0;
	sp.ref.flags = 0x80;		/* unknown ref flag */
	sp.ref.result = 0x7777;
	EXPECT_EQ(-1, ioctl(self->qfd, AMDQP_IOC_SET_PRIORITY, &sp));
	EXPECT_EQ(EINVAL, errno);
	EXPECT_EQ(-EINVAL, sp.ref.result);

	EXPECT_EQ(-EINVAL, qp_set_priority(self->qfd, 0, self->gpu, self->qid,
					   1, &res));
	EXPECT_EQ(-EINVAL, res);
	EXPECT_EQ(-ENOENT, qp_set_priority(self->qfd, getpid(), self->gpu,
					   0xdead, 1, &res));
	EXPECT_EQ(-ENOENT, res);

	/* Nothing changed. */
	EXPECT_EQ(0, qp_set_priority(self->qfd, getpid(), self->gpu, self->qid,
				     5, &res));
	EXPECT_EQ(0, res);
}

/* ref.state is the queue's state after the call, as LIST_QUEUES shows. */
TEST_F(abi, set_priority_state)
{
	struct amdqp_set_priority sp;
	uint32_t listed;
	int other;

	ASSERT_EQ(0, qp_suspend1(self->qfd, getpid(), self->gpu, self->qid));
	listed = qp_state(self->qfd, getpid(), self->gpu, self->qid);
	ASSERT_EQ(AMDQP_QSTATE_SUSPENDED | AMDQP_QSTATE_HELD, listed);

	memset(&sp, 0, sizeof(sp));
	sp.ref = qref(getpid(), self->gpu, self->qid);
	sp.priority = 4;
	sp.ref.state = 0x7777;
	ASSERT_EQ(0, ioctl(self->qfd, AMDQP_IOC_SET_PRIORITY, &sp));
	EXPECT_EQ(0, sp.ref.result);
	EXPECT_EQ(listed, sp.ref.state);

	/* Another fd does not hold it: suspended, not held. */
	other = qp_open();
	ASSERT_LE(0, other);
	sp.priority = 3;
	sp.ref.state = 0x7777;
	ASSERT_EQ(0, ioctl(other, AMDQP_IOC_SET_PRIORITY, &sp));
	EXPECT_EQ(AMDQP_QSTATE_SUSPENDED, sp.ref.state);
	EXPECT_EQ(qp_state(other, getpid(), self->gpu, self->qid),
		  sp.ref.state);
	close(other);

	ASSERT_EQ(0, qp_resume1(self->qfd, getpid(), self->gpu, self->qid));
	sp.priority = 2;
	sp.ref.state = 0x7777;
	ASSERT_EQ(0, ioctl(self->qfd, AMDQP_IOC_SET_PRIORITY, &sp));
	EXPECT_EQ(0, sp.ref.state);
}

/*
 * new_device takes exactly "GPU_ID [MODE [XCC [SLOTS]]]" of unsigned
 * 32-bit decimals (sim.rst): no sign, no overflow, nothing after SLOTS.
 */
TEST_F(abi, sim_new_device_strict)
{
	static const char *const bad[] = {
		"%u hws 1 8 extra\n", "%u hws 1 8 9 10\n", "%u mes -1\n",
		"%u hws 1 -8\n", "-%u\n", "%u hws 4294967297 8\n",
		"%u hws 1 18446744073709551617\n", "%u bogus\n", "%u hws 1x\n",
		"\n", "hws\n",
	};
	static const char *const good[] = {
		"%u\n", "%u mes\n", "%u hws 2\n", "  %u\tmes  2  4 \n",
	};
	/* 99999999999999999999 mod 2^32: what a wrapping parser made. */
	const uint32_t wrapped = 1661992959;
	const uint32_t id = ABI_GPU_BASE + 600;
	char buf[96];
	unsigned int i;

	for (i = 0; i < ARRAY_LEN(bad); i++) {
		if (sim_device_exists(id))
			sim_del_device(id);
		snprintf(buf, sizeof(buf), bad[i], id);
		EXPECT_EQ(-EINVAL, write_str(SIM_DBG "/new_device", buf))
			TH_LOG("accepted \"%s\"", bad[i]);
		EXPECT_FALSE(sim_device_exists(id))
			TH_LOG("\"%s\" made a device", bad[i]);
	}
	if (sim_device_exists(wrapped))
		sim_del_device(wrapped);
	EXPECT_EQ(-EINVAL, write_str(SIM_DBG "/new_device",
				     "99999999999999999999\n"));
	EXPECT_FALSE(sim_device_exists(wrapped));
	if (sim_device_exists(wrapped))
		sim_del_device(wrapped);
	EXPECT_EQ(-EINVAL, write_str(SIM_DBG "/new_device", "4294967296\n"));
	EXPECT_FALSE(sim_device_exists(0));

	for (i = 0; i < ARRAY_LEN(good); i++) {
		if (sim_device_exists(id))
			sim_del_device(id);
		snprintf(buf, sizeof(buf), good[i], id);
		EXPECT_EQ(0, write_str(SIM_DBG "/new_device", buf))
			TH_LOG("refused \"%s\"", good[i]);
		EXPECT_TRUE(sim_device_exists(id));
	}
	sim_del_device(id);
}

/*
 * The sim's own numbers follow amdqp.h's rules (sim.rst): other direction
 * bits are -ENOTTY and do nothing, a size no version can have is -EINVAL.
 */
TEST_F(abi, sim_cmd_direction_and_size)
{
	static const struct {
		unsigned int nr, dir, size;
	} bad_dir[] = {
		{ 0x40, _IOC_WRITE, sizeof(struct amdqp_sim_create_queue) },
		{ 0x41, RW, sizeof(struct amdqp_sim_queue_id) },
		{ 0x41, _IOC_READ, sizeof(struct amdqp_sim_queue_id) },
		{ 0x41, _IOC_NONE, 0 },
		{ 0x44, _IOC_READ, sizeof(struct amdqp_sim_query) },
		{ 0x44, _IOC_WRITE, sizeof(struct amdqp_sim_query) },
		{ 0x45, RW, sizeof(struct amdqp_sim_update_queue) },
	};
	static const unsigned int bad_size[] = { 0, 4, 20, 44, 4104 };
	unsigned char buf[8192];
	struct amdqp_queue_info infos[8];
	struct amdqp_sim_query q;
	unsigned int i;
	uint32_t n = 0;

	for (i = 0; i < ARRAY_LEN(bad_dir); i++) {
		struct amdqp_sim_queue_id *id = (void *)buf;

		memset(buf, 0, sizeof(buf));
		/* Valid requests for the old code: create, destroy, query. */
		if (bad_dir[i].nr == 0x40) {
			struct amdqp_sim_create_queue *c = (void *)buf;

			c->gpu_id = self->gpu;
			c->priority = 1;
		} else {
			id->gpu_id = self->gpu;
			id->queue_id = self->qid;
		}
		EXPECT_EQ(-1, ioctl(self->sfd, _IOC(bad_dir[i].dir,
						    AMDQP_SIM_IOC_MAGIC,
						    bad_dir[i].nr,
						    bad_dir[i].size), buf));
		EXPECT_EQ(ENOTTY, errno)
			TH_LOG("nr 0x%x dir %u", bad_dir[i].nr, bad_dir[i].dir);
	}
	/* Nothing was destroyed or created. */
	EXPECT_EQ(0, sim_query(self->sfd, self->gpu, self->qid, &q));
	ASSERT_EQ(0, qp_list(self->qfd, self->gpu, getpid(), infos,
			     ARRAY_LEN(infos), &n));
	EXPECT_EQ(1, n);

	for (i = 0; i < ARRAY_LEN(bad_size); i++) {
		memset(buf, 0, sizeof(buf));
		memcpy(buf, &(struct amdqp_sim_queue_id){ self->gpu, self->qid },
		       8);
		EXPECT_EQ(-1, ioctl(self->sfd, _IOC(RW, AMDQP_SIM_IOC_MAGIC,
						    0x44, bad_size[i]), buf));
		EXPECT_EQ(EINVAL, errno) TH_LOG("QUERY size %u", bad_size[i]);
	}
	/* Older and newer (zero tail) sizes keep working. */
	memset(buf, 0, sizeof(buf));
	memcpy(buf, &(struct amdqp_sim_queue_id){ self->gpu, self->qid }, 8);
	EXPECT_EQ(0, ioctl(self->sfd, _IOC(RW, AMDQP_SIM_IOC_MAGIC, 0x44, 4096),
			   buf));
	EXPECT_EQ(0, ioctl(self->sfd, _IOC(RW, AMDQP_SIM_IOC_MAGIC, 0x44, 16),
			   buf));
}

TEST_HARNESS_MAIN
