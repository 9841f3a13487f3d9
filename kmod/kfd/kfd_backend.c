// SPDX-License-Identifier: GPL-2.0
/*
 * amdqp kfd backend: drives real AMD GPU user queues through the amdkfd
 * queue control interface (kfd-glue/patches, amdkfd_qctl.h).
 *
 * amdgpu is not a link-time dependency: the interface is resolved with
 * symbol_get() when amdqp loads, and again whenever a module named amdgpu
 * becomes live (module notifier). Once bound, the symbol references are
 * dropped again, so that amdgpu stays unloadable: when it goes away,
 * amdkfd calls our detach callback before tearing anything down, and we
 * unbind (wait for our calls in flight, unregister our devices, drop every
 * queue reference). amdqp therefore loads and unloads in either order
 * relative to amdgpu, and runs with the sim backend only while the glue is
 * missing. Any module that exports the interface binds the same way (the
 * test stub kmod/testing/ does).
 *
 * CONFINE needs kfd_qctl_set_cu_mask() (kfd-glue patch 0005): it is
 * resolved like the rest but optional, and a device is registered with
 * the CUs per XCC the glue reports only when the call is there, so that
 * amdqp still binds to a glue without it and answers CONFINE for its
 * devices with EOPNOTSUPP.
 *
 * No queue may stay off the hardware with no one to resume it: every
 * queue the glue reports suspended by us is remembered (ctl_suspended)
 * until a resume succeeds, and unbinding resumes what is left before
 * unregistering (after which the glue drops any suspension still set).
 *
 * Locking, outermost first:
 *  bind_mutex   serialises bind and unbind.
 *  be_rwsem     read: held across every call into amdkfd made on behalf of
 *               the core (suspend/resume); write: flips @bound.
 *  be_lock      our device list and each device's queue list. Taken in
 *               amdkfd notifications (possibly under the owner's process
 *               mutex); amdqp core functions may be called under it.
 *  kq_mutex     the list of all queue wrappers and their amdkfd
 *               references. Innermost: nothing is called under it but
 *               kfd_qctl_queue_put(). It is taken by ops->queue_release,
 *               which the core may call under its own amdqp_lock.
 */

#define pr_fmt(fmt) "amdqp: " fmt

#include <linux/atomic.h>
#include <linux/build_bug.h>
#include <linux/err.h>
#include <linux/kernel.h>
#include <linux/list.h>
#include <linux/math.h>
#include <linux/minmax.h>
#include <linux/module.h>
#include <linux/mutex.h>
#include <linux/notifier.h>
#include <linux/pid.h>
#include <linux/rwsem.h>
#include <linux/slab.h>
#include <linux/string.h>
#include <linux/version.h>
#include <linux/workqueue.h>
#include <linux/amdqp.h>

#include "../amdqp_backend.h"
#include "amdkfd_qctl.h"

/* Linux 6.13 made symbol namespaces string literals. */
#if LINUX_VERSION_MAJOR > 6 || \
	(LINUX_VERSION_MAJOR == 6 && LINUX_VERSION_PATCHLEVEL >= 13)
MODULE_IMPORT_NS("AMDKFD_QCTL");
#else
MODULE_IMPORT_NS(AMDKFD_QCTL);
#endif

/* The amdkfd functions we use, resolved at bind time. */
struct kfdbe_api {
	int (*register_client)(struct kfd_qctl_client *client);
	void (*unregister_client)(struct kfd_qctl_client *client);
	int (*walk_devices)(kfd_qctl_device_fn fn, void *arg);
	int (*walk_queues)(kfd_qctl_queue_fn fn, void *arg);
	void (*queue_get)(struct kfd_qctl_queue *q);
	void (*queue_put)(struct kfd_qctl_queue *q);
	int (*suspend)(struct kfd_qctl_queue **qs, unsigned int n,
		       u32 grace_period, int *results);
	int (*resume)(struct kfd_qctl_queue **qs, unsigned int n,
		      int *results);
	/* optional: NULL where the glue predates CU masks */
	int (*set_cu_mask)(struct kfd_qctl_queue **qs, unsigned int n,
			   const u32 *const *masks, u32 grace_period,
			   int *results);
};

struct kfdbe_dev {
	struct list_head node;		/* kfdbe_devs; be_lock */
	struct list_head queues;	/* kfdbe_queue.dev_node; be_lock */
	struct amdqp_device *adev;
	u32 gpu_id;
	u32 sched_mode;
	atomic64_t sched_updates;
	atomic64_t unmap_packets;
	atomic64_t map_packets;
	atomic64_t preempt_failures;
	atomic64_t resets;
};

struct kfdbe_queue {
	struct list_head dev_node;	/* kfdbe_dev.queues; be_lock */
	struct list_head all_node;	/* kfdbe_all_queues; kq_mutex */
	struct kfd_qctl_queue *h;	/* kq_mutex; NULL once unbound */
	struct amdqp_queue *aq;
	struct pid *pid;
	u64 proc_id;			/* what exit and destroy events name */
	u32 queue_id;
	/*
	 * The glue holds the queue off for us. Written by kfdbe_apply()
	 * (be_rwsem read; the core serialises calls per device), read by
	 * kfdbe_unbind() after it flipped @bound under be_rwsem write.
	 */
	bool ctl_suspended;
	bool reset;			/* has_reset_queue seen: forget it */
};

static DEFINE_MUTEX(bind_mutex);
static DECLARE_RWSEM(be_rwsem);
static DEFINE_MUTEX(be_lock);
static DEFINE_MUTEX(kq_mutex);
static LIST_HEAD(kfdbe_devs);
static LIST_HEAD(kfdbe_all_queues);
static struct kfdbe_api api;
static bool bound;			/* be_rwsem */
static bool notifier_registered;
static struct kfd_qctl_client kfdbe_client;

/* --- ops called by the core ---------------------------------------- */

/*
 * The glue hands the grace period to CP_IQ_WAIT_TIME2.SCH_WAVE unchanged:
 * 8 bits of wait counts of 1K GPU clock cycles each (kfd_ioctl.h,
 * AMDKFD_IOC_DBG_TRAP suspend's grace_period), where 0 (or anything the
 * 8-bit mask truncates to 0) means no limit: the waves are never saved,
 * the unmap fence times out and KFD resets the whole GPU.
 *
 * Assumption, measured by tools/hw-validate (grace-unit check): a 1 GHz
 * GPU clock, so one count per us. The clock varies with the part and its
 * power state; at 2 GHz a count is 0.5 us and the real grace half the
 * requested one. The core already clamped @grace_us to AMDQP_GRACE_MAX_US.
 */
#define KFDBE_GRACE_US_PER_COUNT	1U
#define KFDBE_GRACE_MAX_COUNTS		255U	/* SCH_WAVE is 8 bits */
#define KFDBE_GRACE_DEFAULT		U32_MAX	/* USE_DEFAULT_GRACE_PERIOD */

static u32 kfdbe_grace_counts(u32 grace_us)
{
	BUILD_BUG_ON(DIV_ROUND_UP(AMDQP_GRACE_MAX_US, KFDBE_GRACE_US_PER_COUNT) >
		     KFDBE_GRACE_MAX_COUNTS);

	if (!grace_us)
		return KFDBE_GRACE_DEFAULT;
	/* Never 0 counts: that would be an infinite grace. */
	return clamp(DIV_ROUND_UP(grace_us, KFDBE_GRACE_US_PER_COUNT), 1U,
		     KFDBE_GRACE_MAX_COUNTS);
}

/*
 * Forget the queues the driver reset as hung (kfdbe_queue.reset): they
 * never run again and the glue no longer holds them, so the core must
 * neither count them as held nor keep retrying their resume. A work item,
 * because a core op must not take be_lock (kfdbe_remove_dev() waits for
 * ops under it).
 */
static void kfdbe_reset_fn(struct work_struct *work)
{
	struct kfdbe_queue *kq, *tmp;
	struct kfdbe_dev *kd;

	mutex_lock(&be_lock);
	list_for_each_entry(kd, &kfdbe_devs, node) {
		list_for_each_entry_safe(kq, tmp, &kd->queues, dev_node) {
			if (!READ_ONCE(kq->reset))
				continue;
			list_del_init(&kq->dev_node);
			/* may free kq through kfdbe_queue_release() */
			amdqp_queue_unregister(kq->aq);
		}
	}
	mutex_unlock(&be_lock);
}

static DECLARE_WORK(kfdbe_reset_work, kfdbe_reset_fn);

enum kfdbe_op {
	KFDBE_RESUME,
	KFDBE_SUSPEND,
	KFDBE_CONFINE,
};

/*
 * One call into the glue. Every entry of @results says what happened to
 * that queue, whatever the return value (amdkfd_qctl.h): the core
 * records each entry, so a device-wide failure that left some queues
 * changed is never taken for "nothing changed". @masks: KFDBE_CONFINE
 * only, in the layout the core and the glue share (amdqp_backend.h,
 * amdkfd_qctl.h: the words of XCC 0, then those of XCC 1, ...).
 */
static int kfdbe_apply(struct amdqp_device *adev, struct amdqp_queue **qs,
		       unsigned int n, int *results, enum kfdbe_op op,
		       const u32 *const *masks, u32 grace_us)
{
	struct kfdbe_dev *kd = amdqp_device_priv(adev);
	struct kfd_qctl_queue **hs;
	bool any_reset = false;
	unsigned int i;
	int ret;

	hs = kmalloc_array(n, sizeof(*hs), GFP_KERNEL);
	if (!hs)
		return -ENOMEM;

	down_read(&be_rwsem);
	if (!bound) {
		ret = -ENODEV;
		goto out;
	}
	if (op == KFDBE_CONFINE && !api.set_cu_mask) {
		/* Not reached: such devices register with cu_per_xcc 0. */
		for (i = 0; i < n; i++)
			results[i] = -EOPNOTSUPP;
		ret = -EOPNOTSUPP;
		goto out;
	}
	for (i = 0; i < n; i++) {
		struct kfdbe_queue *kq = amdqp_queue_priv(qs[i]);

		hs[i] = kq->h;
	}
	if (op == KFDBE_SUSPEND)
		ret = api.suspend(hs, n, kfdbe_grace_counts(grace_us), results);
	else if (op == KFDBE_RESUME)
		ret = api.resume(hs, n, results);
	else
		ret = api.set_cu_mask(hs, n, masks,
				      kfdbe_grace_counts(grace_us), results);
	for (i = 0; i < n; i++) {
		struct kfdbe_queue *kq = amdqp_queue_priv(qs[i]);

		if (!results[i]) {
			if (op != KFDBE_CONFINE)
				kq->ctl_suspended = op == KFDBE_SUSPEND;
		} else if (results[i] == -EACCES) {
			kq->ctl_suspended = false;
			WRITE_ONCE(kq->reset, true);
			any_reset = true;
		}
	}
	if (ret > 0) {
		atomic64_add(ret, &kd->sched_updates);
		if (kd->sched_mode == AMDQP_SCHED_HWS) {
			/* a runlist update unmaps and maps the runlist */
			atomic64_add(ret, &kd->unmap_packets);
			atomic64_add(ret, &kd->map_packets);
		} else if (op == KFDBE_CONFINE) {
			/* MES: a remove and an add per mapped queue */
			atomic64_add(DIV_ROUND_UP(ret, 2), &kd->unmap_packets);
			atomic64_add(ret / 2, &kd->map_packets);
		} else {
			atomic64_add(ret, op == KFDBE_SUSPEND ?
				     &kd->unmap_packets : &kd->map_packets);
		}
		ret = 0;
	} else if (ret == -ETIME) {
		atomic64_inc(&kd->preempt_failures);
	}
	if (any_reset) {
		/* Not a success: the queues are lost to their owner. */
		atomic64_inc(&kd->preempt_failures);
		amdqp_report_preempt_failure(adev, -EACCES);
		schedule_work(&kfdbe_reset_work);
	}
out:
	up_read(&be_rwsem);
	kfree(hs);
	return ret;
}

static int kfdbe_suspend(struct amdqp_device *adev, struct amdqp_queue **qs,
			 unsigned int n, int *results, u32 grace_us)
{
	return kfdbe_apply(adev, qs, n, results, KFDBE_SUSPEND, NULL, grace_us);
}

static int kfdbe_resume(struct amdqp_device *adev, struct amdqp_queue **qs,
			unsigned int n, int *results)
{
	return kfdbe_apply(adev, qs, n, results, KFDBE_RESUME, NULL, 0);
}

/*
 * AMDQP_IOC_CONFINE: kfd_qctl_set_cu_mask() (kfd-glue patch 0005) keeps
 * the owner's SET_CU_MASK apart from ours and writes their combination
 * into the MQD on every path that sets a CU mask, with one runlist update
 * per device under HWS, as the op's contract asks. Only devices of a glue
 * that has the call register with a cu_per_xcc, so only they get here.
 */
static int kfdbe_confine(struct amdqp_device *adev, struct amdqp_queue **qs,
			 unsigned int n, const u32 *const *masks, int *results,
			 u32 grace_us)
{
	return kfdbe_apply(adev, qs, n, results, KFDBE_CONFINE, masks,
			   grace_us);
}

static void kfdbe_get_counters(struct amdqp_device *adev,
			       struct amdqp_dev_counters *c)
{
	struct kfdbe_dev *kd = amdqp_device_priv(adev);

	c->sched_updates = atomic64_read(&kd->sched_updates);
	c->unmap_packets = atomic64_read(&kd->unmap_packets);
	c->map_packets = atomic64_read(&kd->map_packets);
	c->preempt_failures = atomic64_read(&kd->preempt_failures);
	c->resets = atomic64_read(&kd->resets);
}

/* May run under the core's amdqp_lock: takes kq_mutex only. */
static void kfdbe_queue_release(struct amdqp_queue *aq)
{
	struct kfdbe_queue *kq = amdqp_queue_priv(aq);

	mutex_lock(&kq_mutex);
	list_del(&kq->all_node);
	if (kq->h)
		api.queue_put(kq->h);
	mutex_unlock(&kq_mutex);
	put_pid(kq->pid);
	kfree(kq);
}

static const struct amdqp_backend_ops kfdbe_ops = {
	.suspend = kfdbe_suspend,
	.resume = kfdbe_resume,
	.confine = kfdbe_confine,
	.get_counters = kfdbe_get_counters,
	.queue_release = kfdbe_queue_release,
};

/* --- devices and queues (be_lock held) ------------------------------ */

static struct kfdbe_dev *kfdbe_find_dev(u32 gpu_id)
{
	struct kfdbe_dev *kd;

	lockdep_assert_held(&be_lock);
	list_for_each_entry(kd, &kfdbe_devs, node)
		if (kd->gpu_id == gpu_id)
			return kd;
	return NULL;
}

static void kfdbe_add_dev(const struct kfd_qctl_device_info *info)
{
	struct amdqp_device_desc desc = {
		.gpu_id = info->gpu_id,
		.backend = AMDQP_BACKEND_KFD,
		.num_xcc = info->num_xcc,
		.ops = &kfdbe_ops,
	};
	struct kfdbe_dev *kd;

	lockdep_assert_held(&be_lock);
	if (kfdbe_find_dev(info->gpu_id))
		return;
	/* Confinable where the glue has the call and the mask fits. */
	if (api.set_cu_mask && info->cu_per_xcc && info->num_xcc &&
	    amdqp_cu_mask_words(info->cu_per_xcc) * info->num_xcc <=
	    AMDQP_CU_MASK_MAX_WORDS)
		desc.cu_per_xcc = info->cu_per_xcc;
	switch (info->sched) {
	case KFD_QCTL_SCHED_HWS:
		desc.sched_mode = AMDQP_SCHED_HWS;
		break;
	case KFD_QCTL_SCHED_MES:
		desc.sched_mode = AMDQP_SCHED_MES;
		break;
	default:
		pr_info("kfd: gpu 0x%x runs without HWS/MES; not managed\n",
			info->gpu_id);
		return;
	}

	kd = kzalloc(sizeof(*kd), GFP_KERNEL);
	if (!kd)
		return;
	INIT_LIST_HEAD(&kd->queues);
	kd->gpu_id = info->gpu_id;
	kd->sched_mode = desc.sched_mode;
	desc.priv = kd;
	kd->adev = amdqp_device_register(&desc);
	if (IS_ERR(kd->adev)) {
		pr_warn("kfd: cannot register gpu 0x%x: %ld\n", info->gpu_id,
			PTR_ERR(kd->adev));
		kfree(kd);
		return;
	}
	list_add_tail(&kd->node, &kfdbe_devs);
}

/* Forget a device: the core unregisters its remaining queues. */
static void kfdbe_remove_dev(struct kfdbe_dev *kd)
{
	struct kfdbe_queue *kq, *tmp;

	lockdep_assert_held(&be_lock);
	list_for_each_entry_safe(kq, tmp, &kd->queues, dev_node)
		list_del_init(&kq->dev_node);
	list_del(&kd->node);
	amdqp_device_unregister(kd->adev);
	kfree(kd);
}

static void kfdbe_add_queue(struct kfd_qctl_queue *h,
			    const struct kfd_qctl_queue_info *info)
{
	struct amdqp_queue_desc desc = {
		.owner = info->pid,
		.uid = info->euid,
		.queue_id = info->queue_id,
		.ring_va = info->ring_base,
		.ring_size = info->ring_size,
		/*
		 * What the process chose at creation: the core clamps it to
		 * the ceiling of the owner's identity, so that a tenant's
		 * choice never outranks what the administrator granted
		 * (amdqp_ceiling.c). The firmware keeps KFD's own priority,
		 * which the glue cannot change; amdqp's (what SUSPEND_BELOW
		 * compares) is the effective one.
		 */
		.priority = min_t(u32, info->priority, AMDQP_PRIORITY_MAX),
	};
	struct kfdbe_queue *kq;
	struct kfdbe_dev *kd;

	lockdep_assert_held(&be_lock);
	if (info->type == KFD_QCTL_QUEUE_OTHER)
		return;
	if (!info->pid || !info->proc_id) {
		pr_warn_ratelimited("kfd: queue %u of gpu 0x%x has no owner; not managed\n",
				    info->queue_id, info->gpu_id);
		return;
	}
	kd = kfdbe_find_dev(info->gpu_id);
	if (!kd)
		return;
	list_for_each_entry(kq, &kd->queues, dev_node)
		if (kq->proc_id == info->proc_id &&
		    kq->queue_id == info->queue_id)
			return;		/* seen by both a walk and an event */

	kq = kzalloc(sizeof(*kq), GFP_KERNEL);
	if (!kq)
		return;
	kq->pid = get_pid(info->pid);
	kq->proc_id = info->proc_id;
	kq->queue_id = info->queue_id;
	api.queue_get(h);
	kq->h = h;
	mutex_lock(&kq_mutex);
	list_add_tail(&kq->all_node, &kfdbe_all_queues);
	mutex_unlock(&kq_mutex);

	desc.priv = kq;
	kq->aq = amdqp_queue_register(kd->adev, &desc);
	if (IS_ERR(kq->aq)) {
		mutex_lock(&kq_mutex);
		list_del(&kq->all_node);
		api.queue_put(kq->h);
		mutex_unlock(&kq_mutex);
		put_pid(kq->pid);
		kfree(kq);
		return;
	}
	list_add_tail(&kq->dev_node, &kd->queues);
}

/*
 * Unregister the queues of process @proc_id on @kd, or only @queue_id if
 * @one. Keyed on the glue's process id, never on a pid pointer: an exit
 * notification may come after the thread group was reaped. Returns a
 * reference to the owner's pid if a queue was dropped, else NULL.
 */
static struct pid *kfdbe_drop_queues(struct kfdbe_dev *kd, u64 proc_id,
				     bool one, u32 queue_id)
{
	struct kfdbe_queue *kq, *tmp;
	struct pid *owner = NULL;

	lockdep_assert_held(&be_lock);
	list_for_each_entry_safe(kq, tmp, &kd->queues, dev_node) {
		if (kq->proc_id != proc_id || (one && kq->queue_id != queue_id))
			continue;
		if (!owner)
			owner = get_pid(kq->pid);
		list_del_init(&kq->dev_node);
		/* may free kq through kfdbe_queue_release() */
		amdqp_queue_unregister(kq->aq);
	}
	return owner;
}

/* --- amdkfd notifications ------------------------------------------- */

static void kfdbe_notify(struct kfd_qctl_client *client,
			 const struct kfd_qctl_event *ev)
{
	struct kfdbe_dev *kd;
	struct pid *owner;

	mutex_lock(&be_lock);
	if (ev->type == KFD_QCTL_EV_DEVICE_ADD) {
		if (ev->dev)
			kfdbe_add_dev(ev->dev);
		goto out;
	}
	if (ev->type == KFD_QCTL_EV_QUEUE_CREATE) {
		if (ev->queue && ev->info)
			kfdbe_add_queue(ev->queue, ev->info);
		goto out;
	}
	kd = kfdbe_find_dev(ev->gpu_id);
	if (!kd)
		goto out;

	switch (ev->type) {
	case KFD_QCTL_EV_DEVICE_REMOVE:
		kfdbe_remove_dev(kd);
		break;
	case KFD_QCTL_EV_QUEUE_DESTROY:
		put_pid(kfdbe_drop_queues(kd, ev->proc_id, true, ev->queue_id));
		break;
	case KFD_QCTL_EV_PROCESS_EXIT:
		/*
		 * Our queue references pin the process's KFD state, whose
		 * release destroys the queues: let go of them now. The pid
		 * recorded with its queues names it when the event has none.
		 */
		owner = kfdbe_drop_queues(kd, ev->proc_id, false, 0);
		if (ev->pid || owner)
			amdqp_report_process_exit(kd->adev,
						  ev->pid ? ev->pid : owner);
		put_pid(owner);
		break;
	case KFD_QCTL_EV_GPU_RESET:
		atomic64_inc(&kd->resets);
		amdqp_report_reset(kd->adev);
		break;
	case KFD_QCTL_EV_PREEMPT_FAIL:
		atomic64_inc(&kd->preempt_failures);
		amdqp_report_preempt_failure(kd->adev, ev->error);
		break;
	default:
		break;
	}
out:
	mutex_unlock(&be_lock);
}

static int kfdbe_walk_dev(const struct kfd_qctl_device_info *info, void *arg)
{
	mutex_lock(&be_lock);
	kfdbe_add_dev(info);
	mutex_unlock(&be_lock);
	return 0;
}

static int kfdbe_walk_queue(struct kfd_qctl_queue *h,
			    const struct kfd_qctl_queue_info *info, void *arg)
{
	mutex_lock(&be_lock);
	kfdbe_add_queue(h, info);
	mutex_unlock(&be_lock);
	return 0;
}

/* --- binding ---------------------------------------------------------- */

/* symbol_get() without a link-time reference; NULL if not exported. */
#define KFDBE_GET(field, sym) (api.field = symbol_get(sym))

#define KFDBE_PUT(field, sym) do {				\
		if (api.field)					\
			symbol_put(sym);			\
	} while (0)

static void kfdbe_put_symbols(void)
{
	KFDBE_PUT(register_client, kfd_qctl_register_client);
	KFDBE_PUT(unregister_client, kfd_qctl_unregister_client);
	KFDBE_PUT(walk_devices, kfd_qctl_walk_devices);
	KFDBE_PUT(walk_queues, kfd_qctl_walk_queues);
	KFDBE_PUT(queue_get, kfd_qctl_queue_get);
	KFDBE_PUT(queue_put, kfd_qctl_queue_put);
	KFDBE_PUT(suspend, kfd_qctl_suspend);
	KFDBE_PUT(resume, kfd_qctl_resume);
	KFDBE_PUT(set_cu_mask, kfd_qctl_set_cu_mask);
}

static void kfdbe_unbind(bool detached);

static void kfdbe_detach(struct kfd_qctl_client *client)
{
	kfdbe_unbind(true);
	pr_info("kfd backend unbound: amdgpu is going away\n");
}

/* Caller holds bind_mutex. Returns 0 when bound. */
static int kfdbe_bind_locked(const char *why)
{
	unsigned int ndev = 0, nq = 0;
	struct kfdbe_dev *kd;
	struct kfdbe_queue *kq;
	int ret;

	lockdep_assert_held(&bind_mutex);
	if (bound)
		return 0;

	memset(&api, 0, sizeof(api));
	if (!KFDBE_GET(register_client, kfd_qctl_register_client) ||
	    !KFDBE_GET(unregister_client, kfd_qctl_unregister_client) ||
	    !KFDBE_GET(walk_devices, kfd_qctl_walk_devices) ||
	    !KFDBE_GET(walk_queues, kfd_qctl_walk_queues) ||
	    !KFDBE_GET(queue_get, kfd_qctl_queue_get) ||
	    !KFDBE_GET(queue_put, kfd_qctl_queue_put) ||
	    !KFDBE_GET(suspend, kfd_qctl_suspend) ||
	    !KFDBE_GET(resume, kfd_qctl_resume)) {
		kfdbe_put_symbols();
		return -ENOENT;
	}
	/* Optional (patch 0005): without it no device can be confined. */
	KFDBE_GET(set_cu_mask, kfd_qctl_set_cu_mask);

	down_write(&be_rwsem);
	bound = true;
	up_write(&be_rwsem);

	kfdbe_client.api_version = KFD_QCTL_API_VERSION;
	kfdbe_client.notify = kfdbe_notify;
	kfdbe_client.detach = kfdbe_detach;
	INIT_LIST_HEAD(&kfdbe_client.node);
	ret = api.register_client(&kfdbe_client);
	if (ret) {
		down_write(&be_rwsem);
		bound = false;
		up_write(&be_rwsem);
		kfdbe_put_symbols();
		if (ret == -EPROTO)
			pr_warn("kfd backend not bound: amdkfd queue control API version mismatch (want v%u)\n",
				KFD_QCTL_API_VERSION);
		else if (ret == -ENODEV)
			pr_info("kfd backend not bound: amdkfd not loaded or no devices (it failed to initialise or is going away)\n");
		else
			pr_warn("kfd backend not bound: amdkfd refused the client (%d; failed to initialise or going away)\n",
				ret);
		return ret;
	}

	/* Events from here on may duplicate what the walks see. */
	api.walk_devices(kfdbe_walk_dev, NULL);
	api.walk_queues(kfdbe_walk_queue, NULL);

	/*
	 * Drop the module references: amdgpu stays unloadable, and tells
	 * us through kfdbe_detach() before it goes.
	 */
	kfdbe_put_symbols();

	amdqp_backend_set_bound(AMDQP_BACKEND_KFD, true);
	mutex_lock(&be_lock);
	list_for_each_entry(kd, &kfdbe_devs, node) {
		ndev++;
		list_for_each_entry(kq, &kd->queues, dev_node)
			nq++;
	}
	mutex_unlock(&be_lock);
	pr_info("kfd backend bound (%s): amdkfd queue control API v%u, %u GPU(s), %u queue(s), CU masks %s\n",
		why, KFD_QCTL_API_VERSION, ndev, nq,
		api.set_cu_mask ? "supported" : "not supported by the glue");
	return 0;
}

/*
 * Put back every queue the glue still holds off for us: resumes the core
 * could not make, suspensions it discarded. Called with @bound false (no
 * core call in flight or to come) and before unregistering; the glue
 * drops whatever this leaves when its last client unregisters.
 */
static void kfdbe_resume_leftovers(void)
{
	struct kfd_qctl_queue **hs;
	struct kfdbe_queue *kq;
	unsigned int i, n = 0, cap = 0, failed = 0;
	int *res, ret;

	mutex_lock(&kq_mutex);
	list_for_each_entry(kq, &kfdbe_all_queues, all_node)
		cap += kq->h && kq->ctl_suspended;
	mutex_unlock(&kq_mutex);
	if (!cap)
		return;
	hs = kcalloc(cap, sizeof(*hs), GFP_KERNEL);
	res = kcalloc(cap, sizeof(*res), GFP_KERNEL);
	if (!hs || !res)
		goto out;
	mutex_lock(&kq_mutex);
	list_for_each_entry(kq, &kfdbe_all_queues, all_node) {
		if (!kq->h || !kq->ctl_suspended || n == cap)
			continue;
		api.queue_get(kq->h);
		hs[n++] = kq->h;
		kq->ctl_suspended = false;
	}
	mutex_unlock(&kq_mutex);
	ret = api.resume(hs, n, res);
	for (i = 0; i < n; i++) {
		failed += res[i] && res[i] != -ENOENT && res[i] != -EACCES;
		api.queue_put(hs[i]);
	}
	pr_info("kfd: %u queue(s) left suspended at unbind resumed (%d), %u failed\n",
		n, min(ret, 0), failed);
out:
	kfree(res);
	kfree(hs);
}

static void kfdbe_unbind(bool detached)
{
	struct kfdbe_dev *kd, *tmp;
	struct kfdbe_queue *kq;

	mutex_lock(&bind_mutex);
	if (!bound) {
		mutex_unlock(&bind_mutex);
		return;
	}
	/* Wait for our calls into amdkfd to return; make no new ones. */
	down_write(&be_rwsem);
	bound = false;
	up_write(&be_rwsem);

	/*
	 * Wait for notifications in flight (amdkfd did it if detached: its
	 * devices are gone then, and so is every suspension).
	 */
	if (!detached) {
		kfdbe_resume_leftovers();
		api.unregister_client(&kfdbe_client);
	}
	flush_work(&kfdbe_reset_work);

	mutex_lock(&be_lock);
	list_for_each_entry_safe(kd, tmp, &kfdbe_devs, node)
		kfdbe_remove_dev(kd);
	mutex_unlock(&be_lock);

	/* Queues the core still references no longer pin amdkfd state. */
	mutex_lock(&kq_mutex);
	list_for_each_entry(kq, &kfdbe_all_queues, all_node) {
		if (kq->h)
			api.queue_put(kq->h);
		kq->h = NULL;
	}
	mutex_unlock(&kq_mutex);

	amdqp_backend_set_bound(AMDQP_BACKEND_KFD, false);
	mutex_unlock(&bind_mutex);
}

/*
 * A module went live: if it provides the interface (amdgpu with the glue,
 * or a test stub), bind. symbol_get() of a missing symbol is cheap.
 */
static int kfdbe_module_event(struct notifier_block *nb, unsigned long state,
			      void *data)
{
	struct module *mod = data;
	bool amdgpu;
	char why[MODULE_NAME_LEN + 8];
	int ret;

	if (state != MODULE_STATE_LIVE)
		return NOTIFY_DONE;
	amdgpu = !strcmp(mod->name, "amdgpu");
	snprintf(why, sizeof(why), "%s loaded", mod->name);

	mutex_lock(&bind_mutex);
	ret = bound ? 0 : kfdbe_bind_locked(why);
	mutex_unlock(&bind_mutex);
	if (ret == -ENOENT && amdgpu)
		pr_info("kfd backend not bound: amdgpu lacks the amdkfd queue control glue (kfd-glue patches)\n");
	return NOTIFY_DONE;
}

static struct notifier_block kfdbe_module_nb = {
	.notifier_call = kfdbe_module_event,
};

/**
 * amdqp_kfd_init - bind the kfd backend if amdkfd offers queue control
 *
 * Also arms a module notifier, so that loading amdgpu later binds it.
 *
 * Return: 0 when bound now, -ENOENT when the glue is not available (yet),
 * another negative errno on failure. amdqp works without it.
 */
int amdqp_kfd_init(void)
{
	int ret;

	ret = register_module_notifier(&kfdbe_module_nb);
	if (ret)
		return ret;
	notifier_registered = true;

	mutex_lock(&bind_mutex);
	ret = kfdbe_bind_locked("at load");
	mutex_unlock(&bind_mutex);
	if (ret == -ENOENT)
		pr_info("kfd backend not bound: amdkfd queue control API not found (amdgpu not loaded, or built without the kfd-glue patches); will bind when amdgpu loads\n");
	return ret;
}

/**
 * amdqp_kfd_exit - unbind; called at module unload
 */
void amdqp_kfd_exit(void)
{
	if (notifier_registered) {
		unregister_module_notifier(&kfdbe_module_nb);
		notifier_registered = false;
	}
	kfdbe_unbind(false);
}
