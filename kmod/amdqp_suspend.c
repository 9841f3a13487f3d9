// SPDX-License-Identifier: GPL-2.0
/*
 * fd-scoped suspension: which fd holds which queue off the hardware, the
 * batch ioctls that change it, and the fd release that undoes it.
 */
#include <linux/capability.h>
#include <linux/cred.h>
#include <linux/mm.h>
#include <linux/sched/coredump.h>
#include <linux/sched/task.h>
#include <linux/slab.h>
#include <linux/uaccess.h>
#include <linux/user_namespace.h>

#include "amdqp_priv.h"

/*
 * Like ptrace attach rights: the caller's own process; or the owner's real,
 * effective and saved ids equal the caller's real ones, it is dumpable,
 * and the kernel's ptrace attach check passed for it before the call
 * (@t, amdqp_trust.c: Yama's ptrace_scope and other LSMs decide there),
 * unless same_uid_control is off; or CAP_SYS_PTRACE over the owner's user
 * namespace, or CAP_SYS_ADMIN. The credential test comes first so that a
 * capability is only asked for when it decides; @audit says whether a
 * missing one is worth an audit record (an explicit SUSPEND) or not (a
 * queue SUSPEND_BELOW merely skips). Returns 0 or -EPERM/-ENOENT.
 */
int amdqp_may_control(struct amdqp_queue *q, bool audit,
		      const struct amdqp_tracees *t)
{
	const struct cred *me = current_cred();
	struct user_namespace *tns;
	bool same, dumpable, ok;

	if (q->owner == task_tgid(current))
		return 0;
	if (!amdqp_owner_creds(q->owner, me->uid, me->gid, &same, &dumpable,
			       &tns))
		return ns_capable_noaudit(&init_user_ns, CAP_SYS_ADMIN) ?
		       0 : -ENOENT;
	if (same && dumpable && READ_ONCE(amdqp_same_uid_control) &&
	    amdqp_tracees_has(t, q->owner))
		ok = true;
	else if (audit)
		ok = ns_capable(tns, CAP_SYS_PTRACE) || capable(CAP_SYS_ADMIN);
	else
		ok = ns_capable_noaudit(tns, CAP_SYS_PTRACE) ||
		     ns_capable_noaudit(&init_user_ns, CAP_SYS_ADMIN);
	put_user_ns(tns);
	return ok ? 0 : -EPERM;
}

/*
 * Suspensions and confinements (struct amdqp_chold) are linked alike,
 * each kind on lists and a count of its own: @q_holds and @nr are the
 * queue's, @f_holds the fd's. amdqp_lock held.
 */
struct amdqp_hold *amdqp_hold_find(struct list_head *q_holds,
				   const struct amdqp_file *f)
{
	struct amdqp_hold *h;

	lockdep_assert_held(&amdqp_lock);
	list_for_each_entry(h, q_holds, q_node)
		if (h->f == f)
			return h;
	return NULL;
}

/* Consumes @h; takes a queue reference for it. */
void amdqp_hold_add(struct amdqp_hold *h, struct amdqp_file *f,
		    struct amdqp_queue *q, struct list_head *f_holds,
		    struct list_head *q_holds, u32 *nr)
{
	lockdep_assert_held(&amdqp_lock);
	amdqp_queue_get(q);
	h->q = q;
	h->f = f;
	list_add_tail(&h->q_node, q_holds);
	list_add_tail(&h->f_node, f_holds);
	(*nr)++;
}

/*
 * Frees @h (a confinement with it: its first member) and drops its queue
 * reference, never the last: callers have one.
 */
void amdqp_hold_del(struct amdqp_hold *h, u32 *nr)
{
	struct amdqp_queue *q = h->q;

	lockdep_assert_held(&amdqp_lock);
	list_del(&h->q_node);
	list_del(&h->f_node);
	(*nr)--;
	kfree(h);
	amdqp_queue_put(q);
}

/* Forget every fd's holds of one kind (not the hardware state). */
void amdqp_hold_drop_all(struct list_head *q_holds, u32 *nr)
{
	struct amdqp_hold *h, *tmp;

	list_for_each_entry_safe(h, tmp, q_holds, q_node)
		amdqp_hold_del(h, nr);
}

static struct amdqp_hold *amdqp_find_hold(struct amdqp_file *f,
					  struct amdqp_queue *q)
{
	return amdqp_hold_find(&q->holds, f);
}

static void amdqp_add_hold(struct amdqp_file *f, struct amdqp_queue *q,
			   struct amdqp_hold *h)
{
	amdqp_hold_add(h, f, q, &f->holds, &q->holds, &q->nr_holds);
}

static void amdqp_del_hold(struct amdqp_hold *h)
{
	amdqp_hold_del(h, &h->q->nr_holds);
}

void amdqp_drop_holds_locked(struct amdqp_queue *q)
{
	amdqp_hold_drop_all(&q->holds, &q->nr_holds);
}

u32 amdqp_qstate(struct amdqp_file *f, struct amdqp_queue *q, u64 now)
{
	u32 s = 0;

	if (q->hw_suspended)
		s |= AMDQP_QSTATE_SUSPENDED;
	if (f && amdqp_find_hold(f, q))
		s |= AMDQP_QSTATE_HELD;
	if (now < q->cooldown_until)
		s |= AMDQP_QSTATE_COOLDOWN;
	if (q->hw_confined)
		s |= AMDQP_QSTATE_CONFINED;
	if (f && amdqp_find_chold(f, q))
		s |= AMDQP_QSTATE_CONFINE_HELD;
	if (now < q->confine_cooldown_until)
		s |= AMDQP_QSTATE_CONFINE_COOLDOWN;
	return s;
}

/*
 * A batch request with its queue lookups, shared by SUSPEND and RESUME.
 * @qs holds every queue found (for the state reported back), @act only
 * those this call changes the holds of (what gets reconciled).
 */
struct amdqp_req {
	struct amdqp_batch b;
	u32 n;				/* entries allocated below */
	struct amdqp_queue_ref *refs;
	struct amdqp_queue **qs;
	struct amdqp_queue **act;
	struct amdqp_hold **holds;
	int *res;
};

static void amdqp_req_free(struct amdqp_req *r)
{
	u32 i;

	for (i = 0; i < r->n; i++) {
		if (r->qs[i])
			amdqp_queue_put(r->qs[i]);
		if (r->holds)
			kfree(r->holds[i]);
	}
	kvfree(r->holds);
	kvfree(r->res);
	kvfree(r->act);
	kvfree(r->qs);
	kvfree(r->refs);
}

static int amdqp_req_read(struct amdqp_req *r, void __user *arg, u32 size,
			  bool suspend)
{
	u8 __user *uref;
	u32 i, count;
	int ret;

	memset(r, 0, sizeof(*r));
	ret = copy_struct_from_user(&r->b, sizeof(r->b), arg, size);
	if (ret)
		return ret;
	count = r->b.count;
	if (r->b.flags || r->b.pad || (!suspend && r->b.grace_us))
		return -EINVAL;
	if (!count || count > AMDQP_MAX_BATCH ||
	    r->b.ref_size < offsetofend(struct amdqp_queue_ref, ring_va) ||
	    r->b.ref_size > PAGE_SIZE || r->b.ref_size % 8)
		return -EINVAL;

	r->refs = kvcalloc(count, sizeof(*r->refs), AMDQP_GFP_CALLER);
	r->qs = kvcalloc(count, sizeof(*r->qs), AMDQP_GFP_CALLER);
	r->act = kvcalloc(count, sizeof(*r->act), AMDQP_GFP_CALLER);
	r->res = kvcalloc(count, sizeof(*r->res), AMDQP_GFP_CALLER);
	if (suspend)
		r->holds = kvcalloc(count, sizeof(*r->holds), AMDQP_GFP_CALLER);
	if (!r->refs || !r->qs || !r->act || !r->res ||
	    (suspend && !r->holds)) {
		kvfree(r->qs);
		r->qs = NULL;
		return -ENOMEM;
	}
	r->n = count;

	uref = u64_to_user_ptr(r->b.refs);
	for (i = 0; i < count; i++) {
		ret = copy_struct_from_user(&r->refs[i], sizeof(r->refs[i]),
					    uref + (size_t)i * r->b.ref_size,
					    r->b.ref_size);
		if (ret)
			return ret;
		if (suspend) {
			/* A hold lives as long as the fd: charge the caller. */
			r->holds[i] = kzalloc(sizeof(*r->holds[i]),
					      GFP_KERNEL_ACCOUNT);
			if (!r->holds[i])
				return -ENOMEM;
		}
	}
	return 0;
}

/* Fill in results and states, and copy everything back. */
static int amdqp_req_write(struct amdqp_req *r, struct amdqp_file *f,
			   void __user *arg, u32 size)
{
	u8 __user *uref = u64_to_user_ptr(r->b.refs);
	size_t rsize = min_t(size_t, r->b.ref_size, sizeof(*r->refs));
	u64 now = amdqp_now_ns();
	u32 i;

	r->b.done = 0;
	mutex_lock(&amdqp_lock);
	for (i = 0; i < r->n; i++) {
		r->refs[i].result = r->res[i];
		r->refs[i].state = r->qs[i] && !r->qs[i]->dead ?
				   amdqp_qstate(f, r->qs[i], now) : 0;
		if (!r->res[i])
			r->b.done++;
	}
	mutex_unlock(&amdqp_lock);

	for (i = 0; i < r->n; i++)
		if (copy_to_user(uref + (size_t)i * r->b.ref_size,
				 &r->refs[i], rsize))
			return -EFAULT;
	if (copy_to_user(arg, &r->b, min_t(size_t, size, sizeof(r->b))))
		return -EFAULT;
	return 0;
}

/* The ioctl's reconciliation is done: the watchdog may look again. */
static void amdqp_req_settle(struct amdqp_req *r)
{
	u32 i;

	lockdep_assert_held(&amdqp_lock);
	for (i = 0; i < r->n; i++)
		if (r->act[i])
			r->act[i]->inflight--;
}

/*
 * Take back the holds @f just added on @qs (each with inflight raised),
 * before any reconciliation: the call is refused as a whole.
 */
static void amdqp_unhold_locked(struct amdqp_file *f, struct amdqp_queue **qs,
				u32 n)
{
	struct amdqp_hold *h;
	u32 i;

	lockdep_assert_held(&amdqp_lock);
	for (i = 0; i < n; i++) {
		if (!qs[i])
			continue;
		h = amdqp_find_hold(f, qs[i]);
		if (h)
			amdqp_del_hold(h);
		qs[i]->inflight--;
	}
}

/*
 * The ptrace attach check for the owners @r names, before amdqp_lock (see
 * amdqp_trust.c); callers who may control every queue skip it.
 */
static int amdqp_req_tracees(struct amdqp_req *r, struct amdqp_file *f,
			     struct amdqp_tracees *t)
{
	struct pid **pids;
	u32 i, k = 0;

	if (amdqp_control_all())
		return 0;
	pids = kvcalloc(r->n, sizeof(*pids), AMDQP_GFP_CALLER);
	if (!pids)
		return -ENOMEM;
	for (i = 0; i < r->n; i++) {
		struct pid *p = NULL;

		if (r->refs[i].pid && r->refs[i].pid <= PID_MAX_LIMIT) {
			rcu_read_lock();
			p = get_pid(find_pid_ns(r->refs[i].pid, f->pid_ns));
			rcu_read_unlock();
		}
		if (p)
			pids[k++] = p;
	}
	return amdqp_tracees_check(t, pids, k);
}

long amdqp_ioctl_suspend(struct amdqp_file *f, void __user *arg, u32 size)
{
	bool exempt = amdqp_rate_exempt();
	struct amdqp_tracees t = {};
	struct amdqp_req r;
	u64 now;
	long ret;
	u32 i;

	ret = amdqp_req_read(&r, arg, size, true);
	if (ret)
		goto out;
	atomic64_inc(&amdqp_stats.suspend_calls);
	ret = amdqp_req_tracees(&r, f, &t);
	if (ret)
		goto out;

	mutex_lock(&amdqp_lock);
	now = amdqp_now_ns();
	for (i = 0; i < r.n; i++) {
		struct amdqp_queue *q;

		q = amdqp_find_queue(&r.refs[i], f->pid_ns);
		if (IS_ERR(q)) {
			r.res[i] = PTR_ERR(q);
			continue;
		}
		r.qs[i] = q;
		r.res[i] = amdqp_may_control(q, true, &t);
		if (!r.res[i] && amdqp_find_hold(f, q))
			r.res[i] = -EALREADY;
		if (!r.res[i] && now < q->cooldown_until)
			r.res[i] = -EAGAIN;
		if (r.res[i])
			continue;
		amdqp_add_hold(f, q, r.holds[i]);
		r.holds[i] = NULL;
		q->inflight++;
		r.act[i] = q;
	}
	if (!exempt && amdqp_rate_charge_locked(r.act, r.n, now)) {
		amdqp_unhold_locked(f, r.act, r.n);
		mutex_unlock(&amdqp_lock);
		ret = -EBUSY;
		goto out;
	}
	mutex_unlock(&amdqp_lock);

	amdqp_reconcile(r.act, r.n, r.res, r.b.grace_us, &r.b.latency_ns,
			AMDQP_RC_SUSPEND);

	/* A failed suspension is not held: the queue kept running. */
	mutex_lock(&amdqp_lock);
	for (i = 0; i < r.n; i++) {
		struct amdqp_hold *h;

		if (!r.act[i] || !r.res[i])
			continue;
		h = amdqp_find_hold(f, r.act[i]);
		if (h)
			amdqp_del_hold(h);
	}
	amdqp_req_settle(&r);
	mutex_unlock(&amdqp_lock);

	ret = amdqp_req_write(&r, f, arg, size);
out:
	amdqp_tracees_free(&t);
	amdqp_req_free(&r);
	return ret;
}

long amdqp_ioctl_resume(struct amdqp_file *f, void __user *arg, u32 size)
{
	struct amdqp_req r;
	long ret;
	u32 i;

	ret = amdqp_req_read(&r, arg, size, false);
	if (ret)
		goto out;
	atomic64_inc(&amdqp_stats.resume_calls);

	mutex_lock(&amdqp_lock);
	for (i = 0; i < r.n; i++) {
		struct amdqp_queue *q;
		struct amdqp_hold *h;

		q = amdqp_find_queue(&r.refs[i], f->pid_ns);
		if (IS_ERR(q)) {
			r.res[i] = PTR_ERR(q);
			continue;
		}
		r.qs[i] = q;
		h = amdqp_find_hold(f, q);
		if (!h) {
			r.res[i] = -EALREADY;
			continue;
		}
		amdqp_del_hold(h);
		q->inflight++;
		r.act[i] = q;
	}
	mutex_unlock(&amdqp_lock);

	amdqp_reconcile(r.act, r.n, r.res, 0, &r.b.latency_ns,
			AMDQP_RC_SUSPEND);
	mutex_lock(&amdqp_lock);
	amdqp_req_settle(&r);
	mutex_unlock(&amdqp_lock);
	ret = amdqp_req_write(&r, f, arg, size);
out:
	amdqp_req_free(&r);
	return ret;
}

bool amdqp_gpus_has(const struct amdqp_gpus *g, u32 gpu_id)
{
	u32 i;

	if (!g->n)
		return true;
	for (i = 0; i < g->n; i++)
		if (g->ids[i] == gpu_id)
			return true;
	return false;
}

static int amdqp_gpus_read(struct amdqp_gpus *g, const struct amdqp_gpu_set *s)
{
	u32 i;

	g->n = s->num_gpus;
	g->ids = NULL;
	if (!g->n)
		return 0;
	if (g->n > AMDQP_MAX_BATCH)
		return -EINVAL;
	/* n is bounded above, so the size cannot overflow. */
	g->ids = memdup_user(u64_to_user_ptr(s->gpu_ids), g->n * sizeof(u32));
	if (IS_ERR(g->ids)) {
		int ret = PTR_ERR(g->ids);

		g->ids = NULL;
		return ret;
	}
	/* Unknown devices are an error, not silently nothing. */
	mutex_lock(&amdqp_lock);
	for (i = 0; i < g->n; i++)
		if (!amdqp_device_find_locked(g->ids[i]))
			break;
	mutex_unlock(&amdqp_lock);
	return i < g->n ? -ENODEV : 0;
}

/* Collect up to @max queue pointers (with references) into a new array. */
static struct amdqp_queue **amdqp_qarray(u32 max)
{
	return kvcalloc(max ? max : 1, sizeof(struct amdqp_queue *),
			AMDQP_GFP_CALLER);
}

static u32 amdqp_count_queues_locked(void)
{
	struct amdqp_device *dev;
	u32 n = 0;

	list_for_each_entry(dev, &amdqp_devices, node)
		n += dev->num_queues;
	return n;
}

/*
 * The ptrace attach check for the owners of the queues SUSPEND_BELOW may
 * take (at most @cap of them), before it takes amdqp_lock for good: see
 * amdqp_trust.c. A queue of an owner that appears in between is skipped.
 */
int amdqp_below_tracees(struct amdqp_file *f, const struct amdqp_gpus *g,
			u32 below, u32 cap, struct amdqp_tracees *t)
{
	struct pid *self = task_tgid(current);
	struct amdqp_device *dev;
	struct amdqp_queue *q;
	struct pid **pids;
	u32 k = 0;

	if (amdqp_control_all() || !cap)
		return 0;
	pids = kvcalloc(cap, sizeof(*pids), AMDQP_GFP_CALLER);
	if (!pids)
		return -ENOMEM;
	mutex_lock(&amdqp_lock);
	list_for_each_entry(dev, &amdqp_devices, node) {
		if (!amdqp_gpus_has(g, dev->gpu_id))
			continue;
		list_for_each_entry(q, &dev->queues, dev_node) {
			if (k == cap)
				goto full;
			if (q->priority >= below || q->owner == self ||
			    !pid_nr_ns(q->owner, f->pid_ns))
				continue;
			/* A process's queues are mostly adjacent. */
			if (k && pids[k - 1] == q->owner)
				continue;
			pids[k++] = get_pid(q->owner);
		}
	}
full:
	mutex_unlock(&amdqp_lock);
	return amdqp_tracees_check(t, pids, k);
}

long amdqp_ioctl_suspend_below(struct amdqp_file *f, void __user *arg,
			       u32 size)
{
	bool exempt = amdqp_rate_exempt();
	struct pid *self = task_tgid(current);
	struct amdqp_queue **qs = NULL;
	struct amdqp_hold **holds = NULL;
	struct amdqp_device *dev;
	struct amdqp_gpu_set s;
	struct amdqp_tracees t = {};
	struct amdqp_gpus g = {};
	u32 i, n = 0, cap;
	int *res = NULL;
	long ret;
	u64 now;

	ret = copy_struct_from_user(&s, sizeof(s), arg, size);
	if (ret)
		return ret;
	if (s.flags || s.pad || s.reserved || s.priority > AMDQP_PRIORITY_MAX)
		return -EINVAL;
	ret = amdqp_gpus_read(&g, &s);
	if (ret)
		goto out;
	atomic64_inc(&amdqp_stats.suspend_calls);
	s.affected = 0;
	s.skipped = 0;

	/*
	 * Allocate for the current count, at most AMDQP_MAX_BATCH (one
	 * backend batch): queues added meanwhile or past the cap are left
	 * running and counted as skipped.
	 */
	mutex_lock(&amdqp_lock);
	cap = min_t(u32, amdqp_count_queues_locked(), AMDQP_MAX_BATCH);
	mutex_unlock(&amdqp_lock);
	qs = amdqp_qarray(cap);
	res = kvcalloc(cap ? cap : 1, sizeof(*res), AMDQP_GFP_CALLER);
	holds = kvcalloc(cap ? cap : 1, sizeof(*holds), AMDQP_GFP_CALLER);
	if (!qs || !res || !holds) {
		ret = -ENOMEM;
		goto out;
	}
	for (i = 0; i < cap; i++) {
		holds[i] = kzalloc(sizeof(*holds[i]), GFP_KERNEL_ACCOUNT);
		if (!holds[i]) {
			ret = -ENOMEM;
			goto out;
		}
	}
	ret = amdqp_below_tracees(f, &g, s.priority, cap, &t);
	if (ret)
		goto out;

	mutex_lock(&amdqp_lock);
	now = amdqp_now_ns();
	list_for_each_entry(dev, &amdqp_devices, node) {
		struct amdqp_queue *q;

		if (!amdqp_gpus_has(&g, dev->gpu_id))
			continue;
		list_for_each_entry(q, &dev->queues, dev_node) {
			if (q->priority >= s.priority || q->owner == self ||
			    !pid_nr_ns(q->owner, f->pid_ns) ||
			    amdqp_find_hold(f, q))
				continue;
			if (n == cap || now < q->cooldown_until ||
			    amdqp_may_control(q, false, &t)) {
				s.skipped++;
				continue;
			}
			amdqp_add_hold(f, q, holds[n]);
			holds[n] = NULL;
			amdqp_queue_get(q);
			q->inflight++;
			qs[n++] = q;
		}
	}
	if (!exempt && amdqp_rate_charge_locked(qs, n, now)) {
		amdqp_unhold_locked(f, qs, n);
		mutex_unlock(&amdqp_lock);
		ret = -EBUSY;
		goto out;
	}
	mutex_unlock(&amdqp_lock);

	amdqp_reconcile(qs, n, res, s.grace_us, &s.latency_ns,
			AMDQP_RC_SUSPEND);

	mutex_lock(&amdqp_lock);
	for (i = 0; i < n; i++) {
		struct amdqp_hold *h;

		qs[i]->inflight--;
		if (!res[i]) {
			s.affected++;
			continue;
		}
		s.skipped++;
		h = amdqp_find_hold(f, qs[i]);
		if (h)
			amdqp_del_hold(h);
	}
	mutex_unlock(&amdqp_lock);

	if (copy_to_user(arg, &s, min_t(size_t, size, sizeof(s))))
		ret = -EFAULT;
out:
	for (i = 0; i < n; i++)
		amdqp_queue_put(qs[i]);
	if (holds)
		for (i = 0; i < cap; i++)
			kfree(holds[i]);
	kvfree(holds);
	kvfree(res);
	kvfree(qs);
	kfree(g.ids);
	amdqp_tracees_free(&t);
	return ret;
}

/* Whether @d has room for @q; if so, @q goes in for the reconciliation. */
static bool amdqp_dropped_take(struct amdqp_dropped *d, u32 cap,
			       struct amdqp_queue *q)
{
	if (d->n == cap)
		return false;
	amdqp_queue_get(q);
	q->inflight++;
	d->qs[d->n++] = q;
	return true;
}

/*
 * Drop @f's holds of the kinds in @what on the devices in @g and put back
 * what is left without holders, in one reconciliation; @d gets what it
 * reconciled (amdqp_dropped_free()). With @all, holds go even without
 * room to reconcile their queues, which the watchdog's reconciliation then
 * does shortly: an fd's release cannot fail. Without, the call is refused
 * with -ENOMEM before anything changes, and holds added since they were
 * counted stay.
 */
int amdqp_drop_file_holds(struct amdqp_file *f, const struct amdqp_gpus *g,
			  enum amdqp_rc_what what, bool all, u32 grace_us,
			  u64 *latency_ns, struct amdqp_dropped *d)
{
	struct amdqp_hold *h, *tmp;
	struct amdqp_chold *c, *ctmp;
	u32 i, cap = 0;

	memset(d, 0, sizeof(*d));
	mutex_lock(&amdqp_lock);
	if (what & AMDQP_RC_SUSPEND)
		list_for_each_entry(h, &f->holds, f_node)
			cap++;
	if (what & AMDQP_RC_CONFINE)
		list_for_each_entry(c, &f->cholds, h.f_node)
			cap++;
	mutex_unlock(&amdqp_lock);
	if (!cap)
		return 0;

	d->qs = amdqp_qarray(cap);
	d->res = kvcalloc(cap, sizeof(*d->res), AMDQP_GFP_CALLER);
	if (!d->qs || !d->res) {
		if (!all)
			return -ENOMEM;
		cap = 0;
	}

	mutex_lock(&amdqp_lock);
	if (what & AMDQP_RC_CONFINE) {
		list_for_each_entry_safe(c, ctmp, &f->cholds, h.f_node) {
			struct amdqp_queue *q = c->h.q;
			bool both;

			if (!amdqp_gpus_has(g, q->dev->gpu_id))
				continue;
			/* Reconciled once, from the holds below. */
			both = (what & AMDQP_RC_SUSPEND) &&
			       amdqp_find_hold(f, q);
			if (!both && !amdqp_dropped_take(d, cap, q) && !all)
				continue;
			amdqp_del_chold(c);
		}
	}
	if (what & AMDQP_RC_SUSPEND) {
		list_for_each_entry_safe(h, tmp, &f->holds, f_node) {
			struct amdqp_queue *q = h->q;

			if (!amdqp_gpus_has(g, q->dev->gpu_id))
				continue;
			if (!amdqp_dropped_take(d, cap, q) && !all)
				continue;
			amdqp_del_hold(h);
		}
	}
	mutex_unlock(&amdqp_lock);

	amdqp_reconcile(d->qs, d->n, d->res, grace_us, latency_ns, what);
	mutex_lock(&amdqp_lock);
	for (i = 0; i < d->n; i++)
		d->qs[i]->inflight--;
	mutex_unlock(&amdqp_lock);
	return 0;
}

void amdqp_dropped_free(struct amdqp_dropped *d)
{
	u32 i;

	for (i = 0; i < d->n; i++)
		amdqp_queue_put(d->qs[i]);
	kvfree(d->res);
	kvfree(d->qs);
}

long amdqp_ioctl_resume_all(struct amdqp_file *f, void __user *arg, u32 size)
{
	struct amdqp_dropped d;
	struct amdqp_gpu_set s;
	struct amdqp_gpus g = {};
	long ret;
	u32 i;

	ret = copy_struct_from_user(&s, sizeof(s), arg, size);
	if (ret)
		return ret;
	if (s.flags || s.pad || s.reserved || s.priority || s.grace_us)
		return -EINVAL;
	ret = amdqp_gpus_read(&g, &s);
	if (ret)
		goto out;
	atomic64_inc(&amdqp_stats.resume_calls);
	s.latency_ns = 0;
	s.affected = 0;
	s.skipped = 0;
	amdqp_drop_file_holds(f, &g, AMDQP_RC_SUSPEND, true, 0, &s.latency_ns,
			      &d);
	for (i = 0; i < d.n; i++) {
		if (d.res[i])
			s.skipped++;
		else
			s.affected++;
	}
	amdqp_dropped_free(&d);
	if (copy_to_user(arg, &s, min_t(size_t, size, sizeof(s))))
		ret = -EFAULT;
out:
	kfree(g.ids);
	return ret;
}

/*
 * The fd is going away (close or crash of its holder): let go of it all,
 * suspensions and confinements in one reconciliation.
 */
void amdqp_release_holds(struct amdqp_file *f)
{
	struct amdqp_gpus all = {};
	struct amdqp_dropped d;

	amdqp_drop_file_holds(f, &all, AMDQP_RC_ANY, true, 0, NULL, &d);
	amdqp_dropped_free(&d);
}
