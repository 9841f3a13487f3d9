// SPDX-License-Identifier: GPL-2.0
/*
 * Several suspenders at once: processes and threads suspending and
 * resuming overlapping sets of queues on two devices (HWS and MES), one
 * using SUSPEND_BELOW/RESUME_ALL, one holder killed midway, while another
 * process creates and destroys queues. Every result must be one the ABI
 * allows, every fd's view of its holds must match its own bookkeeping,
 * and at the end nothing is left suspended and the counts add up.
 */
#include <pthread.h>

#include "common.h"
#include "kselftest_harness.h"

#define CONC_GPU_BASE	8000
#define QPD		8		/* queues per device */
#define NQ		(2 * QPD)
#define WORKERS		4
#define RUN_MS		4000

FIXTURE(conc) {
	int qfd;
	int sfd;
	int gpu[2];
	uint32_t qid[NQ];
	struct amdqp_queue_ref refs[NQ];
	uint64_t max_suspend_ms;
	uint64_t starve_window_ms;
	bool param_saved;
};

FIXTURE_SETUP(conc)
{
	unsigned int i;
	uint64_t seq;

	self->qfd = self->sfd = -1;
	self->gpu[0] = self->gpu[1] = 0;
	self->param_saved = false;
	if (!sim_available())
		SKIP(return, "amdqp and amdqp_sim not loaded");
	/*
	 * Holds overlap for the whole run: keep the watchdog out of it, both
	 * its limit and the starvation budget. With the defaults (5 s, 10 %)
	 * a queue held from the first worker's start is let go after 4.5 s,
	 * within the last thread's run when the forks take long (QEMU TCG),
	 * and the cooldown that follows answers its SUSPEND with EAGAIN.
	 */
	ASSERT_EQ(0, qp_param_get("max_suspend_ms", &self->max_suspend_ms));
	ASSERT_EQ(0, qp_param_get("starve_window_ms",
				  &self->starve_window_ms));
	self->param_saved = true;
	ASSERT_EQ(0, qp_param_set("max_suspend_ms", 600000));
	ASSERT_EQ(0, qp_param_set("starve_window_ms", 0));
	self->gpu[0] = sim_new_device(CONC_GPU_BASE, "hws", 2, 8);
	ASSERT_LT(0, self->gpu[0]);
	self->gpu[1] = sim_new_device(CONC_GPU_BASE + 500, "mes", 1, 8);
	ASSERT_LT(0, self->gpu[1]);
	self->qfd = qp_open();
	ASSERT_LE(0, self->qfd);
	self->sfd = sim_open();
	ASSERT_LE(0, self->sfd);
	for (i = 0; i < NQ; i++) {
		uint32_t gpu = self->gpu[i / QPD];

		ASSERT_EQ(0, sim_create(self->sfd, gpu, i % 8, &self->qid[i]));
		self->refs[i] = qref(getpid(), gpu, self->qid[i]);
		ASSERT_EQ(0, sim_submit(self->sfd, gpu, self->qid[i],
					5 * NSEC_PER_MSEC, 4000, 1, &seq));
	}
}

FIXTURE_TEARDOWN(conc)
{
	if (self->param_saved) {
		qp_param_set("max_suspend_ms", self->max_suspend_ms);
		qp_param_set("starve_window_ms", self->starve_window_ms);
	}
	if (self->sfd >= 0)
		close(self->sfd);
	if (self->qfd >= 0)
		close(self->qfd);
	if (self->gpu[0] > 0)
		sim_del_device(self->gpu[0]);
	if (self->gpu[1] > 0)
		sim_del_device(self->gpu[1]);
}

struct worker_report {
	uint32_t ops;
	uint32_t bad_results;	/* results the ABI does not allow here */
	int32_t first_bad;
	uint32_t bookkeeping;	/* EALREADY/0 contradicting our holds */
	uint32_t mismatches;	/* LIST's HELD bit vs our holds */
	uint32_t below_calls;
};

static bool allowed(int res)
{
	return res == 0 || res == -EALREADY;
}

/*
 * One suspender: random batches over random subsets, tracking which
 * queues its fd holds. @below: also use SUSPEND_BELOW/RESUME_ALL.
 */
static void worker(struct amdqp_queue_ref *all, uint32_t *gpus,
		   unsigned int seed, bool below, bool resume_all_at_end,
		   int up)
{
	struct amdqp_queue_info infos[64];
	struct worker_report r = { 0 };
	struct amdqp_queue_ref refs[NQ];
	unsigned int idx[NQ], i, n = 0;
	bool held[NQ] = { false };
	uint64_t end = now_ns() + RUN_MS * NSEC_PER_MSEC;
	struct amdqp_gpu_set gs;
	int fd = qp_open();

	if (fd < 0)
		_exit(2);
	srandom(seed);
	while (now_ns() < end) {
		bool suspend = random() % 2;

		r.ops++;
		if (below && random() % 8 == 0) {
			r.below_calls++;
			if (qp_gpu_set(fd, AMDQP_IOC_SUSPEND_BELOW, gpus, 2, 4,
				       &gs))
				r.bad_results++;
			usleep(random() % 2000);
			if (qp_gpu_set(fd, AMDQP_IOC_RESUME_ALL, gpus, 2, 0,
				       &gs))
				r.bad_results++;
			memset(held, 0, sizeof(held));
			continue;
		}
		n = 1 + random() % 6;
		for (i = 0; i < n; i++) {
			idx[i] = random() % NQ;
			refs[i] = all[idx[i]];
		}
		if (qp_batch(fd, suspend ? AMDQP_IOC_SUSPEND : AMDQP_IOC_RESUME,
			     refs, n, NULL)) {
			r.bad_results++;
			continue;
		}
		for (i = 0; i < n; i++) {
			int res = refs[i].result;

			if (!allowed(res)) {
				if (!r.first_bad)
					r.first_bad = res;
				r.bad_results++;
				continue;
			}
			/* 0 changes our hold; EALREADY says it was already so. */
			if (res == 0 && held[idx[i]] == suspend)
				r.bookkeeping++;
			if (res == -EALREADY && held[idx[i]] != suspend) {
				/* a repeat within this batch is fine */
				unsigned int j;
				bool dup = false;

				for (j = 0; j < i; j++)
					dup |= idx[j] == idx[i];
				if (!dup)
					r.bookkeeping++;
			}
			if (res == 0)
				held[idx[i]] = suspend;
		}
	}
	/* What does the kernel say this fd holds? */
	for (i = 0; i < 2; i++) {
		unsigned int k;

		if (qp_list(fd, gpus[i], getppid(), infos, ARRAY_LEN(infos),
			    &n))
			_exit(2);
		for (k = 0; k < n; k++) {
			unsigned int q;

			for (q = 0; q < NQ; q++)
				if (all[q].gpu_id == infos[k].gpu_id &&
				    all[q].queue_id == infos[k].queue_id)
					break;
			if (q == NQ)
				continue;
			if (!!(infos[k].state & AMDQP_QSTATE_HELD) != held[q])
				r.mismatches++;
			if ((infos[k].state & AMDQP_QSTATE_HELD) &&
			    !(infos[k].state & AMDQP_QSTATE_SUSPENDED))
				r.mismatches++;
		}
	}
	if (resume_all_at_end)
		qp_gpu_set(fd, AMDQP_IOC_RESUME_ALL, NULL, 0, 0, NULL);
	write_full(up, &r, sizeof(r));
	/* The rest is released by exit (close). */
	_exit(0);
}

struct thread_arg {
	int fd;
	struct amdqp_queue_ref *all;
	unsigned int seed;
	uint32_t ops;
	uint32_t bad;
	int32_t first_bad;
};

/* Threads sharing one fd: results must still be 0 or EALREADY. */
static void *thread_fn(void *p)
{
	struct thread_arg *a = p;
	uint64_t end = now_ns() + RUN_MS * NSEC_PER_MSEC;
	struct amdqp_queue_ref refs[4];
	unsigned int i, n;

	while (now_ns() < end) {
		n = 1 + rand_r(&a->seed) % 4;
		for (i = 0; i < n; i++)
			refs[i] = a->all[rand_r(&a->seed) % NQ];
		a->ops++;
		if (qp_batch(a->fd, rand_r(&a->seed) % 2 ? AMDQP_IOC_SUSPEND :
			     AMDQP_IOC_RESUME, refs, n, NULL)) {
			a->bad++;
			continue;
		}
		for (i = 0; i < n; i++) {
			if (!allowed(refs[i].result)) {
				a->bad++;
				if (!a->first_bad)
					a->first_bad = refs[i].result;
			}
		}
	}
	return NULL;
}

/* Creates and destroys queues on @gpu until killed. */
static void churn(uint32_t gpu)
{
	int sfd = sim_open();
	uint32_t q;
	uint64_t seq;

	if (sfd < 0)
		_exit(2);
	for (;;) {
		if (sim_create(sfd, gpu, random() % 4, &q))
			continue;
		sim_submit(sfd, gpu, q, NSEC_PER_MSEC, 10, 1, &seq);
		usleep(random() % 3000);
		sim_destroy(sfd, gpu, q);
	}
}

TEST_F_TIMEOUT(conc, many_suspenders, 180)
{
	struct amdqp_device_info d0[2], d1[2];
	struct worker_report rep;
	struct thread_arg ta[2];
	pthread_t th[2];
	pid_t pids[WORKERS + 2], churner;
	uint32_t gpus[2] = { self->gpu[0], self->gpu[1] };
	uint64_t sum_suspends = 0;
	int up[2], status;
	unsigned int i, reports = 0;

	ASSERT_EQ(0, qp_dev_info(self->qfd, gpus[0], &d0[0]));
	ASSERT_EQ(0, qp_dev_info(self->qfd, gpus[1], &d0[1]));
	ASSERT_EQ(0, pipe(up));

	churner = fork();
	ASSERT_LE(0, churner);
	if (!churner) {
		/* Only workers write reports: EOF on the pipe = all done. */
		close(up[0]);
		close(up[1]);
		churn(gpus[0]);
	}
	for (i = 0; i < WORKERS + 1; i++) {
		pids[i] = fork();
		ASSERT_LE(0, pids[i]);
		if (!pids[i]) {
			close(up[0]);
			if (i == WORKERS) {
				/* The victim: holds things, then is killed. */
				int fd = qp_open();

				qp_batch(fd, AMDQP_IOC_SUSPEND, self->refs, NQ,
					 NULL);
				for (;;)
					pause();
			}
			worker(self->refs, gpus, 100 + i, i == 0, i % 2, up[1]);
		}
	}
	close(up[1]);
	for (i = 0; i < 2; i++) {
		ta[i] = (struct thread_arg){ .fd = self->qfd,
					     .all = self->refs,
					     .seed = 7 + i };
		ASSERT_EQ(0, pthread_create(&th[i], NULL, thread_fn, &ta[i]));
	}
	sleep_ms(RUN_MS / 2);
	kill(pids[WORKERS], SIGKILL);

	while (!read_full(up[0], &rep, sizeof(rep))) {
		reports++;
		TH_LOG("worker: %u ops, %u SUSPEND_BELOW, %u bad (first %d), %u bookkeeping, %u mismatches",
		       rep.ops, rep.below_calls, rep.bad_results,
		       rep.first_bad, rep.bookkeeping, rep.mismatches);
		EXPECT_LT(10, rep.ops);
		EXPECT_EQ(0, rep.bad_results);
		EXPECT_EQ(0, rep.bookkeeping);
		EXPECT_EQ(0, rep.mismatches);
	}
	EXPECT_EQ(WORKERS, reports);
	for (i = 0; i <= WORKERS; i++) {
		ASSERT_EQ(pids[i], waitpid(pids[i], &status, 0));
		if (i < WORKERS) {
			EXPECT_TRUE(WIFEXITED(status) && !WEXITSTATUS(status));
		}
	}
	for (i = 0; i < 2; i++) {
		pthread_join(th[i], NULL);
		EXPECT_EQ(0, ta[i].bad) TH_LOG("thread %u first bad %d", i,
					       ta[i].first_bad);
		EXPECT_LT(10, ta[i].ops);
	}
	kill(churner, SIGKILL);
	waitpid(churner, NULL, 0);

	/* Drop the threads' holds: now nobody holds anything. */
	ASSERT_EQ(0, qp_gpu_set(self->qfd, AMDQP_IOC_RESUME_ALL, NULL, 0, 0,
				NULL));
	for (i = 0; i < NQ; i++) {
		struct amdqp_queue_info qi;
		struct amdqp_sim_query q;

		ASSERT_EQ(0, qp_queue_info(self->qfd, getpid(),
					   self->refs[i].gpu_id,
					   self->refs[i].queue_id, &qi));
		EXPECT_EQ(0, qi.state & ~AMDQP_QSTATE_COOLDOWN)
			TH_LOG("queue %u state %x", i, qi.state);
		EXPECT_EQ(0, qi.holders);
		ASSERT_EQ(0, sim_query(self->sfd, self->refs[i].gpu_id,
				       self->refs[i].queue_id, &q));
		EXPECT_EQ(1, q.mapped);
		EXPECT_EQ(0, sim_wait_rptr(self->sfd, self->refs[i].gpu_id,
					   self->refs[i].queue_id, q.rptr + 1,
					   10000));
		if (i >= QPD)
			sum_suspends += qi.suspend_count;
	}
	ASSERT_EQ(0, qp_dev_info(self->qfd, gpus[0], &d1[0]));
	ASSERT_EQ(0, qp_dev_info(self->qfd, gpus[1], &d1[1]));
	EXPECT_EQ(0, d1[0].num_suspended);
	EXPECT_EQ(0, d1[1].num_suspended);
	EXPECT_EQ(QPD, d1[1].num_queues);
	EXPECT_EQ(0, d1[0].preempt_failures - d0[0].preempt_failures);
	/* MES: every suspension one remove, every resume one add. */
	EXPECT_LT(0, sum_suspends);
	EXPECT_EQ(sum_suspends, d1[1].unmap_packets - d0[1].unmap_packets);
	EXPECT_EQ(sum_suspends, d1[1].map_packets - d0[1].map_packets);
	/* HWS: updates happened, and far fewer than queue operations. */
	EXPECT_LT(0, d1[0].sched_updates - d0[0].sched_updates);
	close(up[0]);
}

TEST_HARNESS_MAIN
