// SPDX-License-Identifier: GPL-2.0
/*
 * Device and queue registry: what backends register, and the backend-facing
 * API exported in the AMDQP namespace.
 */
#include <linux/capability.h>
#include <linux/cred.h>
#include <linux/err.h>
#include <linux/hash.h>
#include <linux/hashtable.h>
#include <linux/module.h>
#include <linux/pid.h>
#include <linux/sched/coredump.h>
#include <linux/sched/task.h>
#include <linux/slab.h>
#include <linux/user_namespace.h>

#include "amdqp_priv.h"
#include "amdqp_trace.h"

/* Lock order and what each lock protects: see amdqp_priv.h. */
DEFINE_MUTEX(amdqp_lock);		/* registry, holds */
LIST_HEAD(amdqp_devices);		/* amdqp_lock */

/*
 * Queue lookup, the hot path of batch ioctls: hashed by (owner, gpu_id,
 * queue_id) and by (owner, ring VA). amdqp_lock.
 */
static DEFINE_HASHTABLE(amdqp_qhash_id, 10);
static DEFINE_HASHTABLE(amdqp_qhash_ring, 10);

/* Registration order of devices and queues (LIST_QUEUES). amdqp_lock. */
static u64 amdqp_seq;

static u32 amdqp_key_id(const struct pid *owner, u32 gpu_id, u32 queue_id)
{
	return hash_ptr(owner, 32) ^ hash_32(gpu_id * 31 + queue_id, 32);
}

static u32 amdqp_key_ring(const struct pid *owner, u64 ring_va)
{
	return hash_ptr(owner, 32) ^ hash_64(ring_va, 32);
}

/* Backends that announced themselves; atomic bit ops, no lock. */
static unsigned long amdqp_backends;

void amdqp_backend_set_bound(u32 backend, bool bound)
{
	if (bound)
		set_bit(__ffs(backend), &amdqp_backends);
	else
		clear_bit(__ffs(backend), &amdqp_backends);
}
EXPORT_SYMBOL_NS_GPL(amdqp_backend_set_bound, AMDQP);

u32 amdqp_bound_backends(void)
{
	return READ_ONCE(amdqp_backends);
}

static void amdqp_device_free(struct kref *ref)
{
	kfree(container_of(ref, struct amdqp_device, ref));
}

void amdqp_device_get(struct amdqp_device *dev)
{
	kref_get(&dev->ref);
}

void amdqp_device_put(struct amdqp_device *dev)
{
	kref_put(&dev->ref, amdqp_device_free);
}

static void amdqp_queue_free(struct kref *ref)
{
	struct amdqp_queue *q = container_of(ref, struct amdqp_queue, ref);
	struct amdqp_device *dev = q->dev;

	if (dev->ops->queue_release)
		dev->ops->queue_release(q);
	amdqp_ceiling_detach(q);
	put_pid(q->owner);
	kfree(q);
	amdqp_device_put(dev);
}

void amdqp_queue_get(struct amdqp_queue *q)
{
	kref_get(&q->ref);
}

void amdqp_queue_put(struct amdqp_queue *q)
{
	kref_put(&q->ref, amdqp_queue_free);
}

void *amdqp_device_priv(const struct amdqp_device *dev)
{
	return dev->priv;
}
EXPORT_SYMBOL_NS_GPL(amdqp_device_priv, AMDQP);

u32 amdqp_device_gpu_id(const struct amdqp_device *dev)
{
	return dev->gpu_id;
}
EXPORT_SYMBOL_NS_GPL(amdqp_device_gpu_id, AMDQP);

void *amdqp_queue_priv(const struct amdqp_queue *q)
{
	return q->priv;
}
EXPORT_SYMBOL_NS_GPL(amdqp_queue_priv, AMDQP);

u32 amdqp_queue_id(const struct amdqp_queue *q)
{
	return q->queue_id;
}
EXPORT_SYMBOL_NS_GPL(amdqp_queue_id, AMDQP);

u32 amdqp_queue_priority(struct amdqp_queue *q)
{
	u32 prio;

	mutex_lock(&amdqp_lock);
	prio = q->priority;
	mutex_unlock(&amdqp_lock);
	return prio;
}
EXPORT_SYMBOL_NS_GPL(amdqp_queue_priority, AMDQP);

struct amdqp_device *amdqp_device_find_locked(u32 gpu_id)
{
	struct amdqp_device *dev;

	lockdep_assert_held(&amdqp_lock);
	list_for_each_entry(dev, &amdqp_devices, node)
		if (dev->gpu_id == gpu_id)
			return dev;
	return NULL;
}

struct amdqp_device *amdqp_device_register(const struct amdqp_device_desc *d)
{
	struct amdqp_device *dev;

	if (!d->ops || !d->ops->suspend || !d->ops->resume || !d->gpu_id ||
	    (d->sched_mode != AMDQP_SCHED_HWS &&
	     d->sched_mode != AMDQP_SCHED_MES))
		return ERR_PTR(-EINVAL);
	/* A CU mask of the device must fit AMDQP_IOC_CONFINE's. */
	if (d->cu_per_xcc &&
	    (!d->ops->confine || !d->num_xcc ||
	     d->cu_per_xcc > AMDQP_CU_MASK_MAX_WORDS * 32 ||
	     d->num_xcc * amdqp_cu_mask_words(d->cu_per_xcc) >
	     AMDQP_CU_MASK_MAX_WORDS))
		return ERR_PTR(-EINVAL);

	dev = kzalloc(sizeof(*dev), GFP_KERNEL);
	if (!dev)
		return ERR_PTR(-ENOMEM);
	kref_init(&dev->ref);
	INIT_LIST_HEAD(&dev->queues);
	mutex_init(&dev->sched_lock);
	dev->ops = d->ops;
	dev->priv = d->priv;
	dev->gpu_id = d->gpu_id;
	dev->backend = d->backend;
	dev->sched_mode = d->sched_mode;
	dev->num_xcc = d->num_xcc;
	dev->cu_per_xcc = d->cu_per_xcc;
	dev->mask_words = d->num_xcc * amdqp_cu_mask_words(d->cu_per_xcc);

	mutex_lock(&amdqp_lock);
	if (amdqp_device_find_locked(d->gpu_id)) {
		mutex_unlock(&amdqp_lock);
		kfree(dev);
		return ERR_PTR(-EEXIST);
	}
	dev->seq = ++amdqp_seq;
	list_add_tail(&dev->node, &amdqp_devices);
	amdqp_emit(AMDQP_EVENT_DEVICE_ADDED, NULL, dev->gpu_id, 0, 0,
		   dev->sched_mode);
	mutex_unlock(&amdqp_lock);
	return dev;
}
EXPORT_SYMBOL_NS_GPL(amdqp_device_register, AMDQP);

/* Close the books on a stretch of suspension. */
void amdqp_account_resume_locked(struct amdqp_queue *q, u64 now)
{
	lockdep_assert_held(&amdqp_lock);
	if (!q->hw_suspended)
		return;
	amdqp_starve_update_locked(q, now);
	q->suspended_total_ns += now - q->suspended_since;
	q->hw_suspended = false;
	q->wd_fired = false;
	q->dev->num_suspended--;
}

static void amdqp_queue_detach_locked(struct amdqp_queue *q)
{
	lockdep_assert_held(&amdqp_lock);
	if (q->dead)
		return;
	q->dead = true;
	list_del_init(&q->dev_node);
	hash_del(&q->id_node);
	hash_del(&q->ring_node);
	q->dev->num_queues--;
	amdqp_account_resume_locked(q, amdqp_now_ns());
	amdqp_drop_holds_locked(q);
	amdqp_account_unconfine_locked(q);
	amdqp_drop_cholds_locked(q);
	trace_amdqp_queue_unregister(q->dev->gpu_id, pid_nr(q->owner),
				     q->queue_id);
	amdqp_emit(AMDQP_EVENT_QUEUE_DESTROYED, q->owner, q->dev->gpu_id,
		   q->queue_id, 0, 0);
}

void amdqp_device_unregister(struct amdqp_device *dev)
{
	struct amdqp_queue *q, *tmp;
	LIST_HEAD(gone);

	mutex_lock(&amdqp_lock);
	dev->dead = true;
	dev->generation++;
	list_del(&dev->node);
	list_for_each_entry_safe(q, tmp, &dev->queues, dev_node) {
		amdqp_queue_detach_locked(q);
		list_add(&q->dev_node, &gone);
	}
	amdqp_emit(AMDQP_EVENT_DEVICE_REMOVED, NULL, dev->gpu_id, 0, 0, 0);
	mutex_unlock(&amdqp_lock);

	/* Wait for a backend call in flight; later ones see dev->dead. */
	mutex_lock(&dev->sched_lock);
	mutex_unlock(&dev->sched_lock);

	list_for_each_entry_safe(q, tmp, &gone, dev_node) {
		list_del_init(&q->dev_node);
		amdqp_queue_put(q);	/* the registry's reference */
	}
	amdqp_device_put(dev);
}
EXPORT_SYMBOL_NS_GPL(amdqp_device_unregister, AMDQP);

struct amdqp_queue *amdqp_queue_register(struct amdqp_device *dev,
					 const struct amdqp_queue_desc *d)
{
	struct amdqp_queue *q, *other;

	if (!d->owner || d->priority > AMDQP_PRIORITY_MAX)
		return ERR_PTR(-EINVAL);

	/* dev->mask_words is set once, before the device is listed. */
	q = kzalloc(struct_size(q, hw_mask, dev->mask_words), GFP_KERNEL);
	if (!q)
		return ERR_PTR(-ENOMEM);
	kref_init(&q->ref);
	INIT_LIST_HEAD(&q->holds);
	INIT_LIST_HEAD(&q->cholds);
	q->owner = get_pid(d->owner);
	q->uid = d->uid;
	q->queue_id = d->queue_id;
	q->ring_va = d->ring_va;
	q->ring_size = d->ring_size;
	q->requested = d->priority;
	q->priv = d->priv;
	q->created_ns = amdqp_now_ns();
	amdqp_ceiling_attach(q, q->owner);

	mutex_lock(&amdqp_lock);
	if (dev->dead)
		goto busy;
	/* What the owner asked for, clamped to its ceiling. */
	amdqp_ceiling_set_locked(q);
	list_for_each_entry(other, &dev->queues, dev_node)
		if (other->owner == q->owner && other->queue_id == q->queue_id)
			goto busy;
	amdqp_device_get(dev);
	q->dev = dev;
	q->seq = ++amdqp_seq;
	list_add_tail(&q->dev_node, &dev->queues);
	hash_add(amdqp_qhash_id, &q->id_node,
		 amdqp_key_id(q->owner, dev->gpu_id, q->queue_id));
	hash_add(amdqp_qhash_ring, &q->ring_node,
		 amdqp_key_ring(q->owner, q->ring_va));
	dev->num_queues++;
	trace_amdqp_queue_register(dev->gpu_id, pid_nr(q->owner), q->queue_id,
				   q->priority, q->ring_va);
	amdqp_emit(AMDQP_EVENT_QUEUE_CREATED, q->owner, dev->gpu_id,
		   q->queue_id, 0, q->priority);
	mutex_unlock(&amdqp_lock);
	return q;

busy:
	mutex_unlock(&amdqp_lock);
	amdqp_ceiling_detach(q);
	put_pid(q->owner);
	kfree(q);
	return ERR_PTR(dev->dead ? -ENODEV : -EEXIST);
}
EXPORT_SYMBOL_NS_GPL(amdqp_queue_register, AMDQP);

void amdqp_queue_unregister(struct amdqp_queue *q)
{
	mutex_lock(&amdqp_lock);
	if (q->dead) {
		/* Device removal got here first and owns the last put. */
		mutex_unlock(&amdqp_lock);
		return;
	}
	amdqp_queue_detach_locked(q);
	mutex_unlock(&amdqp_lock);
	amdqp_queue_put(q);
}
EXPORT_SYMBOL_NS_GPL(amdqp_queue_unregister, AMDQP);

/*
 * Resolve a user reference. The pid is interpreted in @ns; queues whose
 * owner has no pid there are invisible. Returns a queue with an extra
 * reference or an ERR_PTR. Called with amdqp_lock held.
 */
/*
 * Whether current may learn the addresses of @owner's queues: what reading
 * its /proc/PID/maps needs (PTRACE_MODE_READ with fs credentials). The
 * ptrace checks are not exported to modules, so this is their credential
 * and dumpability part; LSM ptrace hooks (Yama only restricts attach) are
 * not consulted. No audit: a denial only hides a field.
 */
bool amdqp_may_read_owner(struct pid *owner)
{
	const struct cred *me = current_cred();
	struct user_namespace *tns;
	bool same, dumpable, ok;

	if (owner == task_tgid(current))
		return true;
	if (!amdqp_owner_creds(owner, me->fsuid, me->fsgid, &same, &dumpable,
			       &tns))
		return false;
	ok = (same && dumpable) || ns_capable_noaudit(tns, CAP_SYS_PTRACE);
	put_user_ns(tns);
	return ok;
}

/*
 * The credential half of ptrace's access test, shared by the read and the
 * control checks: whether @owner's real, effective and saved ids all equal
 * @uid/@gid, whether it is dumpable, and its user namespace (a reference
 * the caller puts). False, with nothing taken, if @owner has no task.
 */
bool amdqp_owner_creds(struct pid *owner, kuid_t uid, kgid_t gid, bool *same,
		       bool *dumpable, struct user_namespace **ns)
{
	const struct cred *tc;
	struct task_struct *t;

	t = get_pid_task(owner, PIDTYPE_TGID);
	if (!t)
		return false;
	rcu_read_lock();
	tc = __task_cred(t);
	*same = uid_eq(uid, tc->euid) && uid_eq(uid, tc->suid) &&
		uid_eq(uid, tc->uid) && gid_eq(gid, tc->egid) &&
		gid_eq(gid, tc->sgid) && gid_eq(gid, tc->gid);
	*ns = get_user_ns(tc->user_ns);
	rcu_read_unlock();
	*dumpable = true;
	task_lock(t);
	if (t->mm)
		*dumpable = get_dumpable(t->mm) == SUID_DUMP_USER;
	task_unlock(t);
	put_task_struct(t);
	return true;
}

struct amdqp_queue *amdqp_find_queue(const struct amdqp_queue_ref *ref,
				     struct pid_namespace *ns)
{
	struct amdqp_queue *q;
	struct pid *pid;

	lockdep_assert_held(&amdqp_lock);
	if (ref->flags & ~AMDQP_REF_BY_RING || ref->pid == 0 ||
	    ref->pid > PID_MAX_LIMIT)
		return ERR_PTR(-EINVAL);

	rcu_read_lock();
	pid = find_pid_ns(ref->pid, ns);
	rcu_read_unlock();
	/* Only compared by address below, never dereferenced. */
	if (!pid)
		return ERR_PTR(-ENOENT);

	if (ref->flags & AMDQP_REF_BY_RING) {
		hash_for_each_possible(amdqp_qhash_ring, q, ring_node,
				       amdqp_key_ring(pid, ref->ring_va)) {
			if (q->owner == pid && q->ring_va == ref->ring_va) {
				/*
				 * -EPERM would confirm a VA LIST_QUEUES
				 * hides from this caller.
				 */
				if (!amdqp_may_read_owner(pid))
					break;
				amdqp_queue_get(q);
				return q;
			}
		}
		return ERR_PTR(-ENOENT);
	}
	hash_for_each_possible(amdqp_qhash_id, q, id_node,
			       amdqp_key_id(pid, ref->gpu_id, ref->queue_id)) {
		if (q->owner == pid && q->dev->gpu_id == ref->gpu_id &&
		    q->queue_id == ref->queue_id) {
			amdqp_queue_get(q);
			return q;
		}
	}
	return ERR_PTR(-ENOENT);
}

void amdqp_report_process_exit(struct amdqp_device *dev, struct pid *pid)
{
	mutex_lock(&amdqp_lock);
	amdqp_emit(AMDQP_EVENT_PROCESS_EXIT, pid, dev->gpu_id, 0, 0, 0);
	mutex_unlock(&amdqp_lock);
}
EXPORT_SYMBOL_NS_GPL(amdqp_report_process_exit, AMDQP);

void amdqp_report_reset(struct amdqp_device *dev)
{
	struct amdqp_queue *q;
	u64 now = amdqp_now_ns();

	mutex_lock(&amdqp_lock);
	dev->generation++;
	list_for_each_entry(q, &dev->queues, dev_node) {
		amdqp_account_resume_locked(q, now);
		amdqp_drop_holds_locked(q);
		amdqp_account_unconfine_locked(q);
		amdqp_drop_cholds_locked(q);
	}
	amdqp_emit(AMDQP_EVENT_GPU_RESET, NULL, dev->gpu_id, 0, 0, 0);
	mutex_unlock(&amdqp_lock);
	trace_amdqp_error(dev->gpu_id, "reset", -EIO);
}
EXPORT_SYMBOL_NS_GPL(amdqp_report_reset, AMDQP);

void amdqp_report_preempt_failure(struct amdqp_device *dev, int error)
{
	mutex_lock(&amdqp_lock);
	amdqp_emit(AMDQP_EVENT_PREEMPT_FAILED, NULL, dev->gpu_id, 0, error, 0);
	mutex_unlock(&amdqp_lock);
	trace_amdqp_error(dev->gpu_id, "preempt", error);
}
EXPORT_SYMBOL_NS_GPL(amdqp_report_preempt_failure, AMDQP);
