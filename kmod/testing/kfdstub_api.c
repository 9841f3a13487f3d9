// SPDX-License-Identifier: GPL-2.0
/*
 * The AMDKFD_QCTL interface as the stub provides it: the same symbols,
 * namespace and contract as kfd-glue/patches/linux-6.12, over fake state.
 * Every call is counted and logged, and calls a client may not make (from
 * a notification, after being detached, with a reference it already
 * dropped) count as violations that the tests check.
 */
#define pr_fmt(fmt) "amdqp_kfdstub: " fmt

#include <linux/bitops.h>
#include <linux/delay.h>
#include <linux/err.h>
#include <linux/module.h>
#include <linux/pid.h>
#include <linux/sched.h>
#include <linux/slab.h>

#include "kfdstub.h"

/* Registration allowed: false once the provider detached its clients. */
static bool kstub_enabled = true;		/* kstub_clients_sem */
static bool kstub_detached;			/* kstub_clients_sem */
static atomic_t kstub_inflight = ATOMIC_INIT(0);
static atomic_t kstub_nr_clients = ATOMIC_INIT(0);

/* The task running a notification or walk callback, and its lock. */
static DEFINE_MUTEX(kstub_notify_mutex);
static struct task_struct *kstub_notify_task;

static void kstub_violation(const char *what)
{
	atomic64_inc(&kstub_stats.violations);
	kstub_log("VIOLATION %s", what);
	pr_err("client broke the queue control contract: %s\n", what);
}

/*
 * Entry of every call but get/put: in a notification only get/put are
 * allowed (the real glue holds the owner's process mutex there), and a
 * detached client must make no call at all.
 */
static void kstub_enter(enum kstub_call call)
{
	atomic64_inc(&kstub_stats.calls[call]);
	atomic_inc(&kstub_inflight);
	if (READ_ONCE(kstub_notify_task) == current)
		kstub_violation("call from a notify or walk callback");
	if (READ_ONCE(kstub_detached))
		kstub_violation("call after detach");
}

static void kstub_exit(void)
{
	atomic_dec(&kstub_inflight);
}

/* --- processes and queue references --------------------------------- */

/* Called by kref_put_mutex() with kstub_lock held; drops it. */
static void kstub_proc_release(struct kref *ref)
{
	struct kstub_proc *p = container_of(ref, struct kstub_proc, ref);
	struct kstub_queue *q, *tmp;

	list_del(&p->node);
	mutex_unlock(&kstub_lock);
	list_for_each_entry_safe(q, tmp, &p->queues, node) {
		list_del(&q->node);
		kfree(q);
	}
	atomic64_inc(&kstub_stats.procs_released);
	put_pid(p->pid);
	kfree(p);
}

/* Not with kstub_lock held. */
void kstub_proc_put(struct kstub_proc *p)
{
	kref_put_mutex(&p->ref, kstub_proc_release, &kstub_lock);
}

/* Caller holds kstub_lock. */
struct kfd_qctl_queue *kstub_handle_new(struct kstub_proc *p,
					struct kstub_queue *q)
{
	struct kfd_qctl_queue *h;

	lockdep_assert_held(&kstub_lock);
	h = kzalloc(sizeof(*h), GFP_KERNEL);
	if (!h)
		return NULL;
	kref_init(&h->ref);
	kref_get(&p->ref);
	h->proc = p;
	h->gpu_id = q->dev->gpu_id;
	h->queue_id = q->queue_id;
	atomic_inc(&p->handles);
	atomic64_inc(&kstub_stats.handles);
	return h;
}

/* Caller holds kstub_lock. */
static struct kstub_queue *kstub_find(struct kstub_proc *p, u32 gpu_id,
				      u32 queue_id)
{
	struct kstub_queue *q;

	lockdep_assert_held(&kstub_lock);
	list_for_each_entry(q, &p->queues, node)
		if (q->dev->gpu_id == gpu_id && q->queue_id == queue_id)
			return q;
	return NULL;
}

/* is_active from the flags, as QUEUE_IS_ACTIVE() computes it. */
void kstub_queue_update_active(struct kstub_queue *q)
{
	lockdep_assert_held(&kstub_lock);
	q->active = !q->ctl_suspended && !q->evicted;
}

static u32 kstub_queue_state(const struct kstub_queue *q)
{
	u32 s = 0;

	if (q->active)
		s |= KFD_QCTL_QSTATE_ACTIVE;
	if (q->ctl_suspended)
		s |= KFD_QCTL_QSTATE_CTL_SUSPENDED;
	if (q->evicted)
		s |= KFD_QCTL_QSTATE_EVICTED;
	return s;
}

/* Caller holds kstub_lock. */
void kstub_fill_info(struct kstub_proc *p, struct kstub_queue *q,
		     struct kfd_qctl_queue_info *info)
{
	memset(info, 0, sizeof(*info));
	info->pid = p->pid;
	info->euid = GLOBAL_ROOT_UID;
	info->gpu_id = q->dev->gpu_id;
	info->queue_id = q->queue_id;
	info->type = q->type;
	info->priority = q->priority;
	info->state = kstub_queue_state(q);
	info->ring_base = q->ring_base;
	info->ring_size = q->ring_size;
	info->proc_id = p->id;
}

static void kstub_handle_release(struct kref *ref)
{
	struct kfd_qctl_queue *h = container_of(ref, struct kfd_qctl_queue, ref);
	struct kstub_proc *p = h->proc;

	atomic_dec(&p->handles);
	atomic64_dec(&kstub_stats.handles);
	kfree(h);
	kstub_proc_put(p);
}

void kfd_qctl_queue_get(struct kfd_qctl_queue *q)
{
	atomic64_inc(&kstub_stats.calls[KSTUB_CALL_GET]);
	kref_get(&q->ref);
	atomic_inc(&q->proc->handles);
	atomic64_inc(&kstub_stats.handles);
	/* One kref per handle object; count the extra one separately. */
	kref_get(&q->proc->ref);
}
EXPORT_SYMBOL_NS_GPL(kfd_qctl_queue_get, AMDKFD_QCTL);

void kfd_qctl_queue_put(struct kfd_qctl_queue *q)
{
	struct kstub_proc *p;
	bool last;

	if (!q)
		return;
	atomic64_inc(&kstub_stats.calls[KSTUB_CALL_PUT]);
	p = q->proc;
	last = kref_put(&q->ref, kstub_handle_release);
	if (!last) {
		atomic_dec(&p->handles);
		atomic64_dec(&kstub_stats.handles);
		kstub_proc_put(p);
	}
}
EXPORT_SYMBOL_NS_GPL(kfd_qctl_queue_put, AMDKFD_QCTL);

int kfd_qctl_queue_info(struct kfd_qctl_queue *q,
			struct kfd_qctl_queue_info *info)
{
	struct kstub_queue *kq;
	int ret = -ENOENT;

	kstub_enter(KSTUB_CALL_INFO);
	mutex_lock(&kstub_lock);
	kq = kstub_find(q->proc, q->gpu_id, q->queue_id);
	if (kq) {
		kstub_fill_info(q->proc, kq, info);
		ret = 0;
	}
	mutex_unlock(&kstub_lock);
	kstub_exit();
	return ret;
}
EXPORT_SYMBOL_NS_GPL(kfd_qctl_queue_info, AMDKFD_QCTL);

static struct kfd_qctl_queue *kstub_lookup(struct pid *pid, u32 gpu_id,
					   u32 queue_id, u64 ring_base,
					   bool by_ring)
{
	struct kfd_qctl_queue *h = ERR_PTR(-ESRCH);
	struct kstub_proc *p;
	struct kstub_queue *q;

	if (!pid)
		return ERR_PTR(-EINVAL);
	kstub_enter(KSTUB_CALL_LOOKUP);
	mutex_lock(&kstub_lock);
	list_for_each_entry(p, &kstub_procs, node) {
		if (p->pid != pid || p->exited)
			continue;
		h = ERR_PTR(-ENOENT);
		list_for_each_entry(q, &p->queues, node) {
			if (by_ring ? q->ring_base != ring_base :
				      q->dev->gpu_id != gpu_id ||
				      q->queue_id != queue_id)
				continue;
			h = kstub_handle_new(p, q);
			if (!h)
				h = ERR_PTR(-ENOMEM);
			break;
		}
		break;
	}
	mutex_unlock(&kstub_lock);
	kstub_exit();
	return h;
}

struct kfd_qctl_queue *kfd_qctl_queue_lookup(struct pid *pid, u32 gpu_id,
					     u32 queue_id)
{
	return kstub_lookup(pid, gpu_id, queue_id, 0, false);
}
EXPORT_SYMBOL_NS_GPL(kfd_qctl_queue_lookup, AMDKFD_QCTL);

struct kfd_qctl_queue *kfd_qctl_queue_lookup_ring(struct pid *pid,
						  u64 ring_base)
{
	return kstub_lookup(pid, 0, 0, ring_base, true);
}
EXPORT_SYMBOL_NS_GPL(kfd_qctl_queue_lookup_ring, AMDKFD_QCTL);

int kfd_qctl_set_create_suspended(struct pid *pid, bool on)
{
	struct kstub_proc *p;
	int ret = -ESRCH;

	if (!pid)
		return -EINVAL;
	kstub_enter(KSTUB_CALL_CREATE_SUSPENDED);
	mutex_lock(&kstub_lock);
	list_for_each_entry(p, &kstub_procs, node) {
		if (p->pid == pid && !p->exited) {
			p->create_suspended = on;
			ret = 0;
			break;
		}
	}
	mutex_unlock(&kstub_lock);
	kstub_exit();
	return ret;
}
EXPORT_SYMBOL_NS_GPL(kfd_qctl_set_create_suspended, AMDKFD_QCTL);

/* --- walks --------------------------------------------------------- */

int kfd_qctl_walk_devices(kfd_qctl_device_fn fn, void *arg)
{
	struct kfd_qctl_device_info infos[KSTUB_MAX_DEVS];
	struct kstub_dev *d;
	unsigned int i, n = 0;
	int ret = 0;

	kstub_enter(KSTUB_CALL_WALK_DEVICES);
	mutex_lock(&kstub_lock);
	list_for_each_entry(d, &kstub_devs, node) {
		if (d->removed)
			continue;
		infos[n].gpu_id = d->gpu_id;
		infos[n].sched = d->sched;
		infos[n].num_xcc = d->num_xcc;
		infos[n++].cu_per_xcc = kstub_cu_per_xcc(d);
	}
	mutex_unlock(&kstub_lock);
	for (i = 0; i < n && !ret; i++)
		ret = fn(&infos[i], arg);
	kstub_log("walk_devices n=%u ret=%d", n, ret);
	kstub_exit();
	return ret;
}
EXPORT_SYMBOL_NS_GPL(kfd_qctl_walk_devices, AMDKFD_QCTL);

struct kstub_walk_ent {
	struct kfd_qctl_queue *h;
	struct kfd_qctl_queue_info info;
};

int kfd_qctl_walk_queues(kfd_qctl_queue_fn fn, void *arg)
{
	struct kstub_walk_ent *ents;
	unsigned int i, n = 0, cap = 0;
	struct kstub_proc *p;
	struct kstub_queue *q;
	int ret = 0;

	kstub_enter(KSTUB_CALL_WALK_QUEUES);
	mutex_lock(&kstub_lock);
	list_for_each_entry(p, &kstub_procs, node)
		list_for_each_entry(q, &p->queues, node)
			cap++;
	ents = kcalloc(cap ? cap : 1, sizeof(*ents), GFP_KERNEL);
	if (!ents) {
		mutex_unlock(&kstub_lock);
		kstub_exit();
		return -ENOMEM;
	}
	list_for_each_entry(p, &kstub_procs, node) {
		if (p->exited)
			continue;
		list_for_each_entry(q, &p->queues, node) {
			ents[n].h = kstub_handle_new(p, q);
			if (!ents[n].h)
				break;
			kstub_fill_info(p, q, &ents[n++].info);
		}
	}
	mutex_unlock(&kstub_lock);

	/* The callback runs where a notification would: same rules. */
	mutex_lock(&kstub_notify_mutex);
	WRITE_ONCE(kstub_notify_task, current);
	for (i = 0; i < n && !ret; i++)
		ret = fn(ents[i].h, &ents[i].info, arg);
	WRITE_ONCE(kstub_notify_task, NULL);
	mutex_unlock(&kstub_notify_mutex);
	for (i = 0; i < n; i++)
		kfd_qctl_queue_put(ents[i].h);
	kfree(ents);
	kstub_log("walk_queues n=%u ret=%d", n, ret);
	kstub_exit();
	return ret;
}
EXPORT_SYMBOL_NS_GPL(kfd_qctl_walk_queues, AMDKFD_QCTL);

/* --- suspend and resume ---------------------------------------------- */

static void kstub_record_grace(u32 grace)
{
	struct kstub_stats *s = &kstub_stats;

	lockdep_assert_held(&kstub_lock);
	s->grace_count++;
	s->grace_last = grace;
	if (grace == U32_MAX) {
		s->grace_default++;
		return;
	}
	if (!grace)
		s->grace_zero++;
	if (!s->grace_max || grace > s->grace_max)
		s->grace_max = grace;
	if (!s->grace_min || grace < s->grace_min)
		s->grace_min = grace;
}

/*
 * One device's share of a batch, as kfd_dqm_ctl_update() does it under
 * the DQM lock. @idx lists the entries of @qs on @d. Returns the firmware
 * operations issued or a negative errno for a device-wide failure.
 */
static int kstub_dev_update(struct kstub_dev *d, struct kfd_qctl_queue **qs,
			    const unsigned int *idx, unsigned int m,
			    bool suspend, int *results)
{
	unsigned int i, nchanged = 0, nhw = 0, kept = 0;
	unsigned long *changed, *hw;
	int ret = 0;

	lockdep_assert_held(&kstub_lock);
	changed = bitmap_zalloc(m, GFP_KERNEL);
	hw = bitmap_zalloc(m, GFP_KERNEL);
	if (!changed || !hw) {
		bitmap_free(changed);
		bitmap_free(hw);
		for (i = 0; i < m; i++)
			results[idx[i]] = -ENOMEM;
		return -ENOMEM;
	}

	for (i = 0; i < m; i++) {
		struct kstub_proc *p = qs[idx[i]]->proc;
		int *res = &results[idx[i]];
		struct kstub_queue *q;
		bool was;

		q = kstub_find(p, d->gpu_id, qs[idx[i]]->queue_id);
		if (!q || d->removed) {
			*res = -ENOENT;
			continue;
		}
		if (d->sched == KFD_QCTL_SCHED_NO_HWS) {
			*res = -EOPNOTSUPP;
			ret = -EOPNOTSUPP;
			continue;
		}
		if (test_bit(d->index, &p->reset_mask)) {
			/* Like update_queue(): a reset queue is off for good. */
			q->ctl_suspended = false;
			*res = -EACCES;
			continue;
		}
		if (q->fail_count) {
			q->fail_count--;
			*res = q->fail_err;
			continue;
		}
		*res = 0;
		if (q->ctl_suspended == suspend)
			continue;
		q->ctl_suspended = suspend;
		was = q->active;
		kstub_queue_update_active(q);
		__set_bit(i, changed);
		nchanged++;
		if (was != q->active) {
			__set_bit(i, hw);
			nhw++;
		}
	}
	if (ret)
		goto out;

	if (nhw && d->fail_count) {
		ret = d->fail_err;
		d->fail_count--;
		for_each_set_bit(i, changed, m) {
			struct kstub_queue *q;

			if (d->fail_mode == KSTUB_ROLLBACK_HW && !test_bit(i, hw))
				continue;
			if (d->fail_mode == KSTUB_KEEP_PARTIAL &&
			    kept++ < (nchanged + 1) / 2)
				continue;
			q = kstub_find(qs[idx[i]]->proc, d->gpu_id,
				       qs[idx[i]]->queue_id);
			q->ctl_suspended = !suspend;
			kstub_queue_update_active(q);
			results[idx[i]] = ret;
		}
		goto out;
	}

	if (nhw && d->reset_proc) {
		struct kstub_proc *p;
		struct kstub_queue *q;

		/*
		 * A queue of that process did not preempt and the driver
		 * reset it alone (gfx 9.4.3), which the runlist update still
		 * reports as success: only has_reset_queue tells.
		 */
		list_for_each_entry(p, &kstub_procs, node) {
			if (p->id != d->reset_proc)
				continue;
			set_bit(d->index, &p->reset_mask);
			list_for_each_entry(q, &p->queues, node)
				if (q->dev == d)
					q->active = false;
		}
		d->reset_proc = 0;
		for (i = 0; i < m; i++) {
			struct kfd_qctl_queue *h = qs[idx[i]];
			struct kstub_queue *q;

			if (!test_bit(d->index, &h->proc->reset_mask))
				continue;
			q = kstub_find(h->proc, d->gpu_id, h->queue_id);
			if (q)
				q->ctl_suspended = false;
			results[idx[i]] = -EACCES;
		}
	}
	ret = d->sched == KFD_QCTL_SCHED_MES ? nhw : !!nhw;
	d->fw_ops += ret;
out:
	bitmap_free(changed);
	bitmap_free(hw);
	return ret;
}

/* A batched update, as each device's step of kstub_each_dev() sees it. */
struct kstub_batch {
	struct kfd_qctl_queue **qs;
	const u32 *const *masks;	/* set_cu_mask only */
	int *results;
	bool suspend;
};

typedef int (*kstub_dev_step)(struct kstub_dev *d,
			      const struct kstub_batch *b,
			      const unsigned int *idx, unsigned int m);

/*
 * Splits a batch by device, under kstub_lock: every result starts as
 * -ENOENT (-EINVAL for a NULL queue), then @step runs once for each
 * device with the indices of its queues. Returns the first error, else
 * the operations the devices did; without memory every result is -ENOMEM.
 */
static int kstub_each_dev(unsigned int n, const struct kstub_batch *b,
			  kstub_dev_step step)
{
	unsigned int *idx, i, m;
	int ret = 0, ops = 0, r;
	struct kstub_dev *d;

	lockdep_assert_held(&kstub_lock);
	idx = kcalloc(n, sizeof(*idx), GFP_KERNEL);
	if (!idx) {
		for (i = 0; i < n; i++)
			b->results[i] = -ENOMEM;
		return -ENOMEM;
	}
	for (i = 0; i < n; i++)
		b->results[i] = b->qs[i] ? -ENOENT : -EINVAL;
	list_for_each_entry(d, &kstub_devs, node) {
		for (i = 0, m = 0; i < n; i++)
			if (b->qs[i] && b->qs[i]->gpu_id == d->gpu_id)
				idx[m++] = i;
		if (!m)
			continue;
		r = step(d, b, idx, m);
		if (r < 0 && !ret)
			ret = r;
		else if (r > 0)
			ops += r;
	}
	kfree(idx);
	return ret ? ret : ops;
}

static int kstub_dev_apply(struct kstub_dev *d, const struct kstub_batch *b,
			   const unsigned int *idx, unsigned int m)
{
	return kstub_dev_update(d, b->qs, idx, m, b->suspend, b->results);
}

static int kstub_apply(struct kfd_qctl_queue **qs, unsigned int n,
		       bool suspend, u32 grace, int *results)
{
	const struct kstub_batch b = {
		.qs = qs, .results = results, .suspend = suspend,
	};
	struct kstub_dev *d;
	unsigned int i;
	u32 delay = 0;
	int ret = 0;

	kstub_enter(suspend ? KSTUB_CALL_SUSPEND : KSTUB_CALL_RESUME);
	if (!n)
		goto out;
	if (!qs || !results) {
		ret = -EINVAL;
		goto out;
	}
	if (n > KSTUB_MAX_BATCH) {
		ret = -E2BIG;
		goto fill;
	}

	/*
	 * A slow firmware or a contended DQM lock, before anything changes:
	 * long enough for a test to reset or detach meanwhile.
	 */
	mutex_lock(&kstub_lock);
	list_for_each_entry(d, &kstub_devs, node)
		for (i = 0; i < n; i++)
			if (qs[i] && qs[i]->gpu_id == d->gpu_id)
				delay = max(delay, d->delay_ms);
	mutex_unlock(&kstub_lock);
	if (delay)
		msleep(delay);

	mutex_lock(&kstub_lock);
	if (suspend)
		kstub_record_grace(grace);
	ret = kstub_each_dev(n, &b, kstub_dev_apply);
	mutex_unlock(&kstub_lock);

	kstub_log("%s n=%u grace=%#x ret=%d r0=%d", suspend ?
		  "suspend" : "resume", n, grace, ret, results[0]);
	goto out;
fill:
	for (i = 0; i < n; i++)
		results[i] = ret;
out:
	kstub_exit();
	return ret;
}

int kfd_qctl_suspend(struct kfd_qctl_queue **qs, unsigned int n,
		     u32 grace_period, int *results)
{
	return kstub_apply(qs, n, true, grace_period, results);
}
EXPORT_SYMBOL_NS_GPL(kfd_qctl_suspend, AMDKFD_QCTL);

int kfd_qctl_resume(struct kfd_qctl_queue **qs, unsigned int n, int *results)
{
	return kstub_apply(qs, n, false, U32_MAX, results);
}
EXPORT_SYMBOL_NS_GPL(kfd_qctl_resume, AMDKFD_QCTL);

/*
 * Drop every queue-control suspension, of @only or of all devices: the
 * glue does it before a GPU reset and when its last client unregisters.
 * Queues of a process with a reset queue stay off. Returns the number of
 * suspensions dropped.
 */
unsigned int kstub_release_all(struct kstub_dev *only)
{
	struct kstub_proc *p;
	struct kstub_queue *q;
	unsigned int n = 0;

	lockdep_assert_held(&kstub_lock);
	list_for_each_entry(p, &kstub_procs, node) {
		list_for_each_entry(q, &p->queues, node) {
			if ((only && q->dev != only) || !q->ctl_suspended)
				continue;
			q->ctl_suspended = false;
			n++;
			if (!test_bit(q->dev->index, &p->reset_mask))
				kstub_queue_update_active(q);
		}
	}
	return n;
}

/* --- CU masks (patch 0005) ---------------------------------------------- */

u32 kstub_cu_per_xcc(const struct kstub_dev *d)
{
	return d->cu_per_xcc;
}

/* Node-wide mask words in the AMDKFD_IOC_SET_CU_MASK layout. */
static u32 kstub_cu_words(const struct kstub_dev *d)
{
	return DIV_ROUND_UP(d->cu_per_xcc * d->num_xcc, 32);
}

static bool kstub_cu_test(const u32 *m, u32 bit)
{
	return m[bit / 32] & BIT(bit % 32);
}

/*
 * What the glue writes into the MQD: the owner's mask (all CUs if never
 * set) ANDed with the imposed one, XCC by XCC, the imposed one alone in
 * an XCC where they share no CU. Bit xcc + cu * num_xcc is CU cu of XCC
 * xcc, as mqd_symmetrically_map_cu_mask() reads it. Caller holds
 * kstub_lock.
 */
void kstub_queue_write_cu(struct kstub_queue *q)
{
	const struct kstub_dev *d = q->dev;
	u32 nxcc = d->num_xcc, per = d->cu_per_xcc, xcc, cu, bit;
	bool any;

	lockdep_assert_held(&kstub_lock);
	memset(q->mqd_cu, 0, sizeof(q->mqd_cu));
	q->mqd_writes++;
	for (xcc = 0; xcc < nxcc; xcc++) {
		any = false;
		for (cu = 0; cu < per; cu++) {
			bit = xcc + cu * nxcc;
			if (q->has_imp && !kstub_cu_test(q->imp_cu, bit))
				continue;
			if (q->own_bits && (bit >= q->own_bits ||
					    !kstub_cu_test(q->own_cu, bit)))
				continue;
			q->mqd_cu[bit / 32] |= BIT(bit % 32);
			any = true;
		}
		for (cu = 0; !any && q->has_imp && cu < per; cu++) {
			bit = xcc + cu * nxcc;
			if (kstub_cu_test(q->imp_cu, bit))
				q->mqd_cu[bit / 32] |= BIT(bit % 32);
		}
	}
}

/* Lift every imposed mask, of @only or of all devices (reset, unregister). */
unsigned int kstub_lift_all_cu(struct kstub_dev *only)
{
	struct kstub_proc *p;
	struct kstub_queue *q;
	unsigned int n = 0;

	lockdep_assert_held(&kstub_lock);
	list_for_each_entry(p, &kstub_procs, node) {
		list_for_each_entry(q, &p->queues, node) {
			if ((only && q->dev != only) || !q->has_imp)
				continue;
			q->has_imp = false;
			kstub_queue_write_cu(q);
			n++;
		}
	}
	return n;
}

/*
 * The interface's XCC-major mask to the interleaved layout, as the glue's
 * qctl_cu_mask_convert() does. Returns 0 or -EINVAL.
 */
static int kstub_cu_convert(const struct kstub_dev *d, const u32 *mask,
			    u32 *flat)
{
	u32 nxcc = d->num_xcc, per = d->cu_per_xcc, xw = DIV_ROUND_UP(per, 32);
	u32 xcc, cu, bit;
	bool any;

	memset(flat, 0, KSTUB_CU_WORDS * sizeof(*flat));
	for (xcc = 0; xcc < nxcc; xcc++) {
		const u32 *m = mask + xcc * xw;

		if (per % 32 && (m[xw - 1] & GENMASK(31, per % 32)))
			return -EINVAL;
		any = false;
		for (cu = 0; cu < per; cu++) {
			if (!(m[cu / 32] & BIT(cu % 32)))
				continue;
			bit = xcc + cu * nxcc;
			flat[bit / 32] |= BIT(bit % 32);
			any = true;
		}
		if (!any)
			return -EINVAL;
	}
	return 0;
}

/*
 * One device's share of a kfd_qctl_set_cu_mask() batch, as
 * kfd_dqm_ctl_set_cu_mask() does it: one unmap and one runlist upload
 * under HWS when a mapped queue changes, a remove and an add per mapped
 * queue under MES; queues off the hardware only get their MQD rewritten.
 */
static int kstub_dev_cu_update(struct kstub_dev *d, struct kfd_qctl_queue **qs,
			       const u32 *const *masks,
			       const unsigned int *idx, unsigned int m,
			       int *results)
{
	u32 words = kstub_cu_words(d), *flat;
	unsigned int i, mapped = 0;
	unsigned long *changed;
	int ret = 0;

	lockdep_assert_held(&kstub_lock);
	flat = kcalloc(m, KSTUB_CU_WORDS * sizeof(*flat), GFP_KERNEL);
	changed = bitmap_zalloc(m, GFP_KERNEL);
	if (!flat || !changed) {
		ret = -ENOMEM;
		for (i = 0; i < m; i++)
			results[idx[i]] = ret;
		goto out;
	}
	for (i = 0; i < m; i++) {
		struct kstub_proc *p = qs[idx[i]]->proc;
		const u32 *mask = masks[idx[i]];
		u32 *f = flat + i * KSTUB_CU_WORDS;
		int *res = &results[idx[i]];
		struct kstub_queue *q;

		q = kstub_find(p, d->gpu_id, qs[idx[i]]->queue_id);
		if (!q || d->removed) {
			*res = -ENOENT;
			continue;
		}
		if (d->sched == KFD_QCTL_SCHED_NO_HWS || !words) {
			*res = -EOPNOTSUPP;
			continue;
		}
		if (q->type != KFD_QCTL_QUEUE_COMPUTE) {
			*res = -EOPNOTSUPP;
			continue;
		}
		if (test_bit(d->index, &p->reset_mask)) {
			*res = -EACCES;
			continue;
		}
		if (mask && kstub_cu_convert(d, mask, f)) {
			*res = -EINVAL;
			continue;
		}
		if (q->fail_count) {
			q->fail_count--;
			*res = q->fail_err;
			continue;
		}
		*res = 0;
		if (!mask ? !q->has_imp :
		    q->has_imp && !memcmp(f, q->imp_cu, words * sizeof(*f)))
			continue;
		__set_bit(i, changed);
		mapped += q->active;
	}

	if (mapped && d->fail_count) {
		/* The unmap failed: no MQD rewritten. */
		ret = d->fail_err;
		d->fail_count--;
		for_each_set_bit(i, changed, m)
			results[idx[i]] = ret;
		goto out;
	}
	for_each_set_bit(i, changed, m) {
		struct kfd_qctl_queue *h = qs[idx[i]];
		struct kstub_queue *q = kstub_find(h->proc, d->gpu_id,
						   h->queue_id);

		q->has_imp = !!masks[idx[i]];
		if (q->has_imp)
			memcpy(q->imp_cu, flat + i * KSTUB_CU_WORDS,
			       sizeof(q->imp_cu));
		kstub_queue_write_cu(q);
	}
	ret = d->sched == KFD_QCTL_SCHED_MES ? 2 * mapped : !!mapped;
	d->fw_ops += ret;
out:
	bitmap_free(changed);
	kfree(flat);
	return ret;
}

static int kstub_dev_cu_apply(struct kstub_dev *d,
			      const struct kstub_batch *b,
			      const unsigned int *idx, unsigned int m)
{
	return kstub_dev_cu_update(d, b->qs, b->masks, idx, m, b->results);
}

int kfd_qctl_set_cu_mask(struct kfd_qctl_queue **qs, unsigned int n,
			 const u32 *const *masks, u32 grace_period,
			 int *results)
{
	const struct kstub_batch b = {
		.qs = qs, .masks = masks, .results = results,
	};
	unsigned int i;
	int ret = 0;

	kstub_enter(KSTUB_CALL_SET_CU_MASK);
	if (!n)
		goto out;
	if (!qs || !results || !masks) {
		ret = -EINVAL;
		goto out;
	}
	if (n > KSTUB_MAX_BATCH) {
		ret = -E2BIG;
		goto fill;
	}
	mutex_lock(&kstub_lock);
	ret = kstub_each_dev(n, &b, kstub_dev_cu_apply);
	mutex_unlock(&kstub_lock);
	kstub_log("set_cu_mask n=%u grace=%#x ret=%d r0=%d", n,
		  grace_period, ret, results[0]);
	goto out;
fill:
	for (i = 0; i < n; i++)
		results[i] = ret;
out:
	kstub_exit();
	return ret;
}
EXPORT_SYMBOL_NS_GPL(kfd_qctl_set_cu_mask, AMDKFD_QCTL);

/* --- clients ----------------------------------------------------------- */

int kfd_qctl_register_client(struct kfd_qctl_client *client)
{
	int ret = 0;

	atomic64_inc(&kstub_stats.calls[KSTUB_CALL_REGISTER]);
	if (client->api_version < kstub_min_api ||
	    client->api_version > KFD_QCTL_API_VERSION ||
	    !client->notify || !client->detach) {
		kstub_log("register api=%u: -EPROTO", client->api_version);
		return -EPROTO;
	}
	down_write(&kstub_clients_sem);
	if (kstub_enabled) {
		list_add_tail(&client->node, &kstub_clients);
		atomic_inc(&kstub_nr_clients);
		WRITE_ONCE(kstub_detached, false);
	} else {
		ret = -ENODEV;
	}
	up_write(&kstub_clients_sem);
	kstub_log("register api=%u: %d", client->api_version, ret);
	return ret;
}
EXPORT_SYMBOL_NS_GPL(kfd_qctl_register_client, AMDKFD_QCTL);

void kfd_qctl_unregister_client(struct kfd_qctl_client *client)
{
	unsigned int n = 0;
	bool last = false;

	kstub_enter(KSTUB_CALL_UNREGISTER);
	down_write(&kstub_clients_sem);
	if (!list_empty(&client->node)) {
		list_del_init(&client->node);
		last = atomic_dec_and_test(&kstub_nr_clients);
	}
	up_write(&kstub_clients_sem);
	if (last && READ_ONCE(kstub_release_on_unregister)) {
		mutex_lock(&kstub_lock);
		n = kstub_release_all(NULL);
		kstub_lift_all_cu(NULL);
		mutex_unlock(&kstub_lock);
		atomic64_add(n, &kstub_stats.released_on_unregister);
	}
	kstub_log("unregister: %u suspension(s) dropped", n);
	kstub_exit();
}
EXPORT_SYMBOL_NS_GPL(kfd_qctl_unregister_client, AMDKFD_QCTL);

/* Tell every client; no stub lock held, as the glue's rules allow. */
void kstub_notify(const struct kfd_qctl_event *ev)
{
	struct kfd_qctl_client *c;

	kstub_log("event type=%u gpu=%#x qid=%u proc=%llu pid=%d", ev->type,
		  ev->gpu_id, ev->queue_id, ev->proc_id, pid_nr(ev->pid));
	down_read(&kstub_clients_sem);
	mutex_lock(&kstub_notify_mutex);
	WRITE_ONCE(kstub_notify_task, current);
	list_for_each_entry(c, &kstub_clients, node)
		c->notify(c, ev);
	WRITE_ONCE(kstub_notify_task, NULL);
	mutex_unlock(&kstub_notify_mutex);
	up_read(&kstub_clients_sem);
}

/*
 * What kfd_qctl_fini() does when amdgpu unloads: remove every client and
 * call its detach. When detach returns the client must have no call in
 * flight and no queue reference left: check both.
 */
void kstub_detach_all(void)
{
	struct kfd_qctl_client *c;

	down_write(&kstub_clients_sem);
	kstub_enabled = false;
	while (!list_empty(&kstub_clients)) {
		c = list_first_entry(&kstub_clients, struct kfd_qctl_client,
				     node);
		list_del_init(&c->node);
		atomic_dec(&kstub_nr_clients);
		up_write(&kstub_clients_sem);
		kstub_log("detach: calling the client");
		c->detach(c);
		if (atomic_read(&kstub_inflight))
			kstub_violation("call in flight after detach returned");
		down_write(&kstub_clients_sem);
	}
	if (atomic64_read(&kstub_stats.handles))
		kstub_violation("queue references kept after detach");
	WRITE_ONCE(kstub_detached, true);
	up_write(&kstub_clients_sem);
	kstub_log("detach: done");
}
