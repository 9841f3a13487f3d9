// SPDX-License-Identifier: GPL-2.0
/*
 * AMDQP_SIM_IOC_SET_CU_MASK / GET_CU_MASK, the sim's AMDKFD_IOC_SET_CU_MASK:
 * spatial partitioning, what AMD users pick today instead of preemption. A
 * low-priority queue confined to half of the compute slots leaves the other
 * half to another queue, whose work then starts at once instead of waiting
 * for the hog's item to end. Also the ABI rules, the firmware cost of a
 * change (as amdkfd's update_queue: one runlist update under HWS, a remove
 * and an add under MES), failures that leave the mask as it was, and both
 * queue kinds. Timing bounds have wide margins: the VM is QEMU TCG.
 */
#include <stddef.h>

#include "common.h"
#include "kselftest_harness.h"

#define CU_GPU_BASE	11000
#define CU_SLOTS	8
#define CU_HALF		0x0fu		/* slots 0-3 */
#define UQ_RING		4096
#define UQ_LEN		(UQ_RING + AMDQP_SIM_CTL_SIZE)

/* A hog's item: long enough that "waited for it" is unmistakable. */
#define HOG_NS		(400 * NSEC_PER_MSEC)
#define HIGH_NS		(20 * NSEC_PER_MSEC)
/* The high-priority item must finish well before the hog's item ends. */
#define AT_ONCE_NS	(200 * NSEC_PER_MSEC)

static int cu_ioctl(int sfd, unsigned long cmd, uint32_t gpu, uint32_t qid,
		    uint32_t *words, uint32_t num_bits, uint32_t *num_slots)
{
	struct amdqp_sim_cu_mask m = {
		.gpu_id = gpu, .queue_id = qid,
		.mask_ptr = (uintptr_t)words, .num_bits = num_bits,
	};

	if (ioctl(sfd, cmd, &m))
		return -errno;
	if (num_slots)
		*num_slots = m.num_slots;
	return 0;
}

static int cu_set(int sfd, uint32_t gpu, uint32_t qid, uint32_t mask)
{
	uint32_t words[1] = { mask };

	return cu_ioctl(sfd, AMDQP_SIM_IOC_SET_CU_MASK, gpu, qid, words, 32,
			NULL);
}

/* The first 32 slots of the queue's mask, or ~0 on error. */
static uint32_t cu_get(int sfd, uint32_t gpu, uint32_t qid)
{
	uint32_t words[1] = { 0xdeadbeef };

	if (cu_ioctl(sfd, AMDQP_SIM_IOC_GET_CU_MASK, gpu, qid, words, 32,
		     NULL))
		return ~0u;
	return words[0];
}

/* The raw ioctl with a struct of @size bytes, for the size rules. */
static int cu_raw(int sfd, unsigned int nr, void *arg, size_t size)
{
	return ioctl(sfd, _IOC(_IOC_READ | _IOC_WRITE, AMDQP_SIM_IOC_MAGIC,
			       nr, size), arg) ? -errno : 0;
}

static uint64_t counter(uint32_t gpu, const char *name)
{
	uint64_t v;

	return sim_counter(gpu, name, &v) ? ~0ULL : v;
}

/* Poll the device's free slots until they are @want; returns the last. */
static uint64_t wait_free_slots(uint32_t gpu, uint64_t want,
				unsigned int timeout_ms)
{
	uint64_t end = now_ns() + timeout_ms * NSEC_PER_MSEC, v;

	for (;;) {
		v = counter(gpu, "free_slots");
		if (v == want || now_ns() > end)
			return v;
		sleep_ms(2);
	}
}

/*
 * Submit one @ns item of @width slots on @qid and return how long it took
 * from submission to completion in the model, or ~0 on error.
 */
static uint64_t run_one(int sfd, uint32_t gpu, uint32_t qid, uint64_t ns,
			uint32_t width)
{
	uint64_t seq, done = 0, t0 = now_ns();

	if (sim_submit(sfd, gpu, qid, ns, 1, width, &seq))
		return ~0ULL;
	if (sim_wait(sfd, gpu, qid, seq, 10 * NSEC_PER_SEC, &done) || !done)
		return ~0ULL;
	return done - t0;
}

FIXTURE(cumask) {
	int sfd;
	int gpu;
	uint32_t low;	/* priority 2: the hog */
	uint32_t high;	/* priority 12 */
	bool hws;
};

FIXTURE_VARIANT(cumask) {
	const char *mode;
	bool hws;
};

FIXTURE_VARIANT_ADD(cumask, hws) {
	.mode = "hws",
	.hws = true,
};

FIXTURE_VARIANT_ADD(cumask, mes) {
	.mode = "mes",
	.hws = false,
};

FIXTURE_SETUP(cumask)
{
	self->sfd = -1;
	self->gpu = 0;
	self->hws = variant->hws;
	if (!sim_available())
		SKIP(return, "amdqp and amdqp_sim not loaded");
	self->gpu = sim_new_device(CU_GPU_BASE, variant->mode, 1, CU_SLOTS);
	ASSERT_LT(0, self->gpu);
	self->sfd = sim_open();
	ASSERT_LE(0, self->sfd);
	ASSERT_EQ(0, sim_create(self->sfd, self->gpu, 2, &self->low));
	ASSERT_EQ(0, sim_create(self->sfd, self->gpu, 12, &self->high));
}

FIXTURE_TEARDOWN(cumask)
{
	sim_env_close(-1, self->sfd, self->gpu);
}

TEST_F(cumask, abi_rules)
{
	uint32_t words[AMDQP_SIM_CU_MASK_MAX_BITS / 32 + 1] = { 0 };
	struct amdqp_sim_cu_mask m;
	uint32_t slots = 0, other_q;
	int other;
	union {
		struct amdqp_sim_cu_mask m;
		uint8_t raw[sizeof(struct amdqp_sim_cu_mask) + 8];
	} u;

	/* A new queue may use every slot; GET with no room tells the count. */
	EXPECT_EQ(0, cu_ioctl(self->sfd, AMDQP_SIM_IOC_GET_CU_MASK, self->gpu,
			      self->low, NULL, 0, &slots));
	EXPECT_EQ(CU_SLOTS, slots);
	EXPECT_EQ(0xffu, cu_get(self->sfd, self->gpu, self->low));

	words[0] = CU_HALF;
	slots = 0;
	ASSERT_EQ(0, cu_ioctl(self->sfd, AMDQP_SIM_IOC_SET_CU_MASK, self->gpu,
			      self->low, words, 32, &slots));
	EXPECT_EQ(CU_SLOTS, slots);
	EXPECT_EQ(CU_HALF, cu_get(self->sfd, self->gpu, self->low));
	/* The other queue keeps its own. */
	EXPECT_EQ(0xffu, cu_get(self->sfd, self->gpu, self->high));

	/* Bit counts: 0, not a multiple of 32, too many. */
	EXPECT_EQ(-EINVAL, cu_ioctl(self->sfd, AMDQP_SIM_IOC_SET_CU_MASK,
				    self->gpu, self->low, words, 0, NULL));
	EXPECT_EQ(-EINVAL, cu_ioctl(self->sfd, AMDQP_SIM_IOC_SET_CU_MASK,
				    self->gpu, self->low, words, 16, NULL));
	EXPECT_EQ(-EINVAL, cu_ioctl(self->sfd, AMDQP_SIM_IOC_SET_CU_MASK,
				    self->gpu, self->low, words,
				    AMDQP_SIM_CU_MASK_MAX_BITS + 32, NULL));
	EXPECT_EQ(-EINVAL, cu_ioctl(self->sfd, AMDQP_SIM_IOC_GET_CU_MASK,
				    self->gpu, self->low, words, 16, NULL));
	/* Empty, and slots the device does not have. */
	EXPECT_EQ(-EINVAL, cu_set(self->sfd, self->gpu, self->low, 0));
	EXPECT_EQ(-EINVAL, cu_set(self->sfd, self->gpu, self->low, 0x1ff));
	words[0] = 0;
	words[1] = 1;
	EXPECT_EQ(-EINVAL, cu_ioctl(self->sfd, AMDQP_SIM_IOC_SET_CU_MASK,
				    self->gpu, self->low, words, 64, NULL));
	/* A long mask whose set bits are all real slots is fine. */
	words[0] = 0x3c;
	words[1] = 0;
	EXPECT_EQ(0, cu_ioctl(self->sfd, AMDQP_SIM_IOC_SET_CU_MASK, self->gpu,
			      self->low, words, AMDQP_SIM_CU_MASK_MAX_BITS,
			      NULL));
	EXPECT_EQ(0x3cu, cu_get(self->sfd, self->gpu, self->low));
	/* GET fills what it is given, zero past the device's slots. */
	words[0] = words[1] = 0xdeadbeef;
	EXPECT_EQ(0, cu_ioctl(self->sfd, AMDQP_SIM_IOC_GET_CU_MASK, self->gpu,
			      self->low, words, 64, NULL));
	EXPECT_EQ(0x3cu, words[0]);
	EXPECT_EQ(0u, words[1]);

	/* Bad pointers, queues that are not this fd's. */
	EXPECT_EQ(-EFAULT, cu_ioctl(self->sfd, AMDQP_SIM_IOC_SET_CU_MASK,
				    self->gpu, self->low, (uint32_t *)8, 32,
				    NULL));
	EXPECT_EQ(-EFAULT, cu_ioctl(self->sfd, AMDQP_SIM_IOC_GET_CU_MASK,
				    self->gpu, self->low, (uint32_t *)8, 32,
				    NULL));
	EXPECT_EQ(-ENOENT, cu_set(self->sfd, self->gpu, 0xffff, CU_HALF));
	EXPECT_EQ(-ENOENT, cu_set(self->sfd, self->gpu + 499, self->low,
				  CU_HALF));
	other = sim_open();
	ASSERT_LE(0, other);
	ASSERT_EQ(0, sim_create(other, self->gpu, 2, &other_q));
	EXPECT_EQ(-ENOENT, cu_set(self->sfd, self->gpu, other_q, CU_HALF));
	EXPECT_EQ(~0u, cu_get(self->sfd, self->gpu, other_q));
	EXPECT_EQ(0, cu_set(other, self->gpu, other_q, CU_HALF));
	close(other);

	/* Reserved fields. */
	words[0] = CU_HALF;
	m = (struct amdqp_sim_cu_mask){ .gpu_id = self->gpu,
		.queue_id = self->low, .mask_ptr = (uintptr_t)words,
		.num_bits = 32, .flags = 1 };
	EXPECT_EQ(-1, ioctl(self->sfd, AMDQP_SIM_IOC_SET_CU_MASK, &m));
	EXPECT_EQ(EINVAL, errno);
	m.flags = 0;
	m.pad = 1;
	EXPECT_EQ(-1, ioctl(self->sfd, AMDQP_SIM_IOC_SET_CU_MASK, &m));
	EXPECT_EQ(EINVAL, errno);
	m.pad = 0;

	/* Sizes: shorter is -EINVAL, a longer one needs a zero tail. */
	memset(&u, 0, sizeof(u));
	u.m = m;
	EXPECT_EQ(-EINVAL, cu_raw(self->sfd, 0x46, &u, sizeof(m) - 8));
	EXPECT_EQ(-EINVAL, cu_raw(self->sfd, 0x47, &u, sizeof(m) - 8));
	u.raw[sizeof(m) + 7] = 0x5a;
	EXPECT_EQ(-E2BIG, cu_raw(self->sfd, 0x46, &u, sizeof(m) + 8));
	EXPECT_EQ(-E2BIG, cu_raw(self->sfd, 0x47, &u, sizeof(m) + 8));
	u.raw[sizeof(m) + 7] = 0;
	EXPECT_EQ(0, cu_raw(self->sfd, 0x46, &u, sizeof(m) + 8));
	EXPECT_EQ(CU_SLOTS, u.m.num_slots);
	EXPECT_EQ(0, u.raw[sizeof(m) + 7]);

	/* None of the failures above changed anything. */
	EXPECT_EQ(CU_HALF, cu_get(self->sfd, self->gpu, self->low));
	EXPECT_EQ(0, cu_set(self->sfd, self->gpu, self->low, 0xff));
	EXPECT_EQ(0xffu, cu_get(self->sfd, self->gpu, self->low));
}

/*
 * A change costs what amdkfd's update_queue costs: HWS, one runlist update
 * whatever the queue's state; MES, REMOVE_QUEUE + ADD_QUEUE of a queue on
 * the hardware, nothing for one its owner took off.
 */
TEST_F(cumask, firmware_cost)
{
	struct amdqp_sim_query q;
	uint64_t upd, unmap, map;

	upd = counter(self->gpu, "sched_updates");
	unmap = counter(self->gpu, "unmap_packets");
	map = counter(self->gpu, "map_packets");
	ASSERT_EQ(0, cu_set(self->sfd, self->gpu, self->low, CU_HALF));
	EXPECT_EQ(upd + (self->hws ? 1 : 2),
		  counter(self->gpu, "sched_updates"));
	EXPECT_EQ(unmap + 1, counter(self->gpu, "unmap_packets"));
	EXPECT_EQ(map + 1, counter(self->gpu, "map_packets"));

	ASSERT_EQ(0, sim_update_queue(self->sfd, self->gpu, self->low, 0, 2));
	upd = counter(self->gpu, "sched_updates");
	ASSERT_EQ(0, cu_set(self->sfd, self->gpu, self->low, 0x03));
	EXPECT_EQ(upd + (self->hws ? 1 : 0),
		  counter(self->gpu, "sched_updates"));
	EXPECT_EQ(0x03u, cu_get(self->sfd, self->gpu, self->low));
	/* The owner's "off" survived the change. */
	ASSERT_EQ(0, sim_query(self->sfd, self->gpu, self->low, &q));
	EXPECT_EQ(0u, q.mapped);
}

/* An injected -EBUSY or preemption timeout leaves the old mask. */
TEST_F(cumask, failure_keeps_mask)
{
	ASSERT_EQ(0, cu_set(self->sfd, self->gpu, self->low, CU_HALF));
	ASSERT_EQ(0, sim_knob_set(self->gpu, "fail_busy", 1));
	EXPECT_EQ(-EBUSY, cu_set(self->sfd, self->gpu, self->low, 0x01));
	EXPECT_EQ(CU_HALF, cu_get(self->sfd, self->gpu, self->low));
	ASSERT_EQ(0, sim_knob_set(self->gpu, "fail_preempt", 1));
	EXPECT_EQ(-ETIME, cu_set(self->sfd, self->gpu, self->low, 0x01));
	EXPECT_EQ(CU_HALF, cu_get(self->sfd, self->gpu, self->low));
	EXPECT_EQ(1, counter(self->gpu, "preempt_failures"));
	/* And the queue still runs, on its old mask. */
	EXPECT_GT(5 * NSEC_PER_SEC,
		  run_one(self->sfd, self->gpu, self->low, NSEC_PER_MSEC, 0));
}

/*
 * An item wider than the mask is confined and stretched: it holds only the
 * mask's slots, for as much longer as it has more work groups than slots.
 * An item that fits the mask runs its own time.
 */
TEST_F(cumask, wide_item_confined)
{
	uint64_t seq, t0, done = 0, lat;

	ASSERT_EQ(0, cu_set(self->sfd, self->gpu, self->low, CU_HALF));
	t0 = now_ns();
	ASSERT_EQ(0, sim_submit(self->sfd, self->gpu, self->low, HOG_NS / 2, 1,
				0, &seq));
	EXPECT_EQ(CU_SLOTS - 4, wait_free_slots(self->gpu, CU_SLOTS - 4, 100));
	ASSERT_EQ(0, sim_wait(self->sfd, self->gpu, self->low, seq,
			      10 * NSEC_PER_SEC, &done));
	/* 8 work groups on 4 slots: twice its time. */
	EXPECT_LE(HOG_NS, done - t0);
	EXPECT_EQ(CU_SLOTS, wait_free_slots(self->gpu, CU_SLOTS, 1000));

	lat = run_one(self->sfd, self->gpu, self->low, HOG_NS / 2, 4);
	EXPECT_LE(HOG_NS / 2, lat);
	EXPECT_GT(HOG_NS - HOG_NS / 8, lat) TH_LOG("4-slot item took %llu ms",
						   (unsigned long long)lat /
						   NSEC_PER_MSEC);
}

/*
 * Without a mask, the hog's all-slot item makes the high-priority item
 * wait for its end (dispatch priority never interrupts): the control for
 * the next test.
 */
TEST_F(cumask, unconfined_hog_delays_other)
{
	uint64_t seq, lat;

	ASSERT_EQ(0, sim_submit(self->sfd, self->gpu, self->low, HOG_NS, 2, 0,
				&seq));
	ASSERT_EQ(0, wait_free_slots(self->gpu, 0, 1000));
	lat = run_one(self->sfd, self->gpu, self->high, HIGH_NS, 4);
	ASSERT_NE(~0ULL, lat);
	EXPECT_LT(AT_ONCE_NS, lat) TH_LOG("high item took %llu ms",
					  (unsigned long long)lat /
					  NSEC_PER_MSEC);
}

/* The hog confined to half of the slots: the other half is free at once. */
TEST_F(cumask, half_mask_lets_other_start)
{
	uint64_t seq, lat, pre;

	ASSERT_EQ(0, cu_set(self->sfd, self->gpu, self->low, CU_HALF));
	ASSERT_EQ(0, sim_submit(self->sfd, self->gpu, self->low, HOG_NS, 2, 0,
				&seq));
	ASSERT_EQ(CU_SLOTS - 4, wait_free_slots(self->gpu, CU_SLOTS - 4, 1000));
	pre = counter(self->gpu, "preemptions");
	lat = run_one(self->sfd, self->gpu, self->high, HIGH_NS, 4);
	ASSERT_NE(~0ULL, lat);
	EXPECT_GT(AT_ONCE_NS, lat) TH_LOG("high item took %llu ms",
					  (unsigned long long)lat /
					  NSEC_PER_MSEC);
	/* Nothing was taken off the slots to make room. */
	EXPECT_EQ(pre, counter(self->gpu, "preemptions"));
	/* The hog goes on in its half. */
	EXPECT_EQ(0, sim_wait(self->sfd, self->gpu, self->low, seq,
			      10 * NSEC_PER_SEC, NULL));
}

/*
 * A change while an item runs: the update preempts it (HWS: the whole
 * runlist; MES: the queue's removal) and it continues on the new mask.
 */
TEST_F(cumask, change_while_running)
{
	uint64_t seq, pre;

	ASSERT_EQ(0, sim_submit(self->sfd, self->gpu, self->low, HOG_NS, 1, 0,
				&seq));
	ASSERT_EQ(0, wait_free_slots(self->gpu, 0, 1000));
	pre = counter(self->gpu, "preemptions");
	ASSERT_EQ(0, cu_set(self->sfd, self->gpu, self->low, 0x03));
	EXPECT_EQ(pre + 1, counter(self->gpu, "preemptions"));
	EXPECT_EQ(CU_SLOTS - 2, wait_free_slots(self->gpu, CU_SLOTS - 2, 1000));
	EXPECT_EQ(0, sim_wait(self->sfd, self->gpu, self->low, seq,
			      10 * NSEC_PER_SEC, NULL));
}

/* The same with the hog on a user-mode queue fed through its ring. */
TEST_F(cumask, usermode_queue)
{
	struct {
		uint16_t header, setup, wg_x, wg_y, wg_z, reserved0;
		uint32_t grid_x, grid_y, grid_z, priv, group;
		uint64_t kernel_object, kernarg, reserved2, signal;
	} *pkt;
	struct amdqp_sim_uq_ctl *ctl;
	uint64_t off, lat;
	uint32_t qid;
	uint8_t *ring;
	void *va;

	_Static_assert(sizeof(*pkt) == AMDQP_SIM_PACKET_SIZE, "packet");
	_Static_assert(offsetof(typeof(*pkt), kernel_object) ==
		       AMDQP_SIM_PKT_KERNEL_OBJECT_OFFSET, "kernel_object");
	va = mmap(NULL, UQ_LEN, PROT_NONE,
		  MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
	ASSERT_NE(MAP_FAILED, va);
	ASSERT_EQ(0, sim_create_uq(self->sfd, self->gpu, 2, (uintptr_t)va,
				   UQ_RING, &qid, &off));
	ring = mmap(va, UQ_LEN, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_FIXED,
		    self->sfd, off);
	ASSERT_EQ(va, (void *)ring);
	ctl = (struct amdqp_sim_uq_ctl *)(ring + UQ_RING);

	EXPECT_EQ(0xffu, cu_get(self->sfd, self->gpu, qid));
	ASSERT_EQ(0, cu_set(self->sfd, self->gpu, qid, CU_HALF));
	EXPECT_EQ(CU_HALF, cu_get(self->sfd, self->gpu, qid));

	/* One all-slot kernel (workgroup size 0), header last, doorbell. */
	pkt = (void *)ring;
	pkt->kernel_object = HOG_NS;
	pkt->wg_x = 0;
	__atomic_store_n(&pkt->header, AMDQP_SIM_PKT_KERNEL_DISPATCH,
			 __ATOMIC_RELEASE);
	__atomic_store_n(&ctl->doorbell, 1, __ATOMIC_RELEASE);
	/* The first poll after a quiet spell may take 10 ms. */
	ASSERT_EQ(CU_SLOTS - 4, wait_free_slots(self->gpu, CU_SLOTS - 4, 1000));

	lat = run_one(self->sfd, self->gpu, self->high, HIGH_NS, 4);
	ASSERT_NE(~0ULL, lat);
	EXPECT_GT(AT_ONCE_NS, lat) TH_LOG("high item took %llu ms",
					  (unsigned long long)lat /
					  NSEC_PER_MSEC);
	EXPECT_EQ(0, __atomic_load_n(&ctl->read_index, __ATOMIC_ACQUIRE));
	munmap(va, UQ_LEN);
}

TEST_HARNESS_MAIN
