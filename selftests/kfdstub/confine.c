// SPDX-License-Identifier: GPL-2.0
/*
 * AMDQP_IOC_CONFINE through the kfd backend and the glue's CU-mask call
 * (kfd_qctl_set_cu_mask(), kfd-glue patch 0005), against the stub. The
 * stub keeps each queue's owner mask (its AMDKFD_IOC_SET_CU_MASK, the
 * stub's set_cu_mask command) apart from the imposed one and shows what
 * the MQD carries, as the glue does; these tests read that back:
 * INFO reports the glue's geometry; the imposed mask reaches the MQD
 * with one scheduler update per batch under HWS; the owner's mask is
 * ANDed while confined, also one it changes meanwhile, and comes back
 * exactly on release; eviction and restore, suspension, a GPU reset and
 * closing the fd; the per-XCC layout; a glue without the call.
 *
 * Needs amdqp_kfdstub.ko and amdqp.ko loaded (selftests/vm/run-stub.sh);
 * skips otherwise. The test process is not the queues' owner (a sleeper
 * child is), so CONFINE BELOW applies to them.
 */
#include "stub.h"
#include "kselftest_harness.h"

#define CU_GPU_BASE	0x6000
#define NQ		3
#define CUS		8		/* CUs per XCC of the stub devices */
#define FULL		"000000ff"
#define LEVEL		5		/* the queues have priority 2 */
#define RING(i)		(0x7f0000200000ULL + (i) * 0x10000ULL)
#define STUB_PARAM	"/sys/module/" STUB_MODULE "/parameters/cu_masks"

/* A stub device of @xcc XCCs with @cus CUs each, at the first free id. */
static int cu_new_device(uint32_t base, const char *mode, uint32_t xcc,
			 uint32_t cus)
{
	uint32_t id;
	int ret = -EEXIST;

	for (id = base; id < base + 500; id++) {
		ret = stub_cmd("dev_add %u %s %u %u", id, mode, xcc, cus);
		if (!ret)
			return id;
		if (ret != -EEXIST)
			return ret;
	}
	return ret;
}

/* CONFINE @op on one device; @mask NULL for INFO and RELEASE. */
static int cu_confine(int qfd, uint32_t op, uint32_t gpu, uint32_t xcc,
		      uint32_t cus, uint32_t *mask, struct amdqp_cu_target *t)
{
	struct amdqp_confine c = {
		.targets = (uintptr_t)t, .count = 1, .target_size = sizeof(*t),
		.op = op,
	};

	memset(t, 0, sizeof(*t));
	t->gpu_id = gpu;
	if (op == AMDQP_CONFINE_OP_BELOW) {
		c.priority = LEVEL;
		t->num_xcc = xcc;
		t->cu_per_xcc = cus;
		t->mask_words = xcc * ((cus + 31) / 32);
		t->mask_ptr = (uintptr_t)mask;
	}
	return ioctl(qfd, AMDQP_IOC_CONFINE, &c) ? -errno : 0;
}

/* The MQD mask of a stub queue as a string, "" on error. */
static const char *mqd_cu(pid_t pid, uint32_t gpu, uint32_t qid, int *imp)
{
	static char cu[64];
	int dummy;

	if (stub_cu(pid, gpu, qid, imp ? imp : &dummy, cu, sizeof(cu)))
		cu[0] = 0;
	return cu;
}

static bool confined(int qfd, pid_t pid, uint32_t gpu, uint32_t qid)
{
	int st = qp_state(qfd, pid, gpu, qid);

	return st >= 0 && (st & AMDQP_QSTATE_CONFINED);
}

FIXTURE(cu) {
	int qfd;
	int gpu;
	pid_t owner;
	struct amdqp_queue_ref refs[NQ];
};

FIXTURE_VARIANT(cu) {
	const char *mode;
	uint32_t sched;
};

FIXTURE_VARIANT_ADD(cu, hws) {
	.mode = "hws",
	.sched = AMDQP_SCHED_HWS,
};

FIXTURE_VARIANT_ADD(cu, mes) {
	.mode = "mes",
	.sched = AMDQP_SCHED_MES,
};

FIXTURE_SETUP(cu)
{
	unsigned int i;

	self->qfd = -1;
	self->gpu = 0;
	self->owner = 0;
	if (!stub_available())
		SKIP(return, "amdqp and amdqp_kfdstub not loaded");
	ASSERT_EQ(1, kfd_bound());
	self->gpu = cu_new_device(CU_GPU_BASE, variant->mode, 1, CUS);
	ASSERT_LT(0, self->gpu);
	self->owner = sleeper_start();
	ASSERT_LT(0, self->owner);
	for (i = 0; i < NQ; i++) {
		ASSERT_EQ(0, stub_cmd("queue_add %d %d %u 2 %llx", self->owner,
				      self->gpu, i + 1,
				      (unsigned long long)RING(i)));
		self->refs[i] = qref(self->owner, self->gpu, i + 1);
	}
	self->qfd = qp_open();
	ASSERT_LE(0, self->qfd);
}

FIXTURE_TEARDOWN(cu)
{
	if (self->qfd >= 0)
		close(self->qfd);
	/* Closing the fd lifted everything it imposed. */
	if (self->gpu > 0)
		EXPECT_EQ(0, stub_nr_with(" imp=1 "));
	EXPECT_EQ(0, stub_stat_v("violations"));
	if (self->owner > 0)
		stub_cmd("proc_exit %d", self->owner);
	if (self->gpu > 0)
		stub_cmd("dev_del %d", self->gpu);
	sleeper_stop(self->owner);
}

/* Scheduler updates of the device as amdqp counts them. */
static uint64_t updates(int qfd, uint32_t gpu)
{
	struct amdqp_device_info di;

	return qp_dev_info(qfd, gpu, &di) ? ~0ULL : di.sched_updates;
}

TEST_F(cu, info_reports_geometry)
{
	struct amdqp_cu_target t;

	ASSERT_EQ(0, cu_confine(self->qfd, AMDQP_CONFINE_OP_INFO, self->gpu,
				0, 0, NULL, &t));
	EXPECT_EQ(0, t.result);
	EXPECT_EQ(1, t.num_xcc);
	EXPECT_EQ(CUS, t.cu_per_xcc);
	EXPECT_EQ(1, t.mask_words);
}

TEST_F(cu, round_trip_one_update)
{
	struct amdqp_cu_target t;
	uint32_t mask = 0x0f;
	uint64_t u0, u1;
	unsigned int i;
	int imp;

	u0 = updates(self->qfd, self->gpu);
	ASSERT_EQ(0, cu_confine(self->qfd, AMDQP_CONFINE_OP_BELOW, self->gpu,
				1, CUS, &mask, &t));
	EXPECT_EQ(0, t.result);
	EXPECT_EQ(NQ, t.affected);
	u1 = updates(self->qfd, self->gpu);
	/* HWS: the batch is one runlist update; MES: remove + add each. */
	EXPECT_EQ(variant->sched == AMDQP_SCHED_HWS ? 1 : 2 * NQ, u1 - u0);
	for (i = 0; i < NQ; i++) {
		EXPECT_STREQ("0000000f", mqd_cu(self->owner, self->gpu, i + 1,
						&imp));
		EXPECT_EQ(1, imp);
		EXPECT_TRUE(confined(self->qfd, self->owner, self->gpu, i + 1));
		/* Still mapped: confinement is not suspension. */
		EXPECT_EQ(0, stub_ctl(self->owner, self->gpu, i + 1));
	}

	ASSERT_EQ(0, cu_confine(self->qfd, AMDQP_CONFINE_OP_RELEASE, self->gpu,
				0, 0, NULL, &t));
	EXPECT_EQ(NQ, t.affected);
	EXPECT_EQ(variant->sched == AMDQP_SCHED_HWS ? 1 : 2 * NQ,
		  updates(self->qfd, self->gpu) - u1);
	for (i = 0; i < NQ; i++) {
		EXPECT_STREQ(FULL, mqd_cu(self->owner, self->gpu, i + 1, &imp));
		EXPECT_EQ(0, imp);
		EXPECT_FALSE(confined(self->qfd, self->owner, self->gpu, i + 1));
	}
}

TEST_F(cu, owner_mask_anded_and_restored)
{
	struct amdqp_cu_target t;
	uint32_t mask = 0x0f;

	ASSERT_EQ(0, stub_cmd("set_cu_mask %d %d 1 3c", self->owner,
			      self->gpu));
	EXPECT_STREQ("0000003c", mqd_cu(self->owner, self->gpu, 1, NULL));
	ASSERT_EQ(0, cu_confine(self->qfd, AMDQP_CONFINE_OP_BELOW, self->gpu,
				1, CUS, &mask, &t));
	EXPECT_STREQ("0000000c", mqd_cu(self->owner, self->gpu, 1, NULL));
	EXPECT_STREQ("0000000f", mqd_cu(self->owner, self->gpu, 2, NULL));

	/* The owner changes its mask while confined: ANDed as well. */
	ASSERT_EQ(0, stub_cmd("set_cu_mask %d %d 1 33", self->owner,
			      self->gpu));
	EXPECT_STREQ("00000003", mqd_cu(self->owner, self->gpu, 1, NULL));
	/* Nothing in common: the imposed mask alone, never no CU at all. */
	ASSERT_EQ(0, stub_cmd("set_cu_mask %d %d 1 f0", self->owner,
			      self->gpu));
	EXPECT_STREQ("0000000f", mqd_cu(self->owner, self->gpu, 1, NULL));

	ASSERT_EQ(0, cu_confine(self->qfd, AMDQP_CONFINE_OP_RELEASE, self->gpu,
				0, 0, NULL, &t));
	/* Exactly the owner's last mask; the others get all CUs back. */
	EXPECT_STREQ("000000f0", mqd_cu(self->owner, self->gpu, 1, NULL));
	EXPECT_STREQ(FULL, mqd_cu(self->owner, self->gpu, 2, NULL));
}

TEST_F(cu, eviction_keeps_confined_mask)
{
	struct amdqp_cu_target t;
	struct stub_queue sq;
	uint32_t mask = 0x3c;

	ASSERT_EQ(0, cu_confine(self->qfd, AMDQP_CONFINE_OP_BELOW, self->gpu,
				1, CUS, &mask, &t));
	ASSERT_EQ(0, stub_cmd("evict %d %d 1", self->owner, self->gpu));
	ASSERT_EQ(0, stub_queue(self->owner, self->gpu, 1, &sq));
	EXPECT_EQ(1, sq.evicted);
	EXPECT_EQ(0, sq.active);
	EXPECT_STREQ("0000003c", mqd_cu(self->owner, self->gpu, 1, NULL));
	ASSERT_EQ(0, stub_cmd("evict %d %d 0", self->owner, self->gpu));
	ASSERT_EQ(0, stub_queue(self->owner, self->gpu, 1, &sq));
	EXPECT_EQ(1, sq.active);
	EXPECT_STREQ("0000003c", mqd_cu(self->owner, self->gpu, 1, NULL));
	EXPECT_TRUE(confined(self->qfd, self->owner, self->gpu, 1));

	/* Lifting while evicted: no scheduler work, owner's mask on restore. */
	ASSERT_EQ(0, stub_cmd("evict %d %d 1", self->owner, self->gpu));
	ASSERT_EQ(0, cu_confine(self->qfd, AMDQP_CONFINE_OP_RELEASE, self->gpu,
				0, 0, NULL, &t));
	ASSERT_EQ(0, stub_cmd("evict %d %d 0", self->owner, self->gpu));
	EXPECT_STREQ(FULL, mqd_cu(self->owner, self->gpu, 1, NULL));
}

TEST_F(cu, suspended_queue_takes_mask_without_update)
{
	struct amdqp_cu_target t;
	uint32_t mask = 0x01;
	uint64_t u0;
	unsigned int i;

	ASSERT_EQ(0, qp_batch(self->qfd, AMDQP_IOC_SUSPEND, self->refs, NQ,
			      NULL));
	u0 = updates(self->qfd, self->gpu);
	ASSERT_EQ(0, cu_confine(self->qfd, AMDQP_CONFINE_OP_BELOW, self->gpu,
				1, CUS, &mask, &t));
	EXPECT_EQ(NQ, t.affected);
	/* Off the hardware: only the MQDs are rewritten. */
	EXPECT_EQ(u0, updates(self->qfd, self->gpu));
	ASSERT_EQ(0, qp_batch(self->qfd, AMDQP_IOC_RESUME, self->refs, NQ,
			      NULL));
	for (i = 0; i < NQ; i++) {
		EXPECT_EQ(0, stub_ctl(self->owner, self->gpu, i + 1));
		EXPECT_STREQ("00000001", mqd_cu(self->owner, self->gpu, i + 1,
						NULL));
	}
}

TEST_F(cu, gpu_reset_lifts)
{
	struct amdqp_cu_target t;
	uint32_t mask = 0x0f;
	int imp;

	ASSERT_EQ(0, stub_cmd("set_cu_mask %d %d 2 55", self->owner,
			      self->gpu));
	ASSERT_EQ(0, cu_confine(self->qfd, AMDQP_CONFINE_OP_BELOW, self->gpu,
				1, CUS, &mask, &t));
	EXPECT_STREQ("00000005", mqd_cu(self->owner, self->gpu, 2, NULL));
	ASSERT_EQ(0, stub_cmd("gpu_reset %d", self->gpu));
	EXPECT_STREQ(FULL, mqd_cu(self->owner, self->gpu, 1, &imp));
	EXPECT_EQ(0, imp);
	EXPECT_STREQ("00000055", mqd_cu(self->owner, self->gpu, 2, NULL));
	EXPECT_EQ(0, qp_wait_state(self->qfd, self->owner, self->gpu, 1,
				   AMDQP_QSTATE_CONFINED, 0, 2000) &
		  AMDQP_QSTATE_CONFINED);
}

TEST_F(cu, close_lifts)
{
	struct amdqp_cu_target t;
	uint32_t mask = 0x80;
	int fd = qp_open();

	ASSERT_LE(0, fd);
	ASSERT_EQ(0, cu_confine(fd, AMDQP_CONFINE_OP_BELOW, self->gpu, 1, CUS,
				&mask, &t));
	EXPECT_STREQ("00000080", mqd_cu(self->owner, self->gpu, 3, NULL));
	close(fd);
	EXPECT_STREQ(FULL, mqd_cu(self->owner, self->gpu, 3, NULL));
	EXPECT_EQ(0, stub_nr_with(" imp=1 "));
}

/*
 * Two XCCs of 4 CUs: amdqp's mask is per XCC (the words of XCC 0, then
 * XCC 1), the MQD's interleaves the XCCs (bit xcc + cu * 2), and the AND
 * with the owner's mask is taken XCC by XCC.
 */
TEST(xcc_layout)
{
	uint32_t mask[2] = { 0x2, 0x9 };	/* XCC0: CU1; XCC1: CU0, CU3 */
	struct amdqp_cu_target t;
	int gpu, qfd;
	pid_t owner;

	if (!stub_available())
		SKIP(return, "amdqp and amdqp_kfdstub not loaded");
	gpu = cu_new_device(CU_GPU_BASE + 0x100, "hws", 2, 4);
	ASSERT_LT(0, gpu);
	owner = sleeper_start();
	ASSERT_LT(0, owner);
	ASSERT_EQ(0, stub_cmd("queue_add %d %d 1 2 %llx", owner, gpu,
			      (unsigned long long)RING(0)));
	qfd = qp_open();
	ASSERT_LE(0, qfd);
	ASSERT_EQ(0, cu_confine(qfd, AMDQP_CONFINE_OP_INFO, gpu, 0, 0, NULL,
				&t));
	EXPECT_EQ(2, t.num_xcc);
	EXPECT_EQ(4, t.cu_per_xcc);
	EXPECT_EQ(2, t.mask_words);

	ASSERT_EQ(0, cu_confine(qfd, AMDQP_CONFINE_OP_BELOW, gpu, 2, 4, mask,
				&t));
	EXPECT_EQ(1, t.affected);
	/* XCC0 CU1 -> bit 2; XCC1 CU0 -> bit 1, CU3 -> bit 7. */
	EXPECT_STREQ("00000086", mqd_cu(owner, gpu, 1, NULL));
	/* Owner: XCC0 CU0, CU1 (bits 0, 2), XCC1 CU0 (bit 1). */
	ASSERT_EQ(0, stub_cmd("set_cu_mask %d %d 1 7", owner, gpu));
	EXPECT_STREQ("00000006", mqd_cu(owner, gpu, 1, NULL));
	close(qfd);
	EXPECT_STREQ("00000007", mqd_cu(owner, gpu, 1, NULL));

	stub_cmd("proc_exit %d", owner);
	stub_cmd("dev_del %d", gpu);
	sleeper_stop(owner);
}

/* A glue without kfd_qctl_set_cu_mask() reports no geometry: EOPNOTSUPP. */
TEST(glue_without_cu_masks)
{
	struct amdqp_cu_target t;
	uint32_t mask = 1;
	int gpu, qfd;

	if (!stub_available())
		SKIP(return, "amdqp and amdqp_kfdstub not loaded");
	ASSERT_EQ(0, write_str(STUB_PARAM, "N"));
	gpu = cu_new_device(CU_GPU_BASE + 0x200, "hws", 1, CUS);
	EXPECT_EQ(0, write_str(STUB_PARAM, "Y"));
	ASSERT_LT(0, gpu);
	qfd = qp_open();
	ASSERT_LE(0, qfd);
	EXPECT_EQ(0, cu_confine(qfd, AMDQP_CONFINE_OP_INFO, gpu, 0, 0, NULL,
				&t));
	EXPECT_EQ(-EOPNOTSUPP, t.result);
	EXPECT_EQ(0, t.cu_per_xcc);
	EXPECT_EQ(-EOPNOTSUPP, cu_confine(qfd, AMDQP_CONFINE_OP_BELOW, gpu, 1,
					  CUS, &mask, &t));
	close(qfd);
	stub_cmd("dev_del %d", gpu);
}

TEST_HARNESS_MAIN
