// SPDX-License-Identifier: MIT
#include <cerrno>
#include <vector>

#include "fake_fixture.h"

namespace {

using amdqp::CuGeometry;
using amdqp::CuTarget;
using amdqp::Error;
using amdqp::QueueRef;

TEST_F(FakeDeviceTest, VersionAndDevices) {
    auto dev = open();
    const auto v = dev.version();
    EXPECT_EQ(v.abi_major, static_cast<unsigned>(AMDQP_VERSION_MAJOR));
    EXPECT_EQ(v.num_devices, 2u);
    const auto devs = dev.devices();
    ASSERT_EQ(devs.size(), 2u);
    EXPECT_EQ(devs[0].gpu_id, 1u);
    EXPECT_EQ(devs[0].sched_mode, static_cast<unsigned>(AMDQP_SCHED_HWS));
    EXPECT_EQ(devs[1].gpu_id, 2u);
    EXPECT_EQ(devs[1].sched_mode, static_cast<unsigned>(AMDQP_SCHED_MES));
}

TEST_F(FakeDeviceTest, LookupByRingAndById) {
    fake->add_queue(100, 1, 0x7f0000, 12);
    fake->add_queue(200, 1, 0x7f0000, 2);  // same VA, another process
    fake->add_queue(200, 2, 0x8f0000, 2);
    auto dev = open();

    auto q = dev.find_queue(200, std::uint64_t{0x7f0000});
    ASSERT_TRUE(q);
    EXPECT_EQ(q->pid, 200u);
    EXPECT_EQ(q->gpu_id, 1u);
    EXPECT_EQ(q->queue_id, 2u);
    EXPECT_EQ(q->priority, 2u);

    q = dev.find_queue(200, 2, 1);
    ASSERT_TRUE(q);
    EXPECT_EQ(q->ring_va, 0x8f0000u);

    EXPECT_FALSE(dev.find_queue(100, std::uint64_t{0x8f0000}));
    EXPECT_FALSE(dev.find_queue(200, 2, 2));
    EXPECT_FALSE(dev.find_queue(300, 1, 1));
}

TEST_F(FakeDeviceTest, QueueFilters) {
    fake->add_queue(100, 1, 0x1000, 12);
    fake->add_queue(200, 1, 0x2000, 2);
    fake->add_queue(200, 2, 0x3000, 2);
    auto dev = open();
    EXPECT_EQ(dev.queues().size(), 3u);
    EXPECT_EQ(dev.queues(1).size(), 2u);
    EXPECT_EQ(dev.queues(0, 200).size(), 2u);
    EXPECT_EQ(dev.queues(2, 200).size(), 1u);
    EXPECT_EQ(dev.queues(2, 100).size(), 0u);
}

TEST_F(FakeDeviceTest, ListGrowsPastItsFirstCapacity) {
    for (std::uint32_t i = 0; i < 1000; i++)
        fake->add_queue(100 + i % 7, 1 + i % 2, 0x100000 + i * 0x1000, i % 16);
    auto dev = open();
    const auto qs = dev.queues();
    ASSERT_EQ(qs.size(), 1000u);
    for (std::uint32_t i = 0; i < 1000; i++)
        EXPECT_EQ(qs[i].ring_va, 0x100000u + i * 0x1000) << i;
    // One call to learn the count, one with room for all.
    EXPECT_EQ(fake->calls(AMDQP_IOC_LIST_QUEUES), 2u);
}

TEST_F(FakeDeviceTest, ListThatGrowsBetweenCallsIsRetried) {
    for (std::uint32_t i = 0; i < 100; i++)
        fake->add_queue(100, 1, 0x1000 * (i + 1), 7);
    int grown = 0;
    fake->before_list_queues = [&](amdqp::testing::FakeAmdqp& f) {
        // Two bursts of new queues, each past the room the library made.
        if (grown++ < 2)
            for (int i = 0; i < 500; i++)
                f.add_queue(300, 2, 0x10000000 + 0x1000 * (grown * 1000 + i), 7);
    };
    auto dev = open();
    EXPECT_EQ(dev.queues().size(), 1100u);
    EXPECT_EQ(fake->calls(AMDQP_IOC_LIST_QUEUES), 3u);
}

TEST_F(FakeDeviceTest, KernelPerCallCapEndsTheLoop) {
    for (std::uint32_t i = 0; i < 300; i++)
        fake->add_queue(100, 1, 0x1000 * (i + 1), 7);
    fake->list_cap = 128;  // a kernel that writes fewer than exist
    auto dev = open();
    EXPECT_EQ(dev.queues().size(), 128u);
    EXPECT_LE(fake->calls(AMDQP_IOC_LIST_QUEUES), 2u);
}

TEST_F(FakeDeviceTest, OlderKernelsShorterEntriesReadAsZero) {
    fake->add_queue(100, 1, 0x1000, 7).suspend_count = 5;
    fake->queue_info_size = offsetof(amdqp_queue_info, suspend_count);
    auto dev = open();
    const auto qs = dev.queues();
    ASSERT_EQ(qs.size(), 1u);
    EXPECT_EQ(qs[0].ring_va, 0x1000u);
    EXPECT_EQ(qs[0].suspend_count, 0u);
    EXPECT_EQ(qs[0].created_ns, 0u);
}

TEST_F(FakeDeviceTest, SuspendAndResumeReportPerEntry) {
    fake->add_queue(100, 1, 0x1000, 2);
    fake->add_queue(100, 2, 0x2000, 2).cooldown = true;
    fake->add_queue(100, 1, 0x3000, 2).fail_suspend = -ETIME;
    auto dev = open();
    const std::vector<QueueRef> refs = {QueueRef::by_ring_va(100, 0x1000),
                                        QueueRef::by_id(100, 2, 1), QueueRef::by_id(100, 1, 2),
                                        QueueRef::by_id(100, 1, 9)};
    auto res = dev.suspend(refs, 500);
    ASSERT_EQ(res.entries.size(), 4u);
    EXPECT_EQ(res.done, 1u);
    EXPECT_TRUE(res.entries[0].ok());
    EXPECT_TRUE(res.entries[0].state & AMDQP_QSTATE_SUSPENDED);
    EXPECT_TRUE(res.entries[0].state & AMDQP_QSTATE_HELD);
    EXPECT_EQ(res.entries[1].error, -EAGAIN);
    EXPECT_EQ(res.entries[2].error, -ETIME);
    EXPECT_EQ(res.entries[3].error, -ENOENT);
    EXPECT_TRUE(fake->suspended(100, 1, 1));

    // Twice from the same handle: the kernel says so.
    res = dev.suspend({refs.data(), 1});
    EXPECT_EQ(res.entries[0].error, -EALREADY);

    res = dev.resume({refs.data(), 1});
    EXPECT_EQ(res.done, 1u);
    EXPECT_EQ(res.entries[0].state, 0u);
    EXPECT_FALSE(fake->suspended(100, 1, 1));
    EXPECT_TRUE(dev.suspend({}).entries.empty());
}

TEST_F(FakeDeviceTest, BigBatchesAreSplitByTheKernelsLimit) {
    fake->max_batch = 16;
    std::vector<QueueRef> refs;
    for (std::uint32_t i = 0; i < 40; i++) {
        fake->add_queue(100, 1, 0x1000 * (i + 1), 2);
        refs.push_back(QueueRef::by_ring_va(100, 0x1000 * (i + 1)));
    }
    auto dev = open();
    const auto res = dev.suspend(refs);
    EXPECT_EQ(res.done, 40u);
    EXPECT_EQ(res.entries.size(), 40u);
    EXPECT_EQ(fake->calls(AMDQP_IOC_SUSPEND), 3u);
}

TEST_F(FakeDeviceTest, HoldsEndWithTheDevice) {
    fake->add_queue(100, 1, 0x1000, 2);
    {
        auto dev = open();
        const QueueRef ref = QueueRef::by_id(100, 1, 1);
        EXPECT_EQ(dev.suspend({&ref, 1}).done, 1u);
        auto moved = std::move(dev);
        EXPECT_TRUE(fake->suspended(100, 1, 1));
    }
    EXPECT_FALSE(fake->suspended(100, 1, 1));
    EXPECT_EQ(fake->open_fds(), 0u);
}

TEST_F(FakeDeviceTest, SuspendBelowSparesTheCallerAndHigherQueues) {
    fake->add_queue(100, 1, 0x1000, 12);              // high: stays
    fake->add_queue(200, 1, 0x2000, 2);               // low: goes
    fake->add_queue(fake->caller_pid, 1, 0x3000, 2);  // the caller's own: stays
    fake->add_queue(300, 2, 0x4000, 2);               // other GPU: stays
    fake->add_queue(400, 1, 0x5000, 2, 0);            // another user's: skipped
    auto dev = open();
    const std::uint32_t gpu = 1;
    const auto r = dev.suspend_below({&gpu, 1}, 8);
    EXPECT_EQ(r.affected, 1u);
    EXPECT_EQ(r.skipped, 1u);
    EXPECT_FALSE(fake->suspended(100, 1, 1));
    EXPECT_TRUE(fake->suspended(200, 1, 2));
    EXPECT_FALSE(fake->suspended(fake->caller_pid, 1, 3));
    EXPECT_FALSE(fake->suspended(300, 2, 1));
    EXPECT_EQ(fake->gpu(1)->sched_updates, 1u);

    const auto back = dev.resume_all({&gpu, 1});
    EXPECT_EQ(back.affected, 1u);
    EXPECT_FALSE(fake->suspended(200, 1, 2));
}

TEST_F(FakeDeviceTest, SuspendBelowOnEveryGpu) {
    fake->add_queue(200, 1, 0x2000, 2);
    fake->add_queue(300, 2, 0x4000, 2);
    auto dev = open();
    EXPECT_EQ(dev.suspend_below({}, 8).affected, 2u);
    EXPECT_EQ(dev.resume_all().affected, 2u);
}

TEST_F(FakeDeviceTest, ConfineBelowAndRelease) {
    fake->add_queue(100, 1, 0x1000, 12);              // high: stays
    fake->add_queue(200, 1, 0x2000, 2);               // low: confined
    fake->add_queue(fake->caller_pid, 1, 0x3000, 2);  // the caller's own: stays
    fake->add_queue(400, 1, 0x5000, 2, 0);            // another user's: skipped
    fake->gpu(2)->cu_per_xcc = 0;                     // a GPU that cannot be confined
    auto dev = open();
    const std::uint32_t ids[] = {1, 2, 9};
    const auto g = dev.cu_geometry(ids);
    ASSERT_EQ(g.size(), 3u);
    EXPECT_TRUE(g[0].confinable());
    EXPECT_EQ(g[0].cu_per_xcc, 8u);
    EXPECT_EQ(g[0].mask_words, 1u);
    EXPECT_FALSE(g[1].confinable());
    EXPECT_EQ(g[1].error, -EOPNOTSUPP);
    EXPECT_EQ(g[2].error, -ENODEV);

    const CuTarget t{g[0], g[0].cu_range(2, 4)};
    EXPECT_EQ(t.mask, std::vector<std::uint32_t>{0x3c});
    const auto r = dev.confine_below({&t, 1}, 8);
    EXPECT_EQ(r.affected, 1u);
    EXPECT_EQ(r.skipped, 1u);
    EXPECT_EQ(fake->confined(200, 1, 2), std::vector<std::uint32_t>{0x3c});
    EXPECT_TRUE(fake->confined(100, 1, 1).empty());
    EXPECT_TRUE(fake->confined(fake->caller_pid, 1, 3).empty());
    // The same mask again changes nothing.
    EXPECT_EQ(dev.confine_below({&t, 1}, 8).affected, 0u);

    const CuTarget bad{g[1], {1}};
    EXPECT_THROW(dev.confine_below({&bad, 1}, 8), Error);
    const CuTarget short_mask{g[0], {}};
    EXPECT_THROW(dev.confine_below({&short_mask, 1}, 8), Error);
    EXPECT_THROW(dev.confine_below({&t, 1}, 16), Error);

    EXPECT_EQ(dev.release_confinement().affected, 1u);
    EXPECT_TRUE(fake->confined(200, 1, 2).empty());
}

TEST_F(FakeDeviceTest, CuRangePerXcc) {
    CuGeometry g{1, 2, 40, 4, 0};
    EXPECT_EQ(g.cu_range(0, 4), (std::vector<std::uint32_t>{0xf, 0, 0xf, 0}));
    EXPECT_EQ(g.cu_range(30, 100),
              (std::vector<std::uint32_t>{0xc0000000, 0xff, 0xc0000000, 0xff}));
}

TEST_F(FakeDeviceTest, PriorityChangeIsSeen) {
    fake->add_queue(fake->caller_pid, 1, 0x1000, 7);
    auto dev = open();
    dev.set_priority(QueueRef::by_ring_va(fake->caller_pid, 0x1000), 2);
    EXPECT_EQ(dev.find_queue(fake->caller_pid, std::uint64_t{0x1000})->priority, 2u);
}

}  // namespace
