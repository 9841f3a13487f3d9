/* SPDX-License-Identifier: GPL-2.0 */
#undef TRACE_SYSTEM
#define TRACE_SYSTEM amdqp

#if !defined(AMDQP_TRACE_H) || defined(TRACE_HEADER_MULTI_READ)
#define AMDQP_TRACE_H

#include <linux/tracepoint.h>

TRACE_EVENT(amdqp_queue_register,
	    TP_PROTO(u32 gpu_id, pid_t pid, u32 queue_id, u32 priority,
		     u64 ring_va),
	    TP_ARGS(gpu_id, pid, queue_id, priority, ring_va),
	    TP_STRUCT__entry(__field(u32, gpu_id)
			     __field(pid_t, pid)
			     __field(u32, queue_id)
			     __field(u32, priority)
			     __field(u64, ring_va)),
	    TP_fast_assign(__entry->gpu_id = gpu_id;
			   __entry->pid = pid;
			   __entry->queue_id = queue_id;
			   __entry->priority = priority;
			   __entry->ring_va = ring_va;),
	    TP_printk("gpu_id=%u pid=%d queue_id=%u priority=%u ring_va=0x%llx",
		      __entry->gpu_id, __entry->pid, __entry->queue_id,
		      __entry->priority, __entry->ring_va)
);

TRACE_EVENT(amdqp_queue_unregister,
	    TP_PROTO(u32 gpu_id, pid_t pid, u32 queue_id),
	    TP_ARGS(gpu_id, pid, queue_id),
	    TP_STRUCT__entry(__field(u32, gpu_id)
			     __field(pid_t, pid)
			     __field(u32, queue_id)),
	    TP_fast_assign(__entry->gpu_id = gpu_id;
			   __entry->pid = pid;
			   __entry->queue_id = queue_id;),
	    TP_printk("gpu_id=%u pid=%d queue_id=%u",
		      __entry->gpu_id, __entry->pid, __entry->queue_id)
);

TRACE_EVENT(amdqp_priority_change,
	    TP_PROTO(u32 gpu_id, pid_t pid, u32 queue_id, u32 old_prio,
		     u32 new_prio),
	    TP_ARGS(gpu_id, pid, queue_id, old_prio, new_prio),
	    TP_STRUCT__entry(__field(u32, gpu_id)
			     __field(pid_t, pid)
			     __field(u32, queue_id)
			     __field(u32, old_prio)
			     __field(u32, new_prio)),
	    TP_fast_assign(__entry->gpu_id = gpu_id;
			   __entry->pid = pid;
			   __entry->queue_id = queue_id;
			   __entry->old_prio = old_prio;
			   __entry->new_prio = new_prio;),
	    TP_printk("gpu_id=%u pid=%d queue_id=%u priority=%u->%u",
		      __entry->gpu_id, __entry->pid, __entry->queue_id,
		      __entry->old_prio, __entry->new_prio)
);

/* One scheduler update on one device: a batch of queues taken off/put on. */
DECLARE_EVENT_CLASS(amdqp_batch_class,
		    TP_PROTO(u32 gpu_id, u32 count, u32 failed, u64 latency_ns),
		    TP_ARGS(gpu_id, count, failed, latency_ns),
		    TP_STRUCT__entry(__field(u32, gpu_id)
				     __field(u32, count)
				     __field(u32, failed)
				     __field(u64, latency_ns)),
		    TP_fast_assign(__entry->gpu_id = gpu_id;
				   __entry->count = count;
				   __entry->failed = failed;
				   __entry->latency_ns = latency_ns;),
		    TP_printk("gpu_id=%u count=%u failed=%u latency_ns=%llu",
			      __entry->gpu_id, __entry->count, __entry->failed,
			      __entry->latency_ns)
);

DEFINE_EVENT(amdqp_batch_class, amdqp_suspend_batch,
	     TP_PROTO(u32 gpu_id, u32 count, u32 failed, u64 latency_ns),
	     TP_ARGS(gpu_id, count, failed, latency_ns)
);

DEFINE_EVENT(amdqp_batch_class, amdqp_resume_batch,
	     TP_PROTO(u32 gpu_id, u32 count, u32 failed, u64 latency_ns),
	     TP_ARGS(gpu_id, count, failed, latency_ns)
);

DEFINE_EVENT(amdqp_batch_class, amdqp_confine_batch,
	     TP_PROTO(u32 gpu_id, u32 count, u32 failed, u64 latency_ns),
	     TP_ARGS(gpu_id, count, failed, latency_ns)
);

DEFINE_EVENT(amdqp_batch_class, amdqp_unconfine_batch,
	     TP_PROTO(u32 gpu_id, u32 count, u32 failed, u64 latency_ns),
	     TP_ARGS(gpu_id, count, failed, latency_ns)
);

TRACE_EVENT(amdqp_error,
	    TP_PROTO(u32 gpu_id, const char *what, int error),
	    TP_ARGS(gpu_id, what, error),
	    TP_STRUCT__entry(__field(u32, gpu_id)
			     __array(char, what, 16)
			     __field(int, error)),
	    TP_fast_assign(__entry->gpu_id = gpu_id;
			   strscpy(__entry->what, what, sizeof(__entry->what));
			   __entry->error = error;),
	    TP_printk("gpu_id=%u what=%s error=%d",
		      __entry->gpu_id, __entry->what, __entry->error)
);

TRACE_EVENT(amdqp_watchdog,
	    TP_PROTO(u32 gpu_id, pid_t pid, u32 queue_id, u64 suspended_ns),
	    TP_ARGS(gpu_id, pid, queue_id, suspended_ns),
	    TP_STRUCT__entry(__field(u32, gpu_id)
			     __field(pid_t, pid)
			     __field(u32, queue_id)
			     __field(u64, suspended_ns)),
	    TP_fast_assign(__entry->gpu_id = gpu_id;
			   __entry->pid = pid;
			   __entry->queue_id = queue_id;
			   __entry->suspended_ns = suspended_ns;),
	    TP_printk("gpu_id=%u pid=%d queue_id=%u suspended_ns=%llu",
		      __entry->gpu_id, __entry->pid, __entry->queue_id,
		      __entry->suspended_ns)
);

TRACE_EVENT(amdqp_confine_watchdog,
	    TP_PROTO(u32 gpu_id, pid_t pid, u32 queue_id, u64 confined_ns),
	    TP_ARGS(gpu_id, pid, queue_id, confined_ns),
	    TP_STRUCT__entry(__field(u32, gpu_id)
			     __field(pid_t, pid)
			     __field(u32, queue_id)
			     __field(u64, confined_ns)),
	    TP_fast_assign(__entry->gpu_id = gpu_id;
			   __entry->pid = pid;
			   __entry->queue_id = queue_id;
			   __entry->confined_ns = confined_ns;),
	    TP_printk("gpu_id=%u pid=%d queue_id=%u confined_ns=%llu",
		      __entry->gpu_id, __entry->pid, __entry->queue_id,
		      __entry->confined_ns)
);

#endif /* AMDQP_TRACE_H */

#undef TRACE_INCLUDE_PATH
#define TRACE_INCLUDE_PATH .
#undef TRACE_INCLUDE_FILE
#define TRACE_INCLUDE_FILE amdqp_trace
#include <trace/define_trace.h>
