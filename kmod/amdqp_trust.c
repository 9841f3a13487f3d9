// SPDX-License-Identifier: GPL-2.0
/*
 * Whether the caller may control another process's queues as it may
 * ptrace(2) it (same_uid_control). ptrace_may_access() is not exported to
 * modules, but opening /proc/PID/mem runs exactly it, in the mode ptrace
 * attach uses (PTRACE_MODE_ATTACH with the opener's fs credentials), with
 * every LSM's ptrace access hook: Yama's ptrace_scope included (1: only
 * an ancestor or a declared tracer, 2: CAP_SYS_PTRACE only, 3: nobody).
 *
 * amdqp opens the file on a proc instance of its own, mounted at load
 * time in the loader's pid namespace, so that no caller's mount namespace
 * can put another file there. The check runs with no amdqp lock held:
 * opening the file waits for an exec of the target in progress, and an
 * exec may tear down GPU queues, which takes amdqp_lock.
 */
#include <linux/capability.h>
#include <linux/err.h>
#include <linux/file.h>
#include <linux/fs.h>
#include <linux/module.h>
#include <linux/mount.h>
#include <linux/pid.h>
#include <linux/proc_fs.h>
#include <linux/sort.h>
#include <linux/bsearch.h>
#include <linux/slab.h>
#include <linux/user_namespace.h>

#include "amdqp_priv.h"

/* Set once at load, cleared at unload; NULL: same-uid control denied. */
static struct vfsmount *amdqp_proc_mnt;

int amdqp_trust_init(void)
{
	struct file_system_type *fs = get_fs_type("proc");
	struct vfsmount *mnt;

	if (!fs)
		return -ENODEV;
	mnt = kern_mount(fs);
	module_put(fs->owner);
	if (IS_ERR(mnt))
		return PTR_ERR(mnt);
	amdqp_proc_mnt = mnt;
	return 0;
}

void amdqp_trust_exit(void)
{
	if (amdqp_proc_mnt)
		kern_unmount(amdqp_proc_mnt);
	amdqp_proc_mnt = NULL;
}

/* Whether current could ptrace-attach to @owner's process now. */
static bool amdqp_may_attach(struct pid *owner)
{
	struct path root = {
		.mnt = amdqp_proc_mnt,
		.dentry = amdqp_proc_mnt->mnt_root,
	};
	struct file *file;
	char name[24];
	pid_t nr;

	nr = pid_nr_ns(owner, proc_pid_ns(amdqp_proc_mnt->mnt_sb));
	if (nr <= 0)
		return false;
	snprintf(name, sizeof(name), "%d/mem", nr);
	file = file_open_root(&root, name, O_RDONLY, 0);
	if (IS_ERR(file))
		return false;
	fput(file);
	return true;
}

/*
 * Callers with CAP_SYS_ADMIN may control every queue: they need no
 * per-owner check. No audit: most callers lack it.
 */
bool amdqp_control_all(void)
{
	return ns_capable_noaudit(&init_user_ns, CAP_SYS_ADMIN);
}

static int amdqp_pid_cmp(const void *a, const void *b)
{
	const struct pid *x = *(struct pid * const *)a;
	const struct pid *y = *(struct pid * const *)b;

	return x < y ? -1 : x > y;
}

/*
 * Keep of @pids (@n owners, each with a reference; the array is
 * kvmalloc'ed and now belongs to @t) those current may ptrace-attach to.
 * Nothing is kept when same_uid_control is off. Must not be called with
 * amdqp_lock held. Returns 0.
 */
int amdqp_tracees_check(struct amdqp_tracees *t, struct pid **pids, u32 n)
{
	struct pid *self = task_tgid(current);
	bool on = READ_ONCE(amdqp_same_uid_control) && amdqp_proc_mnt;
	u32 i, k = 0;

	t->pids = pids;
	sort(pids, n, sizeof(*pids), amdqp_pid_cmp, NULL);
	for (i = 0; i < n; i++) {
		if ((k && pids[k - 1] == pids[i]) || !on || pids[i] == self ||
		    !amdqp_may_attach(pids[i])) {
			put_pid(pids[i]);
			continue;
		}
		pids[k++] = pids[i];
	}
	t->n = k;
	return 0;
}

void amdqp_tracees_free(struct amdqp_tracees *t)
{
	u32 i;

	for (i = 0; i < t->n; i++)
		put_pid(t->pids[i]);
	kvfree(t->pids);
	t->pids = NULL;
	t->n = 0;
}

bool amdqp_tracees_has(const struct amdqp_tracees *t, struct pid *owner)
{
	if (!t || !t->n)
		return false;
	return bsearch(&owner, t->pids, t->n, sizeof(*t->pids),
		       amdqp_pid_cmp);
}
