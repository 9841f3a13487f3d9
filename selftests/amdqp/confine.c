// SPDX-License-Identifier: GPL-2.0
/*
 * AMDQP_IOC_CONFINE: the queues below a priority restricted to a CU mask
 * while the fd holds them. Round trip with the owner's own mask restored
 * exactly (also one it changed while confined), one scheduler update per
 * device under HWS, the fd's close lifting everything, the watchdog
 * (max_confine_ms), permissions of another user, composition with
 * SUSPEND (suspension wins; the queue comes back confined), the ABI's
 * checks, XCC-by-XCC masks, and the sim's effect: a confined queue's
 * items run on the slots left to it, slower but on.
 *
 * The test process owns the queues (it reads their masks with the sim's
 * GET_CU_MASK); CONFINE BELOW never confines its caller's own queues, so
 * a forked child makes that call through the same open file, whose
 * confinement it then is. Timing bounds have wide margins: the VM is QEMU
 * TCG.
 */
#include <stddef.h>
#include <sys/prctl.h>

#include "common.h"
#include "kselftest_harness.h"

#define CONFINE_GPU_BASE	13000
#define SLOTS			8
#define ALL			0xffu
#define LOW			2
#define HIGH			10
#define LEVEL			5
#define NOBODY			65534

/* CONFINE with @n targets; returns the ioctl's -errno. */
static int confine(int qfd, uint32_t op, uint32_t prio,
		   struct amdqp_cu_target *t, uint32_t n,
		   struct amdqp_confine *out)
{
	struct amdqp_confine c = {
		.targets = (uintptr_t)t, .count = n,
		.target_size = sizeof(*t), .op = op, .priority = prio,
	};
	int ret = ioctl(qfd, AMDQP_IOC_CONFINE, &c) ? -errno : 0;

	if (out)
		*out = c;
	return ret;
}

/*
 * confine() from a forked child through @qfd: the confinement belongs to
 * the file, and the queues of the test process are not the caller's own.
 * @t is written back with what the kernel wrote.
 */
static int confine_child(int qfd, uint32_t op, uint32_t prio,
			 struct amdqp_cu_target *t, uint32_t n,
			 struct amdqp_confine *out)
{
	struct amdqp_confine c;
	int p[2], ret = -EIO;
	pid_t pid;

	if (pipe(p))
		return -errno;
	pid = fork();
	if (pid < 0)
		return -errno;
	if (!pid) {
		ret = confine(qfd, op, prio, t, n, &c);
		if (write_full(p[1], &ret, sizeof(ret)) ||
		    write_full(p[1], &c, sizeof(c)) ||
		    write_full(p[1], t, n * sizeof(*t)))
			_exit(1);
		_exit(0);
	}
	close(p[1]);
	if (read_full(p[0], &ret, sizeof(ret)) ||
	    read_full(p[0], &c, sizeof(c)) ||
	    read_full(p[0], t, n * sizeof(*t)))
		ret = -EPIPE;
	close(p[0]);
	waitpid(pid, NULL, 0);
	if (out)
		*out = c;
	return ret;
}

/* One target of a single-XCC device, mask in its one word. */
static struct amdqp_cu_target target1(uint32_t gpu, uint32_t *word)
{
	struct amdqp_cu_target t = {
		.gpu_id = gpu, .num_xcc = 1, .cu_per_xcc = SLOTS,
		.mask_words = 1, .mask_ptr = (uintptr_t)word,
	};

	return t;
}

/* BELOW @prio to @mask on @gpu from a child; returns -errno or affected. */
static int confine_below(int qfd, uint32_t gpu, uint32_t prio, uint32_t mask,
			 struct amdqp_confine *out)
{
	uint32_t word = mask;
	struct amdqp_cu_target t = target1(gpu, &word);
	struct amdqp_confine c;
	int ret = confine_child(qfd, AMDQP_CONFINE_OP_BELOW, prio, &t, 1, &c);

	if (out)
		*out = c;
	return ret ? ret : (int)c.affected;
}

static int release_all(int qfd)
{
	return confine(qfd, AMDQP_CONFINE_OP_RELEASE, 0, NULL, 0, NULL);
}

static int cu_ioctl(int sfd, unsigned long cmd, uint32_t gpu, uint32_t qid,
		    uint32_t flags, uint32_t *words, uint32_t num_bits)
{
	struct amdqp_sim_cu_mask m = {
		.gpu_id = gpu, .queue_id = qid, .flags = flags,
		.mask_ptr = (uintptr_t)words, .num_bits = num_bits,
	};

	return ioctl(sfd, cmd, &m) ? -errno : 0;
}

/* The slots a queue runs on now (first 32), ~0 on error. */
static uint32_t eff_mask(int sfd, uint32_t gpu, uint32_t qid)
{
	uint32_t w = 0xdeadbeef;

	if (cu_ioctl(sfd, AMDQP_SIM_IOC_GET_CU_MASK, gpu, qid,
		     AMDQP_SIM_CU_MASK_EFFECTIVE, &w, 32))
		return ~0u;
	return w;
}

/* The mask the owner set (first 32), ~0 on error. */
static uint32_t own_mask(int sfd, uint32_t gpu, uint32_t qid)
{
	uint32_t w = 0xdeadbeef;

	if (cu_ioctl(sfd, AMDQP_SIM_IOC_GET_CU_MASK, gpu, qid, 0, &w, 32))
		return ~0u;
	return w;
}

static int set_own_mask(int sfd, uint32_t gpu, uint32_t qid, uint32_t mask)
{
	return cu_ioctl(sfd, AMDQP_SIM_IOC_SET_CU_MASK, gpu, qid, 0, &mask,
			32);
}

static uint64_t counter(uint32_t gpu, const char *name)
{
	uint64_t v;

	return sim_counter(gpu, name, &v) ? ~0ULL : v;
}

FIXTURE(confine) {
	int qfd;
	int sfd;
	int gpu;
	uint32_t low[3];
	uint32_t high;
	uint64_t max_confine_ms;
	uint64_t cooldown_ms;
};

FIXTURE_VARIANT(confine) {
	const char *mode;
	bool hws;
};

FIXTURE_VARIANT_ADD(confine, hws) {
	.mode = "hws",
	.hws = true,
};

FIXTURE_VARIANT_ADD(confine, mes) {
	.mode = "mes",
	.hws = false,
};

FIXTURE_SETUP(confine)
{
	unsigned int i;

	self->qfd = self->sfd = -1;
	self->gpu = 0;
	self->max_confine_ms = self->cooldown_ms = ~0ULL;
	if (!sim_available())
		SKIP(return, "amdqp and amdqp_sim not loaded");
	if (geteuid())
		SKIP(return, "needs root");
	ASSERT_EQ(0, qp_param_get("max_confine_ms", &self->max_confine_ms));
	ASSERT_EQ(0, qp_param_get("cooldown_ms", &self->cooldown_ms));
	self->gpu = sim_new_device(CONFINE_GPU_BASE, variant->mode, 1, SLOTS);
	ASSERT_LT(0, self->gpu);
	self->qfd = qp_open();
	ASSERT_LE(0, self->qfd);
	self->sfd = sim_open();
	ASSERT_LE(0, self->sfd);
	for (i = 0; i < ARRAY_LEN(self->low); i++)
		ASSERT_EQ(0, sim_create(self->sfd, self->gpu, LOW,
					&self->low[i]));
	ASSERT_EQ(0, sim_create(self->sfd, self->gpu, HIGH, &self->high));
}

FIXTURE_TEARDOWN(confine)
{
	if (self->max_confine_ms != ~0ULL)
		qp_param_set("max_confine_ms", self->max_confine_ms);
	if (self->cooldown_ms != ~0ULL)
		qp_param_set("cooldown_ms", self->cooldown_ms);
	sim_env_close(self->qfd, self->sfd, self->gpu);
}

TEST_F(confine, version_and_info)
{
	struct amdqp_cu_target t[2] = {
		{ .gpu_id = self->gpu },
		{ .gpu_id = 0x7fffff01 },
	};
	struct amdqp_version v;
	struct amdqp_confine c;

	ASSERT_EQ(0, qp_version(self->qfd, &v));
	EXPECT_LE(3, v.minor);
	EXPECT_TRUE(v.features & AMDQP_FEATURE_CONFINE);
	t[0].result = t[1].result = 0x7777;
	ASSERT_EQ(0, confine(self->qfd, AMDQP_CONFINE_OP_INFO, 0, t, 2, &c));
	EXPECT_EQ(0, t[0].result);
	EXPECT_EQ(1, t[0].num_xcc);
	EXPECT_EQ(SLOTS, t[0].cu_per_xcc);
	EXPECT_EQ(1, t[0].mask_words);
	EXPECT_EQ(-ENODEV, t[1].result);
	EXPECT_EQ(1, c.done);
}

TEST_F(confine, round_trip)
{
	uint64_t updates;
	struct amdqp_confine c;
	unsigned int i;
	int st;

	updates = qp_sched_updates(self->qfd, self->gpu);
	/* Three queues below LEVEL: one update under HWS, one pair each MES. */
	ASSERT_EQ(3, confine_below(self->qfd, self->gpu, LEVEL, 0x0f, &c));
	EXPECT_EQ(0, c.skipped);
	EXPECT_EQ(1, c.done);
	EXPECT_EQ(variant->hws ? 1 : 6,
		  qp_sched_updates(self->qfd, self->gpu) - updates);
	for (i = 0; i < ARRAY_LEN(self->low); i++) {
		EXPECT_EQ(0x0fu, eff_mask(self->sfd, self->gpu, self->low[i]));
		EXPECT_EQ(ALL, own_mask(self->sfd, self->gpu, self->low[i]));
		st = qp_state(self->qfd, getpid(), self->gpu, self->low[i]);
		EXPECT_EQ(AMDQP_QSTATE_CONFINED | AMDQP_QSTATE_CONFINE_HELD,
			  st);
	}
	EXPECT_EQ(ALL, eff_mask(self->sfd, self->gpu, self->high));
	EXPECT_EQ(0, qp_state(self->qfd, getpid(), self->gpu, self->high));

	/* The same mask again changes nothing and costs nothing. */
	updates = qp_sched_updates(self->qfd, self->gpu);
	ASSERT_EQ(0, confine_below(self->qfd, self->gpu, LEVEL, 0x0f, NULL));
	EXPECT_EQ(0, qp_sched_updates(self->qfd, self->gpu) - updates);

	/* A new mask for the same holds. */
	ASSERT_EQ(3, confine_below(self->qfd, self->gpu, LEVEL, 0x03, NULL));
	EXPECT_EQ(0x03u, eff_mask(self->sfd, self->gpu, self->low[0]));

	/* A lower level: the queues no longer below it are lifted. */
	ASSERT_EQ(0, qp_set_priority(self->qfd, getpid(), self->gpu,
				     self->low[2], LEVEL, NULL));
	ASSERT_EQ(1, confine_below(self->qfd, self->gpu, LEVEL, 0x03, NULL));
	EXPECT_EQ(ALL, eff_mask(self->sfd, self->gpu, self->low[2]));
	EXPECT_EQ(0x03u, eff_mask(self->sfd, self->gpu, self->low[1]));

	updates = qp_sched_updates(self->qfd, self->gpu);
	ASSERT_EQ(0, confine(self->qfd, AMDQP_CONFINE_OP_RELEASE, 0, NULL, 0,
			     &c));
	EXPECT_EQ(2, c.affected);
	EXPECT_EQ(variant->hws ? 1 : 4,
		  qp_sched_updates(self->qfd, self->gpu) - updates);
	for (i = 0; i < ARRAY_LEN(self->low); i++) {
		EXPECT_EQ(ALL, eff_mask(self->sfd, self->gpu, self->low[i]));
		EXPECT_EQ(0, qp_state(self->qfd, getpid(), self->gpu,
				      self->low[i]));
	}
}

/* The owner's own mask is ANDed while confined and restored exactly. */
TEST_F(confine, owner_mask_restored)
{
	uint32_t q = self->low[0];

	ASSERT_EQ(0, set_own_mask(self->sfd, self->gpu, q, 0x3c));
	ASSERT_EQ(3, confine_below(self->qfd, self->gpu, LEVEL, 0x0f, NULL));
	EXPECT_EQ(0x0cu, eff_mask(self->sfd, self->gpu, q));
	EXPECT_EQ(0x3cu, own_mask(self->sfd, self->gpu, q));

	/* The owner changes its mask while confined: still confined. */
	ASSERT_EQ(0, set_own_mask(self->sfd, self->gpu, q, 0x36));
	EXPECT_EQ(0x06u, eff_mask(self->sfd, self->gpu, q));
	/* No CU in common: the confinement wins. */
	ASSERT_EQ(0, set_own_mask(self->sfd, self->gpu, q, 0xf0));
	EXPECT_EQ(0x0fu, eff_mask(self->sfd, self->gpu, q));

	/* Lifted: exactly the owner's latest mask. */
	ASSERT_EQ(0, release_all(self->qfd));
	EXPECT_EQ(0xf0u, eff_mask(self->sfd, self->gpu, q));
	EXPECT_EQ(0xf0u, own_mask(self->sfd, self->gpu, q));
	EXPECT_EQ(ALL, eff_mask(self->sfd, self->gpu, self->low[1]));
}

/* Two files confine the same queue: the masks combine, newest first. */
TEST_F(confine, two_holders)
{
	uint32_t q = self->low[0];
	int fd2 = qp_open();

	ASSERT_LE(0, fd2);
	ASSERT_EQ(3, confine_below(self->qfd, self->gpu, LEVEL, 0x3c, NULL));
	ASSERT_EQ(3, confine_below(fd2, self->gpu, LEVEL, 0x0f, NULL));
	EXPECT_EQ(0x0cu, eff_mask(self->sfd, self->gpu, q));
	/* Disjoint from the older one: the newer wins. */
	ASSERT_EQ(3, confine_below(fd2, self->gpu, LEVEL, 0xc0, NULL));
	EXPECT_EQ(0xc0u, eff_mask(self->sfd, self->gpu, q));
	close(fd2);
	EXPECT_EQ(0x3cu, eff_mask(self->sfd, self->gpu, q));
	ASSERT_EQ(0, release_all(self->qfd));
	EXPECT_EQ(ALL, eff_mask(self->sfd, self->gpu, q));
}

TEST_F(confine, close_releases)
{
	unsigned int i;
	int fd2;

	ASSERT_EQ(3, confine_below(self->qfd, self->gpu, LEVEL, 0x01, NULL));
	close(self->qfd);
	self->qfd = qp_open();
	ASSERT_LE(0, self->qfd);
	for (i = 0; i < ARRAY_LEN(self->low); i++) {
		EXPECT_EQ(ALL, eff_mask(self->sfd, self->gpu, self->low[i]));
		EXPECT_EQ(0, qp_state(self->qfd, getpid(), self->gpu,
				      self->low[i]));
	}

	/* A holder killed outright lets go too. */
	fd2 = qp_open();
	ASSERT_LE(0, fd2);
	ASSERT_EQ(3, confine_below(fd2, self->gpu, LEVEL, 0x01, NULL));
	close(fd2);
	EXPECT_EQ(ALL, eff_mask(self->sfd, self->gpu, self->low[0]));
}

TEST_F(confine, watchdog)
{
	struct amdqp_event ev;
	struct amdqp_confine c;
	uint32_t q = self->low[0];
	int st;

	ASSERT_EQ(0, qp_set_mask(self->qfd,
				 1ULL << AMDQP_EVENT_CONFINE_WATCHDOG));
	ASSERT_EQ(0, qp_param_set("max_confine_ms", 200));
	ASSERT_EQ(0, qp_param_set("cooldown_ms", 3000));
	ASSERT_EQ(3, confine_below(self->qfd, self->gpu, LEVEL, 0x0f, NULL));
	ASSERT_EQ(0, qp_wait_event(self->qfd, AMDQP_EVENT_CONFINE_WATCHDOG,
				   self->gpu, q, 5000, &ev));
	EXPECT_LE(200 * NSEC_PER_MSEC, ev.data);
	EXPECT_EQ(getpid(), ev.pid);
	st = qp_wait_state(self->qfd, getpid(), self->gpu, q,
			   AMDQP_QSTATE_CONFINED, 0, 3000);
	EXPECT_EQ(AMDQP_QSTATE_CONFINE_COOLDOWN, st);
	EXPECT_EQ(ALL, eff_mask(self->sfd, self->gpu, q));
	/* The same sweep lifted the other two. */
	st = qp_wait_state(self->qfd, getpid(), self->gpu, self->low[2],
			   AMDQP_QSTATE_CONFINED, 0, 3000);
	EXPECT_EQ(AMDQP_QSTATE_CONFINE_COOLDOWN, st);
	/* Immune for cooldown_ms: confining again skips them. */
	ASSERT_EQ(0, confine_below(self->qfd, self->gpu, LEVEL, 0x0f, &c));
	EXPECT_EQ(3, c.skipped);
	EXPECT_EQ(ALL, eff_mask(self->sfd, self->gpu, q));
}

/* Suspension wins; a confined queue comes back confined. */
TEST_F(confine, with_suspend)
{
	uint32_t q = self->low[0];
	struct amdqp_sim_query qi;
	uint64_t updates;
	int st;

	ASSERT_EQ(0, qp_suspend1(self->qfd, getpid(), self->gpu, q));
	updates = qp_sched_updates(self->qfd, self->gpu);
	ASSERT_EQ(3, confine_below(self->qfd, self->gpu, LEVEL, 0x03, NULL));
	st = qp_state(self->qfd, getpid(), self->gpu, q);
	EXPECT_EQ(AMDQP_QSTATE_SUSPENDED | AMDQP_QSTATE_HELD |
		  AMDQP_QSTATE_CONFINED | AMDQP_QSTATE_CONFINE_HELD, st);
	/* The other two were on the hardware: one update (HWS), 2x2 (MES). */
	EXPECT_EQ(variant->hws ? 1 : 4,
		  qp_sched_updates(self->qfd, self->gpu) - updates);

	/* Still off: its work does not run. */
	ASSERT_EQ(0, sim_submit(self->sfd, self->gpu, q, 1000000, 1, 0, NULL));
	sleep_ms(100);
	ASSERT_EQ(0, sim_query(self->sfd, self->gpu, q, &qi));
	EXPECT_EQ(0, qi.rptr);
	EXPECT_EQ(0, qi.mapped);

	/* Resumed: runs, on its confined slots. */
	ASSERT_EQ(0, qp_resume1(self->qfd, getpid(), self->gpu, q));
	ASSERT_EQ(0, sim_wait_rptr(self->sfd, self->gpu, q, 1, 5000));
	EXPECT_EQ(0x03u, eff_mask(self->sfd, self->gpu, q));
	st = qp_state(self->qfd, getpid(), self->gpu, q);
	EXPECT_EQ(AMDQP_QSTATE_CONFINED | AMDQP_QSTATE_CONFINE_HELD, st);

	/* Suspended while confined, lifted while suspended: back in full. */
	ASSERT_EQ(0, qp_suspend1(self->qfd, getpid(), self->gpu, q));
	ASSERT_EQ(0, release_all(self->qfd));
	st = qp_state(self->qfd, getpid(), self->gpu, q);
	EXPECT_EQ(AMDQP_QSTATE_SUSPENDED | AMDQP_QSTATE_HELD, st);
	ASSERT_EQ(0, qp_resume1(self->qfd, getpid(), self->gpu, q));
	EXPECT_EQ(ALL, eff_mask(self->sfd, self->gpu, q));
}

/* What a user other than the queues' owner (root) gets. */
struct nobody_report {
	int open_ret;
	int below_ret;
	struct amdqp_confine c;
};

TEST_F(confine, other_user)
{
	struct nobody_report r;
	int up[2];
	pid_t child;

	ASSERT_EQ(0, pipe(up));
	child = fork();
	ASSERT_LE(0, child);
	if (!child) {
		uint32_t word = 0x01;
		struct amdqp_cu_target t = target1(self->gpu, &word);
		int fd;

		memset(&r, 0, sizeof(r));
		if (setgroups(0, NULL) || setgid(NOBODY) || setuid(NOBODY))
			_exit(3);
		prctl(PR_SET_DUMPABLE, 1);
		fd = qp_open();
		r.open_ret = fd < 0 ? fd : 0;
		if (fd >= 0)
			r.below_ret = confine(fd, AMDQP_CONFINE_OP_BELOW,
					      AMDQP_PRIORITY_MAX, &t, 1, &r.c);
		write_full(up[1], &r, sizeof(r));
		_exit(0);
	}
	close(up[1]);
	ASSERT_EQ(0, read_full(up[0], &r, sizeof(r)));
	close(up[0]);
	waitpid(child, NULL, 0);
	ASSERT_EQ(0, r.open_ret);
	ASSERT_EQ(0, r.below_ret);
	EXPECT_EQ(0, r.c.affected);
	EXPECT_EQ(4, r.c.skipped);
	EXPECT_EQ(ALL, eff_mask(self->sfd, self->gpu, self->low[0]));
	EXPECT_EQ(ALL, eff_mask(self->sfd, self->gpu, self->high));
	/* The control: the same call from the owner's user does confine. */
	ASSERT_EQ(4, confine_below(self->qfd, self->gpu, AMDQP_PRIORITY_MAX,
				   0x01, NULL));
	EXPECT_EQ(0x01u, eff_mask(self->sfd, self->gpu, self->low[0]));
}

/* A confinement the firmware refuses leaves no hold and no mask. */
TEST_F(confine, firmware_failure)
{
	struct amdqp_confine c;

	ASSERT_EQ(0, sim_knob_set(self->gpu, "fail_busy", 1));
	ASSERT_EQ(2, confine_below(self->qfd, self->gpu, LEVEL, 0x0f, &c));
	EXPECT_EQ(1, c.skipped);
	EXPECT_EQ(ALL, eff_mask(self->sfd, self->gpu, self->low[0]));
	EXPECT_EQ(0, qp_state(self->qfd, getpid(), self->gpu, self->low[0]));
	EXPECT_EQ(0x0fu, eff_mask(self->sfd, self->gpu, self->low[1]));
}

TEST_F(confine, bad_input)
{
	uint32_t word = 0x0f;
	struct amdqp_cu_target t = target1(self->gpu, &word), t2[2];
	struct amdqp_confine c = {
		.targets = (uintptr_t)&t, .count = 1,
		.target_size = sizeof(t), .op = AMDQP_CONFINE_OP_BELOW,
		.priority = LEVEL,
	};
	struct {
		struct amdqp_confine c;
		uint64_t tail;
	} big;
	struct amdqp_confine b;
	struct amdqp_cu_target tb;

#define BAD(field, val, err) do {					\
		b = c; tb = t; b.targets = (uintptr_t)&tb;		\
		field = (val);						\
		EXPECT_EQ(-(err), ioctl(self->qfd, AMDQP_IOC_CONFINE, &b) ? \
			  -errno : 0) TH_LOG(#field " = " #val);	\
	} while (0)

	BAD(b.flags, 1, EINVAL);
	BAD(b.pad, 1, EINVAL);
	BAD(b.op, 0, EINVAL);
	BAD(b.op, 4, EINVAL);
	BAD(b.priority, AMDQP_PRIORITY_MAX + 1, EINVAL);
	BAD(b.count, 0, EINVAL);
	BAD(b.count, AMDQP_MAX_CONFINE_GPUS + 1, EINVAL);
	BAD(b.target_size, sizeof(t) - 8, EINVAL);
	BAD(b.target_size, sizeof(t) + 4, EINVAL);
	BAD(tb.pad, 1, EINVAL);
	BAD(tb.mask_words, 0, EINVAL);
	BAD(tb.mask_words, 2, EINVAL);
	BAD(tb.mask_words, AMDQP_CU_MASK_MAX_WORDS + 1, EINVAL);
	BAD(tb.num_xcc, 2, EINVAL);
	BAD(tb.cu_per_xcc, 16, EINVAL);
	BAD(tb.gpu_id, 0x7fffff01, ENODEV);
	BAD(tb.mask_ptr, (uintptr_t)bad_ptr(), EFAULT);
	BAD(b.targets, (uintptr_t)bad_ptr(), EFAULT);
	word = 0;
	BAD(b.flags, 0, EINVAL);		/* empty mask */
	word = 0x100;
	BAD(b.flags, 0, EINVAL);		/* a slot the device lacks */
	word = 0x0f;
	/* INFO and RELEASE: the fields they do not use must be zero. */
	b = c;
	b.op = AMDQP_CONFINE_OP_INFO;
	b.priority = 0;
	b.grace_us = 1;
	EXPECT_EQ(-EINVAL, ioctl(self->qfd, AMDQP_IOC_CONFINE, &b) ? -errno : 0);
	b.op = AMDQP_CONFINE_OP_RELEASE;
	b.grace_us = 0;
	b.priority = LEVEL;
	tb = t;
	tb.num_xcc = tb.cu_per_xcc = tb.mask_words = 0;
	tb.mask_ptr = 0;
	b.targets = (uintptr_t)&tb;
	EXPECT_EQ(-EINVAL, ioctl(self->qfd, AMDQP_IOC_CONFINE, &b) ? -errno : 0);
	b.priority = 0;
	tb.mask_words = 1;
	EXPECT_EQ(-EINVAL, ioctl(self->qfd, AMDQP_IOC_CONFINE, &b) ? -errno : 0);
	tb.mask_words = 0;
	EXPECT_EQ(0, ioctl(self->qfd, AMDQP_IOC_CONFINE, &b) ? -errno : 0);
	/* The same device twice. */
	t2[0] = t;
	t2[1] = t;
	b = c;
	b.targets = (uintptr_t)t2;
	b.count = 2;
	EXPECT_EQ(-EINVAL, ioctl(self->qfd, AMDQP_IOC_CONFINE, &b) ? -errno : 0);
	/* A longer structure with a non-zero tail. */
	memset(&big, 0, sizeof(big));
	big.c = c;
	big.tail = 1;
	EXPECT_EQ(-E2BIG, ioctl(self->qfd,
				_IOWR(AMDQP_IOC_MAGIC, 0x0a, big), &big) ?
		  -errno : 0);
	/* None of it did anything. */
	EXPECT_EQ(ALL, eff_mask(self->sfd, self->gpu, self->low[0]));
	EXPECT_EQ(0, qp_state(self->qfd, getpid(), self->gpu, self->low[0]));
#undef BAD
}

/*
 * The sim's effect: a confined queue's wide items run on the slots left
 * to it (here 2 of 8: four times as long), preempted when confined with
 * the CWSR cost, and keep completing; lifted, they speed up again.
 */
TEST_F(confine, slows_but_continues)
{
	uint32_t q = self->low[0];
	struct amdqp_sim_query a, b, d;
	uint64_t n_full, n_conf, pre, seq = 0, done = 0, t0;

	/* 40 ms items that want every slot; plenty of them. */
	ASSERT_EQ(0, sim_submit(self->sfd, self->gpu, q, 40 * NSEC_PER_MSEC,
				200, 0, NULL));
	sleep_ms(50);
	ASSERT_EQ(0, sim_query(self->sfd, self->gpu, q, &a));
	sleep_ms(800);
	ASSERT_EQ(0, sim_query(self->sfd, self->gpu, q, &b));
	n_full = b.rptr - a.rptr;
	pre = counter(self->gpu, "preemptions");

	ASSERT_EQ(3, confine_below(self->qfd, self->gpu, LEVEL, 0x03, NULL));
	/* Its running item was saved and goes on, on two slots. */
	EXPECT_LT(pre, counter(self->gpu, "preemptions"));
	ASSERT_EQ(0, sim_query(self->sfd, self->gpu, q, &a));
	EXPECT_LE(1, a.preemptions);
	sleep_ms(800);
	ASSERT_EQ(0, sim_query(self->sfd, self->gpu, q, &d));
	n_conf = d.rptr - a.rptr;
	TH_LOG("items in 800 ms: %llu on 8 slots, %llu on 2",
	       (unsigned long long)n_full, (unsigned long long)n_conf);
	EXPECT_LE(10, n_full);			/* ideally 20 */
	EXPECT_LE(1, n_conf);			/* it continues */
	EXPECT_GE(n_full * 6 / 10, n_conf);	/* ideally a quarter */

	/* While it is confined, a high-priority item finds slots at once. */
	t0 = now_ns();
	ASSERT_EQ(0, sim_submit(self->sfd, self->gpu, self->high,
				5 * NSEC_PER_MSEC, 1, 4, &seq));
	ASSERT_EQ(0, sim_wait(self->sfd, self->gpu, self->high, seq,
			      5 * NSEC_PER_SEC, &done));
	EXPECT_GT(60 * NSEC_PER_MSEC, done - t0);

	ASSERT_EQ(0, release_all(self->qfd));
	ASSERT_EQ(0, sim_query(self->sfd, self->gpu, q, &a));
	sleep_ms(800);
	ASSERT_EQ(0, sim_query(self->sfd, self->gpu, q, &b));
	EXPECT_LT(n_conf, b.rptr - a.rptr);
}

/* A sim device with one LOW queue, and what INFO says of it. */
struct xcc_env {
	int gpu, qfd, sfd;
	uint32_t q;
	struct amdqp_cu_target t;
};

static void xcc_env_close(struct xcc_env *e)
{
	sim_env_close(e->qfd, e->sfd, e->gpu);
}

/* With @xcc XCCs. Returns 0 or -errno, nothing left open on error. */
static int xcc_env_open(struct xcc_env *e, uint32_t base, unsigned int xcc)
{
	int ret;

	memset(e, 0, sizeof(*e));
	e->qfd = -1;
	e->sfd = -1;
	e->gpu = sim_new_device(base, "hws", xcc, SLOTS);
	if (e->gpu < 0)
		return e->gpu;
	e->qfd = qp_open();
	e->sfd = sim_open();
	ret = e->qfd < 0 ? e->qfd : e->sfd < 0 ? e->sfd : 0;
	if (!ret)
		ret = sim_create(e->sfd, e->gpu, LOW, &e->q);
	e->t.gpu_id = e->gpu;
	if (!ret)
		ret = confine(e->qfd, AMDQP_CONFINE_OP_INFO, 0, &e->t, 1, NULL);
	if (ret)
		xcc_env_close(e);
	return ret;
}

/* XCC by XCC: each XCC's words, each needing a CU of its own. */
TEST(confine_xcc)
{
	struct amdqp_confine c;
	struct xcc_env e;
	uint32_t words[2];

	if (!sim_available())
		SKIP(return, "amdqp and amdqp_sim not loaded");
	ASSERT_EQ(0, xcc_env_open(&e, CONFINE_GPU_BASE + 500, 2));
	EXPECT_EQ(2, e.t.num_xcc);
	EXPECT_EQ(SLOTS / 2, e.t.cu_per_xcc);
	EXPECT_EQ(2, e.t.mask_words);

	e.t.mask_ptr = (uintptr_t)words;
	/* XCC 1 without a CU: its share of every dispatch would hang. */
	words[0] = 0x3;
	words[1] = 0;
	EXPECT_EQ(-EINVAL, confine_child(e.qfd, AMDQP_CONFINE_OP_BELOW, LEVEL,
					 &e.t, 1, NULL));
	words[1] = 0x10;	/* past the XCC's four CUs */
	EXPECT_EQ(-EINVAL, confine_child(e.qfd, AMDQP_CONFINE_OP_BELOW, LEVEL,
					 &e.t, 1, NULL));
	words[1] = 0x1;
	ASSERT_EQ(0, confine_child(e.qfd, AMDQP_CONFINE_OP_BELOW, LEVEL, &e.t,
				   1, &c));
	EXPECT_EQ(1, c.affected);
	/* Slots 0-1 of XCC 0 and slot 0 of XCC 1 (slot 4 of the device). */
	EXPECT_EQ(0x13u, eff_mask(e.sfd, e.gpu, e.q));
	close(e.qfd);
	e.qfd = -1;
	EXPECT_EQ(ALL, eff_mask(e.sfd, e.gpu, e.q));
	xcc_env_close(&e);
}

/* A device whose slots do not split evenly among its XCCs cannot. */
TEST(confine_unsupported)
{
	struct xcc_env e;
	uint32_t word = 1;

	if (!sim_available())
		SKIP(return, "amdqp and amdqp_sim not loaded");
	ASSERT_EQ(0, xcc_env_open(&e, CONFINE_GPU_BASE + 600, 3));
	EXPECT_EQ(-EOPNOTSUPP, e.t.result);
	EXPECT_EQ(0, e.t.cu_per_xcc);
	e.t.result = 0;
	e.t.num_xcc = 3;
	e.t.mask_words = 1;
	e.t.mask_ptr = (uintptr_t)&word;
	EXPECT_EQ(-EOPNOTSUPP, confine_child(e.qfd, AMDQP_CONFINE_OP_BELOW,
					     LEVEL, &e.t, 1, NULL));
	xcc_env_close(&e);
}

TEST_HARNESS_MAIN
