// SPDX-License-Identifier: GPL-2.0
/*
 * Reconciliation: bring the hardware state of queues (hw_suspended) in line
 * with what the holds ask for (nr_holds > 0), with one backend call per
 * direction per device, devices in parallel.
 *
 * hw_suspended follows what the backend reports per entry, never what the
 * core hoped for: a queue the backend took off stays marked off until a
 * resume is reported, so that the watchdog's repair pass puts back every
 * queue that has no holder (amdqp_backend.h, "results").
 */
#include <linux/limits.h>
#include <linux/minmax.h>
#include <linux/slab.h>
#include <linux/workqueue.h>

#include "amdqp_priv.h"
#include "amdqp_trace.h"

struct amdqp_dev_job {
	struct work_struct work;
	struct amdqp_device *dev;
	struct amdqp_queue **qs;	/* this device's queues, packed */
	int *res;
	unsigned int *idx;		/* position of qs[i] in the caller's */
	unsigned int n;
	u32 grace_us;
	u64 latency_ns;
};

/* An entry the backend did not write: it failed before reaching it. */
#define AMDQP_RES_UNSET	INT_MIN

/*
 * One backend call. Entries keep what the backend wrote, also when it
 * returns a device-wide error: some may have changed all the same.
 */
static int amdqp_backend_op(struct amdqp_device *dev, bool suspend,
			    struct amdqp_queue **qs, unsigned int n, int *res,
			    u32 grace_us)
{
	unsigned int i;
	int ret;

	for (i = 0; i < n; i++)
		res[i] = AMDQP_RES_UNSET;
	if (suspend)
		ret = dev->ops->suspend(dev, qs, n, res, grace_us);
	else
		ret = dev->ops->resume(dev, qs, n, res);
	for (i = 0; i < n; i++)
		if (res[i] == AMDQP_RES_UNSET || res[i] > 0)
			res[i] = ret < 0 ? ret : -EIO;
	return ret;
}

static void amdqp_call_backend(struct amdqp_dev_job *job, bool suspend,
			       struct amdqp_queue **qs, unsigned int *pos,
			       unsigned int n, int *res)
{
	struct amdqp_device *dev = job->dev;
	unsigned int i, failed = 0;
	u64 t0 = amdqp_now_ns(), dt;
	int ret, first_err = 0;

	if (!n)
		return;
	ret = amdqp_backend_op(dev, suspend, qs, n, res, job->grace_us);
	if (ret < 0)
		first_err = ret;
	for (i = 0; i < n; i++) {
		if (res[i] && !failed++ && !first_err)
			first_err = res[i];
		job->res[pos[i]] = res[i];
	}
	dt = amdqp_now_ns() - t0;
	job->latency_ns += dt;
	if (suspend)
		trace_amdqp_suspend_batch(dev->gpu_id, n, failed, dt);
	else
		trace_amdqp_resume_batch(dev->gpu_id, n, failed, dt);
	if (failed || ret < 0) {
		atomic64_add(failed, &amdqp_stats.failures);
		trace_amdqp_error(dev->gpu_id, suspend ? "suspend" : "resume",
				  first_err);
	}
}

static void amdqp_mark_suspended_locked(struct amdqp_queue *q, u64 now)
{
	lockdep_assert_held(&amdqp_lock);
	if (q->hw_suspended)
		return;
	amdqp_starve_update_locked(q, now);
	q->hw_suspended = true;
	q->suspended_since = now;
	q->suspend_count++;
	q->dev->num_suspended++;
	amdqp_watchdog_kick_locked();
}

/*
 * Resume @n queues whose suspension was discarded (dev->sched_lock held).
 * A live queue the backend could not put back is marked off, so that the
 * watchdog's repair pass retries it; a dead one is the backend's to clear
 * (it is being destroyed, or the backend is unbinding).
 */
static void amdqp_undo_suspend(struct amdqp_device *dev,
			       struct amdqp_queue **qs, unsigned int n,
			       int *res)
{
	unsigned int i, failed = 0;
	u64 t0 = amdqp_now_ns(), now;

	amdqp_backend_op(dev, false, qs, n, res, 0);
	mutex_lock(&amdqp_lock);
	now = amdqp_now_ns();
	for (i = 0; i < n; i++) {
		if (!res[i])
			continue;
		failed++;
		if (!qs[i]->dead)
			amdqp_mark_suspended_locked(qs[i], now);
	}
	mutex_unlock(&amdqp_lock);
	trace_amdqp_resume_batch(dev->gpu_id, n, failed, now - t0);
}

static void amdqp_reconcile_dev(struct amdqp_dev_job *job)
{
	struct amdqp_device *dev = job->dev;
	unsigned int i, ns = 0, nr = 0, n = job->n;
	struct amdqp_queue **sq, **rq, **uq;
	unsigned int *spos, *rpos, nundo;
	int *sres, *rres, *ures;
	u64 gen, now;

	/*
	 * Suspends, resumes and suspends to undo: at most n of each. n is
	 * bounded by the callers (AMDQP_MAX_BATCH for ioctls, the
	 * watchdog's batch, an fd's holds); kvmalloc keeps a large one from
	 * needing a high-order page.
	 */
	sq = kvmalloc_array(n, 3 * (sizeof(*sq) + sizeof(*sres)) +
			    2 * sizeof(*spos), AMDQP_GFP_CALLER | __GFP_ZERO);
	if (!sq) {
		for (i = 0; i < n; i++)
			job->res[job->idx[i]] = -ENOMEM;
		return;
	}
	rq = sq + n;
	uq = rq + n;
	spos = (unsigned int *)(uq + n);
	rpos = spos + n;
	sres = (int *)(rpos + n);
	rres = sres + n;
	ures = rres + n;

	mutex_lock(&dev->sched_lock);
	mutex_lock(&amdqp_lock);
	gen = dev->generation;
	for (i = 0; i < n; i++) {
		struct amdqp_queue *q = job->qs[i];
		unsigned int p = job->idx[i];

		if (dev->dead) {
			job->res[p] = -ENODEV;
		} else if (q->dead) {
			job->res[p] = -ENOENT;
		} else if (q->nr_holds && !q->hw_suspended) {
			spos[ns] = p;
			sq[ns++] = q;
		} else if (!q->nr_holds && q->hw_suspended) {
			rpos[nr] = p;
			rq[nr++] = q;
		} else {
			job->res[p] = 0;
		}
	}
	mutex_unlock(&amdqp_lock);

	amdqp_call_backend(job, true, sq, spos, ns, sres);
	amdqp_call_backend(job, false, rq, rpos, nr, rres);

	mutex_lock(&amdqp_lock);
	now = amdqp_now_ns();
	for (i = 0, nundo = 0; i < ns; i++) {
		struct amdqp_queue *q = sq[i];

		if (sres[i])
			continue;
		if (dev->generation != gen || q->dead) {
			/*
			 * A reset or removal raced: the holds this suspension
			 * was for are gone, but the backend did take the
			 * queue off. Put it back below.
			 */
			job->res[spos[i]] = q->dead ? -ENOENT : -ENODEV;
			uq[nundo++] = q;
			continue;
		}
		amdqp_mark_suspended_locked(q, now);
		atomic64_inc(&amdqp_stats.queues_suspended);
	}
	for (i = 0; i < nr; i++) {
		struct amdqp_queue *q = rq[i];

		if (rres[i])
			continue;
		if (dev->generation != gen || q->dead) {
			job->res[rpos[i]] = q->dead ? -ENOENT : -ENODEV;
			continue;
		}
		amdqp_account_resume_locked(q, now);
		atomic64_inc(&amdqp_stats.queues_resumed);
	}
	mutex_unlock(&amdqp_lock);
	if (nundo)
		amdqp_undo_suspend(dev, uq, nundo, ures);
	mutex_unlock(&dev->sched_lock);
	kvfree(sq);
}

static void amdqp_dev_job_fn(struct work_struct *work)
{
	amdqp_reconcile_dev(container_of(work, struct amdqp_dev_job, work));
}

/**
 * amdqp_reconcile - apply the holds of @qs to the hardware
 * @qs: queues, each with a reference held by the caller; NULL entries are
 *	skipped
 * @n: entries
 * @results: out: 0, or the negative errno of the scheduler update
 * @grace_us: preemption deadline in us, 0 for the backend's default;
 *	clamped to AMDQP_GRACE_MAX_US before any backend sees it
 * @latency_ns: out, may be NULL: wall time of the slowest device
 *
 * Must be called without amdqp_lock and without any sched_lock.
 */
void amdqp_reconcile(struct amdqp_queue **qs, unsigned int n, int *results,
		     u32 grace_us, u64 *latency_ns)
{
	struct amdqp_dev_job *jobs;
	struct amdqp_queue **packed;
	unsigned int *idx, *owner;
	unsigned int i, j, njobs = 0, fill = 0;
	struct amdqp_device *seen = NULL;
	u64 lat = 0;

	if (!n)
		goto out;
	/* One job per device, not per queue: count the devices first. */
	for (i = 0; i < n; i++) {
		if (!qs[i] || qs[i]->dev == seen)
			continue;
		seen = qs[i]->dev;
		for (j = 0; j < i; j++)
			if (qs[j] && qs[j]->dev == seen)
				break;
		njobs += j == i;
	}
	jobs = kcalloc(max(njobs, 1U), sizeof(*jobs), GFP_KERNEL);
	packed = kvmalloc_array(n, sizeof(*packed), AMDQP_GFP_CALLER);
	idx = kvmalloc_array(n, sizeof(*idx), AMDQP_GFP_CALLER);
	owner = kvmalloc_array(n, sizeof(*owner), AMDQP_GFP_CALLER);
	if (!jobs || !packed || !idx || !owner) {
		for (i = 0; i < n; i++)
			results[i] = -ENOMEM;
		goto free;
	}

	/* Group by device, keeping each device's entries contiguous. */
	njobs = 0;
	for (i = 0; i < n; i++) {
		if (!qs[i])
			continue;
		for (j = 0; j < njobs; j++)
			if (jobs[j].dev == qs[i]->dev)
				break;
		if (j == njobs)
			jobs[njobs++].dev = qs[i]->dev;
		owner[i] = j;
		jobs[j].n++;
	}
	for (j = 0; j < njobs; j++) {
		jobs[j].qs = packed + fill;
		jobs[j].idx = idx + fill;
		jobs[j].res = results;
		jobs[j].grace_us = min(grace_us, AMDQP_GRACE_MAX_US);
		fill += jobs[j].n;
		jobs[j].n = 0;
	}
	for (i = 0; i < n; i++) {
		struct amdqp_dev_job *job;

		if (!qs[i])
			continue;
		job = &jobs[owner[i]];
		job->qs[job->n] = qs[i];
		job->idx[job->n++] = i;
	}

	/* Devices are independent: update them concurrently. */
	for (j = 1; j < njobs; j++) {
		INIT_WORK(&jobs[j].work, amdqp_dev_job_fn);
		queue_work(system_unbound_wq, &jobs[j].work);
	}
	if (njobs)
		amdqp_reconcile_dev(&jobs[0]);
	for (j = 0; j < njobs; j++) {
		if (j)
			flush_work(&jobs[j].work);
		lat = max(lat, jobs[j].latency_ns);
	}
free:
	kvfree(owner);
	kvfree(idx);
	kvfree(packed);
	kfree(jobs);
out:
	if (latency_ns)
		*latency_ns = lat;
}
