// SPDX-License-Identifier: GPL-2.0
/*
 * The event stream: every fd that set a mask gets its own bounded ring of
 * records, read with read(2) and waited for with poll(2).
 */
#include <linux/fs.h>
#include <linux/poll.h>
#include <linux/slab.h>
#include <linux/uaccess.h>

#include "amdqp_priv.h"

/*
 * amdqp_event_files_lock: amdqp_event_files, and which ring each file on
 * it has (f->ev_ring is installed and taken away under it and the file's
 * ev_lock). Taken inside amdqp_lock, never the other way round. A mutex:
 * emission walks every subscribed file, and must stay preemptible.
 *
 * amdqp_file.ev_lock: the file's ring contents, head, count, lost and
 * mask; readers take only this. Never taken in interrupt context, so no
 * interrupts are disabled; O(1) work under it.
 */
static DEFINE_MUTEX(amdqp_event_files_lock);
static LIST_HEAD(amdqp_event_files);

void amdqp_events_init_file(struct amdqp_file *f)
{
	INIT_LIST_HEAD(&f->ev_node);
	init_waitqueue_head(&f->ev_wait);
	spin_lock_init(&f->ev_lock);
}

/*
 * Queue one record on every subscribed fd. Called with amdqp_lock held (or
 * not); may sleep. @pid is translated per reader.
 */
void amdqp_emit(u32 type, struct pid *pid, u32 gpu_id, u32 queue_id,
		int error, u64 data)
{
	struct amdqp_file *f;
	u64 now = amdqp_now_ns();

	might_sleep();
	mutex_lock(&amdqp_event_files_lock);
	list_for_each_entry(f, &amdqp_event_files, ev_node) {
		struct amdqp_event *ev;

		spin_lock(&f->ev_lock);
		if (!(f->ev_mask & BIT_ULL(type))) {
			spin_unlock(&f->ev_lock);
			continue;
		}
		if (f->ev_count == AMDQP_EVENT_RING) {
			f->ev_lost++;
			spin_unlock(&f->ev_lock);
			atomic64_inc(&amdqp_stats.events_lost);
			wake_up_interruptible(&f->ev_wait);
			continue;
		}
		ev = &f->ev_ring[(f->ev_head + f->ev_count) % AMDQP_EVENT_RING];
		ev->type = type;
		ev->size = sizeof(*ev);
		ev->timestamp_ns = now;
		ev->pid = pid ? pid_nr_ns(pid, f->pid_ns) : 0;
		ev->gpu_id = gpu_id;
		ev->queue_id = queue_id;
		ev->error = error;
		ev->data = data;
		f->ev_count++;
		spin_unlock(&f->ev_lock);
		wake_up_interruptible(&f->ev_wait);
	}
	mutex_unlock(&amdqp_event_files_lock);
}

long amdqp_ioctl_set_event_mask(struct amdqp_file *f, void __user *arg,
				u32 size)
{
	struct amdqp_event *ring = NULL, *old;
	struct amdqp_event_mask m;
	int ret;

	ret = copy_struct_from_user(&m, sizeof(m), arg, size);
	if (ret)
		return ret;
	if (m.mask & ~AMDQP_EVENT_MASK_ALL)
		return -EINVAL;
	if (m.mask) {
		m.mask |= BIT_ULL(AMDQP_EVENT_OVERFLOW);
		/* Lives as long as the fd: charged to the caller's memcg. */
		ring = kvcalloc(AMDQP_EVENT_RING, sizeof(*ring),
				GFP_KERNEL_ACCOUNT | __GFP_NOWARN);
		if (!ring)
			return -ENOMEM;
	}

	mutex_lock(&amdqp_event_files_lock);
	spin_lock(&f->ev_lock);
	old = NULL;
	if (f->ev_ring && m.mask) {
		/* Keep what is queued; only the filter changes. */
	} else if (m.mask) {
		f->ev_ring = ring;
		ring = NULL;
		list_add_tail(&f->ev_node, &amdqp_event_files);
	} else if (f->ev_ring) {
		old = f->ev_ring;
		list_del_init(&f->ev_node);
		f->ev_ring = NULL;
		f->ev_count = 0;
		f->ev_head = 0;
		f->ev_lost = 0;
	}
	f->ev_mask = m.mask;
	spin_unlock(&f->ev_lock);
	mutex_unlock(&amdqp_event_files_lock);

	kvfree(old);
	kvfree(ring);
	return 0;
}

static bool amdqp_events_pending(struct amdqp_file *f)
{
	bool ret;

	spin_lock(&f->ev_lock);
	ret = f->ev_count || f->ev_lost;
	spin_unlock(&f->ev_lock);
	return ret;
}

/* Take one record off the ring, the overflow notice after the kept ones. */
static bool amdqp_event_pop(struct amdqp_file *f, struct amdqp_event *ev)
{
	bool got = true;

	spin_lock(&f->ev_lock);
	if (f->ev_count) {
		*ev = f->ev_ring[f->ev_head];
		f->ev_head = (f->ev_head + 1) % AMDQP_EVENT_RING;
		f->ev_count--;
	} else if (f->ev_lost) {
		memset(ev, 0, sizeof(*ev));
		ev->type = AMDQP_EVENT_OVERFLOW;
		ev->size = sizeof(*ev);
		ev->timestamp_ns = amdqp_now_ns();
		ev->data = f->ev_lost;
		f->ev_lost = 0;
	} else {
		got = false;
	}
	spin_unlock(&f->ev_lock);
	return got;
}

static void amdqp_event_unpop(struct amdqp_file *f,
			      const struct amdqp_event *ev)
{
	spin_lock(&f->ev_lock);
	if (ev->type == AMDQP_EVENT_OVERFLOW && !ev->pid && !ev->gpu_id) {
		f->ev_lost += ev->data;
	} else if (f->ev_count < AMDQP_EVENT_RING && f->ev_ring) {
		f->ev_head = (f->ev_head + AMDQP_EVENT_RING - 1) %
			     AMDQP_EVENT_RING;
		f->ev_ring[f->ev_head] = *ev;
		f->ev_count++;
	} else {
		f->ev_lost++;
	}
	spin_unlock(&f->ev_lock);
}

ssize_t amdqp_read(struct file *filp, char __user *buf, size_t len,
		   loff_t *off)
{
	struct amdqp_file *f = filp->private_data;
	struct amdqp_event ev;
	size_t done = 0;
	int ret;

	if (len < sizeof(ev))
		return -EINVAL;
	if (!READ_ONCE(f->ev_mask))
		return -EINVAL;

	while (!amdqp_events_pending(f)) {
		if (filp->f_flags & O_NONBLOCK)
			return -EAGAIN;
		ret = wait_event_interruptible(f->ev_wait,
					       amdqp_events_pending(f) ||
					       !READ_ONCE(f->ev_mask));
		if (ret)
			return ret;
		if (!READ_ONCE(f->ev_mask))
			return -EINVAL;
	}

	while (len - done >= sizeof(ev) && amdqp_event_pop(f, &ev)) {
		if (copy_to_user(buf + done, &ev, sizeof(ev))) {
			amdqp_event_unpop(f, &ev);
			return done ? done : -EFAULT;
		}
		done += sizeof(ev);
	}
	return done;
}

__poll_t amdqp_poll(struct file *filp, struct poll_table_struct *wait)
{
	struct amdqp_file *f = filp->private_data;

	poll_wait(filp, &f->ev_wait, wait);
	return amdqp_events_pending(f) ? EPOLLIN | EPOLLRDNORM : 0;
}

void amdqp_events_release(struct amdqp_file *f)
{
	struct amdqp_event *ring;

	mutex_lock(&amdqp_event_files_lock);
	spin_lock(&f->ev_lock);
	ring = f->ev_ring;
	if (ring)
		list_del_init(&f->ev_node);
	f->ev_ring = NULL;
	f->ev_mask = 0;
	spin_unlock(&f->ev_lock);
	mutex_unlock(&amdqp_event_files_lock);
	kvfree(ring);
}
