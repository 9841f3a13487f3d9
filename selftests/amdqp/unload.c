// SPDX-License-Identifier: GPL-2.0
/*
 * Module unload and reload. An open /dev/amdqp (or /dev/amdqp_sim) pins its
 * module: rmmod fails and nothing changes. Removing amdqp_sim removes its
 * devices (DEVICE_REMOVED reaches open amdqp fds); once the last fd is
 * closed amdqp unloads, and both load again and work.
 *
 * Runs last: it leaves both modules loaded again when it succeeds.
 * AMDQP_MODULE_DIR (default /modules) holds amdqp.ko and amdqp_sim.ko.
 */
#include <sys/syscall.h>

#include "common.h"
#include "kselftest_harness.h"

#define UNLOAD_GPU_BASE	9000

static int rmmod(const char *name)
{
	return syscall(SYS_delete_module, name, O_NONBLOCK) ? -errno : 0;
}

static int insmod(const char *dir, const char *file)
{
	char path[512];
	int fd, ret;

	snprintf(path, sizeof(path), "%s/%s", dir, file);
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	ret = syscall(SYS_finit_module, fd, "", 0) ? -errno : 0;
	close(fd);
	return ret;
}

static bool module_loaded(const char *name)
{
	char path[128];

	snprintf(path, sizeof(path), "/sys/module/%s/initstate", name);
	return !access(path, F_OK);
}

/* rmmod of a module in use: EWOULDBLOCK (EAGAIN) today, EBUSY once was. */
static bool in_use(int ret)
{
	return ret == -EWOULDBLOCK || ret == -EBUSY;
}

static const char *module_dir(void)
{
	const char *d = getenv("AMDQP_MODULE_DIR");

	return d && *d ? d : "/modules";
}

TEST(unload_and_reload)
{
	const char *dir = module_dir();
	struct amdqp_version v;
	struct amdqp_device_info di;
	struct amdqp_event ev;
	uint32_t qid = 0;
	int qfd, sfd, gpu, ret;

	if (geteuid())
		SKIP(return, "needs root");
	if (!sim_available())
		SKIP(return, "amdqp and amdqp_sim not loaded");
	if (access(dir, R_OK))
		SKIP(return, "no module folder %s", dir);

	gpu = sim_new_device(UNLOAD_GPU_BASE, "hws", 1, 2);
	ASSERT_LT(0, gpu);
	qfd = qp_open();
	ASSERT_LE(0, qfd);
	sfd = sim_open();
	ASSERT_LE(0, sfd);
	ASSERT_EQ(0, qp_set_mask(qfd, AMDQP_EVENT_MASK_ALL));
	ASSERT_EQ(0, sim_create(sfd, gpu, 2, &qid));
	ASSERT_EQ(0, qp_suspend1(qfd, getpid(), gpu, qid));

	/* Both pinned: nothing unloads, nothing changes. */
	ret = rmmod("amdqp");
	EXPECT_TRUE(in_use(ret)) TH_LOG("rmmod amdqp: %d", ret);
	ret = rmmod("amdqp_sim");
	EXPECT_TRUE(in_use(ret)) TH_LOG("rmmod amdqp_sim with an fd open: %d",
					ret);
	ASSERT_TRUE(module_loaded("amdqp"));
	ASSERT_TRUE(module_loaded("amdqp_sim"));
	EXPECT_EQ(AMDQP_QSTATE_SUSPENDED | AMDQP_QSTATE_HELD,
		  qp_state(qfd, getpid(), gpu, qid));
	ASSERT_EQ(0, qp_dev_info(qfd, gpu, &di));
	EXPECT_EQ(1, di.num_suspended);

	/* The queue's owner fd goes: the queue and its hold go with it. */
	close(sfd);
	ASSERT_EQ(0, qp_wait_event(qfd, AMDQP_EVENT_QUEUE_DESTROYED, gpu, qid,
				   2000, &ev));
	ASSERT_EQ(0, qp_dev_info(qfd, gpu, &di));
	EXPECT_EQ(0, di.num_queues);
	EXPECT_EQ(0, di.num_suspended);

	/* The sim unloads under an open amdqp fd and takes its devices. */
	ASSERT_EQ(0, rmmod("amdqp_sim"));
	EXPECT_FALSE(module_loaded("amdqp_sim"));
	ASSERT_EQ(0, qp_wait_event(qfd, AMDQP_EVENT_DEVICE_REMOVED, gpu, 0,
				   2000, &ev));
	ASSERT_EQ(0, qp_version(qfd, &v));
	EXPECT_EQ(0, v.num_devices);
	EXPECT_EQ(0, v.backends & AMDQP_BACKEND_SIM);
	EXPECT_EQ(-ENOENT, qp_dev_info(qfd, gpu, &di));
	EXPECT_EQ(-ENOENT, qp_resume1(qfd, getpid(), gpu, qid));

	/* amdqp itself stays while the fd is open, and keeps working. */
	ret = rmmod("amdqp");
	EXPECT_TRUE(in_use(ret)) TH_LOG("rmmod amdqp with an fd open: %d", ret);
	ASSERT_TRUE(module_loaded("amdqp"));
	ASSERT_EQ(0, qp_version(qfd, &v));
	EXPECT_EQ(AMDQP_VERSION_MAJOR, v.major);

	close(qfd);
	ASSERT_EQ(0, rmmod("amdqp"));
	EXPECT_FALSE(module_loaded("amdqp"));
	EXPECT_NE(0, access(AMDQP_DEV, F_OK));

	/* Load again, in dependency order; it all works as before. */
	ASSERT_EQ(0, insmod(dir, "amdqp.ko"));
	ASSERT_EQ(0, insmod(dir, "amdqp_sim.ko"));
	ASSERT_TRUE(sim_available());
	qfd = qp_open();
	ASSERT_LE(0, qfd);
	ASSERT_EQ(0, qp_version(qfd, &v));
	EXPECT_EQ(0, v.num_devices);
	EXPECT_TRUE(v.backends & AMDQP_BACKEND_SIM);
	gpu = sim_new_device(UNLOAD_GPU_BASE, "mes", 1, 2);
	ASSERT_LT(0, gpu);
	sfd = sim_open();
	ASSERT_LE(0, sfd);
	ASSERT_EQ(0, sim_create(sfd, gpu, 2, &qid));
	EXPECT_EQ(0, qp_suspend1(qfd, getpid(), gpu, qid));
	EXPECT_EQ(0, qp_resume1(qfd, getpid(), gpu, qid));
	close(sfd);
	close(qfd);
	EXPECT_EQ(0, sim_del_device(gpu));
}

/* Unloading the sim with devices but no queues or fds: clean. */
TEST(sim_unload_with_devices)
{
	const char *dir = module_dir();
	int a, b;

	if (geteuid())
		SKIP(return, "needs root");
	if (!sim_available())
		SKIP(return, "amdqp and amdqp_sim not loaded");
	if (access(dir, R_OK))
		SKIP(return, "no module folder %s", dir);
	a = sim_new_device(UNLOAD_GPU_BASE + 100, "hws", 4, 8);
	ASSERT_LT(0, a);
	b = sim_new_device(UNLOAD_GPU_BASE + 200, "mes", 1, 2);
	ASSERT_LT(0, b);
	ASSERT_EQ(0, rmmod("amdqp_sim"));
	ASSERT_EQ(0, insmod(dir, "amdqp_sim.ko"));
	EXPECT_FALSE(sim_device_exists(a));
	EXPECT_FALSE(sim_device_exists(b));
	ASSERT_TRUE(sim_available());
}

TEST_HARNESS_MAIN
