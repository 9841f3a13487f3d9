// SPDX-License-Identifier: GPL-2.0
/*
 * fd-scoped confinement (AMDQP_IOC_CONFINE): which fd restricts which
 * queue to which CU mask, the mask the holds of a queue combine to, and
 * the ioctl that changes them. Like suspension, a confinement is a hold
 * (struct amdqp_chold) that lives as long as its fd, bounded by the
 * watchdog; amdqp_reconcile() brings the hardware in line with the holds.
 * The mask the owner set itself stays the backend's business: the core
 * hands over amdqp's mask and the backend ANDs the two (amdqp_backend.h).
 *
 * Locking: holds and hw_* state under amdqp_lock (amdqp_priv.h).
 */
#include <linux/bitops.h>
#include <linux/slab.h>
#include <linux/string.h>
#include <linux/uaccess.h>

#include "amdqp_priv.h"

struct amdqp_chold *amdqp_find_chold(struct amdqp_file *f,
				     struct amdqp_queue *q)
{
	struct amdqp_hold *h = amdqp_hold_find(&q->cholds, f);

	return h ? container_of(h, struct amdqp_chold, h) : NULL;
}

/* Consumes @c (its mask filled in); takes a queue reference for it. */
static void amdqp_add_chold(struct amdqp_file *f, struct amdqp_queue *q,
			    struct amdqp_chold *c)
{
	amdqp_hold_add(&c->h, f, q, &f->cholds, &q->cholds, &q->nr_cholds);
}

void amdqp_del_chold(struct amdqp_chold *c)
{
	amdqp_hold_del(&c->h, &c->h.q->nr_cholds);
}

/* Forget every fd's confinement of @q (not the hardware state). */
void amdqp_drop_cholds_locked(struct amdqp_queue *q)
{
	amdqp_hold_drop_all(&q->cholds, &q->nr_cholds);
}

/* Close the books on a stretch of confinement. */
void amdqp_account_unconfine_locked(struct amdqp_queue *q)
{
	lockdep_assert_held(&amdqp_lock);
	if (!q->hw_confined)
		return;
	q->hw_confined = false;
	q->cwd_fired = false;
	q->dev->num_confined--;
}

/*
 * The mask @q's confinements combine to, into @mask (dev->mask_words
 * words); false when none confines it. XCC by XCC, the newest hold's
 * CUs ANDed with each older one's, skipping an older one that would
 * leave the XCC without a CU: every XCC keeps at least one, since every
 * hold's mask has one in each (checked by the ioctl).
 */
bool amdqp_confine_want_locked(const struct amdqp_queue *q, u32 *mask)
{
	const struct amdqp_device *dev = q->dev;
	u32 wpx = amdqp_cu_mask_words(dev->cu_per_xcc);
	const struct amdqp_chold *c;
	u32 x, w;

	lockdep_assert_held(&amdqp_lock);
	if (list_empty(&q->cholds))
		return false;
	c = list_last_entry(&q->cholds, struct amdqp_chold, h.q_node);
	memcpy(mask, c->mask, dev->mask_words * sizeof(u32));
	list_for_each_entry_continue_reverse(c, &q->cholds, h.q_node) {
		for (x = 0; x < dev->num_xcc; x++) {
			u32 *m = mask + x * wpx;
			const u32 *h = c->mask + x * wpx;
			u32 any = 0;

			for (w = 0; w < wpx; w++)
				any |= m[w] & h[w];
			if (!any)
				continue;
			for (w = 0; w < wpx; w++)
				m[w] &= h[w];
		}
	}
	return true;
}

/* Whether @q's hardware confinement differs from what its holds want. */
bool amdqp_confine_mismatch_locked(const struct amdqp_queue *q)
{
	u32 want[AMDQP_CU_MASK_MAX_WORDS];
	u32 mw = q->dev->mask_words;

	if (!mw)
		return false;
	if (!amdqp_confine_want_locked(q, want))
		return q->hw_confined;
	return !q->hw_confined || memcmp(want, q->hw_mask, mw * sizeof(u32));
}

/* One target of the call, with the device it names and its mask. */
struct amdqp_ctarget {
	struct amdqp_cu_target t;
	struct amdqp_device *dev;	/* a reference, or NULL (INFO) */
	u32 mask[AMDQP_CU_MASK_MAX_WORDS];
};

struct amdqp_creq {
	struct amdqp_confine c;
	struct amdqp_ctarget *tg;
	struct amdqp_gpus g;		/* the targets' gpu ids */
};

/* Whether @mask has a CU in every XCC of @dev and none past its CUs. */
static bool amdqp_mask_valid(const struct amdqp_device *dev, const u32 *mask)
{
	u32 wpx = amdqp_cu_mask_words(dev->cu_per_xcc);
	u32 x, w, tail = dev->cu_per_xcc % 32;

	for (x = 0; x < dev->num_xcc; x++) {
		const u32 *m = mask + x * wpx;
		u32 any = 0;

		for (w = 0; w < wpx; w++)
			any |= m[w];
		if (!any)
			return false;
		if (tail && m[wpx - 1] & ~GENMASK(tail - 1, 0))
			return false;
	}
	return true;
}

/*
 * Check one target against its device (amdqp_lock held, so that the
 * device stays listed until a reference is taken).
 */
static int amdqp_ctarget_check(struct amdqp_ctarget *ct, u32 op)
{
	struct amdqp_cu_target *t = &ct->t;
	struct amdqp_device *dev;

	lockdep_assert_held(&amdqp_lock);
	dev = amdqp_device_find_locked(t->gpu_id);
	if (op == AMDQP_CONFINE_OP_INFO) {
		t->num_xcc = dev ? dev->num_xcc : 0;
		t->cu_per_xcc = dev ? dev->cu_per_xcc : 0;
		t->mask_words = dev ? dev->mask_words : 0;
		t->result = !dev ? -ENODEV : !dev->cu_per_xcc ? -EOPNOTSUPP : 0;
		return 0;
	}
	if (!dev)
		return -ENODEV;
	if (op == AMDQP_CONFINE_OP_BELOW) {
		if (!dev->cu_per_xcc)
			return -EOPNOTSUPP;
		if (t->num_xcc != dev->num_xcc ||
		    t->cu_per_xcc != dev->cu_per_xcc ||
		    t->mask_words != dev->mask_words)
			return -EINVAL;
	}
	amdqp_device_get(dev);
	ct->dev = dev;
	return 0;
}

static void amdqp_creq_free(struct amdqp_creq *r)
{
	u32 i;

	if (r->tg)
		for (i = 0; i < r->c.count; i++)
			if (r->tg[i].dev)
				amdqp_device_put(r->tg[i].dev);
	kvfree(r->tg);
	kfree(r->g.ids);
}

/* Read and check the header and every target; nothing done yet. */
static int amdqp_creq_read(struct amdqp_creq *r, void __user *arg, u32 size)
{
	struct amdqp_confine *c = &r->c;
	u8 __user *ut;
	u32 i, j;
	int ret;

	memset(r, 0, sizeof(*r));
	ret = copy_struct_from_user(c, sizeof(*c), arg, size);
	if (ret)
		return ret;
	if (c->flags || c->pad || c->count > AMDQP_MAX_CONFINE_GPUS)
		return -EINVAL;
	switch (c->op) {
	case AMDQP_CONFINE_OP_INFO:
		if (!c->count || c->priority || c->grace_us)
			return -EINVAL;
		break;
	case AMDQP_CONFINE_OP_BELOW:
		if (!c->count || c->priority > AMDQP_PRIORITY_MAX)
			return -EINVAL;
		break;
	case AMDQP_CONFINE_OP_RELEASE:
		if (c->priority)
			return -EINVAL;
		break;
	default:
		return -EINVAL;
	}
	if (!c->count)
		return 0;
	if (c->target_size < sizeof(struct amdqp_cu_target) ||
	    c->target_size > PAGE_SIZE || c->target_size % 8)
		return -EINVAL;

	r->tg = kvcalloc(c->count, sizeof(*r->tg), AMDQP_GFP_CALLER);
	r->g.ids = kcalloc(c->count, sizeof(u32), AMDQP_GFP_CALLER);
	if (!r->tg || !r->g.ids)
		return -ENOMEM;
	ut = u64_to_user_ptr(c->targets);
	for (i = 0; i < c->count; i++) {
		struct amdqp_cu_target *t = &r->tg[i].t;

		ret = copy_struct_from_user(t, sizeof(*t),
					    ut + (size_t)i * c->target_size,
					    c->target_size);
		if (ret)
			return ret;
		if (t->pad)
			return -EINVAL;
		if (c->op == AMDQP_CONFINE_OP_RELEASE &&
		    (t->num_xcc || t->cu_per_xcc || t->mask_words ||
		     t->mask_ptr))
			return -EINVAL;
		if (c->op == AMDQP_CONFINE_OP_BELOW &&
		    (!t->mask_words || t->mask_words > AMDQP_CU_MASK_MAX_WORDS))
			return -EINVAL;
		for (j = 0; j < i; j++)
			if (r->g.ids[j] == t->gpu_id)
				return -EINVAL;
		r->g.ids[i] = t->gpu_id;
		if (c->op == AMDQP_CONFINE_OP_BELOW &&
		    copy_from_user(r->tg[i].mask, u64_to_user_ptr(t->mask_ptr),
				   t->mask_words * sizeof(u32)))
			return -EFAULT;
	}
	r->g.n = c->count;

	mutex_lock(&amdqp_lock);
	for (i = 0, ret = 0; i < c->count && !ret; i++)
		ret = amdqp_ctarget_check(&r->tg[i], c->op);
	mutex_unlock(&amdqp_lock);
	if (ret)
		return ret;
	if (c->op == AMDQP_CONFINE_OP_BELOW)
		for (i = 0; i < c->count; i++)
			if (!amdqp_mask_valid(r->tg[i].dev, r->tg[i].mask))
				return -EINVAL;
	return 0;
}

/*
 * Copy the targets and the header back; the totals are the targets' sums
 * (without targets, a RELEASE of every device, what it counted itself).
 */
static int amdqp_creq_write(struct amdqp_creq *r, void __user *arg, u32 size)
{
	struct amdqp_confine *c = &r->c;
	u8 __user *ut = u64_to_user_ptr(c->targets);
	size_t tsize = min_t(size_t, c->target_size, sizeof(r->tg->t));
	u32 i;

	if (c->count) {
		c->affected = 0;
		c->skipped = 0;
	}
	for (i = 0; i < c->count; i++) {
		struct amdqp_cu_target *t = &r->tg[i].t;

		c->done += !t->result;
		c->affected += t->affected;
		c->skipped += t->skipped;
		if (copy_to_user(ut + (size_t)i * c->target_size, t, tsize))
			return -EFAULT;
	}
	if (copy_to_user(arg, c, min_t(size_t, size, sizeof(*c))))
		return -EFAULT;
	return 0;
}

static struct amdqp_ctarget *amdqp_creq_target(struct amdqp_creq *r,
					       const struct amdqp_device *dev)
{
	u32 i;

	for (i = 0; i < r->c.count; i++)
		if (r->tg[i].dev == dev)
			return &r->tg[i];
	return NULL;
}

/* What BELOW does to one queue. */
enum amdqp_cact {
	AMDQP_CACT_NEW,		/* confine it */
	AMDQP_CACT_UPDATE,	/* this fd's confinement gets a new mask */
	AMDQP_CACT_DROP,	/* lift this fd's confinement */
};

struct amdqp_cwork {
	struct amdqp_queue **qs;	/* with references */
	struct amdqp_queue **charge;	/* qs that cost a scheduler update */
	struct amdqp_chold **holds;	/* preallocated, NULL once used */
	int *res;
	u8 *act;
	u32 *tgt;			/* index of the target */
	u32 *old;			/* UPDATE: the previous mask */
	u32 n, cap, mw;
};

static void amdqp_cwork_free(struct amdqp_cwork *w)
{
	u32 i;

	for (i = 0; i < w->n; i++)
		amdqp_queue_put(w->qs[i]);
	if (w->holds)
		for (i = 0; i < w->cap; i++)
			kfree(w->holds[i]);
	kvfree(w->holds);
	kvfree(w->old);
	kvfree(w->tgt);
	kvfree(w->act);
	kvfree(w->res);
	kvfree(w->charge);
	kvfree(w->qs);
}

static int amdqp_cwork_alloc(struct amdqp_cwork *w, struct amdqp_creq *r)
{
	struct amdqp_device *dev;
	u32 i, cap = 0, mw = 0;

	memset(w, 0, sizeof(*w));
	mutex_lock(&amdqp_lock);
	list_for_each_entry(dev, &amdqp_devices, node)
		if (amdqp_gpus_has(&r->g, dev->gpu_id))
			cap += dev->num_queues;
	mutex_unlock(&amdqp_lock);
	for (i = 0; i < r->c.count; i++)
		mw = max(mw, r->tg[i].dev->mask_words);
	cap = min_t(u32, max(cap, 1U), AMDQP_MAX_BATCH);
	w->cap = cap;
	w->mw = mw;
	w->qs = kvcalloc(cap, sizeof(*w->qs), AMDQP_GFP_CALLER);
	w->charge = kvcalloc(cap, sizeof(*w->charge), AMDQP_GFP_CALLER);
	w->holds = kvcalloc(cap, sizeof(*w->holds), AMDQP_GFP_CALLER);
	w->res = kvcalloc(cap, sizeof(*w->res), AMDQP_GFP_CALLER);
	w->act = kvcalloc(cap, sizeof(*w->act), AMDQP_GFP_CALLER);
	w->tgt = kvcalloc(cap, sizeof(*w->tgt), AMDQP_GFP_CALLER);
	w->old = kvcalloc(cap, mw * sizeof(u32), AMDQP_GFP_CALLER);
	if (!w->qs || !w->charge || !w->holds || !w->res || !w->act ||
	    !w->tgt || !w->old)
		return -ENOMEM;
	for (i = 0; i < cap; i++) {
		/* A hold lives as long as the fd: charge the caller. */
		w->holds[i] = kzalloc(struct_size(w->holds[i], mask, mw),
				      GFP_KERNEL_ACCOUNT);
		if (!w->holds[i])
			return -ENOMEM;
	}
	return 0;
}

/*
 * Decide what BELOW does to each queue of the targets (amdqp_lock held),
 * without changing anything yet: the rate limit may still refuse it all.
 */
static void amdqp_below_plan_locked(struct amdqp_file *f, struct amdqp_creq *r,
				    struct amdqp_cwork *w,
				    const struct amdqp_tracees *t, u64 now)
{
	struct pid *self = task_tgid(current);
	u32 i;

	for (i = 0; i < r->c.count; i++) {
		struct amdqp_ctarget *ct = &r->tg[i];
		struct amdqp_device *dev = ct->dev;
		struct amdqp_queue *q;

		if (dev->dead) {
			ct->t.result = -ENODEV;
			continue;
		}
		list_for_each_entry(q, &dev->queues, dev_node) {
			struct amdqp_chold *c = amdqp_find_chold(f, q);
			bool below = q->priority < r->c.priority &&
				     q->owner != self &&
				     pid_nr_ns(q->owner, f->pid_ns);
			u8 act;

			if (!below && !c)
				continue;
			if (!below) {
				act = AMDQP_CACT_DROP;
			} else if (c) {
				if (!memcmp(c->mask, ct->mask,
					    dev->mask_words * sizeof(u32)))
					continue;
				act = AMDQP_CACT_UPDATE;
			} else if (now < q->confine_cooldown_until ||
				   amdqp_may_control(q, false, t)) {
				ct->t.skipped++;
				continue;
			} else {
				act = AMDQP_CACT_NEW;
			}
			if (w->n == w->cap) {
				ct->t.skipped++;
				continue;
			}
			amdqp_queue_get(q);
			w->qs[w->n] = q;
			w->charge[w->n] = act == AMDQP_CACT_DROP ? NULL : q;
			w->act[w->n] = act;
			w->tgt[w->n] = i;
			w->n++;
		}
	}
}

/* Carry the plan out on the holds (amdqp_lock held). */
static void amdqp_below_apply_locked(struct amdqp_file *f,
				     struct amdqp_creq *r,
				     struct amdqp_cwork *w)
{
	u32 i;

	for (i = 0; i < w->n; i++) {
		struct amdqp_queue *q = w->qs[i];
		const u32 *mask = r->tg[w->tgt[i]].mask;
		size_t bytes = q->dev->mask_words * sizeof(u32);
		struct amdqp_chold *c = amdqp_find_chold(f, q);

		switch (w->act[i]) {
		case AMDQP_CACT_NEW:
			memcpy(w->holds[i]->mask, mask, bytes);
			amdqp_add_chold(f, q, w->holds[i]);
			w->holds[i] = NULL;
			break;
		case AMDQP_CACT_UPDATE:
			memcpy(w->old + (size_t)i * w->mw, c->mask, bytes);
			memcpy(c->mask, mask, bytes);
			break;
		case AMDQP_CACT_DROP:
			amdqp_del_chold(c);
			break;
		}
		q->inflight++;
	}
}

/*
 * After the reconciliation (amdqp_lock held): a failed confinement is not
 * held, a failed mask change keeps the previous mask; a failed lift stays
 * lifted for this fd and is the watchdog's to retry.
 */
static void amdqp_below_settle_locked(struct amdqp_file *f,
				      struct amdqp_creq *r,
				      struct amdqp_cwork *w)
{
	u32 i;

	for (i = 0; i < w->n; i++) {
		struct amdqp_queue *q = w->qs[i];
		struct amdqp_ctarget *ct = &r->tg[w->tgt[i]];
		size_t bytes = q->dev->mask_words * sizeof(u32);
		struct amdqp_chold *c;

		q->inflight--;
		if (!w->res[i]) {
			ct->t.affected++;
			continue;
		}
		if (w->res[i] == -ENODEV && !ct->t.result)
			ct->t.result = -ENODEV;
		ct->t.skipped++;
		c = amdqp_find_chold(f, q);
		if (!c)
			continue;
		if (w->act[i] == AMDQP_CACT_NEW)
			amdqp_del_chold(c);
		else if (w->act[i] == AMDQP_CACT_UPDATE &&
			 !memcmp(c->mask, ct->mask, bytes))
			memcpy(c->mask, w->old + (size_t)i * w->mw, bytes);
	}
}

static long amdqp_confine_below(struct amdqp_file *f, struct amdqp_creq *r)
{
	bool exempt = amdqp_rate_exempt();
	struct amdqp_tracees t = {};
	struct amdqp_cwork w;
	long ret;
	u64 now;

	ret = amdqp_cwork_alloc(&w, r);
	if (ret)
		goto out;
	ret = amdqp_below_tracees(f, &r->g, r->c.priority, w.cap, &t);
	if (ret)
		goto out;

	mutex_lock(&amdqp_lock);
	now = amdqp_now_ns();
	amdqp_below_plan_locked(f, r, &w, &t, now);
	if (!exempt && amdqp_rate_charge_locked(w.charge, w.n, now)) {
		mutex_unlock(&amdqp_lock);
		ret = -EBUSY;
		goto out;
	}
	amdqp_below_apply_locked(f, r, &w);
	mutex_unlock(&amdqp_lock);

	amdqp_reconcile(w.qs, w.n, w.res, r->c.grace_us, &r->c.latency_ns,
			AMDQP_RC_CONFINE);

	mutex_lock(&amdqp_lock);
	amdqp_below_settle_locked(f, r, &w);
	mutex_unlock(&amdqp_lock);
out:
	amdqp_cwork_free(&w);
	amdqp_tracees_free(&t);
	return ret;
}

/* RELEASE: lift this fd's confinements on the targets (all: no target). */
static long amdqp_confine_release(struct amdqp_file *f, struct amdqp_creq *r)
{
	struct amdqp_dropped d;
	long ret;
	u32 i;

	ret = amdqp_drop_file_holds(f, &r->g, AMDQP_RC_CONFINE, false,
				    r->c.grace_us, &r->c.latency_ns, &d);
	for (i = 0; i < d.n; i++) {
		struct amdqp_ctarget *ct = amdqp_creq_target(r, d.qs[i]->dev);

		if (!d.res[i])
			r->c.affected++;
		else
			r->c.skipped++;
		if (!ct)
			continue;
		if (!d.res[i])
			ct->t.affected++;
		else
			ct->t.skipped++;
	}
	amdqp_dropped_free(&d);
	return ret;
}

long amdqp_ioctl_confine(struct amdqp_file *f, void __user *arg, u32 size)
{
	struct amdqp_creq r;
	long ret;

	ret = amdqp_creq_read(&r, arg, size);
	if (ret)
		goto out;
	r.c.done = 0;
	r.c.affected = 0;
	r.c.skipped = 0;
	r.c.latency_ns = 0;
	if (r.c.op != AMDQP_CONFINE_OP_INFO)
		atomic64_inc(&amdqp_stats.confine_calls);
	if (r.c.op == AMDQP_CONFINE_OP_BELOW)
		ret = amdqp_confine_below(f, &r);
	else if (r.c.op == AMDQP_CONFINE_OP_RELEASE)
		ret = amdqp_confine_release(f, &r);
	if (!ret)
		ret = amdqp_creq_write(&r, arg, size);
out:
	amdqp_creq_free(&r);
	return ret;
}
