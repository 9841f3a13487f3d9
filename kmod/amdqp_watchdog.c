// SPDX-License-Identifier: GPL-2.0
/*
 * Starvation guard and repair loop. Every period it resumes queues held off
 * the hardware longer than max_suspend_ms (and keeps them immune for
 * cooldown_ms), and retries queues whose hardware state disagrees with
 * their holds (a resume the firmware refused, say).
 */
#include <linux/workqueue.h>

#include "amdqp_priv.h"
#include "amdqp_trace.h"

#define AMDQP_WD_PERIOD_MS	50
#define AMDQP_WD_BATCH		256

static void amdqp_watchdog_fn(struct work_struct *work);
static DECLARE_DELAYED_WORK(amdqp_wd_work, amdqp_watchdog_fn);

/* Set once at exit (under amdqp_lock) so the work stops re-arming. */
static bool amdqp_wd_stopping;

/*
 * Scratch for one pass, so the periodic work allocates nothing. Used only
 * by the work item and, once that is cancelled, by module exit: never
 * concurrently.
 */
static struct amdqp_queue *amdqp_wd_qs[AMDQP_WD_BATCH];
static int amdqp_wd_res[AMDQP_WD_BATCH];

/*
 * Collect queues to reconcile. With @force, every suspended queue is let
 * go (module unload); otherwise only overdue and inconsistent ones.
 */
static unsigned int amdqp_wd_collect(struct amdqp_queue **qs, bool force)
{
	u64 limit = (u64)READ_ONCE(amdqp_max_suspend_ms) * NSEC_PER_MSEC;
	u64 cool = (u64)READ_ONCE(amdqp_cooldown_ms) * NSEC_PER_MSEC;
	struct amdqp_device *dev;
	struct amdqp_queue *q;
	unsigned int n = 0;
	u64 now;

	mutex_lock(&amdqp_lock);
	/* Read under the lock: suspended_since is never in our future. */
	now = amdqp_now_ns();
	list_for_each_entry(dev, &amdqp_devices, node) {
		list_for_each_entry(q, &dev->queues, dev_node) {
			bool overdue = q->hw_suspended && limit &&
				       now - q->suspended_since > limit;

			if (n == AMDQP_WD_BATCH)
				goto out;
			if (force || overdue) {
				if (overdue) {
					u64 held = now - q->suspended_since;

					q->cooldown_until = now + cool;
					atomic64_inc(&amdqp_stats.watchdog_resumes);
					trace_amdqp_watchdog(dev->gpu_id,
							     pid_nr(q->owner),
							     q->queue_id, held);
					amdqp_emit(AMDQP_EVENT_WATCHDOG,
						   q->owner, dev->gpu_id,
						   q->queue_id, 0, held);
				}
				amdqp_drop_holds_locked(q);
			}
			if (q->hw_suspended == !!q->nr_holds ||
			    (q->inflight && !force))
				continue;
			amdqp_queue_get(q);
			qs[n++] = q;
		}
	}
out:
	mutex_unlock(&amdqp_lock);
	return n;
}

static void amdqp_wd_run(bool force)
{
	unsigned int i, n;

	do {
		n = amdqp_wd_collect(amdqp_wd_qs, force);
		amdqp_reconcile(amdqp_wd_qs, n, amdqp_wd_res, 0, NULL);
		for (i = 0; i < n; i++)
			amdqp_queue_put(amdqp_wd_qs[i]);
		/* At unload keep going until nothing is left. */
	} while (force && n == AMDQP_WD_BATCH);
}

static void amdqp_watchdog_fn(struct work_struct *work)
{
	amdqp_wd_run(false);
	mutex_lock(&amdqp_lock);
	if (!amdqp_wd_stopping)
		schedule_delayed_work(&amdqp_wd_work,
				      msecs_to_jiffies(AMDQP_WD_PERIOD_MS));
	mutex_unlock(&amdqp_lock);
}

void amdqp_watchdog_init(void)
{
	amdqp_wd_stopping = false;
	schedule_delayed_work(&amdqp_wd_work,
			      msecs_to_jiffies(AMDQP_WD_PERIOD_MS));
}

void amdqp_watchdog_exit(void)
{
	mutex_lock(&amdqp_lock);
	amdqp_wd_stopping = true;
	mutex_unlock(&amdqp_lock);
	cancel_delayed_work_sync(&amdqp_wd_work);
}

/* Module unload: no fd is left, put back whatever is still off. */
void amdqp_resume_everything(void)
{
	amdqp_wd_run(true);
}
