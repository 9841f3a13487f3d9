// SPDX-License-Identifier: GPL-2.0
/*
 * Priority ceilings: the administrator's table mapping identities the
 * kernel holds for a queue's owner (effective uid, any gid, cgroup v2 and
 * its ancestors) to the highest priority its queues may have, and the
 * re-clamping of every queue when the table or default_ceiling changes.
 * What a process asks for at queue creation or by SET_PRIORITY is kept
 * as the queue's requested priority; the effective one is never above the
 * ceiling unless the owner had CAP_SYS_NICE at registration or a
 * CAP_SYS_NICE caller set it (amdqp_queue.prio_override).
 *
 * The table is a hash of entries by (kind, id) under amdqp_lock, at most
 * AMDQP_MAX_CEILINGS of them; a queue's ceiling is the highest level of
 * the entries matching its owner, default_ceiling when none does.
 */
#include <linux/capability.h>
#include <linux/cgroup.h>
#include <linux/cred.h>
#include <linux/hash.h>
#include <linux/hashtable.h>
#include <linux/sched/task.h>
#include <linux/slab.h>
#include <linux/uaccess.h>
#include <linux/user_namespace.h>

#include "amdqp_priv.h"
#include "amdqp_trace.h"

struct amdqp_ceil_entry {
	struct hlist_node node;
	u32 kind;		/* AMDQP_CEIL_* */
	u32 level;
	u64 key;		/* kuid/kgid value, or cgroup id */
};

static DEFINE_HASHTABLE(amdqp_ceil_hash, 8);	/* amdqp_lock */
static u32 amdqp_ceil_count;			/* amdqp_lock */

static u32 amdqp_ceil_hkey(u32 kind, u64 key)
{
	return hash_64(key * 4 + kind, 32);
}

static struct amdqp_ceil_entry *amdqp_ceil_find(u32 kind, u64 key)
{
	struct amdqp_ceil_entry *e;

	lockdep_assert_held(&amdqp_lock);
	hash_for_each_possible(amdqp_ceil_hash, e, node,
			       amdqp_ceil_hkey(kind, key))
		if (e->kind == kind && e->key == key)
			return e;
	return NULL;
}

static void amdqp_ceil_match(int *best, u32 kind, u64 key)
{
	struct amdqp_ceil_entry *e = amdqp_ceil_find(kind, key);

	if (e && (int)e->level > *best)
		*best = e->level;
}

static u32 amdqp_default_level(void)
{
	return min_t(u32, READ_ONCE(amdqp_default_ceiling), AMDQP_PRIORITY_MAX);
}

/* The ceiling of @q's owner as registered; amdqp_lock. */
static u32 amdqp_ceiling_of(const struct amdqp_queue *q)
{
	const struct cred *c = q->cred;
	int best = -1;
	int i;

	lockdep_assert_held(&amdqp_lock);
	if (!amdqp_ceil_count || !c)
		return amdqp_default_level();
	amdqp_ceil_match(&best, AMDQP_CEIL_UID, __kuid_val(c->euid));
	amdqp_ceil_match(&best, AMDQP_CEIL_GID, __kgid_val(c->egid));
	for (i = 0; c->group_info && i < c->group_info->ngroups; i++)
		amdqp_ceil_match(&best, AMDQP_CEIL_GID,
				 __kgid_val(c->group_info->gid[i]));
#ifdef CONFIG_CGROUPS
	{
		struct cgroup *cg;

		for (cg = q->cgrp; cg; cg = cgroup_parent(cg))
			amdqp_ceil_match(&best, AMDQP_CEIL_CGROUP,
					 cgroup_id(cg));
	}
#endif
	return best < 0 ? amdqp_default_level() : best;
}

u32 amdqp_effective_priority(const struct amdqp_queue *q)
{
	return q->prio_override ? q->requested : min(q->requested, q->ceiling);
}

/*
 * Registration, before the queue is visible: take the owner's identity
 * (its credentials and cgroup v2 now, not the caller's: a backend may
 * register from another context).
 */
void amdqp_ceiling_attach(struct amdqp_queue *q, struct pid *owner)
{
	struct task_struct *t = get_pid_task(owner, PIDTYPE_TGID);

	if (t) {
		q->cred = get_task_cred(t);
		q->prio_override = has_capability_noaudit(t, CAP_SYS_NICE);
#ifdef CONFIG_CGROUPS
		rcu_read_lock();
		q->cgrp = task_dfl_cgroup(t);
		if (q->cgrp && !cgroup_tryget(q->cgrp))
			q->cgrp = NULL;
		rcu_read_unlock();
#endif
		put_task_struct(t);
	}
}

/* Set @q's ceiling and effective priority from the table; amdqp_lock. */
void amdqp_ceiling_set_locked(struct amdqp_queue *q)
{
	q->ceiling = amdqp_ceiling_of(q);
	q->priority = amdqp_effective_priority(q);
}

void amdqp_ceiling_detach(struct amdqp_queue *q)
{
	if (q->cred)
		put_cred(q->cred);
#ifdef CONFIG_CGROUPS
	if (q->cgrp)
		cgroup_put(q->cgrp);
#endif
}

/*
 * Recompute every queue's ceiling and effective priority, then tell the
 * backends of those that changed (outside amdqp_lock, under the device's
 * sched_lock, as SET_PRIORITY does). Returns the queues changed.
 */
static u32 amdqp_count_queues(void)
{
	struct amdqp_device *dev;
	u32 n = 0;

	mutex_lock(&amdqp_lock);
	list_for_each_entry(dev, &amdqp_devices, node)
		n += dev->num_queues;
	mutex_unlock(&amdqp_lock);
	return n;
}

static u32 amdqp_reclamp(void)
{
	struct amdqp_queue **qs = NULL;
	struct amdqp_device *dev;
	struct amdqp_queue *q;
	u32 n = 0, cap, changed = 0, i;

	/*
	 * Room for the backend calls, allocated without amdqp_lock (reclaim
	 * may reach a GPU driver); queues added meanwhile beyond the slack
	 * are re-clamped all the same, only their backend is not told.
	 */
	cap = amdqp_count_queues() + 64;
	qs = kvcalloc(cap, sizeof(*qs), GFP_KERNEL | __GFP_NOWARN);
	mutex_lock(&amdqp_lock);
	list_for_each_entry(dev, &amdqp_devices, node) {
		list_for_each_entry(q, &dev->queues, dev_node) {
			u32 old = q->priority;

			q->ceiling = amdqp_ceiling_of(q);
			q->priority = amdqp_effective_priority(q);
			if (q->priority == old)
				continue;
			changed++;
			trace_amdqp_priority_change(dev->gpu_id,
						    pid_nr(q->owner),
						    q->queue_id, old,
						    q->priority);
			amdqp_emit(AMDQP_EVENT_PRIORITY, q->owner, dev->gpu_id,
				   q->queue_id, 0, q->priority);
			if (qs && n < cap && dev->ops->set_priority) {
				amdqp_queue_get(q);
				qs[n++] = q;
			}
		}
	}
	mutex_unlock(&amdqp_lock);

	for (i = 0; i < n; i++) {
		struct amdqp_device *d = qs[i]->dev;
		u32 prio;

		mutex_lock(&d->sched_lock);
		mutex_lock(&amdqp_lock);
		prio = qs[i]->priority;
		q = qs[i]->dead || d->dead ? NULL : qs[i];
		mutex_unlock(&amdqp_lock);
		if (q)
			d->ops->set_priority(q, prio);
		mutex_unlock(&d->sched_lock);
		amdqp_queue_put(qs[i]);
	}
	kvfree(qs);
	return changed;
}

/* default_ceiling was written: re-clamp every queue. */
void amdqp_ceiling_default_changed(void)
{
	amdqp_reclamp();
}

/* Validate one SET/CLEAR entry; its key in *@key. */
static int amdqp_ceil_check(const struct amdqp_ceiling *c, bool set, u64 *key)
{
	struct user_namespace *ns = current_user_ns();

	if (c->pad || c->result)
		return -EINVAL;
	if (set ? c->level > AMDQP_PRIORITY_MAX : c->level)
		return -EINVAL;
	switch (c->kind) {
	case AMDQP_CEIL_UID: {
		kuid_t uid;

		if (c->id > U32_MAX)
			return -EINVAL;
		uid = make_kuid(ns, c->id);
		if (!uid_valid(uid))
			return -EINVAL;
		*key = __kuid_val(uid);
		return 0;
	}
	case AMDQP_CEIL_GID: {
		kgid_t gid;

		if (c->id > U32_MAX)
			return -EINVAL;
		gid = make_kgid(ns, c->id);
		if (!gid_valid(gid))
			return -EINVAL;
		*key = __kgid_val(gid);
		return 0;
	}
	case AMDQP_CEIL_CGROUP:
		if (!c->id)
			return -EINVAL;
		*key = c->id;
		return 0;
	}
	return -EINVAL;
}

/* Apply one checked entry; amdqp_lock. @spare: a free entry, taken on use. */
static int amdqp_ceil_apply(const struct amdqp_ceiling *c, u64 key, bool set,
			    struct amdqp_ceil_entry **spare)
{
	struct amdqp_ceil_entry *e = amdqp_ceil_find(c->kind, key);

	if (!set) {
		if (!e)
			return -ENOENT;
		hash_del(&e->node);
		kfree(e);
		amdqp_ceil_count--;
		return 0;
	}
	if (e) {
		e->level = c->level;
		return 0;
	}
	if (amdqp_ceil_count >= AMDQP_MAX_CEILINGS)
		return -ENOSPC;
	e = *spare;
	*spare = NULL;
	e->kind = c->kind;
	e->key = key;
	e->level = c->level;
	hash_add(amdqp_ceil_hash, &e->node, amdqp_ceil_hkey(c->kind, key));
	amdqp_ceil_count++;
	return 0;
}

static void amdqp_ceil_flush_locked(void)
{
	struct amdqp_ceil_entry *e;
	struct hlist_node *tmp;
	unsigned int bkt;

	lockdep_assert_held(&amdqp_lock);
	hash_for_each_safe(amdqp_ceil_hash, bkt, tmp, e, node) {
		hash_del(&e->node);
		kfree(e);
	}
	amdqp_ceil_count = 0;
}

void amdqp_ceiling_exit(void)
{
	mutex_lock(&amdqp_lock);
	amdqp_ceil_flush_locked();
	mutex_unlock(&amdqp_lock);
}

/* Smallest entry a caller may pass: up to and including @pad. */
#define AMDQP_CEIL_MIN_SIZE	offsetofend(struct amdqp_ceiling, pad)

static int amdqp_ceil_check_array(u32 count, u32 esize)
{
	if (esize < AMDQP_CEIL_MIN_SIZE || esize > PAGE_SIZE || esize % 8)
		return -EINVAL;
	return 0;
}

static long amdqp_ceil_update(struct amdqp_ceilings *cs, bool set)
{
	u8 __user *uent = u64_to_user_ptr(cs->entries);
	struct amdqp_ceil_entry **spares = NULL;
	struct amdqp_ceiling *ents;
	u64 *keys = NULL;
	long ret = 0;
	u32 i;

	if (!cs->count || cs->count > AMDQP_MAX_BATCH ||
	    amdqp_ceil_check_array(cs->count, cs->entry_size))
		return -EINVAL;
	ents = kvcalloc(cs->count, sizeof(*ents), GFP_KERNEL);
	keys = kvcalloc(cs->count, sizeof(*keys), GFP_KERNEL);
	if (set)
		spares = kvcalloc(cs->count, sizeof(*spares), GFP_KERNEL);
	if (!ents || !keys || (set && !spares)) {
		ret = -ENOMEM;
		goto out;
	}
	for (i = 0; i < cs->count; i++) {
		ret = copy_struct_from_user(&ents[i], sizeof(ents[i]),
					    uent + (size_t)i * cs->entry_size,
					    cs->entry_size);
		if (ret)
			goto out;
		if (set) {
			spares[i] = kzalloc(sizeof(*spares[i]), GFP_KERNEL);
			if (!spares[i]) {
				ret = -ENOMEM;
				goto out;
			}
		}
	}

	cs->done = 0;
	mutex_lock(&amdqp_lock);
	for (i = 0; i < cs->count; i++) {
		ents[i].result = amdqp_ceil_check(&ents[i], set, &keys[i]);
		if (ents[i].result)
			continue;
		/* The check reads .result as input: it was zero. */
		ents[i].result = amdqp_ceil_apply(&ents[i], keys[i], set,
						  set ? &spares[i] : NULL);
		if (!ents[i].result)
			cs->done++;
	}
	mutex_unlock(&amdqp_lock);
	cs->reclamped = amdqp_reclamp();

	for (i = 0; i < cs->count; i++)
		if (copy_to_user(uent + (size_t)i * cs->entry_size, &ents[i],
				 sizeof(ents[i]))) {
			ret = -EFAULT;
			break;
		}
out:
	if (spares)
		for (i = 0; i < cs->count; i++)
			kfree(spares[i]);
	kvfree(spares);
	kvfree(keys);
	kvfree(ents);
	return ret;
}

static long amdqp_ceil_list(struct amdqp_ceilings *cs)
{
	struct user_namespace *ns = current_user_ns();
	struct amdqp_ceiling *ents = NULL;
	struct amdqp_ceil_entry *e;
	u8 __user *uent = u64_to_user_ptr(cs->entries);
	unsigned int bkt;
	u32 n = 0, cap;
	long ret = 0;

	if (cs->count && amdqp_ceil_check_array(cs->count, cs->entry_size))
		return -EINVAL;
	cap = min_t(u32, cs->count, AMDQP_MAX_CEILINGS);
	if (cap) {
		ents = kvcalloc(cap, sizeof(*ents), GFP_KERNEL);
		if (!ents)
			return -ENOMEM;
	}
	mutex_lock(&amdqp_lock);
	hash_for_each(amdqp_ceil_hash, bkt, e, node) {
		struct amdqp_ceiling *c;

		if (n >= cap) {
			n++;
			continue;
		}
		c = &ents[n++];
		c->kind = e->kind;
		c->level = e->level;
		if (e->kind == AMDQP_CEIL_UID)
			c->id = from_kuid_munged(ns, KUIDT_INIT(e->key));
		else if (e->kind == AMDQP_CEIL_GID)
			c->id = from_kgid_munged(ns, KGIDT_INIT(e->key));
		else
			c->id = e->key;
	}
	mutex_unlock(&amdqp_lock);

	cs->done = min(n, cap);
	cs->count = n;
	for (n = 0; n < cs->done; n++) {
		/* Zero a newer caller's tail: it reads entries we wrote. */
		if (cs->entry_size > sizeof(*ents) &&
		    clear_user(uent + (size_t)n * cs->entry_size + sizeof(*ents),
			       cs->entry_size - sizeof(*ents))) {
			ret = -EFAULT;
			break;
		}
		if (copy_to_user(uent + (size_t)n * cs->entry_size, &ents[n],
				 sizeof(*ents))) {
			ret = -EFAULT;
			break;
		}
	}
	kvfree(ents);
	return ret;
}

long amdqp_ioctl_ceilings(struct amdqp_file *f, void __user *arg, u32 size)
{
	struct amdqp_ceilings cs;
	long ret;

	ret = copy_struct_from_user(&cs, sizeof(cs), arg, size);
	if (ret)
		return ret;
	if (cs.flags || cs.reserved)
		return -EINVAL;
	if (!capable(CAP_SYS_ADMIN))
		return -EPERM;

	cs.reclamped = 0;
	switch (cs.op) {
	case AMDQP_CEIL_OP_SET:
	case AMDQP_CEIL_OP_CLEAR:
		ret = amdqp_ceil_update(&cs, cs.op == AMDQP_CEIL_OP_SET);
		break;
	case AMDQP_CEIL_OP_LIST:
		ret = amdqp_ceil_list(&cs);
		break;
	case AMDQP_CEIL_OP_FLUSH:
		if (cs.count)
			return -EINVAL;
		mutex_lock(&amdqp_lock);
		cs.done = amdqp_ceil_count;
		amdqp_ceil_flush_locked();
		mutex_unlock(&amdqp_lock);
		cs.reclamped = amdqp_reclamp();
		break;
	default:
		return -EINVAL;
	}
	if (ret)
		return ret;
	cs.entry_size = sizeof(struct amdqp_ceiling);
	cs.default_ceiling = amdqp_default_level();
	if (copy_to_user(arg, &cs, min_t(size_t, size, sizeof(cs))))
		return -EFAULT;
	return 0;
}
