// SPDX-License-Identifier: GPL-2.0
/*
 * The setup tolerates a module without the ABI 1.2 parameters and ioctl,
 * so that these tests can be run against the old module and fail there
 * for what they check, not in the setup.
 *
 * The trust model of issue 25, tried as the adversary would, from other
 * Unix users: a queue registered with priority 15 by an unprivileged
 * user ends at its ceiling (default_ceiling, or the administrator's
 * table by uid, gid or cgroup); SET_PRIORITY above the ceiling is EPERM;
 * levels above 15 are EINVAL; a queue suspended by a holder that keeps
 * toggling still gets its share of every window; one user spending the
 * suspend rate limit leaves another user's calls working; Yama's
 * ptrace_scope decides same-uid control.
 */
#include <sys/mount.h>
#include <sys/prctl.h>

#include "common.h"
#include "kselftest_harness.h"

#define TRUST_GPU_BASE	8000
#define USER_A		4201
#define USER_B		4202
#define YAMA		"/proc/sys/kernel/yama/ptrace_scope"

FIXTURE(trust) {
	int qfd;
	int sfd;
	int gpu;
	uint64_t saved[8];
	bool have[8];
};

static const char * const trust_params[] = {
	"default_ceiling", "starve_window_ms", "min_run_pct",
	"max_suspend_ms", "cooldown_ms", "unpriv_suspend_rate",
	"unpriv_suspend_burst", "same_uid_control",
};

static int ceil_op(int fd, uint32_t op, struct amdqp_ceiling *e, uint32_t n,
		   struct amdqp_ceilings *out)
{
	struct amdqp_ceilings cs = {
		.entries = (uintptr_t)e, .count = n,
		.entry_size = sizeof(*e), .op = op,
	};
	int ret = ioctl(fd, AMDQP_IOC_CEILINGS, &cs) ? -errno : 0;

	if (out)
		*out = cs;
	return ret;
}

static int ceil_set1(int fd, uint32_t kind, uint64_t id, uint32_t level)
{
	struct amdqp_ceiling e = { .kind = kind, .id = id, .level = level };
	int ret = ceil_op(fd, AMDQP_CEIL_OP_SET, &e, 1, NULL);

	return ret ? ret : e.result;
}

static int ceil_clear1(int fd, uint32_t kind, uint64_t id)
{
	struct amdqp_ceiling e = { .kind = kind, .id = id };
	int ret = ceil_op(fd, AMDQP_CEIL_OP_CLEAR, &e, 1, NULL);

	return ret ? ret : e.result;
}

FIXTURE_SETUP(trust)
{
	unsigned int i;

	self->qfd = self->sfd = -1;
	self->gpu = 0;
	if (!sim_available())
		SKIP(return, "amdqp and amdqp_sim not loaded");
	if (geteuid())
		SKIP(return, "needs root");
	for (i = 0; i < ARRAY_LEN(trust_params); i++)
		self->have[i] = !qp_param_get(trust_params[i], &self->saved[i]);
	self->gpu = sim_new_device(TRUST_GPU_BASE, "hws", 1, 4);
	ASSERT_LT(0, self->gpu);
	self->qfd = qp_open();
	ASSERT_LE(0, self->qfd);
	self->sfd = sim_open();
	ASSERT_LE(0, self->sfd);
	ceil_op(self->qfd, AMDQP_CEIL_OP_FLUSH, NULL, 0, NULL);
}

FIXTURE_TEARDOWN(trust)
{
	unsigned int i;

	if (self->qfd >= 0)
		ceil_op(self->qfd, AMDQP_CEIL_OP_FLUSH, NULL, 0, NULL);
	for (i = 0; self->gpu > 0 && i < ARRAY_LEN(trust_params); i++)
		if (self->have[i])
			qp_param_set(trust_params[i], self->saved[i]);
	sim_env_close(self->qfd, self->sfd, self->gpu);
}

/* An owner process running as @uid (gid @uid, no other groups). */
static int start_as(struct owner *o, uid_t uid)
{
	int ret = owner_start(o);

	return ret ? ret : owner_setuid(o, uid);
}

/*
 * Raw registration: an unprivileged user creates a queue with priority 15
 * and gets the default ceiling; the administrator's table by uid and by
 * gid raises or lowers it, every change re-clamping the live queue, and
 * the asked-for priority comes back when the entry goes.
 */
TEST_F(trust, ceiling_clamps_registration)
{
	uint32_t gpus[1] = { self->gpu };
	struct amdqp_gpu_set gs;
	struct amdqp_queue_info qi;
	struct owner o = { 0 };
	uint32_t qid = 0;
	int ret;

	qp_param_set("default_ceiling", 7);	/* the default */
	ASSERT_EQ(0, start_as(&o, USER_A));
	ret = owner_create(&o, self->gpu, AMDQP_PRIORITY_MAX, &qid);
	if (ret) {
		owner_kill(&o);
		SKIP(return, "user %d cannot create sim queues (%d)", USER_A,
		     ret);
	}
	ASSERT_EQ(0, qp_queue_info(self->qfd, o.pid, self->gpu, qid, &qi));
	EXPECT_EQ(7, qi.priority);
	EXPECT_EQ(AMDQP_PRIORITY_MAX, qi.requested);
	EXPECT_EQ(7, qi.ceiling);

	/* The default moves every queue it applies to. */
	EXPECT_EQ(0, qp_param_set("default_ceiling", 3));
	ASSERT_EQ(0, qp_queue_info(self->qfd, o.pid, self->gpu, qid, &qi));
	EXPECT_EQ(3, qi.priority);
	EXPECT_EQ(-EINVAL, qp_param_set("default_ceiling", 16));

	/* A uid entry. */
	EXPECT_EQ(0, ceil_set1(self->qfd, AMDQP_CEIL_UID, USER_A, 12));
	ASSERT_EQ(0, qp_queue_info(self->qfd, o.pid, self->gpu, qid, &qi));
	EXPECT_EQ(12, qi.priority);
	EXPECT_EQ(12, qi.ceiling);
	/* A gid entry too: the highest match wins. */
	EXPECT_EQ(0, ceil_set1(self->qfd, AMDQP_CEIL_GID, USER_A, 14));
	ASSERT_EQ(0, qp_queue_info(self->qfd, o.pid, self->gpu, qid, &qi));
	EXPECT_EQ(14, qi.priority);
	EXPECT_EQ(0, ceil_clear1(self->qfd, AMDQP_CEIL_GID, USER_A));
	/* An entry may also lower a user below the default. */
	EXPECT_EQ(0, ceil_set1(self->qfd, AMDQP_CEIL_UID, USER_A, 1));
	ASSERT_EQ(0, qp_queue_info(self->qfd, o.pid, self->gpu, qid, &qi));
	EXPECT_EQ(1, qi.priority);
	EXPECT_EQ(0, ceil_clear1(self->qfd, AMDQP_CEIL_UID, USER_A));
	EXPECT_EQ(-ENOENT, ceil_clear1(self->qfd, AMDQP_CEIL_UID, USER_A));
	ASSERT_EQ(0, qp_queue_info(self->qfd, o.pid, self->gpu, qid, &qi));
	EXPECT_EQ(3, qi.priority);
	EXPECT_EQ(AMDQP_PRIORITY_MAX, qi.requested);

	/* SUSPEND_BELOW compares the effective priority. */
	ASSERT_EQ(0, qp_gpu_set(self->qfd, AMDQP_IOC_SUSPEND_BELOW, gpus, 1, 4,
				&gs));
	EXPECT_EQ(1, gs.affected);
	ASSERT_EQ(0, qp_gpu_set(self->qfd, AMDQP_IOC_RESUME_ALL, gpus, 1, 0,
				&gs));
	owner_kill(&o);
}

/* The cgroup v2 of the owner (or an ancestor) is an identity too. */
TEST_F(trust, ceiling_by_cgroup)
{
	const char *root = "/sys/fs/cgroup", *dir = "/sys/fs/cgroup/amdqp-t";
	struct amdqp_queue_info qi;
	struct owner o = { 0 };
	struct stat st;
	char buf[32];
	uint32_t qid = 0;
	int ret;

	if (access("/sys/fs/cgroup/cgroup.procs", F_OK))
		mount("none", root, "cgroup2", 0, NULL);
	if (access("/sys/fs/cgroup/cgroup.procs", F_OK))
		SKIP(return, "no cgroup v2 hierarchy");
	mkdir(dir, 0755);
	ASSERT_EQ(0, stat(dir, &st));
	qp_param_set("default_ceiling", 7);	/* the default */
	ASSERT_EQ(0, owner_start(&o));
	snprintf(buf, sizeof(buf), "%d\n", o.pid);
	ASSERT_EQ(0, write_str("/sys/fs/cgroup/amdqp-t/cgroup.procs", buf));
	ASSERT_EQ(0, owner_setuid(&o, USER_B));
	ret = owner_create(&o, self->gpu, 13, &qid);
	if (ret) {
		owner_kill(&o);
		rmdir(dir);
		SKIP(return, "user %d cannot create sim queues (%d)", USER_B,
		     ret);
	}
	ASSERT_EQ(0, qp_queue_info(self->qfd, o.pid, self->gpu, qid, &qi));
	EXPECT_EQ(7, qi.priority);
	EXPECT_EQ(0, ceil_set1(self->qfd, AMDQP_CEIL_CGROUP, st.st_ino, 11));
	ASSERT_EQ(0, qp_queue_info(self->qfd, o.pid, self->gpu, qid, &qi));
	EXPECT_EQ(11, qi.priority);
	EXPECT_EQ(11, qi.ceiling);
	owner_kill(&o);
	rmdir(dir);
}

/* SET_PRIORITY as @uid from a child; its result. */
static int prio_as(uid_t uid, pid_t pid, uint32_t gpu, uint32_t qid,
		   uint32_t prio)
{
	int up[2], r = 1, res;
	pid_t c;

	if (pipe(up))
		return -errno;
	c = fork();
	if (!c) {
		if (setgroups(0, NULL) || setresgid(uid, uid, uid) ||
		    setresuid(uid, uid, uid))
			_exit(3);
		r = qp_set_priority(qp_open(), pid, gpu, qid, prio, &res);
		write_full(up[1], &r, sizeof(r));
		_exit(0);
	}
	if (c < 0 || read_full(up[0], &r, sizeof(r)))
		r = 0x7777;
	waitpid(c, NULL, 0);
	close(up[0]);
	close(up[1]);
	return r;
}

/*
 * SET_PRIORITY by the owner: lower freely, raise up to the ceiling, not
 * above it (EPERM); root (CAP_SYS_NICE) may go above.
 */
TEST_F(trust, set_priority_ceiling)
{
	struct amdqp_queue_info qi;
	struct owner o = { 0 };
	uint32_t qid = 0;
	int ret, res;
	int up[2];
	pid_t c;
	int r[4] = { 1, 1, 1, 1 };

	qp_param_set("default_ceiling", 7);	/* the default */
	ASSERT_EQ(0, start_as(&o, USER_A));
	ret = owner_create(&o, self->gpu, 3, &qid);
	if (ret) {
		owner_kill(&o);
		SKIP(return, "cannot create sim queues as %d (%d)", USER_A,
		     ret);
	}
	ASSERT_EQ(0, pipe(up));
	c = fork();
	ASSERT_LE(0, c);
	if (!c) {
		int fd;

		if (setgroups(0, NULL) || setresgid(USER_A, USER_A, USER_A) ||
		    setresuid(USER_A, USER_A, USER_A))
			_exit(3);
		fd = qp_open();
		r[0] = qp_set_priority(fd, o.pid, self->gpu, qid, 7, &res);
		r[1] = qp_set_priority(fd, o.pid, self->gpu, qid, 8, &res);
		r[2] = qp_set_priority(fd, o.pid, self->gpu, qid,
				       AMDQP_PRIORITY_MAX, &res);
		r[3] = qp_set_priority(fd, o.pid, self->gpu, qid, 2, &res);
		write_full(up[1], r, sizeof(r));
		_exit(0);
	}
	ASSERT_EQ(0, read_full(up[0], r, sizeof(r)));
	waitpid(c, NULL, 0);
	EXPECT_EQ(0, r[0]);
	EXPECT_EQ(-EPERM, r[1]);
	EXPECT_EQ(-EPERM, r[2]);
	EXPECT_EQ(0, r[3]);
	ASSERT_EQ(0, qp_queue_info(self->qfd, o.pid, self->gpu, qid, &qi));
	EXPECT_EQ(2, qi.priority);

	/* CAP_SYS_NICE goes above the ceiling, and a table change keeps it. */
	EXPECT_EQ(0, qp_set_priority(self->qfd, o.pid, self->gpu, qid, 14,
				     NULL));
	EXPECT_EQ(0, ceil_set1(self->qfd, AMDQP_CEIL_UID, USER_A, 5));
	ASSERT_EQ(0, qp_queue_info(self->qfd, o.pid, self->gpu, qid, &qi));
	EXPECT_EQ(14, qi.priority);
	EXPECT_EQ(5, qi.ceiling);
	/* The owner may lower it from there, not raise it again. */
	EXPECT_EQ(0, prio_as(USER_A, o.pid, self->gpu, qid, 10));
	ASSERT_EQ(0, qp_queue_info(self->qfd, o.pid, self->gpu, qid, &qi));
	EXPECT_EQ(10, qi.priority);
	EXPECT_EQ(-EPERM, prio_as(USER_A, o.pid, self->gpu, qid, 11));
	EXPECT_EQ(0, prio_as(USER_A, o.pid, self->gpu, qid, 4));
	/* At or below the ceiling now: a lower ceiling clamps it again. */
	EXPECT_EQ(0, ceil_set1(self->qfd, AMDQP_CEIL_UID, USER_A, 3));
	ASSERT_EQ(0, qp_queue_info(self->qfd, o.pid, self->gpu, qid, &qi));
	EXPECT_EQ(3, qi.priority);
	EXPECT_EQ(4, qi.requested);
	/* Another user, without CAP_SYS_NICE: not even lowering. */
	EXPECT_EQ(-EPERM, prio_as(USER_B, o.pid, self->gpu, qid, 1));
	owner_kill(&o);
	close(up[0]);
	close(up[1]);
}

/* Levels above 15 are refused by every ioctl, for every caller. */
TEST_F(trust, levels_out_of_range)
{
	uint32_t gpus[1] = { self->gpu };
	struct amdqp_gpu_set gs;

	EXPECT_EQ(-EINVAL, qp_gpu_set(self->qfd, AMDQP_IOC_SUSPEND_BELOW, gpus,
				      1, AMDQP_PRIORITY_MAX + 1, &gs));
	EXPECT_EQ(-EINVAL, qp_gpu_set(self->qfd, AMDQP_IOC_SUSPEND_BELOW, gpus,
				      1, 1u << 31, &gs));
	EXPECT_EQ(-EINVAL, ceil_set1(self->qfd, AMDQP_CEIL_UID, USER_A, 16));
	EXPECT_EQ(-EINVAL, ceil_set1(self->qfd, AMDQP_CEIL_UID, 1ull << 32, 3));
	EXPECT_EQ(-EINVAL, ceil_set1(self->qfd, 9, USER_A, 3));
	EXPECT_EQ(-EINVAL, ceil_set1(self->qfd, AMDQP_CEIL_CGROUP, 0, 3));
}

/* The ceiling ioctl: root only, uapi size rules, batches, listing. */
TEST_F(trust, ceilings_abi)
{
	struct amdqp_ceiling e[3] = {
		{ .kind = AMDQP_CEIL_UID, .id = USER_A, .level = 9 },
		{ .kind = AMDQP_CEIL_GID, .id = USER_B, .level = 16 },
		{ .kind = AMDQP_CEIL_CGROUP, .id = 77, .level = 2 },
	};
	struct amdqp_ceiling l[4];
	struct amdqp_ceilings cs;
	unsigned char big[sizeof(struct amdqp_ceilings) + 8];
	unsigned char ent[2][32];
	int up[2], r = 1;
	pid_t c;

	/* Per-entry results of a batch. */
	ASSERT_EQ(0, ceil_op(self->qfd, AMDQP_CEIL_OP_SET, e, 3, &cs));
	EXPECT_EQ(2, cs.done);
	EXPECT_EQ(0, e[0].result);
	EXPECT_EQ(-EINVAL, e[1].result);
	EXPECT_EQ(0, e[2].result);
	EXPECT_EQ(sizeof(struct amdqp_ceiling), cs.entry_size);
	memset(l, 0, sizeof(l));
	ASSERT_EQ(0, ceil_op(self->qfd, AMDQP_CEIL_OP_LIST, l, 4, &cs));
	EXPECT_EQ(2, cs.count);
	EXPECT_EQ(2, cs.done);
	EXPECT_EQ(9 + 2, l[0].level + l[1].level);
	/* LIST with no room counts. */
	ASSERT_EQ(0, ceil_op(self->qfd, AMDQP_CEIL_OP_LIST, NULL, 0, &cs));
	EXPECT_EQ(2, cs.count);
	EXPECT_EQ(0, cs.done);

	/* Unknown op, flags, reserved; FLUSH with a count. */
	EXPECT_EQ(-EINVAL, ceil_op(self->qfd, 99, e, 1, NULL));
	cs = (struct amdqp_ceilings){ .op = AMDQP_CEIL_OP_LIST, .flags = 1 };
	EXPECT_EQ(-1, ioctl(self->qfd, AMDQP_IOC_CEILINGS, &cs));
	EXPECT_EQ(EINVAL, errno);
	EXPECT_EQ(-EINVAL, ceil_op(self->qfd, AMDQP_CEIL_OP_FLUSH, e, 1, NULL));

	/* Entries: too short is EINVAL, a longer one's tail must be zero. */
	cs = (struct amdqp_ceilings){ .entries = (uintptr_t)ent, .count = 1,
				      .entry_size = 16,
				      .op = AMDQP_CEIL_OP_SET };
	EXPECT_EQ(-1, ioctl(self->qfd, AMDQP_IOC_CEILINGS, &cs));
	EXPECT_EQ(EINVAL, errno);
	memset(ent, 0, sizeof(ent));
	memcpy(ent[0], &e[0], sizeof(e[0]));
	((struct amdqp_ceiling *)ent[0])->result = 0;
	ent[0][28] = 1;
	cs.entry_size = 32;
	EXPECT_EQ(-1, ioctl(self->qfd, AMDQP_IOC_CEILINGS, &cs));
	EXPECT_EQ(E2BIG, errno);
	ent[0][28] = 0;
	EXPECT_EQ(0, ioctl(self->qfd, AMDQP_IOC_CEILINGS, &cs));
	EXPECT_EQ(1, cs.done);

	/* The structure itself: longer with a non-zero tail is E2BIG. */
	memset(big, 0, sizeof(big));
	((struct amdqp_ceilings *)big)->op = AMDQP_CEIL_OP_LIST;
	big[sizeof(struct amdqp_ceilings)] = 1;
	EXPECT_EQ(-1, ioctl(self->qfd, _IOWR(AMDQP_IOC_MAGIC, 0x09,
					     unsigned char[sizeof(big)]), big));
	EXPECT_EQ(E2BIG, errno);
	big[sizeof(struct amdqp_ceilings)] = 0;
	EXPECT_EQ(0, ioctl(self->qfd, _IOWR(AMDQP_IOC_MAGIC, 0x09,
					    unsigned char[sizeof(big)]), big));
	/* Shorter than any version: EINVAL from the size rules. */
	EXPECT_EQ(-1, ioctl(self->qfd, _IOWR(AMDQP_IOC_MAGIC, 0x09,
					     unsigned char[4]), big));
	EXPECT_EQ(EINVAL, errno);

	/* Not root: EPERM, even for LIST. */
	ASSERT_EQ(0, pipe(up));
	c = fork();
	ASSERT_LE(0, c);
	if (!c) {
		int fd;

		if (setgroups(0, NULL) || setresgid(USER_A, USER_A, USER_A) ||
		    setresuid(USER_A, USER_A, USER_A))
			_exit(3);
		fd = qp_open();
		r = ceil_set1(fd, AMDQP_CEIL_UID, USER_A, 15);
		if (r == -EPERM)
			r = ceil_op(fd, AMDQP_CEIL_OP_LIST, l, 4, NULL);
		write_full(up[1], &r, sizeof(r));
		_exit(0);
	}
	ASSERT_EQ(0, read_full(up[0], &r, sizeof(r)));
	waitpid(c, NULL, 0);
	EXPECT_EQ(-EPERM, r);
	close(up[0]);
	close(up[1]);
}

/*
 * An untagged victim under a holder that suspends it again the moment it
 * is resumed: the kernel's budget of suspended time per window resumes it
 * and keeps it immune long enough for its share, toggling or not.
 */
TEST_F(trust, starvation_budget_toggling_holder)
{
	struct amdqp_queue_info a, b;
	struct owner o = { 0 };
	uint64_t t0, t1, t_end;
	uint32_t qid = 0;
	int evfd, ret, forced = 0;
	double frac;

	EXPECT_EQ(0, qp_param_set("starve_window_ms", 1000));
	EXPECT_EQ(0, qp_param_set("min_run_pct", 30));
	ASSERT_EQ(0, qp_param_set("max_suspend_ms", 5000));
	ASSERT_EQ(0, qp_param_set("cooldown_ms", 0));
	ASSERT_EQ(0, start_as(&o, USER_A));
	ret = owner_create(&o, self->gpu, 2, &qid);
	if (ret) {
		owner_kill(&o);
		SKIP(return, "cannot create sim queues as %d (%d)", USER_A,
		     ret);
	}
	/* 8 s of 2 ms items: it runs whenever it is on the hardware. */
	ASSERT_EQ(0, owner_submit(&o, self->gpu, qid, 2000000, 4096));
	evfd = qp_open();
	ASSERT_LE(0, evfd);
	ASSERT_EQ(0, qp_set_mask(evfd, 1ull << AMDQP_EVENT_WATCHDOG));

	ASSERT_EQ(0, qp_queue_info(self->qfd, o.pid, self->gpu, qid, &a));
	t0 = now_ns();
	t_end = t0 + 3 * NSEC_PER_SEC;
	while (now_ns() < t_end) {
		/* Refused (-EAGAIN) while the budget's cooldown lasts. */
		if (qp_suspend1(self->qfd, o.pid, self->gpu, qid) == 0) {
			sleep_ms(150);
			qp_resume1(self->qfd, o.pid, self->gpu, qid);
		} else {
			sleep_ms(2);
		}
	}
	t1 = now_ns();
	ASSERT_EQ(0, qp_queue_info(self->qfd, o.pid, self->gpu, qid, &b));
	frac = (double)(b.suspended_ns - a.suspended_ns) / (double)(t1 - t0);
	TH_LOG("suspended %.1f %% of %.2f s, %llu items done", frac * 100,
	       (t1 - t0) / 1e9,
	       (unsigned long long)(b.completed - a.completed));
	/* Owed 30 %: suspended at most 70 % plus a watchdog period. */
	EXPECT_GE(0.85, frac);
	EXPECT_LT(a.completed, b.completed);
	while (!qp_wait_event(evfd, AMDQP_EVENT_WATCHDOG, self->gpu, qid, 10,
			      NULL))
		forced++;
	EXPECT_LE(1, forced);
	close(evfd);
	owner_kill(&o);
}

/* What a rate-limited user saw. */
struct rate_report {
	int create;
	int res[8];
};

static void rate_user(uint32_t gpu, uid_t uid, int up)
{
	struct rate_report r;
	uint32_t qid = 0;
	unsigned int i;
	int fd, sfd;

	memset(&r, 0, sizeof(r));
	if (setgroups(0, NULL) || setresgid(uid, uid, uid) ||
	    setresuid(uid, uid, uid))
		_exit(3);
	prctl(PR_SET_DUMPABLE, 1);
	fd = qp_open();
	sfd = sim_open();
	r.create = fd < 0 ? fd : sfd < 0 ? sfd : sim_create(sfd, gpu, 2, &qid);
	for (i = 0; !r.create && i < ARRAY_LEN(r.res); i++) {
		r.res[i] = qp_suspend1(fd, getpid(), gpu, qid);
		if (!r.res[i])
			qp_resume1(fd, getpid(), gpu, qid);
	}
	write_full(up, &r, sizeof(r));
	_exit(0);
}

/* One user emptying its bucket leaves another user's calls working. */
TEST_F(trust, rate_limit_per_user)
{
	struct rate_report ra, rb;
	int up[2];
	pid_t a, b;

	ASSERT_EQ(0, qp_param_set("unpriv_suspend_rate", 1));
	ASSERT_EQ(0, qp_param_set("unpriv_suspend_burst", 2));
	ASSERT_EQ(0, pipe(up));
	/* User B spends its budget first (A's is left for the next tests). */
	a = fork();
	ASSERT_LE(0, a);
	if (!a)
		rate_user(self->gpu, USER_B, up[1]);
	ASSERT_EQ(0, read_full(up[0], &ra, sizeof(ra)));
	waitpid(a, NULL, 0);
	if (ra.create)
		SKIP(return, "cannot create sim queues as %d (%d)", USER_B,
		     ra.create);
	/* User B is dry now... */
	EXPECT_EQ(0, ra.res[0]);
	EXPECT_EQ(-EBUSY, ra.res[ARRAY_LEN(ra.res) - 1]);
	/* ...user A, right after, is not. */
	b = fork();
	ASSERT_LE(0, b);
	if (!b)
		rate_user(self->gpu, USER_A, up[1]);
	ASSERT_EQ(0, read_full(up[0], &rb, sizeof(rb)));
	waitpid(b, NULL, 0);
	ASSERT_EQ(0, rb.create);
	EXPECT_EQ(0, rb.res[0]);
	EXPECT_EQ(0, rb.res[1]);
	close(up[0]);
	close(up[1]);
}

/* A dumpable process of @uid owning a queue; its id on @up. */
static pid_t yama_owner(uint32_t gpu, uid_t uid, int up)
{
	uint32_t qid = 0;
	pid_t pid = fork();
	int sfd;

	if (pid)
		return pid;
	/* Not root any more (a child of the controller): nothing to drop. */
	if (getuid() != uid &&
	    (setgroups(0, NULL) || setresgid(uid, uid, uid) ||
	     setresuid(uid, uid, uid))) {
		write_full(up, &qid, sizeof(qid));
		_exit(3);
	}
	prctl(PR_SET_DUMPABLE, 1);
	sfd = sim_open();
	if (sfd < 0 || sim_create(sfd, gpu, 2, &qid))
		qid = 0;
	write_full(up, &qid, sizeof(qid));
	for (;;)
		pause();
}

/*
 * Another process of the same uid tries SUSPEND and SUSPEND_BELOW on
 * @owner's queue; also, as a parent, on a child of its own. Results in
 * @res: sibling SUSPEND, sibling SUSPEND_BELOW affected, child SUSPEND.
 */
static void yama_try(uint32_t gpu, pid_t owner, uint32_t qid, int res[3])
{
	int up[2], ch[2];
	pid_t c;

	res[0] = res[1] = res[2] = 1;
	if (pipe(up) || pipe(ch))
		return;
	c = fork();
	if (c < 0)
		return;
	if (!c) {
		uint32_t gpus[1] = { gpu };
		struct amdqp_gpu_set gs = { 0 };
		uint32_t cq = 0;
		pid_t kid;
		int fd;

		if (setgroups(0, NULL) || setresgid(USER_A, USER_A, USER_A) ||
		    setresuid(USER_A, USER_A, USER_A))
			_exit(3);
		prctl(PR_SET_DUMPABLE, 1);
		fd = qp_open();
		res[0] = qp_suspend1(fd, owner, gpu, qid);
		if (!res[0])
			qp_resume1(fd, owner, gpu, qid);
		res[1] = qp_gpu_set(fd, AMDQP_IOC_SUSPEND_BELOW, gpus, 1,
				    AMDQP_PRIORITY_MAX, &gs);
		if (!res[1])
			res[1] = gs.affected;
		qp_gpu_set(fd, AMDQP_IOC_RESUME_ALL, gpus, 1, 0, &gs);
		kid = yama_owner(gpu, USER_A, ch[1]);
		if (kid > 0 && !read_full(ch[0], &cq, sizeof(cq)) && cq) {
			res[2] = qp_suspend1(fd, kid, gpu, cq);
			qp_resume1(fd, kid, gpu, cq);
		}
		if (kid > 0) {
			kill(kid, SIGKILL);
			waitpid(kid, NULL, 0);
		}
		write_full(up[1], res, 3 * sizeof(int));
		_exit(0);
	}
	read_full(up[0], res, 3 * sizeof(int));
	waitpid(c, NULL, 0);
	close(up[0]);
	close(up[1]);
	close(ch[0]);
	close(ch[1]);
}

/*
 * same_uid_control follows the kernel's ptrace attach check: Yama's
 * ptrace_scope 0 lets a same-uid process in, 1 only its ancestors, 2
 * nobody without CAP_SYS_PTRACE. (3 cannot be undone until reboot: see
 * the last test.)
 */
TEST_F(trust, yama_ptrace_scope)
{
	uint64_t scope;
	uint32_t qid = 0;
	int up[2], res[3];
	pid_t a;

	if (read_u64(YAMA, &scope))
		SKIP(return, "no Yama");
	if (scope == 3)
		SKIP(return, "ptrace_scope is 3 already");
	ASSERT_EQ(0, qp_param_set("same_uid_control", 1));
	ASSERT_EQ(0, pipe(up));
	a = yama_owner(self->gpu, USER_A, up[1]);
	ASSERT_LE(0, a);
	ASSERT_EQ(0, read_full(up[0], &qid, sizeof(qid)));
	if (!qid) {
		kill(a, SIGKILL);
		waitpid(a, NULL, 0);
		SKIP(return, "cannot create sim queues as %d", USER_A);
	}

	ASSERT_EQ(0, write_u64(YAMA, 0));
	yama_try(self->gpu, a, qid, res);
	EXPECT_EQ(0, res[0]);
	EXPECT_EQ(1, res[1]);
	EXPECT_EQ(0, res[2]);

	ASSERT_EQ(0, write_u64(YAMA, 1));
	yama_try(self->gpu, a, qid, res);
	EXPECT_EQ(-EPERM, res[0]);
	EXPECT_EQ(0, res[1]);
	EXPECT_EQ(0, res[2]);		/* its own child */

	ASSERT_EQ(0, write_u64(YAMA, 2));
	yama_try(self->gpu, a, qid, res);
	EXPECT_EQ(-EPERM, res[0]);
	EXPECT_EQ(0, res[1]);
	EXPECT_EQ(-EPERM, res[2]);

	/* Root (CAP_SYS_ADMIN) is not a same-uid controller. */
	EXPECT_EQ(0, qp_suspend1(self->qfd, a, self->gpu, qid));
	EXPECT_EQ(0, qp_resume1(self->qfd, a, self->gpu, qid));

	write_u64(YAMA, scope);
	kill(a, SIGKILL);
	waitpid(a, NULL, 0);
	close(up[0]);
	close(up[1]);
}

/*
 * ptrace_scope 3: no attach at all, so no same-uid control either. Last
 * in this file, and the programs after it do not ptrace: the setting
 * stays until the VM reboots.
 */
TEST_F(trust, yama_ptrace_scope_3_last)
{
	uint64_t scope;
	uint32_t qid = 0;
	int up[2], res[3];
	pid_t a;

	if (read_u64(YAMA, &scope))
		SKIP(return, "no Yama");
	ASSERT_EQ(0, qp_param_set("same_uid_control", 1));
	ASSERT_EQ(0, pipe(up));
	a = yama_owner(self->gpu, USER_A, up[1]);
	ASSERT_LE(0, a);
	ASSERT_EQ(0, read_full(up[0], &qid, sizeof(qid)));
	if (!qid) {
		kill(a, SIGKILL);
		waitpid(a, NULL, 0);
		SKIP(return, "cannot create sim queues as %d", USER_A);
	}
	ASSERT_EQ(0, write_u64(YAMA, 3));
	yama_try(self->gpu, a, qid, res);
	EXPECT_EQ(-EPERM, res[0]);
	EXPECT_EQ(0, res[1]);
	EXPECT_EQ(-EPERM, res[2]);
	kill(a, SIGKILL);
	waitpid(a, NULL, 0);
	close(up[0]);
	close(up[1]);
}

TEST_HARNESS_MAIN
