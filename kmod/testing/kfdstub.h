/* SPDX-License-Identifier: GPL-2.0 */
/*
 * amdqp_kfdstub: a stand-in for amdgpu's queue control glue (the
 * AMDKFD_QCTL symbols of kfd-glue/include/amdkfd_qctl.h), with fake
 * devices, processes and queues that tests create and break through
 * debugfs. It lets amdqp's kfd backend run where there is no AMD GPU.
 *
 * The model follows kfd-glue/patches/linux-6.12: one sticky
 * queue-control flag per queue, is_active recomputed from it and from
 * eviction, one runlist update per device and batch under HWS, one
 * request per changed queue under MES, process device data that a
 * per-queue reset marks unusable (has_reset_queue), and (patch 0005) the
 * owner's CU mask kept apart from an imposed one, the MQD carrying their
 * combination.
 *
 * Locking, outermost first:
 *  kstub_clients_sem  the client list; read while a client is called.
 *  kstub_lock         devices, processes, queues, fault knobs. Never held
 *                     while a client is called, so a client may put its
 *                     last queue reference from anywhere.
 */
#ifndef KFDSTUB_H
#define KFDSTUB_H

#include <linux/atomic.h>
#include <linux/kref.h>
#include <linux/list.h>
#include <linux/mutex.h>
#include <linux/rwsem.h>
#include <linux/types.h>

#include "amdkfd_qctl.h"

#define KSTUB_MAX_DEVS		32
#define KSTUB_MAX_BATCH		4096
/* Largest node-wide CU mask, in u32 words (AMDQP_CU_MASK_MAX_WORDS). */
#define KSTUB_CU_WORDS		64

/* How a device-wide failure leaves the batch (fail_dev MODE). */
enum kstub_fail_mode {
	KSTUB_ROLLBACK_ALL,	/* every change undone: the glue's contract */
	KSTUB_ROLLBACK_HW,	/* only hardware changes undone (glue v1) */
	KSTUB_KEEP_PARTIAL,	/* the first half of the changes stay */
};

struct kstub_dev {
	struct list_head node;		/* kstub_devs */
	unsigned int index;		/* bit in kstub_proc.reset_mask */
	u32 gpu_id;
	u32 sched;			/* enum kfd_qctl_sched */
	u32 num_xcc;
	u32 cu_per_xcc;			/* 0: cannot take CU masks */
	bool removed;
	/* fault injection */
	int fail_err;			/* device-wide failure ... */
	u32 fail_count;			/* ... for this many calls */
	u32 fail_mode;			/* enum kstub_fail_mode */
	u32 delay_ms;			/* per call, no lock held */
	u64 reset_proc;			/* proc_id whose queues the next call resets */
	u64 fw_ops;			/* runlist updates + MES requests */
};

struct kstub_proc {
	struct list_head node;		/* kstub_procs, until released */
	struct kref ref;		/* the table (until exit), each handle */
	struct list_head queues;	/* kstub_queue.node */
	struct pid *pid;		/* recorded at creation */
	u64 id;				/* proc_id */
	unsigned long dev_mask;		/* devices it had queues on */
	unsigned long reset_mask;	/* has_reset_queue, per device index */
	atomic_t handles;		/* live kfd_qctl_queue references */
	bool exited;
	bool create_suspended;
};

struct kstub_queue {
	struct list_head node;		/* kstub_proc.queues */
	struct kstub_dev *dev;
	u32 queue_id;
	u32 type;
	u32 priority;
	u64 ring_base;
	u64 ring_size;
	bool ctl_suspended;
	bool evicted;
	bool active;			/* mapped: !ctl_suspended && !evicted */
	bool destroyed;
	int fail_err;			/* per-entry failure ... */
	u32 fail_count;			/* ... for this many calls */
	/*
	 * CU masks, in the layout of AMDKFD_IOC_SET_CU_MASK (XCCs
	 * interleaved): the owner's (own_bits 0: never set, all CUs), the
	 * imposed one (has_imp), and what the MQD carries (mqd_cu),
	 * rewritten only where the glue rewrites it (mqd_writes).
	 */
	u32 own_cu[KSTUB_CU_WORDS];
	u32 own_bits;
	u32 imp_cu[KSTUB_CU_WORDS];
	bool has_imp;
	u32 mqd_cu[KSTUB_CU_WORDS];
	u32 mqd_writes;
};

/* What struct kfd_qctl_queue is here: it pins the process, not the queue. */
struct kfd_qctl_queue {
	struct kref ref;
	struct kstub_proc *proc;
	u32 gpu_id;
	u32 queue_id;
};

struct kstub_stats {
	atomic64_t calls[16];		/* enum kstub_call */
	atomic64_t violations;		/* interface contract broken by a client */
	atomic64_t handles;		/* live kfd_qctl_queue references */
	atomic64_t procs_released;
	atomic64_t released_on_unregister;
	u32 grace_last;
	u32 grace_min;			/* of values other than the default */
	u32 grace_max;
	u64 grace_zero;			/* 0: an infinite grace on hardware */
	u64 grace_default;
	u64 grace_count;
};

enum kstub_call {
	KSTUB_CALL_REGISTER,
	KSTUB_CALL_UNREGISTER,
	KSTUB_CALL_WALK_DEVICES,
	KSTUB_CALL_WALK_QUEUES,
	KSTUB_CALL_LOOKUP,
	KSTUB_CALL_INFO,
	KSTUB_CALL_SUSPEND,
	KSTUB_CALL_RESUME,
	KSTUB_CALL_CREATE_SUSPENDED,
	KSTUB_CALL_GET,
	KSTUB_CALL_PUT,
	KSTUB_CALL_SET_CU_MASK,
	KSTUB_CALL_NR,
};

extern struct mutex kstub_lock;
extern struct rw_semaphore kstub_clients_sem;
extern struct list_head kstub_devs;
extern struct list_head kstub_procs;
extern struct list_head kstub_clients;
extern struct kstub_stats kstub_stats;
extern bool kstub_release_on_unregister;
extern unsigned int kstub_min_api;
extern bool kstub_cu_masks;

/* kfdstub_api.c */
void kstub_notify(const struct kfd_qctl_event *ev);
void kstub_detach_all(void);
struct kfd_qctl_queue *kstub_handle_new(struct kstub_proc *p,
					struct kstub_queue *q);
void kstub_fill_info(struct kstub_proc *p, struct kstub_queue *q,
		     struct kfd_qctl_queue_info *info);
void kstub_proc_put(struct kstub_proc *p);
void kstub_queue_update_active(struct kstub_queue *q);
unsigned int kstub_release_all(struct kstub_dev *only);
u32 kstub_cu_per_xcc(const struct kstub_dev *d);
void kstub_queue_write_cu(struct kstub_queue *q);
unsigned int kstub_lift_all_cu(struct kstub_dev *only);

/* kfdstub_main.c */
struct seq_file;
void kstub_log(const char *fmt, ...) __printf(1, 2);
int kstub_log_show(struct seq_file *m, void *unused);
void kstub_log_clear(void);

/* kfdstub_ctl.c */
int kstub_debugfs_init(void);
void kstub_debugfs_exit(void);
void kstub_free_all(void);

#endif /* KFDSTUB_H */
