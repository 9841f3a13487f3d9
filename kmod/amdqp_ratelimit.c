// SPDX-License-Identifier: GPL-2.0
/*
 * Rate limit of suspensions asked for by unprivileged callers. Under HWS
 * every suspension is a runlist update that preempts every queue of the
 * device, whoever owns them, so /dev/amdqp being world-usable must not let
 * one user preempt a shared GPU at will. Each (real uid, device) pair has
 * a token bucket, kept as a GCRA theoretical arrival time (struct
 * amdqp_rl, under amdqp_lock): unpriv_suspend_rate calls per second,
 * unpriv_suspend_burst of them at once. One user emptying theirs leaves
 * every other user's alone. A call that would change the hardware of a
 * device whose bucket is empty fails as a whole with -EBUSY, charging
 * nothing. A bucket whose arrival time has passed is as good as a full
 * one: it is freed when another user's new bucket lands on its hash
 * chain, so the table holds little beyond users that called lately.
 * Callers with CAP_SYS_NICE or CAP_SYS_ADMIN (the policy daemon) are
 * exempt and charge nothing. Resumes are never limited: they only ever
 * give the hardware back.
 */
#include <linux/capability.h>
#include <linux/cred.h>
#include <linux/hash.h>
#include <linux/hashtable.h>
#include <linux/math64.h>
#include <linux/minmax.h>
#include <linux/slab.h>
#include <linux/user_namespace.h>

#include "amdqp_priv.h"

/* Checked before taking amdqp_lock. No audit: most callers lack both. */
bool amdqp_rate_exempt(void)
{
	return ns_capable_noaudit(&init_user_ns, CAP_SYS_NICE) ||
	       ns_capable_noaudit(&init_user_ns, CAP_SYS_ADMIN);
}

/* One (uid, device) bucket; all fields amdqp_lock. */
struct amdqp_rl {
	struct hlist_node node;
	u64 dev_seq;		/* amdqp_device.seq: never reused */
	kuid_t uid;
	u64 tat;		/* theoretical arrival time of the next call */
};

static DEFINE_HASHTABLE(amdqp_rl_hash, 6);	/* amdqp_lock */

static u32 amdqp_rl_key(kuid_t uid, u64 dev_seq)
{
	return hash_32(__kuid_val(uid), 32) ^ hash_64(dev_seq, 32);
}

static struct amdqp_rl *amdqp_rl_find(kuid_t uid, u64 dev_seq)
{
	struct amdqp_rl *b;

	hash_for_each_possible(amdqp_rl_hash, b, node,
			       amdqp_rl_key(uid, dev_seq))
		if (b->dev_seq == dev_seq && uid_eq(b->uid, uid))
			return b;
	return NULL;
}

/* The arrival time of @uid's next call on @dev: 0 when it has no bucket. */
static u64 amdqp_rl_tat(kuid_t uid, const struct amdqp_device *dev)
{
	struct amdqp_rl *b = amdqp_rl_find(uid, dev->seq);

	return b ? b->tat : 0;
}

/*
 * Move @uid's arrival time on @dev to @tat, making a bucket if needed and
 * freeing other users' lapsed ones on its chain. -ENOMEM leaves nothing
 * changed.
 */
static int amdqp_rl_set(kuid_t uid, const struct amdqp_device *dev, u64 tat,
			u64 now)
{
	struct amdqp_rl *b = amdqp_rl_find(uid, dev->seq);
	struct hlist_node *tmp;
	u32 key;

	if (b) {
		b->tat = tat;
		return 0;
	}
	key = amdqp_rl_key(uid, dev->seq);
	hash_for_each_possible_safe(amdqp_rl_hash, b, tmp, node, key) {
		/* Not @uid's: the caller may be making several at once. */
		if (b->tat <= now && !uid_eq(b->uid, uid)) {
			hash_del(&b->node);
			kfree(b);
		}
	}
	/* Under amdqp_lock: no reclaim, which may reach a GPU driver. */
	b = kzalloc(sizeof(*b), GFP_NOWAIT | __GFP_ACCOUNT | __GFP_NOWARN);
	if (!b)
		return -ENOMEM;
	b->dev_seq = dev->seq;
	b->uid = uid;
	b->tat = tat;
	hash_add(amdqp_rl_hash, &b->node, key);
	return 0;
}

/* Module exit: free every bucket. */
void amdqp_ratelimit_exit(void)
{
	struct hlist_node *tmp;
	struct amdqp_rl *b;
	unsigned int bkt;

	mutex_lock(&amdqp_lock);
	hash_for_each_safe(amdqp_rl_hash, bkt, tmp, b, node) {
		hash_del(&b->node);
		kfree(b);
	}
	mutex_unlock(&amdqp_lock);
}

static bool amdqp_seen_before(struct amdqp_queue **qs, unsigned int i)
{
	unsigned int j;

	for (j = 0; j < i; j++)
		if (qs[j] && !qs[j]->hw_suspended && qs[j]->dev == qs[i]->dev)
			return true;
	return false;
}

/*
 * Charge one call of current's real uid to every device on which it takes
 * a queue off the hardware (@qs: the queues it holds now, NULL entries
 * skipped). Returns 0, or -EBUSY with nothing charged if the caller is
 * over its rate on one of those devices (or no bucket could be made).
 */
int amdqp_rate_charge_locked(struct amdqp_queue **qs, unsigned int n,
			     u64 now)
{
	unsigned int rate = READ_ONCE(amdqp_unpriv_suspend_rate);
	unsigned int burst = READ_ONCE(amdqp_unpriv_suspend_burst);
	kuid_t uid = current_uid();
	u64 interval, tolerance;
	unsigned int i;

	lockdep_assert_held(&amdqp_lock);
	if (!rate)
		return 0;
	interval = div_u64(NSEC_PER_SEC, rate);
	tolerance = (u64)(max(burst, 1U) - 1) * interval;

	for (i = 0; i < n; i++) {
		if (!qs[i] || qs[i]->hw_suspended)
			continue;
		if (max(amdqp_rl_tat(uid, qs[i]->dev), now) > now + tolerance)
			goto busy;
	}
	/* Make every bucket first, so that a failure charges nothing. */
	for (i = 0; i < n; i++) {
		struct amdqp_device *dev;

		if (!qs[i] || qs[i]->hw_suspended || amdqp_seen_before(qs, i))
			continue;
		dev = qs[i]->dev;
		if (amdqp_rl_set(uid, dev, amdqp_rl_tat(uid, dev), now))
			goto busy;
	}
	for (i = 0; i < n; i++) {
		struct amdqp_device *dev;

		if (!qs[i] || qs[i]->hw_suspended || amdqp_seen_before(qs, i))
			continue;
		dev = qs[i]->dev;
		amdqp_rl_set(uid, dev,
			     max(amdqp_rl_tat(uid, dev), now) + interval, now);
	}
	return 0;
busy:
	atomic64_inc(&amdqp_stats.rate_limited);
	return -EBUSY;
}
