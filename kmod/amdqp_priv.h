/* SPDX-License-Identifier: GPL-2.0 */
/*
 * amdqp core internals.
 *
 * Locking, outermost first:
 *  1. amdqp_device.sched_lock (mutex, per device): serialises scheduler
 *     updates, i.e. backend suspend/resume calls, on one device; the
 *     desired-vs-actual state of that device's queues is reconciled under it.
 *  2. amdqp_lock (mutex, global): the device list, every device's queue
 *     list, queue fields other than the backend's, and all holds (which fd
 *     suspends or confines which queue, and to which CU mask). Never held
 *     across a backend call.
 *  3. amdqp_event_files_lock (mutex, global, amdqp_events.c): the list of
 *     files receiving events, and which ring each of them has. Taken
 *     inside amdqp_lock (events are emitted under it); a mutex so that
 *     emission, which walks every subscribed file, stays preemptible.
 *  4. amdqp_file.ev_lock (spinlock, per file): that file's ring contents
 *     and counters. O(1) work under it; never taken in interrupt context.
 *
 * amdqp_lock also covers the ceiling table (amdqp_ceiling.c) and the rate
 * limit buckets (amdqp_ratelimit.c).
 */
#ifndef AMDQP_PRIV_H
#define AMDQP_PRIV_H

#include <linux/kref.h>
#include <linux/list.h>
#include <linux/mutex.h>
#include <linux/pid_namespace.h>
#include <linux/spinlock.h>
#include <linux/wait.h>
#include <linux/amdqp.h>

#include "amdqp_backend.h"

/*
 * Arrays sized by a caller's request (batch, list, queue count): a failed
 * allocation is the caller's ENOMEM, not a kernel warning with a stack
 * dump that any user could print at will.
 */
#define AMDQP_GFP_CALLER	(GFP_KERNEL | __GFP_NOWARN)

extern struct mutex amdqp_lock;
extern struct list_head amdqp_devices;	/* struct amdqp_device.node */

extern unsigned int amdqp_max_suspend_ms;
extern unsigned int amdqp_cooldown_ms;
extern unsigned int amdqp_unpriv_suspend_rate;
extern unsigned int amdqp_unpriv_suspend_burst;
extern bool amdqp_same_uid_control;
extern unsigned int amdqp_default_ceiling;
extern unsigned int amdqp_starve_window_ms;
extern unsigned int amdqp_min_run_pct;
extern unsigned int amdqp_max_confine_ms;

struct amdqp_device {
	struct kref ref;
	struct list_head node;		/* amdqp_devices; amdqp_lock */
	struct list_head queues;	/* amdqp_queue.dev_node; amdqp_lock */
	struct mutex sched_lock;
	const struct amdqp_backend_ops *ops;
	void *priv;
	u32 gpu_id;
	u32 backend;
	u32 sched_mode;
	u32 num_xcc;
	u32 cu_per_xcc;			/* 0: cannot confine; set once */
	u32 mask_words;			/* words of a CU mask; set once */
	u32 num_queues;			/* amdqp_lock */
	u32 num_suspended;		/* amdqp_lock */
	u32 num_confined;		/* amdqp_lock */
	u64 seq;			/* registration order; set once */
	/*
	 * Bumped on reset and removal (amdqp_lock); a backend call that
	 * straddles a change did not act on the state the core knows.
	 */
	u64 generation;
	bool dead;			/* amdqp_lock; set once */
};

struct amdqp_queue {
	struct kref ref;
	struct list_head dev_node;	/* device's queues; amdqp_lock */
	struct hlist_node id_node;	/* amdqp_qhash by id; amdqp_lock */
	struct hlist_node ring_node;	/* amdqp_qhash by ring; amdqp_lock */
	struct list_head holds;		/* amdqp_hold.q_node; amdqp_lock */
	struct amdqp_device *dev;	/* holds a device reference */
	struct pid *owner;
	void *priv;
	kuid_t uid;
	u32 queue_id;
	u64 seq;			/* registration order; set once */
	/*
	 * Priorities (amdqp_lock): @priority is the effective one, what
	 * SUSPEND_BELOW compares and the backend applies: min(@requested,
	 * @ceiling), or @requested itself with @prio_override (the owner had
	 * CAP_SYS_NICE at registration, or a CAP_SYS_NICE caller set it).
	 */
	u32 priority;
	u32 requested;
	u32 ceiling;
	bool prio_override;
	/* The owner's identity at registration, for ceilings; set once. */
	const struct cred *cred;	/* NULL if the owner had exited */
	struct cgroup *cgrp;		/* its cgroup v2, or NULL */
	u32 nr_holds;			/* amdqp_lock */
	/*
	 * ioctls that changed holds and have not finished reconciling
	 * (amdqp_lock); the watchdog leaves such queues to them.
	 */
	u32 inflight;
	u64 ring_va;
	u64 ring_size;
	u64 created_ns;
	/* amdqp_lock for all below; hw_suspended changes under sched_lock too */
	u64 suspended_since;
	u64 suspended_total_ns;
	u64 suspend_count;
	u64 cooldown_until;
	u64 wd_sweep;			/* last watchdog sweep that took it */
	/*
	 * Starvation budget (amdqp_watchdog.c): suspended time owed, growing
	 * while off the hardware and paid back while on it, as of
	 * @sv_stamp. Resume and re-suspend do not reset it.
	 */
	u64 sv_debt;
	u64 sv_stamp;
	bool hw_suspended;		/* off the hardware by us */
	/* the watchdog fired for this stretch of suspension */
	bool wd_fired;
	bool dead;			/* unregistered by the backend */
	/*
	 * Confinement (amdqp_confine.c), amdqp_lock; hw_confined and
	 * hw_mask change under sched_lock too. @hw_mask is the mask the
	 * backend last reported applied (dev->mask_words words), valid
	 * while @hw_confined.
	 */
	struct list_head cholds;	/* amdqp_chold.h.q_node, oldest first */
	u32 nr_cholds;
	bool hw_confined;
	bool cwd_fired;			/* the watchdog lifted this stretch */
	u64 confined_since;
	u64 confine_cooldown_until;
	u64 confine_count;
	u32 hw_mask[];
};

/*
 * One fd's suspension of one queue, and the part of a confinement that
 * links it the same way (on the queue's and the fd's cholds instead).
 */
struct amdqp_hold {
	struct list_head q_node;	/* amdqp_queue.holds */
	struct list_head f_node;	/* amdqp_file.holds */
	struct amdqp_queue *q;
	struct amdqp_file *f;
};

/*
 * One fd's confinement of one queue, to @mask (the device's mask_words
 * words, the layout of amdqp_backend.h). amdqp_lock.
 */
struct amdqp_chold {
	struct amdqp_hold h;		/* first: freed through it */
	u32 mask[];
};

static_assert(offsetof(struct amdqp_chold, h) == 0);

/* Records one fd's ring holds; the ring is charged to the opener's memcg. */
#define AMDQP_EVENT_RING	512

struct amdqp_file {
	struct list_head holds;		/* amdqp_hold.f_node; amdqp_lock */
	struct list_head cholds;	/* amdqp_chold.h.f_node; amdqp_lock */
	struct pid_namespace *pid_ns;	/* opener's, for pid translation */
	/* amdqp_event_files while mask != 0; amdqp_event_files_lock */
	struct list_head ev_node;
	wait_queue_head_t ev_wait;
	/* set under amdqp_event_files_lock and ev_lock; all below: ev_lock */
	spinlock_t ev_lock;
	struct amdqp_event *ev_ring;
	u64 ev_mask;
	u64 ev_lost;
	unsigned int ev_head;
	unsigned int ev_count;
};

static inline u64 amdqp_now_ns(void)
{
	return ktime_get_ns();
}

/* amdqp_registry.c */
void amdqp_queue_get(struct amdqp_queue *q);
void amdqp_queue_put(struct amdqp_queue *q);
void amdqp_device_get(struct amdqp_device *dev);
void amdqp_device_put(struct amdqp_device *dev);
u32 amdqp_bound_backends(void);
struct amdqp_device *amdqp_device_find_locked(u32 gpu_id);
struct amdqp_queue *amdqp_find_queue(const struct amdqp_queue_ref *ref,
				     struct pid_namespace *ns);
bool amdqp_may_read_owner(struct pid *owner);
bool amdqp_owner_creds(struct pid *owner, kuid_t uid, kgid_t gid, bool *same,
		       bool *dumpable, struct user_namespace **ns);
void amdqp_account_resume_locked(struct amdqp_queue *q, u64 now);
u32 amdqp_effective_priority(const struct amdqp_queue *q);

/* Time @q spent suspended, the current stretch included; amdqp_lock. */
static inline u64 amdqp_suspended_ns(const struct amdqp_queue *q, u64 now)
{
	return q->suspended_total_ns +
	       (q->hw_suspended ? now - q->suspended_since : 0);
}

/* amdqp_suspend.c */
long amdqp_ioctl_suspend(struct amdqp_file *f, void __user *arg, u32 size);
long amdqp_ioctl_resume(struct amdqp_file *f, void __user *arg, u32 size);
long amdqp_ioctl_suspend_below(struct amdqp_file *f, void __user *arg,
			       u32 size);
long amdqp_ioctl_resume_all(struct amdqp_file *f, void __user *arg, u32 size);
void amdqp_release_holds(struct amdqp_file *f);
void amdqp_drop_holds_locked(struct amdqp_queue *q);
struct amdqp_hold *amdqp_hold_find(struct list_head *q_holds,
				   const struct amdqp_file *f);
void amdqp_hold_add(struct amdqp_hold *h, struct amdqp_file *f,
		    struct amdqp_queue *q, struct list_head *f_holds,
		    struct list_head *q_holds, u32 *nr);
void amdqp_hold_del(struct amdqp_hold *h, u32 *nr);
void amdqp_hold_drop_all(struct list_head *q_holds, u32 *nr);
u32 amdqp_qstate(struct amdqp_file *f, struct amdqp_queue *q, u64 now);
/*
 * Owners over which current passed the kernel's ptrace attach check,
 * Yama and other LSMs included (amdqp_trust.c): sorted struct pid
 * pointers, each with a reference. Checked before taking amdqp_lock.
 */
struct amdqp_tracees {
	struct pid **pids;
	u32 n;
};

int amdqp_may_control(struct amdqp_queue *q, bool audit,
		      const struct amdqp_tracees *t);

/* A set of devices named by gpu_id; an empty set means all devices. */
struct amdqp_gpus {
	u32 *ids;
	u32 n;
};

bool amdqp_gpus_has(const struct amdqp_gpus *g, u32 gpu_id);
int amdqp_below_tracees(struct amdqp_file *f, const struct amdqp_gpus *g,
			u32 below, u32 cap, struct amdqp_tracees *t);

/* Which outcome amdqp_reconcile() reports per queue. */
enum amdqp_rc_what {
	AMDQP_RC_SUSPEND = 1,		/* of taking off / putting back */
	AMDQP_RC_CONFINE = 2,		/* of confining / lifting */
	AMDQP_RC_ANY = 3,		/* the first failure of either */
};

void amdqp_reconcile(struct amdqp_queue **qs, unsigned int n, int *results,
		     u32 grace_us, u64 *latency_ns, enum amdqp_rc_what what);

/* What amdqp_drop_file_holds() reconciled: queues with references. */
struct amdqp_dropped {
	struct amdqp_queue **qs;
	int *res;
	u32 n;
};

int amdqp_drop_file_holds(struct amdqp_file *f, const struct amdqp_gpus *g,
			  enum amdqp_rc_what what, bool all, u32 grace_us,
			  u64 *latency_ns, struct amdqp_dropped *d);
void amdqp_dropped_free(struct amdqp_dropped *d);
void amdqp_watchdog_init(void);
void amdqp_watchdog_exit(void);
void amdqp_watchdog_kick_locked(void);
void amdqp_resume_everything(void);
void amdqp_starve_update_locked(struct amdqp_queue *q, u64 now);

/* amdqp_confine.c */
long amdqp_ioctl_confine(struct amdqp_file *f, void __user *arg, u32 size);
void amdqp_drop_cholds_locked(struct amdqp_queue *q);
bool amdqp_confine_want_locked(const struct amdqp_queue *q, u32 *mask);
bool amdqp_confine_mismatch_locked(const struct amdqp_queue *q);
void amdqp_account_unconfine_locked(struct amdqp_queue *q);
void amdqp_del_chold(struct amdqp_chold *c);
struct amdqp_chold *amdqp_find_chold(struct amdqp_file *f,
				     struct amdqp_queue *q);

/* amdqp_trust.c */
int amdqp_trust_init(void);
void amdqp_trust_exit(void);
bool amdqp_control_all(void);
int amdqp_tracees_check(struct amdqp_tracees *t, struct pid **pids, u32 n);
void amdqp_tracees_free(struct amdqp_tracees *t);
bool amdqp_tracees_has(const struct amdqp_tracees *t, struct pid *owner);

/* amdqp_ceiling.c */
void amdqp_ceiling_attach(struct amdqp_queue *q, struct pid *owner);
void amdqp_ceiling_detach(struct amdqp_queue *q);
void amdqp_ceiling_set_locked(struct amdqp_queue *q);
void amdqp_ceiling_default_changed(void);
void amdqp_ceiling_exit(void);
long amdqp_ioctl_ceilings(struct amdqp_file *f, void __user *arg, u32 size);

/* amdqp_ratelimit.c */
bool amdqp_rate_exempt(void);
int amdqp_rate_charge_locked(struct amdqp_queue **qs, unsigned int n,
			     u64 now);
void amdqp_ratelimit_exit(void);

/* amdqp_ioctl.c */
long amdqp_ioctl(struct file *filp, unsigned int cmd, unsigned long arg);

/* amdqp_events.c */
void amdqp_emit(u32 type, struct pid *pid, u32 gpu_id, u32 queue_id,
		int error, u64 data);
long amdqp_ioctl_set_event_mask(struct amdqp_file *f, void __user *arg,
				u32 size);
ssize_t amdqp_read(struct file *filp, char __user *buf, size_t len,
		   loff_t *off);
__poll_t amdqp_poll(struct file *filp, struct poll_table_struct *wait);
void amdqp_events_init_file(struct amdqp_file *f);
void amdqp_events_release(struct amdqp_file *f);

/* amdqp_debugfs.c */
struct amdqp_stats {
	atomic64_t ioctls;
	atomic64_t suspend_calls;
	atomic64_t resume_calls;
	atomic64_t queues_suspended;
	atomic64_t queues_resumed;
	atomic64_t failures;
	atomic64_t watchdog_resumes;
	atomic64_t watchdog_sweeps;
	atomic64_t events_lost;
	atomic64_t rate_limited;
	atomic64_t confine_calls;
	atomic64_t queues_confined;
	atomic64_t queues_unconfined;
	atomic64_t confine_watchdog;
};

extern struct amdqp_stats amdqp_stats;
void amdqp_debugfs_init(void);
void amdqp_debugfs_exit(void);

#endif /* AMDQP_PRIV_H */
