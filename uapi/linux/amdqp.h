/* SPDX-License-Identifier: GPL-2.0 WITH Linux-syscall-note */
/*
 * amdqp: priority preemption of AMD GPU hardware queues.
 *
 * Rules every structure here follows (Documentation/process/botching-up-ioctls.rst):
 *  - only __u32/__u64/__s32, naturally aligned, explicit padding, sizes a
 *    multiple of 8 so 32-bit and 64-bit userspace see the same layout;
 *  - user pointers travel as __u64;
 *  - pad and flag bits the kernel does not know must be zero, or -EINVAL;
 *  - structures may grow at the end: the size is encoded in the ioctl number,
 *    the kernel zero-extends shorter (older) structures and rejects longer
 *    ones whose unknown tail is not zero (-E2BIG). Arrays carry their element
 *    size for the same reason.
 *
 * Magic 0xB9, numbers 0x00-0x3f; 0x40-0x4f belong to amdqp_sim.h.
 */
#ifndef _UAPI_LINUX_AMDQP_H
#define _UAPI_LINUX_AMDQP_H

#include <linux/const.h>
#include <linux/ioctl.h>
#include <linux/types.h>

#define AMDQP_VERSION_MAJOR	1
#define AMDQP_VERSION_MINOR	3

/* KFD queue priorities: 0 lowest, 15 highest. */
#define AMDQP_PRIORITY_MIN	0
#define AMDQP_PRIORITY_MAX	15

/* Largest number of entries one batch ioctl accepts. */
#define AMDQP_MAX_BATCH		1024

/* Backends (amdqp_version.backends, amdqp_device_info.backend). */
#define AMDQP_BACKEND_SIM	_BITUL(0)
#define AMDQP_BACKEND_KFD	_BITUL(1)

/* amdqp_version.features (since ABI 1.2) */
#define AMDQP_FEATURE_CEILING	_BITUL(0)	/* AMDQP_IOC_CEILINGS, per-queue ceilings */
#define AMDQP_FEATURE_STARVE	_BITUL(1)	/* per-queue suspended-time budget */
#define AMDQP_FEATURE_CONFINE	_BITUL(2)	/* AMDQP_IOC_CONFINE (since ABI 1.3) */

/* Largest number of entries the ceiling table holds. */
#define AMDQP_MAX_CEILINGS	4096

/* Scheduler firmware of a device. */
#define AMDQP_SCHED_HWS		1	/* CP runlist: one update maps/unmaps all */
#define AMDQP_SCHED_MES		2	/* MES: add/remove per queue */

/**
 * struct amdqp_version - AMDQP_IOC_GET_VERSION
 * @major: ABI major; a change here means incompatible
 * @minor: ABI minor; grows with new ioctls/fields
 * @backends: AMDQP_BACKEND_* bits bound now
 * @num_devices: devices registered now
 * @max_batch: AMDQP_MAX_BATCH of this kernel
 * @priority_max: highest priority value accepted
 * @pad: zero
 * @reserved: since ABI 1.2: the module's default_ceiling (the ceiling of
 *	an owner no entry of the ceiling table matches)
 * @features: AMDQP_FEATURE_* bits (zero before ABI 1.2)
 */
struct amdqp_version {
	__u32 major;
	__u32 minor;
	__u32 backends;
	__u32 num_devices;
	__u32 max_batch;
	__u32 priority_max;
	__u32 pad;
	__u32 reserved;
	__u64 features;
};

/**
 * struct amdqp_device_info - one entry of AMDQP_IOC_LIST_DEVICES
 * @gpu_id: KFD gpu_id (sim devices: the id given at creation)
 * @backend: AMDQP_BACKEND_*
 * @sched_mode: AMDQP_SCHED_*
 * @num_xcc: XCC instances in this partition
 * @num_queues: user queues registered on it
 * @num_suspended: of those, suspended by amdqp
 * @pad: zero
 * @sched_updates: scheduler firmware operations issued by amdqp (HWS:
 *	runlist updates; MES: add/remove queue requests)
 * @unmap_packets: unmap/remove requests sent to the firmware
 * @map_packets: map/add requests sent to the firmware
 * @preemptions: queues taken off the hardware while they had work in flight
 * @preempt_failures: preemption timeouts seen
 * @resets: device resets seen
 */
struct amdqp_device_info {
	__u32 gpu_id;
	__u32 backend;
	__u32 sched_mode;
	__u32 num_xcc;
	__u32 num_queues;
	__u32 num_suspended;
	__u64 sched_updates;
	__u64 unmap_packets;
	__u64 map_packets;
	__u64 preemptions;
	__u64 preempt_failures;
	__u64 resets;
};

/**
 * struct amdqp_list_devices - AMDQP_IOC_LIST_DEVICES
 * @devices: user pointer to an array of @count entries of @info_size bytes
 * @count: in: capacity of @devices; out: devices that exist
 * @info_size: in: sizeof(struct amdqp_device_info) the caller knows (>= 8);
 *	out: the kernel's size
 * @filled: out: entries written (min of capacity and devices)
 * @pad: zero
 */
struct amdqp_list_devices {
	__u64 devices;
	__u32 count;
	__u32 info_size;
	__u32 filled;
	__u32 pad;
};

/* amdqp_queue_info.state bits */
#define AMDQP_QSTATE_SUSPENDED	_BITUL(0)	/* off the hardware by amdqp */
#define AMDQP_QSTATE_HELD	_BITUL(1)	/* this fd holds a suspension */
#define AMDQP_QSTATE_COOLDOWN	_BITUL(2)	/* watchdog resumed it; immune */
/*
 * LIST_QUEUES only: @ring_va reads 0 because the caller may not read the
 * owner's address space (what /proc/PID/maps needs: same uid and a
 * dumpable owner, or CAP_SYS_PTRACE). Since ABI 1.1.
 */
#define AMDQP_QSTATE_REDACTED	_BITUL(3)
/* Since ABI 1.3 (AMDQP_IOC_CONFINE): */
#define AMDQP_QSTATE_CONFINED	_BITUL(4)	/* runs on a CU mask amdqp applied */
#define AMDQP_QSTATE_CONFINE_HELD _BITUL(5)	/* this fd confines it */
#define AMDQP_QSTATE_CONFINE_COOLDOWN _BITUL(6)	/* watchdog lifted it; immune */

/**
 * struct amdqp_queue_info - one entry of AMDQP_IOC_LIST_QUEUES
 * @pid: owning process (tgid) in the caller's pid namespace
 * @uid: owner's effective uid in the caller's user namespace
 * @gpu_id: device of the queue
 * @queue_id: KFD queue id, unique per process and device
 * @ring_va: ring buffer GPU VA (the HSA queue's base address); 0 with
 *	AMDQP_QSTATE_REDACTED in @state when the caller may not see it
 * @ring_size: ring size in bytes
 * @priority: effective priority, AMDQP_PRIORITY_MIN..MAX: the one
 *	SUSPEND_BELOW compares, min(@requested, @ceiling) unless a
 *	CAP_SYS_NICE caller set it above the ceiling
 * @state: AMDQP_QSTATE_* bits
 * @holders: number of fds holding it suspended
 * @backend: AMDQP_BACKEND_*
 * @suspend_count: times taken off the hardware by amdqp
 * @suspended_ns: total time spent suspended, the current stretch included
 * @busy_ns: time it had work executing, if the backend knows (else 0)
 * @submitted: work items submitted, if the backend knows
 * @completed: work items completed, if the backend knows
 * @created_ns: CLOCK_MONOTONIC time of registration
 * @requested: since ABI 1.2: the priority the owner asked for (at queue
 *	creation or by SET_PRIORITY), kept while a ceiling clamps it
 * @ceiling: since ABI 1.2: the ceiling of the owner's credentials and
 *	cgroup at registration (see AMDQP_IOC_CEILINGS)
 *
 * Sizes: 96 bytes up to ABI 1.1, 104 since 1.2.
 */
struct amdqp_queue_info {
	__u32 pid;
	__u32 uid;
	__u32 gpu_id;
	__u32 queue_id;
	__u64 ring_va;
	__u64 ring_size;
	__u32 priority;
	__u32 state;
	__u32 holders;
	__u32 backend;
	__u64 suspend_count;
	__u64 suspended_ns;
	__u64 busy_ns;
	__u64 submitted;
	__u64 completed;
	__u64 created_ns;
	__u32 requested;
	__u32 ceiling;
};

/**
 * struct amdqp_list_queues - AMDQP_IOC_LIST_QUEUES
 * @queues: user pointer to an array of @count entries of @info_size bytes
 * @count: in: capacity; out: matching queues visible to the caller
 * @info_size: in: sizeof(struct amdqp_queue_info) the caller knows (>= 8);
 *	out: the kernel's size
 * @gpu_id: only this device, 0 for all
 * @pid: only this process (caller's namespace), 0 for all
 * @filled: out: entries written
 * @flags: zero
 *
 * Queues whose owner is not visible in the caller's pid namespace are left
 * out. The kernel fills @queues in passes of a few hundred entries, whatever
 * @count offers: a queue that exists for the whole call is listed exactly
 * once, one created or destroyed during a call that needs several passes
 * may or may not be.
 */
struct amdqp_list_queues {
	__u64 queues;
	__u32 count;
	__u32 info_size;
	__u32 gpu_id;
	__u32 pid;
	__u32 filled;
	__u32 flags;
};

/* amdqp_queue_ref.flags */
#define AMDQP_REF_BY_RING	_BITUL(0)	/* match @pid + @ring_va */

/**
 * struct amdqp_queue_ref - names one queue, carries its result back
 * @pid: owner in the caller's pid namespace
 * @gpu_id: device (ignored with AMDQP_REF_BY_RING)
 * @queue_id: queue (ignored with AMDQP_REF_BY_RING)
 * @flags: AMDQP_REF_*
 * @ring_va: ring base VA (only with AMDQP_REF_BY_RING)
 * @result: out: 0 or a negative errno for this entry
 * @state: out: AMDQP_QSTATE_* after the call (0 if not found)
 */
struct amdqp_queue_ref {
	__u32 pid;
	__u32 gpu_id;
	__u32 queue_id;
	__u32 flags;
	__u64 ring_va;
	__s32 result;
	__u32 state;
};

/**
 * struct amdqp_set_priority - AMDQP_IOC_SET_PRIORITY
 * @ref: the queue; @ref.result and @ref.state are written back
 * @priority: new priority
 * @flags: zero
 *
 * @priority is what the owner asks for; the queue's effective priority is
 * min(@priority, its ceiling). The owner (same effective uid) may lower
 * it freely and raise it up to the ceiling; raising it above the ceiling,
 * or any change to a queue of another user, needs CAP_SYS_NICE in the
 * initial user namespace (a priority above the ceiling stays effective as
 * given, until one at or below it is set).
 * -EPERM otherwise, -EINVAL for a @priority above AMDQP_PRIORITY_MAX.
 * The ioctl returns @ref.result.
 */
struct amdqp_set_priority {
	struct amdqp_queue_ref ref;
	__u32 priority;
	__u32 flags;
};

/**
 * struct amdqp_batch - AMDQP_IOC_SUSPEND and AMDQP_IOC_RESUME
 * @refs: user pointer to @count entries of @ref_size bytes
 * @count: 1..AMDQP_MAX_BATCH
 * @ref_size: sizeof(struct amdqp_queue_ref) the caller knows
 * @flags: zero
 * @grace_us: suspend: time in microseconds the firmware may take to preempt
 *	before it counts as a failure, 0 for the backend default; values
 *	above 255 are capped at 255 (the hardware's 8-bit wait count; on
 *	real GPUs one count is 1K GPU clock cycles, taken as 1 us); resume:
 *	zero
 * @done: out: entries whose result is 0
 * @pad: zero
 * @latency_ns: out: wall time spent in scheduler updates
 *
 * Suspensions belong to the fd: closing it resumes them. A queue is off the
 * hardware while any fd holds it. All entries of one device are handled by
 * one scheduler update under HWS. The ioctl fails for malformed requests,
 * and SUSPEND with EBUSY, nothing done and no entry written, when the
 * caller has neither CAP_SYS_NICE nor CAP_SYS_ADMIN and is over the
 * module's unpriv_suspend_rate (per second, after a burst of
 * unpriv_suspend_burst) on a device it would take a queue off: under HWS
 * every suspension preempts all queues of the device. Each (real uid,
 * device) pair has its own budget (since ABI 1.2; one per device before),
 * so one user spending theirs leaves other users' calls alone. Retry
 * later. Per-queue failures are
 * in each entry's @result:
 *  -ENOENT  no such queue (or it vanished during the call)
 *  -EPERM   not allowed to suspend it
 *  -EALREADY suspend: this fd already holds it; resume: this fd does not
 *  -EAGAIN  in watchdog cooldown (after max_suspend_ms, or once its
 *           budget of suspended time per starve_window_ms is spent)
 *  -ETIME   the firmware did not preempt in time (queue left running)
 *  -EBUSY   the backend could not act on the queue now
 *  -ENODEV  the device went away or was reset
 */
struct amdqp_batch {
	__u64 refs;
	__u32 count;
	__u32 ref_size;
	__u32 flags;
	__u32 grace_us;
	__u32 done;
	__u32 pad;
	__u64 latency_ns;
};

/**
 * struct amdqp_gpu_set - AMDQP_IOC_SUSPEND_BELOW and AMDQP_IOC_RESUME_ALL
 * @gpu_ids: user pointer to @num_gpus __u32 gpu ids; 0 = every device
 * @num_gpus: 0..AMDQP_MAX_BATCH
 * @priority: SUSPEND_BELOW: queues with an effective priority < this
 *	are suspended, 0..AMDQP_PRIORITY_MAX (since ABI 1.2; 16 was
 *	accepted before and is now -EINVAL); RESUME_ALL: zero
 * @flags: zero
 * @grace_us: as in struct amdqp_batch (SUSPEND_BELOW only)
 * @affected: out: queues this call suspended / resumed
 * @skipped: out: SUSPEND_BELOW: eligible queues left running (no
 *	permission, cooldown, firmware error); RESUME_ALL: failures
 * @pad: zero
 * @latency_ns: out: wall time spent in scheduler updates
 *
 * The policy's hot path: one call, one scheduler update per device.
 * Queues owned by the caller's own process are never suspended by
 * SUSPEND_BELOW; it takes at most AMDQP_MAX_BATCH queues per call, further
 * eligible ones are counted in @skipped. It fails with EBUSY, nothing
 * done, under the same rate limit as AMDQP_IOC_SUSPEND. RESUME_ALL drops
 * every suspension this fd holds on the devices; it is never limited.
 */
struct amdqp_gpu_set {
	__u64 gpu_ids;
	__u32 num_gpus;
	__u32 priority;
	__u32 flags;
	__u32 grace_us;
	__u32 affected;
	__u32 skipped;
	__u32 pad;
	__u32 reserved;
	__u64 latency_ns;
};

/* amdqp_ceiling.kind */
#define AMDQP_CEIL_UID		1	/* @id: a uid */
#define AMDQP_CEIL_GID		2	/* @id: a gid, primary or supplementary */
#define AMDQP_CEIL_CGROUP	3	/* @id: a cgroup v2 id (its inode number) */

/**
 * struct amdqp_ceiling - one entry of the ceiling table
 * @kind: AMDQP_CEIL_*
 * @level: SET, LIST: the highest priority an owner it matches may have,
 *	AMDQP_PRIORITY_MIN..MAX; CLEAR: zero
 * @id: uid or gid in the caller's user namespace, or a cgroup v2 id (what
 *	name_to_handle_at(2) or stat(2) gives for the cgroup's directory)
 * @result: out: 0 or a negative errno for this entry (SET, CLEAR)
 * @pad: zero
 *
 * A queue's ceiling is computed from its owner when it registers: the
 * highest @level among the entries matching the owner's effective uid,
 * any of its gids (effective and supplementary), or its cgroup v2 or any
 * ancestor of it; the module parameter default_ceiling when none matches.
 */
struct amdqp_ceiling {
	__u32 kind;
	__u32 level;
	__u64 id;
	__s32 result;
	__u32 pad;
};

/* amdqp_ceilings.op */
#define AMDQP_CEIL_OP_SET	1	/* add, or replace the level of, entries */
#define AMDQP_CEIL_OP_CLEAR	2	/* remove entries (by @kind and @id) */
#define AMDQP_CEIL_OP_LIST	3	/* copy the table into @entries */
#define AMDQP_CEIL_OP_FLUSH	4	/* remove every entry; @count zero */

/**
 * struct amdqp_ceilings - AMDQP_IOC_CEILINGS (since ABI 1.2)
 * @entries: user pointer to @count entries of @entry_size bytes
 * @count: SET, CLEAR: 1..AMDQP_MAX_BATCH entries; LIST: in: capacity,
 *	out: entries in the table; FLUSH: zero
 * @entry_size: in: sizeof(struct amdqp_ceiling) the caller knows (>= 24);
 *	out: the kernel's
 * @op: AMDQP_CEIL_OP_*
 * @flags: zero
 * @done: out: SET, CLEAR: entries whose @result is 0; LIST: entries written
 * @default_ceiling: out: the module's default_ceiling
 * @reclamped: out: queues whose effective priority this call changed
 * @reserved: zero
 *
 * The administrator's table of priority ceilings: an identity the kernel
 * holds for the queue's owner (uid, gid, cgroup), never one the tenant
 * chooses, maps to the highest priority its queues may have. Every op
 * needs CAP_SYS_ADMIN in the initial user namespace (-EPERM). After SET,
 * CLEAR or FLUSH every registered queue's ceiling is recomputed from its
 * owner's credentials and cgroup at registration, and its effective
 * priority re-clamped: min(requested, ceiling), so raising a ceiling gives
 * a clamped queue back what it asked for. Per-entry results of SET and
 * CLEAR:
 *  -EINVAL  unknown @kind, @level above AMDQP_PRIORITY_MAX (SET) or not
 *           zero (CLEAR), non-zero @pad or @result, an @id that is no
 *           valid uid/gid in the caller's user namespace
 *  -ENOENT  CLEAR: no such entry
 *  -ENOSPC  SET: the table holds AMDQP_MAX_CEILINGS entries already
 * An entry array of a size the kernel does not know fails the call as a
 * whole: shorter than 24 bytes or not a multiple of 8 with -EINVAL, a
 * longer entry whose unknown tail is not zero with -E2BIG.
 */
struct amdqp_ceilings {
	__u64 entries;
	__u32 count;
	__u32 entry_size;
	__u32 op;
	__u32 flags;
	__u32 done;
	__u32 default_ceiling;
	__u32 reclamped;
	__u32 reserved;
};

/* Largest CU mask AMDQP_IOC_CONFINE takes, in __u32 words (all XCCs). */
#define AMDQP_CU_MASK_MAX_WORDS	64

/* Largest number of targets (devices) one AMDQP_IOC_CONFINE names. */
#define AMDQP_MAX_CONFINE_GPUS	256

/**
 * struct amdqp_cu_target - one device of AMDQP_IOC_CONFINE
 * @gpu_id: to kernel: the device
 * @num_xcc: BELOW: to kernel, the device's XCC count; INFO: from kernel;
 *	RELEASE: zero
 * @cu_per_xcc: BELOW: to kernel, the device's CUs per XCC; INFO: from
 *	kernel, 0 when the device cannot be confined; RELEASE: zero
 * @mask_words: BELOW: to kernel, the __u32 words at @mask_ptr:
 *	@num_xcc * ((@cu_per_xcc + 31) / 32); INFO: from kernel; RELEASE: zero
 * @mask_ptr: BELOW: to kernel, user pointer to the CU mask: the words of
 *	XCC 0, then those of XCC 1, ...; bit i of word j of an XCC's words is
 *	CU 32 * j + i of that XCC. Every XCC needs at least one CU set and
 *	none at or past @cu_per_xcc. INFO, RELEASE: zero
 * @result: from kernel: 0, or a negative errno for this device (INFO:
 *	-ENODEV no such device, -EOPNOTSUPP it cannot be confined; BELOW,
 *	RELEASE: -ENODEV the device went away during the call)
 * @affected: from kernel: BELOW, queues whose confinement by this fd the
 *	call changed (confined, new mask, or lifted because no longer below
 *	@priority); RELEASE, confinements lifted cleanly
 * @skipped: from kernel: BELOW, eligible queues left as they were (no
 *	permission, watchdog cooldown, firmware error, past the batch);
 *	RELEASE, lifts the firmware refused (the watchdog retries them)
 * @pad: zero
 */
struct amdqp_cu_target {
	__u32 gpu_id;
	__u32 num_xcc;
	__u32 cu_per_xcc;
	__u32 mask_words;
	__u64 mask_ptr;
	__s32 result;
	__u32 affected;
	__u32 skipped;
	__u32 pad;
};

/* amdqp_confine.op */
#define AMDQP_CONFINE_OP_INFO		1	/* fill in each target's geometry */
#define AMDQP_CONFINE_OP_BELOW		2	/* confine queues below @priority */
#define AMDQP_CONFINE_OP_RELEASE	3	/* lift this fd's confinements */

/**
 * struct amdqp_confine - AMDQP_IOC_CONFINE (since ABI 1.3)
 * @targets: user pointer to @count struct amdqp_cu_target of @target_size
 *	bytes
 * @count: INFO, BELOW: 1..AMDQP_MAX_CONFINE_GPUS; RELEASE: 0 (every
 *	device) or 1..AMDQP_MAX_CONFINE_GPUS
 * @target_size: sizeof(struct amdqp_cu_target) the caller knows (>= 40)
 * @op: AMDQP_CONFINE_OP_*
 * @priority: BELOW: queues with an effective priority < this are
 *	confined, 0..AMDQP_PRIORITY_MAX; else zero
 * @flags: zero
 * @grace_us: BELOW, RELEASE: preemption deadline of the scheduler update,
 *	as in struct amdqp_batch; INFO: zero
 * @done: out: targets whose @result is 0
 * @affected: out: sum of the targets' @affected
 * @skipped: out: sum of the targets' @skipped
 * @pad: zero
 * @latency_ns: out: wall time spent in scheduler updates
 *
 * The gentler sibling of SUSPEND_BELOW: instead of taking the queues
 * below @priority off the hardware, BELOW restricts them to the CUs of
 * each target's mask, for as long as this fd holds the confinement
 * (closing it lifts them all; RELEASE lifts them earlier). After BELOW,
 * this fd confines on each target device exactly the eligible queues
 * below @priority, to that target's mask: a second BELOW changes the
 * mask of the queues it already confines and lifts the confinement of
 * those no longer below @priority. A queue runs on the intersection of
 * the mask its owner set (AMDKFD_IOC_SET_CU_MASK) and the confinement
 * of every fd, XCC by XCC; where that would leave an XCC without a CU,
 * the newer confinement wins over the older ones and any confinement
 * over the owner's mask. When the last confinement is lifted the queue
 * gets back exactly the mask its owner set, including a change the
 * owner made meanwhile. A suspended queue stays off the hardware
 * (suspension wins) and comes back confined. Eligibility, permissions,
 * the rate limit (EBUSY) and the watchdog (max_confine_ms, cooldown_ms)
 * work as for SUSPEND_BELOW; every target is checked before anything is
 * done, and a malformed one fails the whole call with EINVAL (ENODEV for
 * an unknown device, EOPNOTSUPP for one that cannot be confined).
 */
struct amdqp_confine {
	__u64 targets;
	__u32 count;
	__u32 target_size;
	__u32 op;
	__u32 priority;
	__u32 flags;
	__u32 grace_us;
	__u32 done;
	__u32 affected;
	__u32 skipped;
	__u32 pad;
	__u64 latency_ns;
};

/* Event types; bit (1 << type) in amdqp_event_mask.mask selects one. */
#define AMDQP_EVENT_OVERFLOW		0	/* @data: events lost */
#define AMDQP_EVENT_QUEUE_CREATED	1	/* @data: priority */
#define AMDQP_EVENT_QUEUE_DESTROYED	2
#define AMDQP_EVENT_PROCESS_EXIT	3
#define AMDQP_EVENT_GPU_RESET		4
#define AMDQP_EVENT_PREEMPT_FAILED	5	/* @error: -ETIME */
#define AMDQP_EVENT_WATCHDOG		6	/* @data: ns of this suspension */
#define AMDQP_EVENT_DEVICE_ADDED	7
#define AMDQP_EVENT_DEVICE_REMOVED	8
#define AMDQP_EVENT_PRIORITY		9	/* @data: new effective priority */
#define AMDQP_EVENT_CONFINE_WATCHDOG	10	/* @data: ns of this confinement */
#define AMDQP_EVENT_MAX			10

#define AMDQP_EVENT_MASK_ALL	((2ULL << AMDQP_EVENT_MAX) - 1)

/**
 * struct amdqp_event - a record read(2) returns
 * @type: AMDQP_EVENT_*
 * @size: sizeof(struct amdqp_event): skip records by this size
 * @timestamp_ns: CLOCK_MONOTONIC
 * @pid: process concerned in the reader's pid namespace, 0 if none/hidden
 * @gpu_id: device concerned, 0 if none
 * @queue_id: queue concerned, 0 if none
 * @error: negative errno for failures, else 0
 * @data: type specific, see above
 *
 * read() returns whole records only (-EINVAL if the buffer cannot hold one),
 * blocks unless O_NONBLOCK (-EAGAIN), and poll() reports EPOLLIN. When the
 * per-fd buffer fills, the oldest records are kept and an
 * AMDQP_EVENT_OVERFLOW record tells how many were dropped.
 */
struct amdqp_event {
	__u32 type;
	__u32 size;
	__u64 timestamp_ns;
	__u32 pid;
	__u32 gpu_id;
	__u32 queue_id;
	__s32 error;
	__u64 data;
};

/**
 * struct amdqp_event_mask - AMDQP_IOC_SET_EVENT_MASK
 * @mask: bits (1 << AMDQP_EVENT_*) to receive; 0 turns events off and
 *	drops queued records. OVERFLOW is always on when any bit is set.
 */
struct amdqp_event_mask {
	__u64 mask;
};

#define AMDQP_IOC_MAGIC	0xB9

#define AMDQP_IOC_GET_VERSION	  _IOR(AMDQP_IOC_MAGIC, 0x00, struct amdqp_version)
#define AMDQP_IOC_LIST_DEVICES	  _IOWR(AMDQP_IOC_MAGIC, 0x01, struct amdqp_list_devices)
#define AMDQP_IOC_LIST_QUEUES	  _IOWR(AMDQP_IOC_MAGIC, 0x02, struct amdqp_list_queues)
#define AMDQP_IOC_SET_PRIORITY	  _IOWR(AMDQP_IOC_MAGIC, 0x03, struct amdqp_set_priority)
#define AMDQP_IOC_SUSPEND	  _IOWR(AMDQP_IOC_MAGIC, 0x04, struct amdqp_batch)
#define AMDQP_IOC_RESUME	  _IOWR(AMDQP_IOC_MAGIC, 0x05, struct amdqp_batch)
#define AMDQP_IOC_SUSPEND_BELOW	  _IOWR(AMDQP_IOC_MAGIC, 0x06, struct amdqp_gpu_set)
#define AMDQP_IOC_RESUME_ALL	  _IOWR(AMDQP_IOC_MAGIC, 0x07, struct amdqp_gpu_set)
#define AMDQP_IOC_SET_EVENT_MASK  _IOW(AMDQP_IOC_MAGIC, 0x08, struct amdqp_event_mask)
#define AMDQP_IOC_CEILINGS	  _IOWR(AMDQP_IOC_MAGIC, 0x09, struct amdqp_ceilings)
#define AMDQP_IOC_CONFINE	  _IOWR(AMDQP_IOC_MAGIC, 0x0a, struct amdqp_confine)

#endif /* _UAPI_LINUX_AMDQP_H */
