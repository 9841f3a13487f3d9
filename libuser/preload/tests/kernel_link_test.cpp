// SPDX-License-Identifier: MIT
//
// The layer's use of /dev/amdqp, against libamdqp's in-memory fake of it:
// what each kernel answer turns into.
#include <gtest/gtest.h>

#include <unistd.h>

#include <memory>

#include <amdqp/amdqp.hpp>

#include "fake_amdqp.hpp"
#include "kernel_link.hpp"

namespace {

using amdqp::preload::RegisterResult;

class KernelLinkTest : public ::testing::Test {
  protected:
    KernelLinkTest() {
        ::unsetenv("AMDQP_DEVICE");
        fake->path = amdqp::default_device_path();
        fake->caller_pid = static_cast<std::uint32_t>(getpid());
        fake->add_gpu(3);
    }
    std::unique_ptr<amdqp::preload::KernelLink> link() {
        return amdqp::preload::make_device_link(fake);
    }
    std::shared_ptr<amdqp::testing::FakeAmdqp> fake = std::make_shared<amdqp::testing::FakeAmdqp>();
};

TEST_F(KernelLinkTest, ManagedQueueGetsItsPriorityAndIds) {
    fake->add_queue(getpid(), 3, 0x7000, 7);
    auto r = link()->register_queue(getpid(), 0x7000, 2);
    EXPECT_EQ(r.status, RegisterResult::ok);
    EXPECT_EQ(r.gpu_id, 3u);
    ASSERT_TRUE(r.queue_id);
    EXPECT_EQ(r.priority, 2u);
}

TEST_F(KernelLinkTest, RaisingWithoutCapSysNiceIsRefusedAndTheQueueKeepsItsPriority) {
    fake->add_queue(getpid(), 3, 0x7000, 7);
    fake->cap_sys_nice = false;
    auto r = link()->register_queue(getpid(), 0x7000, 12);
    EXPECT_EQ(r.status, RegisterResult::refused);
    EXPECT_EQ(r.priority, 7u);
    EXPECT_EQ(r.gpu_id, 3u);
    fake->cap_sys_nice = true;
    r = link()->register_queue(getpid(), 0x7000, 12);
    EXPECT_EQ(r.status, RegisterResult::ok);
    EXPECT_EQ(r.priority, 12u);
}

TEST_F(KernelLinkTest, UnknownQueueIsNotManaged) {
    auto r = link()->register_queue(getpid(), 0x9000, 7);
    EXPECT_EQ(r.status, RegisterResult::not_managed);
}

TEST_F(KernelLinkTest, MissingModuleIsReportedOnceAndNotRetried) {
    fake->present = false;
    auto l = link();
    auto r = l->register_queue(getpid(), 0x7000, 7);
    EXPECT_EQ(r.status, RegisterResult::unavailable);
    EXPECT_NE(r.message.find("modprobe amdqp"), std::string::npos) << r.message;
    fake->present = true;  // loaded meanwhile: this process keeps its verdict
    fake->add_queue(getpid(), 3, 0x7000, 7);
    r = l->register_queue(getpid(), 0x7000, 7);
    EXPECT_EQ(r.status, RegisterResult::unavailable);
}

TEST_F(KernelLinkTest, OldKernelIsUnavailableNotFatal) {
    fake->answers_version = false;  // ENOTTY, as an older module or another driver
    auto r = link()->register_queue(getpid(), 0x7000, 7);
    EXPECT_EQ(r.status, RegisterResult::unavailable);
    EXPECT_FALSE(r.message.empty());
}

}  // namespace
