// SPDX-License-Identifier: GPL-2.0
/*
 * Starvation guard and repair loop. While any queue is off the hardware or
 * confined, every period it resumes queues held off longer than
 * max_suspend_ms (and keeps them immune for cooldown_ms), resumes queues
 * that spent their budget of suspended time (below), lifts confinements
 * older than max_confine_ms (immune for cooldown_ms as well), and retries
 * queues whose hardware state disagrees with their holds (a resume or a
 * lift the firmware refused, say).
 *
 * The budget bounds starvation however the suspensions come, whoever
 * holds them, tagged queue or not: a queue is owed on the hardware at
 * least min_run_pct percent of every starve_window_ms. Each queue keeps a
 * debt of suspended time (amdqp_queue.sv_debt): it grows by the time spent
 * off the hardware and is paid back while on it, at (100 - pct) / pct ns
 * per ns, so resuming and re-suspending does not reset it. Once the debt
 * reaches the budget, (100 - pct) percent of the window, the queue is
 * resumed (the WATCHDOG event and tracepoint, as for max_suspend_ms) and
 * immune until the debt is paid back: pct percent of the window on the
 * hardware, at least cooldown_ms.
 * With nothing suspended it is not armed at all: the first suspension
 * arms it (amdqp_watchdog_kick_locked()), and it stops re-arming once
 * every device reports none.
 *
 * One sweep looks at every queue. Overdue ones lose their holds in the
 * walk itself, whatever their number; the queues that then need a backend
 * call go to the backends in bounded batches, each batch taking only
 * queues this sweep has not taken yet (amdqp_queue.wd_sweep). So queues
 * whose resume keeps failing, however many and wherever in the lists,
 * never hide the ones behind them.
 */
#include <linux/math64.h>
#include <linux/printk.h>
#include <linux/workqueue.h>

#include "amdqp_priv.h"
#include "amdqp_trace.h"

#define AMDQP_WD_PERIOD_MS	50
#define AMDQP_WD_BATCH		256
/* Sweeps tried at module unload before giving up on failing resumes. */
#define AMDQP_WD_UNLOAD_SWEEPS	3

static void amdqp_watchdog_fn(struct work_struct *work);
static DECLARE_DELAYED_WORK(amdqp_wd_work, amdqp_watchdog_fn);

/* Set at exit (amdqp_lock) so that nothing arms the work again. */
static bool amdqp_wd_stopping;

/*
 * Scratch for one batch and the sweep counter, so the periodic work
 * allocates nothing. Used only by the work item and, once that is
 * cancelled, by module exit: never concurrently.
 */
static struct amdqp_queue *amdqp_wd_qs[AMDQP_WD_BATCH];
static int amdqp_wd_res[AMDQP_WD_BATCH];
static u64 amdqp_wd_sweep_seq;

static bool amdqp_any_suspended_locked(void)
{
	struct amdqp_device *dev;

	lockdep_assert_held(&amdqp_lock);
	list_for_each_entry(dev, &amdqp_devices, node)
		if (dev->num_suspended || dev->num_confined)
			return true;
	return false;
}

/* min_run_pct, capped: a queue is never owed all of its time. */
#define AMDQP_MIN_RUN_PCT_MAX	90

static u32 amdqp_run_pct(void)
{
	return min_t(u32, READ_ONCE(amdqp_min_run_pct), AMDQP_MIN_RUN_PCT_MAX);
}

/*
 * Bring @q's debt of suspended time up to @now: the time since the last
 * update adds to it if @q was off the hardware, pays it back otherwise.
 * Call before hw_suspended changes. amdqp_lock.
 */
void amdqp_starve_update_locked(struct amdqp_queue *q, u64 now)
{
	u32 pct = amdqp_run_pct();
	u64 dt = now > q->sv_stamp ? now - q->sv_stamp : 0;

	lockdep_assert_held(&amdqp_lock);
	if (!q->sv_stamp)
		dt = 0;		/* never suspended: nothing owed */
	q->sv_stamp = now;
	if (q->hw_suspended) {
		q->sv_debt += dt;
	} else if (pct) {
		u64 paid = mul_u64_u32_div(dt, 100 - pct, pct);

		q->sv_debt -= min(q->sv_debt, paid);
	} else {
		q->sv_debt = 0;
	}
}

/* The debt at which @q is resumed, 0 when the budget is off. */
static u64 amdqp_starve_budget(void)
{
	u32 pct = amdqp_run_pct();
	u64 window = (u64)READ_ONCE(amdqp_starve_window_ms) * NSEC_PER_MSEC;

	if (!pct || !window)
		return 0;
	return div_u64(window * (100 - pct), 100);
}

/* Time on the hardware that pays back @q's debt. */
static u64 amdqp_starve_payback(const struct amdqp_queue *q)
{
	u32 pct = amdqp_run_pct();

	return pct ? mul_u64_u32_div(q->sv_debt, pct, 100 - pct) : 0;
}

/*
 * A queue went off the hardware: make sure the watchdog will look at it.
 * Cheap when the work is already pending. amdqp_lock held.
 */
void amdqp_watchdog_kick_locked(void)
{
	lockdep_assert_held(&amdqp_lock);
	if (!amdqp_wd_stopping)
		schedule_delayed_work(&amdqp_wd_work,
				      msecs_to_jiffies(AMDQP_WD_PERIOD_MS));
}

/*
 * @q has been off the hardware too long: let go of every hold on it. One
 * WATCHDOG event (and stat, and trace) per stretch of suspension: while
 * the resume keeps failing, later sweeps only retry it, and drop holds
 * taken meanwhile again (after the cooldown) without a new event.
 */
static void amdqp_wd_overdue_locked(struct amdqp_queue *q, u64 now, u64 cool)
{
	u64 held = now - q->suspended_since;

	lockdep_assert_held(&amdqp_lock);
	if (q->wd_fired && !q->nr_holds)
		return;
	q->cooldown_until = now + cool;
	amdqp_drop_holds_locked(q);
	if (q->wd_fired)
		return;
	q->wd_fired = true;
	atomic64_inc(&amdqp_stats.watchdog_resumes);
	trace_amdqp_watchdog(q->dev->gpu_id, pid_nr(q->owner), q->queue_id,
			     held);
	amdqp_emit(AMDQP_EVENT_WATCHDOG, q->owner, q->dev->gpu_id,
		   q->queue_id, 0, held);
}

/*
 * @q has been confined too long (max_confine_ms): let go of every
 * confinement of it, with one CONFINE_WATCHDOG event per stretch, as
 * amdqp_wd_overdue_locked() does for a suspension.
 */
static void amdqp_wd_confine_overdue_locked(struct amdqp_queue *q, u64 now,
					    u64 cool)
{
	u64 held = now - q->confined_since;

	lockdep_assert_held(&amdqp_lock);
	if (q->cwd_fired && !q->nr_cholds)
		return;
	q->confine_cooldown_until = now + cool;
	amdqp_drop_cholds_locked(q);
	if (q->cwd_fired)
		return;
	q->cwd_fired = true;
	atomic64_inc(&amdqp_stats.confine_watchdog);
	trace_amdqp_confine_watchdog(q->dev->gpu_id, pid_nr(q->owner),
				     q->queue_id, held);
	amdqp_emit(AMDQP_EVENT_CONFINE_WATCHDOG, q->owner, q->dev->gpu_id,
		   q->queue_id, 0, held);
}

/*
 * Collect up to AMDQP_WD_BATCH queues to reconcile that sweep @sweep has
 * not taken yet; *@more says whether others are left. With @force every
 * hold is dropped (module unload); otherwise only overdue queues lose
 * theirs, and queues an ioctl is still reconciling are left to it.
 */
static unsigned int amdqp_wd_collect(struct amdqp_queue **qs, bool force,
				     u64 sweep, bool *more)
{
	u64 limit = (u64)READ_ONCE(amdqp_max_suspend_ms) * NSEC_PER_MSEC;
	u64 climit = (u64)READ_ONCE(amdqp_max_confine_ms) * NSEC_PER_MSEC;
	u64 cool = (u64)READ_ONCE(amdqp_cooldown_ms) * NSEC_PER_MSEC;
	u64 budget = amdqp_starve_budget();
	struct amdqp_device *dev;
	struct amdqp_queue *q;
	unsigned int n = 0;
	u64 now;

	*more = false;
	mutex_lock(&amdqp_lock);
	/* Read under the lock: suspended_since is never in our future. */
	now = amdqp_now_ns();
	list_for_each_entry(dev, &amdqp_devices, node) {
		list_for_each_entry(q, &dev->queues, dev_node) {
			if (q->hw_suspended)
				amdqp_starve_update_locked(q, now);
			if (force) {
				amdqp_drop_cholds_locked(q);
			} else if (q->hw_confined && climit &&
				   now - q->confined_since > climit) {
				amdqp_wd_confine_overdue_locked(q, now, cool);
			}
			if (force)
				amdqp_drop_holds_locked(q);
			else if (q->hw_suspended && budget &&
				 q->sv_debt >= budget)
				amdqp_wd_overdue_locked(q, now,
							max(cool,
							    amdqp_starve_payback(q)));
			else if (q->hw_suspended && limit &&
				 now - q->suspended_since > limit)
				amdqp_wd_overdue_locked(q, now, cool);
			if ((q->hw_suspended == !!q->nr_holds &&
			     !amdqp_confine_mismatch_locked(q)) ||
			    (q->inflight && !force) || q->wd_sweep == sweep)
				continue;
			if (n == AMDQP_WD_BATCH) {
				*more = true;
				continue;
			}
			q->wd_sweep = sweep;
			amdqp_queue_get(q);
			qs[n++] = q;
		}
	}
	mutex_unlock(&amdqp_lock);
	return n;
}

/* One sweep over every queue. Returns the number of failed backend calls. */
static unsigned int amdqp_wd_sweep(bool force)
{
	u64 sweep = ++amdqp_wd_sweep_seq;
	unsigned int i, n, failed = 0;
	bool more;

	do {
		n = amdqp_wd_collect(amdqp_wd_qs, force, sweep, &more);
		amdqp_reconcile(amdqp_wd_qs, n, amdqp_wd_res, 0, NULL,
				AMDQP_RC_ANY);
		for (i = 0; i < n; i++) {
			int r = amdqp_wd_res[i];

			/* Gone queues and devices are no one's to resume. */
			if (r && r != -ENOENT && r != -ENODEV)
				failed++;
			amdqp_queue_put(amdqp_wd_qs[i]);
		}
	} while (more);
	return failed;
}

static void amdqp_watchdog_fn(struct work_struct *work)
{
	amdqp_wd_sweep(false);
	atomic64_inc(&amdqp_stats.watchdog_sweeps);
	mutex_lock(&amdqp_lock);
	if (!amdqp_wd_stopping && amdqp_any_suspended_locked())
		schedule_delayed_work(&amdqp_wd_work,
				      msecs_to_jiffies(AMDQP_WD_PERIOD_MS));
	mutex_unlock(&amdqp_lock);
}

void amdqp_watchdog_init(void)
{
	mutex_lock(&amdqp_lock);
	amdqp_wd_stopping = false;
	mutex_unlock(&amdqp_lock);
}

void amdqp_watchdog_exit(void)
{
	mutex_lock(&amdqp_lock);
	amdqp_wd_stopping = true;
	mutex_unlock(&amdqp_lock);
	cancel_delayed_work_sync(&amdqp_wd_work);
}

/*
 * Module unload: no fd is left, put back whatever is still off. Resumes
 * that keep failing are retried for a bounded number of sweeps, then left
 * to their backend: every hold is gone by then, and the backend that
 * registered the queue resumes what it still holds off when it unbinds
 * (the kfd backend, kfdbe_resume_leftovers(); the glue drops the rest
 * when its last client unregisters).
 */
void amdqp_resume_everything(void)
{
	unsigned int i, failed = 0;

	for (i = 0; i < AMDQP_WD_UNLOAD_SWEEPS; i++) {
		failed = amdqp_wd_sweep(true);
		if (!failed)
			return;
	}
	pr_warn("amdqp: %u queue(s) could not be resumed at unload after %u attempts; left to their backend\n",
		failed, AMDQP_WD_UNLOAD_SWEEPS);
}
