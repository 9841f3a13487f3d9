// SPDX-License-Identifier: GPL-2.0
/*
 * Reconciliation: bring the hardware state of queues (hw_suspended,
 * hw_confined and hw_mask) in line with what the holds ask for (nr_holds >
 * 0; the CU mask the confinements combine to), with one backend call per
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
#include <linux/string.h>
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
	enum amdqp_rc_what what;
	u64 latency_ns;
};

/* The four kinds of backend call, in the order a reconciliation makes them. */
enum amdqp_dir {
	AMDQP_DIR_SUSPEND,
	AMDQP_DIR_CONFINE,
	AMDQP_DIR_UNCONFINE,
	AMDQP_DIR_RESUME,
};

/* An entry the backend did not write: it failed before reaching it. */
#define AMDQP_RES_UNSET	INT_MIN

/*
 * One backend call. Entries keep what the backend wrote, also when it
 * returns a device-wide error: some may have changed all the same.
 * @masks: CONFINE, the mask of each queue; UNCONFINE, @n NULLs.
 */
static int amdqp_backend_op(struct amdqp_device *dev, enum amdqp_dir dir,
			    struct amdqp_queue **qs, unsigned int n,
			    const u32 *const *masks, int *res, u32 grace_us)
{
	unsigned int i;
	int ret;

	for (i = 0; i < n; i++)
		res[i] = AMDQP_RES_UNSET;
	switch (dir) {
	case AMDQP_DIR_SUSPEND:
		ret = dev->ops->suspend(dev, qs, n, res, grace_us);
		break;
	case AMDQP_DIR_RESUME:
		ret = dev->ops->resume(dev, qs, n, res);
		break;
	default:
		ret = dev->ops->confine(dev, qs, n, masks, res, grace_us);
		break;
	}
	for (i = 0; i < n; i++)
		if (res[i] == AMDQP_RES_UNSET || res[i] > 0)
			res[i] = ret < 0 ? ret : -EIO;
	return ret;
}

static const char *const amdqp_dir_name[] = {
	[AMDQP_DIR_SUSPEND] = "suspend",
	[AMDQP_DIR_CONFINE] = "confine",
	[AMDQP_DIR_UNCONFINE] = "unconfine",
	[AMDQP_DIR_RESUME] = "resume",
};

/* Whether the caller of the job asked for the outcome of @dir. */
static bool amdqp_dir_reported(const struct amdqp_dev_job *job,
			       enum amdqp_dir dir)
{
	bool confine = dir == AMDQP_DIR_CONFINE || dir == AMDQP_DIR_UNCONFINE;

	return job->what & (confine ? AMDQP_RC_CONFINE : AMDQP_RC_SUSPEND);
}

static void amdqp_call_backend(struct amdqp_dev_job *job, enum amdqp_dir dir,
			       struct amdqp_queue **qs, unsigned int *pos,
			       unsigned int n, const u32 *const *masks,
			       int *res)
{
	struct amdqp_device *dev = job->dev;
	unsigned int i, failed = 0;
	u64 t0 = amdqp_now_ns(), dt;
	int ret, first_err = 0;

	if (!n)
		return;
	ret = amdqp_backend_op(dev, dir, qs, n, masks, res, job->grace_us);
	if (ret < 0)
		first_err = ret;
	for (i = 0; i < n; i++) {
		if (res[i] && !failed++ && !first_err)
			first_err = res[i];
		/* A queue's first failure is its result. */
		if (amdqp_dir_reported(job, dir) && !job->res[pos[i]])
			job->res[pos[i]] = res[i];
	}
	dt = amdqp_now_ns() - t0;
	job->latency_ns += dt;
	switch (dir) {
	case AMDQP_DIR_SUSPEND:
		trace_amdqp_suspend_batch(dev->gpu_id, n, failed, dt);
		break;
	case AMDQP_DIR_CONFINE:
		trace_amdqp_confine_batch(dev->gpu_id, n, failed, dt);
		break;
	case AMDQP_DIR_UNCONFINE:
		trace_amdqp_unconfine_batch(dev->gpu_id, n, failed, dt);
		break;
	case AMDQP_DIR_RESUME:
		trace_amdqp_resume_batch(dev->gpu_id, n, failed, dt);
		break;
	}
	if (failed || ret < 0) {
		atomic64_add(failed, &amdqp_stats.failures);
		trace_amdqp_error(dev->gpu_id, amdqp_dir_name[dir], first_err);
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

/* The backend reported @q running under @mask (dev->mask_words words). */
static void amdqp_mark_confined_locked(struct amdqp_queue *q, const u32 *mask,
				       u64 now)
{
	lockdep_assert_held(&amdqp_lock);
	memcpy(q->hw_mask, mask, q->dev->mask_words * sizeof(u32));
	if (q->hw_confined)
		return;
	q->hw_confined = true;
	q->confined_since = now;
	q->confine_count++;
	q->dev->num_confined++;
	amdqp_watchdog_kick_locked();
}

/*
 * Resume (@dir RESUME) or lift the confinement of (@dir UNCONFINE) @n
 * queues whose suspension or confinement was discarded (dev->sched_lock
 * held). A live queue the backend could not put back is marked as it is,
 * so that the watchdog's repair pass retries it; a dead one is the
 * backend's to clear (it is being destroyed, or the backend is unbinding).
 */
static void amdqp_undo(struct amdqp_device *dev, enum amdqp_dir dir,
		       struct amdqp_queue **qs, unsigned int n,
		       const u32 *const *masks, int *res)
{
	const u32 *const *none = masks + n;	/* n NULLs after the masks */
	unsigned int i, failed = 0;
	u64 t0 = amdqp_now_ns(), now;

	amdqp_backend_op(dev, dir, qs, n, none, res, 0);
	mutex_lock(&amdqp_lock);
	now = amdqp_now_ns();
	for (i = 0; i < n; i++) {
		if (!res[i])
			continue;
		failed++;
		if (qs[i]->dead)
			continue;
		if (dir == AMDQP_DIR_RESUME)
			amdqp_mark_suspended_locked(qs[i], now);
		else
			amdqp_mark_confined_locked(qs[i], masks[i], now);
	}
	mutex_unlock(&amdqp_lock);
	if (dir == AMDQP_DIR_RESUME)
		trace_amdqp_resume_batch(dev->gpu_id, n, failed, now - t0);
	else
		trace_amdqp_unconfine_batch(dev->gpu_id, n, failed, now - t0);
}

/* Per-direction lists of one device's reconciliation. */
struct amdqp_rc_list {
	struct amdqp_queue **qs;
	unsigned int *pos;
	int *res;
	unsigned int n;
};

static void amdqp_rc_add(struct amdqp_rc_list *l, struct amdqp_queue *q,
			 unsigned int p)
{
	l->pos[l->n] = p;
	l->qs[l->n++] = q;
}

static void amdqp_reconcile_dev(struct amdqp_dev_job *job)
{
	struct amdqp_device *dev = job->dev;
	unsigned int i, k, n = job->n, mw = dev->mask_words;
	struct amdqp_rc_list l[4], us, uc;
	const u32 **masks, **cmasks;
	u32 *want;
	size_t per;
	void *mem;
	u8 *p;
	u64 gen, now;

	/*
	 * Four directions and two undo lists, at most n queues each, plus
	 * room for the wanted masks. n is bounded by the callers
	 * (AMDQP_MAX_BATCH for ioctls, the watchdog's batch, an fd's
	 * holds); kvmalloc keeps a large one from needing a high-order page.
	 */
	per = 6 * (sizeof(struct amdqp_queue *) + sizeof(unsigned int) +
		   sizeof(int)) + 3 * sizeof(u32 *) + mw * sizeof(u32);
	mem = kvmalloc_array(n, per, AMDQP_GFP_CALLER | __GFP_ZERO);
	if (!mem) {
		for (i = 0; i < n; i++)
			job->res[job->idx[i]] = -ENOMEM;
		return;
	}
	p = mem;
	masks = (const u32 **)p;	/* confine: masks; undo: masks, NULLs */
	p += 2 * n * sizeof(u32 *);
	cmasks = (const u32 **)p;	/* undo of confine: the masks applied */
	p += n * sizeof(u32 *);
	for (k = 0; k < 4; k++) {
		l[k].qs = (struct amdqp_queue **)p;
		p += n * sizeof(struct amdqp_queue *);
		l[k].pos = (unsigned int *)p;
		p += n * sizeof(unsigned int);
		l[k].res = (int *)p;
		p += n * sizeof(int);
		l[k].n = 0;
	}
	us.qs = (struct amdqp_queue **)p;
	p += n * sizeof(struct amdqp_queue *);
	uc.qs = (struct amdqp_queue **)p;
	p += n * sizeof(struct amdqp_queue *);
	us.res = (int *)p;
	p += n * sizeof(int);
	uc.res = (int *)p;
	p += n * sizeof(int);
	us.pos = (unsigned int *)p;	/* unused by the undo lists */
	p += n * sizeof(unsigned int);
	uc.pos = (unsigned int *)p;
	p += n * sizeof(unsigned int);
	want = (u32 *)p;
	us.n = 0;
	uc.n = 0;

	mutex_lock(&dev->sched_lock);
	mutex_lock(&amdqp_lock);
	gen = dev->generation;
	for (i = 0; i < n; i++) {
		struct amdqp_queue *q = job->qs[i];
		unsigned int pi = job->idx[i];
		u32 *m = want + (size_t)l[AMDQP_DIR_CONFINE].n * mw;

		if (dev->dead) {
			job->res[pi] = -ENODEV;
			continue;
		}
		if (q->dead) {
			job->res[pi] = -ENOENT;
			continue;
		}
		job->res[pi] = 0;
		if (q->nr_holds && !q->hw_suspended)
			amdqp_rc_add(&l[AMDQP_DIR_SUSPEND], q, pi);
		else if (!q->nr_holds && q->hw_suspended)
			amdqp_rc_add(&l[AMDQP_DIR_RESUME], q, pi);
		if (!mw)
			continue;
		if (amdqp_confine_want_locked(q, m)) {
			if (q->hw_confined &&
			    !memcmp(m, q->hw_mask, mw * sizeof(u32)))
				continue;
			masks[l[AMDQP_DIR_CONFINE].n] = m;
			amdqp_rc_add(&l[AMDQP_DIR_CONFINE], q, pi);
		} else if (q->hw_confined) {
			amdqp_rc_add(&l[AMDQP_DIR_UNCONFINE], q, pi);
		}
	}
	mutex_unlock(&amdqp_lock);

	/*
	 * Take off first, so that the confinement and lifting of a queue
	 * going off cost no preemption of it; put back last, so that a queue
	 * comes back already under its new mask.
	 */
	amdqp_call_backend(job, AMDQP_DIR_SUSPEND, l[0].qs, l[0].pos, l[0].n,
			   NULL, l[0].res);
	amdqp_call_backend(job, AMDQP_DIR_CONFINE, l[1].qs, l[1].pos, l[1].n,
			   masks, l[1].res);
	/* Lifting: every mask NULL (the second half of @masks is zeroed). */
	amdqp_call_backend(job, AMDQP_DIR_UNCONFINE, l[2].qs, l[2].pos, l[2].n,
			   masks + n, l[2].res);
	amdqp_call_backend(job, AMDQP_DIR_RESUME, l[3].qs, l[3].pos, l[3].n,
			   NULL, l[3].res);

	mutex_lock(&amdqp_lock);
	now = amdqp_now_ns();
	for (i = 0; i < l[0].n; i++) {
		struct amdqp_queue *q = l[0].qs[i];

		if (l[0].res[i])
			continue;
		if (dev->generation != gen || q->dead) {
			/*
			 * A reset or removal raced: the holds this suspension
			 * was for are gone, but the backend did take the
			 * queue off. Put it back below.
			 */
			job->res[l[0].pos[i]] = q->dead ? -ENOENT : -ENODEV;
			us.qs[us.n++] = q;
			continue;
		}
		amdqp_mark_suspended_locked(q, now);
		atomic64_inc(&amdqp_stats.queues_suspended);
	}
	for (i = 0; i < l[1].n; i++) {
		struct amdqp_queue *q = l[1].qs[i];

		if (l[1].res[i])
			continue;
		if (dev->generation != gen || q->dead) {
			job->res[l[1].pos[i]] = q->dead ? -ENOENT : -ENODEV;
			/* A destroyed queue's mask goes with it. */
			if (!q->dead) {
				cmasks[uc.n] = masks[i];
				uc.qs[uc.n++] = q;
			}
			continue;
		}
		amdqp_mark_confined_locked(q, masks[i], now);
		atomic64_inc(&amdqp_stats.queues_confined);
	}
	for (k = 2; k < 4; k++) {
		for (i = 0; i < l[k].n; i++) {
			struct amdqp_queue *q = l[k].qs[i];

			if (l[k].res[i])
				continue;
			if (dev->generation != gen || q->dead) {
				job->res[l[k].pos[i]] = q->dead ? -ENOENT :
								  -ENODEV;
				continue;
			}
			if (k == AMDQP_DIR_RESUME) {
				amdqp_account_resume_locked(q, now);
				atomic64_inc(&amdqp_stats.queues_resumed);
			} else {
				amdqp_account_unconfine_locked(q);
				atomic64_inc(&amdqp_stats.queues_unconfined);
			}
		}
	}
	mutex_unlock(&amdqp_lock);
	/* The undo calls want n NULL masks after theirs: @masks + n. */
	if (uc.n) {
		memcpy(masks, cmasks, uc.n * sizeof(*masks));
		memset(masks + uc.n, 0, uc.n * sizeof(*masks));
		amdqp_undo(dev, AMDQP_DIR_UNCONFINE, uc.qs, uc.n, masks,
			   uc.res);
	}
	if (us.n)
		amdqp_undo(dev, AMDQP_DIR_RESUME, us.qs, us.n, masks, us.res);
	mutex_unlock(&dev->sched_lock);
	kvfree(mem);
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
 * @what: whose outcome @results reports: of suspending and resuming, of
 *	confining and lifting, or the first failure of any; a queue no call
 *	of that kind concerned reads 0
 *
 * Must be called without amdqp_lock and without any sched_lock.
 */
void amdqp_reconcile(struct amdqp_queue **qs, unsigned int n, int *results,
		     u32 grace_us, u64 *latency_ns, enum amdqp_rc_what what)
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
		jobs[j].what = what;
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
