// SPDX-License-Identifier: GPL-2.0
/*
 * The event stream of /dev/amdqp: one record per queue creation and
 * destruction, process exit, reset, preemption failure, priority change
 * and device change; read(2) of whole records, poll(2), O_NONBLOCK, event
 * masks, and the overflow record when a reader falls behind.
 */
#include <pthread.h>

#include "common.h"
#include "kselftest_harness.h"

#define EVENTS_GPU_BASE	6000

FIXTURE(events) {
	int qfd;
	int sfd;
	int gpu;
};

FIXTURE_SETUP(events)
{
	self->qfd = self->sfd = -1;
	self->gpu = 0;
	if (!sim_available())
		SKIP(return, "amdqp and amdqp_sim not loaded");
	self->gpu = sim_new_device(EVENTS_GPU_BASE, "hws", 1, 4);
	ASSERT_LT(0, self->gpu);
	self->qfd = open(AMDQP_DEV, O_RDWR | O_NONBLOCK | O_CLOEXEC);
	ASSERT_LE(0, self->qfd);
	self->sfd = sim_open();
	ASSERT_LE(0, self->sfd);
}

FIXTURE_TEARDOWN(events)
{
	sim_env_close(self->qfd, self->sfd, self->gpu);
}

/* Read everything pending (non-blocking fd) into @ev; returns records. */
static int drain(int fd, struct amdqp_event *ev, unsigned int cap)
{
	unsigned int n = 0;

	while (n < cap) {
		ssize_t got = read(fd, ev + n, (cap - n) * sizeof(*ev));

		if (got < 0)
			return errno == EAGAIN ? (int)n : -errno;
		if (got % sizeof(*ev))
			return -EIO;
		n += got / sizeof(*ev);
	}
	return n;
}

TEST_F(events, queue_lifecycle)
{
	struct amdqp_event ev;
	uint64_t t0 = now_ns();
	uint32_t q;

	ASSERT_EQ(0, qp_set_mask(self->qfd, AMDQP_EVENT_MASK_ALL));
	ASSERT_EQ(0, sim_create(self->sfd, self->gpu, 7, &q));
	ASSERT_EQ(0, qp_wait_event(self->qfd, AMDQP_EVENT_QUEUE_CREATED,
				   self->gpu, q, 2000, &ev));
	EXPECT_EQ(sizeof(ev), ev.size);
	EXPECT_EQ(getpid(), (pid_t)ev.pid);
	EXPECT_EQ(7, ev.data);
	EXPECT_EQ(0, ev.error);
	EXPECT_LE(t0, ev.timestamp_ns);
	EXPECT_GE(now_ns(), ev.timestamp_ns);

	ASSERT_EQ(0, qp_set_priority(self->qfd, getpid(), self->gpu, q, 2,
				     NULL));
	ASSERT_EQ(0, qp_wait_event(self->qfd, AMDQP_EVENT_PRIORITY, self->gpu,
				   q, 2000, &ev));
	EXPECT_EQ(2, ev.data);
	EXPECT_EQ(getpid(), (pid_t)ev.pid);

	ASSERT_EQ(0, sim_destroy(self->sfd, self->gpu, q));
	ASSERT_EQ(0, qp_wait_event(self->qfd, AMDQP_EVENT_QUEUE_DESTROYED,
				   self->gpu, q, 2000, &ev));
	EXPECT_EQ(getpid(), (pid_t)ev.pid);
}

TEST_F(events, process_exit)
{
	struct amdqp_event ev;
	struct owner o = { 0 };
	uint32_t q = 0;
	pid_t pid;

	ASSERT_EQ(0, qp_set_mask(self->qfd, AMDQP_EVENT_MASK_ALL));
	ASSERT_EQ(0, owner_start(&o));
	pid = o.pid;
	ASSERT_EQ(0, owner_create(&o, self->gpu, 3, &q));
	ASSERT_EQ(0, qp_wait_event(self->qfd, AMDQP_EVENT_QUEUE_CREATED,
				   self->gpu, q, 2000, &ev));
	EXPECT_EQ(pid, (pid_t)ev.pid);
	owner_stop(&o);
	ASSERT_EQ(0, qp_wait_event(self->qfd, AMDQP_EVENT_PROCESS_EXIT,
				   self->gpu, 0, 5000, &ev));
	EXPECT_EQ(pid, (pid_t)ev.pid);
	EXPECT_EQ(self->gpu, ev.gpu_id);
}

TEST_F(events, reset_and_preempt_failure)
{
	struct amdqp_event ev;
	uint32_t q;

	ASSERT_EQ(0, sim_create(self->sfd, self->gpu, 3, &q));
	ASSERT_EQ(0, qp_set_mask(self->qfd, AMDQP_EVENT_MASK_ALL));
	ASSERT_EQ(0, sim_knob_set(self->gpu, "reset", 1));
	ASSERT_EQ(0, qp_wait_event(self->qfd, AMDQP_EVENT_GPU_RESET, self->gpu,
				   0, 2000, &ev));
	EXPECT_EQ(0, ev.pid);

	ASSERT_EQ(0, sim_knob_set(self->gpu, "fail_preempt", 1));
	EXPECT_EQ(-ETIME, qp_suspend1(self->qfd, getpid(), self->gpu, q));
	ASSERT_EQ(0, qp_wait_event(self->qfd, AMDQP_EVENT_PREEMPT_FAILED,
				   self->gpu, 0, 2000, &ev));
	EXPECT_EQ(-ETIME, ev.error);
}

TEST_F(events, device_added_removed)
{
	struct amdqp_event ev;
	int gpu2;

	ASSERT_EQ(0, qp_set_mask(self->qfd, AMDQP_EVENT_MASK_ALL));
	gpu2 = sim_new_device(EVENTS_GPU_BASE + 500, "mes", 1, 2);
	ASSERT_LT(0, gpu2);
	ASSERT_EQ(0, qp_wait_event(self->qfd, AMDQP_EVENT_DEVICE_ADDED, gpu2,
				   0, 2000, &ev));
	ASSERT_EQ(0, sim_del_device(gpu2));
	ASSERT_EQ(0, qp_wait_event(self->qfd, AMDQP_EVENT_DEVICE_REMOVED, gpu2,
				   0, 2000, &ev));
}

TEST_F(events, mask_filters)
{
	struct amdqp_event ev[8];
	uint32_t q;

	/* No mask: nothing is queued. */
	ASSERT_EQ(0, sim_create(self->sfd, self->gpu, 3, &q));
	ASSERT_EQ(0, qp_set_mask(self->qfd, 1ULL << AMDQP_EVENT_GPU_RESET));
	EXPECT_EQ(0, drain(self->qfd, ev, 8));

	ASSERT_EQ(0, sim_create(self->sfd, self->gpu, 3, &q));
	ASSERT_EQ(0, sim_destroy(self->sfd, self->gpu, q));
	EXPECT_EQ(0, drain(self->qfd, ev, 8));
	ASSERT_EQ(0, sim_knob_set(self->gpu, "reset", 1));
	ASSERT_EQ(0, qp_wait_event(self->qfd, AMDQP_EVENT_GPU_RESET, self->gpu,
				   0, 2000, ev));

	/* Mask 0 drops what was queued; a new mask starts empty. */
	ASSERT_EQ(0, qp_set_mask(self->qfd, AMDQP_EVENT_MASK_ALL));
	ASSERT_EQ(0, sim_create(self->sfd, self->gpu, 3, &q));
	ASSERT_EQ(0, qp_set_mask(self->qfd, 0));
	ASSERT_EQ(0, qp_set_mask(self->qfd, AMDQP_EVENT_MASK_ALL));
	errno = 0;
	EXPECT_EQ(-1, read(self->qfd, ev, sizeof(ev)));
	EXPECT_EQ(EAGAIN, errno);
}

TEST_F(events, read_sizes)
{
	struct amdqp_event ev[4];
	unsigned char buf[sizeof(ev)];
	uint32_t q;
	ssize_t n;

	ASSERT_EQ(0, qp_set_mask(self->qfd, 1ULL << AMDQP_EVENT_QUEUE_CREATED));
	errno = 0;
	EXPECT_EQ(-1, read(self->qfd, ev, sizeof(ev)));
	EXPECT_EQ(EAGAIN, errno);

	ASSERT_EQ(0, sim_create(self->sfd, self->gpu, 1, &q));
	ASSERT_EQ(0, sim_create(self->sfd, self->gpu, 2, &q));
	ASSERT_EQ(0, sim_create(self->sfd, self->gpu, 3, &q));

	/* Too small for one record. */
	errno = 0;
	EXPECT_EQ(-1, read(self->qfd, buf, sizeof(struct amdqp_event) - 1));
	EXPECT_EQ(EINVAL, errno);
	EXPECT_EQ(-1, read(self->qfd, buf, 0));
	EXPECT_EQ(EINVAL, errno);
	/* A bad buffer: EFAULT, and the record is not lost. */
	EXPECT_EQ(-1, read(self->qfd, bad_ptr(), sizeof(struct amdqp_event)));
	EXPECT_EQ(EFAULT, errno);

	/* One and a half records: exactly one. */
	n = read(self->qfd, buf, sizeof(struct amdqp_event) * 3 / 2);
	ASSERT_EQ(sizeof(struct amdqp_event), n);
	memcpy(ev, buf, sizeof(ev[0]));
	EXPECT_EQ(AMDQP_EVENT_QUEUE_CREATED, ev[0].type);
	EXPECT_EQ(1, ev[0].data);
	/* The remaining two in one read, in order. */
	n = read(self->qfd, ev, sizeof(ev));
	ASSERT_EQ(2 * sizeof(struct amdqp_event), n);
	EXPECT_EQ(2, ev[0].data);
	EXPECT_EQ(3, ev[1].data);
	EXPECT_LE(ev[0].timestamp_ns, ev[1].timestamp_ns);
	errno = 0;
	EXPECT_EQ(-1, read(self->qfd, ev, sizeof(ev)));
	EXPECT_EQ(EAGAIN, errno);
}

struct later {
	int sfd;
	uint32_t gpu;
	unsigned int delay_ms;
	uint32_t qid;
};

static void *create_later(void *arg)
{
	struct later *l = arg;

	sleep_ms(l->delay_ms);
	sim_create(l->sfd, l->gpu, 9, &l->qid);
	return NULL;
}

TEST_F(events, poll_and_blocking_read)
{
	struct later l = { .sfd = self->sfd, .gpu = self->gpu,
			   .delay_ms = 300 };
	struct pollfd p = { .fd = self->qfd, .events = POLLIN };
	struct amdqp_event ev;
	pthread_t th;
	uint64_t t0;
	int fd, flags;

	ASSERT_EQ(0, qp_set_mask(self->qfd, 1ULL << AMDQP_EVENT_QUEUE_CREATED));
	EXPECT_EQ(0, poll(&p, 1, 0));

	ASSERT_EQ(0, pthread_create(&th, NULL, create_later, &l));
	t0 = now_ns();
	ASSERT_EQ(1, poll(&p, 1, 10000));
	EXPECT_TRUE(p.revents & POLLIN);
	EXPECT_LE(200 * NSEC_PER_MSEC, now_ns() - t0);
	pthread_join(th, NULL);
	ASSERT_EQ(sizeof(ev), read(self->qfd, &ev, sizeof(ev)));
	EXPECT_EQ(l.qid, ev.queue_id);
	p.revents = 0;
	EXPECT_EQ(0, poll(&p, 1, 0));

	/* A blocking read sleeps until the record comes. */
	fd = qp_open();
	ASSERT_LE(0, fd);
	flags = fcntl(fd, F_GETFL);
	EXPECT_EQ(0, flags & O_NONBLOCK);
	ASSERT_EQ(0, qp_set_mask(fd, 1ULL << AMDQP_EVENT_QUEUE_CREATED));
	ASSERT_EQ(0, pthread_create(&th, NULL, create_later, &l));
	t0 = now_ns();
	ASSERT_EQ(sizeof(ev), read(fd, &ev, sizeof(ev)));
	EXPECT_LE(200 * NSEC_PER_MSEC, now_ns() - t0);
	pthread_join(th, NULL);
	EXPECT_EQ(l.qid, ev.queue_id);
	close(fd);
}

/* Every subscribed fd gets its own copy. */
TEST_F(events, broadcast)
{
	struct amdqp_event ev;
	int fd2;
	uint32_t q;

	fd2 = qp_open();
	ASSERT_LE(0, fd2);
	ASSERT_EQ(0, qp_set_mask(self->qfd, AMDQP_EVENT_MASK_ALL));
	ASSERT_EQ(0, qp_set_mask(fd2, 1ULL << AMDQP_EVENT_QUEUE_CREATED));
	ASSERT_EQ(0, sim_create(self->sfd, self->gpu, 3, &q));
	EXPECT_EQ(0, qp_wait_event(self->qfd, AMDQP_EVENT_QUEUE_CREATED,
				   self->gpu, q, 2000, &ev));
	EXPECT_EQ(0, qp_wait_event(fd2, AMDQP_EVENT_QUEUE_CREATED, self->gpu,
				   q, 2000, &ev));
	close(fd2);
}

/*
 * A reader that never reads: the oldest records are kept, then one
 * OVERFLOW record says how many were dropped. Nothing is lost silently.
 */
TEST_F_TIMEOUT(events, overflow, 120)
{
	const unsigned int total = 3000;
	struct amdqp_event *ev;
	unsigned int i, kept = 0, overflows = 0;
	uint64_t dropped = 0;
	uint32_t q;
	int n;

	ASSERT_EQ(0, sim_create(self->sfd, self->gpu, 3, &q));
	ASSERT_EQ(0, qp_set_mask(self->qfd, 1ULL << AMDQP_EVENT_PRIORITY));
	for (i = 0; i < total; i++) {
		ASSERT_EQ(0, qp_set_priority(self->qfd, getpid(), self->gpu, q,
					     i % 2 ? 8 : 4, NULL));
	}
	ev = calloc(total + 16, sizeof(*ev));
	ASSERT_NE(NULL, ev);
	n = drain(self->qfd, ev, total + 16);
	ASSERT_LT(0, n);
	for (i = 0; i < (unsigned int)n; i++) {
		if (ev[i].type == AMDQP_EVENT_OVERFLOW) {
			overflows++;
			dropped += ev[i].data;
			EXPECT_EQ(n - 1, i) TH_LOG("overflow record not last");
			continue;
		}
		ASSERT_EQ(AMDQP_EVENT_PRIORITY, ev[i].type);
		/* Oldest kept: record k is the k-th change. */
		EXPECT_EQ(kept % 2 ? 8 : 4, ev[i].data) TH_LOG("record %u", i);
		if (i) {
			EXPECT_LE(ev[i - 1].timestamp_ns, ev[i].timestamp_ns);
		}
		kept++;
	}
	TH_LOG("%u kept, %llu dropped", kept, (unsigned long long)dropped);
	EXPECT_LT(0, kept);
	EXPECT_EQ(1, overflows);
	EXPECT_EQ(total, kept + dropped);

	/* After the overflow record, the stream works again. */
	ASSERT_EQ(0, qp_set_priority(self->qfd, getpid(), self->gpu, q, 1,
				     NULL));
	n = drain(self->qfd, ev, 4);
	ASSERT_EQ(1, n);
	EXPECT_EQ(AMDQP_EVENT_PRIORITY, ev[0].type);
	EXPECT_EQ(1, ev[0].data);
	free(ev);
}

TEST_HARNESS_MAIN
