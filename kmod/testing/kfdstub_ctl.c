// SPDX-License-Identifier: GPL-2.0
/*
 * The stub's test interface, /sys/kernel/debug/amdqp_kfdstub/:
 *
 *  ctl    write one command per write(2) (see kstub_cmd_*() below); the
 *         write fails with the command's errno
 *  state  devices, processes and queues, one per line
 *  stats  "name value" lines: calls, violations, references, grace
 *  calls  the last calls and events; writing anything clears it
 *
 * Commands (ERRNO may be given with or without its minus sign):
 *  dev_add GPU hws|mes|nohws XCC [CU_PER_XCC]
 *  dev_del GPU
 *  proc_add PID                    proc_exit PID [null]
 *  queue_add PID GPU QID PRIO RING [compute|sdma|other]
 *  queue_del PID GPU QID           evict PID GPU 0|1 [QID]
 *  fail_dev GPU ERRNO COUNT [all|hw|partial]
 *  fail_queue PID GPU QID ERRNO COUNT
 *  reset_queue PID GPU             gpu_reset GPU
 *  preempt_fail GPU ERRNO          delay GPU MS
 *  set_cu_mask PID GPU QID WORD...   the owner's AMDKFD_IOC_SET_CU_MASK:
 *                                   hex words, XCCs interleaved
 *  detach
 */
#define pr_fmt(fmt) "amdqp_kfdstub: " fmt

#include <linux/debugfs.h>
#include <linux/kernel.h>
#include <linux/pid.h>
#include <linux/seq_file.h>
#include <linux/slab.h>
#include <linux/string.h>
#include <linux/uaccess.h>

#include "kfdstub.h"

#define KSTUB_CMD_MAX	160

static struct dentry *kstub_dir;
static u64 kstub_next_proc_id = 1;	/* kstub_lock */

/* --- lookups (kstub_lock held) ----------------------------------------- */

static struct kstub_dev *kstub_dev_find(u32 gpu_id)
{
	struct kstub_dev *d;

	list_for_each_entry(d, &kstub_devs, node)
		if (d->gpu_id == gpu_id && !d->removed)
			return d;
	return NULL;
}

static struct kstub_proc *kstub_proc_find(pid_t nr)
{
	struct kstub_proc *p;

	list_for_each_entry(p, &kstub_procs, node)
		if (!p->exited && pid_nr(p->pid) == nr)
			return p;
	return NULL;
}

static struct kstub_queue *kstub_queue_find(struct kstub_proc *p, u32 gpu_id,
					    u32 queue_id)
{
	struct kstub_queue *q;

	list_for_each_entry(q, &p->queues, node)
		if (q->dev->gpu_id == gpu_id && q->queue_id == queue_id)
			return q;
	return NULL;
}

/* The process of task @nr, created on first use with its pid recorded. */
static struct kstub_proc *kstub_proc_get_or_add(pid_t nr)
{
	struct kstub_proc *p = kstub_proc_find(nr);
	struct pid *pid;

	if (p)
		return p;
	pid = find_get_pid(nr);
	if (!pid)
		return ERR_PTR(-ESRCH);
	p = kzalloc(sizeof(*p), GFP_KERNEL);
	if (!p) {
		put_pid(pid);
		return ERR_PTR(-ENOMEM);
	}
	kref_init(&p->ref);
	INIT_LIST_HEAD(&p->queues);
	atomic_set(&p->handles, 0);
	p->pid = pid;
	p->id = kstub_next_proc_id++;
	list_add_tail(&p->node, &kstub_procs);
	return p;
}

static int kstub_errno(int v)
{
	v = v < 0 ? v : -v;
	return v < -MAX_ERRNO || !v ? -EINVAL : v;
}

/* --- commands ------------------------------------------------------------ */

static int kstub_cmd_dev_add(u32 gpu_id, const char *mode, u32 xcc,
			     u32 cu_per_xcc)
{
	struct kfd_qctl_device_info info = { .gpu_id = gpu_id, .num_xcc = xcc };
	struct kfd_qctl_event ev = {
		.type = KFD_QCTL_EV_DEVICE_ADD,
		.gpu_id = gpu_id,
		.dev = &info,
	};
	unsigned long used = 0;
	struct kstub_proc *p;
	struct kstub_dev *d;
	unsigned int index;

	if (!strcmp(mode, "hws"))
		info.sched = KFD_QCTL_SCHED_HWS;
	else if (!strcmp(mode, "mes"))
		info.sched = KFD_QCTL_SCHED_MES;
	else if (!strcmp(mode, "nohws"))
		info.sched = KFD_QCTL_SCHED_NO_HWS;
	else
		return -EINVAL;
	if (!gpu_id || !xcc ||
	    DIV_ROUND_UP(cu_per_xcc * xcc, 32) > KSTUB_CU_WORDS)
		return -EINVAL;
	/* A glue without patch 0005 reports no geometry. */
	if (!READ_ONCE(kstub_cu_masks))
		cu_per_xcc = 0;
	info.cu_per_xcc = cu_per_xcc;

	mutex_lock(&kstub_lock);
	list_for_each_entry(d, &kstub_devs, node) {
		if (d->gpu_id == gpu_id && !d->removed) {
			mutex_unlock(&kstub_lock);
			return -EEXIST;
		}
		if (!d->removed)
			__set_bit(d->index, &used);
	}
	/* A removed device's index is free once no process names it. */
	list_for_each_entry(p, &kstub_procs, node)
		used |= p->dev_mask | p->reset_mask;
	index = find_first_zero_bit(&used, KSTUB_MAX_DEVS);
	d = index < KSTUB_MAX_DEVS ? kzalloc(sizeof(*d), GFP_KERNEL) : NULL;
	if (!d) {
		mutex_unlock(&kstub_lock);
		return index < KSTUB_MAX_DEVS ? -ENOMEM : -ENOSPC;
	}
	d->index = index;
	d->gpu_id = gpu_id;
	d->sched = info.sched;
	d->num_xcc = xcc;
	d->cu_per_xcc = cu_per_xcc;
	list_add_tail(&d->node, &kstub_devs);
	mutex_unlock(&kstub_lock);
	kstub_notify(&ev);
	return 0;
}

static int kstub_cmd_dev_del(u32 gpu_id)
{
	struct kfd_qctl_event ev = {
		.type = KFD_QCTL_EV_DEVICE_REMOVE,
		.gpu_id = gpu_id,
	};
	struct kstub_dev *d;

	mutex_lock(&kstub_lock);
	d = kstub_dev_find(gpu_id);
	if (d)
		d->removed = true;
	mutex_unlock(&kstub_lock);
	if (!d)
		return -ENODEV;
	kstub_notify(&ev);
	return 0;
}

static int kstub_cmd_proc_add(pid_t nr)
{
	struct kstub_proc *p;

	mutex_lock(&kstub_lock);
	p = kstub_proc_get_or_add(nr);
	mutex_unlock(&kstub_lock);
	return PTR_ERR_OR_ZERO(p);
}

/*
 * The process's mm goes away: one PROCESS_EXIT per device. @null_pid
 * sends it without a pid, as the v1 glue did once the thread group was
 * reaped (get_task_pid() of a dead lead thread).
 */
static int kstub_cmd_proc_exit(pid_t nr, bool null_pid)
{
	struct kfd_qctl_event ev = { .type = KFD_QCTL_EV_PROCESS_EXIT };
	u32 gpus[KSTUB_MAX_DEVS];
	unsigned int i, n = 0;
	struct kstub_proc *p;
	struct kstub_dev *d;

	mutex_lock(&kstub_lock);
	p = kstub_proc_find(nr);
	if (!p) {
		mutex_unlock(&kstub_lock);
		return -ESRCH;
	}
	p->exited = true;
	/* Removed devices are gone for clients; their index may be reused. */
	list_for_each_entry(d, &kstub_devs, node)
		if (!d->removed && test_bit(d->index, &p->dev_mask) &&
		    n < KSTUB_MAX_DEVS)
			gpus[n++] = d->gpu_id;
	mutex_unlock(&kstub_lock);

	ev.pid = null_pid ? NULL : p->pid;
	ev.proc_id = p->id;
	for (i = 0; i < n; i++) {
		ev.gpu_id = gpus[i];
		kstub_notify(&ev);
	}
	/* The table's reference: the rest are the clients' queue handles. */
	kstub_proc_put(p);
	return 0;
}

static u32 kstub_parse_type(const char *s)
{
	if (!*s || !strcmp(s, "compute"))
		return KFD_QCTL_QUEUE_COMPUTE;
	if (!strcmp(s, "sdma"))
		return KFD_QCTL_QUEUE_SDMA;
	if (!strcmp(s, "other"))
		return KFD_QCTL_QUEUE_OTHER;
	return U32_MAX;
}

static int kstub_cmd_queue_add(pid_t nr, u32 gpu_id, u32 queue_id, u32 prio,
			       u64 ring, const char *type)
{
	struct kfd_qctl_queue_info info;
	struct kfd_qctl_event ev = {
		.type = KFD_QCTL_EV_QUEUE_CREATE,
		.gpu_id = gpu_id,
		.queue_id = queue_id,
		.info = &info,
	};
	struct kfd_qctl_queue *h;
	struct kstub_proc *p;
	struct kstub_queue *q;
	struct kstub_dev *d;
	int ret = 0;

	if (prio > 15 || kstub_parse_type(type) == U32_MAX)
		return -EINVAL;
	mutex_lock(&kstub_lock);
	d = kstub_dev_find(gpu_id);
	p = d ? kstub_proc_get_or_add(nr) : ERR_PTR(-ENODEV);
	if (IS_ERR(p)) {
		ret = PTR_ERR(p);
		goto unlock;
	}
	if (kstub_queue_find(p, gpu_id, queue_id)) {
		ret = -EEXIST;
		goto unlock;
	}
	q = kzalloc(sizeof(*q), GFP_KERNEL);
	if (!q) {
		ret = -ENOMEM;
		goto unlock;
	}
	q->dev = d;
	q->queue_id = queue_id;
	q->type = kstub_parse_type(type);
	q->priority = prio;
	q->ring_base = ring;
	q->ring_size = 4096;
	q->ctl_suspended = p->create_suspended;
	kstub_queue_update_active(q);
	kstub_queue_write_cu(q);	/* init_mqd(): all CUs */
	q->mqd_writes = 0;
	list_add_tail(&q->node, &p->queues);
	__set_bit(d->index, &p->dev_mask);
	h = kstub_handle_new(p, q);
	if (!h) {
		ret = -ENOMEM;
		goto unlock;
	}
	kstub_fill_info(p, q, &info);
	ev.pid = p->pid;
	ev.queue = h;
	ev.proc_id = p->id;
	mutex_unlock(&kstub_lock);

	kstub_notify(&ev);
	kfd_qctl_queue_put(h);
	return 0;
unlock:
	mutex_unlock(&kstub_lock);
	return ret;
}

static int kstub_cmd_queue_del(pid_t nr, u32 gpu_id, u32 queue_id)
{
	struct kfd_qctl_event ev = {
		.type = KFD_QCTL_EV_QUEUE_DESTROY,
		.gpu_id = gpu_id,
		.queue_id = queue_id,
	};
	struct kstub_proc *p;
	struct kstub_queue *q;

	mutex_lock(&kstub_lock);
	p = kstub_proc_find(nr);
	q = p ? kstub_queue_find(p, gpu_id, queue_id) : NULL;
	if (!q) {
		mutex_unlock(&kstub_lock);
		return -ENOENT;
	}
	list_del(&q->node);
	kfree(q);
	/* The table's reference keeps @p until the notification is done. */
	ev.pid = p->pid;
	ev.proc_id = p->id;
	mutex_unlock(&kstub_lock);
	kstub_notify(&ev);
	return 0;
}

/* Memory eviction of the process's queues on @gpu_id (or only @qid). */
static int kstub_cmd_evict(pid_t nr, u32 gpu_id, u32 on, bool one, u32 qid)
{
	struct kstub_proc *p;
	struct kstub_queue *q;

	mutex_lock(&kstub_lock);
	p = kstub_proc_find(nr);
	if (p) {
		list_for_each_entry(q, &p->queues, node) {
			if (q->dev->gpu_id != gpu_id ||
			    (one && q->queue_id != qid))
				continue;
			q->evicted = on;
			if (!test_bit(q->dev->index, &p->reset_mask))
				kstub_queue_update_active(q);
		}
	}
	mutex_unlock(&kstub_lock);
	return p ? 0 : -ESRCH;
}

static int kstub_cmd_fail_dev(u32 gpu_id, int err, u32 count,
			      const char *mode)
{
	struct kstub_dev *d;
	u32 m;

	if (!*mode || !strcmp(mode, "all"))
		m = KSTUB_ROLLBACK_ALL;
	else if (!strcmp(mode, "hw"))
		m = KSTUB_ROLLBACK_HW;
	else if (!strcmp(mode, "partial"))
		m = KSTUB_KEEP_PARTIAL;
	else
		return -EINVAL;
	mutex_lock(&kstub_lock);
	d = kstub_dev_find(gpu_id);
	if (d) {
		d->fail_err = kstub_errno(err);
		d->fail_count = count;
		d->fail_mode = m;
	}
	mutex_unlock(&kstub_lock);
	return d ? 0 : -ENODEV;
}

static int kstub_cmd_fail_queue(pid_t nr, u32 gpu_id, u32 queue_id, int err,
				u32 count)
{
	struct kstub_proc *p;
	struct kstub_queue *q;

	mutex_lock(&kstub_lock);
	p = kstub_proc_find(nr);
	q = p ? kstub_queue_find(p, gpu_id, queue_id) : NULL;
	if (q) {
		q->fail_err = kstub_errno(err);
		q->fail_count = count;
	}
	mutex_unlock(&kstub_lock);
	return q ? 0 : -ENOENT;
}

static int kstub_cmd_reset_queue(pid_t nr, u32 gpu_id)
{
	struct kstub_proc *p;
	struct kstub_dev *d;

	mutex_lock(&kstub_lock);
	d = kstub_dev_find(gpu_id);
	p = kstub_proc_find(nr);
	if (d && p)
		d->reset_proc = p->id;
	mutex_unlock(&kstub_lock);
	return d && p ? 0 : -ENOENT;
}

/* kgd2kfd_pre_reset(): suspensions dropped, then GPU_RESET. */
static int kstub_cmd_gpu_reset(u32 gpu_id)
{
	struct kfd_qctl_event ev = {
		.type = KFD_QCTL_EV_GPU_RESET,
		.gpu_id = gpu_id,
	};
	struct kstub_dev *d;

	mutex_lock(&kstub_lock);
	d = kstub_dev_find(gpu_id);
	if (d) {
		ev.count = kstub_release_all(d);
		kstub_lift_all_cu(d);
	}
	mutex_unlock(&kstub_lock);
	if (!d)
		return -ENODEV;
	kstub_notify(&ev);
	return 0;
}

static int kstub_cmd_preempt_fail(u32 gpu_id, int err)
{
	struct kfd_qctl_event ev = {
		.type = KFD_QCTL_EV_PREEMPT_FAIL,
		.gpu_id = gpu_id,
		.error = kstub_errno(err),
	};
	struct kstub_dev *d;

	mutex_lock(&kstub_lock);
	d = kstub_dev_find(gpu_id);
	mutex_unlock(&kstub_lock);
	if (!d)
		return -ENODEV;
	kstub_notify(&ev);
	return 0;
}

static int kstub_cmd_delay(u32 gpu_id, u32 ms)
{
	struct kstub_dev *d;

	if (ms > 10000)
		return -EINVAL;
	mutex_lock(&kstub_lock);
	d = kstub_dev_find(gpu_id);
	if (d)
		d->delay_ms = ms;
	mutex_unlock(&kstub_lock);
	return d ? 0 : -ENODEV;
}

/*
 * The owner's SET_CU_MASK (update_queue()): recorded apart from an
 * imposed mask, the MQD rewritten with their combination. @words hex
 * words, as many as given (count = 32 per word).
 */
static int kstub_cmd_set_cu_mask(char *cmd)
{
	u32 words[KSTUB_CU_WORDS], gpu_id, qid;
	unsigned int n = 0;
	struct kstub_proc *p;
	struct kstub_queue *q;
	char *tok;
	int nr, ret = 0;

	strsep(&cmd, " ");
	tok = strsep(&cmd, " ");
	if (!tok || kstrtoint(tok, 10, &nr))
		return -EINVAL;
	tok = strsep(&cmd, " ");
	if (!tok || kstrtou32(tok, 10, &gpu_id))
		return -EINVAL;
	tok = strsep(&cmd, " ");
	if (!tok || kstrtou32(tok, 10, &qid))
		return -EINVAL;
	while ((tok = strsep(&cmd, " ")) && *tok) {
		if (n == KSTUB_CU_WORDS || kstrtou32(tok, 16, &words[n++]))
			return -EINVAL;
	}
	if (!n)
		return -EINVAL;
	mutex_lock(&kstub_lock);
	p = kstub_proc_find(nr);
	q = p ? kstub_queue_find(p, gpu_id, qid) : NULL;
	if (!q) {
		ret = -ENOENT;
	} else {
		memset(q->own_cu, 0, sizeof(q->own_cu));
		memcpy(q->own_cu, words, n * sizeof(*words));
		q->own_bits = n * 32;
		kstub_queue_write_cu(q);
	}
	mutex_unlock(&kstub_lock);
	return ret;
}

static int kstub_run(char *cmd)
{
	char word[16] = "", s1[16] = "", s2[16] = "";
	u32 a = 0, b = 0, c = 0, e = 0;
	int n, pid = 0, err = 0;
	u64 ring = 0;

	n = sscanf(cmd, "%15s", word);
	if (n != 1)
		return -EINVAL;
	if (!strcmp(word, "dev_add")) {
		n = sscanf(cmd, "%*s %u %15s %u %u", &a, s1, &b, &c);
		if (n < 3)
			return -EINVAL;
		return kstub_cmd_dev_add(a, s1, b, n == 4 ? c : 0);
	}
	if (!strcmp(word, "set_cu_mask"))
		return kstub_cmd_set_cu_mask(strim(cmd));
	if (!strcmp(word, "dev_del"))
		return sscanf(cmd, "%*s %u", &a) == 1 ?
		       kstub_cmd_dev_del(a) : -EINVAL;
	if (!strcmp(word, "proc_add"))
		return sscanf(cmd, "%*s %d", &pid) == 1 ?
		       kstub_cmd_proc_add(pid) : -EINVAL;
	if (!strcmp(word, "proc_exit")) {
		n = sscanf(cmd, "%*s %d %15s", &pid, s1);
		if (n < 1 || (n == 2 && strcmp(s1, "null")))
			return -EINVAL;
		return kstub_cmd_proc_exit(pid, n == 2);
	}
	if (!strcmp(word, "queue_add")) {
		n = sscanf(cmd, "%*s %d %u %u %u %llx %15s", &pid, &a, &b, &c,
			   &ring, s2);
		return n >= 5 ? kstub_cmd_queue_add(pid, a, b, c, ring, s2) :
		       -EINVAL;
	}
	if (!strcmp(word, "queue_del"))
		return sscanf(cmd, "%*s %d %u %u", &pid, &a, &b) == 3 ?
		       kstub_cmd_queue_del(pid, a, b) : -EINVAL;
	if (!strcmp(word, "evict")) {
		n = sscanf(cmd, "%*s %d %u %u %u", &pid, &a, &b, &c);
		return n >= 3 ? kstub_cmd_evict(pid, a, b, n == 4, c) : -EINVAL;
	}
	if (!strcmp(word, "fail_dev")) {
		n = sscanf(cmd, "%*s %u %d %u %15s", &a, &err, &b, s1);
		return n >= 3 ? kstub_cmd_fail_dev(a, err, b, s1) : -EINVAL;
	}
	if (!strcmp(word, "fail_queue"))
		return sscanf(cmd, "%*s %d %u %u %d %u", &pid, &a, &b, &err,
			      &e) == 5 ?
		       kstub_cmd_fail_queue(pid, a, b, err, e) : -EINVAL;
	if (!strcmp(word, "reset_queue"))
		return sscanf(cmd, "%*s %d %u", &pid, &a) == 2 ?
		       kstub_cmd_reset_queue(pid, a) : -EINVAL;
	if (!strcmp(word, "gpu_reset"))
		return sscanf(cmd, "%*s %u", &a) == 1 ?
		       kstub_cmd_gpu_reset(a) : -EINVAL;
	if (!strcmp(word, "preempt_fail"))
		return sscanf(cmd, "%*s %u %d", &a, &err) == 2 ?
		       kstub_cmd_preempt_fail(a, err) : -EINVAL;
	if (!strcmp(word, "delay"))
		return sscanf(cmd, "%*s %u %u", &a, &b) == 2 ?
		       kstub_cmd_delay(a, b) : -EINVAL;
	if (!strcmp(word, "detach")) {
		kstub_detach_all();
		return 0;
	}
	return -EINVAL;
}

static ssize_t kstub_ctl_write(struct file *file, const char __user *ubuf,
			       size_t len, loff_t *off)
{
	char *cmd;
	int ret;

	if (len >= KSTUB_CMD_MAX)
		return -EINVAL;
	cmd = memdup_user_nul(ubuf, len);
	if (IS_ERR(cmd))
		return PTR_ERR(cmd);
	kstub_log("cmd %s", strim(cmd));
	ret = kstub_run(cmd);
	kfree(cmd);
	return ret ? ret : len;
}

static const struct file_operations kstub_ctl_fops = {
	.owner = THIS_MODULE,
	.open = simple_open,
	.write = kstub_ctl_write,
	.llseek = noop_llseek,
};

/* --- state and statistics ------------------------------------------------ */

static const char * const kstub_sched_names[] = { "nohws", "hws", "mes" };

/* The MQD's CU mask: hex words, word 0 first (XCCs interleaved). */
static void kstub_show_cu(struct seq_file *m, const struct kstub_queue *q)
{
	u32 i, words = DIV_ROUND_UP(q->dev->cu_per_xcc * q->dev->num_xcc, 32);

	for (i = 0; i < words; i++)
		seq_printf(m, "%s%08x", i ? "," : "", q->mqd_cu[i]);
	seq_puts(m, words ? "\n" : "-\n");
}

static int kstub_state_show(struct seq_file *m, void *unused)
{
	struct kstub_proc *p;
	struct kstub_queue *q;
	struct kstub_dev *d;

	mutex_lock(&kstub_lock);
	list_for_each_entry(d, &kstub_devs, node)
		seq_printf(m, "dev %u %s xcc=%u removed=%d fw_ops=%llu cu_per_xcc=%u\n",
			   d->gpu_id, kstub_sched_names[d->sched], d->num_xcc,
			   d->removed, d->fw_ops, d->cu_per_xcc);
	list_for_each_entry(p, &kstub_procs, node) {
		seq_printf(m, "proc %d id=%llu exited=%d handles=%d reset=%#lx\n",
			   pid_nr(p->pid), p->id, p->exited,
			   atomic_read(&p->handles), p->reset_mask);
		list_for_each_entry(q, &p->queues, node) {
			seq_printf(m, "queue %d %u %u ctl=%d active=%d evicted=%d reset=%d imp=%d writes=%u cu=",
				   pid_nr(p->pid), q->dev->gpu_id, q->queue_id,
				   q->ctl_suspended, q->active, q->evicted,
				   test_bit(q->dev->index, &p->reset_mask),
				   q->has_imp, q->mqd_writes);
			kstub_show_cu(m, q);
		}
	}
	mutex_unlock(&kstub_lock);
	return 0;
}
DEFINE_SHOW_ATTRIBUTE(kstub_state);

static const char * const kstub_call_names[KSTUB_CALL_NR] = {
	[KSTUB_CALL_REGISTER] = "register",
	[KSTUB_CALL_UNREGISTER] = "unregister",
	[KSTUB_CALL_WALK_DEVICES] = "walk_devices",
	[KSTUB_CALL_WALK_QUEUES] = "walk_queues",
	[KSTUB_CALL_LOOKUP] = "lookup",
	[KSTUB_CALL_INFO] = "info",
	[KSTUB_CALL_SUSPEND] = "suspend",
	[KSTUB_CALL_RESUME] = "resume",
	[KSTUB_CALL_CREATE_SUSPENDED] = "create_suspended",
	[KSTUB_CALL_GET] = "get",
	[KSTUB_CALL_PUT] = "put",
	[KSTUB_CALL_SET_CU_MASK] = "set_cu_mask",
};

static int kstub_stats_show(struct seq_file *m, void *unused)
{
	struct kstub_stats *s = &kstub_stats;
	unsigned int i;

	for (i = 0; i < KSTUB_CALL_NR; i++)
		seq_printf(m, "calls_%s %lld\n", kstub_call_names[i],
			   atomic64_read(&s->calls[i]));
	seq_printf(m, "violations %lld\n", atomic64_read(&s->violations));
	seq_printf(m, "handles %lld\n", atomic64_read(&s->handles));
	seq_printf(m, "procs_released %lld\n",
		   atomic64_read(&s->procs_released));
	seq_printf(m, "released_on_unregister %lld\n",
		   atomic64_read(&s->released_on_unregister));
	mutex_lock(&kstub_lock);
	seq_printf(m, "grace_count %llu\n", s->grace_count);
	seq_printf(m, "grace_last %u\n", s->grace_last);
	seq_printf(m, "grace_min %u\n", s->grace_min);
	seq_printf(m, "grace_max %u\n", s->grace_max);
	seq_printf(m, "grace_zero %llu\n", s->grace_zero);
	seq_printf(m, "grace_default %llu\n", s->grace_default);
	mutex_unlock(&kstub_lock);
	return 0;
}
DEFINE_SHOW_ATTRIBUTE(kstub_stats);

static int kstub_calls_open(struct inode *inode, struct file *file)
{
	return single_open(file, kstub_log_show, NULL);
}

static ssize_t kstub_calls_write(struct file *file, const char __user *ubuf,
				 size_t len, loff_t *off)
{
	kstub_log_clear();
	return len;
}

static const struct file_operations kstub_calls_fops = {
	.owner = THIS_MODULE,
	.open = kstub_calls_open,
	.read = seq_read,
	.write = kstub_calls_write,
	.llseek = seq_lseek,
	.release = single_release,
};

int kstub_debugfs_init(void)
{
	kstub_dir = debugfs_create_dir("amdqp_kfdstub", NULL);
	if (IS_ERR(kstub_dir))
		return PTR_ERR(kstub_dir);
	debugfs_create_file("ctl", 0200, kstub_dir, NULL, &kstub_ctl_fops);
	debugfs_create_file("state", 0444, kstub_dir, NULL, &kstub_state_fops);
	debugfs_create_file("stats", 0444, kstub_dir, NULL, &kstub_stats_fops);
	debugfs_create_file("calls", 0644, kstub_dir, NULL, &kstub_calls_fops);
	return 0;
}

void kstub_debugfs_exit(void)
{
	debugfs_remove_recursive(kstub_dir);
}

/*
 * Module exit, after the clients were detached: a process whose queue
 * references a client kept (a violation already counted) is leaked rather
 * than freed under the client's feet.
 */
void kstub_free_all(void)
{
	struct kstub_proc *p, *ptmp;
	struct kstub_dev *d, *dtmp;
	LIST_HEAD(live);

	mutex_lock(&kstub_lock);
	list_for_each_entry_safe(p, ptmp, &kstub_procs, node) {
		if (p->exited)
			continue;
		p->exited = true;
		list_move(&p->node, &live);
	}
	mutex_unlock(&kstub_lock);
	/* The last put unlinks each from @live. */
	list_for_each_entry_safe(p, ptmp, &live, node)
		kstub_proc_put(p);
	WARN(!list_empty(&kstub_procs) || !list_empty(&live),
	     "amdqp_kfdstub: queue references still held at unload\n");
	list_for_each_entry_safe(d, dtmp, &kstub_devs, node) {
		list_del(&d->node);
		kfree(d);
	}
}
