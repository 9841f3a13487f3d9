// SPDX-License-Identifier: GPL-2.0
/*
 * ioctl dispatch and the read-mostly ioctls (version, lists, priority).
 */
#include <linux/capability.h>
#include <linux/cred.h>
#include <linux/fs.h>
#include <linux/slab.h>
#include <linux/uaccess.h>

#include "amdqp_priv.h"
#include "amdqp_trace.h"

static long amdqp_ioctl_version(void __user *arg, u32 size)
{
	struct amdqp_version v = {
		.major = AMDQP_VERSION_MAJOR,
		.minor = AMDQP_VERSION_MINOR,
		.backends = amdqp_bound_backends(),
		.max_batch = AMDQP_MAX_BATCH,
		.priority_max = AMDQP_PRIORITY_MAX,
	};
	struct amdqp_device *dev;

	mutex_lock(&amdqp_lock);
	list_for_each_entry(dev, &amdqp_devices, node)
		v.num_devices++;
	mutex_unlock(&amdqp_lock);

	if (copy_to_user(arg, &v, min_t(size_t, size, sizeof(v))))
		return -EFAULT;
	return 0;
}

/*
 * Copy @n kernel entries of @ksize bytes to a user array of @usize-byte
 * entries: an older caller gets a prefix of each, a newer one the known
 * part (its tail is left alone).
 */
static int amdqp_copy_array_out(u64 uptr, const void *kbuf, size_t ksize,
				u32 n, u32 usize)
{
	u8 __user *out = u64_to_user_ptr(uptr);
	u32 i;

	for (i = 0; i < n; i++)
		if (copy_to_user(out + (size_t)i * usize,
				 (const u8 *)kbuf + (size_t)i * ksize,
				 min_t(size_t, usize, ksize)))
			return -EFAULT;
	return 0;
}

/* Validate an array description shared by the two list ioctls. */
static int amdqp_check_array(u32 count, u32 info_size)
{
	if (count && (info_size < 8 || info_size > PAGE_SIZE ||
		      info_size % 8))
		return -EINVAL;
	return 0;
}

static long amdqp_ioctl_list_devices(void __user *arg, u32 size)
{
	struct amdqp_device_info *infos = NULL;
	struct amdqp_list_devices l;
	struct amdqp_device *dev;
	u32 n = 0, cap;
	long ret;

	ret = copy_struct_from_user(&l, sizeof(l), arg, size);
	if (ret)
		return ret;
	if (l.pad || amdqp_check_array(l.count, l.info_size))
		return -EINVAL;
	cap = min_t(u32, l.count, 4096);
	if (cap) {
		infos = kvcalloc(cap, sizeof(*infos), GFP_KERNEL);
		if (!infos)
			return -ENOMEM;
	}

	/* get_counters() must not sleep: amdqp_lock is held here. */
	mutex_lock(&amdqp_lock);
	list_for_each_entry(dev, &amdqp_devices, node) {
		struct amdqp_device_info *di;

		if (n >= cap) {
			n++;
			continue;
		}
		di = &infos[n++];
		di->gpu_id = dev->gpu_id;
		di->backend = dev->backend;
		di->sched_mode = dev->sched_mode;
		di->num_xcc = dev->num_xcc;
		di->num_queues = dev->num_queues;
		di->num_suspended = dev->num_suspended;
		if (dev->ops->get_counters) {
			struct amdqp_dev_counters c = {};

			dev->ops->get_counters(dev, &c);
			di->sched_updates = c.sched_updates;
			di->unmap_packets = c.unmap_packets;
			di->map_packets = c.map_packets;
			di->preemptions = c.preemptions;
			di->preempt_failures = c.preempt_failures;
			di->resets = c.resets;
		}
	}
	mutex_unlock(&amdqp_lock);

	l.filled = min(n, cap);
	l.count = n;
	ret = amdqp_copy_array_out(l.devices, infos, sizeof(*infos), l.filled,
				   l.info_size);
	l.info_size = sizeof(*infos);
	if (!ret && copy_to_user(arg, &l, min_t(size_t, size, sizeof(l))))
		ret = -EFAULT;
	kvfree(infos);
	return ret;
}

static void amdqp_fill_info(struct amdqp_file *f, struct amdqp_queue *q,
			    struct amdqp_queue_info *qi, u64 now)
{
	qi->pid = pid_nr_ns(q->owner, f->pid_ns);
	qi->uid = from_kuid_munged(current_user_ns(), q->uid);
	qi->gpu_id = q->dev->gpu_id;
	qi->queue_id = q->queue_id;
	qi->ring_va = q->ring_va;
	qi->ring_size = q->ring_size;
	qi->priority = q->priority;
	qi->holders = q->nr_holds;
	qi->backend = q->dev->backend;
	qi->suspend_count = q->suspend_count;
	qi->suspended_ns = amdqp_suspended_ns(q, now);
	qi->state = amdqp_qstate(f, q, now);
	qi->created_ns = q->created_ns;
	if (q->dev->ops->get_queue_stats) {
		struct amdqp_queue_stats s = {};

		q->dev->ops->get_queue_stats(q, &s);
		qi->busy_ns = s.busy_ns;
		qi->submitted = s.submitted;
		qi->completed = s.completed;
	}
}

static long amdqp_ioctl_list_queues(struct amdqp_file *f, void __user *arg,
				    u32 size)
{
	struct amdqp_queue_info *infos = NULL;
	struct amdqp_list_queues l;
	struct amdqp_device *dev;
	struct amdqp_queue *q;
	struct pid *want = NULL;
	u32 n = 0, cap;
	u64 now;
	long ret;

	ret = copy_struct_from_user(&l, sizeof(l), arg, size);
	if (ret)
		return ret;
	if (l.flags || amdqp_check_array(l.count, l.info_size) ||
	    l.pid > PID_MAX_LIMIT)
		return -EINVAL;
	cap = min_t(u32, l.count, 65536);
	if (cap) {
		infos = kvcalloc(cap, sizeof(*infos), GFP_KERNEL);
		if (!infos)
			return -ENOMEM;
	}

	mutex_lock(&amdqp_lock);
	now = amdqp_now_ns();
	if (l.pid) {
		rcu_read_lock();
		want = find_pid_ns(l.pid, f->pid_ns);
		rcu_read_unlock();
		/* Compared by address only; a vanished pid matches nothing. */
		if (!want)
			goto unlock;
	}
	list_for_each_entry(dev, &amdqp_devices, node) {
		if (l.gpu_id && dev->gpu_id != l.gpu_id)
			continue;
		list_for_each_entry(q, &dev->queues, dev_node) {
			if (want && q->owner != want)
				continue;
			if (!pid_nr_ns(q->owner, f->pid_ns))
				continue;	/* outside our namespace */
			if (n < cap)
				amdqp_fill_info(f, q, &infos[n], now);
			n++;
		}
	}
unlock:
	mutex_unlock(&amdqp_lock);

	l.filled = min(n, cap);
	l.count = n;
	ret = amdqp_copy_array_out(l.queues, infos, sizeof(*infos), l.filled,
				   l.info_size);
	l.info_size = sizeof(*infos);
	if (!ret && copy_to_user(arg, &l, min_t(size_t, size, sizeof(l))))
		ret = -EFAULT;
	kvfree(infos);
	return ret;
}

/*
 * Like setpriority(2): anyone may lower the priority of their own queues;
 * raising it, or touching another user's queue, needs CAP_SYS_NICE.
 */
static long amdqp_ioctl_set_priority(struct amdqp_file *f, void __user *arg,
				     u32 size)
{
	struct amdqp_set_priority sp;
	struct amdqp_queue *q;
	u32 old;
	long ret;

	ret = copy_struct_from_user(&sp, sizeof(sp), arg, size);
	if (ret)
		return ret;
	if (sp.flags || sp.priority > AMDQP_PRIORITY_MAX)
		return -EINVAL;

	mutex_lock(&amdqp_lock);
	q = amdqp_find_queue(&sp.ref, f->pid_ns);
	if (IS_ERR(q)) {
		mutex_unlock(&amdqp_lock);
		ret = PTR_ERR(q);
		goto out;
	}
	if ((sp.priority > q->priority || !uid_eq(q->uid, current_euid())) &&
	    !capable(CAP_SYS_NICE)) {
		ret = -EPERM;
		mutex_unlock(&amdqp_lock);
		goto put;
	}
	mutex_unlock(&amdqp_lock);

	/* Serialise with other scheduler changes on the device. */
	mutex_lock(&q->dev->sched_lock);
	mutex_lock(&amdqp_lock);
	old = q->priority;
	q->priority = sp.priority;
	mutex_unlock(&amdqp_lock);
	if (q->dev->ops->set_priority && !q->dev->dead && old != sp.priority)
		ret = q->dev->ops->set_priority(q, sp.priority);
	mutex_lock(&amdqp_lock);
	if (ret) {
		q->priority = old;
	} else if (old != sp.priority) {
		trace_amdqp_priority_change(q->dev->gpu_id, pid_nr(q->owner),
					    q->queue_id, old, sp.priority);
		amdqp_emit(AMDQP_EVENT_PRIORITY, q->owner, q->dev->gpu_id,
			   q->queue_id, 0, sp.priority);
	}
	mutex_unlock(&amdqp_lock);
	mutex_unlock(&q->dev->sched_lock);
put:
	amdqp_queue_put(q);
out:
	sp.ref.result = ret;
	sp.ref.state = 0;
	if (copy_to_user(arg, &sp, min_t(size_t, size, sizeof(sp))))
		return -EFAULT;
	return ret;
}

long amdqp_ioctl(struct file *filp, unsigned int cmd, unsigned long arg)
{
	struct amdqp_file *f = filp->private_data;
	void __user *uarg = (void __user *)arg;
	u32 size = _IOC_SIZE(cmd);

	atomic64_inc(&amdqp_stats.ioctls);
	if (_IOC_TYPE(cmd) != AMDQP_IOC_MAGIC)
		return -ENOTTY;

	/*
	 * Dispatch on the number only: the size in @cmd is the caller's
	 * idea of the struct, and older or newer sizes are handled by
	 * copy_struct_from_user() in each handler.
	 */
	switch (_IOC_NR(cmd)) {
	case _IOC_NR(AMDQP_IOC_GET_VERSION):
		if (_IOC_DIR(cmd) != _IOC_READ)
			return -ENOTTY;
		return amdqp_ioctl_version(uarg, size);
	case _IOC_NR(AMDQP_IOC_LIST_DEVICES):
		return amdqp_ioctl_list_devices(uarg, size);
	case _IOC_NR(AMDQP_IOC_LIST_QUEUES):
		return amdqp_ioctl_list_queues(f, uarg, size);
	case _IOC_NR(AMDQP_IOC_SET_PRIORITY):
		return amdqp_ioctl_set_priority(f, uarg, size);
	case _IOC_NR(AMDQP_IOC_SUSPEND):
		return amdqp_ioctl_suspend(f, uarg, size);
	case _IOC_NR(AMDQP_IOC_RESUME):
		return amdqp_ioctl_resume(f, uarg, size);
	case _IOC_NR(AMDQP_IOC_SUSPEND_BELOW):
		return amdqp_ioctl_suspend_below(f, uarg, size);
	case _IOC_NR(AMDQP_IOC_RESUME_ALL):
		return amdqp_ioctl_resume_all(f, uarg, size);
	case _IOC_NR(AMDQP_IOC_SET_EVENT_MASK):
		return amdqp_ioctl_set_event_mask(f, uarg, size);
	default:
		return -ENOTTY;
	}
}
