// SPDX-License-Identifier: MIT
#include <cerrno>
#include <cstring>
#include <string>
#include <thread>

#include <amdqp/amdqp.h>

#include "fake_fixture.h"

namespace {

class CApiTest : public FakeDeviceTest {
  protected:
    void SetUp() override {
        fake->add_queue(4242, 1, 0x10000, 12);
        fake->add_queue(4343, 1, 0x20000, 2);
        fake->add_queue(4343, 2, 0x30000, 2);
        h = amdqp::to_c_handle(open());
    }
    void TearDown() override { amdqp_close(h); }

    amdqp_t* h = nullptr;
};

bool last_error_has(const char* part) {
    return std::string(amdqp_last_error()).find(part) != std::string::npos;
}

TEST(CApi, OpenWithoutTheModule) {
    amdqp_t* h = reinterpret_cast<amdqp_t*>(0x1);
    EXPECT_EQ(amdqp_open_path("/nonexistent/amdqp", &h), AMDQP_ERR_NO_MODULE);
    EXPECT_EQ(h, nullptr);
    EXPECT_TRUE(last_error_has("/nonexistent/amdqp not found: load the module"))
        << amdqp_last_error();
    EXPECT_EQ(amdqp_last_errno(), ENOENT);
    EXPECT_NE(std::string(amdqp_strerror(AMDQP_ERR_NO_MODULE)).find("modprobe amdqp"),
              std::string::npos);

    ::setenv("AMDQP_DEVICE", "/nonexistent/env", 1);
    EXPECT_EQ(amdqp_open(&h), AMDQP_ERR_NO_MODULE);
    EXPECT_TRUE(last_error_has("/nonexistent/env")) << amdqp_last_error();
    ::unsetenv("AMDQP_DEVICE");
    amdqp_close(nullptr);
}

TEST(CApi, LastErrorIsPerThread) {
    int p;
    EXPECT_EQ(amdqp_parse_priority("bogus-main", &p), AMDQP_ERR_INVALID);
    std::thread([] {
        int q;
        EXPECT_EQ(amdqp_parse_priority("bogus-thread", &q), AMDQP_ERR_INVALID);
        EXPECT_TRUE(last_error_has("bogus-thread"));
    }).join();
    EXPECT_TRUE(last_error_has("bogus-main")) << amdqp_last_error();
}

TEST(CApi, LibraryVersionIsTheProjects) {
    EXPECT_STREQ(amdqp_library_version(), AMDQP_TEST_VERSION);
}

TEST_F(CApiTest, VersionAndGpus) {
    EXPECT_GE(amdqp_fd(h), 0);
    amdqp_version_info_t v{};
    EXPECT_EQ(amdqp_get_version(h, &v), AMDQP_ERR_INVALID);  // size not set
    v.size = sizeof(v);
    ASSERT_EQ(amdqp_get_version(h, &v), AMDQP_OK);
    EXPECT_EQ(v.abi_major, static_cast<unsigned>(AMDQP_VERSION_MAJOR));
    EXPECT_EQ(v.num_devices, 2u);
    EXPECT_EQ(v.max_batch, static_cast<unsigned>(AMDQP_MAX_BATCH));

    EXPECT_EQ(amdqp_get_gpus(h, nullptr, 0, 0), 2);
    amdqp_gpu_t gpus[4];
    std::memset(gpus, 0xff, sizeof(gpus));
    ASSERT_EQ(amdqp_get_gpus(h, gpus, 1, sizeof(gpus[0])), 2);  // more exist than fit
    EXPECT_EQ(gpus[0].size, sizeof(amdqp_gpu_t));
    EXPECT_EQ(gpus[0].gpu_id, 1u);
    EXPECT_EQ(gpus[0].sched_mode, AMDQP_GPU_SCHED_HWS);
    EXPECT_EQ(gpus[0].num_queues, 2u);
    EXPECT_EQ(gpus[1].size, 0xffffffffu);  // untouched
    ASSERT_EQ(amdqp_get_gpus(h, gpus, 4, sizeof(gpus[0])), 2);
    EXPECT_EQ(gpus[1].sched_mode, AMDQP_GPU_SCHED_MES);
}

// What a caller built against a shorter, older amdqp_queue_t sees.
struct OldQueue {
    std::uint32_t size, pid, uid, gpu_id, queue_id, priority;
};

TEST_F(CApiTest, QueuesAtTheCallersElementSize) {
    OldQueue old[4];
    std::memset(old, 0xab, sizeof(old));
    ASSERT_EQ(
        amdqp_get_queues(h, 0, 4343, reinterpret_cast<amdqp_queue_t*>(old), 4, sizeof(OldQueue)),
        2);
    EXPECT_EQ(old[0].size, sizeof(OldQueue));
    EXPECT_EQ(old[0].pid, 4343u);
    EXPECT_EQ(old[0].priority, 2u);
    EXPECT_EQ(old[1].gpu_id, 2u);
    EXPECT_EQ(old[2].size, 0xababababu);

    amdqp_queue_t q[8];
    ASSERT_EQ(amdqp_get_queues(h, 1, 0, q, 8, sizeof(q[0])), 2);
    EXPECT_EQ(q[0].ring_va, 0x10000u);
    EXPECT_EQ(q[1].ring_va, 0x20000u);
    EXPECT_EQ(amdqp_get_queues(h, 0, 0, nullptr, 3, sizeof(q[0])), AMDQP_ERR_INVALID);
}

TEST_F(CApiTest, Lookup) {
    amdqp_queue_t q{};
    ASSERT_EQ(amdqp_find_queue_by_ring(h, 4343, 0x30000, &q, sizeof(q)), AMDQP_OK);
    EXPECT_EQ(q.gpu_id, 2u);
    EXPECT_EQ(q.queue_id, 1u);
    ASSERT_EQ(amdqp_find_queue(h, 4242, 1, 1, &q, sizeof(q)), AMDQP_OK);
    EXPECT_EQ(q.ring_va, 0x10000u);
    EXPECT_EQ(amdqp_find_queue(h, 4242, 1, 2, &q, sizeof(q)), AMDQP_ERR_NO_QUEUE);
    EXPECT_TRUE(last_error_has("pid 4242 gpu 1 queue 2")) << amdqp_last_error();
    EXPECT_EQ(amdqp_find_queue_by_ring(h, 4242, 0x20000, nullptr, 0), AMDQP_ERR_NO_QUEUE);
}

TEST_F(CApiTest, SetPriority) {
    amdqp_ref_t ref{};
    ref.pid = 4343;
    ref.by_ring = 1;
    ref.ring_va = 0x20000;
    EXPECT_EQ(amdqp_set_queue_priority(h, &ref, 1), AMDQP_OK);
    EXPECT_EQ(ref.status, AMDQP_OK);
    EXPECT_EQ(fake->find(4343, 1, 2)->priority, 1u);

    EXPECT_EQ(amdqp_set_queue_priority(h, &ref, AMDQP_PRIO_HIGH), AMDQP_ERR_PERMISSION);
    EXPECT_EQ(ref.status, AMDQP_ERR_PERMISSION);
    EXPECT_EQ(ref.error, -EPERM);
    EXPECT_TRUE(last_error_has("CAP_SYS_NICE")) << amdqp_last_error();
}

TEST_F(CApiTest, SuspendResumeRoundTrip) {
    amdqp_ref_t refs[3] = {};
    refs[0].pid = 4343;
    refs[0].gpu_id = 1;
    refs[0].queue_id = 2;
    refs[1].pid = 4343;
    refs[1].by_ring = 1;
    refs[1].ring_va = 0x30000;
    refs[2].pid = 4343;
    refs[2].gpu_id = 1;
    refs[2].queue_id = 99;
    amdqp_batch_stats_t stats{};
    stats.size = sizeof(stats);
    EXPECT_EQ(amdqp_suspend(h, refs, 3, sizeof(refs[0]), 0, &stats), 2);
    EXPECT_EQ(refs[0].status, AMDQP_OK);
    EXPECT_EQ(refs[0].state & AMDQP_QUEUE_SUSPENDED, AMDQP_QUEUE_SUSPENDED);
    EXPECT_EQ(refs[0].state & AMDQP_QUEUE_HELD, AMDQP_QUEUE_HELD);
    EXPECT_EQ(refs[1].status, AMDQP_OK);
    EXPECT_EQ(refs[2].status, AMDQP_ERR_NO_QUEUE);
    EXPECT_EQ(refs[2].error, -ENOENT);
    EXPECT_TRUE(last_error_has("pid 4343 gpu 1 queue 99")) << amdqp_last_error();
    EXPECT_EQ(stats.done, 2u);
    EXPECT_EQ(stats.skipped, 1u);
    EXPECT_TRUE(fake->suspended(4343, 2, 1));

    EXPECT_EQ(amdqp_resume(h, refs, 2, sizeof(refs[0]), nullptr), 2);
    EXPECT_FALSE(fake->suspended(4343, 2, 1));
    EXPECT_EQ(amdqp_suspend(h, refs, 1, 16, 0, nullptr), AMDQP_ERR_INVALID);
}

TEST_F(CApiTest, SuspendBelowAndResumeAll) {
    const std::uint32_t gpu = 1;
    amdqp_batch_stats_t stats{};
    stats.size = sizeof(stats);
    EXPECT_EQ(amdqp_suspend_below(h, &gpu, 1, AMDQP_PRIO_HIGH, 0, &stats), 1);
    EXPECT_EQ(stats.done, 1u);
    EXPECT_TRUE(fake->suspended(4343, 1, 2));
    EXPECT_FALSE(fake->suspended(4343, 2, 1));
    EXPECT_EQ(amdqp_resume_all(h, nullptr, 0, nullptr), 1);
    EXPECT_FALSE(fake->suspended(4343, 1, 2));

    const std::uint32_t bad = 9;
    EXPECT_EQ(amdqp_suspend_below(h, &bad, 1, 8, 0, nullptr), AMDQP_ERR_NO_GPU);
    EXPECT_TRUE(last_error_has("unknown GPU id 9")) << amdqp_last_error();
}

TEST_F(CApiTest, ConfineBelowAndRelease) {
    amdqp_confine_gpu_t t[2] = {};
    t[0].gpu_id = 1;
    t[1].gpu_id = 9;
    EXPECT_EQ(amdqp_cu_geometry(h, t, 2, sizeof(t[0])), 1);
    EXPECT_EQ(t[0].status, AMDQP_OK);
    EXPECT_EQ(t[0].mask_words, 1u);
    EXPECT_EQ(t[1].status, AMDQP_ERR_NO_GPU);
    std::uint32_t mask[1] = {0};
    EXPECT_EQ(amdqp_cu_range(&t[0], 0, 2, mask, 1), 1);
    EXPECT_EQ(mask[0], 0x3u);
    t[0].mask = mask;
    amdqp_batch_stats_t stats{};
    stats.size = sizeof(stats);
    EXPECT_EQ(amdqp_confine_below(h, t, 1, sizeof(t[0]), AMDQP_PRIO_HIGH, 0, &stats), 1);
    EXPECT_EQ(stats.done, 1u);
    EXPECT_EQ(fake->confined(4343, 1, 2), std::vector<std::uint32_t>{0x3});
    EXPECT_TRUE(fake->confined(4343, 2, 1).empty());
    EXPECT_EQ(amdqp_confine_below(h, t, 1, 8, AMDQP_PRIO_HIGH, 0, nullptr), AMDQP_ERR_INVALID);
    EXPECT_EQ(amdqp_confine_release(h, nullptr, 0, nullptr), 1);
    EXPECT_TRUE(fake->confined(4343, 1, 2).empty());
    EXPECT_EQ(amdqp_confine_below(h, &t[1], 1, sizeof(t[0]), 8, 0, nullptr), AMDQP_ERR_NO_GPU);
}

TEST_F(CApiTest, Events) {
    amdqp_event_record_t ev[4];
    EXPECT_EQ(amdqp_events_fd(h), -1);
    EXPECT_EQ(amdqp_events_read(h, ev, 4, sizeof(ev[0]), 0), AMDQP_ERR_INVALID);
    ASSERT_EQ(amdqp_events_subscribe(h, AMDQP_EV_MASK_ALL), AMDQP_OK);
    EXPECT_GE(amdqp_events_fd(h), 0);
    EXPECT_EQ(amdqp_events_read(h, ev, 4, sizeof(ev[0]), 0), 0);

    fake->add_queue(5000, 2, 0x50000, 7);
    fake->add_queue(5001, 2, 0x51000, 3);
    ASSERT_EQ(amdqp_events_read(h, ev, 1, sizeof(ev[0]), 0), 1);
    EXPECT_EQ(ev[0].size, sizeof(ev[0]));
    EXPECT_EQ(ev[0].type, static_cast<unsigned>(AMDQP_EV_QUEUE_CREATED));
    EXPECT_EQ(ev[0].pid, 5000u);
    EXPECT_STREQ(amdqp_event_name(ev[0].type), "queue_created");
    // The second was read from the kernel with the first: it is kept.
    ASSERT_EQ(amdqp_events_read(h, ev, 4, sizeof(ev[0]), 0), 1);
    EXPECT_EQ(ev[0].pid, 5001u);
    EXPECT_EQ(ev[0].data, 3u);

    ASSERT_EQ(amdqp_events_subscribe(h, 0), AMDQP_OK);
    EXPECT_EQ(amdqp_events_fd(h), -1);
}

TEST_F(CApiTest, NullArguments) {
    EXPECT_EQ(amdqp_get_gpus(nullptr, nullptr, 0, 0), AMDQP_ERR_INVALID);
    EXPECT_EQ(amdqp_suspend(nullptr, nullptr, 0, 0, 0, nullptr), AMDQP_ERR_INVALID);
    EXPECT_EQ(amdqp_set_queue_priority(h, nullptr, 3), AMDQP_ERR_INVALID);
    EXPECT_EQ(amdqp_open_path(nullptr, nullptr), AMDQP_ERR_INVALID);
    EXPECT_EQ(amdqp_fd(nullptr), -1);
}

}  // namespace
