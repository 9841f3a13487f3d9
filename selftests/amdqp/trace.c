// SPDX-License-Identifier: GPL-2.0
/*
 * Observability: the amdqp tracepoints fire for what happens (in a private
 * tracefs instance, so nothing else is disturbed), and debugfs stats and
 * queues reflect the state.
 */
#include "common.h"
#include "kselftest_harness.h"

#define TRACE_GPU_BASE	9500
#define TRACEFS		"/sys/kernel/tracing"
#define INSTANCE	TRACEFS "/instances/amdqp_selftest"

static const char * const amdqp_events[] = {
	"amdqp_queue_register", "amdqp_queue_unregister",
	"amdqp_priority_change", "amdqp_suspend_batch", "amdqp_resume_batch",
	"amdqp_error", "amdqp_watchdog", "amdqp_confine_batch",
	"amdqp_unconfine_batch", "amdqp_confine_watchdog",
};

FIXTURE(trace) {
	int qfd;
	int sfd;
	int gpu;
	bool instance;
	char *buf;
};

FIXTURE_SETUP(trace)
{
	self->qfd = self->sfd = -1;
	self->gpu = 0;
	self->instance = false;
	self->buf = NULL;
	if (!sim_available())
		SKIP(return, "amdqp and amdqp_sim not loaded");
	self->buf = malloc(1 << 20);
	ASSERT_NE(NULL, self->buf);
	self->gpu = sim_new_device(TRACE_GPU_BASE, "hws", 1, 4);
	ASSERT_LT(0, self->gpu);
	self->qfd = qp_open();
	ASSERT_LE(0, self->qfd);
	self->sfd = sim_open();
	ASSERT_LE(0, self->sfd);
}

FIXTURE_TEARDOWN(trace)
{
	if (self->instance) {
		write_str(INSTANCE "/events/amdqp/enable", "0");
		rmdir(INSTANCE);
	}
	sim_env_close(self->qfd, self->sfd, self->gpu);
	free(self->buf);
}

/* Lines of the trace that mention @event and contain @needle. */
static int count_lines(const char *trace, const char *event,
		       const char *needle)
{
	const char *p = trace;
	int n = 0;

	while (p && *p) {
		const char *eol = strchr(p, '\n');
		size_t len = eol ? (size_t)(eol - p) : strlen(p);
		char line[512];

		if (len >= sizeof(line))
			len = sizeof(line) - 1;
		memcpy(line, p, len);
		line[len] = 0;
		if (line[0] != '#' && strstr(line, event) &&
		    (!needle || strstr(line, needle)))
			n++;
		p = eol ? eol + 1 : NULL;
	}
	return n;
}

TEST_F(trace, tracepoints)
{
	struct amdqp_queue_ref refs[3];
	char path[256], gpu_s[32], count_s[32];
	uint32_t q[3];
	unsigned int i;
	int ret;

	for (i = 0; i < ARRAY_LEN(amdqp_events); i++) {
		snprintf(path, sizeof(path), TRACEFS "/events/amdqp/%s/format",
			 amdqp_events[i]);
		EXPECT_EQ(0, access(path, R_OK)) TH_LOG("no tracepoint %s",
							amdqp_events[i]);
	}
	if (access(TRACEFS "/instances", W_OK))
		SKIP(return, "no tracefs instances");
	ret = mkdir(INSTANCE, 0755);
	ASSERT_TRUE(!ret || errno == EEXIST);
	self->instance = true;
	ASSERT_EQ(0, write_str(INSTANCE "/events/amdqp/enable", "1"));

	for (i = 0; i < 3; i++) {
		ASSERT_EQ(0, sim_create(self->sfd, self->gpu, 4, &q[i]));
		refs[i] = qref(getpid(), self->gpu, q[i]);
	}
	ASSERT_EQ(0, qp_batch(self->qfd, AMDQP_IOC_SUSPEND, refs, 3, NULL));
	ASSERT_EQ(0, qp_batch(self->qfd, AMDQP_IOC_RESUME, refs, 3, NULL));
	ASSERT_EQ(0, qp_set_priority(self->qfd, getpid(), self->gpu, q[0], 2,
				     NULL));
	ASSERT_EQ(0, sim_knob_set(self->gpu, "fail_preempt", 1));
	EXPECT_NE(0, qp_suspend1(self->qfd, getpid(), self->gpu, q[1]));
	ASSERT_EQ(0, sim_destroy(self->sfd, self->gpu, q[2]));
	ASSERT_EQ(0, write_str(INSTANCE "/events/amdqp/enable", "0"));
	ASSERT_LT(0, read_str(INSTANCE "/trace", self->buf, 1 << 20));

	snprintf(gpu_s, sizeof(gpu_s), "gpu_id=%d ", self->gpu);
	snprintf(count_s, sizeof(count_s), "count=3 ");
	EXPECT_EQ(3, count_lines(self->buf, "amdqp_queue_register:", gpu_s));
	/* HWS: one batch, one event per device, with its size. */
	EXPECT_EQ(1, count_lines(self->buf, "amdqp_suspend_batch:", count_s));
	EXPECT_EQ(1, count_lines(self->buf, "amdqp_resume_batch:", count_s));
	EXPECT_EQ(1, count_lines(self->buf, "amdqp_priority_change:", gpu_s));
	EXPECT_LE(1, count_lines(self->buf, "amdqp_error:", gpu_s));
	EXPECT_EQ(1, count_lines(self->buf, "amdqp_queue_unregister:", gpu_s));
	if (_metadata->exit_code != KSFT_PASS)
		TH_LOG("trace:\n%s", self->buf);
}

/* CONFINE: one confine and one unconfine event per device, with the count. */
TEST_F(trace, confine)
{
	struct amdqp_cu_target t = {
		.gpu_id = self->gpu, .num_xcc = 1, .cu_per_xcc = 4,
		.mask_words = 1,
	};
	struct amdqp_confine c = {
		.targets = (uintptr_t)&t, .count = 1, .target_size = sizeof(t),
		.op = AMDQP_CONFINE_OP_BELOW, .priority = 5,
	};
	struct owner o = { 0 };
	char gpu_s[32];
	uint32_t word = 0x3, q[2];
	int ret;

	if (access(TRACEFS "/instances", W_OK))
		SKIP(return, "no tracefs instances");
	ret = mkdir(INSTANCE, 0755);
	ASSERT_TRUE(!ret || errno == EEXIST);
	self->instance = true;
	/* BELOW never confines the caller's own queues: another owner's. */
	ASSERT_EQ(0, owner_start(&o));
	ASSERT_EQ(0, owner_create(&o, self->gpu, 2, &q[0]));
	ASSERT_EQ(0, owner_create(&o, self->gpu, 2, &q[1]));
	ASSERT_EQ(0, write_str(INSTANCE "/events/amdqp/enable", "1"));
	t.mask_ptr = (uintptr_t)&word;
	EXPECT_EQ(0, ioctl(self->qfd, AMDQP_IOC_CONFINE, &c) ? -errno : 0);
	EXPECT_EQ(2, c.affected);
	memset(&c, 0, sizeof(c));
	c.op = AMDQP_CONFINE_OP_RELEASE;
	EXPECT_EQ(0, ioctl(self->qfd, AMDQP_IOC_CONFINE, &c) ? -errno : 0);
	EXPECT_EQ(2, c.affected);
	ASSERT_EQ(0, write_str(INSTANCE "/events/amdqp/enable", "0"));
	owner_stop(&o);
	ASSERT_LT(0, read_str(INSTANCE "/trace", self->buf, 1 << 20));

	snprintf(gpu_s, sizeof(gpu_s), "gpu_id=%d count=2 ", self->gpu);
	EXPECT_EQ(1, count_lines(self->buf, "amdqp_confine_batch:", gpu_s));
	EXPECT_EQ(1, count_lines(self->buf, "amdqp_unconfine_batch:", gpu_s));
	if (_metadata->exit_code != KSFT_PASS)
		TH_LOG("trace:\n%s", self->buf);
}

TEST_F(trace, debugfs)
{
	uint64_t s0 = 0, s1 = 0, r0 = 0, r1 = 0, v = 0;
	struct amdqp_device_info di;
	char line[128];
	uint32_t q;
	int n;

	ASSERT_EQ(0, sim_create(self->sfd, self->gpu, 6, &q));
	ASSERT_EQ(0, read_named("/sys/kernel/debug/amdqp/stats",
				"suspend_calls", &s0));
	ASSERT_EQ(0, read_named("/sys/kernel/debug/amdqp/stats",
				"queues_suspended", &r0));
	ASSERT_EQ(0, qp_suspend1(self->qfd, getpid(), self->gpu, q));
	ASSERT_EQ(0, read_named("/sys/kernel/debug/amdqp/stats",
				"suspend_calls", &s1));
	ASSERT_EQ(0, read_named("/sys/kernel/debug/amdqp/stats",
				"queues_suspended", &r1));
	EXPECT_LE(1, s1 - s0);
	EXPECT_LE(1, r1 - r0);

	n = read_str("/sys/kernel/debug/amdqp/queues", self->buf, 1 << 20);
	ASSERT_LT(0, n);
	snprintf(line, sizeof(line), "gpu %d ", self->gpu);
	EXPECT_NE(NULL, strstr(self->buf, line)) TH_LOG("%s", self->buf);
	snprintf(line, sizeof(line), "pid %d queue %u prio 6", getpid(), q);
	EXPECT_NE(NULL, strstr(self->buf, line)) TH_LOG("%s", self->buf);
	EXPECT_NE(NULL, strstr(self->buf, "SUSPENDED"));
	ASSERT_EQ(0, qp_resume1(self->qfd, getpid(), self->gpu, q));

	/* The sim's counters file agrees with LIST_DEVICES. */
	ASSERT_EQ(0, qp_dev_info(self->qfd, self->gpu, &di));
	ASSERT_EQ(0, sim_counter(self->gpu, "sched_updates", &v));
	EXPECT_EQ(di.sched_updates, v);
	ASSERT_EQ(0, sim_counter(self->gpu, "unmap_packets", &v));
	EXPECT_EQ(di.unmap_packets, v);
	ASSERT_EQ(0, sim_counter(self->gpu, "map_packets", &v));
	EXPECT_EQ(di.map_packets, v);
	ASSERT_EQ(0, sim_counter(self->gpu, "preemptions", &v));
	EXPECT_EQ(di.preemptions, v);
	ASSERT_EQ(0, sim_counter(self->gpu, "resets", &v));
	EXPECT_EQ(di.resets, v);
}

TEST_HARNESS_MAIN
