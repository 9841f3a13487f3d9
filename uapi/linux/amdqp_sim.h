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
 * Same layout rules as amdqp.h. Magic 0xB9, numbers 0x40-0x4f.
 */
#ifndef _UAPI_LINUX_AMDQP_SIM_H
#define _UAPI_LINUX_AMDQP_SIM_H

#include <linux/ioctl.h>
#include <linux/types.h>

/**
 * struct amdqp_sim_create_queue - AMDQP_SIM_IOC_CREATE_QUEUE
 * @gpu_id: sim device
 * @priority: initial priority, 0..15
 * @ring_va: ring base VA to report; 0: the sim picks a unique one
 * @ring_size: ring size to report; 0: 64 KiB
 * @flags: zero
 * @queue_id: out: queue id on that device
 */
struct amdqp_sim_create_queue {
	__u32 gpu_id;
	__u32 priority;
	__u64 ring_va;
	__u64 ring_size;
	__u32 flags;
	__u32 queue_id;
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
 * @rptr: out: items completed
 * @wptr: out: items submitted
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

#define AMDQP_SIM_IOC_MAGIC	0xB9

#define AMDQP_SIM_IOC_CREATE_QUEUE  _IOWR(AMDQP_SIM_IOC_MAGIC, 0x40, struct amdqp_sim_create_queue)
#define AMDQP_SIM_IOC_DESTROY_QUEUE _IOW(AMDQP_SIM_IOC_MAGIC, 0x41, struct amdqp_sim_queue_id)
#define AMDQP_SIM_IOC_SUBMIT	    _IOWR(AMDQP_SIM_IOC_MAGIC, 0x42, struct amdqp_sim_submit)
#define AMDQP_SIM_IOC_WAIT	    _IOWR(AMDQP_SIM_IOC_MAGIC, 0x43, struct amdqp_sim_wait)
#define AMDQP_SIM_IOC_QUERY	    _IOWR(AMDQP_SIM_IOC_MAGIC, 0x44, struct amdqp_sim_query)

#endif /* _UAPI_LINUX_AMDQP_SIM_H */
