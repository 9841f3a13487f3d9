// SPDX-License-Identifier: GPL-2.0
/*
 * The point of amdqp, observed on the sim's virtual GPU: a suspended queue
 * makes no progress and picks up where it stopped once resumed, and a
 * high-priority queue's latency next to a low-priority hog drops while the
 * hog is suspended. Timing bounds are ratios with wide margins: the VM is
 * QEMU TCG.
 */
#include "common.h"
#include "kselftest_harness.h"

#define EFFECT_GPU_BASE	3000

FIXTURE(effect) {
	int qfd;
	int sfd;
	int gpu;
	uint32_t hog;
	uint32_t high;
	struct owner owner;
};

FIXTURE_VARIANT(effect) {
	const char *mode;
};

FIXTURE_VARIANT_ADD(effect, hws) {
	.mode = "hws",
};

FIXTURE_VARIANT_ADD(effect, mes) {
	.mode = "mes",
};

FIXTURE_SETUP(effect)
{
	self->qfd = self->sfd = -1;
	self->gpu = 0;
	self->owner.pid = 0;
	if (!sim_available())
		SKIP(return, "amdqp and amdqp_sim not loaded");
	self->gpu = sim_new_device(EFFECT_GPU_BASE, variant->mode, 1, 2);
	ASSERT_LT(0, self->gpu);
	self->qfd = qp_open();
	ASSERT_LE(0, self->qfd);
	self->sfd = sim_open();
	ASSERT_LE(0, self->sfd);
	ASSERT_EQ(0, sim_create(self->sfd, self->gpu, 1, &self->hog));
	ASSERT_EQ(0, sim_create(self->sfd, self->gpu, 12, &self->high));
}

FIXTURE_TEARDOWN(effect)
{
	owner_kill(&self->owner);
	sim_env_close(self->qfd, self->sfd, self->gpu);
}

static uint64_t rptr_of(int sfd, uint32_t gpu, uint32_t qid)
{
	struct amdqp_sim_query q;

	if (sim_query(sfd, gpu, qid, &q))
		return ~0ULL;
	return q.rptr;
}

TEST_F(effect, suspended_queue_stops)
{
	struct amdqp_queue_info qi;
	struct amdqp_sim_query q;
	uint64_t r1, r2, seq;

	/* 50 items of 20 ms, one slot each. */
	ASSERT_EQ(0, sim_submit(self->sfd, self->gpu, self->hog,
				20 * NSEC_PER_MSEC, 50, 1, &seq));
	ASSERT_EQ(50, seq);
	ASSERT_EQ(0, sim_wait_rptr(self->sfd, self->gpu, self->hog, 2, 10000));

	ASSERT_EQ(0, qp_suspend1(self->qfd, getpid(), self->gpu, self->hog));
	ASSERT_EQ(0, sim_query(self->sfd, self->gpu, self->hog, &q));
	EXPECT_EQ(0, q.mapped);
	EXPECT_EQ(50, q.wptr);
	r1 = q.rptr;
	EXPECT_GT(50, r1);
	sleep_ms(400);
	r2 = rptr_of(self->sfd, self->gpu, self->hog);
	EXPECT_EQ(r1, r2) TH_LOG("progress while suspended");
	/* The other queue is unaffected. */
	ASSERT_EQ(0, sim_submit(self->sfd, self->gpu, self->high,
				NSEC_PER_MSEC, 1, 1, &seq));
	EXPECT_EQ(0, sim_wait(self->sfd, self->gpu, self->high, seq,
			      5 * NSEC_PER_SEC, NULL));

	ASSERT_EQ(0, qp_resume1(self->qfd, getpid(), self->gpu, self->hog));
	ASSERT_EQ(0, sim_query(self->sfd, self->gpu, self->hog, &q));
	EXPECT_EQ(1, q.mapped);
	EXPECT_EQ(0, sim_wait_rptr(self->sfd, self->gpu, self->hog, r1 + 2,
				   10000));
	/* And it finishes everything. */
	EXPECT_EQ(0, sim_wait(self->sfd, self->gpu, self->hog, 50,
			      20 * NSEC_PER_SEC, NULL));

	/* LIST_QUEUES carries the backend's per-queue counters. */
	ASSERT_EQ(0, qp_queue_info(self->qfd, getpid(), self->gpu, self->hog,
				   &qi));
	ASSERT_EQ(0, sim_query(self->sfd, self->gpu, self->hog, &q));
	EXPECT_EQ(50, qi.submitted);
	EXPECT_EQ(50, qi.completed);
	EXPECT_EQ(q.busy_ns, qi.busy_ns);
	EXPECT_LE(50 * 20 * NSEC_PER_MSEC * 9 / 10, qi.busy_ns);
	EXPECT_EQ(1, qi.suspend_count);
	EXPECT_LE(400 * NSEC_PER_MSEC, qi.suspended_ns);
}

/*
 * One long item preempted in flight: it keeps its progress (CWSR) and
 * makes none while suspended, so it completes no sooner than its
 * duration plus the time it spent suspended.
 */
TEST_F(effect, inflight_item_preempted)
{
	struct amdqp_sim_query q;
	struct amdqp_device_info d0, d1;
	uint64_t t0, done, seq;

	ASSERT_EQ(0, qp_dev_info(self->qfd, self->gpu, &d0));
	t0 = now_ns();
	ASSERT_EQ(0, sim_submit(self->sfd, self->gpu, self->hog,
				1500 * NSEC_PER_MSEC, 1, 1, &seq));
	sleep_ms(200);
	ASSERT_EQ(0, qp_suspend1(self->qfd, getpid(), self->gpu, self->hog));
	ASSERT_EQ(0, sim_query(self->sfd, self->gpu, self->hog, &q));
	EXPECT_EQ(1, q.preemptions);
	EXPECT_EQ(0, q.rptr);
	ASSERT_EQ(0, qp_dev_info(self->qfd, self->gpu, &d1));
	EXPECT_LE(1, d1.preemptions - d0.preemptions);
	sleep_ms(1000);
	ASSERT_EQ(0, sim_query(self->sfd, self->gpu, self->hog, &q));
	EXPECT_EQ(0, q.rptr);
	ASSERT_EQ(0, qp_resume1(self->qfd, getpid(), self->gpu, self->hog));
	ASSERT_EQ(0, sim_wait(self->sfd, self->gpu, self->hog, seq,
			      20 * NSEC_PER_SEC, NULL));
	done = now_ns();
	EXPECT_LE(2300 * NSEC_PER_MSEC, done - t0)
		TH_LOG("item of 1.5 s took %llu ms with 1 s suspended",
		       (unsigned long long)((done - t0) / NSEC_PER_MSEC));
	/* Busy time counts execution only, not the suspension. */
	ASSERT_EQ(0, sim_query(self->sfd, self->gpu, self->hog, &q));
	EXPECT_GT(2200 * NSEC_PER_MSEC, q.busy_ns);
	EXPECT_LE(1400 * NSEC_PER_MSEC, q.busy_ns);
}

/* Latency of one short high-priority item, submitted and waited for. */
static int high_latency(int sfd, uint32_t gpu, uint32_t qid, uint64_t *ns)
{
	uint64_t t0 = now_ns(), seq;
	int ret;

	ret = sim_submit(sfd, gpu, qid, 2 * NSEC_PER_MSEC, 1, 1, &seq);
	if (ret)
		return ret;
	ret = sim_wait(sfd, gpu, qid, seq, 10 * NSEC_PER_SEC, NULL);
	*ns = now_ns() - t0;
	return ret;
}

#define SAMPLES	9

/*
 * A hog that takes every slot for 100 ms at a time, next to a queue that
 * submits 2 ms items: the latter waits for the hog unless the hog is
 * suspended.
 */
TEST_F_TIMEOUT(effect, high_priority_latency, 90)
{
	uint64_t run[SAMPLES], sus[SAMPLES], p50_run, p50_sus, r0, seq;
	unsigned int i;

	ASSERT_EQ(0, sim_submit(self->sfd, self->gpu, self->hog,
				100 * NSEC_PER_MSEC, 400, 0, &seq));
	ASSERT_EQ(0, sim_wait_rptr(self->sfd, self->gpu, self->hog, 1, 10000));
	srandom(7);
	for (i = 0; i < SAMPLES; i++) {
		sleep_ms(random() % 50);
		ASSERT_EQ(0, high_latency(self->sfd, self->gpu, self->high,
					  &run[i]));
	}
	for (i = 0; i < SAMPLES; i++) {
		sleep_ms(random() % 50);
		ASSERT_EQ(0, qp_suspend1(self->qfd, getpid(), self->gpu,
					 self->hog));
		ASSERT_EQ(0, high_latency(self->sfd, self->gpu, self->high,
					  &sus[i]));
		ASSERT_EQ(0, qp_resume1(self->qfd, getpid(), self->gpu,
					self->hog));
	}
	p50_run = percentile(run, SAMPLES, 50);
	p50_sus = percentile(sus, SAMPLES, 50);
	TH_LOG("high-priority P50: %llu us with the hog running, %llu us with it suspended",
	       (unsigned long long)(p50_run / 1000),
	       (unsigned long long)(p50_sus / 1000));
	/* The hog really is in the way... */
	EXPECT_LE(10 * NSEC_PER_MSEC, p50_run);
	/* ...and suspending it gets it out of the way. */
	EXPECT_GT(p50_run / 2, p50_sus);

	/* The hog still progresses once resumed. */
	r0 = rptr_of(self->sfd, self->gpu, self->hog);
	EXPECT_EQ(0, sim_wait_rptr(self->sfd, self->gpu, self->hog, r0 + 2,
				   10000));
}

/* The same through the policy's hot path, the hog in another process. */
TEST_F_TIMEOUT(effect, suspend_below_latency, 90)
{
	uint64_t run[SAMPLES], sus[SAMPLES], p50_run, p50_sus;
	uint32_t gpus[1] = { self->gpu }, ohog = 0;
	struct amdqp_gpu_set gs;
	unsigned int i;

	ASSERT_EQ(0, owner_start(&self->owner));
	ASSERT_EQ(0, owner_create(&self->owner, self->gpu, 1, &ohog));
	ASSERT_EQ(0, owner_submit(&self->owner, self->gpu, ohog,
				  100 * NSEC_PER_MSEC, 400));
	ASSERT_EQ(0, sim_wait_rptr(self->sfd, self->gpu, ohog, 1, 10000));
	srandom(11);
	for (i = 0; i < SAMPLES; i++) {
		sleep_ms(random() % 50);
		ASSERT_EQ(0, high_latency(self->sfd, self->gpu, self->high,
					  &run[i]));
	}
	for (i = 0; i < SAMPLES; i++) {
		sleep_ms(random() % 50);
		ASSERT_EQ(0, qp_gpu_set(self->qfd, AMDQP_IOC_SUSPEND_BELOW,
					gpus, 1, 12, &gs));
		/* The other process's hog only; ours are exempt. */
		ASSERT_EQ(1, gs.affected);
		ASSERT_EQ(0, high_latency(self->sfd, self->gpu, self->high,
					  &sus[i]));
		ASSERT_EQ(0, qp_gpu_set(self->qfd, AMDQP_IOC_RESUME_ALL, gpus,
					1, 0, &gs));
		ASSERT_EQ(1, gs.affected);
	}
	p50_run = percentile(run, SAMPLES, 50);
	p50_sus = percentile(sus, SAMPLES, 50);
	TH_LOG("high-priority P50: %llu us vs %llu us with SUSPEND_BELOW",
	       (unsigned long long)(p50_run / 1000),
	       (unsigned long long)(p50_sus / 1000));
	EXPECT_LE(10 * NSEC_PER_MSEC, p50_run);
	EXPECT_GT(p50_run / 2, p50_sus);
}

TEST_HARNESS_MAIN
