// SPDX-License-Identifier: GPL-2.0
/*
 * ioctl dispatch checks the whole command: a known number with the wrong
 * direction bits is -ENOTTY, a size no version of the structure can have
 * (not a multiple of 8, below 8, above 4096) is -EINVAL, and sizes that
 * can be an older or newer version keep working.
 */
#include "common.h"
#include "kselftest_harness.h"

#define IOCCMD_GPU_BASE	12000
#define RW		(_IOC_READ | _IOC_WRITE)

FIXTURE(ioccmd) {
	int qfd;
	int sfd;
	int gpu;
	uint32_t qid;
};

FIXTURE_SETUP(ioccmd)
{
	self->qfd = self->sfd = -1;
	self->gpu = 0;
	if (!sim_available())
		SKIP(return, "amdqp and amdqp_sim not loaded");
	self->gpu = sim_new_device(IOCCMD_GPU_BASE, "hws", 1, 4);
	ASSERT_LT(0, self->gpu);
	self->qfd = qp_open();
	ASSERT_LE(0, self->qfd);
	self->sfd = sim_open();
	ASSERT_LE(0, self->sfd);
	ASSERT_EQ(0, sim_create(self->sfd, self->gpu, 5, &self->qid));
}

FIXTURE_TEARDOWN(ioccmd)
{
	sim_env_close(self->qfd, self->sfd, self->gpu);
}

static int ioc(int fd, unsigned int dir, unsigned int nr, unsigned int size,
	       void *arg)
{
	return ioctl(fd, _IOC(dir, AMDQP_IOC_MAGIC, nr, size), arg) ? -errno : 0;
}

/* A suspend sent with write-only or read-only direction does nothing. */
TEST_F(ioccmd, wrong_direction_suspend)
{
	struct amdqp_queue_ref ref = qref(getpid(), self->gpu, self->qid);
	struct amdqp_batch b = { .refs = (uintptr_t)&ref, .count = 1,
				 .ref_size = sizeof(ref) };
	static const unsigned int dirs[] = { _IOC_WRITE, _IOC_READ, _IOC_NONE };
	unsigned int i;

	for (i = 0; i < ARRAY_LEN(dirs); i++) {
		EXPECT_EQ(-ENOTTY, ioc(self->qfd, dirs[i], 0x04, sizeof(b), &b))
			TH_LOG("dir %u", dirs[i]);
		EXPECT_EQ(0, qp_state(self->qfd, getpid(), self->gpu,
				      self->qid))
			TH_LOG("dir %u suspended the queue", dirs[i]);
		qp_resume1(self->qfd, getpid(), self->gpu, self->qid);
	}
	/* The right command still works. */
	ASSERT_EQ(0, ioc(self->qfd, RW, 0x04, sizeof(b), &b));
	EXPECT_EQ(0, ref.result);
	EXPECT_EQ(0, qp_resume1(self->qfd, getpid(), self->gpu, self->qid));
}

TEST_F(ioccmd, wrong_direction_each)
{
	static const struct {
		unsigned int nr, dir, size;
	} bad[] = {
		{ 0x00, RW, sizeof(struct amdqp_version) },
		{ 0x00, _IOC_WRITE, sizeof(struct amdqp_version) },
		{ 0x01, _IOC_READ, sizeof(struct amdqp_list_devices) },
		{ 0x01, _IOC_WRITE, sizeof(struct amdqp_list_devices) },
		{ 0x02, _IOC_READ, sizeof(struct amdqp_list_queues) },
		{ 0x03, _IOC_WRITE, sizeof(struct amdqp_set_priority) },
		{ 0x05, _IOC_WRITE, sizeof(struct amdqp_batch) },
		{ 0x06, _IOC_WRITE, sizeof(struct amdqp_gpu_set) },
		{ 0x07, _IOC_READ, sizeof(struct amdqp_gpu_set) },
		{ 0x08, RW, sizeof(struct amdqp_event_mask) },
		{ 0x08, _IOC_READ, sizeof(struct amdqp_event_mask) },
		{ 0x08, _IOC_NONE, 0 },
	};
	unsigned char buf[64];
	unsigned int i;

	for (i = 0; i < ARRAY_LEN(bad); i++) {
		memset(buf, 0, sizeof(buf));
		if (bad[i].nr == 0x08)	/* a valid mask for the old code */
			buf[0] = 1 << AMDQP_EVENT_GPU_RESET;
		EXPECT_EQ(-ENOTTY, ioc(self->qfd, bad[i].dir, bad[i].nr,
				       bad[i].size, buf))
			TH_LOG("nr 0x%x dir %u", bad[i].nr, bad[i].dir);
	}
}

/* Sizes that cannot be any version of the structure. */
TEST_F(ioccmd, wrong_size)
{
	static const unsigned int sizes[] = { 0, 4, 20, 28, 4104, 8192 };
	unsigned char *buf = calloc(1, 8192);
	unsigned int i;

	ASSERT_NE(NULL, buf);
	for (i = 0; i < ARRAY_LEN(sizes); i++) {
		/* All zero: count 0 asks for the number of devices only. */
		memset(buf, 0, 8192);
		EXPECT_EQ(-EINVAL, ioc(self->qfd, RW, 0x01, sizes[i], buf))
			TH_LOG("LIST_DEVICES size %u", sizes[i]);
		EXPECT_EQ(-EINVAL, ioc(self->qfd, _IOC_READ, 0x00, sizes[i],
				       buf))
			TH_LOG("GET_VERSION size %u", sizes[i]);
	}
	memset(buf, 0, 8192);
	buf[0] = 1 << AMDQP_EVENT_GPU_RESET;
	EXPECT_EQ(-EINVAL, ioc(self->qfd, _IOC_WRITE, 0x08, 4, buf));
	free(buf);
}

/* Older (shorter) and newer (longer, zero tail) versions are accepted. */
TEST_F(ioccmd, extensible_sizes)
{
	unsigned char buf[4096];
	struct amdqp_list_devices l;

	memset(buf, 0, sizeof(buf));
	EXPECT_EQ(0, ioc(self->qfd, RW, 0x01, 16, buf));
	memcpy(&l, buf, 16);
	EXPECT_LE(1, l.count);
	memset(buf, 0, sizeof(buf));
	EXPECT_EQ(0, ioc(self->qfd, RW, 0x01, sizeof(buf), buf));
	memcpy(&l, buf, sizeof(l));
	EXPECT_LE(1, l.count);
	EXPECT_EQ(sizeof(struct amdqp_device_info), l.info_size);
	buf[sizeof(buf) - 1] = 1;
	EXPECT_EQ(-E2BIG, ioc(self->qfd, RW, 0x01, sizeof(buf), buf));
	memset(buf, 0, sizeof(buf));
	EXPECT_EQ(0, ioc(self->qfd, _IOC_READ, 0x00, 8, buf));
	EXPECT_EQ(AMDQP_VERSION_MAJOR, ((struct amdqp_version *)buf)->major);
}

TEST_HARNESS_MAIN
