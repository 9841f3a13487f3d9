// SPDX-License-Identifier: GPL-2.0
/*
 * The virtual GPU: an executor thread per device that runs queued work
 * items on compute slots in real time, and the scheduler firmware model
 * (HWS runlist updates, MES add/remove) that amdqp and the owners of
 * queues (UPDATE_QUEUE) call.
 */
#include <linux/delay.h>
#include <linux/hrtimer.h>
#include <linux/kthread.h>
#include <linux/sched.h>
#include <linux/slab.h>
#include <linux/amdqp.h>

#include "amdqp_backend.h"
#include "sim.h"

/* Slots an item asks for: its work groups; a barrier needs none. */
static u32 sim_full_width(struct sim_dev *sd, const struct sim_work *w)
{
	if (w->barrier)
		return 0;
	return w->width && w->width < sd->slots ? w->width : sd->slots;
}

/*
 * Slots an item of @sq occupies: a CU mask narrower than the item confines
 * it to the mask's slots, where its work groups take more rounds (see
 * sim_dispatch()).
 */
static u32 sim_width(struct sim_dev *sd, const struct sim_queue *sq,
		     const struct sim_work *w)
{
	return min(sim_full_width(sd, w), sq->cu_slots);
}

/* Whether @width slots of @sq's mask are free now. */
static bool sim_fits(struct sim_dev *sd, struct sim_queue *sq, u32 width)
{
	if (width > sd->free_slots)
		return false;
	if (sq->cu_slots == sd->slots)
		return true;
	bitmap_andnot(sd->scratch, sq->cu_mask, sd->busy_slots, sd->slots);
	return bitmap_weight(sd->scratch, sd->slots) >= width;
}

/*
 * Give the head item of @sq @width free slots of its mask, highest
 * numbered first: a mask made of the first N slots (hsa_app --cu-mask,
 * hipExtStreamCreateWithCUMask with a leading run of CUs) then keeps
 * its slots to itself for as long as the other queues find room above.
 */
static void sim_claim_slots(struct sim_dev *sd, struct sim_queue *sq,
			    u32 width)
{
	unsigned int i, size = sd->slots, bit;

	bitmap_andnot(sd->scratch, sq->cu_mask, sd->busy_slots, sd->slots);
	for (i = 0; i < width; i++) {
		bit = find_last_bit(sd->scratch, size);
		if (WARN_ON_ONCE(bit >= size))
			break;
		__set_bit(bit, sq->run_slots);
		size = bit;
	}
	bitmap_or(sd->busy_slots, sd->busy_slots, sq->run_slots, sd->slots);
	sq->run_width = i;
	sd->free_slots -= i;
}

static void sim_release_slots(struct sim_dev *sd, struct sim_queue *sq)
{
	bitmap_andnot(sd->busy_slots, sd->busy_slots, sq->run_slots,
		      sd->slots);
	bitmap_zero(sq->run_slots, sd->slots);
	sd->free_slots += sq->run_width;
	sq->run_width = 0;
}

static void sim_complete_head(struct sim_dev *sd, struct sim_queue *sq)
{
	struct sim_work *w = list_first_entry(&sq->work, struct sim_work, node);

	lockdep_assert_held(&sd->lock);
	sq->busy_ns += sq->run_end - sq->run_start;
	sim_release_slots(sd, sq);
	sq->running = false;
	sq->remaining_ns = 0;
	sq->head_since = sq->run_end;
	if (!--w->count) {
		list_del(&w->node);
		kfree(w);
	}
	sq->rptr++;
	sq->done_ns[sq->rptr % SIM_DONE_HISTORY] = sq->run_end;
	if (sq->uq)
		sim_uq_complete_locked(sq, sq->run_end);
	wake_up_all(&sq->done_wait);
}

/*
 * CWSR save: the item's state goes to memory, its slots are freed. The
 * caller has retired what ended by @now (sim_retire_locked()): the item
 * is still in flight.
 */
static void sim_preempt(struct sim_dev *sd, struct sim_queue *sq, u64 now)
{
	u64 left;

	lockdep_assert_held(&sd->lock);
	left = WARN_ON_ONCE(sq->run_end <= now) ? 1 : sq->run_end - now;
	sq->busy_ns += now - sq->run_start;
	/* What is left as full-width time: the next mask may differ. */
	if (sq->run_width < sq->run_full)
		left = max_t(u64, div_u64(left * sq->run_width, sq->run_full),
			     1);
	sq->remaining_ns = left +
			   (u64)READ_ONCE(sd->cwsr_restore_us) * NSEC_PER_USEC;
	sim_release_slots(sd, sq);
	sq->running = false;
	sq->preemptions++;
	sd->cnt.preemptions++;
}

/*
 * Start ready items while slots allow: higher priority first (the HQD
 * priority bias), then the one that waited longest. A running item is
 * never interrupted here; only an unmap does that. A barrier at the head
 * of a queue completes as soon as it is dispatched. An item confined by
 * its queue's CU mask to fewer slots than it has work groups runs longer
 * in proportion (work-conserving: the same slot time, as a kernel's work
 * groups take more waves on fewer CUs).
 */
static void sim_dispatch(struct sim_dev *sd, u64 now)
{
	lockdep_assert_held(&sd->lock);
	for (;;) {
		struct sim_queue *sq, *best = NULL;
		struct sim_work *w;
		u64 dur;

		list_for_each_entry(sq, &sd->queues, dev_node) {
			if (!sq->mapped || sq->running || list_empty(&sq->work) ||
			    sq->head_since > now)
				continue;
			w = list_first_entry(&sq->work, struct sim_work, node);
			if (!sim_fits(sd, sq, sim_width(sd, sq, w)))
				continue;
			if (!best || sq->priority > best->priority ||
			    (sq->priority == best->priority &&
			     sq->head_since < best->head_since))
				best = sq;
		}
		if (!best)
			return;
		w = list_first_entry(&best->work, struct sim_work, node);
		dur = best->remaining_ns ? best->remaining_ns : w->duration_ns;
		sim_claim_slots(sd, best, sim_width(sd, best, w));
		best->run_full = sim_full_width(sd, w);
		if (best->run_width && best->run_width < best->run_full)
			dur = div_u64(dur * best->run_full, best->run_width);
		best->running = true;
		best->run_start = now;
		best->run_end = now + dur;
		if (w->barrier)
			sim_complete_head(sd, best);
	}
}

/*
 * Complete the items that ended by @now, in time order, each queue's next
 * item starting at the completion time, not at the (late) time the
 * executor thread or a firmware operation got to it: the GPU does not
 * wait for either. A runlist update in progress starts nothing.
 */
static void sim_retire_locked(struct sim_dev *sd, u64 now)
{
	struct sim_queue *sq, *first;

	lockdep_assert_held(&sd->lock);
	for (;;) {
		first = NULL;
		list_for_each_entry(sq, &sd->queues, dev_node)
			if (sq->running && sq->run_end <= now &&
			    (!first || sq->run_end < first->run_end))
				first = sq;
		if (!first)
			return;
		sim_complete_head(sd, first);
		if (!sd->updating)
			sim_dispatch(sd, first->run_end);
	}
}

/* One executor step; returns when the next item completes (or U64_MAX). */
static u64 sim_step(struct sim_dev *sd, struct sim_stash *st, bool stash_full)
{
	struct sim_queue *sq;
	u64 now, next = U64_MAX;
	bool more = false;

	spin_lock_irq(&sd->lock);
	sd->kick = false;
	now = ktime_get_ns();
	sim_retire_locked(sd, now);
	/* During a runlist update the firmware fetches nothing either. */
	if (!sd->updating) {
		more = sim_uq_poll_locked(sd, st, now);
		sim_dispatch(sd, now);
		next = sim_uq_next_poll_locked(sd, now);
	}
	list_for_each_entry(sq, &sd->queues, dev_node)
		if (sq->running)
			next = min(next, sq->run_end);
	spin_unlock_irq(&sd->lock);
	/* Out of work items: go on as soon as the stash is refilled. */
	return more && stash_full ? now : next;
}

static int sim_thread(void *data)
{
	struct sim_dev *sd = data;
	struct sim_stash st;

	sim_stash_init(&st);
	while (!kthread_should_stop()) {
		bool full = sim_stash_fill(&st);
		u64 next = sim_step(sd, &st, full), now = ktime_get_ns();

		if (next == U64_MAX)
			wait_event_interruptible(sd->kick_wait,
						 READ_ONCE(sd->kick) ||
						 kthread_should_stop());
		else if (next > now)
			wait_event_interruptible_hrtimeout(sd->kick_wait,
							   READ_ONCE(sd->kick) ||
							   kthread_should_stop(),
							   ns_to_ktime(next - now));
	}
	sim_stash_free(&st);
	return 0;
}

void sim_gpu_kick(struct sim_dev *sd)
{
	WRITE_ONCE(sd->kick, true);
	wake_up(&sd->kick_wait);
}

/*
 * A doorbell: the hardware starts what fits right away, without waiting
 * for the executor thread to be scheduled; the thread only learns the new
 * completion time.
 */
void sim_gpu_doorbell(struct sim_dev *sd)
{
	spin_lock_irq(&sd->lock);
	if (!sd->updating)
		sim_dispatch(sd, ktime_get_ns());
	spin_unlock_irq(&sd->lock);
	sim_gpu_kick(sd);
}

int sim_gpu_start(struct sim_dev *sd)
{
	sd->thread = kthread_run(sim_thread, sd, "amdqp_sim/%u", sd->gpu_id);
	if (IS_ERR(sd->thread))
		return PTR_ERR(sd->thread);
	/* Timing is what the sim is about: keep the executor punctual. */
	sched_set_fifo_low(sd->thread);
	return 0;
}

void sim_gpu_stop(struct sim_dev *sd)
{
	kthread_stop(sd->thread);
}

/* Throw away queued and running work (reset, destruction). */
void sim_queue_discard_locked(struct sim_queue *sq)
{
	struct sim_dev *sd = sq->sd;
	struct sim_work *w, *tmp;

	lockdep_assert_held(&sd->lock);
	if (sq->running) {
		sim_release_slots(sd, sq);
		sq->running = false;
	}
	sq->remaining_ns = 0;
	list_for_each_entry_safe(w, tmp, &sq->work, node) {
		list_del(&w->node);
		kfree(w);
	}
	if (sq->rptr != sq->wptr) {
		sq->lost_from = sq->rptr;
		sq->lost_upto = sq->wptr;
		sq->rptr = sq->wptr;
	}
	wake_up_all(&sq->done_wait);
}

/*
 * Record why @sq is off the hardware (SIM_OFF_*): it is on it only when
 * no reason is left. A user-mode queue coming back gets fast doorbell
 * polls, so that what its owner queued meanwhile starts promptly.
 */
static void sim_queue_set_off_locked(struct sim_queue *sq, u32 off)
{
	lockdep_assert_held(&sq->sd->lock);
	sq->off = off;
	sq->mapped = !off;
	if (sq->mapped && sq->uq)
		sq->sd->db_active_ns = ktime_get_ns();
}

void sim_queue_init_cu_mask(struct sim_queue *sq)
{
	bitmap_set(sq->own_mask, 0, sq->sd->slots);
	bitmap_set(sq->cu_mask, 0, sq->sd->slots);
	sq->cu_slots = sq->sd->slots;
}

/* Slots of one XCC: the device's slots split evenly (sim_dev_cu_per_xcc). */
static u32 sim_slots_per_xcc(const struct sim_dev *sd)
{
	return sd->slots / sd->num_xcc;
}

/*
 * The slots @sq's items may occupy: the owner's mask, ANDed XCC by XCC
 * with amdqp's while confined; in an XCC where the two share no slot,
 * amdqp's (the policy's limit wins over the owner's choice of CUs).
 */
static void sim_queue_apply_masks_locked(struct sim_queue *sq)
{
	struct sim_dev *sd = sq->sd;
	u32 x, i, cpx = sim_slots_per_xcc(sd);

	lockdep_assert_held(&sd->lock);
	if (!sq->amdqp_confined) {
		bitmap_copy(sq->cu_mask, sq->own_mask, sd->slots);
	} else {
		bitmap_and(sq->cu_mask, sq->own_mask, sq->amdqp_mask,
			   sd->slots);
		for (x = 0; x < sd->num_xcc; x++) {
			if (find_next_bit(sq->cu_mask, (x + 1) * cpx, x * cpx) <
			    (x + 1) * cpx)
				continue;
			for (i = x * cpx; i < (x + 1) * cpx; i++)
				__assign_bit(i, sq->cu_mask,
					     test_bit(i, sq->amdqp_mask));
		}
	}
	sq->cu_slots = bitmap_weight(sq->cu_mask, sd->slots);
}

/*
 * Mask changes waiting for the queue to be off the hardware (or for the
 * runlist to be down) take effect: the owner's (SET_CU_MASK) and amdqp's
 * (confine).
 */
static void sim_queue_take_cu_mask_locked(struct sim_queue *sq)
{
	struct sim_dev *sd = sq->sd;

	lockdep_assert_held(&sd->lock);
	if (!sq->cu_mask_pending && !sq->amdqp_pending)
		return;
	if (sq->cu_mask_pending)
		bitmap_copy(sq->own_mask, sq->cu_mask_next, sd->slots);
	if (sq->amdqp_pending) {
		sq->amdqp_confined = sq->amdqp_next_on;
		bitmap_copy(sq->amdqp_mask, sq->amdqp_next, sd->slots);
	}
	sq->cu_mask_pending = false;
	sq->amdqp_pending = false;
	sim_queue_apply_masks_locked(sq);
}

void sim_dev_reset(struct sim_dev *sd)
{
	struct sim_queue *sq;

	spin_lock_irq(&sd->lock);
	sd->reset_gen++;
	sd->cnt.resets++;
	list_for_each_entry(sq, &sd->queues, dev_node) {
		if (sq->uq)
			sim_uq_discard_locked(sq);
		sim_queue_discard_locked(sq);
		/*
		 * The firmware starts over: amdqp forgets its holds (below);
		 * the owner's own choice is a queue property and stays; a
		 * removal for an MQD change (SET_CU_MASK) ends here too.
		 */
		sim_queue_set_off_locked(sq, sq->off & SIM_OFF_OWNER);
		/* amdqp's confinement goes with its holds; the owner's mask stays. */
		sq->amdqp_confined = false;
		sq->amdqp_pending = false;
		sim_queue_apply_masks_locked(sq);
	}
	sd->free_slots = sd->slots;
	bitmap_zero(sd->busy_slots, sd->slots);
	sd->updating = false;
	spin_unlock_irq(&sd->lock);
	sim_gpu_kick(sd);
	amdqp_report_reset(sd->adev);
}

/*
 * The firmware's time. KFD polls the fence of an unmap/map packet
 * (amdkfd_fence_wait_timeout: a loop around schedule()), so poll here
 * too: a sleep would add the timer wake-up latency, which in a VM is
 * far larger than the latencies being modelled.
 */
static void sim_sleep_us(u64 us)
{
	u64 end = ktime_get_ns() + us * NSEC_PER_USEC, now;

	/*
	 * Long waits sleep most of the way; the tail is polled against
	 * ktime, since jiffies-based sleeps drift from it under emulation.
	 */
	while ((now = ktime_get_ns()) < end) {
		if (end - now > 20 * NSEC_PER_MSEC)
			fsleep(div_u64(end - now, NSEC_PER_USEC) - 10000);
		else
			cond_resched();
	}
}

/* Consume one injected -EBUSY, if any. */
static bool sim_busy(struct sim_dev *sd)
{
	return atomic_dec_if_positive(&sd->fail_busy) >= 0;
}

/*
 * Simulated preemption timeout: the firmware sits on the unmap for the
 * timeout (or the caller's grace period, if shorter), then gives up with
 * everything still mapped. @grace_us arrives clamped by the core to
 * AMDQP_GRACE_MAX_US, the ceiling of the CP's 8-bit wait count, so a long
 * grace here behaves as on hardware: capped, never unlimited.
 */
static bool sim_preempt_fails(struct sim_dev *sd, u64 cost_us, u32 grace_us)
{
	u64 timeout_us = (u64)READ_ONCE(sd->preempt_timeout_ms) * USEC_PER_MSEC;
	bool injected = atomic_dec_if_positive(&sd->fail_preempt) >= 0;

	if (grace_us && grace_us < timeout_us)
		timeout_us = grace_us;
	if (!injected && !(grace_us && cost_us > grace_us))
		return false;
	sim_sleep_us(timeout_us);
	spin_lock_irq(&sd->lock);
	sd->cnt.preempt_failures++;
	spin_unlock_irq(&sd->lock);
	return true;
}

/*
 * HWS: one runlist update. The firmware unmaps every queue of the device
 * (saving the waves of each one that was running), then maps the new
 * runlist, so one call changes any number of queues at one cost.
 * Reason @why of each queue goes on (@unmap) or away.
 */
static void sim_hws_update(struct sim_dev *sd, struct sim_queue **sqs,
			   unsigned int n, int *res, u32 why, bool unmap,
			   u32 grace_us)
{
	u64 saved = 0, cost_us, gen, now;
	struct sim_queue *sq;
	unsigned int i, todo = 0;

	for (i = 0; i < n; i++)
		todo += !res[i];
	if (!todo)
		return;

	spin_lock_irq(&sd->lock);
	gen = sd->reset_gen;
	now = ktime_get_ns();
	sim_retire_locked(sd, now);
	sd->updating = true;
	list_for_each_entry(sq, &sd->queues, dev_node) {
		if (sq->running) {
			sim_preempt(sd, sq, now);
			saved++;
		}
	}
	sd->cnt.sched_updates++;
	sd->cnt.unmap_packets++;
	spin_unlock_irq(&sd->lock);

	cost_us = READ_ONCE(sd->unmap_latency_us) +
		  saved * READ_ONCE(sd->cwsr_save_us);
	if (unmap && sim_preempt_fails(sd, cost_us, grace_us)) {
		for (i = 0; i < n; i++)
			if (!res[i])
				res[i] = -ETIME;
		amdqp_report_preempt_failure(sd->adev, -ETIME);
		goto remap;
	}
	sim_sleep_us(cost_us);

	spin_lock_irq(&sd->lock);
	for (i = 0; i < n; i++) {
		sq = sqs[i];
		if (res[i])
			continue;
		if (sd->reset_gen != gen)
			res[i] = -ENODEV;
		else if (sq->destroyed)
			res[i] = -ENOENT;
		else if (unmap)
			sim_queue_set_off_locked(sq, sq->off | why);
		else
			sim_queue_set_off_locked(sq, sq->off & ~why);
		/* The runlist is down: a new MQD (SET_CU_MASK) goes in. */
		if (!res[i])
			sim_queue_take_cu_mask_locked(sq);
	}
	spin_unlock_irq(&sd->lock);

remap:
	sim_sleep_us(READ_ONCE(sd->map_latency_us));
	spin_lock_irq(&sd->lock);
	sd->cnt.map_packets++;
	sd->updating = false;
	sim_dispatch(sd, ktime_get_ns());
	spin_unlock_irq(&sd->lock);
	sim_gpu_kick(sd);
}

/*
 * MES: each queue is removed or added on its own; others keep running.
 * A queue that another reason keeps off stays off after an add.
 */
static void sim_mes_update(struct sim_dev *sd, struct sim_queue **sqs,
			   unsigned int n, int *res, u32 why, bool unmap,
			   u32 grace_us)
{
	unsigned int i;

	for (i = 0; i < n; i++) {
		struct sim_queue *sq = sqs[i];
		u64 gen, cost_us = 0;
		bool freed = false;
		u32 prev_off;

		if (res[i])
			continue;
		spin_lock_irq(&sd->lock);
		gen = sd->reset_gen;
		prev_off = sq->off;
		sd->cnt.sched_updates++;
		if (unmap)
			sd->cnt.unmap_packets++;
		else
			sd->cnt.map_packets++;
		if (sq->destroyed) {
			res[i] = -ENOENT;
		} else if (unmap) {
			u64 now = ktime_get_ns();

			/* What ended meanwhile is done, its successor running. */
			sim_retire_locked(sd, now);
			sim_queue_set_off_locked(sq, sq->off | why);
			if (sq->running) {
				sim_preempt(sd, sq, now);
				cost_us = READ_ONCE(sd->cwsr_save_us);
				freed = true;
			}
		}
		spin_unlock_irq(&sd->lock);
		if (res[i])
			continue;

		if (unmap) {
			cost_us += READ_ONCE(sd->unmap_latency_us);
			if (sim_preempt_fails(sd, cost_us, grace_us)) {
				res[i] = -ETIME;
				amdqp_report_preempt_failure(sd->adev, -ETIME);
			} else {
				sim_sleep_us(cost_us);
			}
		} else {
			sim_sleep_us(READ_ONCE(sd->map_latency_us));
		}

		spin_lock_irq(&sd->lock);
		if (sd->reset_gen != gen)
			res[i] = -ENODEV;
		else if (sq->destroyed)
			res[i] = -ENOENT;
		else if (res[i])	/* a failed removal changed nothing */
			sim_queue_set_off_locked(sq, prev_off);
		else if (!unmap)
			sim_queue_set_off_locked(sq, sq->off & ~why);
		/* Freed slots or newly mapped work can start now. */
		if (!sd->updating &&
		    (freed || (!unmap && !list_empty(&sq->work))))
			sim_dispatch(sd, ktime_get_ns());
		spin_unlock_irq(&sd->lock);
		sim_gpu_kick(sd);
	}
}

/*
 * One firmware operation on @n queues of @sd: reason @why (SIM_OFF_*)
 * goes on (@unmap) or away for each whose @res is still 0. amdqp's batches
 * and an owner's UPDATE_QUEUE both come here, so they cost the same.
 */
static void sim_fw_update(struct sim_dev *sd, struct sim_queue **sqs,
			  unsigned int n, int *res, u32 why, bool unmap,
			  u32 grace_us)
{
	lockdep_assert_held(&sd->fw_lock);
	if (sd->mode == AMDQP_SCHED_MES)
		sim_mes_update(sd, sqs, n, res, why, unmap, grace_us);
	else
		sim_hws_update(sd, sqs, n, res, why, unmap, grace_us);
}

/*
 * An amdqp batch @qs for @sd's firmware: its sim queues, and each @res
 * what an injected -EBUSY leaves of it. Returns with fw_lock held for the
 * batch's operation (sim_batch_end()), or NULL without memory.
 */
static struct sim_queue **sim_batch_begin(struct sim_dev *sd,
					  struct amdqp_queue **qs,
					  unsigned int n, int *res)
{
	struct sim_queue **sqs;
	unsigned int i;

	sqs = kmalloc_array(n, sizeof(*sqs), GFP_KERNEL);
	if (!sqs)
		return NULL;
	for (i = 0; i < n; i++)
		sqs[i] = amdqp_queue_priv(qs[i]);
	mutex_lock(&sd->fw_lock);
	for (i = 0; i < n; i++)
		res[i] = sim_busy(sd) ? -EBUSY : 0;
	return sqs;
}

static void sim_batch_end(struct sim_dev *sd, struct sim_queue **sqs)
{
	mutex_unlock(&sd->fw_lock);
	kfree(sqs);
}

static int sim_update(struct amdqp_device *adev, struct amdqp_queue **qs,
		      unsigned int n, int *res, bool unmap, u32 grace_us)
{
	struct sim_dev *sd = amdqp_device_priv(adev);
	struct sim_queue **sqs;

	sqs = sim_batch_begin(sd, qs, n, res);
	if (!sqs)
		return -ENOMEM;
	sim_fw_update(sd, sqs, n, res, SIM_OFF_AMDQP, unmap, grace_us);
	sim_batch_end(sd, sqs);
	return 0;
}

/*
 * The owner's AMDKFD_IOC_UPDATE_QUEUE: one firmware operation that takes
 * its queue off (@off) or puts it back, whatever amdqp does with it, and
 * sets the priority the firmware dispatches with. Returns 0 or -errno
 * (-EBUSY injected, -ETIME preemption timeout, -ENOENT destroyed,
 * -ENODEV reset meanwhile).
 */
int sim_queue_update(struct sim_queue *sq, bool off, u32 priority)
{
	struct sim_dev *sd = sq->sd;
	int res = 0;

	mutex_lock(&sd->fw_lock);
	/* Its device may be gone: no firmware to talk to then. */
	if (READ_ONCE(sq->destroyed)) {
		res = -ENOENT;
	} else if (sim_busy(sd)) {
		res = -EBUSY;
	} else {
		spin_lock_irq(&sd->lock);
		sq->priority = priority;
		spin_unlock_irq(&sd->lock);
		sim_fw_update(sd, &sq, 1, &res, SIM_OFF_OWNER, off, 0);
	}
	mutex_unlock(&sd->fw_lock);
	return res;
}

/*
 * The owner's AMDKFD_IOC_SET_CU_MASK: the MQD changes while the queue is
 * off the hardware, as in amdkfd's update_queue. HWS: one runlist update
 * (everything preempted, the new mask in, everything mapped again); MES:
 * REMOVE_QUEUE, the new mask, ADD_QUEUE, or just the new mask if the queue
 * is not on the hardware. @mask has no bit at or past the device's slots
 * and at least one set. Returns 0 or -errno as sim_queue_update(); the
 * mask is unchanged on -EBUSY and -ETIME.
 */
int sim_queue_set_cu_mask(struct sim_queue *sq, const unsigned long *mask)
{
	struct sim_dev *sd = sq->sd;
	bool mapped;
	int res = 0;

	mutex_lock(&sd->fw_lock);
	if (READ_ONCE(sq->destroyed)) {
		res = -ENOENT;
		goto unlock;
	}
	if (sim_busy(sd)) {
		res = -EBUSY;
		goto unlock;
	}
	spin_lock_irq(&sd->lock);
	bitmap_copy(sq->cu_mask_next, mask, sd->slots);
	sq->cu_mask_pending = true;
	mapped = sq->mapped;
	spin_unlock_irq(&sd->lock);

	if (sd->mode != AMDQP_SCHED_MES) {
		/* No reason added or removed: the update alone. */
		sim_hws_update(sd, &sq, 1, &res, 0, true, 0);
	} else if (mapped) {
		sim_mes_update(sd, &sq, 1, &res, SIM_OFF_UPDATE, true, 0);
		if (!res) {
			spin_lock_irq(&sd->lock);
			sim_queue_take_cu_mask_locked(sq);
			spin_unlock_irq(&sd->lock);
			sim_mes_update(sd, &sq, 1, &res, SIM_OFF_UPDATE,
				       false, 0);
		}
	}

	spin_lock_irq(&sd->lock);
	if (!res && !sq->destroyed)
		sim_queue_take_cu_mask_locked(sq);	/* MES, not mapped */
	sq->cu_mask_pending = false;
	spin_unlock_irq(&sd->lock);
	sim_gpu_kick(sd);
unlock:
	mutex_unlock(&sd->fw_lock);
	return res;
}

/* An amdqp CU mask (amdqp_backend.h's layout) as the device's slots. */
static void sim_mask_from_words(struct sim_dev *sd, const u32 *words,
				unsigned long *mask)
{
	u32 cpx = sim_slots_per_xcc(sd), wpx = amdqp_cu_mask_words(cpx);
	u32 x, c;

	bitmap_zero(mask, SIM_MAX_SLOTS);
	for (x = 0; x < sd->num_xcc; x++)
		for (c = 0; c < cpx; c++)
			if (words[x * wpx + c / 32] & BIT(c % 32))
				__set_bit(x * cpx + c, mask);
}

/*
 * amdqp's confinement (ops->confine): like the owner's SET_CU_MASK, a new
 * mask goes into the MQD while the queue is off the hardware. HWS: one
 * runlist update for the whole batch (every running item preempted, its
 * waves saved, the masks in, everything mapped again: a confined queue's
 * item resumes on the slots left to it, for longer), none if no queue of
 * the batch is on the hardware. MES: per queue, a REMOVE_QUEUE, the mask
 * and an ADD_QUEUE if it is on the hardware, just the mask otherwise.
 * Entries that fail keep their previous mask.
 */
static int sim_confine(struct amdqp_device *adev, struct amdqp_queue **qs,
		       unsigned int n, const u32 *const *masks, int *res,
		       u32 grace_us)
{
	struct sim_dev *sd = amdqp_device_priv(adev);
	struct sim_queue **sqs;
	bool any_mapped = false;
	unsigned int i;

	sqs = sim_batch_begin(sd, qs, n, res);
	if (!sqs)
		return -ENOMEM;
	spin_lock_irq(&sd->lock);
	for (i = 0; i < n; i++) {
		struct sim_queue *sq = sqs[i];

		if (res[i])
			continue;
		if (sq->destroyed) {
			res[i] = -ENOENT;
			continue;
		}
		sq->amdqp_next_on = !!masks[i];
		if (masks[i])
			sim_mask_from_words(sd, masks[i], sq->amdqp_next);
		sq->amdqp_pending = true;
		any_mapped |= sq->mapped;
	}
	spin_unlock_irq(&sd->lock);

	if (sd->mode != AMDQP_SCHED_MES) {
		/* No reason added or removed: the update alone. */
		if (any_mapped)
			sim_hws_update(sd, sqs, n, res, 0, true, grace_us);
	} else {
		for (i = 0; i < n; i++) {
			struct sim_queue *sq = sqs[i];

			if (res[i] || !READ_ONCE(sq->mapped))
				continue;
			sim_mes_update(sd, &sq, 1, &res[i], SIM_OFF_UPDATE,
				       true, grace_us);
			if (res[i])
				continue;
			spin_lock_irq(&sd->lock);
			sim_queue_take_cu_mask_locked(sq);
			spin_unlock_irq(&sd->lock);
			sim_mes_update(sd, &sq, 1, &res[i], SIM_OFF_UPDATE,
				       false, 0);
		}
	}

	spin_lock_irq(&sd->lock);
	for (i = 0; i < n; i++) {
		/* Off the hardware (or MES after its add): the mask alone. */
		if (!res[i] && !sqs[i]->destroyed)
			sim_queue_take_cu_mask_locked(sqs[i]);
		sqs[i]->amdqp_pending = false;
	}
	if (!sd->updating)
		sim_dispatch(sd, ktime_get_ns());
	spin_unlock_irq(&sd->lock);
	sim_gpu_kick(sd);
	sim_batch_end(sd, sqs);
	return 0;
}

static int sim_suspend(struct amdqp_device *adev, struct amdqp_queue **qs,
		       unsigned int n, int *res, u32 grace_us)
{
	return sim_update(adev, qs, n, res, true, grace_us);
}

static int sim_resume(struct amdqp_device *adev, struct amdqp_queue **qs,
		      unsigned int n, int *res)
{
	return sim_update(adev, qs, n, res, false, 0);
}

static int sim_set_priority(struct amdqp_queue *aq, u32 priority)
{
	struct sim_queue *sq = amdqp_queue_priv(aq);
	struct sim_dev *sd = sq->sd;

	spin_lock_irq(&sd->lock);
	sq->priority = priority;
	spin_unlock_irq(&sd->lock);
	sim_gpu_kick(sd);
	return 0;
}

static void sim_get_counters(struct amdqp_device *adev,
			     struct amdqp_dev_counters *c)
{
	struct sim_dev *sd = amdqp_device_priv(adev);
	unsigned long flags;

	spin_lock_irqsave(&sd->lock, flags);
	*c = sd->cnt;
	spin_unlock_irqrestore(&sd->lock, flags);
}

static void sim_get_queue_stats(struct amdqp_queue *aq,
				struct amdqp_queue_stats *s)
{
	struct sim_queue *sq = amdqp_queue_priv(aq);
	struct sim_dev *sd = sq->sd;
	unsigned long flags;

	spin_lock_irqsave(&sd->lock, flags);
	s->busy_ns = sq->busy_ns;
	if (sq->running)
		s->busy_ns += ktime_get_ns() - sq->run_start;
	s->submitted = sq->wptr;
	s->completed = sq->rptr;
	spin_unlock_irqrestore(&sd->lock, flags);
}

static void sim_queue_release(struct amdqp_queue *aq)
{
	sim_queue_put(amdqp_queue_priv(aq));
}

const struct amdqp_backend_ops sim_backend_ops = {
	.suspend = sim_suspend,
	.resume = sim_resume,
	.confine = sim_confine,
	.set_priority = sim_set_priority,
	.get_counters = sim_get_counters,
	.get_queue_stats = sim_get_queue_stats,
	.queue_release = sim_queue_release,
};
