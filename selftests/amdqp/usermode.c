// SPDX-License-Identifier: GPL-2.0
/*
 * User-mode sim queues, fed the way an AQL queue is on hardware: the test
 * maps the ring and control page, writes packets and stores the doorbell,
 * and watches read_index, with no system call per submission. Covers the
 * mmap rules, in-order execution and slot reuse, suspension by amdqp (by
 * ring VA) and by the owner's UPDATE_QUEUE and how the two combine, queues
 * amdqp is not told about (amdqp_managed=0), bad packets, stalls, resets,
 * and the lifetime of a mapping against queue, fd and device.
 */
#include <stddef.h>
#include <sys/resource.h>

#include "common.h"
#include "kselftest_harness.h"

#define UQ_GPU_BASE	10000
#define UQ_RING		4096	/* 64 packets: small enough to wrap often */
#define UQ_LEN		(UQ_RING + AMDQP_SIM_CTL_SIZE)
/* Reserved per ring: room for the too-long mappings mmap_rules tries. */
#define UQ_RESERVE	(2 * UQ_LEN)
#define NSEC_PER_USEC	1000ULL

/* The HSA kernel-dispatch packet, as the executor reads it. */
struct aql_packet {
	uint16_t header;
	uint16_t setup;
	uint16_t workgroup_size_x;
	uint16_t workgroup_size_y;
	uint16_t workgroup_size_z;
	uint16_t reserved0;
	uint32_t grid_size_x;
	uint32_t grid_size_y;
	uint32_t grid_size_z;
	uint32_t private_segment_size;
	uint32_t group_segment_size;
	uint64_t kernel_object;
	uint64_t kernarg_address;
	uint64_t reserved2;
	uint64_t completion_signal;
};

_Static_assert(sizeof(struct aql_packet) == AMDQP_SIM_PACKET_SIZE, "packet");
_Static_assert(offsetof(struct aql_packet, kernel_object) ==
	       AMDQP_SIM_PKT_KERNEL_OBJECT_OFFSET, "kernel_object");
_Static_assert(offsetof(struct aql_packet, grid_size_x) ==
	       AMDQP_SIM_PKT_GRID_X_OFFSET, "grid_size_x");
_Static_assert(offsetof(struct aql_packet, workgroup_size_x) ==
	       AMDQP_SIM_PKT_WG_X_OFFSET, "workgroup_size_x");

/* Packet type 4 (AGENT_DISPATCH) is valid AQL the sim does not run. */
#define PKT_AGENT_DISPATCH	4

struct uq {
	uint32_t qid;
	uint64_t va;		/* reserved, then mapped, at this address */
	uint64_t offset;	/* mmap offset */
	uint8_t *ring;		/* == va once mapped */
	struct amdqp_sim_uq_ctl *ctl;
	uint64_t next;		/* next packet index to write */
};

/* An address range nothing else will use: where a ring goes. */
static uint64_t reserve(void)
{
	void *p = mmap(NULL, UQ_RESERVE, PROT_NONE,
		       MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);

	return p == MAP_FAILED ? 0 : (uintptr_t)p;
}

/* Reserve @va again after a failed MAP_FIXED may have dropped it. */
static int rereserve(uint64_t va)
{
	void *p = mmap((void *)(uintptr_t)va, UQ_RESERVE, PROT_NONE,
		       MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE | MAP_FIXED,
		       -1, 0);

	return p == MAP_FAILED ? -errno : 0;
}

static int uq_create(int sfd, uint32_t gpu, uint32_t prio, struct uq *q)
{
	int ret;

	memset(q, 0, sizeof(*q));
	q->va = reserve();
	if (!q->va)
		return -ENOMEM;
	ret = sim_create_uq(sfd, gpu, prio, q->va, UQ_RING, &q->qid,
			    &q->offset);
	if (ret) {
		munmap((void *)(uintptr_t)q->va, UQ_RESERVE);
		q->va = 0;
	}
	return ret;
}

/* mmap(2) of a ring; returns 0 or -errno. */
static int map_ring(int sfd, uint64_t va, size_t len, int flags,
		    uint64_t offset, void **out)
{
	void *p = mmap((void *)(uintptr_t)va, len, PROT_READ | PROT_WRITE,
		       flags, sfd, offset);

	if (p == MAP_FAILED)
		return -errno;
	if (out)
		*out = p;
	else if (p != (void *)(uintptr_t)va)
		munmap(p, len);
	return 0;
}

static int uq_map(int sfd, struct uq *q)
{
	void *p = NULL;
	int ret = map_ring(sfd, q->va, UQ_LEN, MAP_SHARED | MAP_FIXED,
			   q->offset, &p);

	if (ret)
		return ret;
	q->ring = p;
	q->ctl = (struct amdqp_sim_uq_ctl *)(q->ring + UQ_RING);
	return 0;
}

static int uq_create_map(int sfd, uint32_t gpu, uint32_t prio, struct uq *q)
{
	int ret = uq_create(sfd, gpu, prio, q);

	return ret ? ret : uq_map(sfd, q);
}

static void uq_unmap(struct uq *q)
{
	if (q->va)
		munmap((void *)(uintptr_t)q->va, UQ_RESERVE);
	q->va = 0;
	q->ring = NULL;
	q->ctl = NULL;
}

static struct aql_packet *uq_slot(struct uq *q, uint64_t index)
{
	return (struct aql_packet *)(q->ring + (index % (UQ_RING / 64)) * 64);
}

static uint64_t uq_read_index(struct uq *q)
{
	return __atomic_load_n(&q->ctl->read_index, __ATOMIC_ACQUIRE);
}

static int32_t uq_error(struct uq *q)
{
	return __atomic_load_n(&q->ctl->error, __ATOMIC_ACQUIRE);
}

/*
 * Write packet q->next, header last with release semantics, the way an
 * HSA runtime publishes a packet. No doorbell yet.
 */
static void uq_write(struct uq *q, uint16_t type, uint64_t ns,
		     uint32_t groups)
{
	struct aql_packet *p = uq_slot(q, q->next);

	p->setup = 1;
	p->workgroup_size_x = 64;
	p->workgroup_size_y = 1;
	p->workgroup_size_z = 1;
	p->grid_size_x = groups * 64;
	p->grid_size_y = 1;
	p->grid_size_z = 1;
	p->kernel_object = ns;
	__atomic_store_n(&p->header, type, __ATOMIC_RELEASE);
	q->next++;
	__atomic_store_n(&q->ctl->write_index, q->next, __ATOMIC_RELAXED);
}

static void uq_kernel(struct uq *q, uint64_t ns, uint32_t groups)
{
	uq_write(q, AMDQP_SIM_PKT_KERNEL_DISPATCH, ns, groups);
}

static void uq_doorbell(struct uq *q)
{
	__atomic_store_n(&q->ctl->doorbell, q->next, __ATOMIC_RELEASE);
}

/* Poll read_index (sleeping between looks) until it reaches @want. */
static int uq_wait(struct uq *q, uint64_t want, unsigned int timeout_ms)
{
	uint64_t end = now_ns() + timeout_ms * NSEC_PER_MSEC;

	while (uq_read_index(q) < want) {
		if (now_ns() > end)
			return -ETIMEDOUT;
		sleep_ms(1);
	}
	return 0;
}

/*
 * Keep storing the doorbell (with a new packet each time while there is
 * room) for @ms; returns the read_index seen at the end.
 */
static uint64_t uq_hammer(struct uq *q, unsigned int ms)
{
	uint64_t end = now_ns() + ms * NSEC_PER_MSEC;

	while (now_ns() < end) {
		if (q->next - uq_read_index(q) < UQ_RING / 64)
			uq_kernel(q, 5 * NSEC_PER_MSEC, 1);
		uq_doorbell(q);
		sleep_ms(10);
	}
	return uq_read_index(q);
}

FIXTURE(usermode) {
	int qfd;
	int sfd;
	int gpu;
	bool hws;
};

FIXTURE_VARIANT(usermode) {
	const char *mode;
	bool hws;
};

FIXTURE_VARIANT_ADD(usermode, hws) {
	.mode = "hws",
	.hws = true,
};

FIXTURE_VARIANT_ADD(usermode, mes) {
	.mode = "mes",
	.hws = false,
};

FIXTURE_SETUP(usermode)
{
	self->qfd = self->sfd = -1;
	self->gpu = 0;
	self->hws = variant->hws;
	if (!sim_available())
		SKIP(return, "amdqp and amdqp_sim not loaded");
	self->gpu = sim_new_device(UQ_GPU_BASE, variant->mode, 1, 4);
	ASSERT_LT(0, self->gpu);
	self->qfd = qp_open();
	ASSERT_LE(0, self->qfd);
	self->sfd = sim_open();
	ASSERT_LE(0, self->sfd);
}

FIXTURE_TEARDOWN(usermode)
{
	sim_env_close(self->qfd, self->sfd, self->gpu);
}

TEST_F(usermode, create_rules)
{
	/* The struct before mmap_offset existed. */
	struct create_v1 {
		uint32_t gpu_id;
		uint32_t priority;
		uint64_t ring_va;
		uint64_t ring_size;
		uint32_t flags;
		uint32_t queue_id;
	} v1 = { .gpu_id = self->gpu, .priority = 2 };
	const unsigned long create_v1 =
		_IOWR(AMDQP_SIM_IOC_MAGIC, 0x40, struct create_v1);
	uint64_t va = reserve(), off1, off2, seq;
	uint32_t id, id2;
	struct amdqp_queue_info qi;
	char path[160], buf[8];
	uint64_t v;

	ASSERT_NE(0, va);
	EXPECT_EQ(0, ioctl(self->sfd, create_v1, &v1));
	EXPECT_NE(0, v1.queue_id);
	v1.ring_va = va;
	v1.ring_size = UQ_RING;
	v1.flags = AMDQP_SIM_QUEUE_USERMODE;
	EXPECT_EQ(-1, ioctl(self->sfd, create_v1, &v1));
	EXPECT_EQ(EINVAL, errno);

	EXPECT_EQ(-EINVAL, sim_create_uq(self->sfd, self->gpu, 2, 0, UQ_RING,
					 &id, NULL));
	EXPECT_EQ(-EINVAL, sim_create_uq(self->sfd, self->gpu, 2, va + 64,
					 UQ_RING, &id, NULL));
	EXPECT_EQ(-EINVAL, sim_create_uq(self->sfd, self->gpu, 2, va, 0, &id,
					 NULL));
	EXPECT_EQ(-EINVAL, sim_create_uq(self->sfd, self->gpu, 2, va, 2048,
					 &id, NULL));
	EXPECT_EQ(-EINVAL, sim_create_uq(self->sfd, self->gpu, 2, va, 6144,
					 &id, NULL));
	EXPECT_EQ(-EINVAL, sim_create_uq(self->sfd, self->gpu, 2, va,
					 2 * AMDQP_SIM_RING_MAX, &id, NULL));
	EXPECT_EQ(-EINVAL, sim_create_uq(self->sfd, self->gpu, 2,
					 0xffff800000000000ULL, UQ_RING, &id,
					 NULL));
	EXPECT_EQ(-EINVAL, sim_create_uq(self->sfd, self->gpu, 16, va,
					 UQ_RING, &id, NULL));

	ASSERT_EQ(0, sim_create_uq(self->sfd, self->gpu, 2, va, UQ_RING, &id,
				   &off1));
	ASSERT_EQ(0, sim_create_uq(self->sfd, self->gpu, 2, va + UQ_LEN,
				   AMDQP_SIM_RING_MAX, &id2, &off2));
	EXPECT_NE(off1, off2);
	EXPECT_EQ(0, off1 % 4096);
	EXPECT_EQ(0, off2 % 4096);
	/* amdqp names it by the ring the owner declared. */
	ASSERT_EQ(0, qp_queue_info(self->qfd, getpid(), self->gpu, id, &qi));
	EXPECT_EQ(va, qi.ring_va);
	EXPECT_EQ(UQ_RING, qi.ring_size);
	/* Fed through its ring only. */
	EXPECT_EQ(-EINVAL, sim_submit(self->sfd, self->gpu, id, 1000, 1, 1,
				      &seq));

	/* The knobs and their defaults. */
	ASSERT_EQ(0, sim_knob_get(self->gpu, "doorbell_poll_us", &v));
	EXPECT_EQ(100, v);
	sim_knob_path(path, sizeof(path), self->gpu, "amdqp_managed");
	ASSERT_LT(0, read_str(path, buf, sizeof(buf)));
	EXPECT_EQ('Y', buf[0]);
}

TEST_F(usermode, mmap_rules)
{
	struct uq q;
	void *p;
	int i;

	ASSERT_EQ(0, uq_create(self->sfd, self->gpu, 2, &q));

	/* Private, short, long, elsewhere, unknown offset: all EINVAL. */
	EXPECT_EQ(-EINVAL, map_ring(self->sfd, q.va, UQ_LEN,
				    MAP_PRIVATE | MAP_FIXED, q.offset, NULL));
	ASSERT_EQ(0, rereserve(q.va));
	EXPECT_EQ(-EINVAL, map_ring(self->sfd, q.va, UQ_RING,
				    MAP_SHARED | MAP_FIXED, q.offset, NULL));
	ASSERT_EQ(0, rereserve(q.va));
	EXPECT_EQ(-EINVAL, map_ring(self->sfd, q.va, UQ_LEN + 4096,
				    MAP_SHARED | MAP_FIXED, q.offset, NULL));
	ASSERT_EQ(0, rereserve(q.va));
	EXPECT_EQ(-EINVAL, map_ring(self->sfd, 0, UQ_LEN, MAP_SHARED, q.offset,
				    NULL));
	EXPECT_EQ(-EINVAL, map_ring(self->sfd, q.va, UQ_LEN,
				    MAP_SHARED | MAP_FIXED,
				    q.offset + (64ULL << 20), NULL));
	ASSERT_EQ(0, rereserve(q.va));

	ASSERT_EQ(0, uq_map(self->sfd, &q));
	EXPECT_EQ(q.va, (uintptr_t)q.ring);
	/* Every slot starts INVALID; the control page starts zeroed. */
	for (i = 0; i < UQ_RING / 64; i++)
		EXPECT_EQ(AMDQP_SIM_PKT_INVALID, uq_slot(&q, i)->header);
	EXPECT_EQ(0, q.ctl->read_index);
	EXPECT_EQ(0, q.ctl->doorbell);
	EXPECT_EQ(0, q.ctl->error);
	/* A second shared mapping elsewhere is refused too. */
	EXPECT_EQ(-EINVAL, map_ring(self->sfd, 0, UQ_LEN, MAP_SHARED, q.offset,
				    &p));
	uq_unmap(&q);
}

/*
 * Packets run in order, one at a time, read_index following them, and
 * consumed slots go back to INVALID; the thread that submits and watches
 * never blocks in the kernel.
 */
TEST_F(usermode, packets_in_order)
{
	struct rusage r0, r1;
	struct amdqp_sim_query qr;
	uint64_t t0, last_done = 0, seen = 0, n = 6, i;
	struct uq q;

	ASSERT_EQ(0, uq_create_map(self->sfd, self->gpu, 7, &q));
	/* Touch the control page and packets before counting. */
	uq_slot(&q, 0)->reserved2 = 0;
	q.ctl->owner0[0] = 1;
	ASSERT_EQ(0, getrusage(RUSAGE_THREAD, &r0));
	t0 = now_ns();
	for (i = 0; i < n; i++) {
		if (i == 3)
			uq_write(&q, AMDQP_SIM_PKT_BARRIER_AND, 0, 0);
		else
			uq_kernel(&q, 30 * NSEC_PER_MSEC, 1);
	}
	uq_doorbell(&q);
	/* Spin, no system call: read_index and completed_ns only go up. */
	while (seen < n && now_ns() - t0 < 20 * NSEC_PER_SEC) {
		uint64_t ri = uq_read_index(&q);
		uint64_t done = __atomic_load_n(&q.ctl->completed_ns,
						__ATOMIC_RELAXED);

		if (ri < seen || (ri && done < last_done))
			break;
		seen = ri;
		if (ri)
			last_done = done;
	}
	ASSERT_EQ(0, getrusage(RUSAGE_THREAD, &r1));
	ASSERT_EQ(n, seen);
	EXPECT_EQ(r0.ru_nvcsw, r1.ru_nvcsw)
		TH_LOG("the submitting thread blocked in the kernel");
	/* Five 30 ms kernels one after the other; the barrier takes none. */
	EXPECT_LE(t0 + 5 * 30 * NSEC_PER_MSEC * 9 / 10,
		  __atomic_load_n(&q.ctl->completed_ns, __ATOMIC_RELAXED));
	for (i = 0; i < n; i++)
		EXPECT_EQ(AMDQP_SIM_PKT_INVALID, uq_slot(&q, i)->header);
	EXPECT_EQ(0, uq_error(&q));
	ASSERT_EQ(0, sim_query(self->sfd, self->gpu, q.qid, &qr));
	EXPECT_EQ(n, qr.rptr);
	EXPECT_EQ(n, qr.wptr);
	EXPECT_LE(5 * 30 * NSEC_PER_MSEC * 9 / 10, qr.busy_ns);
	/* WAIT knows the packets by sequence number. */
	EXPECT_EQ(0, sim_wait(self->sfd, self->gpu, q.qid, n, 0, NULL));
	uq_unmap(&q);
}

/* Many laps of a 64-slot ring: the owner reuses slots read_index freed. */
TEST_F(usermode, ring_wraps)
{
	const uint64_t total = 1000;
	struct amdqp_queue_info qi;
	uint64_t end = now_ns() + 60 * NSEC_PER_SEC;
	struct uq q;

	ASSERT_EQ(0, uq_create_map(self->sfd, self->gpu, 7, &q));
	while (uq_read_index(&q) < total && now_ns() < end) {
		while (q.next < total && q.next - uq_read_index(&q) < 64)
			uq_kernel(&q, 20 * NSEC_PER_USEC, 1);
		uq_doorbell(&q);
		sleep_ms(1);
	}
	ASSERT_EQ(total, uq_read_index(&q));
	EXPECT_EQ(0, uq_error(&q));
	ASSERT_EQ(0, qp_queue_info(self->qfd, getpid(), self->gpu, q.qid, &qi));
	EXPECT_EQ(total, qi.submitted);
	EXPECT_EQ(total, qi.completed);
	uq_unmap(&q);
}

/* Completion times of the last packets of @a and @b, this far apart. */
static uint64_t apart_ns(struct uq *a, struct uq *b)
{
	uint64_t x = a->ctl->completed_ns, y = b->ctl->completed_ns;

	return x > y ? x - y : y - x;
}

/*
 * Work groups are slots: two kernels of 2 groups run side by side on a
 * 4-slot device, two of 4 groups one after the other. Both queues are
 * taken up by the same poll, so their completions tell which it was.
 */
TEST_F(usermode, width_from_grid)
{
	struct uq a, b;

	ASSERT_EQ(0, uq_create_map(self->sfd, self->gpu, 7, &a));
	ASSERT_EQ(0, uq_create_map(self->sfd, self->gpu, 7, &b));
	uq_kernel(&a, 300 * NSEC_PER_MSEC, 2);
	uq_kernel(&b, 300 * NSEC_PER_MSEC, 2);
	uq_doorbell(&a);
	uq_doorbell(&b);
	ASSERT_EQ(0, uq_wait(&a, 1, 10000));
	ASSERT_EQ(0, uq_wait(&b, 1, 10000));
	EXPECT_GT(150 * NSEC_PER_MSEC, apart_ns(&a, &b));

	uq_kernel(&a, 300 * NSEC_PER_MSEC, 4);
	uq_kernel(&b, 300 * NSEC_PER_MSEC, 4);
	uq_doorbell(&a);
	uq_doorbell(&b);
	ASSERT_EQ(0, uq_wait(&a, 2, 10000));
	ASSERT_EQ(0, uq_wait(&b, 2, 10000));
	EXPECT_LE(300 * NSEC_PER_MSEC, apart_ns(&a, &b));
	uq_unmap(&a);
	uq_unmap(&b);
}

/*
 * amdqp suspends the queue by its ring VA: its doorbell keeps being
 * written, nothing is consumed, and it picks up where it stopped.
 */
TEST_F(usermode, suspended_by_amdqp)
{
	struct amdqp_sim_query qr;
	uint64_t r1, wptr;
	uint32_t state = 0;
	struct uq q;
	int i;

	ASSERT_EQ(0, uq_create_map(self->sfd, self->gpu, 2, &q));
	for (i = 0; i < 8; i++)
		uq_kernel(&q, 50 * NSEC_PER_MSEC, 1);
	uq_doorbell(&q);
	ASSERT_EQ(0, uq_wait(&q, 2, 10000));

	ASSERT_EQ(0, qp_one_ring(self->qfd, AMDQP_IOC_SUSPEND, getpid(), q.va,
				 &state));
	EXPECT_TRUE(state & AMDQP_QSTATE_SUSPENDED);
	ASSERT_EQ(0, sim_query(self->sfd, self->gpu, q.qid, &qr));
	EXPECT_EQ(0, qr.mapped);
	r1 = uq_read_index(&q);
	wptr = qr.wptr;
	EXPECT_GT(8, r1);
	EXPECT_EQ(r1, uq_hammer(&q, 400)) TH_LOG("progress while suspended");
	ASSERT_EQ(0, sim_query(self->sfd, self->gpu, q.qid, &qr));
	EXPECT_EQ(wptr, qr.wptr) TH_LOG("packets taken up while suspended");
	EXPECT_LT(wptr, q.next);

	ASSERT_EQ(0, qp_one_ring(self->qfd, AMDQP_IOC_RESUME, getpid(), q.va,
				 NULL));
	EXPECT_EQ(0, uq_wait(&q, q.next, 20000));
	EXPECT_EQ(0, uq_error(&q));
	uq_unmap(&q);
}

/*
 * Without amdqp (amdqp_managed=0, a stock amdgpu): amdqp cannot see the
 * queue; the owner takes it off and back with UPDATE_QUEUE, one scheduler
 * update each.
 */
TEST_F(usermode, update_queue_without_amdqp)
{
	uint64_t s0, s1, s2, u0, u1, u2, m0, m1, m2, r1;
	struct amdqp_queue_info infos[8];
	struct amdqp_sim_query qr;
	uint32_t n = 0;
	struct uq q;
	int i;

	ASSERT_EQ(0, sim_knob_set(self->gpu, "amdqp_managed", 0));
	ASSERT_EQ(0, uq_create_map(self->sfd, self->gpu, 2, &q));
	ASSERT_EQ(0, qp_list(self->qfd, self->gpu, 0, infos, ARRAY_LEN(infos),
			     &n));
	EXPECT_EQ(0, n);
	EXPECT_EQ(-ENOENT, qp_one_ring(self->qfd, AMDQP_IOC_SUSPEND, getpid(),
				       q.va, NULL));

	for (i = 0; i < 8; i++)
		uq_kernel(&q, 50 * NSEC_PER_MSEC, 1);
	uq_doorbell(&q);
	ASSERT_EQ(0, uq_wait(&q, 2, 10000));

	ASSERT_EQ(0, sim_counter(self->gpu, "sched_updates", &s0));
	ASSERT_EQ(0, sim_counter(self->gpu, "unmap_packets", &u0));
	ASSERT_EQ(0, sim_counter(self->gpu, "map_packets", &m0));
	ASSERT_EQ(0, sim_update_queue(self->sfd, self->gpu, q.qid, 0, 2));
	ASSERT_EQ(0, sim_counter(self->gpu, "sched_updates", &s1));
	ASSERT_EQ(0, sim_counter(self->gpu, "unmap_packets", &u1));
	ASSERT_EQ(0, sim_counter(self->gpu, "map_packets", &m1));
	EXPECT_EQ(s0 + 1, s1);
	EXPECT_EQ(u0 + 1, u1);
	EXPECT_EQ(m0 + (self->hws ? 1 : 0), m1);
	ASSERT_EQ(0, sim_query(self->sfd, self->gpu, q.qid, &qr));
	EXPECT_EQ(0, qr.mapped);
	r1 = uq_read_index(&q);
	EXPECT_EQ(r1, uq_hammer(&q, 400)) TH_LOG("progress while off");

	ASSERT_EQ(0, sim_update_queue(self->sfd, self->gpu, q.qid, 100, 2));
	ASSERT_EQ(0, sim_counter(self->gpu, "sched_updates", &s2));
	ASSERT_EQ(0, sim_counter(self->gpu, "unmap_packets", &u2));
	ASSERT_EQ(0, sim_counter(self->gpu, "map_packets", &m2));
	EXPECT_EQ(s1 + 1, s2);
	EXPECT_EQ(u1 + (self->hws ? 1 : 0), u2);
	EXPECT_EQ(m1 + 1, m2);
	ASSERT_EQ(0, sim_query(self->sfd, self->gpu, q.qid, &qr));
	EXPECT_EQ(1, qr.mapped);
	EXPECT_EQ(0, uq_wait(&q, q.next, 20000));

	/* Still invisible to amdqp, and so is its owner's exit. */
	EXPECT_EQ(-ENOENT, qp_queue_info(self->qfd, getpid(), self->gpu,
					 q.qid, &infos[0]));
	ASSERT_EQ(0, qp_set_mask(self->qfd,
				 1ULL << AMDQP_EVENT_PROCESS_EXIT |
				 1ULL << AMDQP_EVENT_QUEUE_DESTROYED));
	uq_unmap(&q);
	close(self->sfd);
	self->sfd = -1;
	EXPECT_EQ(-ETIMEDOUT, qp_wait_event(self->qfd, AMDQP_EVENT_PROCESS_EXIT,
					    self->gpu, 0, 300, NULL));
}

TEST_F(usermode, update_queue_input)
{
	struct amdqp_sim_update_queue u = { .gpu_id = self->gpu };
	const unsigned long short_cmd =
		_IOW(AMDQP_SIM_IOC_MAGIC, 0x45, uint64_t);
	uint32_t legacy;
	int other;

	ASSERT_EQ(0, sim_create(self->sfd, self->gpu, 2, &legacy));
	EXPECT_EQ(-EINVAL, sim_update_queue(self->sfd, self->gpu, legacy, 101,
					    2));
	EXPECT_EQ(-EINVAL, sim_update_queue(self->sfd, self->gpu, legacy, 100,
					    16));
	EXPECT_EQ(-ENOENT, sim_update_queue(self->sfd, self->gpu, 0xdead, 100,
					    2));
	u.queue_id = legacy;
	EXPECT_EQ(-1, ioctl(self->sfd, short_cmd, &u));
	EXPECT_EQ(EINVAL, errno);
	other = sim_open();
	ASSERT_LE(0, other);
	EXPECT_EQ(-ENOENT, sim_update_queue(other, self->gpu, legacy, 0, 2));
	close(other);
	/* Works on SUBMIT queues too. */
	EXPECT_EQ(0, sim_update_queue(self->sfd, self->gpu, legacy, 0, 2));
	EXPECT_EQ(0, sim_update_queue(self->sfd, self->gpu, legacy, 1, 2));
}

/* Is the queue on the hardware, and as amdqp sees it, suspended? */
static int on_hw(int sfd, uint32_t gpu, uint32_t qid)
{
	struct amdqp_sim_query qr;
	int ret = sim_query(sfd, gpu, qid, &qr);

	return ret ? ret : (int)qr.mapped;
}

/*
 * amdqp's suspension and the owner's UPDATE_QUEUE are two reasons to be
 * off the hardware: neither undoes the other.
 */
TEST_F(usermode, two_reasons)
{
	pid_t me = getpid();
	uint32_t qid;

	ASSERT_EQ(0, sim_create(self->sfd, self->gpu, 2, &qid));
	ASSERT_EQ(1, on_hw(self->sfd, self->gpu, qid));

	/* amdqp off, owner puts it back: still off, amdqp still holds it. */
	ASSERT_EQ(0, qp_suspend1(self->qfd, me, self->gpu, qid));
	EXPECT_EQ(0, on_hw(self->sfd, self->gpu, qid));
	ASSERT_EQ(0, sim_update_queue(self->sfd, self->gpu, qid, 100, 2));
	EXPECT_EQ(0, on_hw(self->sfd, self->gpu, qid));
	EXPECT_EQ(AMDQP_QSTATE_SUSPENDED | AMDQP_QSTATE_HELD,
		  qp_state(self->qfd, me, self->gpu, qid));
	ASSERT_EQ(0, qp_resume1(self->qfd, me, self->gpu, qid));
	EXPECT_EQ(1, on_hw(self->sfd, self->gpu, qid));

	/* Owner off, amdqp suspends and resumes: still off. */
	ASSERT_EQ(0, sim_update_queue(self->sfd, self->gpu, qid, 0, 2));
	EXPECT_EQ(0, on_hw(self->sfd, self->gpu, qid));
	ASSERT_EQ(0, qp_suspend1(self->qfd, me, self->gpu, qid));
	EXPECT_EQ(0, on_hw(self->sfd, self->gpu, qid));
	ASSERT_EQ(0, qp_resume1(self->qfd, me, self->gpu, qid));
	EXPECT_EQ(0, on_hw(self->sfd, self->gpu, qid));
	EXPECT_EQ(0, qp_state(self->qfd, me, self->gpu, qid));
	ASSERT_EQ(0, sim_update_queue(self->sfd, self->gpu, qid, 100, 2));
	EXPECT_EQ(1, on_hw(self->sfd, self->gpu, qid));

	/* A reset drops amdqp's reason, not the owner's. */
	ASSERT_EQ(0, sim_update_queue(self->sfd, self->gpu, qid, 0, 2));
	ASSERT_EQ(0, qp_suspend1(self->qfd, me, self->gpu, qid));
	ASSERT_EQ(0, sim_knob_set(self->gpu, "reset", 1));
	EXPECT_EQ(0, on_hw(self->sfd, self->gpu, qid));
	ASSERT_EQ(0, sim_update_queue(self->sfd, self->gpu, qid, 100, 2));
	EXPECT_EQ(1, on_hw(self->sfd, self->gpu, qid));
}

/* The executor stops at a packet it cannot run and says why. */
TEST_F(usermode, bad_packet)
{
	struct amdqp_sim_query qr;
	struct uq q, z;

	ASSERT_EQ(0, uq_create_map(self->sfd, self->gpu, 7, &q));
	uq_kernel(&q, NSEC_PER_MSEC, 1);
	uq_write(&q, PKT_AGENT_DISPATCH, 0, 0);
	uq_kernel(&q, NSEC_PER_MSEC, 1);
	uq_doorbell(&q);
	ASSERT_EQ(0, uq_wait(&q, 1, 10000));
	sleep_ms(200);
	EXPECT_EQ(1, uq_read_index(&q));
	EXPECT_EQ(-EINVAL, uq_error(&q));
	EXPECT_EQ(PKT_AGENT_DISPATCH, uq_slot(&q, 1)->header);
	ASSERT_EQ(0, sim_query(self->sfd, self->gpu, q.qid, &qr));
	EXPECT_EQ(1, qr.rptr);
	EXPECT_EQ(1, qr.wptr);
	/* Stopped for good: fixing the packet changes nothing. */
	uq_slot(&q, 1)->header = AMDQP_SIM_PKT_KERNEL_DISPATCH;
	uq_slot(&q, 1)->kernel_object = NSEC_PER_MSEC;
	sleep_ms(100);
	EXPECT_EQ(1, uq_read_index(&q));

	/* A kernel of no duration is no kernel either. */
	ASSERT_EQ(0, uq_create_map(self->sfd, self->gpu, 7, &z));
	uq_kernel(&z, 0, 1);
	uq_doorbell(&z);
	sleep_ms(200);
	EXPECT_EQ(0, uq_read_index(&z));
	EXPECT_EQ(-EINVAL, uq_error(&z));
	uq_unmap(&q);
	uq_unmap(&z);
}

/* A doorbell ahead of the packets stalls the queue until they appear. */
TEST_F(usermode, invalid_slot_stalls)
{
	struct uq q;

	ASSERT_EQ(0, uq_create_map(self->sfd, self->gpu, 7, &q));
	uq_kernel(&q, NSEC_PER_MSEC, 1);
	__atomic_store_n(&q.ctl->doorbell, 3, __ATOMIC_RELEASE);
	ASSERT_EQ(0, uq_wait(&q, 1, 10000));
	sleep_ms(200);
	EXPECT_EQ(1, uq_read_index(&q));
	EXPECT_EQ(0, uq_error(&q));
	/* Published without another doorbell: the poll finds them. */
	uq_kernel(&q, NSEC_PER_MSEC, 1);
	uq_write(&q, AMDQP_SIM_PKT_BARRIER_OR, 0, 0);
	EXPECT_EQ(0, uq_wait(&q, 3, 10000));
	EXPECT_EQ(0, uq_error(&q));
	uq_unmap(&q);
}

/* A reset throws away what the device took up; the queue goes on. */
TEST_F(usermode, reset_loses_packets)
{
	struct amdqp_sim_query qr;
	uint64_t end = now_ns() + 10 * NSEC_PER_SEC;
	struct uq q;
	int i;

	ASSERT_EQ(0, uq_create_map(self->sfd, self->gpu, 7, &q));
	for (i = 0; i < 3; i++)
		uq_kernel(&q, 2 * NSEC_PER_SEC, 1);
	uq_doorbell(&q);
	do {
		ASSERT_EQ(0, sim_query(self->sfd, self->gpu, q.qid, &qr));
		sleep_ms(5);
	} while (qr.wptr < 3 && now_ns() < end);
	ASSERT_EQ(3, qr.wptr);
	EXPECT_EQ(0, uq_read_index(&q));

	ASSERT_EQ(0, sim_knob_set(self->gpu, "reset", 1));
	EXPECT_EQ(3, uq_read_index(&q));
	EXPECT_EQ(-EIO, uq_error(&q));
	for (i = 0; i < 3; i++)
		EXPECT_EQ(AMDQP_SIM_PKT_INVALID, uq_slot(&q, i)->header);
	EXPECT_EQ(-EIO, sim_wait(self->sfd, self->gpu, q.qid, 3, 0, NULL));

	uq_kernel(&q, NSEC_PER_MSEC, 1);
	uq_doorbell(&q);
	EXPECT_EQ(0, uq_wait(&q, 4, 10000));
	uq_unmap(&q);
}

/*
 * The ring outlives its queue while mapped, and a mapping keeps its fd's
 * queues alive: whatever the order of destroy, close, munmap and device
 * removal, nothing breaks.
 */
TEST_F(usermode, destroy_while_mapped)
{
	struct amdqp_queue_info qi;
	uint32_t gpu = self->gpu;
	struct uq a, b, c;
	int sfd2;

	/* DESTROY_QUEUE, then use the mapping, then munmap. */
	ASSERT_EQ(0, uq_create_map(self->sfd, self->gpu, 7, &a));
	uq_kernel(&a, 500 * NSEC_PER_MSEC, 1);
	uq_doorbell(&a);
	sleep_ms(50);
	ASSERT_EQ(0, sim_destroy(self->sfd, self->gpu, a.qid));
	uq_kernel(&a, NSEC_PER_MSEC, 1);
	uq_doorbell(&a);
	sleep_ms(100);
	EXPECT_EQ(0, uq_read_index(&a));
	EXPECT_EQ(-EINVAL, map_ring(self->sfd, a.va, UQ_LEN,
				    MAP_SHARED | MAP_FIXED, a.offset, NULL));
	uq_unmap(&a);

	/* close() first: the mapping holds the fd; munmap ends the queue. */
	sfd2 = sim_open();
	ASSERT_LE(0, sfd2);
	ASSERT_EQ(0, uq_create_map(sfd2, self->gpu, 7, &b));
	close(sfd2);
	EXPECT_EQ(0, qp_queue_info(self->qfd, getpid(), self->gpu, b.qid,
				   &qi));
	uq_kernel(&b, NSEC_PER_MSEC, 1);
	uq_doorbell(&b);
	EXPECT_EQ(0, uq_wait(&b, 1, 10000));
	uq_unmap(&b);
	EXPECT_EQ(-ENOENT, qp_queue_info(self->qfd, getpid(), self->gpu,
					 b.qid, &qi));

	/* Device removal under a mapped ring. */
	ASSERT_EQ(0, uq_create_map(self->sfd, self->gpu, 7, &c));
	uq_kernel(&c, 500 * NSEC_PER_MSEC, 1);
	uq_doorbell(&c);
	sleep_ms(50);
	ASSERT_EQ(0, sim_del_device(gpu));
	self->gpu = 0;
	uq_kernel(&c, NSEC_PER_MSEC, 1);
	uq_doorbell(&c);
	sleep_ms(50);
	EXPECT_EQ(0, uq_read_index(&c));
	EXPECT_EQ(-ENODEV, sim_update_queue(self->sfd, gpu, c.qid, 0, 2));
	EXPECT_EQ(-ENODEV, map_ring(self->sfd, 0, UQ_LEN, MAP_SHARED,
				    c.offset, NULL));
	uq_unmap(&c);
	close(self->sfd);
	self->sfd = -1;
}

/* A forked child shares the mapping; the queue stays its creator's. */
TEST_F(usermode, mapping_survives_fork)
{
	struct uq q;
	pid_t pid;
	int status;

	ASSERT_EQ(0, uq_create_map(self->sfd, self->gpu, 7, &q));
	pid = fork();
	ASSERT_LE(0, pid);
	if (!pid) {
		uq_kernel(&q, NSEC_PER_MSEC, 1);
		uq_doorbell(&q);
		_exit(uq_wait(&q, 1, 10000) ? 1 : 0);
	}
	ASSERT_EQ(pid, waitpid(pid, &status, 0));
	EXPECT_TRUE(WIFEXITED(status) && !WEXITSTATUS(status));
	EXPECT_EQ(1, uq_read_index(&q));
	uq_unmap(&q);
}

/* Doorbell polling knob: any value, even 0, keeps queues running. */
TEST_F(usermode, poll_knob)
{
	static const uint64_t vals[] = { 0, 5000, 100 };
	unsigned int i;
	struct uq q;

	ASSERT_EQ(0, uq_create_map(self->sfd, self->gpu, 7, &q));
	for (i = 0; i < ARRAY_LEN(vals); i++) {
		ASSERT_EQ(0, sim_knob_set(self->gpu, "doorbell_poll_us",
					  vals[i]));
		uq_kernel(&q, NSEC_PER_MSEC, 1);
		uq_doorbell(&q);
		EXPECT_EQ(0, uq_wait(&q, i + 1, 10000));
	}
	uq_unmap(&q);
}

TEST_HARNESS_MAIN
