// SPDX-License-Identifier: GPL-2.0
/*
 * Rate limit of suspensions asked for by unprivileged callers. Under HWS
 * every suspension is a runlist update that preempts every queue of the
 * device, whoever owns them, so /dev/amdqp being world-usable must not let
 * one user preempt a shared GPU at will. Each device has a token bucket,
 * kept as a GCRA theoretical arrival time (amdqp_device.rl_tat, under
 * amdqp_lock): unpriv_suspend_rate calls per second, unpriv_suspend_burst
 * of them at once. A call that would change the hardware of a device
 * whose bucket is empty fails as a whole with -EBUSY, charging nothing.
 * Callers with CAP_SYS_NICE or CAP_SYS_ADMIN (the policy daemon) are
 * exempt and charge nothing. Resumes are never limited: they only ever
 * give the hardware back.
 */
#include <linux/capability.h>
#include <linux/math64.h>
#include <linux/minmax.h>
#include <linux/user_namespace.h>

#include "amdqp_priv.h"

/* Checked before taking amdqp_lock. No audit: most callers lack both. */
bool amdqp_rate_exempt(void)
{
	return ns_capable_noaudit(&init_user_ns, CAP_SYS_NICE) ||
	       ns_capable_noaudit(&init_user_ns, CAP_SYS_ADMIN);
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
 * Charge one call to every device on which it takes a queue off the
 * hardware (@qs: the queues it holds now, NULL entries skipped). Returns 0,
 * or -EBUSY with nothing charged if one of those devices is over its rate.
 */
int amdqp_rate_charge_locked(struct amdqp_queue **qs, unsigned int n,
			     u64 now)
{
	unsigned int rate = READ_ONCE(amdqp_unpriv_suspend_rate);
	unsigned int burst = READ_ONCE(amdqp_unpriv_suspend_burst);
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
		if (max(qs[i]->dev->rl_tat, now) > now + tolerance) {
			atomic64_inc(&amdqp_stats.rate_limited);
			return -EBUSY;
		}
	}
	for (i = 0; i < n; i++) {
		struct amdqp_device *dev;

		if (!qs[i] || qs[i]->hw_suspended || amdqp_seen_before(qs, i))
			continue;
		dev = qs[i]->dev;
		dev->rl_tat = max(dev->rl_tat, now) + interval;
	}
	return 0;
}
