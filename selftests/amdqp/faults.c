// SPDX-License-Identifier: GPL-2.0
/*
 * Injected faults: preemption timeouts (-ETIME), a busy backend (-EBUSY),
 * GPU reset and device removal while queues are suspended, and the
 * starvation watchdog. After each, the state must be consistent: a queue
 * is off the hardware exactly when some fd holds it.
 */
#include "common.h"
#include "kselftest_harness.h"

#define FAULTS_GPU_BASE	7000
#define NQ		3

FIXTURE(faults) {
	int qfd;
	int sfd;
	int gpu;
	uint32_t qid[NQ];
	struct amdqp_queue_ref refs[NQ];
	uint64_t max_suspend_ms;
	uint64_t cooldown_ms;
	bool params_saved;
};

FIXTURE_VARIANT(faults) {
	const char *mode;
	bool hws;
};

FIXTURE_VARIANT_ADD(faults, hws) {
	.mode = "hws",
	.hws = true,
};

FIXTURE_VARIANT_ADD(faults, mes) {
	.mode = "mes",
	.hws = false,
};

FIXTURE_SETUP(faults)
{
	unsigned int i;

	self->qfd = self->sfd = -1;
	self->gpu = 0;
	self->params_saved = false;
	if (!sim_available())
		SKIP(return, "amdqp and amdqp_sim not loaded");
	ASSERT_EQ(0, qp_param_get("max_suspend_ms", &self->max_suspend_ms));
	ASSERT_EQ(0, qp_param_get("cooldown_ms", &self->cooldown_ms));
	self->params_saved = true;
	self->gpu = sim_new_device(FAULTS_GPU_BASE, variant->mode, 1, 4);
	ASSERT_LT(0, self->gpu);
	self->qfd = qp_open();
	ASSERT_LE(0, self->qfd);
	self->sfd = sim_open();
	ASSERT_LE(0, self->sfd);
	for (i = 0; i < NQ; i++) {
		ASSERT_EQ(0, sim_create(self->sfd, self->gpu, 2, &self->qid[i]));
		self->refs[i] = qref(getpid(), self->gpu, self->qid[i]);
	}
}

FIXTURE_TEARDOWN(faults)
{
	if (self->params_saved) {
		qp_param_set("max_suspend_ms", self->max_suspend_ms);
		qp_param_set("cooldown_ms", self->cooldown_ms);
	}
	sim_env_close(self->qfd, self->sfd, self->gpu);
}

/*
 * Check that the queue's amdqp state agrees with @held (this fd holds it,
 * nobody else does) and with the sim's mapped flag.
 */
static int consistent(int qfd, int sfd, uint32_t gpu, uint32_t qid,
		      bool held)
{
	struct amdqp_queue_info qi;
	struct amdqp_sim_query q;
	uint32_t want = held ? AMDQP_QSTATE_SUSPENDED | AMDQP_QSTATE_HELD : 0;

	if (qp_queue_info(qfd, getpid(), gpu, qid, &qi))
		return -1;
	if (sim_query(sfd, gpu, qid, &q))
		return -2;
	if ((qi.state & ~AMDQP_QSTATE_COOLDOWN) != want)
		return -3;
	if (qi.holders != (held ? 1 : 0))
		return -4;
	if (q.mapped != !held)
		return -5;
	return 0;
}

/*
 * Watch @n queues for @ms: each must stay consistent with @held[i] the
 * whole time (no transient re-suspension behind the caller's back).
 * Returns the index of the first queue that was not, or -1.
 */
static int stays_consistent(int qfd, int sfd, uint32_t gpu,
			    const uint32_t *qid, const bool *held,
			    unsigned int n, unsigned int ms, int *why)
{
	uint64_t end = now_ns() + ms * NSEC_PER_MSEC;
	unsigned int i;

	do {
		for (i = 0; i < n; i++) {
			*why = consistent(qfd, sfd, gpu, qid[i], held[i]);
			if (*why)
				return i;
		}
		sleep_ms(5);
	} while (now_ns() < end);
	return -1;
}

TEST_F(faults, preempt_timeout)
{
	bool held[1] = { false };
	int bad, why = 0;
	struct amdqp_device_info d0, d1;
	struct amdqp_sim_query q;
	struct amdqp_event ev;
	struct amdqp_batch b;
	uint64_t r, seq;

	ASSERT_EQ(0, qp_set_mask(self->qfd, 1ULL << AMDQP_EVENT_PREEMPT_FAILED));
	ASSERT_EQ(0, sim_submit(self->sfd, self->gpu, self->qid[0],
				20 * NSEC_PER_MSEC, 100, 1, &seq));
	ASSERT_EQ(0, qp_dev_info(self->qfd, self->gpu, &d0));
	ASSERT_EQ(0, sim_knob_set(self->gpu, "fail_preempt", 1));
	self->refs[0].result = 0x7777;
	ASSERT_EQ(0, qp_batch(self->qfd, AMDQP_IOC_SUSPEND, self->refs, 1, &b));
	EXPECT_EQ(-ETIME, self->refs[0].result);
	EXPECT_EQ(0, b.done);
	EXPECT_EQ(0, self->refs[0].state & AMDQP_QSTATE_HELD);
	EXPECT_EQ(0, consistent(self->qfd, self->sfd, self->gpu, self->qid[0],
				false));
	ASSERT_EQ(0, qp_dev_info(self->qfd, self->gpu, &d1));
	EXPECT_EQ(1, d1.preempt_failures - d0.preempt_failures);
	EXPECT_EQ(0, d1.num_suspended);
	ASSERT_EQ(0, qp_wait_event(self->qfd, AMDQP_EVENT_PREEMPT_FAILED,
				   self->gpu, 0, 2000, &ev));
	EXPECT_EQ(-ETIME, ev.error);
	/* Left running, and nobody retries the unmap behind our back. */
	bad = stays_consistent(self->qfd, self->sfd, self->gpu, self->qid,
			       held, 1, 500, &why);
	EXPECT_EQ(-1, bad) TH_LOG("inconsistent after -ETIME (%d)", why);
	ASSERT_EQ(0, qp_dev_info(self->qfd, self->gpu, &d1));
	EXPECT_EQ(1, d1.sched_updates - d0.sched_updates);

	/* It keeps running... */
	ASSERT_EQ(0, sim_query(self->sfd, self->gpu, self->qid[0], &q));
	r = q.rptr;
	EXPECT_EQ(0, sim_wait_rptr(self->sfd, self->gpu, self->qid[0], r + 2,
				   10000));
	/* ...nothing to resume... */
	EXPECT_EQ(-EALREADY, qp_resume1(self->qfd, getpid(), self->gpu,
					self->qid[0]));
	/* ...and the next suspension works. */
	EXPECT_EQ(0, qp_suspend1(self->qfd, getpid(), self->gpu, self->qid[0]));
	EXPECT_EQ(0, consistent(self->qfd, self->sfd, self->gpu, self->qid[0],
				true));
	EXPECT_EQ(0, qp_resume1(self->qfd, getpid(), self->gpu, self->qid[0]));
	EXPECT_EQ(0, consistent(self->qfd, self->sfd, self->gpu, self->qid[0],
				false));
}

/* A failed unmap in a batch: each entry's result matches its state. */
/*
 * After -ETIME nothing may retry the unmap behind the caller's back (a
 * hold that is still being applied is not a hold to repair). The race is
 * timing dependent, so try a few times.
 */
TEST_F(faults, preempt_timeout_no_retry)
{
	struct amdqp_device_info d0, d1;
	bool held[1] = { false };
	unsigned int i, retried = 0, inconsistent = 0, not_ours = 0;
	int why = 0, ret;

	for (i = 0; i < 8; i++) {
		ASSERT_EQ(0, qp_dev_info(self->qfd, self->gpu, &d0));
		ASSERT_EQ(0, sim_knob_set(self->gpu, "fail_preempt", 1));
		ret = qp_suspend1(self->qfd, getpid(), self->gpu, self->qid[0]);
		if (ret == 0) {
			/* Someone else's unmap took the injected failure. */
			not_ours++;
			ASSERT_EQ(0, qp_resume1(self->qfd, getpid(), self->gpu,
						self->qid[0]));
			continue;
		}
		ASSERT_EQ(-ETIME, ret);
		if (stays_consistent(self->qfd, self->sfd, self->gpu,
				     self->qid, held, 1, 200, &why) >= 0)
			inconsistent++;
		/* Let any repair run its course before counting. */
		ASSERT_EQ(0, qp_wait_state(self->qfd, getpid(), self->gpu,
					   self->qid[0], AMDQP_QSTATE_SUSPENDED,
					   0, 2000));
		ASSERT_EQ(0, qp_dev_info(self->qfd, self->gpu, &d1));
		if (d1.sched_updates - d0.sched_updates != 1)
			retried++;
	}
	EXPECT_EQ(0, retried) TH_LOG("%u of 8 timed-out suspends were retried",
				     retried);
	EXPECT_EQ(0, inconsistent)
		TH_LOG("%u of 8 timed-out queues went off the hardware anyway",
		       inconsistent);
	EXPECT_EQ(0, not_ours)
		TH_LOG("%u of 8 injected timeouts hit an unmap the caller did not issue",
		       not_ours);
}

/*
 * A failed unmap in a batch: each entry's result matches its state, right
 * away and afterwards, and nothing retries the failed preemption behind
 * the caller's back (the firmware cost of a timeout is paid once).
 */
TEST_F(faults, preempt_timeout_batch)
{
	struct amdqp_device_info d0, d1;
	struct amdqp_batch b;
	unsigned int i, failed = 0;
	bool held[NQ];
	int bad, why = 0;

	ASSERT_EQ(0, qp_dev_info(self->qfd, self->gpu, &d0));
	ASSERT_EQ(0, sim_knob_set(self->gpu, "fail_preempt", 1));
	ASSERT_EQ(0, qp_batch(self->qfd, AMDQP_IOC_SUSPEND, self->refs, NQ,
			      &b));
	for (i = 0; i < NQ; i++) {
		int res = self->refs[i].result;

		ASSERT_TRUE(res == 0 || res == -ETIME) TH_LOG("entry %u: %d", i,
							     res);
		failed += res != 0;
		held[i] = res == 0;
	}
	EXPECT_LE(1, failed);
	EXPECT_EQ(NQ - failed, b.done);
	bad = stays_consistent(self->qfd, self->sfd, self->gpu, self->qid,
			       held, NQ, 1000, &why);
	EXPECT_EQ(-1, bad) TH_LOG("entry %d (result %d) inconsistent (%d)", bad,
				  bad >= 0 ? self->refs[bad].result : 0, why);
	ASSERT_EQ(0, qp_dev_info(self->qfd, self->gpu, &d1));
	EXPECT_EQ(NQ - failed, d1.num_suspended);
	EXPECT_EQ(1, d1.preempt_failures - d0.preempt_failures);
	/* HWS: the one failed runlist update; MES: one remove per queue. */
	EXPECT_EQ(variant->hws ? 1 : NQ, d1.sched_updates - d0.sched_updates)
		TH_LOG("unexpected scheduler updates after a preemption timeout");

	ASSERT_EQ(0, qp_gpu_set(self->qfd, AMDQP_IOC_RESUME_ALL, NULL, 0, 0,
				NULL));
	for (i = 0; i < NQ; i++) {
		EXPECT_EQ(0, consistent(self->qfd, self->sfd, self->gpu,
					self->qid[i], false));
	}
}

/* grace_us shorter than the unmap takes: a preemption timeout. */
TEST_F(faults, grace_exceeded)
{
	struct amdqp_batch b = { .refs = (uintptr_t)self->refs, .count = 1,
				 .ref_size = sizeof(self->refs[0]),
				 .grace_us = 20000 };

	ASSERT_EQ(0, sim_knob_set(self->gpu, "unmap_latency_us", 300000));
	self->refs[0].result = 0x7777;
	ASSERT_EQ(0, ioctl(self->qfd, AMDQP_IOC_SUSPEND, &b));
	sim_knob_set(self->gpu, "unmap_latency_us", 0);
	EXPECT_EQ(-ETIME, self->refs[0].result);
	EXPECT_EQ(0, consistent(self->qfd, self->sfd, self->gpu, self->qid[0],
				false));
	/* The default deadline is long enough for the same unmap. */
	ASSERT_EQ(0, sim_knob_set(self->gpu, "unmap_latency_us", 100000));
	EXPECT_EQ(0, qp_suspend1(self->qfd, getpid(), self->gpu, self->qid[0]));
	sim_knob_set(self->gpu, "unmap_latency_us", 0);
	EXPECT_EQ(0, consistent(self->qfd, self->sfd, self->gpu, self->qid[0],
				true));
}

/*
 * On hardware the grace reaches an 8-bit CP wait count where 0 means no
 * limit; a multiple of 256 us must not become that. The core caps every
 * grace at 255 us, so a failing unmap with a grace of 256 * 3906 us gives
 * up after the cap, not after the grace asked for (nor never).
 */
TEST_F(faults, grace_capped)
{
	static const uint32_t graces[] = { 256, 256 * 3906 };
	struct amdqp_batch b;
	uint64_t timeout_ms;
	unsigned int i;

	ASSERT_EQ(0, sim_knob_get(self->gpu, "preempt_timeout_ms", &timeout_ms));
	ASSERT_EQ(0, sim_knob_set(self->gpu, "preempt_timeout_ms", 3000));
	for (i = 0; i < ARRAY_SIZE(graces); i++) {
		b = (struct amdqp_batch){ .refs = (uintptr_t)self->refs,
					  .count = 1,
					  .ref_size = sizeof(self->refs[0]),
					  .grace_us = graces[i] };
		ASSERT_EQ(0, sim_knob_set(self->gpu, "fail_preempt", 1));
		self->refs[0].result = 0x7777;
		ASSERT_EQ(0, ioctl(self->qfd, AMDQP_IOC_SUSPEND, &b));
		EXPECT_EQ(-ETIME, self->refs[0].result);
		EXPECT_GT(100 * NSEC_PER_MSEC, b.latency_ns)
			TH_LOG("grace %u us held the unmap %llu ns", graces[i],
			       (unsigned long long)b.latency_ns);
		EXPECT_EQ(0, consistent(self->qfd, self->sfd, self->gpu,
					self->qid[0], false));
	}
	/* Capped, not zero: an unmap that fits in 255 us still succeeds. */
	ASSERT_EQ(0, sim_knob_set(self->gpu, "fail_preempt", 0));
	ASSERT_EQ(0, sim_knob_set(self->gpu, "unmap_latency_us", 150));
	b.grace_us = 512;
	self->refs[0].result = 0x7777;
	ASSERT_EQ(0, ioctl(self->qfd, AMDQP_IOC_SUSPEND, &b));
	EXPECT_EQ(0, self->refs[0].result);
	EXPECT_EQ(0, consistent(self->qfd, self->sfd, self->gpu, self->qid[0],
				true));
	/* ...and one that does not fit fails however long the grace asked. */
	EXPECT_EQ(0, qp_resume1(self->qfd, getpid(), self->gpu, self->qid[0]));
	ASSERT_EQ(0, sim_knob_set(self->gpu, "unmap_latency_us", 400));
	b.grace_us = 100000;
	self->refs[0].result = 0x7777;
	ASSERT_EQ(0, ioctl(self->qfd, AMDQP_IOC_SUSPEND, &b));
	EXPECT_EQ(-ETIME, self->refs[0].result);
	sim_knob_set(self->gpu, "unmap_latency_us", 100);
	sim_knob_set(self->gpu, "preempt_timeout_ms", timeout_ms);
	EXPECT_EQ(0, consistent(self->qfd, self->sfd, self->gpu, self->qid[0],
				false));
}

TEST_F(faults, busy)
{
	struct amdqp_device_info di;

	ASSERT_EQ(0, sim_knob_set(self->gpu, "fail_busy", 1));
	EXPECT_EQ(-EBUSY, qp_suspend1(self->qfd, getpid(), self->gpu,
				      self->qid[0]));
	EXPECT_EQ(0, consistent(self->qfd, self->sfd, self->gpu, self->qid[0],
				false));
	EXPECT_EQ(0, qp_suspend1(self->qfd, getpid(), self->gpu, self->qid[0]));
	EXPECT_EQ(0, consistent(self->qfd, self->sfd, self->gpu, self->qid[0],
				true));

	/*
	 * A resume the backend refuses: the hold is gone either way and the
	 * queue must come back by itself shortly, never stay starved.
	 */
	ASSERT_EQ(0, sim_knob_set(self->gpu, "fail_busy", 1));
	EXPECT_EQ(-EBUSY, qp_resume1(self->qfd, getpid(), self->gpu,
				     self->qid[0]));
	EXPECT_EQ(0, qp_wait_state(self->qfd, getpid(), self->gpu, self->qid[0],
				   AMDQP_QSTATE_SUSPENDED | AMDQP_QSTATE_HELD,
				   0, 3000));
	EXPECT_EQ(0, consistent(self->qfd, self->sfd, self->gpu, self->qid[0],
				false));
	ASSERT_EQ(0, qp_dev_info(self->qfd, self->gpu, &di));
	EXPECT_EQ(0, di.num_suspended);
}

TEST_F(faults, reset_while_suspended)
{
	struct amdqp_device_info d0, d1;
	struct amdqp_event ev;
	struct amdqp_batch b;
	unsigned int i;
	int ret;

	ASSERT_EQ(0, qp_set_mask(self->qfd, 1ULL << AMDQP_EVENT_GPU_RESET));
	ASSERT_EQ(0, qp_batch(self->qfd, AMDQP_IOC_SUSPEND, self->refs, 2, &b));
	ASSERT_EQ(2, b.done);
	ASSERT_EQ(0, qp_dev_info(self->qfd, self->gpu, &d0));
	ASSERT_EQ(0, sim_knob_set(self->gpu, "reset", 1));
	ASSERT_EQ(0, qp_wait_event(self->qfd, AMDQP_EVENT_GPU_RESET, self->gpu,
				   0, 2000, &ev));
	ASSERT_EQ(0, qp_dev_info(self->qfd, self->gpu, &d1));
	EXPECT_EQ(1, d1.resets - d0.resets);
	EXPECT_EQ(0, d1.num_suspended);
	EXPECT_EQ(NQ, d1.num_queues);
	/* Suspensions are dropped, the queues survive and run. */
	for (i = 0; i < NQ; i++) {
		EXPECT_EQ(0, consistent(self->qfd, self->sfd, self->gpu,
					self->qid[i], false))
			TH_LOG("queue %u after reset", i);
	}
	ret = qp_resume1(self->qfd, getpid(), self->gpu, self->qid[0]);
	EXPECT_TRUE(ret == -EALREADY || ret == -ENODEV) TH_LOG("resume: %d",
							       ret);
	/* The device works after the reset. */
	EXPECT_EQ(0, qp_suspend1(self->qfd, getpid(), self->gpu, self->qid[0]));
	EXPECT_EQ(0, consistent(self->qfd, self->sfd, self->gpu, self->qid[0],
				true));
	EXPECT_EQ(0, qp_resume1(self->qfd, getpid(), self->gpu, self->qid[0]));
	EXPECT_EQ(0, consistent(self->qfd, self->sfd, self->gpu, self->qid[0],
				false));
}

/* Pending work is discarded by a reset; the queue accepts new work. */
TEST_F(faults, reset_discards_work)
{
	struct amdqp_sim_query q;
	uint64_t seq;

	ASSERT_EQ(0, sim_submit(self->sfd, self->gpu, self->qid[0],
				NSEC_PER_SEC, 5, 1, &seq));
	sleep_ms(50);
	ASSERT_EQ(0, sim_knob_set(self->gpu, "reset", 1));
	sleep_ms(50);
	ASSERT_EQ(0, sim_query(self->sfd, self->gpu, self->qid[0], &q));
	EXPECT_EQ(1, q.mapped);
	/* Nothing is left in flight... */
	EXPECT_EQ(q.wptr, q.rptr) TH_LOG("rptr %llu wptr %llu",
					 (unsigned long long)q.rptr,
					 (unsigned long long)q.wptr);
	/* ...and new work completes. */
	ASSERT_EQ(0, sim_submit(self->sfd, self->gpu, self->qid[0],
				NSEC_PER_MSEC, 1, 1, &seq));
	EXPECT_EQ(0, sim_wait(self->sfd, self->gpu, self->qid[0], seq,
			      5 * NSEC_PER_SEC, NULL));
}

TEST_F(faults, device_removed_while_suspended)
{
	struct amdqp_queue_ref r;
	struct amdqp_event ev;
	struct amdqp_version v0, v1;
	uint32_t q;
	int gpu2, ret;

	gpu2 = sim_new_device(FAULTS_GPU_BASE + 500, variant->mode, 1, 2);
	ASSERT_LT(0, gpu2);
	ASSERT_EQ(0, sim_create(self->sfd, gpu2, 2, &q));
	ASSERT_EQ(0, qp_set_mask(self->qfd, AMDQP_EVENT_MASK_ALL));
	ASSERT_EQ(0, qp_suspend1(self->qfd, getpid(), gpu2, q));
	ASSERT_EQ(0, qp_suspend1(self->qfd, getpid(), self->gpu, self->qid[0]));
	ASSERT_EQ(0, qp_version(self->qfd, &v0));

	ASSERT_EQ(0, sim_del_device(gpu2));
	ASSERT_EQ(0, qp_wait_event(self->qfd, AMDQP_EVENT_DEVICE_REMOVED, gpu2,
				   0, 2000, &ev));
	ASSERT_EQ(0, qp_version(self->qfd, &v1));
	EXPECT_EQ(v0.num_devices - 1, v1.num_devices);
	EXPECT_EQ(-ENOENT, qp_state(self->qfd, getpid(), gpu2, q));

	r = qref(getpid(), gpu2, q);
	ret = qp_batch(self->qfd, AMDQP_IOC_RESUME, &r, 1, NULL);
	EXPECT_EQ(0, ret);
	EXPECT_TRUE(r.result == -ENOENT || r.result == -ENODEV)
		TH_LOG("resume on a removed device: %d", r.result);
	/* Destroying it through the sim fd now is harmless. */
	sim_destroy(self->sfd, gpu2, q);
	/* The other device is unaffected. */
	EXPECT_EQ(0, consistent(self->qfd, self->sfd, self->gpu, self->qid[0],
				true));
	EXPECT_EQ(0, qp_resume1(self->qfd, getpid(), self->gpu, self->qid[0]));
}

TEST_F_TIMEOUT(faults, watchdog, 60)
{
	struct amdqp_queue_info qi;
	struct amdqp_sim_query q;
	struct amdqp_event ev;
	uint64_t t0, r, wd0 = 0, wd1 = 0;
	int st;

	ASSERT_EQ(0, qp_param_set("max_suspend_ms", 200));
	ASSERT_EQ(0, qp_param_set("cooldown_ms", 3000));
	read_named("/sys/kernel/debug/amdqp/stats", "watchdog_resumes", &wd0);
	ASSERT_EQ(0, qp_set_mask(self->qfd, 1ULL << AMDQP_EVENT_WATCHDOG));
	ASSERT_EQ(0, sim_submit(self->sfd, self->gpu, self->qid[0],
				10 * NSEC_PER_MSEC, 1000, 1, &r));

	t0 = now_ns();
	ASSERT_EQ(0, qp_suspend1(self->qfd, getpid(), self->gpu, self->qid[0]));
	ASSERT_EQ(0, qp_wait_event(self->qfd, AMDQP_EVENT_WATCHDOG, self->gpu,
				   self->qid[0], 5000, &ev));
	EXPECT_LE(200 * NSEC_PER_MSEC, now_ns() - t0);
	EXPECT_LE(200 * NSEC_PER_MSEC, ev.data);
	EXPECT_EQ(getpid(), (pid_t)ev.pid);
	st = qp_wait_state(self->qfd, getpid(), self->gpu, self->qid[0],
			   AMDQP_QSTATE_SUSPENDED, 0, 2000);
	EXPECT_EQ(0, st & (AMDQP_QSTATE_SUSPENDED | AMDQP_QSTATE_HELD));
	EXPECT_EQ(0, consistent(self->qfd, self->sfd, self->gpu, self->qid[0],
				false));
	ASSERT_EQ(0, qp_queue_info(self->qfd, getpid(), self->gpu, self->qid[0],
				   &qi));
	EXPECT_TRUE(qi.state & AMDQP_QSTATE_COOLDOWN);
	read_named("/sys/kernel/debug/amdqp/stats", "watchdog_resumes", &wd1);
	EXPECT_LE(1, wd1 - wd0);

	/* In cooldown it cannot be suspended again; other queues can. */
	EXPECT_EQ(-EAGAIN, qp_suspend1(self->qfd, getpid(), self->gpu,
				       self->qid[0]));
	EXPECT_EQ(0, qp_suspend1(self->qfd, getpid(), self->gpu, self->qid[1]));
	EXPECT_EQ(0, qp_resume1(self->qfd, getpid(), self->gpu, self->qid[1]));
	/* The hold was dropped with the watchdog resume. */
	EXPECT_EQ(-EALREADY, qp_resume1(self->qfd, getpid(), self->gpu,
					self->qid[0]));
	/* It runs. */
	ASSERT_EQ(0, sim_query(self->sfd, self->gpu, self->qid[0], &q));
	EXPECT_EQ(0, sim_wait_rptr(self->sfd, self->gpu, self->qid[0],
				   q.rptr + 2, 10000));

	/* After the cooldown it can be suspended again. */
	ASSERT_EQ(0, qp_param_set("max_suspend_ms", 0));
	sleep_ms(3500);
	ASSERT_EQ(0, qp_queue_info(self->qfd, getpid(), self->gpu, self->qid[0],
				   &qi));
	EXPECT_EQ(0, qi.state & AMDQP_QSTATE_COOLDOWN);
	EXPECT_EQ(0, qp_suspend1(self->qfd, getpid(), self->gpu, self->qid[0]));
	/* max_suspend_ms 0: no watchdog; it stays suspended. */
	sleep_ms(600);
	EXPECT_EQ(0, consistent(self->qfd, self->sfd, self->gpu, self->qid[0],
				true));
	EXPECT_EQ(0, qp_resume1(self->qfd, getpid(), self->gpu, self->qid[0]));
}

#define STATS	"/sys/kernel/debug/amdqp/stats"

/* Events of @type for one queue that arrive within @ms (or -errno). */
static int count_events(int fd, uint32_t type, uint32_t gpu, uint32_t qid,
			unsigned int ms)
{
	uint64_t end = now_ns() + ms * NSEC_PER_MSEC;
	struct amdqp_event ev[16];
	int n = 0;

	for (;;) {
		struct pollfd p = { .fd = fd, .events = POLLIN };
		int64_t left = (int64_t)(end - now_ns());
		ssize_t got;
		int i;

		if (left <= 0)
			return n;
		if (poll(&p, 1, left / (int64_t)NSEC_PER_MSEC + 1) <= 0)
			continue;
		got = read(fd, ev, sizeof(ev));
		if (got < 0) {
			if (errno == EAGAIN || errno == EINTR)
				continue;
			return -errno;
		}
		for (i = 0; i < got / (ssize_t)sizeof(ev[0]); i++)
			n += ev[i].type == type && ev[i].gpu_id == gpu &&
			     ev[i].queue_id == qid;
	}
}

/*
 * Item 8: a queue whose resume keeps failing gets one WATCHDOG event for
 * the stretch, not one per 50 ms sweep; the sweeps keep retrying it, and
 * a later stretch gets its own event.
 */
TEST_F_TIMEOUT(faults, watchdog_one_event_per_streak, 60)
{
	uint64_t wd0 = 0, wd1 = 0, wd2 = 0;
	int st;

	ASSERT_EQ(0, qp_param_set("max_suspend_ms", 200));
	ASSERT_EQ(0, qp_param_set("cooldown_ms", 100));
	ASSERT_EQ(0, read_named(STATS, "watchdog_resumes", &wd0));
	ASSERT_EQ(0, qp_set_mask(self->qfd, 1ULL << AMDQP_EVENT_WATCHDOG));
	ASSERT_EQ(0, qp_suspend1(self->qfd, getpid(), self->gpu, self->qid[0]));
	/* Every resume from now on fails. */
	ASSERT_EQ(0, sim_knob_set(self->gpu, "fail_busy", 1000000000));
	ASSERT_EQ(0, qp_wait_event(self->qfd, AMDQP_EVENT_WATCHDOG, self->gpu,
				   self->qid[0], 5000, NULL));
	/* Some 30 sweeps retry it and fail: no further event. */
	EXPECT_EQ(0, count_events(self->qfd, AMDQP_EVENT_WATCHDOG, self->gpu,
				  self->qid[0], 1500));
	st = qp_state(self->qfd, getpid(), self->gpu, self->qid[0]);
	EXPECT_EQ(AMDQP_QSTATE_SUSPENDED,
		  st & (AMDQP_QSTATE_SUSPENDED | AMDQP_QSTATE_HELD));
	ASSERT_EQ(0, read_named(STATS, "watchdog_resumes", &wd1));
	EXPECT_EQ(1, wd1 - wd0);

	/* The firmware recovers: the repair pass puts it back, silently. */
	ASSERT_EQ(0, sim_knob_set(self->gpu, "fail_busy", 0));
	st = qp_wait_state(self->qfd, getpid(), self->gpu, self->qid[0],
			   AMDQP_QSTATE_SUSPENDED, 0, 3000);
	EXPECT_EQ(0, st & AMDQP_QSTATE_SUSPENDED);
	EXPECT_EQ(0, consistent(self->qfd, self->sfd, self->gpu, self->qid[0],
				false));
	EXPECT_EQ(0, count_events(self->qfd, AMDQP_EVENT_WATCHDOG, self->gpu,
				  self->qid[0], 300));

	/* A new stretch is a new streak. */
	ASSERT_EQ(0, qp_suspend1(self->qfd, getpid(), self->gpu, self->qid[0]));
	EXPECT_EQ(0, qp_wait_event(self->qfd, AMDQP_EVENT_WATCHDOG, self->gpu,
				   self->qid[0], 5000, NULL));
	st = qp_wait_state(self->qfd, getpid(), self->gpu, self->qid[0],
			   AMDQP_QSTATE_SUSPENDED, 0, 3000);
	EXPECT_EQ(0, st & AMDQP_QSTATE_SUSPENDED);
	ASSERT_EQ(0, read_named(STATS, "watchdog_resumes", &wd2));
	EXPECT_EQ(2, wd2 - wd0);
}

#define NFAIL	300

/* qp_state() for devices with more queues than its 256-entry list. */
static int many_state(int fd, pid_t pid, uint32_t gpu, uint32_t qid)
{
	struct amdqp_queue_info *infos;
	uint32_t i, n = 0;
	int ret;

	infos = calloc(1024, sizeof(*infos));
	if (!infos)
		return -ENOMEM;
	ret = qp_list(fd, gpu, pid, infos, 1024, &n);
	if (!ret)
		ret = -ENOENT;
	for (i = 0; i < n && ret == -ENOENT; i++)
		if (infos[i].queue_id == qid)
			ret = (int)infos[i].state;
	free(infos);
	return ret;
}

/* Poll many_state() until (state & @mask) == @want; the last state. */
static int many_wait_state(int fd, pid_t pid, uint32_t gpu, uint32_t qid,
			   uint32_t mask, uint32_t want, unsigned int ms)
{
	uint64_t end = now_ns() + ms * NSEC_PER_MSEC;
	int st;

	do {
		st = many_state(fd, pid, gpu, qid);
		if (st >= 0 && ((uint32_t)st & mask) == want)
			break;
		sleep_ms(10);
	} while (now_ns() < end);
	return st;
}

/*
 * Item 8: more queues than one watchdog batch (256) whose resumes keep
 * failing, on the device first in the lists, must not hide an overdue
 * queue behind them: it is resumed on time.
 */
TEST_F_TIMEOUT(faults, watchdog_failing_queues_hide_nothing, 120)
{
	struct amdqp_queue_ref *refs;
	struct amdqp_batch b;
	uint32_t qid2 = 0;
	unsigned int i;
	int gpu2, st;

	refs = calloc(NFAIL, sizeof(*refs));
	ASSERT_NE(NULL, refs);
	for (i = 0; i < NFAIL; i++) {
		uint32_t qid;

		ASSERT_EQ(0, sim_create(self->sfd, self->gpu, 2, &qid));
		refs[i] = qref(getpid(), self->gpu, qid);
	}
	/* Registered later, so behind all of them in every list. */
	gpu2 = sim_new_device(FAULTS_GPU_BASE + 100, variant->mode, 1, 4);
	ASSERT_LT(0, gpu2);
	ASSERT_EQ(0, sim_create(self->sfd, gpu2, 2, &qid2));

	ASSERT_EQ(0, qp_batch(self->qfd, AMDQP_IOC_SUSPEND, refs, NFAIL, &b));
	ASSERT_EQ(NFAIL, b.done);
	ASSERT_EQ(0, qp_suspend1(self->qfd, getpid(), gpu2, qid2));
	ASSERT_EQ(0, sim_knob_set(self->gpu, "fail_busy", 1000000000));
	ASSERT_EQ(0, qp_set_mask(self->qfd, 1ULL << AMDQP_EVENT_WATCHDOG));
	ASSERT_EQ(0, qp_param_set("cooldown_ms", 100));
	ASSERT_EQ(0, qp_param_set("max_suspend_ms", 300));

	EXPECT_EQ(0, qp_wait_event(self->qfd, AMDQP_EVENT_WATCHDOG, gpu2, qid2,
				   5000, NULL));
	st = qp_wait_state(self->qfd, getpid(), gpu2, qid2,
			   AMDQP_QSTATE_SUSPENDED, 0, 3000);
	EXPECT_EQ(0, st & (AMDQP_QSTATE_SUSPENDED | AMDQP_QSTATE_HELD));
	/* The failing ones lost their holds too, the last one included. */
	st = many_state(self->qfd, getpid(), self->gpu,
			refs[NFAIL - 1].queue_id);
	ASSERT_LE(0, st);
	EXPECT_EQ(AMDQP_QSTATE_SUSPENDED,
		  st & (AMDQP_QSTATE_SUSPENDED | AMDQP_QSTATE_HELD));

	/* Recovered firmware: the repair pass puts them all back. */
	ASSERT_EQ(0, sim_knob_set(self->gpu, "fail_busy", 0));
	for (i = 0; i < NFAIL; i += NFAIL / 10) {
		st = many_wait_state(self->qfd, getpid(), self->gpu,
				     refs[i].queue_id, AMDQP_QSTATE_SUSPENDED,
				     0, 5000);
		ASSERT_LE(0, st);
		EXPECT_EQ(0, st & AMDQP_QSTATE_SUSPENDED);
	}
	st = many_wait_state(self->qfd, getpid(), self->gpu,
			     refs[NFAIL - 1].queue_id, AMDQP_QSTATE_SUSPENDED,
			     0, 5000);
	ASSERT_LE(0, st);
	EXPECT_EQ(0, st & AMDQP_QSTATE_SUSPENDED);
	sim_destroy(self->sfd, gpu2, qid2);
	sim_del_device(gpu2);
	free(refs);
}

/*
 * Item 8: the watchdog is armed only while something is off the
 * hardware: no sweep at all while nothing is, sweeps while a queue is.
 */
TEST_F_TIMEOUT(faults, watchdog_idle_when_nothing_suspended, 60)
{
	uint64_t a = 0, b = 0, c = 0, d = 0, e = 0;

	/* Let a sweep armed by an earlier test run out. */
	sleep_ms(300);
	ASSERT_EQ(0, read_named(STATS, "watchdog_sweeps", &a));
	sleep_ms(600);
	ASSERT_EQ(0, read_named(STATS, "watchdog_sweeps", &b));
	EXPECT_EQ(a, b);

	ASSERT_EQ(0, qp_suspend1(self->qfd, getpid(), self->gpu, self->qid[0]));
	sleep_ms(600);
	ASSERT_EQ(0, read_named(STATS, "watchdog_sweeps", &c));
	EXPECT_LE(b + 3, c);

	ASSERT_EQ(0, qp_resume1(self->qfd, getpid(), self->gpu, self->qid[0]));
	sleep_ms(300);
	ASSERT_EQ(0, read_named(STATS, "watchdog_sweeps", &d));
	sleep_ms(600);
	ASSERT_EQ(0, read_named(STATS, "watchdog_sweeps", &e));
	EXPECT_EQ(d, e);
}

/*
 * Item 9: LIST_QUEUES no longer allocates for the caller's count; it
 * fills the array in passes of 256. Every queue once, the count exact,
 * also when the array is smaller than the list.
 */
TEST_F(faults, list_queues_in_passes)
{
	struct amdqp_queue_info *infos;
	struct amdqp_list_queues l;
	unsigned int i, j, dup = 0, want = NFAIL + NQ;

	for (i = 0; i < NFAIL; i++) {
		uint32_t qid;

		ASSERT_EQ(0, sim_create(self->sfd, self->gpu, 2, &qid));
	}
	infos = calloc(1024, sizeof(*infos));
	ASSERT_NE(NULL, infos);
	memset(&l, 0, sizeof(l));
	l.queues = (uintptr_t)infos;
	l.count = 1024;
	l.info_size = sizeof(*infos);
	l.gpu_id = self->gpu;
	ASSERT_EQ(0, ioctl(self->qfd, AMDQP_IOC_LIST_QUEUES, &l));
	EXPECT_EQ(want, l.filled);
	EXPECT_EQ(want, l.count);
	for (i = 0; i < l.filled; i++)
		for (j = i + 1; j < l.filled; j++)
			dup += infos[i].queue_id == infos[j].queue_id;
	EXPECT_EQ(0, dup);
	/* Registration order: ids grow (the sim hands them out in order). */
	for (i = 1; i < l.filled; i++)
		EXPECT_LT(infos[i - 1].queue_id, infos[i].queue_id);

	/* A smaller array: a prefix, and the full count. */
	l.count = 260;
	memset(infos, 0, 1024 * sizeof(*infos));
	ASSERT_EQ(0, ioctl(self->qfd, AMDQP_IOC_LIST_QUEUES, &l));
	EXPECT_EQ(260, l.filled);
	EXPECT_EQ(want, l.count);
	EXPECT_EQ(0, infos[260].queue_id);
	free(infos);
}

TEST_HARNESS_MAIN
