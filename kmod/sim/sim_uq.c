// SPDX-License-Identifier: GPL-2.0
/*
 * User-mode queues: a ring of AQL packets and a control page that the
 * owner maps and feeds without system calls, the way an AQL queue is fed
 * on hardware. The executor polls the doorbells of the queues that are on
 * the (virtual) hardware, takes ready packets up as work items, and
 * publishes its read index as each one completes.
 */
#include <linux/math.h>
#include <linux/minmax.h>
#include <linux/mm.h>
#include <linux/slab.h>
#include <linux/vmalloc.h>
#include <linux/amdqp_sim.h>

#include "sim.h"

/*
 * Bounded work under sim_dev.lock: one poll takes up at most
 * SIM_FETCH_PER_QUEUE packets of a queue and SIM_FETCH_BUDGET in all.
 */
#define SIM_FETCH_PER_QUEUE	32
#define SIM_FETCH_BUDGET	128

/*
 * Doorbells are polled every doorbell_poll_us while a doorbell of the
 * device moved (or a user-mode queue came on the hardware) in the last
 * SIM_DB_IDLE_NS; after that every SIM_DB_SLOW_POLL_NS, so that an idle
 * device costs 100 wake-ups a second, not 10000 (in the TCG test VM a
 * quarter of a vCPU at 100 us). A packet written after a quiet spell
 * therefore waits up to 10 ms to be taken up. Polls shorter than
 * SIM_DB_MIN_POLL_US would starve the CPU the thread runs on.
 */
#define SIM_DB_IDLE_NS		(100 * NSEC_PER_MSEC)
#define SIM_DB_SLOW_POLL_NS	(10 * NSEC_PER_MSEC)
#define SIM_DB_MIN_POLL_US	10

static struct amdqp_sim_uq_ctl *sim_ring_ctl(const struct sim_ring *r)
{
	return r->buf + r->size;
}

static u8 *sim_ring_packet(const struct sim_ring *r, u64 index)
{
	return r->buf + (index & (r->nslots - 1)) * AMDQP_SIM_PACKET_SIZE;
}

struct sim_ring *sim_ring_alloc(u64 va, u64 size)
{
	struct sim_ring *r;
	u32 i;

	r = kzalloc(sizeof(*r), GFP_KERNEL);
	if (!r)
		return NULL;
	r->buf = vmalloc_user(size + AMDQP_SIM_CTL_SIZE);
	if (!r->buf) {
		kfree(r);
		return NULL;
	}
	kref_init(&r->ref);
	r->va = va;
	r->size = size;
	r->nslots = size / AMDQP_SIM_PACKET_SIZE;
	/* What an HSA runtime does to a new ring: no slot holds a packet. */
	for (i = 0; i < r->nslots; i++)
		*(u16 *)sim_ring_packet(r, i) = AMDQP_SIM_PKT_INVALID;
	return r;
}

static void sim_ring_free(struct kref *ref)
{
	struct sim_ring *r = container_of(ref, struct sim_ring, ref);

	vfree(r->buf);
	kfree(r);
}

void sim_ring_get(struct sim_ring *r)
{
	kref_get(&r->ref);
}

void sim_ring_put(struct sim_ring *r)
{
	kref_put(&r->ref, sim_ring_free);
}

/* Each VMA holds a reference: forks and splits open, unmaps close. */
static void sim_ring_vm_open(struct vm_area_struct *vma)
{
	sim_ring_get(vma->vm_private_data);
}

static void sim_ring_vm_close(struct vm_area_struct *vma)
{
	sim_ring_put(vma->vm_private_data);
}

static const struct vm_operations_struct sim_ring_vm_ops = {
	.open = sim_ring_vm_open,
	.close = sim_ring_vm_close,
};

/*
 * Only the whole buffer, shared, at the address declared at creation:
 * the ring VA is how amdqp and its users name the queue, so it must be
 * where the ring really is.
 */
int sim_ring_mmap(struct sim_ring *r, struct vm_area_struct *vma)
{
	int ret;

	if (!(vma->vm_flags & VM_SHARED) || vma->vm_start != r->va ||
	    vma->vm_end - vma->vm_start != r->size + AMDQP_SIM_CTL_SIZE)
		return -EINVAL;
	ret = remap_vmalloc_range(vma, r->buf, 0);
	if (ret)
		return ret;
	sim_ring_get(r);
	vma->vm_private_data = r;
	vma->vm_ops = &sim_ring_vm_ops;
	return 0;
}

void sim_stash_init(struct sim_stash *st)
{
	INIT_LIST_HEAD(&st->free);
	st->n = 0;
}

/* Top the stash up; false if memory ran out before it was full. */
bool sim_stash_fill(struct sim_stash *st)
{
	while (st->n < SIM_FETCH_BUDGET) {
		struct sim_work *w = kmalloc(sizeof(*w), GFP_KERNEL);

		if (!w)
			return false;
		list_add(&w->node, &st->free);
		st->n++;
	}
	return true;
}

void sim_stash_free(struct sim_stash *st)
{
	struct sim_work *w, *tmp;

	list_for_each_entry_safe(w, tmp, &st->free, node)
		kfree(w);
	sim_stash_init(st);
}

/*
 * Read one packet (the header already read, with acquire semantics, as
 * @type) into @w. False for a packet that stops the queue.
 */
static bool sim_packet_parse(const u8 *p, u32 type, struct sim_work *w)
{
	u64 grid;
	u16 wg;

	w->count = 1;
	w->duration_ns = 0;
	w->width = 0;
	w->barrier = false;
	switch (type) {
	case AMDQP_SIM_PKT_BARRIER_AND:
	case AMDQP_SIM_PKT_BARRIER_OR:
		w->barrier = true;
		return true;
	case AMDQP_SIM_PKT_KERNEL_DISPATCH:
		w->duration_ns = READ_ONCE(*(const u64 *)
				(p + AMDQP_SIM_PKT_KERNEL_OBJECT_OFFSET));
		if (!w->duration_ns || w->duration_ns > SIM_MAX_DURATION_NS)
			return false;
		grid = READ_ONCE(*(const u32 *)(p + AMDQP_SIM_PKT_GRID_X_OFFSET));
		wg = READ_ONCE(*(const u16 *)(p + AMDQP_SIM_PKT_WG_X_OFFSET));
		/* Work groups = slots; 0 (or no group size) = all of them. */
		if (wg)
			w->width = min_t(u64, DIV_ROUND_UP_ULL(grid, wg),
					 U32_MAX);
		return true;
	default:
		return false;
	}
}

/*
 * Take the ready packets of @sq up as work items, in ring order. A slot
 * whose type is still INVALID stalls the queue (the owner has not
 * published it yet); a packet the executor cannot run stops it. Returns
 * false when the stash ran dry first.
 */
static bool sim_uq_fetch(struct sim_dev *sd, struct sim_queue *sq,
			 struct sim_stash *st, u64 now)
{
	struct sim_ring *r = sq->uq;
	struct amdqp_sim_uq_ctl *ctl = sim_ring_ctl(r);
	unsigned int n;
	u64 db, end;

	/* Pairs with the owner's release store: packets below it are ready. */
	db = smp_load_acquire(&ctl->doorbell);
	if (db != sq->uq_db_seen) {
		sq->uq_db_seen = db;
		sd->db_active_ns = now;
	}
	/* Slots at or past uq_done + nslots are the owner's to fill. */
	end = min(db, sq->uq_done + r->nslots);
	for (n = 0; sq->uq_fetch < end && n < SIM_FETCH_PER_QUEUE; n++) {
		const u8 *p = sim_ring_packet(r, sq->uq_fetch);
		struct sim_work *w;
		u32 type;

		/* The owner stores the header last: the body is written. */
		type = smp_load_acquire((const u16 *)p) &
		       AMDQP_SIM_PKT_TYPE_MASK;
		if (type == AMDQP_SIM_PKT_INVALID)
			break;
		if (!st->n)
			return false;
		w = list_first_entry(&st->free, struct sim_work, node);
		if (!sim_packet_parse(p, type, w)) {
			sq->uq_stopped = true;
			WRITE_ONCE(ctl->error, -EINVAL);
			break;
		}
		st->n--;
		if (list_empty(&sq->work))
			sq->head_since = now;
		list_move_tail(&w->node, &sq->work);
		sq->uq_fetch++;
		sq->wptr++;
	}
	return true;
}

/*
 * One doorbell poll of every user-mode queue on the hardware. Returns true
 * if the stash ran dry: poll again as soon as it is refilled; the queue
 * that went short is served first then.
 */
bool sim_uq_poll_locked(struct sim_dev *sd, struct sim_stash *st, u64 now)
{
	struct sim_queue *sq;

	lockdep_assert_held(&sd->lock);
	list_for_each_entry(sq, &sd->uqueues, uq_node) {
		if (!sq->mapped || sq->uq_stopped)
			continue;
		if (!sim_uq_fetch(sd, sq, st, now)) {
			list_rotate_to_front(&sq->uq_node, &sd->uqueues);
			return true;
		}
	}
	return false;
}

/* When the executor must poll doorbells next; U64_MAX: nothing to poll. */
u64 sim_uq_next_poll_locked(struct sim_dev *sd, u64 now)
{
	struct sim_queue *sq;
	u64 fast;

	lockdep_assert_held(&sd->lock);
	list_for_each_entry(sq, &sd->uqueues, uq_node) {
		if (!sq->mapped || sq->uq_stopped)
			continue;
		fast = (u64)max_t(u32, READ_ONCE(sd->doorbell_poll_us),
				  SIM_DB_MIN_POLL_US) * NSEC_PER_USEC;
		if (now - sd->db_active_ns < SIM_DB_IDLE_NS)
			return now + fast;
		return now + max_t(u64, fast, SIM_DB_SLOW_POLL_NS);
	}
	return U64_MAX;
}

/*
 * The head packet of @sq completed at @when: its slot goes back to the
 * owner (type INVALID) before read_index says so.
 */
void sim_uq_complete_locked(struct sim_queue *sq, u64 when)
{
	struct sim_ring *r = sq->uq;
	struct amdqp_sim_uq_ctl *ctl = sim_ring_ctl(r);

	lockdep_assert_held(&sq->sd->lock);
	WRITE_ONCE(*sim_ring_packet(r, sq->uq_done), AMDQP_SIM_PKT_INVALID);
	WRITE_ONCE(ctl->completed_ns, when);
	sq->uq_done++;
	/* Whoever sees read_index sees the slot free and completed_ns. */
	smp_store_release(&ctl->read_index, sq->uq_done);
}

/*
 * A reset threw away the packets the device had taken up: they count as
 * consumed, never ran, and the owner learns it from error.
 */
void sim_uq_discard_locked(struct sim_queue *sq)
{
	struct sim_ring *r = sq->uq;
	struct amdqp_sim_uq_ctl *ctl = sim_ring_ctl(r);

	lockdep_assert_held(&sq->sd->lock);
	if (sq->uq_done == sq->uq_fetch)
		return;
	for (; sq->uq_done < sq->uq_fetch; sq->uq_done++)
		WRITE_ONCE(*sim_ring_packet(r, sq->uq_done),
			   AMDQP_SIM_PKT_INVALID);
	WRITE_ONCE(ctl->error, -EIO);
	/* Whoever sees read_index sees the slots free and the error. */
	smp_store_release(&ctl->read_index, sq->uq_done);
}
