// SPDX-License-Identifier: GPL-2.0
/*
 * amdqp's kfd backend against the glue stub (kmod/testing/): the backend
 * binds to amdqp_kfdstub.ko as it would to a patched amdgpu, and these
 * tests drive /dev/amdqp while the stub fakes devices, processes and
 * queues and injects the faults only real hardware produces.
 *
 * Every test ends with the invariant of issue 10: no queue is left off
 * the hardware (stub ctl flag) without a holder, and the backend broke
 * none of the interface's rules (stub "violations").
 *
 * Needs amdqp_kfdstub.ko and amdqp.ko loaded (selftests/vm/run-stub.sh);
 * skips otherwise.
 */
#include <pthread.h>

#include "stub.h"
#include "kselftest_harness.h"

#define STUB_GPU_BASE	0x5000
#define NQ		3
#define RING(i)		(0x7f0000100000ULL + (i) * 0x10000ULL)

FIXTURE(stub) {
	int qfd;
	int gpu;
	pid_t owner;
	bool owner_exited;
	struct amdqp_queue_ref refs[NQ];
};

FIXTURE_VARIANT(stub) {
	const char *mode;
	uint32_t sched;
};

FIXTURE_VARIANT_ADD(stub, hws) {
	.mode = "hws",
	.sched = AMDQP_SCHED_HWS,
};

FIXTURE_VARIANT_ADD(stub, mes) {
	.mode = "mes",
	.sched = AMDQP_SCHED_MES,
};

FIXTURE_SETUP(stub)
{
	unsigned int i;

	self->qfd = -1;
	self->gpu = 0;
	self->owner = 0;
	self->owner_exited = false;
	if (!stub_available())
		SKIP(return, "amdqp and amdqp_kfdstub not loaded");
	ASSERT_EQ(1, kfd_bound());
	ASSERT_EQ(0, stub_stat_v("violations"));
	self->gpu = stub_new_device(STUB_GPU_BASE, variant->mode);
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

FIXTURE_TEARDOWN(stub)
{
	if (self->qfd >= 0)
		close(self->qfd);
	if (self->owner > 0 && !self->owner_exited)
		stub_cmd("proc_exit %d", self->owner);
	if (self->gpu > 0)
		stub_cmd("dev_del %d", self->gpu);
	sleeper_stop(self->owner);
}

/* Nothing off the hardware without a holder; no rule broken. */
#define EXPECT_CLEAN() do {						\
		EXPECT_EQ(0, stub_nr_ctl());				\
		EXPECT_EQ(0, stub_stat_v("violations"));		\
	} while (0)

/* Poll until the stub queue's ctl flag is @want (the watchdog repairs). */
static int wait_ctl(pid_t pid, uint32_t gpu, uint32_t qid, int want,
		    unsigned int ms)
{
	uint64_t end = now_ns() + ms * NSEC_PER_MSEC;
	int c;

	do {
		c = stub_ctl(pid, gpu, qid);
		if (c == want)
			return c;
		sleep_ms(10);
	} while (now_ns() < end);
	return c;
}

TEST_F(stub, binds_devices_and_queues)
{
	struct amdqp_device_info di;
	struct amdqp_queue_info qi;
	unsigned int i;

	ASSERT_EQ(0, qp_dev_info(self->qfd, self->gpu, &di));
	EXPECT_EQ(AMDQP_BACKEND_KFD, di.backend);
	EXPECT_EQ(variant->sched, di.sched_mode);
	EXPECT_EQ(NQ, di.num_queues);
	for (i = 0; i < NQ; i++) {
		ASSERT_EQ(0, qp_queue_info(self->qfd, self->owner, self->gpu,
					   i + 1, &qi));
		EXPECT_EQ(RING(i), qi.ring_va);
		EXPECT_EQ(2, qi.priority);
	}
	EXPECT_CLEAN();
}

TEST_F(stub, batch_is_one_scheduler_update)
{
	struct amdqp_device_info d0, d1;
	struct amdqp_batch b;
	unsigned int i;

	ASSERT_EQ(0, qp_dev_info(self->qfd, self->gpu, &d0));
	ASSERT_EQ(0, qp_batch(self->qfd, AMDQP_IOC_SUSPEND, self->refs, NQ, &b));
	EXPECT_EQ(NQ, b.done);
	for (i = 0; i < NQ; i++) {
		EXPECT_EQ(0, self->refs[i].result);
		EXPECT_EQ(1, stub_ctl(self->owner, self->gpu, i + 1));
	}
	ASSERT_EQ(0, qp_dev_info(self->qfd, self->gpu, &d1));
	/* HWS: one runlist update for the batch; MES: one per queue. */
	EXPECT_EQ(variant->sched == AMDQP_SCHED_HWS ? 1 : NQ,
		  d1.sched_updates - d0.sched_updates);
	EXPECT_EQ(NQ, d1.num_suspended);

	ASSERT_EQ(0, qp_batch(self->qfd, AMDQP_IOC_RESUME, self->refs, NQ, &b));
	EXPECT_EQ(NQ, b.done);
	for (i = 0; i < NQ; i++)
		EXPECT_EQ(0, stub_ctl(self->owner, self->gpu, i + 1));
	EXPECT_CLEAN();
}

TEST_F(stub, close_resumes)
{
	ASSERT_EQ(0, qp_batch(self->qfd, AMDQP_IOC_SUSPEND, self->refs, NQ,
			      NULL));
	EXPECT_EQ(NQ, stub_nr_ctl());
	close(self->qfd);
	self->qfd = -1;
	EXPECT_CLEAN();
}

TEST_F(stub, suspend_below_and_resume_all)
{
	uint32_t gpus[1] = { self->gpu };
	struct amdqp_gpu_set s;

	ASSERT_EQ(0, qp_gpu_set(self->qfd, AMDQP_IOC_SUSPEND_BELOW, gpus, 1, 7,
				&s));
	EXPECT_EQ(NQ, s.affected);
	EXPECT_EQ(NQ, stub_nr_ctl());
	ASSERT_EQ(0, qp_gpu_set(self->qfd, AMDQP_IOC_RESUME_ALL, gpus, 1, 0,
				&s));
	EXPECT_EQ(NQ, s.affected);
	EXPECT_CLEAN();
}

TEST_F(stub, destroyed_queue_is_forgotten)
{
	struct amdqp_queue_info qi;
	struct amdqp_event ev;

	ASSERT_EQ(0, qp_set_mask(self->qfd,
				 1ULL << AMDQP_EVENT_QUEUE_DESTROYED));
	ASSERT_EQ(0, qp_suspend1(self->qfd, self->owner, self->gpu, 1));
	ASSERT_EQ(0, stub_cmd("queue_del %d %d 1", self->owner, self->gpu));
	EXPECT_EQ(0, qp_wait_event(self->qfd, AMDQP_EVENT_QUEUE_DESTROYED,
				   self->gpu, 1, 1000, &ev));
	EXPECT_EQ(-ENOENT, qp_queue_info(self->qfd, self->owner, self->gpu, 1,
					 &qi));
	EXPECT_CLEAN();
}

TEST_F(stub, per_entry_failure)
{
	struct amdqp_batch b;

	ASSERT_EQ(0, stub_cmd("fail_queue %d %d 2 -16 1", self->owner,
			      self->gpu));
	ASSERT_EQ(0, qp_batch(self->qfd, AMDQP_IOC_SUSPEND, self->refs, NQ, &b));
	EXPECT_EQ(0, self->refs[0].result);
	EXPECT_EQ(-EBUSY, self->refs[1].result);
	EXPECT_EQ(0, self->refs[1].state & AMDQP_QSTATE_HELD);
	EXPECT_EQ(0, self->refs[2].result);
	EXPECT_EQ(2, b.done);
	EXPECT_EQ(0, stub_ctl(self->owner, self->gpu, 2));
	close(self->qfd);
	self->qfd = -1;
	EXPECT_CLEAN();
}

/*
 * Issue 10 item 1: whatever grace_us userspace asks for, the glue gets
 * 1..255 wait counts or the driver default, never 0 (an infinite grace on
 * the CP, and a GPU reset when the unmap fence times out).
 */
TEST_F(stub, grace_is_clamped_never_zero)
{
	static const struct { uint32_t us, counts; } cases[] = {
		{ 1, 1 }, { 100, 100 }, { 255, 255 }, { 256, 255 },
		{ 512, 255 }, { 1000, 255 }, { 65536, 255 },
		{ 0, 0xffffffff },
	};
	uint64_t zero0 = stub_stat_v("grace_zero");
	unsigned int i;

	for (i = 0; i < ARRAY_LEN(cases); i++) {
		struct amdqp_queue_ref r = self->refs[0];

		ASSERT_EQ(0, qp_suspend_grace(self->qfd, &r, 1, cases[i].us,
					      NULL));
		ASSERT_EQ(0, r.result);
		EXPECT_EQ(cases[i].counts, stub_stat_v("grace_last"))
			TH_LOG("grace_us %u", cases[i].us);
		ASSERT_EQ(0, qp_resume1(self->qfd, self->owner, self->gpu, 1));
	}
	EXPECT_EQ(zero0, stub_stat_v("grace_zero"));
	EXPECT_GE(255, stub_stat_v("grace_max"));
	EXPECT_CLEAN();
}

/*
 * Item 2: a PROCESS_EXIT without a pid (the thread group was reaped
 * before the mm went) must still drop every queue reference of that
 * process, or its KFD state, queues and PASID are pinned for good.
 */
TEST_F(stub, null_pid_exit_releases_process)
{
	struct amdqp_queue_info qi;
	struct amdqp_event ev;
	int exited, handles;

	ASSERT_EQ(0, qp_set_mask(self->qfd, 1ULL << AMDQP_EVENT_PROCESS_EXIT));
	ASSERT_EQ(0, qp_suspend1(self->qfd, self->owner, self->gpu, 1));
	ASSERT_EQ(0, stub_proc(self->owner, &exited, &handles));
	EXPECT_EQ(NQ, handles);

	ASSERT_EQ(0, stub_cmd("proc_exit %d null", self->owner));
	self->owner_exited = true;
	EXPECT_EQ(-ENOENT, stub_proc(self->owner, &exited, &handles))
		TH_LOG("process still pinned: exited=%d handles=%d", exited,
		       handles);
	EXPECT_EQ(-ENOENT, qp_queue_info(self->qfd, self->owner, self->gpu, 1,
					 &qi));
	/* The exit is reported with the pid the queues were registered with. */
	EXPECT_EQ(0, qp_wait_event(self->qfd, AMDQP_EVENT_PROCESS_EXIT,
				   self->gpu, 0, 1000, &ev));
	EXPECT_EQ(self->owner, ev.pid);
	EXPECT_EQ(0, stub_stat_v("violations"));
}

TEST_F(stub, exit_releases_process)
{
	int exited, handles;

	ASSERT_EQ(0, stub_cmd("proc_exit %d", self->owner));
	self->owner_exited = true;
	EXPECT_EQ(-ENOENT, stub_proc(self->owner, &exited, &handles));
	EXPECT_EQ(0, stub_stat_v("violations"));
}

/*
 * Item 3: a device-wide failure after which an entry did change (the
 * flag flipped on an evicted queue, no hardware change needed: the v1
 * glue's rollback kept it). The core must record it as suspended and
 * resume it later, not drop the hold and leave it off forever.
 */
TEST_F(stub, device_failure_keeps_exact_state)
{
	struct amdqp_batch b;

	/* 1 and 3 evicted, 2 mapped: the failure hits the one update. */
	ASSERT_EQ(0, stub_cmd("evict %d %d 1 1", self->owner, self->gpu));
	ASSERT_EQ(0, stub_cmd("evict %d %d 1 3", self->owner, self->gpu));
	ASSERT_EQ(0, stub_cmd("fail_dev %d -62 1 hw", self->gpu));
	ASSERT_EQ(0, qp_batch(self->qfd, AMDQP_IOC_SUSPEND, self->refs, NQ, &b));
	EXPECT_EQ(0, self->refs[0].result);	/* flag only: kept */
	EXPECT_EQ(-ETIME, self->refs[1].result);
	EXPECT_EQ(0, self->refs[2].result);
	EXPECT_EQ(1, stub_ctl(self->owner, self->gpu, 1));
	EXPECT_EQ(0, stub_ctl(self->owner, self->gpu, 2));
	EXPECT_EQ(1, stub_ctl(self->owner, self->gpu, 3));
	/* What amdqp says matches what the glue did. */
	EXPECT_EQ(AMDQP_QSTATE_SUSPENDED | AMDQP_QSTATE_HELD,
		  self->refs[0].state & (AMDQP_QSTATE_SUSPENDED |
					 AMDQP_QSTATE_HELD));
	EXPECT_EQ(0, self->refs[1].state & AMDQP_QSTATE_HELD);
	close(self->qfd);
	self->qfd = -1;
	EXPECT_CLEAN();
}

/* A failure that leaves part of the batch changed, and one that undoes all. */
TEST_F(stub, device_failure_partial_and_full)
{
	struct amdqp_batch b;
	unsigned int i, held = 0;

	ASSERT_EQ(0, stub_cmd("fail_dev %d -62 1 partial", self->gpu));
	ASSERT_EQ(0, qp_batch(self->qfd, AMDQP_IOC_SUSPEND, self->refs, NQ, &b));
	for (i = 0; i < NQ; i++) {
		int c = stub_ctl(self->owner, self->gpu, i + 1);

		EXPECT_EQ(c ? 0 : -ETIME, self->refs[i].result) TH_LOG("q%u", i);
		EXPECT_EQ(!!c, !!(self->refs[i].state & AMDQP_QSTATE_HELD));
		held += c;
	}
	EXPECT_LT(0, held);
	EXPECT_GT(NQ, held);
	ASSERT_EQ(0, qp_batch(self->qfd, AMDQP_IOC_RESUME, self->refs, NQ, &b));
	EXPECT_EQ(0, stub_nr_ctl());

	ASSERT_EQ(0, stub_cmd("fail_dev %d -62 1 all", self->gpu));
	ASSERT_EQ(0, qp_batch(self->qfd, AMDQP_IOC_SUSPEND, self->refs, NQ, &b));
	EXPECT_EQ(0, b.done);
	for (i = 0; i < NQ; i++)
		EXPECT_EQ(-ETIME, self->refs[i].result);
	EXPECT_CLEAN();
}

struct suspend_arg {
	int fd;
	struct amdqp_queue_ref ref;
	int ret;
};

static void *suspend_thread(void *p)
{
	struct suspend_arg *a = p;

	a->ret = qp_batch(a->fd, AMDQP_IOC_SUSPEND, &a->ref, 1, NULL);
	return NULL;
}

/*
 * Item 3: a GPU reset while a suspend is in flight. The reset drops the
 * holds; the suspend lands after the glue cleared its flags, so the core
 * discards it as stale. It must undo it, not leave the queue off.
 */
TEST_F(stub, reset_during_suspend_is_undone)
{
	struct suspend_arg a = { .fd = self->qfd, .ref = self->refs[0] };
	pthread_t t;

	ASSERT_EQ(0, stub_cmd("delay %d 400", self->gpu));
	ASSERT_EQ(0, pthread_create(&t, NULL, suspend_thread, &a));
	sleep_ms(150);
	ASSERT_EQ(0, stub_cmd("gpu_reset %d", self->gpu));
	pthread_join(t, NULL);
	ASSERT_EQ(0, stub_cmd("delay %d 0", self->gpu));
	ASSERT_EQ(0, a.ret);
	EXPECT_EQ(-ENODEV, a.ref.result);
	EXPECT_EQ(0, a.ref.state & AMDQP_QSTATE_HELD);
	EXPECT_EQ(0, wait_ctl(self->owner, self->gpu, 1, 0, 1000));
	EXPECT_EQ(0, qp_state(self->qfd, self->owner, self->gpu, 1) &
		     AMDQP_QSTATE_SUSPENDED);
	EXPECT_CLEAN();
}

/*
 * A resume the glue refuses: the core keeps the queue marked off and
 * retries until it is back (the watchdog's repair pass).
 */
TEST_F(stub, failed_resume_is_retried)
{
	ASSERT_EQ(0, qp_suspend1(self->qfd, self->owner, self->gpu, 1));
	ASSERT_EQ(0, stub_cmd("fail_queue %d %d 1 -16 3", self->owner,
			      self->gpu));
	close(self->qfd);
	self->qfd = -1;
	EXPECT_EQ(0, wait_ctl(self->owner, self->gpu, 1, 0, 3000));
	EXPECT_CLEAN();
}

/*
 * Items 4 and 5: gfx 9.4.3 resets a queue that does not preempt instead
 * of the GPU and reports success; only has_reset_queue tells. Those
 * queues must be reported (PREEMPT_FAILED -EACCES), forgotten, and never
 * mapped again: not by our resume, not by the reset clean-up.
 */
TEST_F(stub, reset_queue_is_reported_not_success)
{
	struct amdqp_queue_info qi;
	struct amdqp_event ev;
	struct stub_queue sq;
	struct amdqp_batch b;
	unsigned int i;

	ASSERT_EQ(0, qp_set_mask(self->qfd,
				 (1ULL << AMDQP_EVENT_PREEMPT_FAILED)));
	ASSERT_EQ(0, stub_cmd("reset_queue %d %d", self->owner, self->gpu));
	ASSERT_EQ(0, qp_batch(self->qfd, AMDQP_IOC_SUSPEND, self->refs, NQ, &b));
	EXPECT_EQ(0, b.done);
	for (i = 0; i < NQ; i++)
		EXPECT_EQ(-EACCES, self->refs[i].result);
	ASSERT_EQ(0, qp_wait_event(self->qfd, AMDQP_EVENT_PREEMPT_FAILED,
				   self->gpu, 0, 1000, &ev));
	EXPECT_EQ(-EACCES, ev.error);
	/* Forgotten: nothing to hold, nothing to retry. */
	for (i = 0; i < 100; i++) {
		if (qp_queue_info(self->qfd, self->owner, self->gpu, 1, &qi))
			break;
		sleep_ms(10);
	}
	EXPECT_EQ(-ENOENT, qp_queue_info(self->qfd, self->owner, self->gpu, 1,
					 &qi));
	ASSERT_EQ(0, stub_cmd("gpu_reset %d", self->gpu));
	for (i = 0; i < NQ; i++) {
		ASSERT_EQ(0, stub_queue(self->owner, self->gpu, i + 1, &sq));
		EXPECT_EQ(0, sq.active);
		EXPECT_EQ(1, sq.reset);
	}
	EXPECT_CLEAN();
}

TEST_F(stub, resume_after_reset_is_refused)
{
	struct amdqp_queue_info qi;
	struct amdqp_event ev;
	struct stub_queue sq;
	pid_t other;
	int i;

	other = sleeper_start();
	ASSERT_LT(0, other);
	ASSERT_EQ(0, stub_cmd("queue_add %d %d 9 2 %llx", other, self->gpu,
			      (unsigned long long)RING(9)));
	ASSERT_EQ(0, qp_set_mask(self->qfd,
				 (1ULL << AMDQP_EVENT_PREEMPT_FAILED)));
	/* Ours is off; then another preemption resets our owner's queues. */
	ASSERT_EQ(0, qp_suspend1(self->qfd, self->owner, self->gpu, 1));
	ASSERT_EQ(0, stub_cmd("reset_queue %d %d", self->owner, self->gpu));
	ASSERT_EQ(0, qp_suspend1(self->qfd, other, self->gpu, 9));
	/* Resuming must not map the reset queue again (upstream: -EACCES). */
	EXPECT_EQ(-EACCES, qp_resume1(self->qfd, self->owner, self->gpu, 1));
	ASSERT_EQ(0, stub_queue(self->owner, self->gpu, 1, &sq));
	EXPECT_EQ(0, sq.active);
	EXPECT_EQ(0, sq.ctl);
	EXPECT_EQ(0, qp_wait_event(self->qfd, AMDQP_EVENT_PREEMPT_FAILED,
				   self->gpu, 0, 1000, &ev));
	EXPECT_EQ(-EACCES, ev.error);
	for (i = 0; i < 100; i++) {
		if (qp_queue_info(self->qfd, self->owner, self->gpu, 1, &qi))
			break;
		sleep_ms(10);
	}
	EXPECT_EQ(-ENOENT, qp_queue_info(self->qfd, self->owner, self->gpu, 1,
					 &qi));
	/* The other process is untouched and resumes normally. */
	EXPECT_EQ(0, qp_resume1(self->qfd, other, self->gpu, 9));
	ASSERT_EQ(0, stub_queue(other, self->gpu, 9, &sq));
	EXPECT_EQ(1, sq.active);
	stub_cmd("proc_exit %d", other);
	sleeper_stop(other);
	EXPECT_CLEAN();
}

/*
 * amdgpu unloading while a suspend is in flight: detach must wait for the
 * call, drop every queue reference and make no call afterwards; a new
 * provider is bound again when it loads.
 */
TEST_F(stub, detach_mid_call)
{
	struct suspend_arg a = { .fd = self->qfd, .ref = self->refs[0] };
	struct amdqp_device_info di;
	pthread_t t;

	ASSERT_EQ(0, stub_cmd("delay %d 500", self->gpu));
	ASSERT_EQ(0, pthread_create(&t, NULL, suspend_thread, &a));
	sleep_ms(150);
	ASSERT_EQ(0, stub_cmd("detach"));
	pthread_join(t, NULL);
	EXPECT_EQ(0, a.ret);
	EXPECT_EQ(0, stub_stat_v("violations"));
	EXPECT_EQ(0, stub_stat_v("handles"));
	EXPECT_EQ(0, kfd_bound());
	EXPECT_EQ(-ENOENT, qp_dev_info(self->qfd, self->gpu, &di));

	/* amdgpu comes back: the backend binds to it again. */
	close(self->qfd);
	self->qfd = -1;
	self->gpu = 0;
	self->owner_exited = true;
	ASSERT_EQ(0, kmod_rmmod(STUB_MODULE));
	ASSERT_EQ(0, kmod_insmod(STUB_MODULE ".ko", ""));
	EXPECT_EQ(1, kfd_bound());
}

TEST(unload_resumes_what_the_core_could_not)
{
	struct amdqp_batch b;
	struct amdqp_queue_ref r;
	int gpu, fd, i;
	pid_t owner;

	if (!stub_available())
		SKIP(return, "amdqp and amdqp_kfdstub not loaded");
	gpu = stub_new_device(STUB_GPU_BASE + 0x100, "hws");
	ASSERT_LT(0, gpu);
	owner = sleeper_start();
	ASSERT_LT(0, owner);
	ASSERT_EQ(0, stub_cmd("queue_add %d %d 1 2 %llx", owner, gpu,
			      (unsigned long long)RING(0)));

	/* The glue's own safety net off: only amdqp may put it back. */
	ASSERT_EQ(0, write_str("/sys/module/" STUB_MODULE
			       "/parameters/release_on_unregister", "0"));
	fd = qp_open();
	ASSERT_LE(0, fd);
	r = qref(owner, gpu, 1);
	ASSERT_EQ(0, qp_batch(fd, AMDQP_IOC_SUSPEND, &r, 1, &b));
	ASSERT_EQ(0, r.result);
	/* Every resume the core tries now fails ... */
	ASSERT_EQ(0, stub_cmd("fail_queue %d %d 1 -16 1000000", owner, gpu));
	close(fd);
	sleep_ms(200);
	EXPECT_EQ(1, stub_ctl(owner, gpu, 1));
	/* ... until the last one at unload. */
	ASSERT_EQ(0, stub_cmd("fail_queue %d %d 1 -16 1", owner, gpu));
	for (i = 0; i < 50 && kmod_rmmod("amdqp"); i++)
		sleep_ms(100);
	ASSERT_EQ(0, access("/sys/module/amdqp", F_OK) ? 0 : -EBUSY);
	EXPECT_EQ(0, stub_ctl(owner, gpu, 1));
	EXPECT_EQ(0, stub_stat_v("violations"));
	EXPECT_EQ(0, stub_stat_v("handles"));

	/* The glue's safety net: a suspension nobody can resume is dropped. */
	ASSERT_EQ(0, write_str("/sys/module/" STUB_MODULE
			       "/parameters/release_on_unregister", "1"));
	ASSERT_EQ(0, kmod_insmod("amdqp.ko", ""));
	ASSERT_EQ(1, kfd_bound());
	fd = qp_open();
	ASSERT_LE(0, fd);
	ASSERT_EQ(0, stub_cmd("fail_queue %d %d 1 -16 0", owner, gpu));
	r = qref(owner, gpu, 1);
	ASSERT_EQ(0, qp_batch(fd, AMDQP_IOC_SUSPEND, &r, 1, &b));
	ASSERT_EQ(0, r.result);
	ASSERT_EQ(0, stub_cmd("fail_queue %d %d 1 -16 1000000", owner, gpu));
	close(fd);
	for (i = 0; i < 50 && kmod_rmmod("amdqp"); i++)
		sleep_ms(100);
	EXPECT_EQ(0, stub_ctl(owner, gpu, 1));
	EXPECT_LT(0, stub_stat_v("released_on_unregister"));
	ASSERT_EQ(0, kmod_insmod("amdqp.ko", ""));
	EXPECT_EQ(1, kfd_bound());

	stub_cmd("fail_queue %d %d 1 -16 0", owner, gpu);
	stub_cmd("proc_exit %d", owner);
	stub_cmd("dev_del %d", gpu);
	sleeper_stop(owner);
	EXPECT_EQ(0, stub_stat_v("violations"));
}

#define NFAIL	300

/*
 * Item 8: at unload the core retries resumes that keep failing a bounded
 * number of times, more queues than one batch included, then gives up and
 * leaves them to the backend's unbind and the glue's safety net. Before,
 * 256 or more such queues made module exit spin for ever.
 */
TEST(unload_gives_up_on_resumes_that_keep_failing)
{
	struct amdqp_queue_ref *refs;
	struct amdqp_batch b;
	int gpu, fd, i;
	pid_t owner;

	if (!stub_available())
		SKIP(return, "amdqp and amdqp_kfdstub not loaded");
	refs = calloc(NFAIL, sizeof(*refs));
	ASSERT_NE(NULL, refs);
	gpu = stub_new_device(STUB_GPU_BASE + 0x200, "hws");
	ASSERT_LT(0, gpu);
	owner = sleeper_start();
	ASSERT_LT(0, owner);
	for (i = 0; i < NFAIL; i++) {
		ASSERT_EQ(0, stub_cmd("queue_add %d %d %d 2 %llx", owner, gpu,
				      i + 1, (unsigned long long)RING(i)));
		refs[i] = qref(owner, gpu, i + 1);
	}
	fd = qp_open();
	ASSERT_LE(0, fd);
	ASSERT_EQ(0, qp_batch(fd, AMDQP_IOC_SUSPEND, refs, NFAIL, &b));
	ASSERT_EQ(NFAIL, b.done);
	/* From now on every call on the device fails, changing nothing. */
	ASSERT_EQ(0, stub_cmd("fail_dev %d -16 100000000 all", gpu));
	close(fd);
	sleep_ms(200);
	EXPECT_EQ(NFAIL, stub_nr_ctl());

	for (i = 0; i < 50 && kmod_rmmod("amdqp"); i++)
		sleep_ms(100);
	ASSERT_EQ(0, access("/sys/module/amdqp", F_OK) ? 0 : -EBUSY);
	/* The glue dropped what nobody could resume when amdqp left. */
	EXPECT_EQ(0, stub_nr_ctl());
	EXPECT_EQ(0, stub_stat_v("violations"));
	EXPECT_EQ(0, stub_stat_v("handles"));

	ASSERT_EQ(0, stub_cmd("fail_dev %d -16 0 all", gpu));
	ASSERT_EQ(0, kmod_insmod("amdqp.ko", ""));
	EXPECT_EQ(1, kfd_bound());
	stub_cmd("proc_exit %d", owner);
	stub_cmd("dev_del %d", gpu);
	sleeper_stop(owner);
	free(refs);
	EXPECT_EQ(0, stub_stat_v("violations"));
}

TEST_HARNESS_MAIN
