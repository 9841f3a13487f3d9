/* SPDX-License-Identifier: MIT */
/*
 * libamdqp C API: list, prioritise, suspend and resume AMD GPU hardware
 * queues through /dev/amdqp, and read its event stream.
 *
 * Stability: this header is the library's stable ABI. Types are the
 * library's own (not the kernel's uapi structures), so the kernel ABI can
 * grow without breaking C callers:
 *  - single structures start with a @size field the caller sets to
 *    sizeof(the structure it knows) before the call;
 *  - arrays are passed with their element size (elem_size), and the
 *    library writes each element's @size with the bytes it filled.
 * New fields are only ever appended. Names differ from the uapi's
 * (linux/amdqp.h) so that C++ code may include both.
 *
 * Errors: functions return AMDQP_OK (0) or a non-negative count on
 * success, a negative AMDQP_ERR_* on failure. amdqp_last_error() then
 * holds a message for a person, naming what to do ("load the module...",
 * "needs CAP_SYS_NICE..."), valid until the next failing call in the same
 * thread. A handle may be shared between threads when the caller
 * serialises calls on it.
 */
#ifndef AMDQP_AMDQP_H
#define AMDQP_AMDQP_H

#include <stddef.h>
#include <stdint.h>

#include <amdqp/export.h>
#include <amdqp/hint.h>

#ifdef __cplusplus
extern "C" {
#endif

/* Status codes. */
enum amdqp_status {
    AMDQP_OK = 0,
    AMDQP_ERR_NO_MODULE = -1,    /* /dev/amdqp missing: module not loaded */
    AMDQP_ERR_PERMISSION = -2,   /* a capability or ownership is missing */
    AMDQP_ERR_NO_GPU = -3,       /* unknown GPU id */
    AMDQP_ERR_NO_QUEUE = -4,     /* no such queue (visible to the caller) */
    AMDQP_ERR_INVALID = -5,      /* bad argument */
    AMDQP_ERR_ABI_MISMATCH = -6, /* the kernel speaks another ABI major */
    AMDQP_ERR_BUSY = -7,         /* try again later (cooldown, firmware) */
    AMDQP_ERR_SYSTEM = -8,       /* any other system error, see errno */
};

/* Priorities (KFD's): 0 lowest, 15 highest, and the three named levels. */
#define AMDQP_PRIO_MIN 0
#define AMDQP_PRIO_MAX 15
#define AMDQP_PRIO_LOW 2
#define AMDQP_PRIO_NORMAL 7
#define AMDQP_PRIO_HIGH 12
/* amdqp_suspend_below(): suspend every priority. */
#define AMDQP_PRIO_ALL 16

/* amdqp_version_info.backends, amdqp_gpu.backend */
#define AMDQP_GPU_BACKEND_SIM 1u
#define AMDQP_GPU_BACKEND_KFD 2u

/* amdqp_gpu.sched_mode */
#define AMDQP_GPU_SCHED_HWS 1u /* one runlist update maps/unmaps all */
#define AMDQP_GPU_SCHED_MES 2u /* add/remove per queue */

/* amdqp_queue.state, amdqp_ref.state */
#define AMDQP_QUEUE_SUSPENDED 1u /* off the hardware by amdqp */
#define AMDQP_QUEUE_HELD 2u      /* this handle holds a suspension */
#define AMDQP_QUEUE_COOLDOWN 4u  /* watchdog resumed it; immune for now */

/* amdqp_event_record.type; bit (1 << type) selects it in a mask. */
#define AMDQP_EV_OVERFLOW 0      /* data: records lost */
#define AMDQP_EV_QUEUE_CREATED 1 /* data: priority */
#define AMDQP_EV_QUEUE_DESTROYED 2
#define AMDQP_EV_PROCESS_EXIT 3
#define AMDQP_EV_GPU_RESET 4
#define AMDQP_EV_PREEMPT_FAILED 5 /* error: -ETIME */
#define AMDQP_EV_WATCHDOG 6       /* data: ns it was suspended */
#define AMDQP_EV_DEVICE_ADDED 7   /* data: sched mode */
#define AMDQP_EV_DEVICE_REMOVED 8
#define AMDQP_EV_PRIORITY 9          /* data: new priority */
#define AMDQP_EV_CONFINE_WATCHDOG 10 /* data: ns it was confined (ABI 1.3) */
#define AMDQP_EV_MASK_ALL 0x7ffull

/** An open /dev/amdqp. Suspensions belong to the handle: closing it resumes them. */
typedef struct amdqp_handle amdqp_t;

/**
 * struct amdqp_version_info - amdqp_get_version()
 * @size: in: sizeof(amdqp_version_info_t)
 * @abi_major: kernel ABI major (the library refuses another one at open)
 * @abi_minor: kernel ABI minor
 * @backends: AMDQP_GPU_BACKEND_* bound now
 * @num_devices: devices registered now
 * @max_batch: most entries one suspend/resume call hands the kernel
 * @priority_max: highest priority the kernel accepts
 * @features: kernel feature bits (0 today)
 */
typedef struct amdqp_version_info {
    uint32_t size;
    uint32_t abi_major;
    uint32_t abi_minor;
    uint32_t backends;
    uint32_t num_devices;
    uint32_t max_batch;
    uint32_t priority_max;
    uint32_t pad;
    uint64_t features;
} amdqp_version_info_t;

/**
 * struct amdqp_gpu - one device (a GPU partition, or a sim device)
 * @size: out: bytes the library filled
 * @gpu_id: KFD gpu_id, or the sim device's id
 * @backend: AMDQP_GPU_BACKEND_*
 * @sched_mode: AMDQP_GPU_SCHED_*
 * @num_xcc: XCC instances
 * @num_queues: user queues registered on it
 * @num_suspended: of those, off the hardware by amdqp
 * @sched_updates..@resets: firmware counters, see Documentation/ioctl.rst
 */
typedef struct amdqp_gpu {
    uint32_t size;
    uint32_t gpu_id;
    uint32_t backend;
    uint32_t sched_mode;
    uint32_t num_xcc;
    uint32_t num_queues;
    uint32_t num_suspended;
    uint32_t pad;
    uint64_t sched_updates;
    uint64_t unmap_packets;
    uint64_t map_packets;
    uint64_t preemptions;
    uint64_t preempt_failures;
    uint64_t resets;
} amdqp_gpu_t;

/**
 * struct amdqp_queue - one hardware queue
 * @size: out: bytes the library filled
 * @pid: owner, in the caller's pid namespace
 * @uid: owner's effective uid
 * @gpu_id, @queue_id: the queue's identity on its device
 * @ring_va: ring base address (the HSA queue's base_address)
 * @ring_size: bytes
 * @priority: 0..15
 * @state: AMDQP_QUEUE_* bits
 * @holders: handles holding it suspended
 * @backend: AMDQP_GPU_BACKEND_*
 * @suspend_count: times taken off the hardware by amdqp
 * @suspended_ns: time spent off the hardware, the current stretch included
 * @busy_ns, @submitted, @completed: if the backend knows, else 0
 * @created_ns: CLOCK_MONOTONIC time of registration
 */
typedef struct amdqp_queue {
    uint32_t size;
    uint32_t pid;
    uint32_t uid;
    uint32_t gpu_id;
    uint32_t queue_id;
    uint32_t priority;
    uint64_t ring_va;
    uint64_t ring_size;
    uint32_t state;
    uint32_t holders;
    uint32_t backend;
    uint32_t pad;
    uint64_t suspend_count;
    uint64_t suspended_ns;
    uint64_t busy_ns;
    uint64_t submitted;
    uint64_t completed;
    uint64_t created_ns;
} amdqp_queue_t;

/**
 * struct amdqp_ref - names a queue in set_priority/suspend/resume and
 *	carries that queue's outcome back
 * @pid: owner, in the caller's pid namespace
 * @gpu_id, @queue_id: the queue (unless @by_ring)
 * @by_ring: non-zero: match @pid + @ring_va instead
 * @ring_va: ring base address
 * @status: out: AMDQP_OK or AMDQP_ERR_* for this entry
 * @error: out: 0 or the kernel's negative errno for this entry
 * @state: out: AMDQP_QUEUE_* after the call
 * @pad: zero
 */
typedef struct amdqp_ref {
    uint32_t pid;
    uint32_t gpu_id;
    uint32_t queue_id;
    uint32_t by_ring;
    uint64_t ring_va;
    int32_t status;
    int32_t error;
    uint32_t state;
    uint32_t pad;
} amdqp_ref_t;

/**
 * struct amdqp_batch_stats - optional outcome of the batch calls
 * @size: in: sizeof(amdqp_batch_stats_t)
 * @done: entries (suspend/resume) or queues (suspend_below/resume_all) done
 * @skipped: suspend_below: eligible queues left running; resume_all:
 *	resumes the firmware refused; suspend/resume: entries that failed
 * @latency_ns: wall time the kernel spent in scheduler updates
 */
typedef struct amdqp_batch_stats {
    uint32_t size;
    uint32_t done;
    uint32_t skipped;
    uint32_t pad;
    uint64_t latency_ns;
} amdqp_batch_stats_t;

/**
 * struct amdqp_confine_gpu - one GPU of a CU-mask confinement (ABI 1.3)
 * @gpu_id: in
 * @num_xcc: amdqp_cu_geometry(): out; amdqp_confine_below(): in, as it gave
 * @cu_per_xcc: the same; 0 when the GPU cannot be confined
 * @mask_words: the same: uint32_t words of a mask, num_xcc * ceil(cu_per_xcc / 32)
 * @status: amdqp_cu_geometry(): out, AMDQP_OK, AMDQP_ERR_NO_GPU, or
 *	AMDQP_ERR_INVALID when the GPU cannot be confined
 * @pad: zero
 * @mask: amdqp_confine_below(): in, @mask_words words, XCC 0's first; bit
 *	i of word j of an XCC's words is that XCC's CU 32 * j + i. Every XCC
 *	needs a CU; see amdqp_cu_range()
 */
typedef struct amdqp_confine_gpu {
    uint32_t gpu_id;
    uint32_t num_xcc;
    uint32_t cu_per_xcc;
    uint32_t mask_words;
    int32_t status;
    uint32_t pad;
    const uint32_t* mask;
} amdqp_confine_gpu_t;

/**
 * struct amdqp_event_record - one event
 * @size: out: bytes the library filled
 * @type: AMDQP_EV_*
 * @timestamp_ns: CLOCK_MONOTONIC
 * @pid, @gpu_id, @queue_id: what it concerns, 0 if none
 * @error: negative errno for failures, else 0
 * @data: type specific (see AMDQP_EV_*)
 */
typedef struct amdqp_event_record {
    uint32_t size;
    uint32_t type;
    uint64_t timestamp_ns;
    uint32_t pid;
    uint32_t gpu_id;
    uint32_t queue_id;
    int32_t error;
    uint64_t data;
} amdqp_event_record_t;

/* Library version string ("MAJOR.MINOR.PATCH"). */
AMDQP_API const char* amdqp_library_version(void);

/* A fixed message for a status code. */
AMDQP_API const char* amdqp_strerror(int status);
/* The message of the calling thread's last failure ("" if none). */
AMDQP_API const char* amdqp_last_error(void);
/* The errno behind the calling thread's last failure (0 if none). */
AMDQP_API int amdqp_last_errno(void);

/*
 * Opens $AMDQP_DEVICE, else /dev/amdqp, and checks the kernel's ABI major.
 * *out is NULL on failure.
 */
AMDQP_API int amdqp_open(amdqp_t** out);
AMDQP_API int amdqp_open_path(const char* path, amdqp_t** out);
/* Closes the handle; the kernel resumes every queue it held. NULL is fine. */
AMDQP_API void amdqp_close(amdqp_t* h);
/* The /dev/amdqp file descriptor (owned by the handle). */
AMDQP_API int amdqp_fd(const amdqp_t* h);

AMDQP_API int amdqp_get_version(amdqp_t* h, amdqp_version_info_t* out);

/*
 * Fill up to @capacity elements (each @elem_size bytes apart, normally
 * sizeof(element)); return how many exist, which may exceed @capacity:
 * call again with more room. @capacity 0 (and NULL) only counts.
 * amdqp_get_queues(): @gpu_id and @pid filter, 0 for all.
 */
AMDQP_API int amdqp_get_gpus(amdqp_t* h, amdqp_gpu_t* gpus, size_t capacity, size_t elem_size);
AMDQP_API int amdqp_get_queues(amdqp_t* h, uint32_t gpu_id, uint32_t pid, amdqp_queue_t* queues,
                               size_t capacity, size_t elem_size);

/* Look one queue up; AMDQP_ERR_NO_QUEUE if the caller sees none. */
AMDQP_API int amdqp_find_queue(amdqp_t* h, uint32_t pid, uint32_t gpu_id, uint32_t queue_id,
                               amdqp_queue_t* out, size_t out_size);
AMDQP_API int amdqp_find_queue_by_ring(amdqp_t* h, uint32_t pid, uint64_t ring_va,
                                       amdqp_queue_t* out, size_t out_size);

/*
 * Sets a queue's priority (0..15). Raising it, or touching another user's
 * queue, needs CAP_SYS_NICE. @ref's status/error/state are written back.
 */
AMDQP_API int amdqp_set_queue_priority(amdqp_t* h, amdqp_ref_t* ref, int priority);

/*
 * Suspend (take a hold of this handle on) / resume (drop it) each queue of
 * @refs. Entries of one device cost one scheduler update under HWS. Each
 * entry's outcome is in its status/error/state; the call returns how many
 * succeeded, or a negative AMDQP_ERR_* when the request itself was bad.
 * @grace_us: preemption deadline, 0 for the backend's default. @stats may
 * be NULL.
 */
AMDQP_API int amdqp_suspend(amdqp_t* h, amdqp_ref_t* refs, size_t count, size_t elem_size,
                            uint32_t grace_us, amdqp_batch_stats_t* stats);
AMDQP_API int amdqp_resume(amdqp_t* h, amdqp_ref_t* refs, size_t count, size_t elem_size,
                           amdqp_batch_stats_t* stats);

/*
 * A message for one entry's outcome after amdqp_suspend()/amdqp_resume()
 * (@suspending non-zero for suspend), saying what to do when it failed.
 * Thread-local storage, valid until the next call of it in the thread.
 */
AMDQP_API const char* amdqp_ref_message(const amdqp_ref_t* ref, int suspending);

/*
 * The policy's hot path: suspend every queue below @priority (0..16) on
 * the given GPUs (@num_gpus 0: all GPUs) in one call, except the caller's
 * own process's; resume all that this handle holds. Return the number of
 * queues suspended / resumed. AMDQP_ERR_NO_GPU names the unknown id in
 * amdqp_last_error().
 */
AMDQP_API int amdqp_suspend_below(amdqp_t* h, const uint32_t* gpu_ids, size_t num_gpus,
                                  int priority, uint32_t grace_us, amdqp_batch_stats_t* stats);
AMDQP_API int amdqp_resume_all(amdqp_t* h, const uint32_t* gpu_ids, size_t num_gpus,
                               amdqp_batch_stats_t* stats);

/*
 * CU-mask confinement (ABI 1.3): instead of taking them off the GPU, run
 * the queues below @priority (0..15) on each target's GPU, except the
 * caller's own process's, on the target's mask (ANDed with the mask their
 * owner set) for as long as the handle holds it: until
 * amdqp_confine_release() or amdqp_close(). Calling it again moves them to
 * the new masks. amdqp_cu_geometry() fills in each target's geometry and
 * status and returns how many can be confined; amdqp_cu_range() writes the
 * mask of CUs [first, first + count) of every XCC into @mask (@mask_words
 * words). amdqp_confine_below() returns the queues whose confinement
 * changed, amdqp_confine_release() the confinements lifted (@num_gpus 0:
 * every GPU). @elem_size: sizeof(amdqp_confine_gpu_t).
 */
AMDQP_API int amdqp_cu_geometry(amdqp_t* h, amdqp_confine_gpu_t* targets, size_t count,
                                size_t elem_size);
AMDQP_API int amdqp_cu_range(const amdqp_confine_gpu_t* target, uint32_t first, uint32_t count,
                             uint32_t* mask, size_t mask_words);
AMDQP_API int amdqp_confine_below(amdqp_t* h, const amdqp_confine_gpu_t* targets, size_t count,
                                  size_t elem_size, int priority, uint32_t grace_us,
                                  amdqp_batch_stats_t* stats);
AMDQP_API int amdqp_confine_release(amdqp_t* h, const uint32_t* gpu_ids, size_t num_gpus,
                                    amdqp_batch_stats_t* stats);

/*
 * Events. amdqp_events_subscribe() opens a second, non-blocking fd of the
 * handle's device with @mask (bits 1 << AMDQP_EV_*; 0 unsubscribes).
 * amdqp_events_fd() is that fd for poll(2) (POLLIN), -1 if none.
 * amdqp_events_read() waits up to @timeout_ms (-1: forever, 0: not at all)
 * and stores up to @capacity records; returns how many (0: none yet).
 * Records of types this library does not know are skipped; an
 * AMDQP_EV_OVERFLOW record says how many the kernel dropped.
 */
AMDQP_API int amdqp_events_subscribe(amdqp_t* h, uint64_t mask);
AMDQP_API int amdqp_events_fd(const amdqp_t* h);
AMDQP_API int amdqp_events_read(amdqp_t* h, amdqp_event_record_t* records, size_t capacity,
                                size_t elem_size, int timeout_ms);
/* "queue_created", ... for an AMDQP_EV_* type, "unknown" otherwise. */
AMDQP_API const char* amdqp_event_name(uint32_t type);

/*
 * Priority words shared by every amdqp tool: "high" (12), "normal" (7),
 * "low" (2), or "0".."15"; case does not matter. AMDQP_ERR_INVALID on
 * anything else, with a message in amdqp_last_error().
 */
AMDQP_API int amdqp_parse_priority(const char* text, int* priority);
/* "high", "normal", "low" for 12, 7, 2, the number otherwise, NULL if out of range. */
AMDQP_API const char* amdqp_priority_name(int priority);

#ifdef __cplusplus
}
#endif

#endif /* AMDQP_AMDQP_H */
