// SPDX-License-Identifier: GPL-2.0
/*
 * Batch suspend/resume: per-entry results, double suspend/resume, queues
 * that vanish mid-batch, references by ring address, SUSPEND_BELOW and
 * RESUME_ALL, and the scheduler cost of a batch: one runlist update per
 * device under HWS whatever the batch size, one remove/add per queue
 * under MES.
 */
#include <pthread.h>

#include "common.h"
#include "kselftest_harness.h"

#define BATCH_GPU_BASE	2000
#define NQ		8

FIXTURE(batch) {
	int qfd;
	int sfd;
	int gpu;
	uint32_t qid[NQ];
	struct amdqp_queue_ref refs[NQ];
	struct owner owner;
};

FIXTURE_VARIANT(batch) {
	const char *mode;
	bool hws;
};

FIXTURE_VARIANT_ADD(batch, hws) {
	.mode = "hws",
	.hws = true,
};

FIXTURE_VARIANT_ADD(batch, mes) {
	.mode = "mes",
	.hws = false,
};

FIXTURE_SETUP(batch)
{
	unsigned int i;

	self->qfd = self->sfd = -1;
	self->gpu = 0;
	self->owner.pid = 0;
	if (!sim_available())
		SKIP(return, "amdqp and amdqp_sim not loaded");
	self->gpu = sim_new_device(BATCH_GPU_BASE, variant->mode, 1, 8);
	ASSERT_LT(0, self->gpu);
	self->qfd = qp_open();
	ASSERT_LE(0, self->qfd);
	self->sfd = sim_open();
	ASSERT_LE(0, self->sfd);
	for (i = 0; i < NQ; i++) {
		ASSERT_EQ(0, sim_create(self->sfd, self->gpu, 3, &self->qid[i]));
		self->refs[i] = qref(getpid(), self->gpu, self->qid[i]);
	}
}

FIXTURE_TEARDOWN(batch)
{
	owner_kill(&self->owner);
	sim_env_close(self->qfd, self->sfd, self->gpu);
}

static void reset_results(struct amdqp_queue_ref *refs, unsigned int n)
{
	unsigned int i;

	for (i = 0; i < n; i++) {
		refs[i].result = 0x7777;
		refs[i].state = 0x7777;
	}
}

TEST_F(batch, suspend_resume)
{
	struct amdqp_device_info di;
	struct amdqp_queue_info qi;
	struct amdqp_sim_query sq;
	struct amdqp_batch b;
	uint64_t before;
	unsigned int i;

	reset_results(self->refs, NQ);
	ASSERT_EQ(0, qp_batch(self->qfd, AMDQP_IOC_SUSPEND, self->refs, NQ,
			      &b));
	EXPECT_EQ(NQ, b.done);
	EXPECT_LT(0, b.latency_ns);
	for (i = 0; i < NQ; i++) {
		EXPECT_EQ(0, self->refs[i].result);
		EXPECT_EQ(AMDQP_QSTATE_SUSPENDED | AMDQP_QSTATE_HELD,
			  self->refs[i].state);
		ASSERT_EQ(0, qp_queue_info(self->qfd, getpid(), self->gpu,
					   self->qid[i], &qi));
		EXPECT_EQ(AMDQP_QSTATE_SUSPENDED | AMDQP_QSTATE_HELD, qi.state);
		EXPECT_EQ(1, qi.holders);
		EXPECT_EQ(1, qi.suspend_count);
		ASSERT_EQ(0, sim_query(self->sfd, self->gpu, self->qid[i], &sq));
		EXPECT_EQ(0, sq.mapped);
	}
	ASSERT_EQ(0, qp_dev_info(self->qfd, self->gpu, &di));
	EXPECT_EQ(NQ, di.num_queues);
	EXPECT_EQ(NQ, di.num_suspended);

	sleep_ms(20);
	reset_results(self->refs, NQ);
	ASSERT_EQ(0, qp_batch(self->qfd, AMDQP_IOC_RESUME, self->refs, NQ, &b));
	EXPECT_EQ(NQ, b.done);
	for (i = 0; i < NQ; i++) {
		EXPECT_EQ(0, self->refs[i].result);
		EXPECT_EQ(0, self->refs[i].state);
		ASSERT_EQ(0, qp_queue_info(self->qfd, getpid(), self->gpu,
					   self->qid[i], &qi));
		EXPECT_EQ(0, qi.state);
		EXPECT_EQ(0, qi.holders);
		EXPECT_EQ(1, qi.suspend_count);
		EXPECT_LE(20 * NSEC_PER_MSEC, qi.suspended_ns);
		ASSERT_EQ(0, sim_query(self->sfd, self->gpu, self->qid[i], &sq));
		EXPECT_EQ(1, sq.mapped);
	}
	ASSERT_EQ(0, qp_dev_info(self->qfd, self->gpu, &di));
	EXPECT_EQ(0, di.num_suspended);

	/* Time suspended stops growing once resumed. */
	ASSERT_EQ(0, qp_queue_info(self->qfd, getpid(), self->gpu, self->qid[0],
				   &qi));
	before = qi.suspended_ns;
	sleep_ms(50);
	ASSERT_EQ(0, qp_queue_info(self->qfd, getpid(), self->gpu, self->qid[0],
				   &qi));
	EXPECT_EQ(before, qi.suspended_ns);
}

TEST_F(batch, per_entry_results)
{
	struct amdqp_queue_ref refs[5];
	struct amdqp_batch b;
	pid_t dead;

	dead = fork();
	ASSERT_LE(0, dead);
	if (!dead)
		_exit(0);
	ASSERT_EQ(dead, waitpid(dead, NULL, 0));

	refs[0] = self->refs[0];
	refs[1] = qref(getpid(), self->gpu, 0xdead);	/* no such queue */
	refs[2] = qref(dead, self->gpu, self->qid[1]);	/* no such pid */
	refs[3] = qref(getpid(), 0x7ffffff0, self->qid[2]); /* no such gpu */
	refs[4] = self->refs[3];
	reset_results(refs, 5);
	ASSERT_EQ(0, qp_batch(self->qfd, AMDQP_IOC_SUSPEND, refs, 5, &b));
	EXPECT_EQ(2, b.done);
	EXPECT_EQ(0, refs[0].result);
	EXPECT_EQ(-ENOENT, refs[1].result);
	EXPECT_EQ(-ENOENT, refs[2].result);
	EXPECT_EQ(-ENOENT, refs[3].result);
	EXPECT_EQ(0, refs[4].result);
	EXPECT_EQ(0, refs[1].state);
	EXPECT_EQ(0, refs[2].state);
	EXPECT_EQ(AMDQP_QSTATE_SUSPENDED | AMDQP_QSTATE_HELD, refs[4].state);
	/* Queues not named stay untouched. */
	EXPECT_EQ(0, qp_state(self->qfd, getpid(), self->gpu, self->qid[1]));
	EXPECT_EQ(0, qp_state(self->qfd, getpid(), self->gpu, self->qid[2]));

	reset_results(refs, 5);
	ASSERT_EQ(0, qp_batch(self->qfd, AMDQP_IOC_RESUME, refs, 5, &b));
	EXPECT_EQ(2, b.done);
	EXPECT_EQ(0, refs[0].result);
	EXPECT_EQ(-ENOENT, refs[1].result);
	EXPECT_EQ(-ENOENT, refs[2].result);
	EXPECT_EQ(-ENOENT, refs[3].result);
	EXPECT_EQ(0, refs[4].result);
	EXPECT_EQ(0, refs[0].state);
}

TEST_F(batch, double_suspend_resume)
{
	struct amdqp_queue_ref refs[3];
	struct amdqp_batch b;

	ASSERT_EQ(0, qp_suspend1(self->qfd, getpid(), self->gpu, self->qid[0]));
	EXPECT_EQ(-EALREADY,
		  qp_suspend1(self->qfd, getpid(), self->gpu, self->qid[0]));
	EXPECT_EQ(AMDQP_QSTATE_SUSPENDED | AMDQP_QSTATE_HELD,
		  qp_state(self->qfd, getpid(), self->gpu, self->qid[0]));

	/* The same queue twice in one batch: the second is EALREADY. */
	refs[0] = self->refs[1];
	refs[1] = self->refs[1];
	refs[2] = self->refs[0];
	reset_results(refs, 3);
	ASSERT_EQ(0, qp_batch(self->qfd, AMDQP_IOC_SUSPEND, refs, 3, &b));
	EXPECT_EQ(1, b.done);
	EXPECT_EQ(0, refs[0].result);
	EXPECT_EQ(-EALREADY, refs[1].result);
	EXPECT_EQ(-EALREADY, refs[2].result);
	EXPECT_EQ(AMDQP_QSTATE_SUSPENDED | AMDQP_QSTATE_HELD, refs[1].state);

	reset_results(refs, 3);
	ASSERT_EQ(0, qp_batch(self->qfd, AMDQP_IOC_RESUME, refs, 3, &b));
	EXPECT_EQ(2, b.done);
	EXPECT_EQ(0, refs[0].result);
	EXPECT_EQ(-EALREADY, refs[1].result);
	EXPECT_EQ(0, refs[2].result);

	EXPECT_EQ(-EALREADY,
		  qp_resume1(self->qfd, getpid(), self->gpu, self->qid[0]));
	/* Never suspended at all. */
	EXPECT_EQ(-EALREADY,
		  qp_resume1(self->qfd, getpid(), self->gpu, self->qid[5]));
	EXPECT_EQ(0, qp_state(self->qfd, getpid(), self->gpu, self->qid[0]));
	EXPECT_EQ(0, qp_state(self->qfd, getpid(), self->gpu, self->qid[1]));
}

TEST_F(batch, by_ring_address)
{
	struct amdqp_queue_info qi;
	struct amdqp_queue_ref r;
	struct amdqp_batch b;

	ASSERT_EQ(0, qp_queue_info(self->qfd, getpid(), self->gpu, self->qid[2],
				   &qi));
	ASSERT_NE(0, qi.ring_va);
	/* gpu_id/queue_id are ignored with BY_RING. */
	memset(&r, 0, sizeof(r));
	r.pid = getpid();
	r.gpu_id = 0;
	r.queue_id = 0xdead;
	r.flags = AMDQP_REF_BY_RING;
	r.ring_va = qi.ring_va;
	ASSERT_EQ(0, qp_batch(self->qfd, AMDQP_IOC_SUSPEND, &r, 1, &b));
	EXPECT_EQ(0, r.result);
	EXPECT_EQ(1, b.done);
	EXPECT_EQ(AMDQP_QSTATE_SUSPENDED | AMDQP_QSTATE_HELD,
		  qp_state(self->qfd, getpid(), self->gpu, self->qid[2]));
	EXPECT_EQ(0, qp_state(self->qfd, getpid(), self->gpu, self->qid[1]));
	EXPECT_EQ(0, qp_state(self->qfd, getpid(), self->gpu, self->qid[3]));

	/* The same queue by id is the same hold. */
	EXPECT_EQ(-EALREADY,
		  qp_suspend1(self->qfd, getpid(), self->gpu, self->qid[2]));

	r.ring_va = qi.ring_va + 4096;	/* no queue there */
	ASSERT_EQ(0, qp_batch(self->qfd, AMDQP_IOC_RESUME, &r, 1, &b));
	EXPECT_EQ(-ENOENT, r.result);
	r.ring_va = qi.ring_va;
	ASSERT_EQ(0, qp_batch(self->qfd, AMDQP_IOC_RESUME, &r, 1, &b));
	EXPECT_EQ(0, r.result);
	EXPECT_EQ(0, qp_state(self->qfd, getpid(), self->gpu, self->qid[2]));
}

/* The cost of a batch in scheduler updates. */
TEST_F(batch, sched_updates)
{
	struct amdqp_device_info d0, d1;
	uint64_t c0, c1;
	struct amdqp_batch b;
	unsigned int n;

	for (n = 1; n <= NQ; n *= 2) {
		ASSERT_EQ(0, qp_dev_info(self->qfd, self->gpu, &d0));
		ASSERT_EQ(0, sim_counter(self->gpu, "sched_updates", &c0));
		ASSERT_EQ(0, qp_batch(self->qfd, AMDQP_IOC_SUSPEND, self->refs,
				      n, &b));
		ASSERT_EQ(n, b.done);
		ASSERT_EQ(0, qp_dev_info(self->qfd, self->gpu, &d1));
		ASSERT_EQ(0, sim_counter(self->gpu, "sched_updates", &c1));
		EXPECT_EQ(variant->hws ? 1 : n, d1.sched_updates - d0.sched_updates)
			TH_LOG("suspend of %u queues", n);
		EXPECT_EQ(c1 - c0, d1.sched_updates - d0.sched_updates);
		if (!variant->hws) {
			EXPECT_EQ(n, d1.unmap_packets - d0.unmap_packets);
		}

		ASSERT_EQ(0, qp_batch(self->qfd, AMDQP_IOC_RESUME, self->refs,
				      n, &b));
		ASSERT_EQ(n, b.done);
		ASSERT_EQ(0, qp_dev_info(self->qfd, self->gpu, &d0));
		EXPECT_EQ(variant->hws ? 1 : n, d0.sched_updates - d1.sched_updates)
			TH_LOG("resume of %u queues", n);
		if (!variant->hws) {
			EXPECT_EQ(n, d0.map_packets - d1.map_packets);
		}
	}

	/* A batch with nothing to do issues no scheduler update. */
	ASSERT_EQ(0, qp_dev_info(self->qfd, self->gpu, &d0));
	self->refs[0].queue_id = 0xdead;
	ASSERT_EQ(0, qp_batch(self->qfd, AMDQP_IOC_RESUME, self->refs, 1, &b));
	ASSERT_EQ(0, qp_dev_info(self->qfd, self->gpu, &d1));
	EXPECT_EQ(d0.sched_updates, d1.sched_updates);
}

/* One batch over two devices: each device is updated on its own. */
TEST_F(batch, two_devices)
{
	struct amdqp_queue_ref refs[2 * NQ];
	struct amdqp_device_info a0, a1, b0, b1;
	struct amdqp_batch b;
	uint32_t qid;
	unsigned int i;
	int gpu2;

	gpu2 = sim_new_device(BATCH_GPU_BASE + 500, variant->mode, 1, 8);
	ASSERT_LT(0, gpu2);
	for (i = 0; i < NQ; i++) {
		refs[2 * i] = self->refs[i];
		ASSERT_EQ(0, sim_create(self->sfd, gpu2, 3, &qid));
		refs[2 * i + 1] = qref(getpid(), gpu2, qid);
	}
	ASSERT_EQ(0, qp_dev_info(self->qfd, self->gpu, &a0));
	ASSERT_EQ(0, qp_dev_info(self->qfd, gpu2, &b0));
	ASSERT_EQ(0, qp_batch(self->qfd, AMDQP_IOC_SUSPEND, refs, 2 * NQ, &b));
	EXPECT_EQ(2 * NQ, b.done);
	ASSERT_EQ(0, qp_dev_info(self->qfd, self->gpu, &a1));
	ASSERT_EQ(0, qp_dev_info(self->qfd, gpu2, &b1));
	EXPECT_EQ(variant->hws ? 1 : NQ, a1.sched_updates - a0.sched_updates);
	EXPECT_EQ(variant->hws ? 1 : NQ, b1.sched_updates - b0.sched_updates);
	EXPECT_EQ(NQ, a1.num_suspended);
	EXPECT_EQ(NQ, b1.num_suspended);

	ASSERT_EQ(0, qp_batch(self->qfd, AMDQP_IOC_RESUME, refs, 2 * NQ, &b));
	EXPECT_EQ(2 * NQ, b.done);
	ASSERT_EQ(0, qp_dev_info(self->qfd, self->gpu, &a0));
	ASSERT_EQ(0, qp_dev_info(self->qfd, gpu2, &b0));
	EXPECT_EQ(variant->hws ? 1 : NQ, a0.sched_updates - a1.sched_updates);
	EXPECT_EQ(variant->hws ? 1 : NQ, b0.sched_updates - b1.sched_updates);
	EXPECT_EQ(0, a0.num_suspended);
	EXPECT_EQ(0, b0.num_suspended);

	close(self->sfd);
	self->sfd = -1;
	EXPECT_EQ(0, sim_del_device(gpu2));
}

/*
 * HWS: a batch costs one runlist update, so its latency is about one
 * unmap, not one per queue; MES pays one remove per queue. Bounds are
 * loose (QEMU TCG is slow).
 */
TEST_F(batch, latency_per_update)
{
	struct amdqp_batch b;

	ASSERT_EQ(0, sim_knob_set(self->gpu, "unmap_latency_us", 50000));
	ASSERT_EQ(0, qp_batch(self->qfd, AMDQP_IOC_SUSPEND, self->refs, NQ,
			      &b));
	sim_knob_set(self->gpu, "unmap_latency_us", 0);
	EXPECT_EQ(NQ, b.done);
	if (variant->hws) {
		EXPECT_LE(50 * NSEC_PER_MSEC, b.latency_ns);
		EXPECT_GT(NQ * 50 * NSEC_PER_MSEC, b.latency_ns);
	} else {
		EXPECT_LE(NQ * 50 * NSEC_PER_MSEC, b.latency_ns);
	}
	ASSERT_EQ(0, qp_batch(self->qfd, AMDQP_IOC_RESUME, self->refs, NQ, &b));
	EXPECT_EQ(NQ, b.done);
}

struct destroyer {
	int sfd;
	uint32_t gpu;
	uint32_t qid;
	unsigned int delay_ms;
	int ret;
	uint64_t took_ns;
};

static void *destroy_later(void *arg)
{
	struct destroyer *d = arg;
	uint64_t t;

	sleep_ms(d->delay_ms);
	t = now_ns();
	d->ret = sim_destroy(d->sfd, d->gpu, d->qid);
	d->took_ns = now_ns() - t;
	return NULL;
}

/*
 * A queue destroyed while a (slow) suspend of it is in flight: the batch
 * reports -ENOENT for it, the others are suspended, nothing hangs and the
 * device's books stay right.
 */
TEST_F_TIMEOUT(batch, destroyed_mid_batch, 60)
{
	struct destroyer d = { .sfd = self->sfd, .gpu = self->gpu,
			       .qid = self->qid[1], .delay_ms = 150 };
	struct amdqp_device_info di;
	struct amdqp_queue_ref refs[3];
	struct amdqp_batch b;
	pthread_t th;

	ASSERT_EQ(0, sim_knob_set(self->gpu, "unmap_latency_us", 1000000));
	refs[0] = self->refs[0];
	refs[1] = self->refs[1];
	refs[2] = self->refs[2];
	reset_results(refs, 3);
	ASSERT_EQ(0, pthread_create(&th, NULL, destroy_later, &d));
	ASSERT_EQ(0, qp_batch(self->qfd, AMDQP_IOC_SUSPEND, refs, 3, &b));
	pthread_join(th, NULL);
	ASSERT_EQ(0, sim_knob_set(self->gpu, "unmap_latency_us", 0));
	/* The batch took the unmap latency, so the destroy ran inside it. */
	EXPECT_LE(500 * NSEC_PER_MSEC, b.latency_ns);

	EXPECT_EQ(0, d.ret);
	EXPECT_EQ(0, refs[0].result);
	EXPECT_EQ(-ENOENT, refs[1].result);
	EXPECT_EQ(0, refs[1].state);
	EXPECT_EQ(0, refs[2].result);
	EXPECT_EQ(2, b.done);
	EXPECT_EQ(-ENOENT, qp_state(self->qfd, getpid(), self->gpu,
				    self->qid[1]));
	EXPECT_EQ(AMDQP_QSTATE_SUSPENDED | AMDQP_QSTATE_HELD,
		  qp_state(self->qfd, getpid(), self->gpu, self->qid[0]));
	ASSERT_EQ(0, qp_dev_info(self->qfd, self->gpu, &di));
	EXPECT_EQ(NQ - 1, di.num_queues);
	EXPECT_EQ(2, di.num_suspended);

	reset_results(refs, 3);
	ASSERT_EQ(0, qp_batch(self->qfd, AMDQP_IOC_RESUME, refs, 3, &b));
	EXPECT_EQ(0, refs[0].result);
	EXPECT_EQ(-ENOENT, refs[1].result);
	EXPECT_EQ(0, refs[2].result);
	ASSERT_EQ(0, qp_dev_info(self->qfd, self->gpu, &di));
	EXPECT_EQ(0, di.num_suspended);
}

/* A queue destroyed while held: destruction does not wait, books right. */
TEST_F(batch, destroy_while_suspended)
{
	struct amdqp_device_info di;
	uint64_t t;

	ASSERT_EQ(0, qp_batch(self->qfd, AMDQP_IOC_SUSPEND, self->refs, 2,
			      NULL));
	t = now_ns();
	EXPECT_EQ(0, sim_destroy(self->sfd, self->gpu, self->qid[0]));
	EXPECT_GT(5 * NSEC_PER_SEC, now_ns() - t);
	ASSERT_EQ(0, qp_dev_info(self->qfd, self->gpu, &di));
	EXPECT_EQ(NQ - 1, di.num_queues);
	EXPECT_EQ(1, di.num_suspended);
	EXPECT_EQ(-ENOENT, qp_resume1(self->qfd, getpid(), self->gpu,
				      self->qid[0]));
	EXPECT_EQ(0, qp_resume1(self->qfd, getpid(), self->gpu, self->qid[1]));
	ASSERT_EQ(0, qp_dev_info(self->qfd, self->gpu, &di));
	EXPECT_EQ(0, di.num_suspended);
}

/* SUSPEND_BELOW/RESUME_ALL: queues of another process, by priority. */
TEST_F(batch, suspend_below)
{
	static const uint32_t prios[] = { 0, 2, 5, 6, 9, 15 };
	uint32_t oq[ARRAY_LEN(prios)], gpus[1] = { self->gpu };
	struct amdqp_device_info d0, d1;
	struct amdqp_gpu_set gs;
	unsigned int i;

	ASSERT_EQ(0, owner_start(&self->owner));
	for (i = 0; i < ARRAY_LEN(prios); i++) {
		ASSERT_EQ(0, owner_create(&self->owner, self->gpu, prios[i],
					  &oq[i]));
	}
	ASSERT_EQ(0, qp_dev_info(self->qfd, self->gpu, &d0));
	ASSERT_EQ(0, qp_gpu_set(self->qfd, AMDQP_IOC_SUSPEND_BELOW, gpus, 1, 6,
				&gs));
	EXPECT_EQ(3, gs.affected);
	EXPECT_EQ(0, gs.skipped);
	ASSERT_EQ(0, qp_dev_info(self->qfd, self->gpu, &d1));
	EXPECT_EQ(variant->hws ? 1 : 3, d1.sched_updates - d0.sched_updates);
	EXPECT_EQ(3, d1.num_suspended);
	for (i = 0; i < ARRAY_LEN(prios); i++) {
		EXPECT_EQ(prios[i] < 6 ?
			  AMDQP_QSTATE_SUSPENDED | AMDQP_QSTATE_HELD : 0,
			  qp_state(self->qfd, self->owner.pid, self->gpu, oq[i]))
			TH_LOG("priority %u", prios[i]);
	}
	/* Our own (priority 3) queues are never suspended by it. */
	for (i = 0; i < NQ; i++) {
		EXPECT_EQ(0, qp_state(self->qfd, getpid(), self->gpu,
				      self->qid[i]));
	}

	/* Again: nothing new to do, held ones are not counted twice. */
	ASSERT_EQ(0, qp_gpu_set(self->qfd, AMDQP_IOC_SUSPEND_BELOW, gpus, 1, 6,
				&gs));
	EXPECT_EQ(0, gs.affected);
	/* Raise the bar: 6 and 9 join. */
	ASSERT_EQ(0, qp_gpu_set(self->qfd, AMDQP_IOC_SUSPEND_BELOW, gpus, 1,
				10, &gs));
	EXPECT_EQ(2, gs.affected);

	ASSERT_EQ(0, qp_dev_info(self->qfd, self->gpu, &d0));
	ASSERT_EQ(0, qp_gpu_set(self->qfd, AMDQP_IOC_RESUME_ALL, gpus, 1, 0,
				&gs));
	EXPECT_EQ(5, gs.affected);
	EXPECT_EQ(0, gs.skipped);
	ASSERT_EQ(0, qp_dev_info(self->qfd, self->gpu, &d1));
	EXPECT_EQ(variant->hws ? 1 : 5, d1.sched_updates - d0.sched_updates);
	EXPECT_EQ(0, d1.num_suspended);
	for (i = 0; i < ARRAY_LEN(prios); i++) {
		EXPECT_EQ(0, qp_state(self->qfd, self->owner.pid, self->gpu,
				      oq[i]));
	}
	ASSERT_EQ(0, qp_gpu_set(self->qfd, AMDQP_IOC_RESUME_ALL, gpus, 1, 0,
				&gs));
	EXPECT_EQ(0, gs.affected);

	/* Priority 0: nothing is below it. */
	ASSERT_EQ(0, qp_gpu_set(self->qfd, AMDQP_IOC_SUSPEND_BELOW, gpus, 1, 0,
				&gs));
	EXPECT_EQ(0, gs.affected);
}

/* RESUME_ALL drops only this fd's holds, only on the devices named. */
TEST_F(batch, resume_all_scope)
{
	uint32_t gpus[1] = { self->gpu }, other_gpu[1], qid2 = 0;
	struct amdqp_gpu_set gs;
	int fd2, gpu2;

	gpu2 = sim_new_device(BATCH_GPU_BASE + 600, variant->mode, 1, 4);
	ASSERT_LT(0, gpu2);
	other_gpu[0] = gpu2;
	ASSERT_EQ(0, sim_create(self->sfd, gpu2, 3, &qid2));
	fd2 = qp_open();
	ASSERT_LE(0, fd2);

	ASSERT_EQ(0, qp_suspend1(self->qfd, getpid(), self->gpu, self->qid[0]));
	ASSERT_EQ(0, qp_suspend1(self->qfd, getpid(), gpu2, qid2));
	ASSERT_EQ(0, qp_suspend1(fd2, getpid(), self->gpu, self->qid[1]));

	ASSERT_EQ(0, qp_gpu_set(self->qfd, AMDQP_IOC_RESUME_ALL, other_gpu, 1,
				0, &gs));
	EXPECT_EQ(1, gs.affected);
	EXPECT_EQ(0, qp_state(self->qfd, getpid(), gpu2, qid2));
	EXPECT_EQ(AMDQP_QSTATE_SUSPENDED | AMDQP_QSTATE_HELD,
		  qp_state(self->qfd, getpid(), self->gpu, self->qid[0]));

	/* num_gpus 0: every device, but still only this fd's holds. */
	ASSERT_EQ(0, qp_gpu_set(self->qfd, AMDQP_IOC_RESUME_ALL, NULL, 0, 0,
				&gs));
	EXPECT_EQ(1, gs.affected);
	EXPECT_EQ(0, qp_state(self->qfd, getpid(), self->gpu, self->qid[0]));
	EXPECT_EQ(AMDQP_QSTATE_SUSPENDED,
		  qp_state(self->qfd, getpid(), self->gpu, self->qid[1]));

	ASSERT_EQ(0, qp_gpu_set(fd2, AMDQP_IOC_RESUME_ALL, gpus, 1, 0, &gs));
	EXPECT_EQ(1, gs.affected);
	EXPECT_EQ(0, qp_state(self->qfd, getpid(), self->gpu, self->qid[1]));
	close(fd2);
	close(self->sfd);
	self->sfd = -1;
	EXPECT_EQ(0, sim_del_device(gpu2));
}

TEST_HARNESS_MAIN
