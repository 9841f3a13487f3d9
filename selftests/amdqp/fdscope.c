// SPDX-License-Identifier: GPL-2.0
/*
 * Suspensions belong to the /dev/amdqp file that asked for them: closing
 * it (or killing its holder) resumes them; a queue stays off the hardware
 * while any file holds it. Queues belong to the process that created them:
 * its exit destroys them, suspended or not, without waiting.
 */
#include "common.h"
#include "kselftest_harness.h"

#define FDSCOPE_GPU_BASE	4000

FIXTURE(fdscope) {
	int qfd;
	int sfd;
	int gpu;
	uint32_t qid[4];
	struct owner owner;
};

FIXTURE_VARIANT(fdscope) {
	const char *mode;
	bool hws;
};

FIXTURE_VARIANT_ADD(fdscope, hws) {
	.mode = "hws",
	.hws = true,
};

FIXTURE_VARIANT_ADD(fdscope, mes) {
	.mode = "mes",
	.hws = false,
};

FIXTURE_SETUP(fdscope)
{
	unsigned int i;

	self->qfd = self->sfd = -1;
	self->gpu = 0;
	self->owner.pid = 0;
	if (!sim_available())
		SKIP(return, "amdqp and amdqp_sim not loaded");
	self->gpu = sim_new_device(FDSCOPE_GPU_BASE, variant->mode, 1, 4);
	ASSERT_LT(0, self->gpu);
	self->qfd = qp_open();
	ASSERT_LE(0, self->qfd);
	self->sfd = sim_open();
	ASSERT_LE(0, self->sfd);
	for (i = 0; i < ARRAY_LEN(self->qid); i++) {
		ASSERT_EQ(0, sim_create(self->sfd, self->gpu, 4, &self->qid[i]));
	}
}

FIXTURE_TEARDOWN(fdscope)
{
	owner_kill(&self->owner);
	sim_env_close(self->qfd, self->sfd, self->gpu);
}

static int mapped(int sfd, uint32_t gpu, uint32_t qid)
{
	struct amdqp_sim_query q;
	int ret = sim_query(sfd, gpu, qid, &q);

	return ret ? ret : (int)q.mapped;
}

TEST_F(fdscope, close_resumes)
{
	struct amdqp_queue_ref refs[3];
	struct amdqp_device_info d0, d1;
	struct amdqp_batch b;
	unsigned int i;
	int fd2;

	fd2 = qp_open();
	ASSERT_LE(0, fd2);
	for (i = 0; i < 3; i++)
		refs[i] = qref(getpid(), self->gpu, self->qid[i]);
	ASSERT_EQ(0, qp_batch(fd2, AMDQP_IOC_SUSPEND, refs, 3, &b));
	ASSERT_EQ(3, b.done);
	/* Another fd sees it suspended, but not held by itself. */
	EXPECT_EQ(AMDQP_QSTATE_SUSPENDED,
		  qp_state(self->qfd, getpid(), self->gpu, self->qid[0]));
	EXPECT_EQ(AMDQP_QSTATE_SUSPENDED | AMDQP_QSTATE_HELD,
		  qp_state(fd2, getpid(), self->gpu, self->qid[0]));
	/* ...and cannot resume what it does not hold. */
	EXPECT_EQ(-EALREADY, qp_resume1(self->qfd, getpid(), self->gpu,
					self->qid[0]));
	EXPECT_EQ(0, mapped(self->sfd, self->gpu, self->qid[0]));

	ASSERT_EQ(0, qp_dev_info(self->qfd, self->gpu, &d0));
	close(fd2);
	for (i = 0; i < 3; i++) {
		EXPECT_EQ(0, qp_state(self->qfd, getpid(), self->gpu,
				      self->qid[i]));
		EXPECT_EQ(1, mapped(self->sfd, self->gpu, self->qid[i]));
	}
	ASSERT_EQ(0, qp_dev_info(self->qfd, self->gpu, &d1));
	EXPECT_EQ(0, d1.num_suspended);
	/* The release is one batch too. */
	EXPECT_EQ(variant->hws ? 1 : 3, d1.sched_updates - d0.sched_updates);
}

TEST_F(fdscope, several_holders)
{
	struct amdqp_device_info d0, d1;
	struct amdqp_queue_info qi;
	int fd2, fd3;

	fd2 = qp_open();
	fd3 = qp_open();
	ASSERT_LE(0, fd2);
	ASSERT_LE(0, fd3);
	ASSERT_EQ(0, qp_suspend1(self->qfd, getpid(), self->gpu, self->qid[0]));
	ASSERT_EQ(0, qp_dev_info(self->qfd, self->gpu, &d0));
	ASSERT_EQ(0, qp_suspend1(fd2, getpid(), self->gpu, self->qid[0]));
	ASSERT_EQ(0, qp_suspend1(fd3, getpid(), self->gpu, self->qid[0]));
	ASSERT_EQ(0, qp_dev_info(self->qfd, self->gpu, &d1));
	/* Already off the hardware: no further scheduler work. */
	EXPECT_EQ(d0.sched_updates, d1.sched_updates);
	ASSERT_EQ(0, qp_queue_info(self->qfd, getpid(), self->gpu, self->qid[0],
				   &qi));
	EXPECT_EQ(3, qi.holders);
	EXPECT_EQ(1, qi.suspend_count);
	EXPECT_EQ(1, d1.num_suspended);

	ASSERT_EQ(0, qp_resume1(self->qfd, getpid(), self->gpu, self->qid[0]));
	EXPECT_EQ(AMDQP_QSTATE_SUSPENDED,
		  qp_state(self->qfd, getpid(), self->gpu, self->qid[0]));
	EXPECT_EQ(0, mapped(self->sfd, self->gpu, self->qid[0]));
	close(fd2);
	ASSERT_EQ(0, qp_queue_info(self->qfd, getpid(), self->gpu, self->qid[0],
				   &qi));
	EXPECT_EQ(1, qi.holders);
	EXPECT_EQ(AMDQP_QSTATE_SUSPENDED, qi.state);
	EXPECT_EQ(0, mapped(self->sfd, self->gpu, self->qid[0]));
	/* The last holder lets go. */
	ASSERT_EQ(0, qp_resume1(fd3, getpid(), self->gpu, self->qid[0]));
	EXPECT_EQ(0, qp_state(self->qfd, getpid(), self->gpu, self->qid[0]));
	EXPECT_EQ(1, mapped(self->sfd, self->gpu, self->qid[0]));
	ASSERT_EQ(0, qp_queue_info(self->qfd, getpid(), self->gpu, self->qid[0],
				   &qi));
	EXPECT_EQ(0, qi.holders);
	EXPECT_EQ(1, qi.suspend_count);
	close(fd3);
}

/* A hold belongs to the open file: dup()s and fork()ed copies share it. */
TEST_F(fdscope, shared_file)
{
	int fd2, pipefd[2], status;
	pid_t child;
	char c;

	ASSERT_EQ(0, qp_suspend1(self->qfd, getpid(), self->gpu, self->qid[1]));
	fd2 = dup(self->qfd);
	ASSERT_LE(0, fd2);
	EXPECT_EQ(-EALREADY, qp_suspend1(fd2, getpid(), self->gpu,
					 self->qid[1]));
	ASSERT_EQ(0, pipe(pipefd));
	child = fork();
	ASSERT_LE(0, child);
	if (!child) {
		/* Keeps an inherited copy open until the pipe closes. */
		close(pipefd[1]);
		read(pipefd[0], &c, 1);
		_exit(0);
	}
	close(pipefd[0]);
	close(self->qfd);
	self->qfd = -1;
	EXPECT_EQ(AMDQP_QSTATE_SUSPENDED | AMDQP_QSTATE_HELD,
		  qp_state(fd2, getpid(), self->gpu, self->qid[1]));
	close(fd2);
	/* The child's copy still holds it. */
	fd2 = qp_open();
	ASSERT_LE(0, fd2);
	EXPECT_EQ(AMDQP_QSTATE_SUSPENDED,
		  qp_state(fd2, getpid(), self->gpu, self->qid[1]));
	close(pipefd[1]);
	ASSERT_EQ(child, waitpid(child, &status, 0));
	EXPECT_EQ(0, qp_wait_state(fd2, getpid(), self->gpu, self->qid[1],
				   AMDQP_QSTATE_SUSPENDED, 0, 2000));
	EXPECT_EQ(1, mapped(self->sfd, self->gpu, self->qid[1]));
	self->qfd = fd2;
}

/* The parent suspends queues a forked child owns. */
TEST_F(fdscope, child_owns_parent_suspends)
{
	struct amdqp_queue_info qi;
	struct amdqp_sim_query q;
	uint32_t cq[2] = { 0, 0 };
	uint64_t r;

	ASSERT_EQ(0, owner_start(&self->owner));
	ASSERT_EQ(0, owner_create(&self->owner, self->gpu, 2, &cq[0]));
	ASSERT_EQ(0, owner_create(&self->owner, self->gpu, 2, &cq[1]));
	ASSERT_EQ(0, qp_queue_info(self->qfd, self->owner.pid, self->gpu, cq[0],
				   &qi));
	EXPECT_EQ(self->owner.pid, (pid_t)qi.pid);
	/* Our pid does not name the child's queue. */
	EXPECT_EQ(-ENOENT, qp_suspend1(self->qfd, getpid(), self->gpu, cq[0] +
				       100));

	ASSERT_EQ(0, owner_submit(&self->owner, self->gpu, cq[0],
				  20 * NSEC_PER_MSEC, 100));
	ASSERT_EQ(0, sim_wait_rptr(self->sfd, self->gpu, cq[0], 1, 10000));
	ASSERT_EQ(0, qp_suspend1(self->qfd, self->owner.pid, self->gpu, cq[0]));
	ASSERT_EQ(0, sim_query(self->sfd, self->gpu, cq[0], &q));
	EXPECT_EQ(0, q.mapped);
	r = q.rptr;
	sleep_ms(200);
	ASSERT_EQ(0, sim_query(self->sfd, self->gpu, cq[0], &q));
	EXPECT_EQ(r, q.rptr);
	EXPECT_EQ(0, qp_state(self->qfd, self->owner.pid, self->gpu, cq[1]));
	ASSERT_EQ(0, qp_resume1(self->qfd, self->owner.pid, self->gpu, cq[0]));
	EXPECT_EQ(0, sim_wait_rptr(self->sfd, self->gpu, cq[0], r + 1, 10000));
}

/*
 * The owner exits while its queues are suspended: exit does not wait for
 * the suspension, the queues go away with QUEUE_DESTROYED and
 * PROCESS_EXIT events, and the holds are gone.
 */
TEST_F(fdscope, owner_exits_while_suspended)
{
	struct amdqp_device_info di;
	struct amdqp_queue_ref refs[2];
	struct amdqp_event ev;
	struct amdqp_batch b;
	uint32_t cq[2] = { 0, 0 }, seen = 0;
	uint64_t t0;
	pid_t pid;
	int status;

	ASSERT_EQ(0, qp_set_mask(self->qfd, AMDQP_EVENT_MASK_ALL));
	ASSERT_EQ(0, owner_start(&self->owner));
	pid = self->owner.pid;
	ASSERT_EQ(0, owner_create(&self->owner, self->gpu, 2, &cq[0]));
	ASSERT_EQ(0, owner_create(&self->owner, self->gpu, 2, &cq[1]));
	ASSERT_EQ(0, owner_submit(&self->owner, self->gpu, cq[0],
				  50 * NSEC_PER_MSEC, 100));
	refs[0] = qref(pid, self->gpu, cq[0]);
	refs[1] = qref(pid, self->gpu, cq[1]);
	ASSERT_EQ(0, qp_batch(self->qfd, AMDQP_IOC_SUSPEND, refs, 2, &b));
	ASSERT_EQ(2, b.done);

	status = owner_stop(&self->owner);
	EXPECT_TRUE(WIFEXITED(status));

	/* Both queues' QUEUE_DESTROYED and the PROCESS_EXIT, any order. */
	t0 = now_ns();
	while (seen != 7 && now_ns() - t0 < 5 * NSEC_PER_SEC) {
		struct pollfd p = { .fd = self->qfd, .events = POLLIN };

		if (poll(&p, 1, 100) <= 0)
			continue;
		ASSERT_EQ(sizeof(ev), read(self->qfd, &ev, sizeof(ev)));
		if (ev.gpu_id != (uint32_t)self->gpu)
			continue;
		if (ev.type == AMDQP_EVENT_QUEUE_DESTROYED &&
		    ev.queue_id == cq[0] && (pid_t)ev.pid == pid)
			seen |= 1;
		if (ev.type == AMDQP_EVENT_QUEUE_DESTROYED &&
		    ev.queue_id == cq[1] && (pid_t)ev.pid == pid)
			seen |= 2;
		if (ev.type == AMDQP_EVENT_PROCESS_EXIT && (pid_t)ev.pid == pid)
			seen |= 4;
	}
	EXPECT_EQ(7, seen) TH_LOG("events seen: %s%s%s",
				  seen & 1 ? "destroyed(q0) " : "",
				  seen & 2 ? "destroyed(q1) " : "",
				  seen & 4 ? "process_exit" : "");

	EXPECT_EQ(-ENOENT, qp_state(self->qfd, pid, self->gpu, cq[0]));
	ASSERT_EQ(0, qp_dev_info(self->qfd, self->gpu, &di));
	EXPECT_EQ(ARRAY_LEN(self->qid), di.num_queues);
	EXPECT_EQ(0, di.num_suspended);
	ASSERT_EQ(0, qp_batch(self->qfd, AMDQP_IOC_RESUME, refs, 2, &b));
	EXPECT_EQ(0, b.done);
	EXPECT_EQ(-ENOENT, refs[0].result);
	EXPECT_EQ(-ENOENT, refs[1].result);
}

/* Same, but the owner is SIGKILLed. */
TEST_F(fdscope, owner_killed_while_suspended)
{
	struct amdqp_device_info di;
	struct amdqp_event ev;
	uint32_t cq = 0;
	pid_t pid;

	ASSERT_EQ(0, qp_set_mask(self->qfd,
				 1ULL << AMDQP_EVENT_PROCESS_EXIT));
	ASSERT_EQ(0, owner_start(&self->owner));
	pid = self->owner.pid;
	ASSERT_EQ(0, owner_create(&self->owner, self->gpu, 2, &cq));
	ASSERT_EQ(0, owner_submit(&self->owner, self->gpu, cq,
				  NSEC_PER_SEC, 10));
	ASSERT_EQ(0, qp_suspend1(self->qfd, pid, self->gpu, cq));
	owner_kill(&self->owner);
	ASSERT_EQ(0, qp_wait_event(self->qfd, AMDQP_EVENT_PROCESS_EXIT,
				   self->gpu, 0, 5000, &ev));
	EXPECT_EQ(pid, (pid_t)ev.pid);
	EXPECT_EQ(-ENOENT, qp_state(self->qfd, pid, self->gpu, cq));
	ASSERT_EQ(0, qp_dev_info(self->qfd, self->gpu, &di));
	EXPECT_EQ(0, di.num_suspended);
	EXPECT_EQ(-ENOENT, qp_resume1(self->qfd, pid, self->gpu, cq));
}

/* The holder is SIGKILLed while holding: its queues come back. */
TEST_F(fdscope, holder_killed)
{
	int ready[2], status;
	struct amdqp_sim_query q;
	uint64_t r, seq;
	pid_t holder;
	char c = 0;

	ASSERT_EQ(0, sim_submit(self->sfd, self->gpu, self->qid[2],
				20 * NSEC_PER_MSEC, 200, 1, &seq));
	ASSERT_EQ(0, pipe(ready));
	holder = fork();
	ASSERT_LE(0, holder);
	if (!holder) {
		int fd = qp_open();
		struct amdqp_queue_ref refs[2] = {
			qref(getppid(), self->gpu, self->qid[2]),
			qref(getppid(), self->gpu, self->qid[3]),
		};
		struct amdqp_batch b;

		if (fd < 0 || qp_batch(fd, AMDQP_IOC_SUSPEND, refs, 2, &b) ||
		    b.done != 2)
			c = 1;
		write(ready[1], &c, 1);
		for (;;)
			pause();
	}
	close(ready[1]);
	ASSERT_EQ(1, read(ready[0], &c, 1));
	ASSERT_EQ(0, c);
	EXPECT_EQ(AMDQP_QSTATE_SUSPENDED,
		  qp_state(self->qfd, getpid(), self->gpu, self->qid[2]));
	ASSERT_EQ(0, sim_query(self->sfd, self->gpu, self->qid[2], &q));
	EXPECT_EQ(0, q.mapped);
	r = q.rptr;

	kill(holder, SIGKILL);
	ASSERT_EQ(holder, waitpid(holder, &status, 0));
	EXPECT_EQ(0, qp_wait_state(self->qfd, getpid(), self->gpu, self->qid[2],
				   AMDQP_QSTATE_SUSPENDED, 0, 2000));
	EXPECT_EQ(0, qp_state(self->qfd, getpid(), self->gpu, self->qid[3]));
	EXPECT_EQ(1, mapped(self->sfd, self->gpu, self->qid[2]));
	EXPECT_EQ(1, mapped(self->sfd, self->gpu, self->qid[3]));
	EXPECT_EQ(0, sim_wait_rptr(self->sfd, self->gpu, self->qid[2], r + 1,
				   10000));
	close(ready[0]);
}

/*
 * The holder is killed while its suspend is still in the firmware (slow
 * unmap): the call completes, then the exit lets go, and the queue ends
 * up running with nobody holding it.
 */
TEST_F(fdscope, holder_killed_mid_suspend)
{
	struct amdqp_device_info di;
	int status;
	pid_t holder;

	ASSERT_EQ(0, sim_knob_set(self->gpu, "unmap_latency_us", 500000));
	holder = fork();
	ASSERT_LE(0, holder);
	if (!holder) {
		int fd = qp_open();

		qp_suspend1(fd, getppid(), self->gpu, self->qid[0]);
		_exit(0);
	}
	sleep_ms(150);
	kill(holder, SIGKILL);
	ASSERT_EQ(holder, waitpid(holder, &status, 0));
	sim_knob_set(self->gpu, "unmap_latency_us", 0);
	EXPECT_EQ(0, qp_wait_state(self->qfd, getpid(), self->gpu, self->qid[0],
				   AMDQP_QSTATE_SUSPENDED, 0, 3000));
	EXPECT_EQ(1, mapped(self->sfd, self->gpu, self->qid[0]));
	ASSERT_EQ(0, qp_dev_info(self->qfd, self->gpu, &di));
	EXPECT_EQ(0, di.num_suspended);
	/* And it can be suspended again normally. */
	EXPECT_EQ(0, qp_suspend1(self->qfd, getpid(), self->gpu, self->qid[0]));
	EXPECT_EQ(0, qp_resume1(self->qfd, getpid(), self->gpu, self->qid[0]));
}

/*
 * Closing the /dev/amdqp_sim fd destroys the queues even while another
 * process holds them suspended; the holder's later resume says ENOENT.
 */
TEST_F(fdscope, sim_close_while_held)
{
	struct amdqp_device_info di;
	uint64_t t;

	ASSERT_EQ(0, qp_suspend1(self->qfd, getpid(), self->gpu, self->qid[0]));
	ASSERT_EQ(0, qp_suspend1(self->qfd, getpid(), self->gpu, self->qid[1]));
	t = now_ns();
	close(self->sfd);
	self->sfd = -1;
	EXPECT_GT(5 * NSEC_PER_SEC, now_ns() - t);
	ASSERT_EQ(0, qp_dev_info(self->qfd, self->gpu, &di));
	EXPECT_EQ(0, di.num_queues);
	EXPECT_EQ(0, di.num_suspended);
	EXPECT_EQ(-ENOENT, qp_resume1(self->qfd, getpid(), self->gpu,
				      self->qid[0]));
}

TEST_HARNESS_MAIN
