// SPDX-License-Identifier: MIT
//
// The registry's decisions: which mechanism a queue gets, what the page
// shows, what the one warning line says, and how cooperative requests act.
#include <gtest/gtest.h>

#include <unistd.h>

#include <amdqp/activity.hpp>

#include "../../lib/tests/activity_test_util.hpp"
#include "activity_page.hpp"
#include "preload_test_util.hpp"
#include "queue_registry.hpp"

namespace {

using amdqp::detail::ActivityWriter;
using amdqp::preload::Config;
using amdqp::preload::HsaQueueView;
using amdqp::preload::KernelQueueId;
using amdqp::preload::QueueKind;
using amdqp::preload::QueueRegistry;
using amdqp::preload::RegisterResult;
using amdqp_test::FakeControl;
using amdqp_test::FakeLink;
using amdqp_test::StderrCatcher;

class RegistryTest : public ::testing::Test {
  protected:
    RegistryTest() : writer() {
        amdqp::preload::warn_reset_after_fork();  // each test may say its line
        ::setenv("AMDQP_QUIET", "1", 1);          // tests that read the line unset it
    }
    ~RegistryTest() override { ::unsetenv("AMDQP_QUIET"); }

    QueueRegistry& registry(Config c = Config{}) {
        reg = std::make_unique<QueueRegistry>(writer, link, control, c);
        reg->set_coop_starter([this] {
            starts++;
            return true;
        });
        return *reg;
    }

    static HsaQueueView hsa(std::uint64_t ring, std::uint64_t doorbell) {
        return {ring, doorbell, ring + 0x100000 + 128};
    }
    static KernelQueueId sim(std::uint64_t ring, std::uint32_t qid, std::uint32_t gpu = 4) {
        KernelQueueId k;
        k.kind = QueueKind::sim;
        k.fd = 9;
        k.gpu_id = gpu;
        k.queue_id = qid;
        k.ring_va = ring;
        k.ring_size = 65536;
        k.priority = 7;
        return k;
    }

    amdqp::activity::Snapshot page() {
        return amdqp::activity::Page::open(getpid(), amdqp::activity::Page::Access::read)
            .snapshot();
    }

    amdqp_test::TempDir dir;
    ActivityWriter writer;
    FakeLink link;
    FakeControl control;
    std::unique_ptr<QueueRegistry> reg;
    int starts = 0;
};

TEST_F(RegistryTest, NoModuleAndNoIdsLeavesTheQueueUntaggedWithOneLine) {
    ::unsetenv("AMDQP_QUIET");
    StderrCatcher err;
    Config c;
    c.priority = 2;
    auto& r = registry(c);
    r.hsa_queue_created(hsa(0x10000, 0xd000));
    r.hsa_queue_created(hsa(0x20000, 0xd100));
    std::string text = err.text();
    EXPECT_EQ(amdqp_test::count_lines(text), 1) << text;
    EXPECT_NE(text.find("load the module"), std::string::npos) << text;
    EXPECT_NE(text.find("keep their default priority"), std::string::npos) << text;

    ASSERT_EQ(link.calls.size(), 2u);
    EXPECT_EQ(link.calls[0].pid, getpid());
    EXPECT_EQ(link.calls[0].ring_va, 0x10000u);
    EXPECT_EQ(link.calls[0].priority, 2);

    auto snap = page();
    ASSERT_EQ(snap.slots.size(), 2u);
    EXPECT_EQ(snap.slots[0].mechanism, AMDQP_ACT_MECH_NONE);
    EXPECT_EQ(snap.slots[0].priority, 2u);
    EXPECT_EQ(snap.slots[0].read_index_va, 0x10000u + 0x100000 + 128);
    EXPECT_FALSE(snap.slots[0].queue_id);
    EXPECT_FALSE(snap.coop_capable());
    EXPECT_EQ(starts, 0);
    EXPECT_EQ(r.doorbell_slot(0xd000), writer.slot(0));
    EXPECT_EQ(r.doorbell_slot(0xd100), writer.slot(1));
    EXPECT_EQ(r.doorbell_slot(0xe000), nullptr);
}

TEST_F(RegistryTest, QuietMeansNoLine) {
    ::setenv("AMDQP_QUIET", "1", 1);
    StderrCatcher err;
    registry().hsa_queue_created(hsa(0x10000, 0xd000));
    ::unsetenv("AMDQP_QUIET");
    EXPECT_EQ(err.text(), "");
}

TEST_F(RegistryTest, ManagedQueueShowsTheKernelsView) {
    ::unsetenv("AMDQP_QUIET");
    link.answer.status = RegisterResult::ok;
    link.answer.gpu_id = 5;
    link.answer.queue_id = 3;
    link.answer.priority = 12;
    link.answer.message.clear();
    StderrCatcher err;
    Config c;
    c.priority = 12;
    auto& r = registry(c);
    r.hsa_queue_created(hsa(0x10000, 0xd000));
    EXPECT_EQ(err.text(), "");
    auto snap = page();
    ASSERT_EQ(snap.slots.size(), 1u);
    EXPECT_EQ(snap.slots[0].mechanism, AMDQP_ACT_MECH_AMDQP);
    EXPECT_EQ(snap.slots[0].gpu_id, 5u);
    EXPECT_EQ(snap.slots[0].queue_id, 3u);
    EXPECT_EQ(snap.slots[0].priority, 12u);
    EXPECT_EQ(r.coop_queues(), 0u);
}

// Above the ceiling the administrator granted: one line that says so (and
// no advice to hand out capabilities), the queue keeps what the kernel says.
TEST_F(RegistryTest, RaisingAboveTheCeilingWarnsOnceAndKeepsThePriority) {
    ::unsetenv("AMDQP_QUIET");
    link.answer.status = RegisterResult::refused;
    link.answer.gpu_id = 5;
    link.answer.queue_id = 3;
    link.answer.priority = 7;
    StderrCatcher err;
    Config c;
    c.priority = 12;
    auto& r = registry(c);
    r.hsa_queue_created(hsa(0x10000, 0xd000));
    r.hsa_queue_created(hsa(0x20000, 0xd100));
    std::string text = err.text();
    EXPECT_EQ(amdqp_test::count_lines(text), 1) << text;
    EXPECT_NE(text.find("administrator granted"), std::string::npos) << text;
    EXPECT_EQ(text.find("setcap"), std::string::npos) << text;
    EXPECT_NE(text.find("keep priority 7"), std::string::npos) << text;
    auto snap = page();
    ASSERT_EQ(snap.slots.size(), 2u);
    EXPECT_EQ(snap.slots[0].priority, 7u);  // the truth, not the wish
    EXPECT_EQ(snap.slots[0].mechanism, AMDQP_ACT_MECH_AMDQP);
}

TEST_F(RegistryTest, CreationIoctlThenHsaQueueMakeOneCooperativeQueue) {
    // ROCr's order: the KFD ioctl happens inside hsa_queue_create.
    auto& r = registry();
    r.kernel_queue_created(sim(0x10000, 6));
    r.hsa_queue_created(hsa(0x10000, 0xd000));
    EXPECT_EQ(r.size(), 1u);
    EXPECT_EQ(link.calls.size(), 1u);  // registered once
    EXPECT_EQ(starts, 1);
    auto snap = page();
    ASSERT_EQ(snap.slots.size(), 1u);
    EXPECT_EQ(snap.slots[0].mechanism, AMDQP_ACT_MECH_COOP);
    EXPECT_EQ(snap.slots[0].gpu_id, 4u);
    EXPECT_EQ(snap.slots[0].queue_id, 6u);
    EXPECT_TRUE(snap.coop_capable());
    EXPECT_EQ(r.doorbell_slot(0xd000), writer.slot(0));
}

TEST_F(RegistryTest, LateIoctlTurnsAnUntaggedQueueCooperative) {
    auto& r = registry();
    r.hsa_queue_created(hsa(0x10000, 0xd000));
    EXPECT_EQ(page().slots[0].mechanism, AMDQP_ACT_MECH_NONE);
    r.kernel_queue_created(sim(0x10000, 6));
    auto snap = page();
    ASSERT_EQ(snap.slots.size(), 1u);
    EXPECT_EQ(snap.slots[0].mechanism, AMDQP_ACT_MECH_COOP);
    EXPECT_EQ(snap.slots[0].queue_id, 6u);
    EXPECT_TRUE(snap.coop_capable());
}

TEST_F(RegistryTest, UnmanagedDeviceFallsBackToCooperative) {
    ::unsetenv("AMDQP_QUIET");
    link.answer.status = RegisterResult::not_managed;
    link.answer.message = "amdqp: no such queue";
    StderrCatcher err;
    auto& r = registry();
    r.kernel_queue_created(sim(0x10000, 6));
    EXPECT_EQ(err.text(), "");  // nothing is wrong: the device is just not managed
    EXPECT_EQ(page().slots[0].mechanism, AMDQP_ACT_MECH_COOP);
}

TEST_F(RegistryTest, QueuesCreatedOutsideHsaAreTaggedAndForgotten) {
    // ROCr's own queues (blit kernels) never pass hsa_queue_create.
    auto& r = registry();
    r.kernel_queue_created(sim(0x10000, 6));
    r.kernel_queue_created(sim(0x20000, 7));
    EXPECT_EQ(page().slots.size(), 2u);
    r.kernel_queue_destroyed(QueueKind::sim, 9, 4, 6);
    r.kernel_queue_destroyed(QueueKind::sim, 9, 5, 7);  // another gpu: not that queue
    auto snap = page();
    ASSERT_EQ(snap.slots.size(), 1u);
    EXPECT_EQ(snap.slots[0].ring_va, 0x20000u);
    EXPECT_EQ(r.size(), 1u);
}

TEST_F(RegistryTest, HsaDestroyFreesSlotAndDoorbell) {
    auto& r = registry();
    r.hsa_queue_created(hsa(0x10000, 0xd000));
    r.hsa_queue_destroyed(0x10000);
    EXPECT_EQ(r.doorbell_slot(0xd000), nullptr);
    EXPECT_TRUE(page().slots.empty());
    EXPECT_EQ(r.size(), 0u);
}

TEST_F(RegistryTest, CooperativeSuspendAndResumeTouchEachQueueOnce) {
    auto& r = registry();
    r.kernel_queue_created(sim(0x10000, 6));
    r.kernel_queue_created(sim(0x20000, 7));
    link.answer.status = RegisterResult::ok;  // a managed queue is not the process's to stop
    r.hsa_queue_created(hsa(0x30000, 0xd000));

    auto out = r.apply_coop(true);
    EXPECT_EQ(out.updates, 2u);
    EXPECT_EQ(out.error, 0);
    ASSERT_EQ(control.calls.size(), 2u);
    EXPECT_FALSE(control.calls[0].on);
    EXPECT_EQ(control.calls[0].q.queue_id, 6u);
    EXPECT_EQ(control.calls[1].q.queue_id, 7u);

    out = r.apply_coop(true);  // already off
    EXPECT_EQ(out.updates, 0u);
    EXPECT_EQ(control.calls.size(), 2u);

    out = r.apply_coop(false);
    EXPECT_EQ(out.updates, 2u);
    ASSERT_EQ(control.calls.size(), 4u);
    EXPECT_TRUE(control.calls[2].on);
}

TEST_F(RegistryTest, QueueBornWhileHeldOffJoinsTheOthers) {
    auto& r = registry();
    r.kernel_queue_created(sim(0x10000, 6));
    r.apply_coop(true);
    r.kernel_queue_created(sim(0x20000, 7));
    ASSERT_EQ(control.calls.size(), 2u);
    EXPECT_EQ(control.calls[1].q.queue_id, 7u);
    EXPECT_FALSE(control.calls[1].on);
    EXPECT_EQ(page().header.coop_updates, 1u);
    EXPECT_EQ(r.apply_coop(false).updates, 2u);
}

TEST_F(RegistryTest, PriorityUpdateWhileHeldOffKeepsTheQueueOff) {
    auto& r = registry();
    r.kernel_queue_created(sim(0x10000, 6));
    EXPECT_EQ(r.kernel_queue_updated(QueueKind::sim, 9, 4, 6, 100, 9), 100u);
    r.apply_coop(true);
    EXPECT_TRUE(r.holding_off());
    EXPECT_EQ(r.kernel_queue_updated(QueueKind::sim, 9, 4, 6, 100, 11), 0u);
    EXPECT_EQ(r.kernel_queue_updated(QueueKind::sim, 9, 4, 99, 100, 11), 100u);  // not ours
    // Bits above the percentage (KFD gives them other meanings) survive.
    EXPECT_EQ(r.kernel_queue_updated(QueueKind::sim, 9, 4, 6, 0x100 | 100, 11), 0x100u);
    r.apply_coop(false);
    // Put back at the priority the runtime asked for meanwhile.
    ASSERT_EQ(control.calls.size(), 2u);
    EXPECT_EQ(control.calls[1].q.priority, 11u);
    EXPECT_FALSE(r.holding_off());
}

TEST_F(RegistryTest, FailedUpdatesAreReported) {
    auto& r = registry();
    r.kernel_queue_created(sim(0x10000, 6));
    control.rc = -EIO;
    auto out = r.apply_coop(true);
    EXPECT_EQ(out.updates, 0u);
    EXPECT_EQ(out.error, -EIO);
    control.rc = 0;
    out = r.apply_coop(true);  // retried: it never went off
    EXPECT_EQ(out.updates, 1u);
}

TEST_F(RegistryTest, StreamPriorityRetagsWithTheHsaPriority) {
    link.answer.status = RegisterResult::ok;
    link.answer.message.clear();
    Config c;
    c.priority = 7;
    c.stream_priority = true;
    auto& r = registry(c);
    r.hsa_queue_created(hsa(0x10000, 0xd000));
    r.hsa_queue_priority(0x10000, 2);  // HSA_AMD_QUEUE_PRIORITY_HIGH
    r.hsa_queue_priority(0x10000, 2);  // unchanged: no new registration
    r.hsa_queue_priority(0x10000, 0);  // LOW
    r.hsa_queue_priority(0x10000, 1);  // NORMAL: the process's priority
    ASSERT_EQ(link.calls.size(), 4u);
    EXPECT_EQ(link.calls[0].priority, 7);
    EXPECT_EQ(link.calls[1].priority, 12);
    EXPECT_EQ(link.calls[2].priority, 2);
    EXPECT_EQ(link.calls[3].priority, 7);
}

TEST_F(RegistryTest, ClearForgetsEverything) {
    auto& r = registry();
    r.kernel_queue_created(sim(0x10000, 6));
    r.hsa_queue_created(hsa(0x20000, 0xd000));
    r.clear();
    EXPECT_EQ(r.size(), 0u);
    EXPECT_TRUE(page().slots.empty());
    EXPECT_FALSE(page().coop_capable());
    EXPECT_EQ(r.doorbell_slot(0xd000), nullptr);
}

TEST_F(RegistryTest, WithoutAPageQueuesAreStillRegistered) {
    ActivityWriter nowhere(ActivityWriter::never);
    QueueRegistry r(nowhere, link, control, Config{});
    StderrCatcher err;
    r.hsa_queue_created(hsa(0x10000, 0xd000));
    r.kernel_queue_created(sim(0x10000, 6));
    err.text();
    EXPECT_EQ(link.calls.size(), 1u);
    EXPECT_EQ(r.doorbell_slot(0xd000), nullptr);
    EXPECT_EQ(r.apply_coop(true).updates, 1u);
}

}  // namespace
