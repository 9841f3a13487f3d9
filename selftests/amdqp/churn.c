// SPDX-License-Identifier: GPL-2.0
/*
 * Churn: short-lived queue owners and controllers doing every kind of
 * call and leaving in every way (clean teardown, exit with queues, killed
 * while suspended), then a check that nothing is left behind: no queue,
 * no hold, no suspension.
 *
 * With AMDQP_CHURN_INJECT=1 (the debug-kernel pass, selftests/vm/
 * debug-guest.sh) the loop runs with failslab and fail_page_alloc armed
 * for allocations whose call stack passes through amdqp.ko's text. A call
 * may then fail with ENOMEM, never with anything else, and the end state
 * must be just as clean. The number of injected failures is printed and,
 * with AMDQP_CHURN_REPORT=FILE, written to FILE.
 */
#include <inttypes.h>
#include <signal.h>

#include "common.h"
#include "kselftest_harness.h"

#define CHURN_GPU_BASE	9000
#define CHURN_PRIOS	3
#define FAULT_DBG	"/sys/kernel/debug"

static const char *const fault_attrs[] = { "failslab", "fail_page_alloc" };
#define FAULT_TIMES	100000ULL

struct churn {
	bool inject;
	unsigned int tolerated;	/* calls that failed with ENOMEM */
};

/*
 * A result is fine when it is a success, or an injected ENOMEM. Returns
 * true for a success, so that callers skip what depends on a failed call.
 */
static bool churn_ok(struct __test_metadata *_metadata, struct churn *c,
		     int ret, const char *what)
{
	if (!ret)
		return true;
	if (c->inject && ret == -ENOMEM) {
		c->tolerated++;
		return false;
	}
	TH_LOG("%s: unexpected %d (%s)", what, ret, strerror(-ret));
	_metadata->exit_code = KSFT_FAIL;
	return false;
}

/* [start, end) of amdqp.ko's text, from /proc/kallsyms. */
static int amdqp_text(uint64_t *start, uint64_t *end)
{
	char line[256], name[128], mod[64];
	unsigned long long addr;
	FILE *f = fopen("/proc/kallsyms", "re");
	char type;

	if (!f)
		return -errno;
	*start = UINT64_MAX;
	*end = 0;
	while (fgets(line, sizeof(line), f)) {
		if (sscanf(line, "%llx %c %127s %63s", &addr, &type, name,
			   mod) != 4 || strcmp(mod, "[amdqp]") ||
		    (type != 't' && type != 'T') || !addr)
			continue;
		if (addr < *start)
			*start = addr;
		if (addr > *end)
			*end = addr;
	}
	fclose(f);
	if (*start == UINT64_MAX)
		return -ENOENT;
	/* The last function's size is unknown: one page of margin. */
	*end += 4096;
	return 0;
}

static int fault_write(const char *attr, const char *knob, uint64_t v)
{
	char path[128];

	snprintf(path, sizeof(path), FAULT_DBG "/%s/%s", attr, knob);
	return write_u64(path, v);
}

/* Arm (probability 20 %) or disarm both fault attributes. */
static int fault_arm(bool on, uint64_t start, uint64_t end)
{
	unsigned int i;
	int ret = 0;

	for (i = 0; i < ARRAY_LEN(fault_attrs) && !ret; i++) {
		const char *a = fault_attrs[i];

		if (!on) {
			ret = fault_write(a, "probability", 0);
			continue;
		}
		ret = fault_write(a, "verbose", 0) ?:
		      fault_write(a, "task-filter", 0) ?:
		      fault_write(a, "ignore-gfp-wait", 0) ?:
		      fault_write(a, "stacktrace-depth", 32) ?:
		      fault_write(a, "require-start", start) ?:
		      fault_write(a, "require-end", end) ?:
		      fault_write(a, "interval", 1) ?:
		      fault_write(a, "times", FAULT_TIMES) ?:
		      fault_write(a, "probability", 20);
	}
	return ret;
}

static uint64_t fault_injected(void)
{
	uint64_t sum = 0, left;
	unsigned int i;
	char path[128];

	for (i = 0; i < ARRAY_LEN(fault_attrs); i++) {
		snprintf(path, sizeof(path), FAULT_DBG "/%s/times",
			 fault_attrs[i]);
		if (!read_u64(path, &left) && left <= FAULT_TIMES)
			sum += FAULT_TIMES - left;
	}
	return sum;
}

/* Drain whatever events are queued, without blocking. */
static void drain_events(int qfd)
{
	struct amdqp_event ev[32];
	struct pollfd p = { .fd = qfd, .events = POLLIN };

	while (poll(&p, 1, 0) > 0 && (p.revents & POLLIN))
		if (read(qfd, ev, sizeof(ev)) <= 0)
			break;
}

/* One round: an owner with queues on both devices and a controller. */
static void churn_round(struct __test_metadata *_metadata, struct churn *c,
			uint32_t *gpus, unsigned int round)
{
	static const uint32_t prios[CHURN_PRIOS] = { 2, 7, 12 };
	uint32_t qid[2][CHURN_PRIOS] = { { 0 } };
	struct amdqp_queue_info infos[16];
	struct owner o = { 0 };
	unsigned int g, p;
	int qfd, ret, res;
	uint32_t n;

	if (!churn_ok(_metadata, c, owner_start(&o), "fork owner"))
		return;
	for (g = 0; g < 2; g++) {
		for (p = 0; p < CHURN_PRIOS; p++) {
			ret = owner_create(&o, gpus[g], prios[p], &qid[g][p]);
			if (!churn_ok(_metadata, c, ret, "create queue"))
				qid[g][p] = 0;
		}
		if (qid[g][0])
			churn_ok(_metadata, c,
				 owner_submit(&o, gpus[g], qid[g][0], 200000, 4),
				 "submit");
	}

	qfd = qp_open();
	if (!churn_ok(_metadata, c, qfd < 0 ? qfd : 0, "open /dev/amdqp"))
		goto owner_out;
	churn_ok(_metadata, c, qp_set_mask(qfd, AMDQP_EVENT_MASK_ALL), "event mask");
	churn_ok(_metadata, c,
		 qp_gpu_set(qfd, AMDQP_IOC_SUSPEND_BELOW, gpus, 2, 12, NULL),
		 "suspend below");
	churn_ok(_metadata, c, qp_list(qfd, 0, o.pid, infos,
				       ARRAY_LEN(infos), &n), "list");
	for (g = 0; g < 2; g++) {
		if (qid[g][1]) {
			ret = qp_set_priority(qfd, o.pid, gpus[g], qid[g][1],
					      8, &res);
			if (churn_ok(_metadata, c, ret, "set priority"))
				churn_ok(_metadata, c, res, "set priority entry");
		}
		if (qid[g][2] &&
		    churn_ok(_metadata, c,
			     qp_suspend1(qfd, o.pid, gpus[g], qid[g][2]),
			     "suspend")) {
			/* Only a hold this file has can be resumed. */
			if (round % 2)
				churn_ok(_metadata, c,
					 qp_resume1(qfd, o.pid, gpus[g],
						    qid[g][2]), "resume");
		}
	}
	drain_events(qfd);

	switch (round % 3) {
	case 0:	/* the controller goes first, holds and all */
		close(qfd);
		break;
	case 1:	/* clean teardown */
		churn_ok(_metadata, c,
			 qp_gpu_set(qfd, AMDQP_IOC_RESUME_ALL, gpus, 2, 0,
				    NULL), "resume all");
		for (g = 0; g < 2; g++)
			for (p = 0; p < CHURN_PRIOS; p++)
				if (qid[g][p])
					churn_ok(_metadata, c,
						 owner_destroy(&o, gpus[g],
							       qid[g][p]),
						 "destroy queue");
		close(qfd);
		break;
	default: /* the owner dies while its queues are held off */
		kill(o.pid, SIGKILL);
		waitpid(o.pid, NULL, 0);
		o.pid = 0;
		close(qfd);
		return;
	}
owner_out:
	owner_stop(&o);
}

/* Both devices hold no queue and no suspension any more. */
static void expect_clean(struct __test_metadata *_metadata, uint32_t *gpus)
{
	char buf[8192], *line;
	unsigned int g, seen = 0;

	ASSERT_LE(0, read_str("/sys/kernel/debug/amdqp/queues", buf,
			      sizeof(buf)));
	for (line = strtok(buf, "\n"); line; line = strtok(NULL, "\n")) {
		unsigned int gpu, nq, ns;

		if (sscanf(line, "gpu %u backend %*u sched %*s xcc %*u queues %u suspended %u",
			   &gpu, &nq, &ns) != 3)
			continue;
		for (g = 0; g < 2; g++) {
			if (gpu != gpus[g])
				continue;
			seen++;
			EXPECT_EQ(0, nq) TH_LOG("gpu %u keeps %u queues", gpu, nq);
			EXPECT_EQ(0, ns) TH_LOG("gpu %u keeps %u suspended", gpu, ns);
		}
	}
	EXPECT_EQ(2, seen);
}

FIXTURE(churn) {
};

FIXTURE_SETUP(churn)
{
}

FIXTURE_TEARDOWN(churn)
{
}

/* Minutes, not the harness's 30 s: the debug kernel under TCG is slow. */
TEST_F_TIMEOUT(churn, rounds, 900)
{
	struct churn c = { 0 };
	const char *env = getenv("AMDQP_CHURN_INJECT");
	const char *report = getenv("AMDQP_CHURN_REPORT");
	unsigned int rounds = 60, i;
	uint64_t start = 0, end = 0, injected = 0;
	uint32_t gpus[2];
	int ret;

	if (!sim_available())
		SKIP(return, "amdqp and amdqp_sim not loaded");
	c.inject = env && !strcmp(env, "1");
	if (getenv("AMDQP_CHURN_ROUNDS"))
		rounds = strtoul(getenv("AMDQP_CHURN_ROUNDS"), NULL, 0);
	ret = sim_new_device(CHURN_GPU_BASE, "hws", 1, 4);
	ASSERT_LT(0, ret);
	gpus[0] = ret;
	ret = sim_new_device(CHURN_GPU_BASE + 500, "mes", 1, 4);
	ASSERT_LT(0, ret);
	gpus[1] = ret;

	if (c.inject) {
		ASSERT_EQ(0, amdqp_text(&start, &end));
		ASSERT_EQ(0, fault_arm(true, start, end))
			TH_LOG("fault injection knobs missing (a kernel with FAILSLAB, FAIL_PAGE_ALLOC, FAULT_INJECTION_STACKTRACE_FILTER?)");
		TH_LOG("injecting into amdqp text 0x%" PRIx64 "-0x%" PRIx64,
		       start, end);
	}
	for (i = 0; i < rounds; i++)
		churn_round(_metadata, &c, gpus, i);
	if (c.inject) {
		injected = fault_injected();
		ASSERT_EQ(0, fault_arm(false, 0, 0));
	}
	/* Exits and closes finish before the calls that caused them return. */
	expect_clean(_metadata, gpus);
	EXPECT_EQ(0, sim_del_device(gpus[0]));
	EXPECT_EQ(0, sim_del_device(gpus[1]));

	ksft_print_msg("churn: %u rounds, %" PRIu64 " allocation failures injected, %u calls failed with ENOMEM\n",
		       rounds, injected, c.tolerated);
	if (c.inject) {
		EXPECT_LT(0, injected) TH_LOG("nothing was injected: is the stack filter right?");
		if (report) {
			FILE *f = fopen(report, "we");

			ASSERT_NE(NULL, f);
			fprintf(f, "%" PRIu64 "\n", injected);
			EXPECT_EQ(0, fclose(f));
		}
	}
}

TEST_HARNESS_MAIN
