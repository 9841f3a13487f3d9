// SPDX-License-Identifier: GPL-2.0
/*
 * amdqp_kfdstub: a test double of amdgpu's queue control glue. Loaded in
 * place of amdgpu, it exports the AMDKFD_QCTL symbols, so that amdqp's kfd
 * backend binds to it exactly as it would to a patched amdgpu, and tests
 * drive fake devices, processes and queues through debugfs
 * (Documentation/kfd-glue.rst, "Testing without a GPU").
 *
 * Test code only: nothing in amdqp depends on it.
 */
#define pr_fmt(fmt) "amdqp_kfdstub: " fmt

#include <linux/module.h>
#include <linux/moduleparam.h>
#include <linux/seq_file.h>
#include <linux/spinlock.h>

#include "kfdstub.h"

/* Lock order and what each lock protects: see kfdstub.h. */
DEFINE_MUTEX(kstub_lock);		/* devices, processes, queues */
DECLARE_RWSEM(kstub_clients_sem);	/* kstub_clients */
LIST_HEAD(kstub_devs);
LIST_HEAD(kstub_procs);
LIST_HEAD(kstub_clients);
struct kstub_stats kstub_stats;

bool kstub_release_on_unregister = true;
module_param_named(release_on_unregister, kstub_release_on_unregister, bool,
		   0644);
MODULE_PARM_DESC(release_on_unregister,
		 "Drop every suspension when the last client unregisters, as the glue does (default true; false tests a client's own cleanup)");

bool kstub_cu_masks = true;
module_param_named(cu_masks, kstub_cu_masks, bool, 0644);
MODULE_PARM_DESC(cu_masks,
		 "Devices added from now on take CU masks (kfd_qctl_set_cu_mask, patch 0005); false models a glue without it: cu_per_xcc 0, calls refused (default true)");

unsigned int kstub_min_api = KFD_QCTL_API_VERSION;
module_param_named(min_api, kstub_min_api, uint, 0444);
MODULE_PARM_DESC(min_api,
		 "Oldest client API version accepted (default: the current one; lower it to run older clients against the stub)");

/* The call log: the last KSTUB_LOG_LINES lines, for debugging a test. */
#define KSTUB_LOG_LINES	256
#define KSTUB_LOG_LEN	120

static char kstub_log_buf[KSTUB_LOG_LINES][KSTUB_LOG_LEN];
static unsigned int kstub_log_head;	/* next line to write */
static unsigned int kstub_log_count;
static u64 kstub_log_seq;
static DEFINE_SPINLOCK(kstub_log_lock);

void kstub_log(const char *fmt, ...)
{
	unsigned long flags;
	va_list ap;
	char *line;
	int n;

	spin_lock_irqsave(&kstub_log_lock, flags);
	line = kstub_log_buf[kstub_log_head];
	n = scnprintf(line, KSTUB_LOG_LEN, "%llu ", kstub_log_seq++);
	va_start(ap, fmt);
	vscnprintf(line + n, KSTUB_LOG_LEN - n, fmt, ap);
	va_end(ap);
	kstub_log_head = (kstub_log_head + 1) % KSTUB_LOG_LINES;
	if (kstub_log_count < KSTUB_LOG_LINES)
		kstub_log_count++;
	spin_unlock_irqrestore(&kstub_log_lock, flags);
}

int kstub_log_show(struct seq_file *m, void *unused)
{
	unsigned int i, first;

	spin_lock_irq(&kstub_log_lock);
	first = (kstub_log_head + KSTUB_LOG_LINES - kstub_log_count) %
		KSTUB_LOG_LINES;
	for (i = 0; i < kstub_log_count; i++)
		seq_printf(m, "%s\n",
			   kstub_log_buf[(first + i) % KSTUB_LOG_LINES]);
	spin_unlock_irq(&kstub_log_lock);
	return 0;
}

void kstub_log_clear(void)
{
	spin_lock_irq(&kstub_log_lock);
	kstub_log_count = 0;
	spin_unlock_irq(&kstub_log_lock);
}

static int __init kstub_init(void)
{
	int ret;

	if (kstub_min_api < 1 || kstub_min_api > KFD_QCTL_API_VERSION)
		return -EINVAL;
	ret = kstub_debugfs_init();
	if (ret)
		return ret;
	pr_info("queue control API v%u (clients v%u..v%u), no devices yet\n",
		KFD_QCTL_API_VERSION, kstub_min_api, KFD_QCTL_API_VERSION);
	return 0;
}

static void __exit kstub_exit_module(void)
{
	/* What amdkfd does first when amdgpu unloads. */
	kstub_detach_all();
	kstub_debugfs_exit();
	kstub_free_all();
}

module_init(kstub_init);
module_exit(kstub_exit_module);

MODULE_DESCRIPTION("amdqp test double of the amdkfd queue control glue");
MODULE_LICENSE("GPL");
