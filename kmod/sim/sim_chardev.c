// SPDX-License-Identifier: GPL-2.0
/*
 * /dev/amdqp_sim: processes create simulated queues and submit work to
 * them, through SUBMIT or, for user-mode queues, through a ring they map
 * (sim_uq.c). A queue lives as long as the fd that created it, which is
 * what a KFD queue does with its process; a mapping of a ring keeps that
 * fd's file open, as any mapping of a file does.
 */
#include <linux/bitmap.h>
#include <linux/cred.h>
#include <linux/fs.h>
#include <linux/hrtimer.h>
#include <linux/log2.h>
#include <linux/miscdevice.h>
#include <linux/mm.h>
#include <linux/module.h>
#include <linux/sched.h>
#include <linux/sizes.h>
#include <linux/slab.h>
#include <linux/uaccess.h>
#include <linux/amdqp.h>
#include <linux/amdqp_sim.h>

#include "amdqp_backend.h"
#include "sim.h"

#define SIM_MAX_SUBMIT		4096
#define SIM_MAX_PENDING		SZ_1M

/* mmap offsets of rings: 2 MiB apart, more than a ring and its page. */
#define SIM_MMAP_SHIFT		21

struct sim_file {
	struct mutex lock;		/* queues, next_mmap */
	struct list_head queues;	/* sim_queue.file_node; lock */
	u64 next_mmap;			/* lock */
};

static void sim_queue_free(struct kref *ref)
{
	struct sim_queue *sq = container_of(ref, struct sim_queue, ref);
	struct sim_work *w, *tmp;

	list_for_each_entry_safe(w, tmp, &sq->work, node)
		kfree(w);
	if (sq->uq)
		sim_ring_put(sq->uq);
	put_pid(sq->owner);
	sim_dev_put(sq->sd);
	kfree(sq);
}

void sim_queue_put(struct sim_queue *sq)
{
	kref_put(&sq->ref, sim_queue_free);
}

/* Idempotent: the fd, DESTROY_QUEUE and device removal may all try. */
void sim_queue_destroy(struct sim_queue *sq)
{
	struct sim_dev *sd = sq->sd;
	bool first;

	mutex_lock(&sd->qlock);
	spin_lock_irq(&sd->lock);
	first = !sq->destroyed;
	if (first) {
		sq->destroyed = true;
		sq->mapped = false;
		sim_queue_discard_locked(sq);
		list_del_init(&sq->dev_node);
		list_del_init(&sq->uq_node);
	}
	spin_unlock_irq(&sd->lock);
	/* amdqp drops its reference through queue_release. */
	if (first && sq->aq)
		amdqp_queue_unregister(sq->aq);
	mutex_unlock(&sd->qlock);
	sim_gpu_kick(sd);
}

static int sim_open(struct inode *inode, struct file *filp)
{
	struct sim_file *f;

	f = kzalloc(sizeof(*f), GFP_KERNEL);
	if (!f)
		return -ENOMEM;
	mutex_init(&f->lock);
	INIT_LIST_HEAD(&f->queues);
	filp->private_data = f;
	return nonseekable_open(inode, filp);
}

static int sim_release(struct inode *inode, struct file *filp)
{
	struct sim_file *f = filp->private_data;
	struct sim_queue *sq, *tmp;
	struct sim_dev *reported[8];
	unsigned int nrep = 0, i;

	list_for_each_entry_safe(sq, tmp, &f->queues, file_node) {
		struct sim_dev *sd = sq->sd;
		/* amdqp knows of the queues it was told about, no others. */
		bool was_live = !READ_ONCE(sq->destroyed) && sq->aq;

		list_del(&sq->file_node);
		sim_queue_destroy(sq);
		/* The owner went away: tell amdqp once per device. */
		for (i = 0; i < nrep && reported[i] != sd; i++)
			;
		if (was_live && i == nrep) {
			/* qlock keeps the amdqp device from going away. */
			mutex_lock(&sd->qlock);
			if (!sd->removed)
				amdqp_report_process_exit(sd->adev, sq->owner);
			mutex_unlock(&sd->qlock);
			if (nrep < ARRAY_SIZE(reported))
				reported[nrep++] = sd;
		}
		sim_queue_put(sq);
	}
	kfree(f);
	return 0;
}

static struct sim_queue *sim_file_find_locked(struct sim_file *f,
					      u32 gpu_id, u32 queue_id)
{
	struct sim_queue *sq;

	lockdep_assert_held(&f->lock);
	list_for_each_entry(sq, &f->queues, file_node)
		if (sq->sd->gpu_id == gpu_id && sq->queue_id == queue_id)
			return sq;
	return NULL;
}

/* Find a queue this fd created; returns it with a reference. */
static struct sim_queue *sim_file_queue(struct sim_file *f, u32 gpu_id,
					u32 queue_id)
{
	struct sim_queue *sq;

	mutex_lock(&f->lock);
	sq = sim_file_find_locked(f, gpu_id, queue_id);
	if (sq)
		kref_get(&sq->ref);
	mutex_unlock(&f->lock);
	return sq;
}

/*
 * A user-mode queue's ring: where the caller will map it and how large,
 * and room for mmap_offset in the caller's struct.
 */
static int sim_check_usermode(const struct amdqp_sim_create_queue *c,
			      u32 size)
{
	if (size < offsetofend(struct amdqp_sim_create_queue, mmap_offset))
		return -EINVAL;
	if (!c->ring_va || !PAGE_ALIGNED(c->ring_va))
		return -EINVAL;
	if (c->ring_size < AMDQP_SIM_RING_MIN ||
	    c->ring_size > AMDQP_SIM_RING_MAX ||
	    !is_power_of_2(c->ring_size))
		return -EINVAL;
	if (!access_ok(u64_to_user_ptr(c->ring_va),
		       c->ring_size + AMDQP_SIM_CTL_SIZE))
		return -EINVAL;
	return 0;
}

static long sim_create_queue(struct sim_file *f, void __user *arg, u32 size)
{
	struct amdqp_sim_create_queue c;
	struct amdqp_queue_desc desc = {};
	struct sim_queue *sq;
	struct sim_dev *sd;
	long ret;

	BUILD_BUG_ON(AMDQP_SIM_RING_MAX + AMDQP_SIM_CTL_SIZE >
		     1UL << SIM_MMAP_SHIFT);
	BUILD_BUG_ON(sizeof(struct amdqp_sim_uq_ctl) != AMDQP_SIM_CTL_SIZE);
	BUILD_BUG_ON(AMDQP_SIM_CTL_SIZE % PAGE_SIZE);
	ret = copy_struct_from_user(&c, sizeof(c), arg, size);
	if (ret)
		return ret;
	if (c.flags & ~AMDQP_SIM_QUEUE_USERMODE ||
	    c.priority > AMDQP_PRIORITY_MAX)
		return -EINVAL;
	if (c.flags & AMDQP_SIM_QUEUE_USERMODE) {
		ret = sim_check_usermode(&c, size);
		if (ret)
			return ret;
	}
	c.mmap_offset = 0;
	sd = sim_dev_find_get(c.gpu_id);
	if (!sd)
		return -ENODEV;

	sq = kzalloc(sizeof(*sq), GFP_KERNEL);
	if (!sq) {
		sim_dev_put(sd);
		return -ENOMEM;
	}
	kref_init(&sq->ref);
	INIT_LIST_HEAD(&sq->work);
	INIT_LIST_HEAD(&sq->dev_node);
	INIT_LIST_HEAD(&sq->uq_node);
	init_waitqueue_head(&sq->done_wait);
	sq->sd = sd;			/* the reference from the lookup */
	sq->owner = get_pid(task_tgid(current));
	sq->priority = c.priority;
	sq->mapped = true;
	sim_queue_init_cu_mask(sq);
	if (c.flags & AMDQP_SIM_QUEUE_USERMODE) {
		sq->uq = sim_ring_alloc(c.ring_va, c.ring_size);
		if (!sq->uq) {
			ret = -ENOMEM;
			goto put;
		}
	}

	mutex_lock(&sd->qlock);
	if (sd->removed) {
		ret = -ENODEV;
		goto unlock;
	}
	spin_lock_irq(&sd->lock);
	sq->queue_id = ++sd->next_queue_id;
	if (!c.ring_va) {
		c.ring_va = sd->next_ring_va;
		sd->next_ring_va += SZ_1M;
	}
	spin_unlock_irq(&sd->lock);

	/* A stock amdgpu (no glue) tells amdqp nothing: see amdqp_managed. */
	if (READ_ONCE(sd->amdqp_managed)) {
		desc.owner = sq->owner;
		desc.uid = current_euid();
		desc.queue_id = sq->queue_id;
		desc.ring_va = c.ring_va;
		desc.ring_size = c.ring_size ? c.ring_size : SZ_64K;
		desc.priority = c.priority;
		desc.priv = sq;
		kref_get(&sq->ref);	/* amdqp's, dropped in queue_release */
		sq->aq = amdqp_queue_register(sd->adev, &desc);
		if (IS_ERR(sq->aq)) {
			ret = PTR_ERR(sq->aq);
			sq->aq = NULL;
			kref_put(&sq->ref, sim_queue_free);	/* not the last */
			goto unlock;
		}
		/*
		 * The firmware dispatches at the effective priority: what
		 * was asked, clamped to the owner's ceiling. Not on the
		 * device's lists yet: no lock needed for the write.
		 */
		sq->priority = amdqp_queue_priority(sq->aq);
	}
	spin_lock_irq(&sd->lock);
	list_add_tail(&sq->dev_node, &sd->queues);
	if (sq->uq) {
		list_add_tail(&sq->uq_node, &sd->uqueues);
		sd->db_active_ns = ktime_get_ns();
	}
	spin_unlock_irq(&sd->lock);
	mutex_unlock(&sd->qlock);
	if (sq->uq)
		sim_gpu_kick(sd);	/* its doorbell is polled from now on */

	mutex_lock(&f->lock);
	if (sq->uq) {
		sq->uq->mmap_offset = ++f->next_mmap << SIM_MMAP_SHIFT;
		c.mmap_offset = sq->uq->mmap_offset;
	}
	list_add_tail(&sq->file_node, &f->queues);
	mutex_unlock(&f->lock);

	c.queue_id = sq->queue_id;
	if (copy_to_user(arg, &c, min_t(size_t, size, sizeof(c))))
		return -EFAULT;	/* the queue exists; close() cleans up */
	return 0;

unlock:
	mutex_unlock(&sd->qlock);
put:
	sim_queue_put(sq);
	return ret;
}

static long sim_destroy_queue(struct sim_file *f, void __user *arg, u32 size)
{
	struct amdqp_sim_queue_id id;
	struct sim_queue *sq;
	long ret;

	ret = copy_struct_from_user(&id, sizeof(id), arg, size);
	if (ret)
		return ret;
	mutex_lock(&f->lock);
	sq = sim_file_find_locked(f, id.gpu_id, id.queue_id);
	if (sq)
		list_del(&sq->file_node);
	mutex_unlock(&f->lock);
	if (!sq)
		return -ENOENT;
	sim_queue_destroy(sq);
	sim_queue_put(sq);	/* the fd's */
	return 0;
}

static long sim_submit(struct sim_file *f, void __user *arg, u32 size)
{
	struct amdqp_sim_submit s;
	struct sim_queue *sq;
	struct sim_work *w;
	struct sim_dev *sd;
	long ret;

	ret = copy_struct_from_user(&s, sizeof(s), arg, size);
	if (ret)
		return ret;
	if (!s.duration_ns || s.duration_ns > SIM_MAX_DURATION_NS ||
	    !s.count || s.count > SIM_MAX_SUBMIT)
		return -EINVAL;
	sq = sim_file_queue(f, s.gpu_id, s.queue_id);
	if (!sq)
		return -ENOENT;
	sd = sq->sd;
	if (sq->uq) {
		ret = -EINVAL;		/* fed through its ring only */
		goto put;
	}
	w = kzalloc(sizeof(*w), GFP_KERNEL);
	if (!w) {
		ret = -ENOMEM;
		goto put;
	}
	w->duration_ns = s.duration_ns;
	w->width = s.width;
	w->count = s.count;

	spin_lock_irq(&sd->lock);
	if (sq->destroyed) {
		ret = -ENODEV;
	} else if (sq->wptr - sq->rptr + s.count > SIM_MAX_PENDING) {
		ret = -ENOSPC;
	} else {
		if (list_empty(&sq->work))
			sq->head_since = ktime_get_ns();
		list_add_tail(&w->node, &sq->work);
		w = NULL;
		sq->wptr += s.count;
		s.seqno = sq->wptr;
	}
	spin_unlock_irq(&sd->lock);
	kfree(w);
	if (!ret) {
		sim_gpu_doorbell(sd);
		if (copy_to_user(arg, &s, min_t(size_t, size, sizeof(s))))
			ret = -EFAULT;
	}
put:
	sim_queue_put(sq);
	return ret;
}

static bool sim_done(struct sim_queue *sq, u64 seqno)
{
	return READ_ONCE(sq->rptr) >= seqno || READ_ONCE(sq->destroyed);
}

static long sim_wait(struct sim_file *f, void __user *arg, u32 size)
{
	struct amdqp_sim_wait wt;
	struct sim_queue *sq;
	struct sim_dev *sd;
	long ret;

	ret = copy_struct_from_user(&wt, sizeof(wt), arg, size);
	if (ret)
		return ret;
	sq = sim_file_queue(f, wt.gpu_id, wt.queue_id);
	if (!sq)
		return -ENOENT;
	sd = sq->sd;
	if (!wt.seqno || wt.seqno > READ_ONCE(sq->wptr)) {
		ret = -EINVAL;
		goto put;
	}
	if (!sim_done(sq, wt.seqno)) {
		if (!wt.timeout_ns) {
			ret = -ETIMEDOUT;
			goto put;
		}
		ret = wait_event_interruptible_hrtimeout(sq->done_wait,
							 sim_done(sq, wt.seqno),
							 ns_to_ktime(wt.timeout_ns));
		if (ret == -ETIME)
			ret = -ETIMEDOUT;
		if (ret)
			goto put;
	}

	spin_lock_irq(&sd->lock);
	if (wt.seqno > sq->lost_from && wt.seqno <= sq->lost_upto)
		ret = -EIO;		/* thrown away by a reset */
	else if (sq->rptr < wt.seqno)
		ret = -ENODEV;		/* destroyed under us */
	else if (sq->rptr - wt.seqno < SIM_DONE_HISTORY)
		wt.completed_ns = sq->done_ns[wt.seqno % SIM_DONE_HISTORY];
	else
		wt.completed_ns = 0;
	spin_unlock_irq(&sd->lock);
	if (!ret && copy_to_user(arg, &wt, min_t(size_t, size, sizeof(wt))))
		ret = -EFAULT;
put:
	sim_queue_put(sq);
	return ret;
}

static long sim_query(void __user *arg, u32 size)
{
	struct amdqp_sim_query qr;
	struct sim_queue *sq;
	struct sim_dev *sd;
	long ret;

	ret = copy_struct_from_user(&qr, sizeof(qr), arg, size);
	if (ret)
		return ret;
	if (qr.pad)
		return -EINVAL;
	sd = sim_dev_find_get(qr.gpu_id);
	if (!sd)
		return -ENODEV;
	ret = -ENOENT;
	spin_lock_irq(&sd->lock);
	list_for_each_entry(sq, &sd->queues, dev_node) {
		if (sq->queue_id != qr.queue_id)
			continue;
		qr.rptr = sq->rptr;
		qr.wptr = sq->wptr;
		qr.busy_ns = sq->busy_ns;
		if (sq->running)
			qr.busy_ns += ktime_get_ns() - sq->run_start;
		qr.preemptions = sq->preemptions;
		qr.mapped = sq->mapped;
		ret = 0;
		break;
	}
	spin_unlock_irq(&sd->lock);
	sim_dev_put(sd);
	if (!ret && copy_to_user(arg, &qr, min_t(size_t, size, sizeof(qr))))
		ret = -EFAULT;
	return ret;
}

static long sim_update_queue(struct sim_file *f, void __user *arg, u32 size)
{
	struct amdqp_sim_update_queue u;
	struct sim_queue *sq;
	long ret;

	if (size < sizeof(u))
		return -EINVAL;
	ret = copy_struct_from_user(&u, sizeof(u), arg, size);
	if (ret)
		return ret;
	if (u.queue_percentage > 100 || u.priority > AMDQP_PRIORITY_MAX)
		return -EINVAL;
	sq = sim_file_queue(f, u.gpu_id, u.queue_id);
	if (!sq)
		return -ENOENT;
	ret = sim_queue_update(sq, !u.queue_percentage, u.priority);
	if (ret == -ENOENT)
		ret = -ENODEV;		/* destroyed with its device */
	sim_queue_put(sq);
	return ret;
}

/* The fixed part of SET_CU_MASK and GET_CU_MASK. */
static int sim_cu_mask_args(struct amdqp_sim_cu_mask *m, void __user *arg,
			    u32 size)
{
	int ret;

	BUILD_BUG_ON(AMDQP_SIM_CU_MASK_MAX_BITS < SIM_MAX_SLOTS);
	if (size < sizeof(*m))
		return -EINVAL;
	ret = copy_struct_from_user(m, sizeof(*m), arg, size);
	if (ret)
		return ret;
	if (m->flags & ~AMDQP_SIM_CU_MASK_EFFECTIVE || m->pad ||
	    m->num_bits % 32 || m->num_bits > AMDQP_SIM_CU_MASK_MAX_BITS)
		return -EINVAL;
	return 0;
}

static long sim_set_cu_mask(struct sim_file *f, void __user *arg, u32 size)
{
	u32 words[AMDQP_SIM_CU_MASK_MAX_BITS / 32];
	DECLARE_BITMAP(mask, AMDQP_SIM_CU_MASK_MAX_BITS);
	struct amdqp_sim_cu_mask m;
	struct sim_queue *sq;
	u32 slots;
	long ret;

	ret = sim_cu_mask_args(&m, arg, size);
	if (ret)
		return ret;
	if (!m.num_bits || m.flags)
		return -EINVAL;
	if (copy_from_user(words, u64_to_user_ptr(m.mask_ptr),
			   m.num_bits / 8))
		return -EFAULT;
	bitmap_zero(mask, AMDQP_SIM_CU_MASK_MAX_BITS);
	bitmap_from_arr32(mask, words, m.num_bits);
	sq = sim_file_queue(f, m.gpu_id, m.queue_id);
	if (!sq)
		return -ENOENT;
	slots = sq->sd->slots;
	/* No slot, or one the device does not have. */
	if (bitmap_empty(mask, m.num_bits) ||
	    find_next_bit(mask, m.num_bits, slots) < m.num_bits) {
		ret = -EINVAL;
		goto put;
	}
	ret = sim_queue_set_cu_mask(sq, mask);
	if (ret == -ENOENT)
		ret = -ENODEV;		/* destroyed with its device */
	m.num_slots = slots;
	if (!ret && copy_to_user(arg, &m, sizeof(m)))
		ret = -EFAULT;
put:
	sim_queue_put(sq);
	return ret;
}

static long sim_get_cu_mask(struct sim_file *f, void __user *arg, u32 size)
{
	u32 words[AMDQP_SIM_CU_MASK_MAX_BITS / 32];
	DECLARE_BITMAP(mask, AMDQP_SIM_CU_MASK_MAX_BITS);
	struct amdqp_sim_cu_mask m;
	struct sim_queue *sq;
	struct sim_dev *sd;
	long ret;

	ret = sim_cu_mask_args(&m, arg, size);
	if (ret)
		return ret;
	sq = sim_file_queue(f, m.gpu_id, m.queue_id);
	if (!sq)
		return -ENOENT;
	sd = sq->sd;
	bitmap_zero(mask, AMDQP_SIM_CU_MASK_MAX_BITS);
	spin_lock_irq(&sd->lock);
	ret = sq->destroyed ? -ENODEV : 0;
	bitmap_copy(mask, m.flags & AMDQP_SIM_CU_MASK_EFFECTIVE ?
			  sq->cu_mask : sq->own_mask, sd->slots);
	spin_unlock_irq(&sd->lock);
	m.num_slots = sd->slots;
	sim_queue_put(sq);
	if (ret)
		return ret;
	if (m.num_bits) {
		bitmap_to_arr32(words, mask, m.num_bits);
		if (copy_to_user(u64_to_user_ptr(m.mask_ptr), words,
				 m.num_bits / 8))
			return -EFAULT;
	}
	if (copy_to_user(arg, &m, sizeof(m)))
		return -EFAULT;
	return 0;
}

/* The ring of a user-mode queue of this fd, named by its mmap offset. */
static int sim_mmap(struct file *filp, struct vm_area_struct *vma)
{
	struct sim_file *f = filp->private_data;
	u64 offset = (u64)vma->vm_pgoff << PAGE_SHIFT;
	struct sim_ring *ring = NULL;
	struct sim_queue *sq;
	int ret = -EINVAL;

	mutex_lock(&f->lock);
	list_for_each_entry(sq, &f->queues, file_node) {
		if (!sq->uq || sq->uq->mmap_offset != offset)
			continue;
		if (READ_ONCE(sq->destroyed)) {
			ret = -ENODEV;
		} else {
			ring = sq->uq;
			sim_ring_get(ring);
		}
		break;
	}
	mutex_unlock(&f->lock);
	if (!ring)
		return ret;
	ret = sim_ring_mmap(ring, vma);
	sim_ring_put(ring);
	return ret;
}

/* The whole command this module was built with for number @nr, or 0. */
static unsigned int sim_ioctl_cmd(unsigned int nr)
{
	switch (nr) {
	case _IOC_NR(AMDQP_SIM_IOC_CREATE_QUEUE):
		return AMDQP_SIM_IOC_CREATE_QUEUE;
	case _IOC_NR(AMDQP_SIM_IOC_DESTROY_QUEUE):
		return AMDQP_SIM_IOC_DESTROY_QUEUE;
	case _IOC_NR(AMDQP_SIM_IOC_SUBMIT):
		return AMDQP_SIM_IOC_SUBMIT;
	case _IOC_NR(AMDQP_SIM_IOC_WAIT):
		return AMDQP_SIM_IOC_WAIT;
	case _IOC_NR(AMDQP_SIM_IOC_QUERY):
		return AMDQP_SIM_IOC_QUERY;
	case _IOC_NR(AMDQP_SIM_IOC_UPDATE_QUEUE):
		return AMDQP_SIM_IOC_UPDATE_QUEUE;
	case _IOC_NR(AMDQP_SIM_IOC_SET_CU_MASK):
		return AMDQP_SIM_IOC_SET_CU_MASK;
	case _IOC_NR(AMDQP_SIM_IOC_GET_CU_MASK):
		return AMDQP_SIM_IOC_GET_CU_MASK;
	default:
		return 0;
	}
}

/* Largest argument size any version of a structure may have (as amdqp). */
#define SIM_IOC_MAX_SIZE	4096

static long sim_ioctl(struct file *filp, unsigned int cmd, unsigned long arg)
{
	struct sim_file *f = filp->private_data;
	void __user *uarg = (void __user *)arg;
	u32 size = _IOC_SIZE(cmd);
	unsigned int known;

	if (_IOC_TYPE(cmd) != AMDQP_SIM_IOC_MAGIC)
		return -ENOTTY;
	/* amdqp.h's rules: the direction is part of the command's identity. */
	known = sim_ioctl_cmd(_IOC_NR(cmd));
	if (!known || _IOC_DIR(cmd) != _IOC_DIR(known))
		return -ENOTTY;
	/* Another size must be one some version of a structure can have. */
	if (cmd != known &&
	    (size < 8 || size > SIM_IOC_MAX_SIZE || size % 8))
		return -EINVAL;
	switch (_IOC_NR(cmd)) {
	case _IOC_NR(AMDQP_SIM_IOC_CREATE_QUEUE):
		return sim_create_queue(f, uarg, size);
	case _IOC_NR(AMDQP_SIM_IOC_DESTROY_QUEUE):
		return sim_destroy_queue(f, uarg, size);
	case _IOC_NR(AMDQP_SIM_IOC_SUBMIT):
		return sim_submit(f, uarg, size);
	case _IOC_NR(AMDQP_SIM_IOC_WAIT):
		return sim_wait(f, uarg, size);
	case _IOC_NR(AMDQP_SIM_IOC_QUERY):
		return sim_query(uarg, size);
	case _IOC_NR(AMDQP_SIM_IOC_UPDATE_QUEUE):
		return sim_update_queue(f, uarg, size);
	case _IOC_NR(AMDQP_SIM_IOC_SET_CU_MASK):
		return sim_set_cu_mask(f, uarg, size);
	case _IOC_NR(AMDQP_SIM_IOC_GET_CU_MASK):
		return sim_get_cu_mask(f, uarg, size);
	default:
		return -ENOTTY;	/* not reached: sim_ioctl_cmd() knows them all */
	}
}

static const struct file_operations sim_fops = {
	.owner = THIS_MODULE,
	.open = sim_open,
	.release = sim_release,
	.unlocked_ioctl = sim_ioctl,
	.compat_ioctl = compat_ptr_ioctl,
	.mmap = sim_mmap,
};

static struct miscdevice sim_misc = {
	.minor = MISC_DYNAMIC_MINOR,
	.name = "amdqp_sim",
	.fops = &sim_fops,
	.mode = 0666,
};

int sim_chardev_init(void)
{
	return misc_register(&sim_misc);
}

void sim_chardev_exit(void)
{
	misc_deregister(&sim_misc);
}
