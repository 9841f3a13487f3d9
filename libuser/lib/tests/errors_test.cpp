// SPDX-License-Identifier: MIT
#include <cerrno>
#include <cstdlib>
#include <set>
#include <string>

#include "fake_fixture.h"

namespace {

using amdqp::errc;
using amdqp::Error;

// Runs @fn, which must throw amdqp::Error; returns it.
template <typename F>
Error thrown(F&& fn) {
    try {
        fn();
    } catch (const Error& e) {
        return e;
    }
    ADD_FAILURE() << "no amdqp::Error thrown";
    return Error(errc::system, "none");
}

bool has(const Error& e, const std::string& part) {
    return std::string(e.what()).find(part) != std::string::npos;
}

TEST_F(FakeDeviceTest, MissingNodeSaysLoadTheModule) {
    fake->present = false;
    const Error e = thrown([&] { open(); });
    EXPECT_EQ(e.code(), errc::no_module);
    EXPECT_EQ(e.sys_errno(), ENOENT);
    EXPECT_TRUE(has(e, "amdqp: /fake/amdqp not found")) << e.what();
    EXPECT_TRUE(has(e, "sudo modprobe amdqp")) << e.what();
    EXPECT_TRUE(has(e, "insmod kmod/amdqp.ko")) << e.what();
}

TEST(Errors, RealMissingNode) {
    const Error e = thrown([] { amdqp::Device::open("/nonexistent/amdqp"); });
    EXPECT_EQ(e.code(), errc::no_module);
    EXPECT_TRUE(has(e, "/nonexistent/amdqp not found: load the module")) << e.what();
}

TEST(Errors, DevicePathComesFromTheEnvironment) {
    ::setenv("AMDQP_DEVICE", "/nonexistent/from-env", 1);
    EXPECT_EQ(amdqp::default_device_path(), "/nonexistent/from-env");
    const Error e = thrown([] { amdqp::Device::open(); });
    EXPECT_EQ(e.code(), errc::no_module);
    EXPECT_TRUE(has(e, "$AMDQP_DEVICE")) << e.what();
    ::setenv("AMDQP_DEVICE", "", 1);
    EXPECT_EQ(amdqp::default_device_path(), "/dev/amdqp");
    ::unsetenv("AMDQP_DEVICE");
    EXPECT_EQ(amdqp::default_device_path(), "/dev/amdqp");
}

TEST(Errors, RealNodeThatIsNotAmdqp) {
    const Error e = thrown([] { amdqp::Device::open("/dev/null"); });
    EXPECT_EQ(e.code(), errc::abi_mismatch);
    EXPECT_TRUE(has(e, "not an amdqp device")) << e.what();
}

TEST_F(FakeDeviceTest, PermissionDeniedOnOpen) {
    fake->open_errno = EACCES;
    const Error e = thrown([&] { open(); });
    EXPECT_EQ(e.code(), errc::permission);
    EXPECT_TRUE(has(e, "permission denied")) << e.what();
    EXPECT_TRUE(has(e, "--device")) << e.what();
}

TEST_F(FakeDeviceTest, AbiMajorMismatchIsRefused) {
    fake->abi_major = AMDQP_VERSION_MAJOR + 1;
    const Error e = thrown([&] { open(); });
    EXPECT_EQ(e.code(), errc::abi_mismatch);
    EXPECT_TRUE(has(e, "ABI " + std::to_string(AMDQP_VERSION_MAJOR + 1) + ".")) << e.what();
    EXPECT_TRUE(has(e, "install matching versions")) << e.what();
    // Nothing but GET_VERSION was asked of a kernel of another ABI.
    EXPECT_EQ(fake->calls(AMDQP_IOC_GET_VERSION), 1u);
    EXPECT_EQ(fake->calls(AMDQP_IOC_LIST_QUEUES), 0u);
    EXPECT_EQ(fake->open_fds(), 0u);
}

TEST_F(FakeDeviceTest, NewerMinorIsFine) {
    fake->abi_minor = AMDQP_VERSION_MINOR + 3;
    auto dev = open();
    EXPECT_EQ(dev.version().abi_minor, AMDQP_VERSION_MINOR + 3u);
}

TEST_F(FakeDeviceTest, RaisingPriorityNeedsCapSysNice) {
    auto& q = fake->add_queue(fake->caller_pid, 1, 0x1000, 2);
    auto dev = open();
    const Error e =
        thrown([&] { dev.set_priority(amdqp::QueueRef::by_id(q.pid, 1, q.queue_id), 12); });
    EXPECT_EQ(e.code(), errc::permission);
    EXPECT_EQ(e.sys_errno(), EPERM);
    EXPECT_TRUE(has(e, "CAP_SYS_NICE")) << e.what();
    EXPECT_TRUE(has(e, "to high")) << e.what();
    EXPECT_EQ(q.priority, 2u);

    // Lowering one's own is allowed; raising with the capability too.
    dev.set_priority(amdqp::QueueRef::by_ring_va(q.pid, 0x1000), 1);
    EXPECT_EQ(q.priority, 1u);
    fake->cap_sys_nice = true;
    dev.set_priority(amdqp::QueueRef::by_ring_va(q.pid, 0x1000), 12);
    EXPECT_EQ(q.priority, 12u);
}

TEST_F(FakeDeviceTest, SetPriorityOfUnknownQueue) {
    auto dev = open();
    const Error e = thrown([&] { dev.set_priority(amdqp::QueueRef::by_id(77, 1, 9), 2); });
    EXPECT_EQ(e.code(), errc::no_queue);
    EXPECT_TRUE(has(e, "pid 77 gpu 1 queue 9")) << e.what();
    EXPECT_TRUE(has(e, "amdqpctl list")) << e.what();
}

TEST_F(FakeDeviceTest, SetPriorityOutOfRangeIsRejectedBeforeTheKernel) {
    fake->add_queue(fake->caller_pid, 1, 0x1000, 2);
    auto dev = open();
    const Error e = thrown([&] { dev.set_priority(amdqp::QueueRef::by_id(1000, 1, 1), 16); });
    EXPECT_EQ(e.code(), errc::invalid);
    EXPECT_TRUE(has(e, "0..15")) << e.what();
    EXPECT_EQ(fake->calls(AMDQP_IOC_SET_PRIORITY), 0u);
}

TEST_F(FakeDeviceTest, SuspendingAnotherUsersQueueNamesTheCapabilities) {
    fake->add_queue(4444, 2, 0x4000, 2, /*uid=*/0);
    auto dev = open();
    const amdqp::QueueRef ref = amdqp::QueueRef::by_id(4444, 2, 1);
    const auto res = dev.suspend({&ref, 1});
    ASSERT_EQ(res.entries.size(), 1u);
    EXPECT_EQ(res.done, 0u);
    EXPECT_EQ(res.entries[0].error, -EPERM);
    EXPECT_EQ(amdqp::entry_errc(res.entries[0].error), errc::permission);
    const std::string msg = amdqp::entry_message(res.entries[0], true);
    EXPECT_NE(msg.find("CAP_SYS_ADMIN"), std::string::npos) << msg;
    EXPECT_NE(msg.find("ptrace"), std::string::npos) << msg;
    EXPECT_NE(msg.find("pid 4444 gpu 2 queue 1"), std::string::npos) << msg;
    EXPECT_FALSE(fake->suspended(4444, 2, 1));
}

TEST_F(FakeDeviceTest, UnknownGpuIsNamed) {
    auto dev = open();
    const std::uint32_t gpus[] = {1, 7};
    const Error e = thrown([&] { dev.suspend_below(gpus, 8); });
    EXPECT_EQ(e.code(), errc::no_gpu);
    EXPECT_TRUE(has(e, "unknown GPU id 7")) << e.what();
    EXPECT_TRUE(has(e, "GPUs: 1, 2")) << e.what();
}

TEST_F(FakeDeviceTest, SuspendBelowPriorityRange) {
    auto dev = open();
    EXPECT_EQ(thrown([&] { dev.suspend_below({}, 17); }).code(), errc::invalid);
    EXPECT_EQ(thrown([&] { dev.suspend_below({}, -1); }).code(), errc::invalid);
    EXPECT_NO_THROW(dev.suspend_below({}, 16));
}

TEST(Errors, CodesMapToDistinctCStatuses) {
    std::set<int> seen;
    for (errc c : {errc::no_module, errc::permission, errc::no_gpu, errc::no_queue, errc::invalid,
                   errc::abi_mismatch, errc::busy, errc::system}) {
        const int s = amdqp::errc_to_status(c);
        EXPECT_LT(s, 0);
        EXPECT_TRUE(seen.insert(s).second) << amdqp::errc_name(c);
        EXPECT_STRNE(amdqp_strerror(s), "amdqp: unknown status");
    }
    EXPECT_STREQ(amdqp::errc_name(errc::no_module), "no_module");
}

TEST(Errors, EntryErrnoMapping) {
    EXPECT_EQ(amdqp::entry_errc(-ENOENT), errc::no_queue);
    EXPECT_EQ(amdqp::entry_errc(-EAGAIN), errc::busy);
    EXPECT_EQ(amdqp::entry_errc(-ETIME), errc::busy);
    EXPECT_EQ(amdqp::entry_errc(-ENODEV), errc::no_gpu);
    EXPECT_EQ(amdqp::entry_errc(-EIO), errc::system);
    amdqp::RefResult r{amdqp::QueueRef::by_ring_va(5, 0xabc000), -ETIME, 0};
    const std::string msg = amdqp::entry_message(r, true);
    EXPECT_NE(msg.find("pid 5 ring 0xabc000"), std::string::npos) << msg;
    EXPECT_NE(msg.find("did not preempt"), std::string::npos) << msg;
}

}  // namespace
