/* SPDX-License-Identifier: GPL-2.0 OR MIT */
/*
 * amdkfd queue control: an in-kernel interface for schedulers that take
 * user-mode queues off the hardware and put them back (priority
 * preemption), built on the DQM's own locking and runlist/MES paths.
 *
 * The header is self-contained: it needs nothing from amdgpu's private
 * headers, so an out-of-tree module can be built against it with only the
 * kernel's public headers. All types amdkfd owns are opaque.
 *
 * Symbols are exported GPL-only in the AMDKFD_QCTL namespace.
 */
#ifndef AMDKFD_QCTL_H
#define AMDKFD_QCTL_H

#include <linux/bits.h>
#include <linux/list.h>
#include <linux/types.h>
#include <linux/uidgid.h>

/*
 * Bumped on every incompatible change of this header.
 * 2: @proc_id in queue info and events (PROCESS_EXIT may not be keyed on
 *    @pid), @pid recorded when the process opened /dev/kfd (never NULL),
 *    exact per-entry results (also on device-wide failure), -EACCES for
 *    queues the driver reset as hung, suspensions dropped when the last
 *    client unregisters.
 *    Compatible additions (clients of either kind work with either glue):
 *    kfd_qctl_set_cu_mask(), and kfd_qctl_device_info.cu_per_xcc in
 *    place of the zero @flags; a glue without them leaves cu_per_xcc 0
 *    and does not export the function (resolve it with symbol_get()).
 */
#define KFD_QCTL_API_VERSION	2

struct pid;

/* A counted reference to one user queue; opaque to clients. */
struct kfd_qctl_queue;

enum kfd_qctl_sched {
	KFD_QCTL_SCHED_NO_HWS = 0,	/* driver-programmed HQDs: unsupported */
	KFD_QCTL_SCHED_HWS = 1,		/* CP firmware runlist */
	KFD_QCTL_SCHED_MES = 2,		/* MES firmware */
};

/**
 * struct kfd_qctl_device_info - one KFD node (GPU or partition)
 * @gpu_id: KFD gpu_id, as in the topology and the KFD ioctls
 * @sched: enum kfd_qctl_sched
 * @num_xcc: XCC instances of the node
 * @cu_per_xcc: CUs of each XCC a kfd_qctl_set_cu_mask() mask addresses;
 *	0 when the node cannot take CU masks (no HWS/MES, CUs that do not
 *	split evenly among the XCCs, or a glue without the call)
 */
struct kfd_qctl_device_info {
	u32 gpu_id;
	u32 sched;
	u32 num_xcc;
	u32 cu_per_xcc;
};

enum kfd_qctl_queue_type {
	KFD_QCTL_QUEUE_COMPUTE = 0,
	KFD_QCTL_QUEUE_SDMA = 1,
	KFD_QCTL_QUEUE_OTHER = 2,
};

/* kfd_qctl_queue_info.state bits, a snapshot */
#define KFD_QCTL_QSTATE_ACTIVE		BIT(0) /* mapped or mappable */
#define KFD_QCTL_QSTATE_CTL_SUSPENDED	BIT(1) /* by this interface */
#define KFD_QCTL_QSTATE_EVICTED		BIT(2) /* memory eviction */
#define KFD_QCTL_QSTATE_DBG_SUSPENDED	BIT(3) /* by the debugger */

/**
 * struct kfd_qctl_queue_info - what a client may know about a queue
 * @pid: owning process (thread group), recorded when it opened /dev/kfd,
 *	never NULL; valid while the queue reference it was returned with is
 *	held; take get_pid() to keep it longer
 * @euid: effective uid of the owner
 * @gpu_id: device
 * @queue_id: KFD queue id, unique per process
 * @type: enum kfd_qctl_queue_type
 * @priority: KFD queue priority 0..15
 * @state: KFD_QCTL_QSTATE_* bits
 * @pad: zero
 * @ring_base: ring buffer GPU VA, the HSA queue's base address
 * @ring_size: ring buffer size in bytes
 * @proc_id: the owning KFD process (one per mm), never 0 and never reused
 *	while amdkfd is loaded: what QUEUE_DESTROY and PROCESS_EXIT carry
 */
struct kfd_qctl_queue_info {
	struct pid *pid;
	kuid_t euid;
	u32 gpu_id;
	u32 queue_id;
	u32 type;
	u32 priority;
	u32 state;
	u32 pad;
	u64 ring_base;
	u64 ring_size;
	u64 proc_id;
};

enum kfd_qctl_event_type {
	KFD_QCTL_EV_DEVICE_ADD = 1,	/* @dev */
	KFD_QCTL_EV_DEVICE_REMOVE,	/* @gpu_id */
	KFD_QCTL_EV_QUEUE_CREATE,	/* @gpu_id, @queue, @info */
	KFD_QCTL_EV_QUEUE_DESTROY,	/* @gpu_id, @proc_id, @queue_id */
	KFD_QCTL_EV_PROCESS_EXIT,	/* @gpu_id, @proc_id (once per device) */
	KFD_QCTL_EV_GPU_RESET,		/* @gpu_id, @count: suspensions lost */
	KFD_QCTL_EV_PREEMPT_FAIL,	/* @gpu_id, @error */
};

/**
 * struct kfd_qctl_event - what a notification carries
 * @type: enum kfd_qctl_event_type
 * @gpu_id: device concerned
 * @queue_id: QUEUE_CREATE, QUEUE_DESTROY
 * @error: PREEMPT_FAIL: negative errno
 * @count: GPU_RESET: queue-control suspensions dropped by the reset
 * @pid: QUEUE_CREATE, QUEUE_DESTROY, PROCESS_EXIT: the owner as recorded
 *	when it opened /dev/kfd; valid for the duration of the callback.
 *	Clients identify the process by @proc_id
 * @queue: QUEUE_CREATE: the new queue; valid for the duration of the
 *	callback, kfd_qctl_queue_get() it to keep it
 * @info: QUEUE_CREATE: its description
 * @dev: DEVICE_ADD: the device
 * @proc_id: QUEUE_CREATE, QUEUE_DESTROY, PROCESS_EXIT: the owning KFD
 *	process, as in kfd_qctl_queue_info
 */
struct kfd_qctl_event {
	u32 type;
	u32 gpu_id;
	u32 queue_id;
	int error;
	u32 count;
	struct pid *pid;
	struct kfd_qctl_queue *queue;
	const struct kfd_qctl_queue_info *info;
	const struct kfd_qctl_device_info *dev;
	u64 proc_id;
};

/**
 * struct kfd_qctl_client - a user of the queue control interface
 * @api_version: KFD_QCTL_API_VERSION the client was built with
 * @notify: called for every event, in process context, may sleep. It
 *	runs with amdkfd locks held (for queue events the owner's process
 *	mutex): it must not call any kfd_qctl_*() function other than
 *	kfd_qctl_queue_get() and kfd_qctl_queue_put(), and must not wait for
 *	anything that does.
 * @detach: called once when amdkfd goes away (module unload) with the
 *	client already removed: when it returns, the client must have no
 *	kfd_qctl_*() call in flight and must make none again; queue
 *	references it still holds must have been put. May sleep.
 * @node: private to amdkfd
 */
struct kfd_qctl_client {
	u32 api_version;
	void (*notify)(struct kfd_qctl_client *client,
		       const struct kfd_qctl_event *ev);
	void (*detach)(struct kfd_qctl_client *client);
	struct list_head node;
};

/*
 * Queue-control suspensions have no owner inside amdkfd: they belong to
 * the registered clients as a whole. When the last client unregisters,
 * every suspension still set is dropped and the queues are mapped again,
 * so that no queue stays off the hardware with no one left to resume it.
 */
int kfd_qctl_register_client(struct kfd_qctl_client *client);
void kfd_qctl_unregister_client(struct kfd_qctl_client *client);

typedef int (*kfd_qctl_device_fn)(const struct kfd_qctl_device_info *dev,
				  void *arg);
typedef int (*kfd_qctl_queue_fn)(struct kfd_qctl_queue *q,
				 const struct kfd_qctl_queue_info *info,
				 void *arg);

int kfd_qctl_walk_devices(kfd_qctl_device_fn fn, void *arg);
int kfd_qctl_walk_queues(kfd_qctl_queue_fn fn, void *arg);

struct kfd_qctl_queue *kfd_qctl_queue_lookup(struct pid *pid, u32 gpu_id,
					     u32 queue_id);
struct kfd_qctl_queue *kfd_qctl_queue_lookup_ring(struct pid *pid,
						  u64 ring_base);
void kfd_qctl_queue_get(struct kfd_qctl_queue *q);
void kfd_qctl_queue_put(struct kfd_qctl_queue *q);
int kfd_qctl_queue_info(struct kfd_qctl_queue *q,
			struct kfd_qctl_queue_info *info);

/*
 * kfd_qctl_suspend() and kfd_qctl_resume() write every @results entry,
 * whatever they return: 0 means the queue is now in the requested state
 * (changed, or already there), a negative errno that it kept its previous
 * state, except for:
 *   -EACCES: the driver reset queues of the owning process on this device
 *	as hung (pdd->has_reset_queue; gfx 9.4.3 resets a queue that does
 *	not preempt instead of the whole GPU, and returns success). The
 *	queue never runs again; its suspension was dropped. Like
 *	AMDKFD_IOC_UPDATE_QUEUE, nothing maps such a queue again.
 * The return value is the number of scheduler firmware operations, or a
 * negative errno when a device failed as a whole (-ETIME: a preemption
 * timed out, amdkfd treats the scheduler as hung and resets the GPU; a
 * GPU_RESET event follows) or the call was rejected (-E2BIG, -ENOMEM:
 * every entry gets that errno, nothing changed; -EINVAL: @qs or @results
 * is NULL).
 */
int kfd_qctl_suspend(struct kfd_qctl_queue **qs, unsigned int n,
		     u32 grace_period, int *results);
int kfd_qctl_resume(struct kfd_qctl_queue **qs, unsigned int n,
		    int *results);

int kfd_qctl_set_create_suspended(struct pid *pid, bool on);

/*
 * kfd_qctl_set_cu_mask() imposes a CU mask on each queue (or lifts it, for
 * a NULL mask) on top of the one its owner set with AMDKFD_IOC_SET_CU_MASK,
 * with one runlist update per device under HWS; results and return value
 * as for kfd_qctl_suspend(). A mask is num_xcc * DIV_ROUND_UP(cu_per_xcc,
 * 32) u32 words: the words of XCC 0, then those of XCC 1, ...; bit i of
 * word j of an XCC's words is CU 32 * j + i of that XCC, counted as the
 * MQD managers count the XCC's active CUs (on gfx 9.4.3 that CU is bit
 * (32 * j + i) * num_xcc + xcc of an AMDKFD_IOC_SET_CU_MASK mask). Every
 * XCC needs a CU, none at or past cu_per_xcc may be set. On parts with
 * WGPs (gfx10 and later) a WGP runs if either of its CUs is in the mask.
 */
int kfd_qctl_set_cu_mask(struct kfd_qctl_queue **qs, unsigned int n,
			 const u32 *const *masks, u32 grace_period,
			 int *results);

#endif /* AMDKFD_QCTL_H */
