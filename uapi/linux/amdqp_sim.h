/* SPDX-License-Identifier: GPL-2.0 WITH Linux-syscall-note */
/*
 * amdqp_sim: simulated GPU devices for testing amdqp without AMD hardware.
 *
 * Devices are created through debugfs (amdqp_sim/new_device). Queues are
 * created through /dev/amdqp_sim; a queue belongs to the process that
 * opened the fd and is destroyed when that fd is closed (process exit).
 * Submitted work items occupy compute slots of the device's virtual GPU
 * for their duration, so work of one queue really delays another's.
 *
 * User-mode queues (AMDQP_SIM_QUEUE_USERMODE) are fed the way an AQL queue
 * is on hardware, without a syscall per submission: the owner maps the ring
 * and a control page, writes 64-byte AQL packets into the ring and stores a
 * doorbell; the device's executor polls doorbells of mapped queues, consumes
 * the packets in order and publishes its read index in the control page. A
 * queue that is off the (virtual) hardware consumes nothing, however often
 * its doorbell is written.
 *
 * Same layout rules as amdqp.h. Magic 0xB9, numbers 0x40-0x4f.
 */
#ifndef _UAPI_LINUX_AMDQP_SIM_H
#define _UAPI_LINUX_AMDQP_SIM_H

#include <linux/const.h>
#include <linux/ioctl.h>
#include <linux/types.h>

/* amdqp_sim_create_queue.flags */
#define AMDQP_SIM_QUEUE_USERMODE	_BITUL(0)	/* mmap-able ring + doorbell */

/* User-mode queue rings: 64-byte AQL packets, power-of-two byte sizes. */
#define AMDQP_SIM_PACKET_SIZE		64
#define AMDQP_SIM_RING_MIN		4096
#define AMDQP_SIM_RING_MAX		0x100000	/* 1 MiB */

/**
 * struct amdqp_sim_create_queue - AMDQP_SIM_IOC_CREATE_QUEUE
 * @gpu_id: sim device
 * @priority: initial priority, 0..15
 * @ring_va: ring base VA to report; 0: the sim picks a unique one.
 *	USERMODE: required, page aligned: the address at which the caller
 *	will map the ring (see @mmap_offset)
 * @ring_size: ring size to report; 0: 64 KiB. USERMODE: required, a power
 *	of two in AMDQP_SIM_RING_MIN..AMDQP_SIM_RING_MAX
 * @flags: AMDQP_SIM_QUEUE_*
 * @queue_id: out: queue id on that device
 * @mmap_offset: out (USERMODE; 0 otherwise): offset to pass to mmap(2)
 *	on this fd. The mapping must be @ring_size + AMDQP_SIM_CTL_SIZE
 *	bytes, shared, placed at exactly @ring_va (MAP_FIXED over a
 *	reservation of the caller's), or mmap fails with -EINVAL. It holds
 *	the ring at offset 0, every packet header set to INVALID, and a
 *	zeroed struct amdqp_sim_uq_ctl at offset @ring_size. USERMODE needs
 *	the struct up to @mmap_offset (-EINVAL with an older, shorter one).
 *	A user-mode queue is fed through its ring only: SUBMIT on it fails
 *	with -EINVAL.
 */
struct amdqp_sim_create_queue {
	__u32 gpu_id;
	__u32 priority;
	__u64 ring_va;
	__u64 ring_size;
	__u32 flags;
	__u32 queue_id;
	__u64 mmap_offset;
};

/* AQL packet types the executor knows (header bits 0-7, as in HSA). */
#define AMDQP_SIM_PKT_VENDOR		0
#define AMDQP_SIM_PKT_INVALID		1
#define AMDQP_SIM_PKT_KERNEL_DISPATCH	2
#define AMDQP_SIM_PKT_BARRIER_AND	3
#define AMDQP_SIM_PKT_BARRIER_OR	5
#define AMDQP_SIM_PKT_TYPE_MASK		0xff

/*
 * How the executor reads an AQL kernel-dispatch packet (the HSA layout):
 * the "kernel" is a duration. kernel_object (bytes 32-39) is the run time
 * in ns (1 ns..10 s); the work-group count grid_size_x / workgroup_size_x
 * rounded up (bytes 12-15 and 4-5) is the compute slots it occupies, 0
 * (or a workgroup_size_x of 0) or more than the device has = all of them.
 * Barrier packets complete at once when they reach the head of the queue
 * (their dependency signals are the owner's business). Packet i is
 * ring[i % (ring_size / 64)]; its header is read first, with acquire
 * semantics, so the owner must store it last, with release semantics. A
 * slot whose type is INVALID below the doorbell stalls the queue until it
 * becomes valid, as an AQL packet processor does; any other type, or a
 * kernel_object out of range, stops the queue for good with
 * @error = -EINVAL (read_index stays at that packet). A completed
 * packet's type is set back to INVALID before read_index passes it.
 */
#define AMDQP_SIM_PKT_KERNEL_OBJECT_OFFSET	32
#define AMDQP_SIM_PKT_GRID_X_OFFSET		12
#define AMDQP_SIM_PKT_WG_X_OFFSET		4

/* Control page of a user-mode queue, right after its ring. */
#define AMDQP_SIM_CTL_SIZE		4096

/**
 * struct amdqp_sim_uq_ctl - control page of a user-mode queue
 * @owner0: the owner's; the sim never touches it (an HSA runtime keeps
 *	its hsa_queue_t here, so that @write_index and @read_index sit where
 *	amd_queue_t has write_dispatch_id and read_dispatch_id)
 * @write_index: the owner's write index; the sim does not trust it
 * @owner1: the owner's
 * @read_index: written by the sim (release): packets consumed and
 *	completed; the owner may reuse slots below it
 * @owner2: the owner's
 * @doorbell: stored by the owner (release): packets with index < @doorbell
 *	are ready. The executor polls it (sim knob doorbell_poll_us) while
 *	the queue is on the (virtual) hardware, and takes up only packets
 *	with index < read_index + ring_size / 64 (the slots in use)
 * @completed_ns: written by the sim: CLOCK_MONOTONIC time the last
 *	packet completed
 * @error: written by the sim: 0, or a negative errno: -EINVAL, a bad
 *	packet stopped the queue; -EIO, a device reset threw packets away
 *	that the device had taken up (they count in @read_index without
 *	having run; the queue goes on with the next ones)
 * @pad: zero
 * @reserved: zero
 */
struct amdqp_sim_uq_ctl {
	__u64 owner0[7];
	__u64 write_index;		/* offset 56 */
	__u64 owner1[8];
	__u64 read_index;		/* offset 128 */
	__u64 owner2[239];
	__u64 doorbell;			/* offset 2048 */
	__u64 completed_ns;
	__s32 error;
	__u32 pad;
	__u64 reserved[253];
};

/**
 * struct amdqp_sim_queue_id - AMDQP_SIM_IOC_DESTROY_QUEUE
 * @gpu_id: device
 * @queue_id: queue
 */
struct amdqp_sim_queue_id {
	__u32 gpu_id;
	__u32 queue_id;
};

/**
 * struct amdqp_sim_submit - AMDQP_SIM_IOC_SUBMIT
 * @gpu_id: device
 * @queue_id: queue (created through this fd)
 * @duration_ns: execution time of each item once dispatched, 1 ns..10 s
 * @count: items to append, 1..4096
 * @width: compute slots each item occupies, 0 = all slots of the device
 * @seqno: out: sequence number of the last item appended (first item
 *	of a queue is 1)
 *
 * Items of one queue execute in order, one at a time (like kernels of one
 * stream); items of different queues run concurrently when slots allow.
 */
struct amdqp_sim_submit {
	__u32 gpu_id;
	__u32 queue_id;
	__u64 duration_ns;
	__u32 count;
	__u32 width;
	__u64 seqno;
};

/**
 * struct amdqp_sim_wait - AMDQP_SIM_IOC_WAIT
 * @gpu_id: device
 * @queue_id: queue (created through this fd)
 * @seqno: wait until the item with this sequence number completed
 * @timeout_ns: give up after this long (-ETIMEDOUT); 0 = just poll
 * @completed_ns: out: CLOCK_MONOTONIC completion time of item @seqno
 *	(0 if it completed too long ago to be remembered)
 */
struct amdqp_sim_wait {
	__u32 gpu_id;
	__u32 queue_id;
	__u64 seqno;
	__u64 timeout_ns;
	__u64 completed_ns;
};

/**
 * struct amdqp_sim_query - AMDQP_SIM_IOC_QUERY
 * @gpu_id: device
 * @queue_id: queue (any process's)
 * @rptr: out: items completed (user-mode queues: packets)
 * @wptr: out: items submitted (user-mode queues: packets taken up)
 * @busy_ns: out: time an item of this queue was executing
 * @preemptions: out: times in-flight work was preempted (CWSR save)
 * @mapped: out: 1 if on the (virtual) hardware now
 * @pad: zero
 */
struct amdqp_sim_query {
	__u32 gpu_id;
	__u32 queue_id;
	__u64 rptr;
	__u64 wptr;
	__u64 busy_ns;
	__u64 preemptions;
	__u32 mapped;
	__u32 pad;
};

/**
 * struct amdqp_sim_update_queue - AMDQP_SIM_IOC_UPDATE_QUEUE
 * @gpu_id: device
 * @queue_id: queue (created through this fd)
 * @queue_percentage: 0 takes the queue off the hardware, 1..100 puts it
 *	back (as AMDKFD_IOC_UPDATE_QUEUE does on stock amdgpu); more: -EINVAL
 * @priority: new priority, 0..15, the one the firmware dispatches with
 *	(amdqp is not told)
 *
 * The model of what an unpatched KFD offers a process for its own queues:
 * one scheduler update per call (HWS: a whole runlist update; MES: one
 * REMOVE_QUEUE or ADD_QUEUE), counted in the device's counters, and no
 * amdqp involvement at all. A queue is on the hardware only while neither
 * its owner (this ioctl) nor amdqp (a suspension) keeps it off.
 */
struct amdqp_sim_update_queue {
	__u32 gpu_id;
	__u32 queue_id;
	__u32 queue_percentage;
	__u32 priority;
};

/* amdqp_sim_cu_mask.flags (GET only) */
#define AMDQP_SIM_CU_MASK_EFFECTIVE	_BITUL(0)	/* the mask it runs on */

/* Largest compute-slot mask SET_CU_MASK takes, in bits (as KFD's CU masks). */
#define AMDQP_SIM_CU_MASK_MAX_BITS	1024

/**
 * struct amdqp_sim_cu_mask - AMDQP_SIM_IOC_SET_CU_MASK, AMDQP_SIM_IOC_GET_CU_MASK
 * @gpu_id: to sim: device
 * @queue_id: to sim: queue (created through this fd)
 * @mask_ptr: to sim: user pointer to @num_bits / 32 __u32 words; bit i of
 *	word j stands for compute slot 32 * j + i. SET reads them, GET writes
 *	them (zero past the device's slots)
 * @num_bits: to sim: SET: bits in the mask, a multiple of 32 in
 *	32..AMDQP_SIM_CU_MASK_MAX_BITS; GET: room at @mask_ptr in bits, a
 *	multiple of 32 up to AMDQP_SIM_CU_MASK_MAX_BITS, 0 to learn
 *	@num_slots only (@mask_ptr is then not used)
 * @num_slots: from sim: the device's compute slots (a mask needs no more
 *	bits than that); ignored on input
 * @flags: to sim: SET: zero; GET: 0 for the mask the owner set (what
 *	SET wrote last), AMDQP_SIM_CU_MASK_EFFECTIVE for the one the queue
 *	runs on: the owner's, ANDed with the confinement amdqp applies
 *	(AMDQP_IOC_CONFINE; XCC by XCC, amdqp's alone in an XCC where they
 *	share no slot). Slots split evenly among the device's XCCs, XCC 0
 *	first.
 * @pad: to sim: zero
 *
 * The sim's model of AMDKFD_IOC_SET_CU_MASK (what hsa_amd_queue_cu_set_mask
 * and hipExtStreamCreateWithCUMask reach): the work items of the queue
 * (either kind) occupy only slots whose bit is set. An item of W slots
 * (work groups) on a mask of M < W slots occupies the M slots for
 * duration * W / M: the same slot time, as a kernel's work groups take
 * more waves on fewer CUs. Narrower items are not affected. A queue starts
 * with every slot of its device in its mask; SET with every slot set
 * restores that.
 *
 * SET: an empty mask, or a bit set at or past the device's slot count, is
 * -EINVAL. Like KFD's update_queue, a change is a scheduler operation on
 * the queue: HWS, one runlist update (every running item preempted); MES,
 * a REMOVE_QUEUE and an ADD_QUEUE if the queue is on the hardware, none
 * otherwise. Items already running keep their slots until they are
 * preempted or complete; the new mask holds from the next dispatch.
 * On failure (-EBUSY, -ETIME, -ENODEV) the mask is unchanged.
 */
struct amdqp_sim_cu_mask {
	__u32 gpu_id;
	__u32 queue_id;
	__u64 mask_ptr;
	__u32 num_bits;
	__u32 num_slots;
	__u32 flags;
	__u32 pad;
};

#define AMDQP_SIM_IOC_MAGIC	0xB9

#define AMDQP_SIM_IOC_CREATE_QUEUE  _IOWR(AMDQP_SIM_IOC_MAGIC, 0x40, struct amdqp_sim_create_queue)
#define AMDQP_SIM_IOC_DESTROY_QUEUE _IOW(AMDQP_SIM_IOC_MAGIC, 0x41, struct amdqp_sim_queue_id)
#define AMDQP_SIM_IOC_SUBMIT	    _IOWR(AMDQP_SIM_IOC_MAGIC, 0x42, struct amdqp_sim_submit)
#define AMDQP_SIM_IOC_WAIT	    _IOWR(AMDQP_SIM_IOC_MAGIC, 0x43, struct amdqp_sim_wait)
#define AMDQP_SIM_IOC_QUERY	    _IOWR(AMDQP_SIM_IOC_MAGIC, 0x44, struct amdqp_sim_query)
#define AMDQP_SIM_IOC_UPDATE_QUEUE  _IOW(AMDQP_SIM_IOC_MAGIC, 0x45, struct amdqp_sim_update_queue)
#define AMDQP_SIM_IOC_SET_CU_MASK   _IOWR(AMDQP_SIM_IOC_MAGIC, 0x46, struct amdqp_sim_cu_mask)
#define AMDQP_SIM_IOC_GET_CU_MASK   _IOWR(AMDQP_SIM_IOC_MAGIC, 0x47, struct amdqp_sim_cu_mask)

#endif /* _UAPI_LINUX_AMDQP_SIM_H */
