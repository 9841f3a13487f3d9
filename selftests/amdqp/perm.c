// SPDX-License-Identifier: GPL-2.0
/*
 * Permissions and namespaces: an unprivileged user cannot suspend or
 * reprioritise root's queues (-EPERM), may lower but not raise the
 * priority of its own; pids in requests are the caller's pid namespace's
 * and queues of processes outside it are invisible.
 */
#include <sched.h>
#include <sys/prctl.h>

#include "common.h"
#include "kselftest_harness.h"

#define PERM_GPU_BASE	5000
#define NOBODY		65534

FIXTURE(perm) {
	int qfd;
	int sfd;
	int gpu;
	uint32_t qid;
};

FIXTURE_SETUP(perm)
{
	self->qfd = self->sfd = -1;
	self->gpu = 0;
	if (!sim_available())
		SKIP(return, "amdqp and amdqp_sim not loaded");
	if (geteuid())
		SKIP(return, "needs root");
	self->gpu = sim_new_device(PERM_GPU_BASE, "hws", 1, 4);
	ASSERT_LT(0, self->gpu);
	self->qfd = qp_open();
	ASSERT_LE(0, self->qfd);
	self->sfd = sim_open();
	ASSERT_LE(0, self->sfd);
	ASSERT_EQ(0, sim_create(self->sfd, self->gpu, 5, &self->qid));
}

FIXTURE_TEARDOWN(perm)
{
	sim_env_close(self->qfd, self->sfd, self->gpu);
}

/* What the unprivileged child saw; filled in by nobody_main(). */
struct nobody_report {
	int open_qp;
	int suspend_root;
	uint32_t suspend_root_state;
	int below_ret;
	uint32_t below_affected;
	uint32_t below_skipped;
	int prio_root_ret;
	int prio_root_res;
	int prio_root_raise_ret;
	int open_sim;
	int create_own;
	uint32_t own_qid;
	int lower_own;
	int raise_own;
	int suspend_own;
	int resume_own;
	int resume_all_ret;
	int suspend_own_nondumpable;
};

static void nobody_main(pid_t root_pid, uint32_t gpu, uint32_t root_qid,
			int up, int down)
{
	struct nobody_report r;
	uint32_t gpus[1] = { gpu };
	struct amdqp_gpu_set gs;
	int fd, sfd, res;
	char c;

	memset(&r, 0, sizeof(r));
	if (setgroups(0, NULL) || setgid(NOBODY) || setuid(NOBODY))
		_exit(3);
	/* Changing uid made us non-dumpable; a login session would not be. */
	prctl(PR_SET_DUMPABLE, 1);
	fd = qp_open();
	r.open_qp = fd < 0 ? fd : 0;
	if (fd >= 0) {
		r.suspend_root = qp_one(fd, AMDQP_IOC_SUSPEND, root_pid, gpu,
					root_qid, &r.suspend_root_state);
		r.below_ret = qp_gpu_set(fd, AMDQP_IOC_SUSPEND_BELOW, gpus, 1,
					 AMDQP_PRIORITY_MAX, &gs);
		r.below_affected = gs.affected;
		r.below_skipped = gs.skipped;
		r.prio_root_ret = qp_set_priority(fd, root_pid, gpu, root_qid,
						  2, &r.prio_root_res);
		r.prio_root_raise_ret = qp_set_priority(fd, root_pid, gpu,
							root_qid, 9, &res);
	}
	sfd = sim_open();
	r.open_sim = sfd < 0 ? sfd : 0;
	if (sfd >= 0 && fd >= 0) {
		r.create_own = sim_create(sfd, gpu, 5, &r.own_qid);
		r.lower_own = qp_set_priority(fd, getpid(), gpu, r.own_qid, 3,
					      &res);
		r.raise_own = qp_set_priority(fd, getpid(), gpu, r.own_qid, 8,
					      &res);
		r.suspend_own = qp_suspend1(fd, getpid(), gpu, r.own_qid);
		r.resume_own = qp_resume1(fd, getpid(), gpu, r.own_qid);
		r.resume_all_ret = qp_gpu_set(fd, AMDQP_IOC_RESUME_ALL, gpus, 1,
					      0, &gs);
		/* Like ptrace, a process may always act on itself. */
		prctl(PR_SET_DUMPABLE, 0);
		r.suspend_own_nondumpable = qp_suspend1(fd, getpid(), gpu,
							r.own_qid);
		qp_resume1(fd, getpid(), gpu, r.own_qid);
		prctl(PR_SET_DUMPABLE, 1);
	}
	if (write_full(up, &r, sizeof(r)))
		_exit(2);
	/* Keep the queue until the parent has looked at it. */
	read_full(down, &c, 1);
	_exit(0);
}

TEST_F(perm, unprivileged_user)
{
	struct nobody_report r;
	struct amdqp_queue_info qi;
	int up[2], down[2], status;
	pid_t child;
	char c = 0;

	ASSERT_EQ(0, pipe(up));
	ASSERT_EQ(0, pipe(down));
	child = fork();
	ASSERT_LE(0, child);
	if (!child) {
		close(self->qfd);
		close(self->sfd);
		nobody_main(getppid(), self->gpu, self->qid, up[1], down[0]);
	}
	close(up[1]);
	close(down[0]);
	ASSERT_EQ(0, read_full(up[0], &r, sizeof(r)));

	ASSERT_EQ(0, r.open_qp);
	/* Root's queue: EPERM entry, left running, priority unchanged. */
	EXPECT_EQ(-EPERM, r.suspend_root);
	EXPECT_EQ(0, r.suspend_root_state & AMDQP_QSTATE_HELD);
	EXPECT_EQ(0, r.below_ret);
	EXPECT_EQ(0, r.below_affected);
	EXPECT_LE(1, r.below_skipped);
	EXPECT_EQ(-EPERM, r.prio_root_ret);
	EXPECT_EQ(-EPERM, r.prio_root_res);
	EXPECT_EQ(-EPERM, r.prio_root_raise_ret);
	ASSERT_EQ(0, qp_queue_info(self->qfd, getpid(), self->gpu, self->qid,
				   &qi));
	EXPECT_EQ(0, qi.state);
	EXPECT_EQ(0, qi.holders);
	EXPECT_EQ(5, qi.priority);
	EXPECT_EQ(0, qi.suspend_count);

	/* Its own queue, if it may create one. */
	if (r.open_sim) {
		TH_LOG("nobody cannot open " AMDQP_SIM_DEV " (%d): own-queue checks skipped",
		       r.open_sim);
	} else {
		ASSERT_EQ(0, r.create_own);
		EXPECT_EQ(0, r.lower_own);
		EXPECT_EQ(-EPERM, r.raise_own);
		EXPECT_EQ(0, r.suspend_own);
		EXPECT_EQ(0, r.resume_own);
		EXPECT_EQ(0, r.resume_all_ret);
		EXPECT_EQ(0, r.suspend_own_nondumpable)
			TH_LOG("a non-dumpable process cannot suspend its own queue");
		ASSERT_EQ(0, qp_queue_info(self->qfd, child, self->gpu,
					   r.own_qid, &qi));
		EXPECT_EQ(NOBODY, qi.uid);
		EXPECT_EQ(3, qi.priority);
		EXPECT_LE(1, qi.suspend_count);
		/* Root may suspend and reprioritise anyone's. */
		EXPECT_EQ(0, qp_suspend1(self->qfd, child, self->gpu,
					 r.own_qid));
		EXPECT_EQ(0, qp_resume1(self->qfd, child, self->gpu,
					r.own_qid));
		EXPECT_EQ(0, qp_set_priority(self->qfd, child, self->gpu,
					     r.own_qid, 14, NULL));
		ASSERT_EQ(0, qp_queue_info(self->qfd, child, self->gpu,
					   r.own_qid, &qi));
		EXPECT_EQ(14, qi.priority);
	}
	write(down[1], &c, 1);
	ASSERT_EQ(child, waitpid(child, &status, 0));
	EXPECT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0);
	close(up[0]);
	close(down[1]);
}

/* Root lowers and raises its own queue's priority freely. */
TEST_F(perm, root_priority)
{
	struct amdqp_queue_info qi;
	int res = 1;

	EXPECT_EQ(0, qp_set_priority(self->qfd, getpid(), self->gpu, self->qid,
				     AMDQP_PRIORITY_MAX, &res));
	EXPECT_EQ(0, res);
	EXPECT_EQ(0, qp_set_priority(self->qfd, getpid(), self->gpu, self->qid,
				     AMDQP_PRIORITY_MIN, &res));
	ASSERT_EQ(0, qp_queue_info(self->qfd, getpid(), self->gpu, self->qid,
				   &qi));
	EXPECT_EQ(AMDQP_PRIORITY_MIN, qi.priority);
	EXPECT_EQ(-ENOENT, qp_set_priority(self->qfd, getpid(), self->gpu,
					   0xdead, 1, &res));
	EXPECT_EQ(-ENOENT, res);
}

/*
 * An unprivileged process that owns a queue and waits; @dumpable as with
 * prctl(PR_SET_DUMPABLE). Sends its queue id (0 on failure) on @up.
 */
static pid_t nobody_owner(uint32_t gpu, bool dumpable, int up)
{
	uint32_t qid = 0;
	pid_t pid = fork();
	int sfd, fd;

	if (pid)
		return pid;
	for (fd = 3; fd < 1024; fd++)
		if (fd != up)
			close(fd);
	if (setgroups(0, NULL) || setgid(NOBODY) || setuid(NOBODY))
		_exit(3);
	prctl(PR_SET_DUMPABLE, dumpable ? 1 : 0);
	sfd = sim_open();
	if (sfd < 0 || sim_create(sfd, gpu, 4, &qid))
		qid = 0;
	write_full(up, &qid, sizeof(qid));
	for (;;)
		pause();
}

/*
 * Same uid, another process: allowed without privileges, like ptrace
 * attach, unless the target is not dumpable.
 */
TEST_F(perm, same_uid)
{
	int up[2], status;
	pid_t a, na, b;
	int32_t res[4] = { 1, 1, 1, 1 };
	uint32_t qid = 0, nqid = 0;
	uint64_t scope = 0;
	bool yama = !read_u64("/proc/sys/kernel/yama/ptrace_scope", &scope);

	/* Yama's ptrace_scope decides too (trust.c): the classic rules. */
	if (yama && scope == 3)
		SKIP(return, "Yama ptrace_scope 3: no same-uid control");
	if (yama)
		ASSERT_EQ(0, write_u64("/proc/sys/kernel/yama/ptrace_scope",
				       0));
	ASSERT_EQ(0, pipe(up));
	a = nobody_owner(self->gpu, true, up[1]);
	ASSERT_LE(0, a);
	ASSERT_EQ(0, read_full(up[0], &qid, sizeof(qid)));
	na = nobody_owner(self->gpu, false, up[1]);
	ASSERT_LE(0, na);
	ASSERT_EQ(0, read_full(up[0], &nqid, sizeof(nqid)));
	if (!qid || !nqid) {
		kill(a, SIGKILL);
		kill(na, SIGKILL);
		waitpid(a, NULL, 0);
		waitpid(na, NULL, 0);
		SKIP(return, "nobody cannot create sim queues");
	}
	b = fork();
	ASSERT_LE(0, b);
	if (!b) {
		/* Controller: another nobody process. */
		int fd;

		close(self->qfd);
		close(self->sfd);
		if (setgroups(0, NULL) || setgid(NOBODY) || setuid(NOBODY))
			_exit(3);
		prctl(PR_SET_DUMPABLE, 1);
		fd = qp_open();
		res[0] = qp_suspend1(fd, a, self->gpu, qid);
		res[1] = qp_resume1(fd, a, self->gpu, qid);
		/* Another user's queue is off limits... */
		res[2] = qp_suspend1(fd, getppid(), self->gpu, self->qid);
		/* ...and so is a non-dumpable process's. */
		res[3] = qp_suspend1(fd, na, self->gpu, nqid);
		write_full(up[1], res, sizeof(res));
		_exit(0);
	}
	ASSERT_EQ(0, read_full(up[0], res, sizeof(res)));
	waitpid(b, &status, 0);
	kill(a, SIGKILL);
	kill(na, SIGKILL);
	waitpid(a, NULL, 0);
	waitpid(na, NULL, 0);
	if (yama)
		write_u64("/proc/sys/kernel/yama/ptrace_scope", scope);
	EXPECT_EQ(0, res[0]);
	EXPECT_EQ(0, res[1]);
	EXPECT_EQ(-EPERM, res[2]);
	EXPECT_EQ(-EPERM, res[3]);
	close(up[0]);
	close(up[1]);
}

/*
 * same_uid_control=N (for hosts where Yama or an LSM restricts ptrace):
 * another process of the same uid is off limits to SUSPEND and skipped by
 * SUSPEND_BELOW; root still may.
 */
TEST_F(perm, same_uid_control_off)
{
	int32_t res[3] = { 1, 1, 1 };
	uint32_t qid = 0;
	int up[2], status;
	pid_t a, b;

	ASSERT_EQ(0, pipe(up));
	a = nobody_owner(self->gpu, true, up[1]);
	ASSERT_LE(0, a);
	ASSERT_EQ(0, read_full(up[0], &qid, sizeof(qid)));
	if (!qid) {
		kill(a, SIGKILL);
		waitpid(a, NULL, 0);
		SKIP(return, "nobody cannot create sim queues");
	}
	ASSERT_EQ(0, qp_param_set("same_uid_control", 0));
	b = fork();
	ASSERT_LE(0, b);
	if (!b) {
		uint32_t gpus[1] = { self->gpu };
		struct amdqp_gpu_set gs = { 0 };
		int fd;

		close(self->qfd);
		close(self->sfd);
		if (setgroups(0, NULL) || setgid(NOBODY) || setuid(NOBODY))
			_exit(3);
		prctl(PR_SET_DUMPABLE, 1);
		fd = qp_open();
		res[0] = qp_suspend1(fd, a, self->gpu, qid);
		res[1] = qp_gpu_set(fd, AMDQP_IOC_SUSPEND_BELOW, gpus, 1,
				    AMDQP_PRIORITY_MAX, &gs);
		res[2] = gs.affected;
		write_full(up[1], res, sizeof(res));
		_exit(0);
	}
	EXPECT_EQ(0, read_full(up[0], res, sizeof(res)));
	waitpid(b, &status, 0);
	EXPECT_EQ(0, qp_suspend1(self->qfd, a, self->gpu, qid));
	EXPECT_EQ(0, qp_resume1(self->qfd, a, self->gpu, qid));
	EXPECT_EQ(0, qp_param_set("same_uid_control", 1));
	kill(a, SIGKILL);
	waitpid(a, NULL, 0);
	EXPECT_EQ(-EPERM, res[0]);
	EXPECT_EQ(0, res[1]);
	EXPECT_EQ(0, res[2]);
	close(up[0]);
	close(up[1]);
}

/* What the process in the new pid namespace saw. */
struct ns_report {
	pid_t mypid;
	uint32_t listed;
	uint32_t listed_pid;
	uint32_t in_qid;
	int create_in;
	int suspend_out;
	int below_ret;
	uint32_t below_affected;
	int suspend_in;
	uint32_t suspend_in_state;
	int ev_ret;
	uint32_t ev_pid;
};

static void ns_grandchild(pid_t outer_pid, uint32_t gpu, uint32_t out_qid,
			  int up, int down)
{
	struct amdqp_queue_info infos[16];
	struct ns_report r;
	uint32_t gpus[1] = { gpu }, new_qid;
	struct amdqp_gpu_set gs;
	struct amdqp_event ev;
	int fd, sfd;
	char c;

	memset(&r, 0, sizeof(r));
	r.mypid = getpid();
	fd = qp_open();
	sfd = sim_open();
	if (fd < 0 || sfd < 0)
		_exit(2);
	qp_set_mask(fd, 1ULL << AMDQP_EVENT_QUEUE_CREATED);
	r.create_in = sim_create(sfd, gpu, 3, &r.in_qid);
	/* Drop our own creation event. */
	qp_wait_event(fd, AMDQP_EVENT_QUEUE_CREATED, gpu, r.in_qid, 2000, &ev);
	if (!qp_list(fd, gpu, 0, infos, ARRAY_LEN(infos), &r.listed) &&
	    r.listed)
		r.listed_pid = infos[0].pid;
	/* The outer pid means nothing (or someone else) in here. */
	r.suspend_out = qp_suspend1(fd, outer_pid, gpu, out_qid);
	r.below_ret = qp_gpu_set(fd, AMDQP_IOC_SUSPEND_BELOW, gpus, 1,
				 AMDQP_PRIORITY_MAX, &gs);
	r.below_affected = gs.affected;
	qp_gpu_set(fd, AMDQP_IOC_RESUME_ALL, gpus, 1, 0, &gs);
	r.suspend_in = qp_one(fd, AMDQP_IOC_SUSPEND, getpid(), gpu, r.in_qid,
			      &r.suspend_in_state);

	/* Tell the parent, let it create a queue, see its event. */
	write_full(up, &r, sizeof(r));
	if (read_full(down, &new_qid, sizeof(new_qid)))
		_exit(2);
	r.ev_ret = qp_wait_event(fd, AMDQP_EVENT_QUEUE_CREATED, gpu, new_qid,
				 5000, &ev);
	r.ev_pid = r.ev_ret ? 0xffffffff : ev.pid;
	write_full(up, &r, sizeof(r));
	read_full(down, &c, 1);
	_exit(0);
}

TEST_F(perm, pid_namespace)
{
	struct amdqp_queue_info qi;
	struct ns_report r;
	int up[2], down[2], status;
	uint32_t new_qid = 0;
	pid_t child;
	char c = 0;

	ASSERT_EQ(0, pipe(up));
	ASSERT_EQ(0, pipe(down));
	child = fork();
	ASSERT_LE(0, child);
	if (!child) {
		pid_t outer = getppid(), gc;

		close(self->qfd);
		close(self->sfd);
		if (unshare(CLONE_NEWPID))
			_exit(4);
		gc = fork();
		if (gc < 0)
			_exit(5);
		if (!gc)
			ns_grandchild(outer, self->gpu, self->qid, up[1],
				      down[0]);
		waitpid(gc, &status, 0);
		_exit(WIFEXITED(status) ? WEXITSTATUS(status) : 6);
	}
	close(up[1]);
	close(down[0]);
	if (read_full(up[0], &r, sizeof(r))) {
		waitpid(child, &status, 0);
		if (WIFEXITED(status) && WEXITSTATUS(status) == 4)
			SKIP(return, "unshare(CLONE_NEWPID) not permitted");
		ASSERT_TRUE(false) TH_LOG("namespace child failed: %x", status);
	}

	EXPECT_EQ(1, r.mypid);
	ASSERT_EQ(0, r.create_in);
	/* Only its own queue is visible, under its namespace pid. */
	EXPECT_EQ(1, r.listed);
	EXPECT_EQ(1, r.listed_pid);
	EXPECT_EQ(-ENOENT, r.suspend_out);
	EXPECT_EQ(0, r.below_ret);
	EXPECT_EQ(0, r.below_affected)
		TH_LOG("SUSPEND_BELOW in a pid namespace touched queues outside it");
	EXPECT_EQ(0, r.suspend_in);
	EXPECT_EQ(AMDQP_QSTATE_SUSPENDED | AMDQP_QSTATE_HELD,
		  r.suspend_in_state);
	/* Our queue was left alone. */
	ASSERT_EQ(0, qp_queue_info(self->qfd, getpid(), self->gpu, self->qid,
				   &qi));
	EXPECT_EQ(0, qi.state);
	EXPECT_EQ(0, qi.suspend_count);

	/* From outside, its queue carries its global pid (not 1). */
	ASSERT_EQ(0, qp_queue_info(self->qfd, 0, self->gpu, r.in_qid, &qi));
	EXPECT_NE(1, qi.pid);
	EXPECT_NE(getpid(), (pid_t)qi.pid);
	EXPECT_EQ(AMDQP_QSTATE_SUSPENDED, qi.state);

	/* An event about our queue reaches it with pid 0 (hidden). */
	ASSERT_EQ(0, sim_create(self->sfd, self->gpu, 7, &new_qid));
	ASSERT_EQ(0, write_full(down[1], &new_qid, sizeof(new_qid)));
	ASSERT_EQ(0, read_full(up[0], &r, sizeof(r)));
	EXPECT_EQ(0, r.ev_ret);
	EXPECT_EQ(0, r.ev_pid);

	write(down[1], &c, 1);
	ASSERT_EQ(child, waitpid(child, &status, 0));
	EXPECT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0);
	/* Its exit released its hold and destroyed its queue. */
	EXPECT_EQ(-ENOENT, qp_wait_state(self->qfd, 0, self->gpu, r.in_qid,
					 0, 1, 2000));
	close(up[0]);
	close(down[1]);
}

/* What the unprivileged child saw of the suspend rate limit. */
struct rate_report {
	int create_own;
	int res[8];
	int after_wait;
	int resume_after_busy;
};

#define RATE_PER_S	2
#define RATE_BURST	3

static void rate_main(uint32_t gpu, int up)
{
	struct rate_report r;
	uint32_t qid = 0;
	int fd, sfd;
	unsigned int i;

	memset(&r, 0, sizeof(r));
	if (setgroups(0, NULL) || setgid(NOBODY) || setuid(NOBODY))
		_exit(3);
	prctl(PR_SET_DUMPABLE, 1);
	fd = qp_open();
	sfd = sim_open();
	if (fd < 0 || sfd < 0) {
		r.create_own = fd < 0 ? fd : sfd;
		goto out;
	}
	r.create_own = sim_create(sfd, gpu, 5, &qid);
	if (r.create_own)
		goto out;
	/* Back to back: the burst passes, then the device's bucket is dry. */
	for (i = 0; i < ARRAY_LEN(r.res); i++) {
		r.res[i] = qp_suspend1(fd, getpid(), gpu, qid);
		if (!r.res[i])
			qp_resume1(fd, getpid(), gpu, qid);
	}
	/* Nothing was held by the refused calls; resuming is never limited. */
	r.resume_after_busy = qp_resume1(fd, getpid(), gpu, qid);
	sleep_ms(1000 / RATE_PER_S + 200);
	r.after_wait = qp_suspend1(fd, getpid(), gpu, qid);
	qp_resume1(fd, getpid(), gpu, qid);
out:
	write_full(up, &r, sizeof(r));
	_exit(0);
}

/*
 * Item 9: every suspension under HWS preempts the whole device, so
 * callers without CAP_SYS_NICE/CAP_SYS_ADMIN get unpriv_suspend_burst at
 * once and then unpriv_suspend_rate per second per device; more fail as
 * a whole with EBUSY, holding nothing. Root is exempt.
 */
TEST_F(perm, unprivileged_rate_limit)
{
	uint64_t rate, burst, limited0 = 0, limited1 = 0;
	struct rate_report r;
	unsigned int i, ok = 0, busy = 0;
	int up[2], status;
	pid_t child;

	ASSERT_EQ(0, qp_param_get("unpriv_suspend_rate", &rate));
	ASSERT_EQ(0, qp_param_get("unpriv_suspend_burst", &burst));
	ASSERT_EQ(0, qp_param_set("unpriv_suspend_rate", RATE_PER_S));
	ASSERT_EQ(0, qp_param_set("unpriv_suspend_burst", RATE_BURST));
	read_named("/sys/kernel/debug/amdqp/stats", "rate_limited", &limited0);

	/* Root is exempt however fast it goes. */
	for (i = 0; i < 8; i++) {
		EXPECT_EQ(0, qp_suspend1(self->qfd, getpid(), self->gpu,
					 self->qid));
		EXPECT_EQ(0, qp_resume1(self->qfd, getpid(), self->gpu,
					self->qid));
	}

	ASSERT_EQ(0, pipe(up));
	child = fork();
	ASSERT_LE(0, child);
	if (!child) {
		close(self->qfd);
		close(self->sfd);
		rate_main(self->gpu, up[1]);
	}
	close(up[1]);
	EXPECT_EQ(0, read_full(up[0], &r, sizeof(r)));
	ASSERT_EQ(child, waitpid(child, &status, 0));
	close(up[0]);
	qp_param_set("unpriv_suspend_rate", rate);
	qp_param_set("unpriv_suspend_burst", burst);
	if (r.create_own)
		SKIP(return, "nobody cannot use the sim (%d)", r.create_own);

	for (i = 0; i < ARRAY_LEN(r.res); i++) {
		if (!r.res[i])
			ok++;
		else if (r.res[i] == -EBUSY)
			busy++;
		else
			TH_LOG("call %u: unexpected %d", i, r.res[i]);
	}
	EXPECT_EQ(0, r.res[0]);
	EXPECT_EQ(0, r.res[RATE_BURST - 1]);
	EXPECT_EQ(-EBUSY, r.res[RATE_BURST]);
	/* 8 calls take far less than the 2.5 s that 5 more tokens need. */
	EXPECT_GE(RATE_BURST + 1, ok);
	EXPECT_EQ(ARRAY_LEN(r.res), ok + busy);
	EXPECT_EQ(-EALREADY, r.resume_after_busy);
	EXPECT_EQ(0, r.after_wait);
	read_named("/sys/kernel/debug/amdqp/stats", "rate_limited", &limited1);
	EXPECT_EQ(busy, limited1 - limited0);
}

TEST_HARNESS_MAIN
