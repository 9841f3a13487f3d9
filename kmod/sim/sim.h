/* SPDX-License-Identifier: GPL-2.0 */
/*
 * amdqp_sim internals: simulated GPUs whose queues execute timed work items
 * on a fixed number of compute slots, behind a scheduler firmware model
 * (HWS runlist or MES) that amdqp suspends and resumes queues through.
 *
 * Locking, outermost first:
 *  - sim_devs_lock (mutex): the device list and device creation/removal.
 *  - sim_dev.qlock (mutex): queue creation and destruction on a device,
 *    and device removal; keeps amdqp_queue_register/unregister in order.
 *  - sim_dev.fw_lock (mutex): one firmware operation at a time per device
 *    (amdqp serialises its own calls; this makes the model self-contained).
 *  - sim_dev.lock (spinlock): the executor state of the device and all of
 *    its queues (slots, running items, pending work, counters).
 *  - sim_file.lock (mutex): the queues of one fd; also taken by mmap(2),
 *    inside the caller's mmap_lock, so nothing that faults on user memory
 *    may run under it.
 *
 * A user-mode queue's ring and control page (struct sim_ring) are shared
 * with the owner; the kernel reads and writes them only under
 * sim_dev.lock, through its own mapping, and never trusts what it reads.
 */
#ifndef AMDQP_SIM_H
#define AMDQP_SIM_H

#include <linux/atomic.h>
#include <linux/bitmap.h>
#include <linux/bits.h>
#include <linux/kref.h>
#include <linux/list.h>
#include <linux/mutex.h>
#include <linux/spinlock.h>
#include <linux/time64.h>
#include <linux/wait.h>

#include "amdqp_backend.h"

struct amdqp_device;
struct amdqp_queue;
struct dentry;
struct task_struct;
struct vm_area_struct;

/* Completion times remembered per queue, for AMDQP_SIM_IOC_WAIT. */
#define SIM_DONE_HISTORY	256

/* Compute slots a device may have. */
#define SIM_MAX_SLOTS		1024

/* Longest work item, from SUBMIT or an AQL packet. */
#define SIM_MAX_DURATION_NS	(10ULL * NSEC_PER_SEC)

/* Why a queue is off the hardware (sim_queue.off): independent reasons. */
#define SIM_OFF_AMDQP		BIT(0)	/* amdqp suspended it */
#define SIM_OFF_OWNER		BIT(1)	/* UPDATE_QUEUE, queue_percentage 0 */
#define SIM_OFF_UPDATE		BIT(2)	/* MES: removed while its MQD changes */

struct sim_work {
	struct list_head node;
	u64 duration_ns;
	u32 width;
	u32 count;		/* items left in this submission */
	bool barrier;		/* an AQL barrier: no slots, no time */
};

/*
 * The memory of a user-mode queue: the ring of AQL packets, then the
 * control page (struct amdqp_sim_uq_ctl). It outlives its queue while
 * the owner still has it mapped.
 */
struct sim_ring {
	struct kref ref;		/* the queue's and each mapping's */
	void *buf;			/* vmalloc_user(), @size + control page */
	u64 va;				/* where the owner must map it */
	u64 size;			/* ring bytes */
	u64 mmap_offset;		/* cookie; set once, under sim_file.lock */
	u32 nslots;			/* packets, a power of two */
};

/* Work items the executor allocates before it takes sim_dev.lock. */
struct sim_stash {
	struct list_head free;		/* struct sim_work.node */
	unsigned int n;
};

struct sim_queue {
	struct kref ref;		/* the creating fd's and amdqp's */
	struct list_head dev_node;	/* sim_dev.queues; sim_dev.lock */
	struct list_head file_node;	/* sim_file.queues; sim_file.lock */
	struct sim_dev *sd;
	struct amdqp_queue *aq;		/* NULL: not registered with amdqp */
	struct sim_ring *uq;		/* user-mode queues only */
	struct pid *owner;
	u32 queue_id;
	u32 priority;
	/* sim_dev.lock for everything below */
	struct list_head uq_node;	/* sim_dev.uqueues, while alive */
	struct list_head work;		/* struct sim_work, in order */
	u64 wptr;			/* items submitted */
	u64 rptr;			/* items completed */
	u64 lost_from;			/* items (lost_from, lost_upto] */
	u64 lost_upto;			/* were thrown away by a reset */
	bool mapped;			/* on the virtual hardware: !off */
	u32 off;			/* SIM_OFF_*; changed by firmware ops */
	bool destroyed;
	bool running;			/* head item holds slots */
	u32 run_width;			/* the slots set in @run_slots */
	u32 run_full;			/* the slots it asked for */
	unsigned long run_slots[BITS_TO_LONGS(SIM_MAX_SLOTS)];
	/*
	 * CU masks. @cu_mask is what its items may occupy (@cu_slots
	 * slots): the owner's @own_mask (SET_CU_MASK), ANDed XCC by XCC
	 * with amdqp's @amdqp_mask while @amdqp_confined (AMDQP_IOC_CONFINE),
	 * amdqp's alone in an XCC where they share no slot. A change waits
	 * in the *_next masks for the queue to be off the hardware (or the
	 * runlist down) and is taken by sim_queue_take_cu_mask_locked().
	 */
	unsigned long cu_mask[BITS_TO_LONGS(SIM_MAX_SLOTS)];
	u32 cu_slots;
	unsigned long own_mask[BITS_TO_LONGS(SIM_MAX_SLOTS)];
	bool cu_mask_pending;		/* @cu_mask_next, at the next remap */
	unsigned long cu_mask_next[BITS_TO_LONGS(SIM_MAX_SLOTS)];
	unsigned long amdqp_mask[BITS_TO_LONGS(SIM_MAX_SLOTS)];
	bool amdqp_confined;
	bool amdqp_pending;		/* @amdqp_next(_on), at the next remap */
	bool amdqp_next_on;
	unsigned long amdqp_next[BITS_TO_LONGS(SIM_MAX_SLOTS)];
	u64 run_start;
	u64 run_end;
	u64 remaining_ns;		/* head item's time left, 0 = fresh */
	u64 head_since;			/* when the head item became ready */
	u64 busy_ns;
	u64 preemptions;
	u64 done_ns[SIM_DONE_HISTORY];	/* by seqno % SIM_DONE_HISTORY */
	/* user-mode queues: ring indices (AQL packet ids) */
	u64 uq_fetch;			/* next packet to take up */
	u64 uq_done;			/* packets completed: read_index */
	u64 uq_db_seen;			/* doorbell value seen last */
	bool uq_stopped;		/* a bad packet stopped the queue */
	wait_queue_head_t done_wait;
};

struct sim_dev {
	struct kref ref;		/* the device list's and each queue's */
	struct list_head node;		/* sim_devs; sim_devs_lock */
	struct mutex qlock;		/* see the top of this file */
	bool removed;			/* qlock */
	struct amdqp_device *adev;
	struct dentry *dir;
	struct task_struct *thread;
	struct mutex fw_lock;		/* see the top of this file */
	spinlock_t lock;		/* see the top of this file */
	wait_queue_head_t kick_wait;
	struct list_head queues;	/* sim_queue.dev_node */
	struct list_head uqueues;	/* sim_queue.uq_node; lock */
	u32 gpu_id;
	u32 mode;			/* AMDQP_SCHED_* */
	u32 num_xcc;
	u32 next_queue_id;		/* lock */
	u64 next_ring_va;		/* lock */
	u32 free_slots;			/* lock */
	unsigned long busy_slots[BITS_TO_LONGS(SIM_MAX_SLOTS)];	/* lock */
	unsigned long scratch[BITS_TO_LONGS(SIM_MAX_SLOTS)];	/* lock */
	bool kick;			/* lock */
	bool updating;			/* lock: runlist update, no dispatch */
	u64 reset_gen;			/* lock */
	u64 db_active_ns;		/* lock: a doorbell moved, or a user-mode
					 * queue came (back) on the hardware
					 */
	struct amdqp_dev_counters cnt;	/* lock */
	/* knobs (debugfs), read with READ_ONCE */
	u32 slots;
	u32 unmap_latency_us;
	u32 map_latency_us;
	u32 cwsr_save_us;
	u32 cwsr_restore_us;
	u32 preempt_timeout_ms;
	u32 doorbell_poll_us;
	bool amdqp_managed;		/* register new queues with amdqp */
	atomic_t fail_preempt;		/* next N unmaps time out */
	atomic_t fail_busy;		/* next N queue operations -EBUSY */
};

/* sim_gpu.c: the executor and the firmware model */
int sim_gpu_start(struct sim_dev *sd);
void sim_gpu_stop(struct sim_dev *sd);
void sim_gpu_kick(struct sim_dev *sd);
void sim_gpu_doorbell(struct sim_dev *sd);
extern const struct amdqp_backend_ops sim_backend_ops;
void sim_dev_reset(struct sim_dev *sd);
void sim_queue_discard_locked(struct sim_queue *sq);
int sim_queue_update(struct sim_queue *sq, bool off, u32 priority);
void sim_queue_init_cu_mask(struct sim_queue *sq);
int sim_queue_set_cu_mask(struct sim_queue *sq, const unsigned long *mask);
void sim_queue_put(struct sim_queue *sq);
void sim_queue_destroy(struct sim_queue *sq);

/* sim_uq.c: user-mode queues (ring, mmap, doorbell polling) */
struct sim_ring *sim_ring_alloc(u64 va, u64 size);
void sim_ring_get(struct sim_ring *r);
void sim_ring_put(struct sim_ring *r);
int sim_ring_mmap(struct sim_ring *r, struct vm_area_struct *vma);
void sim_stash_init(struct sim_stash *st);
bool sim_stash_fill(struct sim_stash *st);
void sim_stash_free(struct sim_stash *st);
bool sim_uq_poll_locked(struct sim_dev *sd, struct sim_stash *st, u64 now);
u64 sim_uq_next_poll_locked(struct sim_dev *sd, u64 now);
void sim_uq_complete_locked(struct sim_queue *sq, u64 when);
void sim_uq_discard_locked(struct sim_queue *sq);

/* sim_main.c: devices */
struct sim_dev *sim_dev_find_get(u32 gpu_id);
void sim_dev_put(struct sim_dev *sd);

/* sim_chardev.c: /dev/amdqp_sim */
int sim_chardev_init(void);
void sim_chardev_exit(void);

#endif /* AMDQP_SIM_H */
