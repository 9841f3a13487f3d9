/* SPDX-License-Identifier: MIT */
/*
 * The activity channel: one shared-memory page per tagged process, written
 * by the process's tagging layer (libamdqp-preload) and hint API, read by
 * the policy (amdqpd, amdqpctl). Submissions cost a few plain stores into
 * it, never a syscall.
 *
 * Where: an anonymous memory file (memfd_create(2), name "amdqp-act",
 * AMDQP_ACT_MEMFD_NAME) that the process creates at its first tagged queue
 * or hint, sizes once to AMDQP_ACT_PAGE_SIZE and seals (F_SEAL_SHRINK,
 * F_SEAL_GROW, F_SEAL_SEAL) before anyone else can map it, and keeps open
 * until it exits or execs (close-on-exec). It has no name in any directory:
 * nobody can pre-create, replace or truncate it, and it is gone with its
 * last reference, so a process killed by SIGKILL or the OOM killer leaves
 * nothing behind. Readers find it among the process's open files: the link
 * /proc/PID/fd/N reads "/memfd:amdqp-act (deleted)" and is opened through
 * that path, which the kernel allows to the process's own user and root
 * (ptrace read access). Before mapping or reading a page a reader checks
 * that it is a regular file with SHRINK and GROW sealed and the size of a
 * page, and caps every count it reads at the ABI's maximum.
 *
 * Limit: a page holds AMDQP_ACT_MAX_SLOTS (1016) queues. A process with
 * more tags the rest all the same but cannot show them to readers: it
 * counts them in @untracked, says so once on stderr, and amdqpctl list
 * prints "untracked: N" for it, so no reader reports fewer queues than
 * the process has without saying so.
 *
 * ABI rules: fixed layout (static asserts in activity_test), little
 * endian, naturally aligned. @version changes only when a field changes
 * meaning; new fields go into reserved space and are announced by
 * @version_minor. A reader refuses a page with another @magic or
 * @version, or a @slot_size/@size smaller than its own.
 *
 * Concurrency: each field has one writer side, the process (its tagging
 * layer and hint API) or a controller, as the field says. Inside the
 * process several threads may update one field: counters (@doorbells,
 * @hint_begin, @hint_end) are incremented atomically; @write_index and the
 * timestamps hold the last value stored, so threads ringing one queue at
 * once may leave @write_index a doorbell behind until the next one (and
 * @demand_wgs without one of their packets).
 * Counters only grow (64-bit, no wrap). The writer publishes a slot by
 * storing @state = LIVE last (release); a reader loads @state first
 * (acquire).
 *
 * Cooperative suspension: a controller writes @coop_lease_ns, then
 * @coop_suspend, then the next @coop_seq, and wakes @coop_seq (FUTEX_WAKE);
 * the process carries the request out and acks it in @coop_ack_seq (wakes
 * it). A suspension lasts only while its controller renews the lease: the
 * process puts its queues back on its own once @coop_lease_ns passes, so a
 * controller that crashed or was killed cannot leave them off. The lease
 * is a CLOCK_MONOTONIC deadline rather than the controller's pid: a pid
 * means nothing in another pid namespace and may be reused, while
 * CLOCK_MONOTONIC is one clock for every pid namespace (a time namespace,
 * CLONE_NEWTIME, may offset it: controller and process must share one).
 */
#ifndef AMDQP_ACTIVITY_H
#define AMDQP_ACTIVITY_H

#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

#define AMDQP_ACT_MAGIC 0x41435451u /* "QTCA" read as bytes */
#define AMDQP_ACT_VERSION 1u
/*
 * minor 1: coop_lease_ns, coop_expired; 2: ctl_*, busy_*, holds; 3: memfd, 64 KiB, untracked;
 * 4: slot demand_wgs (0 in older pages: no demand known)
 */
#define AMDQP_ACT_VERSION_MINOR 4u
#define AMDQP_ACT_MEMFD_NAME "amdqp-act" /* memfd_create(2) name of a page */
/* What readlink(2) of /proc/PID/fd/N gives for a page */
#define AMDQP_ACT_MEMFD_LINK "/memfd:" AMDQP_ACT_MEMFD_NAME " (deleted)"
#define AMDQP_ACT_PAGE_SIZE 65536u
#define AMDQP_ACT_MAX_SLOTS 1016u /* (AMDQP_ACT_PAGE_SIZE - header) / slot */
#define AMDQP_ACT_GROUP_LEN 32u
/* amdqp_act_slot.demand_wgs halves at every multiple of 2^26 ns (~67 ms) of CLOCK_MONOTONIC */
#define AMDQP_ACT_DEMAND_EPOCH_SHIFT 26u
/* A doorbell's demand looks at the last this many packets it published at most */
#define AMDQP_ACT_DEMAND_MAX_PACKETS 8u

/*
 * amdqpd's socket (a unix stream socket in a root-owned directory): a
 * process registers its page by sending AMDQP_DAEMON_MSG_REGISTER with the
 * page fd (SCM_RIGHTS); the connection then carries its wakes
 * (AMDQP_DAEMON_MSG_WAKE, one byte each, never answered). A client sends
 * AMDQP_DAEMON_MSG_STATUS on a connection of its own and reads the JSON
 * status until the daemon closes it. The daemon knows the peer by
 * SO_PEERCRED, never by what it sends.
 */
#define AMDQP_DAEMON_DIR "/run/amdqpd"
#define AMDQP_DAEMON_SOCKET "amdqpd.sock"
#define AMDQP_DAEMON_MSG_REGISTER 'R'
#define AMDQP_DAEMON_MSG_WAKE 'W'
#define AMDQP_DAEMON_MSG_STATUS 'S'

/* amdqp_act_header.flags */
#define AMDQP_ACT_F_COOP (1u << 0)    /* can take its own queues off */
#define AMDQP_ACT_F_PRELOAD (1u << 1) /* tagging layer is active */

/* amdqp_act_header.ctl_flags (written by a controller) */
#define AMDQP_ACT_CTL_WAKE (1u << 0) /* announce idle->busy in busy_seq, wake the controller */
#define AMDQP_ACT_CTL_HOLD (1u << 1) /* and hold that doorbell until busy_ack (ctl_hold_us) */

/* amdqp_act_header.coop_state */
#define AMDQP_ACT_COOP_RUNNING 0u   /* queues on the hardware */
#define AMDQP_ACT_COOP_SUSPENDED 1u /* queues taken off */
#define AMDQP_ACT_COOP_FAILED 2u    /* see coop_error */

/* amdqp_act_slot.state */
#define AMDQP_ACT_SLOT_FREE 0u
#define AMDQP_ACT_SLOT_LIVE 1u

/* amdqp_act_slot.mechanism: what controls this queue */
#define AMDQP_ACT_MECH_NONE 0u  /* not registered anywhere */
#define AMDQP_ACT_MECH_AMDQP 1u /* amdqp.ko knows it (kfd or sim) */
#define AMDQP_ACT_MECH_COOP 2u  /* only the cooperative fallback */

/**
 * struct amdqp_act_slot - one HSA queue of the process (64 bytes)
 * @state: AMDQP_ACT_SLOT_*; written last when a slot is taken
 * @gpu_id: KFD gpu_id of the queue's agent (0 if unknown)
 * @priority: 0..15, the priority it was tagged with
 * @mechanism: AMDQP_ACT_MECH_*
 * @ring_va: ring base address (hsa_queue_t.base_address)
 * @write_index: the doorbell value + 1 at the last doorbell store: packets
 *	published (HSA's doorbell value is the index of the last packet made
 *	ready), so the queue is idle when its read index equals it
 * @doorbells: doorbell stores seen (incremented atomically: several threads
 *	may ring one queue)
 * @last_doorbell_ns: CLOCK_MONOTONIC time of the last doorbell store
 * @read_index_va: address, in the owner, of the 64-bit read index the
 *	packet processor updates (amd_queue_t.read_dispatch_id), 0 if unknown;
 *	readers with ptrace rights read it with process_vm_readv(2)
 * @queue_id: KFD (or sim) queue id when the tagging layer learned it, else
 *	UINT32_MAX
 * @demand_wgs: the queue's recent demand: a decaying maximum of the work
 *	group counts (ceil(grid / workgroup size), multiplied over x, y, z;
 *	UINT32_MAX when larger) of the kernel-dispatch packets its doorbells
 *	published, as of @last_doorbell_ns. At each doorbell store the
 *	writer halves it once for every multiple of
 *	2^AMDQP_ACT_DEMAND_EPOCH_SHIFT ns of CLOCK_MONOTONIC passed since the
 *	previous store's @last_doorbell_ns, then raises it to the largest
 *	count among the last AMDQP_ACT_DEMAND_MAX_PACKETS packets the store
 *	published (other packet types count 0). A reader does the same
 *	halving from @last_doorbell_ns to its own time. 0: no dispatch seen
 *	lately (and in pages of version_minor < 4, where this was padding).
 *	A hint: readers bound what they do with it (amdqpd: at most the
 *	whole GPU, for the queue's granted level only).
 */
struct amdqp_act_slot {
    uint32_t state;
    uint32_t gpu_id;
    uint32_t priority;
    uint32_t mechanism;
    uint64_t ring_va;
    uint64_t write_index;
    uint64_t doorbells;
    uint64_t last_doorbell_ns;
    uint64_t read_index_va;
    uint32_t queue_id;
    uint32_t demand_wgs;
};

/**
 * struct amdqp_act_header - start of the page (512 bytes)
 * @magic: AMDQP_ACT_MAGIC, written last at creation (release)
 * @version: AMDQP_ACT_VERSION
 * @version_minor: AMDQP_ACT_VERSION_MINOR
 * @size: bytes of the whole page
 * @slot_size: sizeof(struct amdqp_act_slot)
 * @max_slots: slots that follow the header
 * @pid: the process, as it sees itself
 * @flags: AMDQP_ACT_F_*
 * @start_time: the process's start time in clock ticks after boot
 *	(/proc/PID/stat field 22): tells a reused pid apart
 * @priority: the process's default priority (AMDQP_PRIORITY)
 * @num_slots: slots ever used (a reader scans [0, num_slots))
 * @hint_begin: amdqp_busy_begin() calls
 * @hint_end: amdqp_busy_end() calls; busy while hint_begin != hint_end
 * @hint_last_ns: CLOCK_MONOTONIC time of the last hint call
 * @coop_seq: written by a controller: request number, incremented with
 *	each request (then FUTEX_WAKE on it)
 * @coop_suspend: written by a controller: 1 = take your queues off, 0 = put
 *	them back
 * @coop_state: written by the process: AMDQP_ACT_COOP_*
 * @coop_ack_seq: written by the process: the last @coop_seq it carried
 *	out (then FUTEX_WAKE on it)
 * @coop_error: written by the process: 0, a negative errno of the last
 *	failed attempt, or -ETIMEDOUT when the lease of the suspension ran out
 *	(the process then put its queues back: @coop_state RUNNING, or FAILED
 *	if one would not go back)
 * @coop_updates: written by the process: scheduler updates it issued for
 *	cooperative suspend/resume (one per queue per change)
 * @group: AMDQP_GROUP of the process, NUL padded (tensor-parallel group)
 * @coop_lease_ns: written by a controller: CLOCK_MONOTONIC time (ns) until
 *	which the suspension it asks for holds, written before @coop_seq with
 *	every request and moved forward while the controller holds it (a
 *	renewal: no new @coop_seq, no wake). When it passes, the process puts
 *	its queues back, acks as described at @coop_error and counts it in
 *	@coop_expired. A suspend request that the process sees only after
 *	its deadline counts as one whose lease ran out. 0 with a suspend
 *	request: no deadline (what controllers of version_minor 0 write);
 *	ignored with a resume request.
 * @coop_expired: written by the process: leases that ran out
 * @ctl_flags: written by a controller: AMDQP_ACT_CTL_*, 0 when none runs.
 *	With WAKE, a doorbell store that finds its queue idle (read index at
 *	the slot's previous @write_index) or a hint that opens while none was
 *	open increments @busy_seq and wakes the controller through the
 *	process's own connection to it (amdqpd's socket, userspace.rst);
 *	nothing is done on other doorbells. With HOLD
 *	as well, the store then waits until @busy_ack reaches that @busy_seq
 *	or @ctl_hold_us passed, and only then reaches the hardware: the
 *	controller acks after it suspended what the new work outranks.
 * @ctl_hold_us: written by a controller: longest hold of one doorbell (µs)
 * @busy_seq: written by the process: idle->busy transitions announced
 * @busy_ack: written by a controller: the last @busy_seq it acted on
 *	(then FUTEX_WAKE on it)
 * @holds: written by the process: doorbells held for an ack
 * @hold_timeouts: written by the process: holds that ended at the deadline
 * @ctl_alive_ns: written by a controller: CLOCK_MONOTONIC time (ns) until
 *	which it promises to ack; moved forward while it runs. A process never
 *	holds a doorbell past it, so a controller that died costs nothing
 *	once its promise ran out.
 * @untracked: written by the process: its queues that found no free slot
 *	(tagged, but not visible in the page); 0 normally
 * @reserved: zero
 */
struct amdqp_act_header {
    uint32_t magic;
    uint32_t version;
    uint32_t version_minor;
    uint32_t size;
    uint32_t slot_size;
    uint32_t max_slots;
    uint32_t pid;
    uint32_t flags;
    uint64_t start_time;
    uint32_t priority;
    uint32_t num_slots;
    uint64_t hint_begin;
    uint64_t hint_end;
    uint64_t hint_last_ns;
    uint32_t coop_seq;
    uint32_t coop_suspend;
    uint32_t coop_state;
    uint32_t coop_ack_seq;
    int32_t coop_error;
    uint32_t pad;
    uint64_t coop_updates;
    char group[AMDQP_ACT_GROUP_LEN];
    uint64_t coop_lease_ns;
    uint64_t coop_expired;
    uint32_t ctl_flags;
    uint32_t ctl_hold_us;
    uint32_t busy_seq;
    uint32_t busy_ack;
    uint64_t holds;
    uint64_t hold_timeouts;
    uint64_t ctl_alive_ns;
    uint64_t untracked;
    uint64_t reserved[39];
};

/*
 * @demand, recorded at @since_ns, as of @now_ns: halved once for every
 * multiple of 2^AMDQP_ACT_DEMAND_EPOCH_SHIFT ns between them (counting
 * boundaries, not whole periods, so that doorbells closer together than a
 * period still decay it). @now_ns before @since_ns leaves it as it is.
 */
static inline uint32_t amdqp_act_demand_at(uint32_t demand, uint64_t since_ns, uint64_t now_ns) {
    uint64_t from = since_ns >> AMDQP_ACT_DEMAND_EPOCH_SHIFT;
    uint64_t to = now_ns >> AMDQP_ACT_DEMAND_EPOCH_SHIFT;

    if (to <= from)
        return demand;
    return to - from >= 32 ? 0 : demand >> (to - from);
}

/** struct amdqp_act_page - the whole page (AMDQP_ACT_PAGE_SIZE bytes) */
struct amdqp_act_page {
    struct amdqp_act_header hdr;
    struct amdqp_act_slot slots[AMDQP_ACT_MAX_SLOTS];
};

#ifdef __cplusplus
}
#endif

#endif /* AMDQP_ACTIVITY_H */
