// SPDX-License-Identifier: GPL-2.0
/*
 * amdqp: suspend and resume AMD GPU hardware queues by priority.
 *
 * The module is a misc character device (/dev/amdqp). Mechanism lives here;
 * policy (when to suspend what) lives in userspace.
 */
#include <linux/fs.h>
#include <linux/miscdevice.h>
#include <linux/module.h>
#include <linux/slab.h>

#include "amdqp_priv.h"

#define CREATE_TRACE_POINTS
#include "amdqp_trace.h"

unsigned int amdqp_max_suspend_ms = 5000;
module_param_named(max_suspend_ms, amdqp_max_suspend_ms, uint, 0644);
MODULE_PARM_DESC(max_suspend_ms,
		 "Starvation guard: resume a queue suspended longer than this (ms, 0 = never; default 5000)");

unsigned int amdqp_max_confine_ms = 60000;
module_param_named(max_confine_ms, amdqp_max_confine_ms, uint, 0644);
MODULE_PARM_DESC(max_confine_ms,
		 "Starvation guard for AMDQP_IOC_CONFINE: lift the CU-mask confinement of a queue confined longer than this, and refuse to confine it for cooldown_ms (ms, 0 = never; default 60000)");

unsigned int amdqp_cooldown_ms = 100;
module_param_named(cooldown_ms, amdqp_cooldown_ms, uint, 0644);
MODULE_PARM_DESC(cooldown_ms,
		 "After a watchdog resume, refuse to suspend the queue for this long (ms; default 100)");

unsigned int amdqp_unpriv_suspend_rate = 50;
module_param_named(unpriv_suspend_rate, amdqp_unpriv_suspend_rate, uint,
		   0644);
MODULE_PARM_DESC(unpriv_suspend_rate,
		 "Suspend calls per second allowed to each user (real uid) on each device, for callers without CAP_SYS_NICE or CAP_SYS_ADMIN; more fail with EBUSY (0 = no limit; default 50)");

unsigned int amdqp_unpriv_suspend_burst = 20;
module_param_named(unpriv_suspend_burst, amdqp_unpriv_suspend_burst, uint,
		   0644);
MODULE_PARM_DESC(unpriv_suspend_burst,
		 "How many such calls may come at once before the rate applies (default 20)");

/* Module parameters: plain words written by sysfs, read with READ_ONCE. */
bool amdqp_same_uid_control = true;
module_param_named(same_uid_control, amdqp_same_uid_control, bool, 0644);
MODULE_PARM_DESC(same_uid_control,
		 "Let a process suspend the queues of another dumpable process with its uids/gids that it may ptrace-attach to (the kernel's check: Yama ptrace_scope and LSMs apply) (N: own queues only, unless CAP_SYS_PTRACE/CAP_SYS_ADMIN; default Y)");

/*
 * The ceiling of owners no entry of the ceiling table matches (0..15,
 * "normal" as amdqpctl names it by default); writing it re-clamps every
 * queue. Written by sysfs, read with READ_ONCE.
 */
unsigned int amdqp_default_ceiling = 7;

static int amdqp_default_ceiling_set(const char *val,
				     const struct kernel_param *kp)
{
	int ret = param_set_uint_minmax(val, kp, AMDQP_PRIORITY_MIN,
					AMDQP_PRIORITY_MAX);

	if (!ret)
		amdqp_ceiling_default_changed();
	return ret;
}

static const struct kernel_param_ops amdqp_default_ceiling_ops = {
	.set = amdqp_default_ceiling_set,
	.get = param_get_uint,
};

module_param_cb(default_ceiling, &amdqp_default_ceiling_ops,
		&amdqp_default_ceiling, 0644);
MODULE_PARM_DESC(default_ceiling,
		 "Highest priority (0..15) of queues whose owner no entry of the ceiling table (AMDQP_IOC_CEILINGS) matches, unless it has CAP_SYS_NICE (default 7, normal)");

unsigned int amdqp_starve_window_ms = 5000;
module_param_named(starve_window_ms, amdqp_starve_window_ms, uint, 0644);
MODULE_PARM_DESC(starve_window_ms,
		 "Starvation budget: the window over which every queue is owed min_run_pct percent of time on the hardware, whoever suspends it (ms, 0 = off; default 5000)");

static int amdqp_min_run_pct_set(const char *val,
				 const struct kernel_param *kp)
{
	return param_set_uint_minmax(val, kp, 0, 90);
}

static const struct kernel_param_ops amdqp_min_run_pct_ops = {
	.set = amdqp_min_run_pct_set,
	.get = param_get_uint,
};

unsigned int amdqp_min_run_pct = 10;
module_param_cb(min_run_pct, &amdqp_min_run_pct_ops, &amdqp_min_run_pct,
		0644);
MODULE_PARM_DESC(min_run_pct,
		 "Starvation budget: percent (0..90) of every starve_window_ms a queue is owed on the hardware; once its suspended time owed reaches the rest, it is resumed and immune until paid back (0 = off; default 10)");

struct amdqp_stats amdqp_stats;

static int amdqp_open(struct inode *inode, struct file *filp)
{
	struct amdqp_file *f;

	f = kzalloc(sizeof(*f), GFP_KERNEL);
	if (!f)
		return -ENOMEM;
	INIT_LIST_HEAD(&f->holds);
	INIT_LIST_HEAD(&f->cholds);
	amdqp_events_init_file(f);
	f->pid_ns = get_pid_ns(task_active_pid_ns(current));
	filp->private_data = f;
	return nonseekable_open(inode, filp);
}

static int amdqp_release(struct inode *inode, struct file *filp)
{
	struct amdqp_file *f = filp->private_data;

	amdqp_events_release(f);
	amdqp_release_holds(f);
	put_pid_ns(f->pid_ns);
	kfree(f);
	return 0;
}

static const struct file_operations amdqp_fops = {
	.owner = THIS_MODULE,
	.open = amdqp_open,
	.release = amdqp_release,
	.read = amdqp_read,
	.poll = amdqp_poll,
	.unlocked_ioctl = amdqp_ioctl,
	.compat_ioctl = compat_ptr_ioctl,
};

static struct miscdevice amdqp_misc = {
	.minor = MISC_DYNAMIC_MINOR,
	.name = "amdqp",
	.fops = &amdqp_fops,
	.mode = 0666,
};

static int __init amdqp_init(void)
{
	int ret;

	amdqp_debugfs_init();
	amdqp_watchdog_init();
	ret = amdqp_trust_init();
	if (ret)
		pr_warn("amdqp: no proc instance for ptrace checks (%d); same_uid_control denies all\n",
			ret);
#ifdef AMDQP_HAVE_KFD
	ret = amdqp_kfd_init();
	if (ret)
		pr_info("amdqp: kfd backend not bound (%d); sim devices only\n",
			ret);
#endif
	ret = misc_register(&amdqp_misc);
	if (ret)
		goto err;
	pr_info("amdqp: ready, ABI %u.%u\n", AMDQP_VERSION_MAJOR,
		AMDQP_VERSION_MINOR);
	return 0;
err:
#ifdef AMDQP_HAVE_KFD
	amdqp_kfd_exit();
#endif
	amdqp_watchdog_exit();
	amdqp_trust_exit();
	amdqp_debugfs_exit();
	return ret;
}

static void __exit amdqp_exit(void)
{
	/* No fd is open (the module is pinned by them): no holds remain. */
	misc_deregister(&amdqp_misc);
	amdqp_watchdog_exit();
	amdqp_resume_everything();
#ifdef AMDQP_HAVE_KFD
	amdqp_kfd_exit();
#endif
	amdqp_ceiling_exit();
	amdqp_ratelimit_exit();
	amdqp_trust_exit();
	amdqp_debugfs_exit();
}

module_init(amdqp_init);
module_exit(amdqp_exit);

MODULE_DESCRIPTION("Priority preemption of AMD GPU hardware queues");
MODULE_LICENSE("GPL");
MODULE_VERSION("0.1.0");
