// SPDX-License-Identifier: GPL-2.0
/*
 * LIST_QUEUES shows a queue's ring VA only to callers that could read the
 * owner's /proc/PID/maps (same uid and dumpable, or CAP_SYS_PTRACE);
 * others get 0 and AMDQP_QSTATE_REDACTED, and cannot probe for the VA
 * with AMDQP_REF_BY_RING either. pid and uid stay visible, as in
 * /proc/PID/status.
 */
#include <sys/prctl.h>

#include "common.h"
#include "kselftest_harness.h"

#define REDACT_GPU_BASE	12500
#define NOBODY		65534

FIXTURE(redact) {
	int qfd;
	int sfd;
	int gpu;
	uint32_t qid;
	struct amdqp_queue_info root_qi;
};

FIXTURE_SETUP(redact)
{
	self->qfd = self->sfd = -1;
	self->gpu = 0;
	if (!sim_available())
		SKIP(return, "amdqp and amdqp_sim not loaded");
	if (geteuid())
		SKIP(return, "needs root");
	self->gpu = sim_new_device(REDACT_GPU_BASE, "hws", 1, 4);
	ASSERT_LT(0, self->gpu);
	self->qfd = qp_open();
	ASSERT_LE(0, self->qfd);
	self->sfd = sim_open();
	ASSERT_LE(0, self->sfd);
	ASSERT_EQ(0, sim_create(self->sfd, self->gpu, 5, &self->qid));
	ASSERT_EQ(0, qp_queue_info(self->qfd, getpid(), self->gpu, self->qid,
				   &self->root_qi));
	ASSERT_NE(0, self->root_qi.ring_va);
	ASSERT_EQ(0, self->root_qi.state & AMDQP_QSTATE_REDACTED);
}

FIXTURE_TEARDOWN(redact)
{
	sim_env_close(self->qfd, self->sfd, self->gpu);
}

struct redact_report {
	int setup;
	int list_root;
	struct amdqp_queue_info root;
	int list_own;
	struct amdqp_queue_info own;
	int by_ring_root;
};

static void nobody_main(pid_t root_pid, uint32_t gpu, uint32_t root_qid,
			uint64_t root_va, int up)
{
	struct redact_report r;
	uint32_t own_qid;
	int fd, sfd;

	memset(&r, 0, sizeof(r));
	if (setgroups(0, NULL) || setgid(NOBODY) || setuid(NOBODY))
		_exit(3);
	prctl(PR_SET_DUMPABLE, 1);
	fd = qp_open();
	sfd = sim_open();
	if (fd < 0 || sfd < 0 || sim_create(sfd, gpu, 5, &own_qid)) {
		r.setup = -1;
	} else {
		r.list_root = qp_queue_info(fd, root_pid, gpu, root_qid,
					    &r.root);
		r.list_own = qp_queue_info(fd, getpid(), gpu, own_qid, &r.own);
		r.by_ring_root = qp_one_ring(fd, AMDQP_IOC_SUSPEND, root_pid,
					     root_va, NULL);
	}
	if (write_full(up, &r, sizeof(r)))
		_exit(2);
	_exit(0);
}

TEST_F(redact, other_user)
{
	struct redact_report r;
	int p[2], status;
	pid_t child;

	ASSERT_EQ(0, pipe(p));
	child = fork();
	ASSERT_LE(0, child);
	if (!child) {
		close(p[0]);
		nobody_main(getppid(), self->gpu, self->qid,
			    self->root_qi.ring_va, p[1]);
	}
	close(p[1]);
	ASSERT_EQ(0, read_full(p[0], &r, sizeof(r)));
	close(p[0]);
	ASSERT_EQ(child, waitpid(child, &status, 0));
	ASSERT_EQ(0, r.setup);

	/* Root's queue, seen by nobody: listed, but without its VA. */
	ASSERT_EQ(0, r.list_root);
	EXPECT_EQ(0, r.root.ring_va);
	EXPECT_TRUE(r.root.state & AMDQP_QSTATE_REDACTED);
	EXPECT_EQ(getpid(), (pid_t)r.root.pid);
	EXPECT_EQ(0, r.root.uid);
	EXPECT_EQ(self->root_qi.ring_size, r.root.ring_size);
	/* Naming it by the right VA must not tell it from a wrong one. */
	EXPECT_EQ(-ENOENT, r.by_ring_root);
	EXPECT_EQ(0, qp_state(self->qfd, getpid(), self->gpu, self->qid));

	/* Its own queue: the VA is there. */
	ASSERT_EQ(0, r.list_own);
	EXPECT_NE(0, r.own.ring_va);
	EXPECT_EQ(0, r.own.state & AMDQP_QSTATE_REDACTED);
	EXPECT_EQ(NOBODY, r.own.uid);
}

/* Root (CAP_SYS_PTRACE) sees every VA. */
TEST_F(redact, privileged_sees_all)
{
	struct amdqp_queue_info qi;
	struct owner o = { 0 };
	uint32_t q;

	ASSERT_EQ(0, owner_start(&o));
	ASSERT_EQ(0, owner_setuid(&o, NOBODY));
	ASSERT_EQ(0, owner_create(&o, self->gpu, 4, &q));
	ASSERT_EQ(0, qp_queue_info(self->qfd, o.pid, self->gpu, q, &qi));
	EXPECT_NE(0, qi.ring_va);
	EXPECT_EQ(0, qi.state & AMDQP_QSTATE_REDACTED);
	EXPECT_EQ(0, qp_one_ring(self->qfd, AMDQP_IOC_SUSPEND, o.pid,
				 qi.ring_va, NULL));
	EXPECT_EQ(0, qp_one_ring(self->qfd, AMDQP_IOC_RESUME, o.pid,
				 qi.ring_va, NULL));
	owner_stop(&o);
}

TEST_HARNESS_MAIN
