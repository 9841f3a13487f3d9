// SPDX-License-Identifier: GPL-2.0
/*
 * ioctl dispatch and the read-mostly ioctls (version, lists, priority).
 */
#include <linux/capability.h>
#include <linux/cred.h>
#include <linux/fs.h>
#include <linux/nospec.h>
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
		.reserved = min_t(u32, READ_ONCE(amdqp_default_ceiling),
				  AMDQP_PRIORITY_MAX),
		.features = AMDQP_FEATURE_CEILING | AMDQP_FEATURE_STARVE |
			    AMDQP_FEATURE_CONFINE,
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
	/*
	 * Room for the devices there are, not for what the caller offers:
	 * one added meanwhile is counted, and the caller asks again.
	 */
	mutex_lock(&amdqp_lock);
	list_for_each_entry(dev, &amdqp_devices, node)
		n++;
	mutex_unlock(&amdqp_lock);
	cap = min(l.count, n);
	n = 0;
	if (cap) {
		infos = kvcalloc(cap, sizeof(*infos), AMDQP_GFP_CALLER);
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

/*
 * pid and uid are what /proc/PID/status shows anyone; the ring VA is what
 * /proc/PID/maps shows only to those who may read the process (@see_va).
 */
static void amdqp_fill_info(struct amdqp_file *f, struct amdqp_queue *q,
			    struct amdqp_queue_info *qi, u64 now, bool see_va)
{
	qi->pid = pid_nr_ns(q->owner, f->pid_ns);
	qi->uid = from_kuid_munged(current_user_ns(), q->uid);
	qi->gpu_id = q->dev->gpu_id;
	qi->queue_id = q->queue_id;
	qi->ring_va = see_va ? q->ring_va : 0;
	qi->ring_size = q->ring_size;
	qi->priority = q->priority;
	qi->holders = q->nr_holds;
	qi->backend = q->dev->backend;
	qi->suspend_count = q->suspend_count;
	qi->suspended_ns = amdqp_suspended_ns(q, now);
	qi->state = amdqp_qstate(f, q, now);
	if (!see_va)
		qi->state |= AMDQP_QSTATE_REDACTED;
	qi->created_ns = q->created_ns;
	qi->requested = q->requested;
	qi->ceiling = q->ceiling;
	if (q->dev->ops->get_queue_stats) {
		struct amdqp_queue_stats s = {};

		q->dev->ops->get_queue_stats(q, &s);
		qi->busy_ns = s.busy_ns;
		qi->submitted = s.submitted;
		qi->completed = s.completed;
	}
}

/*
 * Entries LIST_QUEUES fills per pass: the kernel buffer is bounded by
 * this, not by the caller's count (about 30 KiB).
 */
#define AMDQP_LIST_CHUNK	256

/*
 * Where a LIST_QUEUES call stopped: queues are listed in registration
 * order (devices and their queue lists only grow at the tail, and seq
 * numbers only grow), so a pass resumes after the last one reported.
 */
struct amdqp_list_pos {
	u64 dev_seq;
	u64 q_seq;
};

static bool amdqp_list_after(const struct amdqp_list_pos *pos,
			     const struct amdqp_queue *q)
{
	return q->dev->seq > pos->dev_seq ||
	       (q->dev->seq == pos->dev_seq && q->seq > pos->q_seq);
}

/*
 * One pass: fill up to @room entries after @pos (moving it), count in
 * *@more the matching queues after them. Returns the entries filled.
 */
static u32 amdqp_list_pass(struct amdqp_file *f,
			   const struct amdqp_list_queues *l,
			   struct amdqp_queue_info *infos, u32 room,
			   struct amdqp_list_pos *pos, u32 *more)
{
	struct pid *want = NULL, *seen = NULL;
	struct amdqp_device *dev;
	struct amdqp_queue *q;
	bool see_va = false;
	u32 k = 0;
	u64 now;

	*more = 0;
	mutex_lock(&amdqp_lock);
	now = amdqp_now_ns();
	if (l->pid) {
		rcu_read_lock();
		want = find_pid_ns(l->pid, f->pid_ns);
		rcu_read_unlock();
		/* Compared by address only; a vanished pid matches nothing. */
		if (!want)
			goto unlock;
	}
	list_for_each_entry(dev, &amdqp_devices, node) {
		if (l->gpu_id && dev->gpu_id != l->gpu_id)
			continue;
		if (dev->seq < pos->dev_seq)
			continue;
		list_for_each_entry(q, &dev->queues, dev_node) {
			if (want && q->owner != want)
				continue;
			if (!pid_nr_ns(q->owner, f->pid_ns))
				continue;	/* outside our namespace */
			if (!amdqp_list_after(pos, q))
				continue;	/* reported by an earlier pass */
			if (k == room) {
				(*more)++;
				continue;
			}
			/* A process's queues are mostly adjacent. */
			if (q->owner != seen) {
				seen = q->owner;
				see_va = amdqp_may_read_owner(seen);
			}
			amdqp_fill_info(f, q, &infos[k++], now, see_va);
			pos->dev_seq = dev->seq;
			pos->q_seq = q->seq;
		}
	}
unlock:
	mutex_unlock(&amdqp_lock);
	return k;
}

/*
 * The caller's array is filled in passes of AMDQP_LIST_CHUNK entries,
 * copied out between them without amdqp_lock. A queue that exists for
 * the whole call is reported exactly once; one created or destroyed
 * meanwhile may or may not be.
 */
static long amdqp_ioctl_list_queues(struct amdqp_file *f, void __user *arg,
				    u32 size)
{
	struct amdqp_queue_info *infos = NULL;
	struct amdqp_list_pos pos = {};
	struct amdqp_list_queues l;
	u32 filled = 0, k, more, chunk;
	long ret;

	ret = copy_struct_from_user(&l, sizeof(l), arg, size);
	if (ret)
		return ret;
	if (l.flags || amdqp_check_array(l.count, l.info_size) ||
	    l.pid > PID_MAX_LIMIT)
		return -EINVAL;
	chunk = min_t(u32, l.count, AMDQP_LIST_CHUNK);
	if (chunk) {
		infos = kvcalloc(chunk, sizeof(*infos), AMDQP_GFP_CALLER);
		if (!infos)
			return -ENOMEM;
	}

	do {
		k = amdqp_list_pass(f, &l, infos,
				    min(chunk, l.count - filled), &pos, &more);
		ret = amdqp_copy_array_out(l.queues + (u64)filled * l.info_size,
					   infos, sizeof(*infos), k,
					   l.info_size);
		if (ret)
			goto out;
		filled += k;
	} while (more && filled < l.count);

	l.filled = filled;
	l.count = filled + more;
	l.info_size = sizeof(*infos);
	if (copy_to_user(arg, &l, min_t(size_t, size, sizeof(l))))
		ret = -EFAULT;
out:
	kvfree(infos);
	return ret;
}

/*
 * Like setpriority(2) under RLIMIT_NICE: the owner may lower the priority
 * of its queues freely and raise it up to the queue's ceiling; above the
 * ceiling, or another user's queue, needs CAP_SYS_NICE in the initial user
 * namespace, and then the priority holds over the ceiling until one at or
 * below it is set. The new priority is what the owner asks for; the
 * effective one is clamped (amdqp_effective_priority()).
 */
static long amdqp_ioctl_set_priority(struct amdqp_file *f, void __user *arg,
				     u32 size)
{
	struct amdqp_set_priority sp;
	struct amdqp_queue *q;
	bool owner, nice = false;
	u32 old, old_req, eff, state = 0;
	bool old_ovr;
	long ret;

	ret = copy_struct_from_user(&sp, sizeof(sp), arg, size);
	if (ret)
		return ret;
	/* A well-formed request gets its result written back, errors too. */
	if (sp.flags || sp.priority > AMDQP_PRIORITY_MAX) {
		ret = -EINVAL;
		goto out;
	}

	mutex_lock(&amdqp_lock);
	q = amdqp_find_queue(&sp.ref, f->pid_ns);
	if (IS_ERR(q)) {
		mutex_unlock(&amdqp_lock);
		ret = PTR_ERR(q);
		goto out;
	}
	owner = uid_eq(q->uid, current_euid());
	/*
	 * Lowering is free (even from above the ceiling, where CAP_SYS_NICE
	 * put it). Ask for the capability only where it decides.
	 */
	if ((!owner || (sp.priority > q->ceiling && sp.priority > q->priority)) &&
	    !capable(CAP_SYS_NICE)) {
		ret = -EPERM;
		mutex_unlock(&amdqp_lock);
		goto put;
	}
	nice = sp.priority > q->ceiling;
	mutex_unlock(&amdqp_lock);

	/* Serialise with other scheduler changes on the device. */
	mutex_lock(&q->dev->sched_lock);
	mutex_lock(&amdqp_lock);
	old = q->priority;
	old_req = q->requested;
	old_ovr = q->prio_override;
	q->requested = sp.priority;
	q->prio_override = nice;
	q->priority = amdqp_effective_priority(q);
	eff = q->priority;
	mutex_unlock(&amdqp_lock);
	if (q->dev->ops->set_priority && !q->dev->dead && old != eff)
		ret = q->dev->ops->set_priority(q, eff);
	mutex_lock(&amdqp_lock);
	if (ret) {
		q->priority = old;
		q->requested = old_req;
		q->prio_override = old_ovr;
	} else if (old != eff) {
		trace_amdqp_priority_change(q->dev->gpu_id, pid_nr(q->owner),
					    q->queue_id, old, eff);
		amdqp_emit(AMDQP_EVENT_PRIORITY, q->owner, q->dev->gpu_id,
			   q->queue_id, 0, eff);
	}
	mutex_unlock(&amdqp_lock);
	mutex_unlock(&q->dev->sched_lock);
put:
	/* The queue's state after the call, as LIST_QUEUES shows it. */
	mutex_lock(&amdqp_lock);
	if (!q->dead)
		state = amdqp_qstate(f, q, amdqp_now_ns());
	mutex_unlock(&amdqp_lock);
	amdqp_queue_put(q);
out:
	sp.ref.result = ret;
	sp.ref.state = state;
	if (copy_to_user(arg, &sp, min_t(size_t, size, sizeof(sp))))
		return -EFAULT;
	return ret;
}

static long amdqp_ioctl_version_f(struct amdqp_file *f, void __user *arg,
				  u32 size)
{
	return amdqp_ioctl_version(arg, size);
}

static long amdqp_ioctl_list_devices_f(struct amdqp_file *f,
				       void __user *arg, u32 size)
{
	return amdqp_ioctl_list_devices(arg, size);
}

struct amdqp_ioctl_desc {
	unsigned int cmd;
	long (*fn)(struct amdqp_file *f, void __user *arg, u32 size);
};

/* Indexed by _IOC_NR; .cmd is the whole command this kernel was built with. */
static const struct amdqp_ioctl_desc amdqp_ioctls[] = {
	[_IOC_NR(AMDQP_IOC_GET_VERSION)] = {
		.cmd = AMDQP_IOC_GET_VERSION,
		.fn = amdqp_ioctl_version_f,
	},
	[_IOC_NR(AMDQP_IOC_LIST_DEVICES)] = {
		.cmd = AMDQP_IOC_LIST_DEVICES,
		.fn = amdqp_ioctl_list_devices_f,
	},
	[_IOC_NR(AMDQP_IOC_LIST_QUEUES)] = {
		.cmd = AMDQP_IOC_LIST_QUEUES,
		.fn = amdqp_ioctl_list_queues,
	},
	[_IOC_NR(AMDQP_IOC_SET_PRIORITY)] = {
		.cmd = AMDQP_IOC_SET_PRIORITY,
		.fn = amdqp_ioctl_set_priority,
	},
	[_IOC_NR(AMDQP_IOC_SUSPEND)] = {
		.cmd = AMDQP_IOC_SUSPEND,
		.fn = amdqp_ioctl_suspend,
	},
	[_IOC_NR(AMDQP_IOC_RESUME)] = {
		.cmd = AMDQP_IOC_RESUME,
		.fn = amdqp_ioctl_resume,
	},
	[_IOC_NR(AMDQP_IOC_SUSPEND_BELOW)] = {
		.cmd = AMDQP_IOC_SUSPEND_BELOW,
		.fn = amdqp_ioctl_suspend_below,
	},
	[_IOC_NR(AMDQP_IOC_RESUME_ALL)] = {
		.cmd = AMDQP_IOC_RESUME_ALL,
		.fn = amdqp_ioctl_resume_all,
	},
	[_IOC_NR(AMDQP_IOC_SET_EVENT_MASK)] = {
		.cmd = AMDQP_IOC_SET_EVENT_MASK,
		.fn = amdqp_ioctl_set_event_mask,
	},
	[_IOC_NR(AMDQP_IOC_CEILINGS)] = {
		.cmd = AMDQP_IOC_CEILINGS,
		.fn = amdqp_ioctl_ceilings,
	},
	[_IOC_NR(AMDQP_IOC_CONFINE)] = {
		.cmd = AMDQP_IOC_CONFINE,
		.fn = amdqp_ioctl_confine,
	},
};

/* Largest argument size any version of a structure may have. */
#define AMDQP_IOC_MAX_SIZE	4096

long amdqp_ioctl(struct file *filp, unsigned int cmd, unsigned long arg)
{
	struct amdqp_file *f = filp->private_data;
	void __user *uarg = (void __user *)arg;
	const struct amdqp_ioctl_desc *d;
	u32 size = _IOC_SIZE(cmd);
	unsigned int nr = _IOC_NR(cmd);
	long ret;

	atomic64_inc(&amdqp_stats.ioctls);
	if (_IOC_TYPE(cmd) != AMDQP_IOC_MAGIC || nr >= ARRAY_SIZE(amdqp_ioctls))
		return -ENOTTY;
	d = &amdqp_ioctls[array_index_nospec(nr, ARRAY_SIZE(amdqp_ioctls))];
	/* The direction is part of the command's identity. */
	if (!d->fn || _IOC_DIR(cmd) != _IOC_DIR(d->cmd))
		return -ENOTTY;
	/*
	 * The size may differ from ours: an older or newer version of the
	 * structure, handled by copy_struct_from_user() in each handler.
	 * Every version is a multiple of 8 bytes (uapi rules), so other
	 * sizes are malformed requests.
	 */
	if (cmd != d->cmd &&
	    (size < 8 || size > AMDQP_IOC_MAX_SIZE || size % 8))
		return -EINVAL;

	ret = d->fn(f, uarg, size);
	return ret;
}
