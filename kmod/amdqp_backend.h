/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The interface between the amdqp core and a backend that owns real (kfd)
 * or simulated (sim) devices. A backend registers devices and the user
 * queues it sees; the core decides what to suspend and calls back into the
 * backend once per device per batch.
 *
 * Exported to other modules in the AMDQP symbol namespace.
 */
#ifndef AMDQP_BACKEND_H
#define AMDQP_BACKEND_H

#include <linux/math.h>
#include <linux/types.h>
#include <linux/uidgid.h>

struct pid;
struct amdqp_device;
struct amdqp_queue;

/* Firmware-level counters a backend keeps per device. */
struct amdqp_dev_counters {
	u64 sched_updates;
	u64 unmap_packets;
	u64 map_packets;
	u64 preemptions;
	u64 preempt_failures;
	u64 resets;
};

/* Per-queue statistics, where the backend can tell. */
struct amdqp_queue_stats {
	u64 busy_ns;
	u64 submitted;
	u64 completed;
};

/*
 * The longest preemption deadline a backend is handed, in us. The kfd path
 * ends in an 8-bit CP wait-count field that reads 0 as "no limit", so a
 * deadline it cannot represent must never reach it: the core clamps every
 * caller's grace_us to this once (amdqp_reconcile()), and every backend,
 * the sim included, sees the same effective deadline.
 */
#define AMDQP_GRACE_MAX_US	255U

/*
 * CU masks (AMDQP_IOC_CONFINE) travel as arrays of u32 words: the words of
 * XCC 0, then those of XCC 1, and so on, amdqp_cu_mask_words(cu_per_xcc)
 * of them per XCC; bit i of word j of an XCC's words is CU 32 * j + i of
 * that XCC. Every mask the core hands a backend has at least one CU of
 * every XCC set and none at or past cu_per_xcc.
 */
static inline u32 amdqp_cu_mask_words(u32 cu_per_xcc)
{
	return DIV_ROUND_UP(cu_per_xcc, 32);
}

/**
 * struct amdqp_backend_ops - what the core asks of a backend
 * @suspend: take @n queues of @dev off the hardware. @results[i] says
 *	where queue i ended up, whatever the return value: 0 if it is now
 *	in the requested state (changed, or already there), a negative
 *	errno if it kept its previous state (-ENOENT if the queue is being
 *	destroyed, -ETIME on a preemption timeout, -EBUSY if it cannot act
 *	now, -EACCES if the driver reset it as hung). The core records each
 *	entry as reported: an entry reported 0 is off the hardware and stays
 *	marked so until a resume of it is reported, even if the call also
 *	failed device-wide. Entries left unwritten count as failed with the
 *	return value. Under HWS all @n must be handled by one scheduler
 *	update. @grace_us is the preemption deadline, 0 for the backend's
 *	default, otherwise already clamped by the core to
 *	1..AMDQP_GRACE_MAX_US. Return 0, or a negative errno if the device
 *	failed as a whole (counted and traced as such).
 * @resume: put @n queues of @dev back; same conventions. A suspension the
 *	core discards (the device was reset or removed, or the queue
 *	unregistered, while the call was in flight) is undone with a resume
 *	call for those queues.
 * @confine: optional (with amdqp_device_desc.cu_per_xcc); restrict @n
 *	queues of @dev to CU masks. @masks[i] is the mask amdqp confines
 *	queue i to (the layout above), or NULL to lift amdqp's confinement.
 *	The backend keeps the mask the queue's owner set itself (or the
 *	full mask) apart from amdqp's: the hardware queue runs on the
 *	owner's mask ANDed with @masks[i], XCC by XCC, or on @masks[i]
 *	alone in an XCC where the two share no CU; lifting gives back
 *	exactly the owner's mask, including a change the owner made while
 *	confined (an owner's change of a confined queue is ANDed the same
 *	way). A queue off the hardware (suspended) takes the mask with no
 *	scheduler work of its own and runs under it once mapped again.
 *	Results, locking and the one-update-per-call rule under HWS as for
 *	@suspend (0: the queue now has the requested confinement; an error:
 *	it kept the previous one); @grace_us bounds the preemption of the
 *	update that rewrites the queues' MQDs. Called once per device per
 *	direction: confinements (and mask changes), then lifts.
 * @set_priority: optional; apply a new priority to the hardware queue.
 * @get_counters: optional; fill the device's firmware counters.
 * @get_queue_stats: optional; fill per-queue statistics.
 * @queue_release: optional; the core dropped its last reference to @q
 *	after amdqp_queue_unregister(); the backend may free its private data.
 *
 * Locking: @suspend and @resume are called in process context, may sleep,
 * and are serialised per device by the core (never two at once for one
 * device). Calls for different devices may run concurrently. They may be
 * called for a queue concurrently with the backend's own
 * amdqp_queue_unregister() of it: the backend must then fail that entry
 * with -ENOENT, not crash. The core holds no other lock across them, so a
 * backend may call amdqp_queue_register/unregister and amdqp_report_*
 * from anywhere, but not amdqp_device_unregister() from inside an op.
 */
struct amdqp_backend_ops {
	int (*suspend)(struct amdqp_device *dev, struct amdqp_queue **qs,
		       unsigned int n, int *results, u32 grace_us);
	int (*resume)(struct amdqp_device *dev, struct amdqp_queue **qs,
		      unsigned int n, int *results);
	int (*confine)(struct amdqp_device *dev, struct amdqp_queue **qs,
		       unsigned int n, const u32 *const *masks, int *results,
		       u32 grace_us);
	int (*set_priority)(struct amdqp_queue *q, u32 priority);
	void (*get_counters)(struct amdqp_device *dev,
			     struct amdqp_dev_counters *c);
	void (*get_queue_stats)(struct amdqp_queue *q,
				struct amdqp_queue_stats *s);
	void (*queue_release)(struct amdqp_queue *q);
};

/**
 * struct amdqp_device_desc - what a backend tells about a device
 * @gpu_id: KFD gpu_id; unique among registered devices
 * @backend: AMDQP_BACKEND_* (uapi)
 * @sched_mode: AMDQP_SCHED_HWS or AMDQP_SCHED_MES (uapi)
 * @num_xcc: XCC instances
 * @cu_per_xcc: CUs of each XCC a CU mask addresses; 0 when the backend
 *	cannot confine queues (no @ops->confine), at most
 *	AMDQP_CU_MASK_MAX_WORDS * 32 / @num_xcc words' worth
 * @ops: callbacks, must outlive the device
 * @priv: backend data, amdqp_device_priv() returns it
 */
struct amdqp_device_desc {
	u32 gpu_id;
	u32 backend;
	u32 sched_mode;
	u32 num_xcc;
	u32 cu_per_xcc;
	const struct amdqp_backend_ops *ops;
	void *priv;
};

/**
 * struct amdqp_queue_desc - what a backend tells about a user queue
 * @owner: owning process (thread group leader's struct pid); the core
 *	takes its own reference
 * @uid: owner's effective uid, for permission checks
 * @queue_id: id unique per (owner, device)
 * @ring_va: ring base VA as userspace knows it
 * @ring_size: ring size in bytes
 * @priority: priority the owner asked for, AMDQP_PRIORITY_MIN..MAX; the
 *	core clamps it to the owner's ceiling (amdqp_queue_priority())
 * @priv: backend data, amdqp_queue_priv() returns it
 */
struct amdqp_queue_desc {
	struct pid *owner;
	kuid_t uid;
	u32 queue_id;
	u64 ring_va;
	u64 ring_size;
	u32 priority;
	void *priv;
};

/*
 * Devices. amdqp_device_register() returns an ERR_PTR on failure.
 * amdqp_device_unregister() unregisters all remaining queues of the
 * device, drops every suspension on it without calling the backend (the
 * device is going away), waits for in-flight backend calls on it to
 * return, and reports AMDQP_EVENT_DEVICE_REMOVED. Must not be called from
 * a backend op.
 */
struct amdqp_device *amdqp_device_register(const struct amdqp_device_desc *d);
void amdqp_device_unregister(struct amdqp_device *dev);
void *amdqp_device_priv(const struct amdqp_device *dev);
u32 amdqp_device_gpu_id(const struct amdqp_device *dev);

/*
 * Queues. amdqp_queue_register() returns an ERR_PTR on failure. It may be
 * called from any sleepable context. amdqp_queue_unregister() never waits
 * for a suspension or a backend call in flight: it detaches the queue,
 * drops all suspensions of it and reports AMDQP_EVENT_QUEUE_DESTROYED.
 * The queue memory lives until the last in-flight op finished; then
 * ops->queue_release() runs.
 */
struct amdqp_queue *amdqp_queue_register(struct amdqp_device *dev,
					 const struct amdqp_queue_desc *d);
void amdqp_queue_unregister(struct amdqp_queue *q);
void *amdqp_queue_priv(const struct amdqp_queue *q);
u32 amdqp_queue_id(const struct amdqp_queue *q);
/*
 * The effective priority of @q: what the owner asked for (@priority at
 * registration, or SET_PRIORITY) clamped to the ceiling of its owner. A
 * backend that applies priorities to hardware applies this one after
 * amdqp_queue_register(); later changes come through ops->set_priority.
 * May sleep.
 */
u32 amdqp_queue_priority(struct amdqp_queue *q);

/*
 * Events a backend reports. amdqp_report_reset() also drops every
 * suspension and confinement on the device: after a reset the firmware
 * state is new, the backend has remapped (or lost) its queues, and it
 * must have given every queue back its owner's own CU mask. All may
 * sleep.
 */
void amdqp_report_process_exit(struct amdqp_device *dev, struct pid *pid);
void amdqp_report_reset(struct amdqp_device *dev);
void amdqp_report_preempt_failure(struct amdqp_device *dev, int error);

/*
 * A backend announces itself (AMDQP_BACKEND_* bit) so GET_VERSION can tell
 * userspace which backends are usable even before any device exists.
 */
void amdqp_backend_set_bound(u32 backend, bool bound);

/*
 * The kfd backend is built into amdqp.ko (kmod/kfd/). amdqp_kfd_init()
 * returns 0 when it bound to the amdkfd glue, or a negative errno when the
 * glue is absent (amdqp then runs with other backends only).
 */
int amdqp_kfd_init(void);
void amdqp_kfd_exit(void);

#endif /* AMDQP_BACKEND_H */
