// SPDX-License-Identifier: GPL-2.0
/*
 * /sys/kernel/debug/amdqp/: stats (global counters) and queues (a dump of
 * the registry for humans).
 */
#include <linux/debugfs.h>
#include <linux/seq_file.h>

#include "amdqp_priv.h"

static struct dentry *amdqp_dbg_root;

static int amdqp_stats_show(struct seq_file *m, void *unused)
{
#define S(x) seq_printf(m, "%-18s %lld\n", #x, atomic64_read(&amdqp_stats.x))
	S(ioctls);
	S(suspend_calls);
	S(resume_calls);
	S(queues_suspended);
	S(queues_resumed);
	S(failures);
	S(watchdog_resumes);
	S(watchdog_sweeps);
	S(events_lost);
	S(rate_limited);
	S(confine_calls);
	S(queues_confined);
	S(queues_unconfined);
	S(confine_watchdog);
#undef S
	return 0;
}
DEFINE_SHOW_ATTRIBUTE(amdqp_stats);

static int amdqp_queues_show(struct seq_file *m, void *unused)
{
	struct amdqp_device *dev;
	struct amdqp_queue *q;
	u64 now;

	mutex_lock(&amdqp_lock);
	now = amdqp_now_ns();
	list_for_each_entry(dev, &amdqp_devices, node) {
		seq_printf(m, "gpu %u backend %u sched %s xcc %u queues %u suspended %u cu_per_xcc %u confined %u\n",
			   dev->gpu_id, dev->backend,
			   dev->sched_mode == AMDQP_SCHED_MES ? "mes" : "hws",
			   dev->num_xcc, dev->num_queues, dev->num_suspended,
			   dev->cu_per_xcc, dev->num_confined);
		list_for_each_entry(q, &dev->queues, dev_node) {
			seq_printf(m, "  pid %d queue %u prio %u ring 0x%llx %s holders %u suspends %llu suspended_ms %llu",
				   pid_nr(q->owner), q->queue_id, q->priority,
				   q->ring_va,
				   q->hw_suspended ? "SUSPENDED" : "running",
				   q->nr_holds, q->suspend_count,
				   div_u64(amdqp_suspended_ns(q, now),
					   NSEC_PER_MSEC));
			seq_printf(m, " confiners %u", q->nr_cholds);
			if (q->hw_confined)
				seq_printf(m, " CONFINED %*phN",
					   (int)(dev->mask_words * sizeof(u32)),
					   q->hw_mask);
			seq_putc(m, '\n');
		}
	}
	mutex_unlock(&amdqp_lock);
	return 0;
}
DEFINE_SHOW_ATTRIBUTE(amdqp_queues);

void amdqp_debugfs_init(void)
{
	amdqp_dbg_root = debugfs_create_dir("amdqp", NULL);
	debugfs_create_file("stats", 0444, amdqp_dbg_root, NULL,
			    &amdqp_stats_fops);
	debugfs_create_file("queues", 0444, amdqp_dbg_root, NULL,
			    &amdqp_queues_fops);
}

void amdqp_debugfs_exit(void)
{
	debugfs_remove_recursive(amdqp_dbg_root);
}
