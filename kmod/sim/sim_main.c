// SPDX-License-Identifier: GPL-2.0
/*
 * amdqp_sim: simulated HWS/MES GPUs for amdqp, created at runtime through
 * debugfs the way netdevsim creates network devices:
 *
 *   echo "GPU_ID [hws|mes] [XCC] [SLOTS]" > /sys/kernel/debug/amdqp_sim/new_device
 *   echo GPU_ID > /sys/kernel/debug/amdqp_sim/del_device
 *
 * Each device gets gpu<GPU_ID>/ with its knobs and counters.
 */
#include <linux/debugfs.h>
#include <linux/module.h>
#include <linux/seq_file.h>
#include <linux/slab.h>
#include <linux/uaccess.h>
#include <linux/amdqp.h>

#include "amdqp_backend.h"
#include "sim.h"

#define SIM_DEFAULT_SLOTS	8

static DEFINE_MUTEX(sim_devs_lock);
static LIST_HEAD(sim_devs);		/* sim_dev.node; sim_devs_lock */
static struct dentry *sim_dbg_root;

static void sim_dev_free(struct kref *ref)
{
	kfree(container_of(ref, struct sim_dev, ref));
}

void sim_dev_put(struct sim_dev *sd)
{
	kref_put(&sd->ref, sim_dev_free);
}

struct sim_dev *sim_dev_find_get(u32 gpu_id)
{
	struct sim_dev *sd;

	mutex_lock(&sim_devs_lock);
	list_for_each_entry(sd, &sim_devs, node) {
		if (sd->gpu_id == gpu_id) {
			kref_get(&sd->ref);
			mutex_unlock(&sim_devs_lock);
			return sd;
		}
	}
	mutex_unlock(&sim_devs_lock);
	return NULL;
}

static int sim_counters_show(struct seq_file *m, void *unused)
{
	struct sim_dev *sd = m->private;
	struct amdqp_dev_counters c;
	u32 free_slots;

	spin_lock_irq(&sd->lock);
	c = sd->cnt;
	free_slots = sd->free_slots;
	spin_unlock_irq(&sd->lock);
	seq_printf(m, "sched_updates %llu\n", c.sched_updates);
	seq_printf(m, "unmap_packets %llu\n", c.unmap_packets);
	seq_printf(m, "map_packets %llu\n", c.map_packets);
	seq_printf(m, "preemptions %llu\n", c.preemptions);
	seq_printf(m, "preempt_failures %llu\n", c.preempt_failures);
	seq_printf(m, "resets %llu\n", c.resets);
	seq_printf(m, "free_slots %u\n", free_slots);
	return 0;
}
DEFINE_SHOW_ATTRIBUTE(sim_counters);

static int sim_info_show(struct seq_file *m, void *unused)
{
	struct sim_dev *sd = m->private;

	seq_printf(m, "gpu_id %u\nmode %s\nnum_xcc %u\nslots %u\n",
		   sd->gpu_id, sd->mode == AMDQP_SCHED_MES ? "mes" : "hws",
		   sd->num_xcc, sd->slots);
	return 0;
}
DEFINE_SHOW_ATTRIBUTE(sim_info);

static ssize_t sim_reset_write(struct file *file, const char __user *buf,
			       size_t len, loff_t *ppos)
{
	struct sim_dev *sd = file->private_data;
	bool doit;
	int ret;

	ret = kstrtobool_from_user(buf, len, &doit);
	if (ret)
		return ret;
	if (doit)
		sim_dev_reset(sd);
	return len;
}

static const struct file_operations sim_reset_fops = {
	.open = simple_open,
	.write = sim_reset_write,
	.llseek = noop_llseek,
};

static void sim_dev_debugfs(struct sim_dev *sd)
{
	char name[24];

	snprintf(name, sizeof(name), "gpu%u", sd->gpu_id);
	sd->dir = debugfs_create_dir(name, sim_dbg_root);
	debugfs_create_file("info", 0444, sd->dir, sd, &sim_info_fops);
	debugfs_create_file("counters", 0444, sd->dir, sd, &sim_counters_fops);
	debugfs_create_file("reset", 0200, sd->dir, sd, &sim_reset_fops);
	debugfs_create_u32("unmap_latency_us", 0644, sd->dir,
			   &sd->unmap_latency_us);
	debugfs_create_u32("map_latency_us", 0644, sd->dir,
			   &sd->map_latency_us);
	debugfs_create_u32("cwsr_save_us", 0644, sd->dir, &sd->cwsr_save_us);
	debugfs_create_u32("cwsr_restore_us", 0644, sd->dir,
			   &sd->cwsr_restore_us);
	debugfs_create_u32("preempt_timeout_ms", 0644, sd->dir,
			   &sd->preempt_timeout_ms);
	debugfs_create_atomic_t("fail_preempt", 0644, sd->dir,
				&sd->fail_preempt);
	debugfs_create_atomic_t("fail_busy", 0644, sd->dir, &sd->fail_busy);
	debugfs_create_u32("doorbell_poll_us", 0644, sd->dir,
			   &sd->doorbell_poll_us);
	debugfs_create_bool("amdqp_managed", 0644, sd->dir,
			    &sd->amdqp_managed);
}

static int sim_dev_new(u32 gpu_id, u32 mode, u32 num_xcc, u32 slots)
{
	struct amdqp_device_desc desc = {
		.gpu_id = gpu_id,
		.backend = AMDQP_BACKEND_SIM,
		.sched_mode = mode,
		.num_xcc = num_xcc,
		/*
		 * Confinement addresses slots XCC by XCC: possible when the
		 * slots split evenly among the XCCs.
		 */
		.cu_per_xcc = slots % num_xcc ? 0 : slots / num_xcc,
		.ops = &sim_backend_ops,
	};
	struct sim_dev *sd, *other;
	int ret;

	sd = kzalloc(sizeof(*sd), GFP_KERNEL);
	if (!sd)
		return -ENOMEM;
	kref_init(&sd->ref);
	mutex_init(&sd->qlock);
	mutex_init(&sd->fw_lock);
	spin_lock_init(&sd->lock);
	init_waitqueue_head(&sd->kick_wait);
	INIT_LIST_HEAD(&sd->queues);
	INIT_LIST_HEAD(&sd->uqueues);
	sd->gpu_id = gpu_id;
	sd->mode = mode;
	sd->num_xcc = num_xcc;
	sd->slots = slots;
	sd->free_slots = slots;
	sd->next_ring_va = 0x7f0000000000ULL + ((u64)gpu_id << 32);
	/* Defaults in the range measured on MI300-class parts. */
	sd->unmap_latency_us = 100;
	sd->map_latency_us = 50;
	sd->cwsr_save_us = 20;
	sd->cwsr_restore_us = 20;
	sd->preempt_timeout_ms = 100;
	sd->doorbell_poll_us = 100;
	sd->amdqp_managed = true;
	desc.priv = sd;

	mutex_lock(&sim_devs_lock);
	list_for_each_entry(other, &sim_devs, node) {
		if (other->gpu_id == gpu_id) {
			ret = -EEXIST;
			goto unlock;
		}
	}
	ret = sim_gpu_start(sd);
	if (ret)
		goto unlock;
	sd->adev = amdqp_device_register(&desc);
	if (IS_ERR(sd->adev)) {
		ret = PTR_ERR(sd->adev);
		sim_gpu_stop(sd);
		goto unlock;
	}
	list_add_tail(&sd->node, &sim_devs);
	sim_dev_debugfs(sd);
	mutex_unlock(&sim_devs_lock);
	return 0;

unlock:
	mutex_unlock(&sim_devs_lock);
	kfree(sd);
	return ret;
}

/*
 * Remove a device that processes may still have queues on: their queues
 * are destroyed (amdqp sees them go), later calls on them get -ENODEV.
 * Called with sim_devs_lock held, @sd already off the list.
 */
static void sim_dev_remove(struct sim_dev *sd)
{
	struct sim_queue *sq;

	debugfs_remove_recursive(sd->dir);
	for (;;) {
		mutex_lock(&sd->qlock);
		sd->removed = true;
		sq = list_first_entry_or_null(&sd->queues, struct sim_queue,
					      dev_node);
		if (sq)
			kref_get(&sq->ref);
		mutex_unlock(&sd->qlock);
		if (!sq)
			break;
		sim_queue_destroy(sq);
		sim_queue_put(sq);
	}
	amdqp_device_unregister(sd->adev);
	sim_gpu_stop(sd);
	sim_dev_put(sd);
}

static int sim_dev_del(u32 gpu_id)
{
	struct sim_dev *sd;

	mutex_lock(&sim_devs_lock);
	list_for_each_entry(sd, &sim_devs, node) {
		if (sd->gpu_id == gpu_id) {
			list_del(&sd->node);
			sim_dev_remove(sd);
			mutex_unlock(&sim_devs_lock);
			return 0;
		}
	}
	mutex_unlock(&sim_devs_lock);
	return -ENODEV;
}

/*
 * Parse "GPU_ID [MODE [XCC [SLOTS]]]": decimal numbers that fit a u32 (no
 * sign), words separated by blanks, nothing after SLOTS. Returns 0 or
 * -EINVAL; fields not given keep the values the caller set.
 */
static int sim_parse_new_device(char *buf, u32 *gpu_id, u32 *mode,
				u32 *num_xcc, u32 *slots)
{
	char *p = buf, *tok;
	unsigned int n = 0;

	while ((tok = strsep(&p, " \t\n"))) {
		int ret = 0;

		if (!*tok)
			continue;	/* runs of blanks, the trailing newline */
		switch (n++) {
		case 0:
			ret = kstrtou32(tok, 10, gpu_id);
			break;
		case 1:
			if (!strcmp(tok, "hws"))
				*mode = AMDQP_SCHED_HWS;
			else if (!strcmp(tok, "mes"))
				*mode = AMDQP_SCHED_MES;
			else
				ret = -EINVAL;
			break;
		case 2:
			ret = kstrtou32(tok, 10, num_xcc);
			break;
		case 3:
			ret = kstrtou32(tok, 10, slots);
			break;
		default:
			ret = -EINVAL;	/* trailing fields */
		}
		/* kstrtou32() says -ERANGE for overflow: still bad input. */
		if (ret)
			return -EINVAL;
	}
	return n ? 0 : -EINVAL;
}

static ssize_t sim_new_device_write(struct file *file, const char __user *ubuf,
				    size_t len, loff_t *ppos)
{
	u32 gpu_id = 0, num_xcc = 1, slots = SIM_DEFAULT_SLOTS;
	u32 mode = AMDQP_SCHED_HWS;
	char buf[64];
	int ret;

	if (len >= sizeof(buf))
		return -EINVAL;
	if (copy_from_user(buf, ubuf, len))
		return -EFAULT;
	buf[len] = '\0';
	if (sim_parse_new_device(buf, &gpu_id, &mode, &num_xcc, &slots))
		return -EINVAL;
	if (!gpu_id || !num_xcc || num_xcc > 16 || !slots ||
	    slots > SIM_MAX_SLOTS)
		return -EINVAL;
	ret = sim_dev_new(gpu_id, mode, num_xcc, slots);
	return ret ? ret : len;
}

static ssize_t sim_del_device_write(struct file *file, const char __user *ubuf,
				    size_t len, loff_t *ppos)
{
	u32 gpu_id;
	int ret;

	ret = kstrtou32_from_user(ubuf, len, 0, &gpu_id);
	if (ret)
		return ret;
	ret = sim_dev_del(gpu_id);
	return ret ? ret : len;
}

static const struct file_operations sim_new_device_fops = {
	.open = simple_open,
	.write = sim_new_device_write,
	.llseek = noop_llseek,
};

static const struct file_operations sim_del_device_fops = {
	.open = simple_open,
	.write = sim_del_device_write,
	.llseek = noop_llseek,
};

static int __init sim_init(void)
{
	int ret;

	sim_dbg_root = debugfs_create_dir("amdqp_sim", NULL);
	debugfs_create_file("new_device", 0200, sim_dbg_root, NULL,
			    &sim_new_device_fops);
	debugfs_create_file("del_device", 0200, sim_dbg_root, NULL,
			    &sim_del_device_fops);
	ret = sim_chardev_init();
	if (ret) {
		debugfs_remove_recursive(sim_dbg_root);
		return ret;
	}
	amdqp_backend_set_bound(AMDQP_BACKEND_SIM, true);
	return 0;
}

static void __exit sim_exit(void)
{
	struct sim_dev *sd, *tmp;

	amdqp_backend_set_bound(AMDQP_BACKEND_SIM, false);
	sim_chardev_exit();
	/* debugfs first: no new device can appear while we tear down. */
	debugfs_lookup_and_remove("new_device", sim_dbg_root);
	mutex_lock(&sim_devs_lock);
	list_for_each_entry_safe(sd, tmp, &sim_devs, node) {
		list_del(&sd->node);
		sim_dev_remove(sd);
	}
	mutex_unlock(&sim_devs_lock);
	debugfs_remove_recursive(sim_dbg_root);
}

module_init(sim_init);
module_exit(sim_exit);

MODULE_DESCRIPTION("Simulated HWS/MES GPUs for amdqp");
MODULE_LICENSE("GPL");
MODULE_IMPORT_NS(AMDQP);
