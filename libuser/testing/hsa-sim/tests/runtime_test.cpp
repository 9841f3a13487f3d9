// SPDX-License-Identifier: MIT
// The stand-in through its public API only, on whatever backend
// HSA_SIM_BACKEND selects (ctest: thread).
#include <dlfcn.h>
#include <gtest/gtest.h>
#include <hsa/amd_hsa_queue.h>
#include <hsa/hsa.h>
#include <hsa/hsa_api_trace.h>
#include <hsa/hsa_ext_amd.h>
#include <stdlib.h>

#include <atomic>
#include <chrono>
#include <string>
#include <thread>
#include <vector>

#include "test_tool.h"

namespace {

using std::chrono::steady_clock;

constexpr uint64_t kUs = 1000;
constexpr uint64_t kMs = 1000 * kUs;

struct Agents {
    std::vector<hsa_agent_t> gpus;
    std::vector<hsa_agent_t> cpus;
};

hsa_status_t collect(hsa_agent_t agent, void* data) {
    auto* a = static_cast<Agents*>(data);
    hsa_device_type_t type;
    hsa_status_t st = hsa_agent_get_info(agent, HSA_AGENT_INFO_DEVICE, &type);
    if (st != HSA_STATUS_SUCCESS)
        return st;
    (type == HSA_DEVICE_TYPE_GPU ? a->gpus : a->cpus).push_back(agent);
    return HSA_STATUS_SUCCESS;
}

constexpr uint16_t kDispatchHeader =
    (HSA_PACKET_TYPE_KERNEL_DISPATCH << HSA_PACKET_HEADER_TYPE) | (1 << HSA_PACKET_HEADER_BARRIER) |
    (HSA_FENCE_SCOPE_SYSTEM << HSA_PACKET_HEADER_SCACQUIRE_FENCE_SCOPE) |
    (HSA_FENCE_SCOPE_SYSTEM << HSA_PACKET_HEADER_SCRELEASE_FENCE_SCOPE);

hsa_kernel_dispatch_packet_t* slot(hsa_queue_t* q, uint64_t index) {
    return static_cast<hsa_kernel_dispatch_packet_t*>(q->base_address) + (index & (q->size - 1));
}

// Writes a packet of duration @ns at @index, header last (release).
void write_packet(hsa_queue_t* q, uint64_t index, uint64_t ns, hsa_signal_t done,
                  uint16_t header = kDispatchHeader) {
    hsa_kernel_dispatch_packet_t* p = slot(q, index);
    memset(reinterpret_cast<char*>(p) + 4, 0, sizeof(*p) - 4);
    p->workgroup_size_x = p->workgroup_size_y = p->workgroup_size_z = 1;
    p->grid_size_x = p->grid_size_y = p->grid_size_z = 1;
    p->kernel_object = ns;
    p->completion_signal = done;
    __atomic_store_n(reinterpret_cast<uint32_t*>(p),
                     header | (1u << HSA_KERNEL_DISPATCH_PACKET_SETUP_DIMENSIONS << 16),
                     __ATOMIC_RELEASE);
}

// Submits @n packets of @ns each, one doorbell store; returns the first index.
uint64_t dispatch(hsa_queue_t* q, uint32_t n, uint64_t ns, hsa_signal_t done) {
    uint64_t first = hsa_queue_add_write_index_scacq_screl(q, n);
    for (uint32_t k = 0; k < n; ++k)
        write_packet(q, first + k, ns, done);
    hsa_signal_store_screlease(q->doorbell_signal, static_cast<hsa_signal_value_t>(first + n - 1));
    return first;
}

hsa_signal_value_t wait_lt(hsa_signal_t s, hsa_signal_value_t v, uint64_t timeout_ns = 5000 * kMs) {
    return hsa_signal_wait_scacquire(s, HSA_SIGNAL_CONDITION_LT, v, timeout_ns,
                                     HSA_WAIT_STATE_BLOCKED);
}

class HsaSim : public ::testing::Test {
  protected:
    void SetUp() override {
        ASSERT_EQ(hsa_init(), HSA_STATUS_SUCCESS);
        ASSERT_EQ(hsa_iterate_agents(collect, &agents_), HSA_STATUS_SUCCESS);
        ASSERT_FALSE(agents_.gpus.empty());
        gpu_ = agents_.gpus[0];
    }
    void TearDown() override { EXPECT_EQ(hsa_shut_down(), HSA_STATUS_SUCCESS); }

    hsa_queue_t* make_queue(uint32_t size = 256) {
        hsa_queue_t* q = nullptr;
        EXPECT_EQ(hsa_queue_create(gpu_, size, HSA_QUEUE_TYPE_MULTI, nullptr, nullptr, UINT32_MAX,
                                   UINT32_MAX, &q),
                  HSA_STATUS_SUCCESS);
        return q;
    }
    hsa_signal_t make_signal(hsa_signal_value_t v) {
        hsa_signal_t s{};
        EXPECT_EQ(hsa_signal_create(v, 0, nullptr, &s), HSA_STATUS_SUCCESS);
        return s;
    }

    Agents agents_;
    hsa_agent_t gpu_{};
};

TEST(HsaSimInit, CallsBeforeInitFail) {
    EXPECT_EQ(hsa_shut_down(), HSA_STATUS_ERROR_NOT_INITIALIZED);
    Agents a;
    EXPECT_EQ(hsa_iterate_agents(collect, &a), HSA_STATUS_ERROR_NOT_INITIALIZED);
    hsa_signal_t s;
    EXPECT_EQ(hsa_signal_create(0, 0, nullptr, &s), HSA_STATUS_ERROR_NOT_INITIALIZED);
}

TEST(HsaSimInit, InitIsReferenceCounted) {
    ASSERT_EQ(hsa_init(), HSA_STATUS_SUCCESS);
    ASSERT_EQ(hsa_init(), HSA_STATUS_SUCCESS);
    EXPECT_EQ(hsa_shut_down(), HSA_STATUS_SUCCESS);
    Agents a;
    EXPECT_EQ(hsa_iterate_agents(collect, &a), HSA_STATUS_SUCCESS);  // still one reference
    EXPECT_EQ(hsa_shut_down(), HSA_STATUS_SUCCESS);
    EXPECT_EQ(hsa_iterate_agents(collect, &a), HSA_STATUS_ERROR_NOT_INITIALIZED);
}

TEST(HsaSimInit, UnknownBackendFailsInit) {
    const char* old = getenv("HSA_SIM_BACKEND");
    std::string saved = old ? old : "";
    setenv("HSA_SIM_BACKEND", "no-such-backend", 1);
    EXPECT_EQ(hsa_init(), HSA_STATUS_ERROR_OUT_OF_RESOURCES);
    if (old)
        setenv("HSA_SIM_BACKEND", saved.c_str(), 1);
    else
        unsetenv("HSA_SIM_BACKEND");
    EXPECT_EQ(hsa_shut_down(), HSA_STATUS_ERROR_NOT_INITIALIZED);
}

TEST_F(HsaSim, AgentsLookLikeRocr) {
    ASSERT_EQ(agents_.cpus.size(), 1u);
    uint32_t node = 99;
    ASSERT_EQ(
        hsa_agent_get_info(agents_.cpus[0],
                           static_cast<hsa_agent_info_t>(HSA_AMD_AGENT_INFO_DRIVER_NODE_ID), &node),
        HSA_STATUS_SUCCESS);
    EXPECT_EQ(node, 0u);
    uint32_t expected_node = 1;
    for (hsa_agent_t gpu : agents_.gpus) {
        ASSERT_EQ(hsa_agent_get_info(
                      gpu, static_cast<hsa_agent_info_t>(HSA_AMD_AGENT_INFO_DRIVER_NODE_ID), &node),
                  HSA_STATUS_SUCCESS);
        EXPECT_EQ(node, expected_node++);
        char name[64] = {};
        EXPECT_EQ(hsa_agent_get_info(gpu, HSA_AGENT_INFO_NAME, name), HSA_STATUS_SUCCESS);
        EXPECT_STRNE(name, "");
        uint32_t max_size = 0, queues = 0, min_size = 0;
        EXPECT_EQ(hsa_agent_get_info(gpu, HSA_AGENT_INFO_QUEUE_MAX_SIZE, &max_size),
                  HSA_STATUS_SUCCESS);
        EXPECT_EQ(hsa_agent_get_info(gpu, HSA_AGENT_INFO_QUEUE_MIN_SIZE, &min_size),
                  HSA_STATUS_SUCCESS);
        EXPECT_EQ(hsa_agent_get_info(gpu, HSA_AGENT_INFO_QUEUES_MAX, &queues), HSA_STATUS_SUCCESS);
        EXPECT_EQ(max_size, 16384u);  // AMDQP_SIM_RING_MAX / 64
        EXPECT_EQ(min_size, 64u);
        EXPECT_GT(queues, 0u);
        hsa_agent_feature_t features{};
        EXPECT_EQ(hsa_agent_get_info(gpu, HSA_AGENT_INFO_FEATURE, &features), HSA_STATUS_SUCCESS);
        EXPECT_TRUE(features & HSA_AGENT_FEATURE_KERNEL_DISPATCH);
        char uuid[21] = {};
        EXPECT_EQ(
            hsa_agent_get_info(gpu, static_cast<hsa_agent_info_t>(HSA_AMD_AGENT_INFO_UUID), uuid),
            HSA_STATUS_SUCCESS);
        EXPECT_EQ(std::string(uuid).substr(0, 4), "GPU-");
    }
    const char* backend = getenv("HSA_SIM_BACKEND");
    if (backend && std::string(backend) == "thread") {
        EXPECT_EQ(agents_.gpus.size(), 1u);
    }
    int dummy = 0;
    EXPECT_EQ(hsa_agent_get_info(hsa_agent_t{0}, HSA_AGENT_INFO_NAME, &dummy),
              HSA_STATUS_ERROR_INVALID_AGENT);
    EXPECT_EQ(hsa_agent_get_info(gpu_, static_cast<hsa_agent_info_t>(0x7fff), &dummy),
              HSA_STATUS_ERROR_INVALID_ARGUMENT);
}

TEST_F(HsaSim, SystemInfoTicksInNanoseconds) {
    uint64_t freq = 0, t1 = 0, t2 = 0;
    ASSERT_EQ(hsa_system_get_info(HSA_SYSTEM_INFO_TIMESTAMP_FREQUENCY, &freq), HSA_STATUS_SUCCESS);
    EXPECT_EQ(freq, 1000000000u);
    ASSERT_EQ(hsa_system_get_info(HSA_SYSTEM_INFO_TIMESTAMP, &t1), HSA_STATUS_SUCCESS);
    std::this_thread::sleep_for(std::chrono::milliseconds(2));
    ASSERT_EQ(hsa_system_get_info(HSA_SYSTEM_INFO_TIMESTAMP, &t2), HSA_STATUS_SUCCESS);
    EXPECT_GE(t2 - t1, 2 * kMs);
}

TEST_F(HsaSim, QueueCreateChecksArguments) {
    hsa_queue_t* q = nullptr;
    auto create = [&](hsa_agent_t agent, uint32_t size, uint32_t type) {
        return hsa_queue_create(agent, size, type, nullptr, nullptr, 0, 0, &q);
    };
    EXPECT_EQ(create(gpu_, 0, HSA_QUEUE_TYPE_MULTI), HSA_STATUS_ERROR_INVALID_ARGUMENT);
    EXPECT_EQ(create(gpu_, 100, HSA_QUEUE_TYPE_MULTI), HSA_STATUS_ERROR_INVALID_ARGUMENT);
    EXPECT_EQ(create(gpu_, 32768, HSA_QUEUE_TYPE_MULTI), HSA_STATUS_ERROR_INVALID_ARGUMENT);
    EXPECT_EQ(create(gpu_, 64, 7), HSA_STATUS_ERROR_INVALID_ARGUMENT);
    EXPECT_EQ(create(agents_.cpus[0], 64, HSA_QUEUE_TYPE_MULTI),
              HSA_STATUS_ERROR_INVALID_QUEUE_CREATION);
    EXPECT_EQ(create(hsa_agent_t{12345}, 64, HSA_QUEUE_TYPE_MULTI), HSA_STATUS_ERROR_INVALID_AGENT);
    EXPECT_EQ(hsa_queue_destroy(nullptr), HSA_STATUS_ERROR_INVALID_QUEUE);

    // Below the smallest ring: rounded up, and the queue says so.
    ASSERT_EQ(create(gpu_, 16, HSA_QUEUE_TYPE_SINGLE), HSA_STATUS_SUCCESS);
    EXPECT_EQ(q->size, 64u);
    EXPECT_EQ(q->type, static_cast<uint32_t>(HSA_QUEUE_TYPE_SINGLE));
    EXPECT_NE(q->base_address, nullptr);
    EXPECT_NE(q->doorbell_signal.handle, 0u);
    EXPECT_EQ(hsa_queue_destroy(q), HSA_STATUS_SUCCESS);
    EXPECT_EQ(hsa_queue_destroy(q), HSA_STATUS_ERROR_INVALID_QUEUE);
}

TEST_F(HsaSim, QueueIdsAreUnique) {
    hsa_queue_t* a = make_queue();
    hsa_queue_t* b = make_queue();
    ASSERT_TRUE(a && b);
    EXPECT_NE(a->id, b->id);
    EXPECT_NE(a->base_address, b->base_address);
    EXPECT_EQ(hsa_queue_destroy(a), HSA_STATUS_SUCCESS);
    EXPECT_EQ(hsa_queue_destroy(b), HSA_STATUS_SUCCESS);
}

TEST_F(HsaSim, QueueIndicesSitWhereAmdQueueHasThem) {
    hsa_queue_t* q = make_queue();
    ASSERT_TRUE(q);
    auto* amd = reinterpret_cast<amd_queue_t*>(q);
    EXPECT_EQ(hsa_queue_load_write_index_relaxed(q), 0u);
    EXPECT_EQ(hsa_queue_add_write_index_relaxed(q, 3), 0u);
    EXPECT_EQ(hsa_queue_add_write_index_scacquire(q, 2), 3u);
    EXPECT_EQ(hsa_queue_add_write_index_screlease(q, 1), 5u);
    EXPECT_EQ(hsa_queue_add_write_index_scacq_screl(q, 1), 6u);
    EXPECT_EQ(amd->write_dispatch_id, 7u);
    EXPECT_EQ(hsa_queue_cas_write_index_relaxed(q, 1, 100), 7u);  // fails, observes 7
    EXPECT_EQ(hsa_queue_load_write_index_scacquire(q), 7u);
    EXPECT_EQ(hsa_queue_cas_write_index_scacq_screl(q, 7, 9), 7u);
    EXPECT_EQ(hsa_queue_cas_write_index_scacquire(q, 9, 10), 9u);
    EXPECT_EQ(hsa_queue_cas_write_index_screlease(q, 10, 11), 10u);
    hsa_queue_store_write_index_relaxed(q, 20);
    EXPECT_EQ(amd->write_dispatch_id, 20u);
    hsa_queue_store_write_index_screlease(q, 0);
    EXPECT_EQ(hsa_queue_load_write_index_relaxed(q), 0u);
    // Deprecated names of the 5.2.3 header still work.
    EXPECT_EQ(hsa_queue_add_write_index_acq_rel(q, 2), 0u);
    EXPECT_EQ(hsa_queue_load_write_index_acquire(q), 2u);
    hsa_queue_store_write_index_release(q, 0);
    // The read index belongs to the packet processor.
    EXPECT_EQ(hsa_queue_load_read_index_relaxed(q), 0u);
    hsa_queue_store_read_index_relaxed(q, 5);
    EXPECT_EQ(hsa_queue_load_read_index_scacquire(q), 0u);
    EXPECT_EQ(amd->read_dispatch_id, hsa_queue_load_read_index_acquire(q));
    EXPECT_EQ(hsa_queue_destroy(q), HSA_STATUS_SUCCESS);
}

TEST_F(HsaSim, SignalOperations) {
    hsa_signal_t s = make_signal(10);
    EXPECT_EQ(hsa_signal_load_relaxed(s), 10);
    hsa_signal_add_relaxed(s, 5);
    hsa_signal_add_scacquire(s, 1);
    hsa_signal_add_screlease(s, 1);
    hsa_signal_add_scacq_screl(s, 1);
    EXPECT_EQ(hsa_signal_load_scacquire(s), 18);
    hsa_signal_subtract_relaxed(s, 1);
    hsa_signal_subtract_scacquire(s, 1);
    hsa_signal_subtract_screlease(s, 1);
    hsa_signal_subtract_scacq_screl(s, 1);
    EXPECT_EQ(hsa_signal_load_acquire(s), 14);
    hsa_signal_and_relaxed(s, 0xc);
    EXPECT_EQ(hsa_signal_load_relaxed(s), 12);
    hsa_signal_or_screlease(s, 1);
    EXPECT_EQ(hsa_signal_load_relaxed(s), 13);
    hsa_signal_xor_scacq_screl(s, 3);
    EXPECT_EQ(hsa_signal_load_relaxed(s), 14);
    EXPECT_EQ(hsa_signal_exchange_scacquire(s, 40), 14);
    EXPECT_EQ(hsa_signal_cas_relaxed(s, 1, 2), 40);  // fails
    EXPECT_EQ(hsa_signal_cas_scacq_screl(s, 40, 41), 40);
    EXPECT_EQ(hsa_signal_load_relaxed(s), 41);
    hsa_signal_store_relaxed(s, -3);
    EXPECT_EQ(hsa_signal_load_relaxed(s), -3);
    hsa_signal_store_release(s, 7);
    hsa_signal_silent_store_screlease(s, 8);
    EXPECT_EQ(hsa_signal_load_relaxed(s), 8);
    hsa_signal_add_acq_rel(s, 2);
    EXPECT_EQ(hsa_signal_exchange_release(s, 0), 10);
    EXPECT_EQ(hsa_signal_destroy(s), HSA_STATUS_SUCCESS);
    EXPECT_EQ(hsa_signal_destroy(s), HSA_STATUS_ERROR_INVALID_SIGNAL);
    EXPECT_EQ(hsa_signal_destroy(hsa_signal_t{0}), HSA_STATUS_ERROR_INVALID_SIGNAL);
}

TEST_F(HsaSim, SignalWaitTimesOutAndWakesOnStore) {
    hsa_signal_t s = make_signal(0);
    auto t0 = steady_clock::now();
    EXPECT_EQ(
        hsa_signal_wait_scacquire(s, HSA_SIGNAL_CONDITION_EQ, 5, 3 * kMs, HSA_WAIT_STATE_BLOCKED),
        0);
    EXPECT_GE(steady_clock::now() - t0, std::chrono::milliseconds(3));

    std::thread setter([&] {
        std::this_thread::sleep_for(std::chrono::milliseconds(5));
        hsa_signal_store_screlease(s, 5);
    });
    EXPECT_EQ(
        hsa_signal_wait_relaxed(s, HSA_SIGNAL_CONDITION_GTE, 5, UINT64_MAX, HSA_WAIT_STATE_ACTIVE),
        5);
    setter.join();
    hsa_signal_t sigs[2] = {make_signal(1), s};
    hsa_signal_condition_t conds[2] = {HSA_SIGNAL_CONDITION_EQ, HSA_SIGNAL_CONDITION_EQ};
    hsa_signal_value_t values[2] = {0, 5};
    hsa_signal_value_t seen = -1;
    EXPECT_EQ(
        hsa_amd_signal_wait_any(2, sigs, conds, values, UINT64_MAX, HSA_WAIT_STATE_BLOCKED, &seen),
        1u);
    EXPECT_EQ(seen, 5);
    values[1] = 6;
    EXPECT_EQ(
        hsa_amd_signal_wait_any(2, sigs, conds, values, 2 * kMs, HSA_WAIT_STATE_BLOCKED, &seen),
        UINT32_MAX);
    hsa_signal_destroy(sigs[0]);
    hsa_signal_destroy(s);
}

TEST_F(HsaSim, PacketsCompleteInOrderAndTakeTheirTime) {
    hsa_queue_t* q = make_queue();
    ASSERT_TRUE(q);
    constexpr uint32_t kPackets = 10;
    constexpr uint64_t kDuration = 3 * kMs;
    hsa_signal_t done = make_signal(kPackets);
    auto t0 = steady_clock::now();
    uint64_t first = dispatch(q, kPackets, kDuration, done);
    EXPECT_EQ(first, 0u);
    EXPECT_EQ(wait_lt(done, 1), 0);
    auto elapsed = steady_clock::now() - t0;
    // One queue runs its kernels one after the other.
    EXPECT_GE(elapsed, std::chrono::nanoseconds(kPackets * kDuration));
    EXPECT_EQ(hsa_queue_load_read_index_scacquire(q), kPackets);
    // Consumed slots are INVALID again, ready for the producer.
    for (uint32_t i = 0; i < kPackets; ++i)
        EXPECT_EQ(slot(q, i)->header & 0xff, HSA_PACKET_TYPE_INVALID);
    // The doorbell signal reads back what was stored last.
    EXPECT_EQ(hsa_signal_load_relaxed(q->doorbell_signal), kPackets - 1);
    hsa_signal_destroy(done);
    EXPECT_EQ(hsa_queue_destroy(q), HSA_STATUS_SUCCESS);
}

TEST_F(HsaSim, EachCompletionDecrementsItsSignalOnce) {
    hsa_queue_t* q = make_queue();
    ASSERT_TRUE(q);
    hsa_signal_t a = make_signal(5), b = make_signal(1);
    uint64_t i = hsa_queue_add_write_index_relaxed(q, 3);
    write_packet(q, i, 100 * kUs, a);
    write_packet(q, i + 1, 100 * kUs, b);
    write_packet(q, i + 2, 100 * kUs, a);
    hsa_signal_store_relaxed(q->doorbell_signal, static_cast<hsa_signal_value_t>(i + 2));
    EXPECT_EQ(wait_lt(b, 1), 0);
    EXPECT_EQ(wait_lt(a, 4), 3);
    std::this_thread::sleep_for(std::chrono::milliseconds(2));
    EXPECT_EQ(hsa_signal_load_scacquire(a), 3);  // no further decrement
    EXPECT_EQ(hsa_signal_load_scacquire(b), 0);
    hsa_signal_destroy(a);
    hsa_signal_destroy(b);
    EXPECT_EQ(hsa_queue_destroy(q), HSA_STATUS_SUCCESS);
}

TEST_F(HsaSim, NothingRunsBeforeTheDoorbell) {
    hsa_queue_t* q = make_queue();
    ASSERT_TRUE(q);
    hsa_signal_t done = make_signal(1);
    uint64_t i = hsa_queue_add_write_index_relaxed(q, 1);
    write_packet(q, i, 10 * kUs, done);
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
    EXPECT_EQ(hsa_queue_load_read_index_scacquire(q), 0u);
    EXPECT_EQ(hsa_signal_load_scacquire(done), 1);
    hsa_signal_store_screlease(q->doorbell_signal, static_cast<hsa_signal_value_t>(i));
    EXPECT_EQ(wait_lt(done, 1), 0);
    hsa_signal_destroy(done);
    EXPECT_EQ(hsa_queue_destroy(q), HSA_STATUS_SUCCESS);
}

// Two producers on a MULTI queue: the second rings before the first wrote
// its header. The packet processor stops at the INVALID one; both complete
// once the first producer rings too.
TEST_F(HsaSim, InvalidHeaderHoldsLaterPacketsBack) {
    hsa_queue_t* q = make_queue();
    ASSERT_TRUE(q);
    hsa_signal_t first_done = make_signal(1), second_done = make_signal(1);
    uint64_t i = hsa_queue_add_write_index_relaxed(q, 2);
    write_packet(q, i + 1, 10 * kUs, second_done);
    hsa_signal_store_screlease(q->doorbell_signal, static_cast<hsa_signal_value_t>(i + 1));
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
    EXPECT_EQ(hsa_queue_load_read_index_scacquire(q), 0u);
    EXPECT_EQ(hsa_signal_load_scacquire(second_done), 1);
    write_packet(q, i, 10 * kUs, first_done);
    hsa_signal_store_screlease(q->doorbell_signal, static_cast<hsa_signal_value_t>(i));
    EXPECT_EQ(wait_lt(first_done, 1), 0);
    EXPECT_EQ(wait_lt(second_done, 1), 0);
    EXPECT_EQ(hsa_queue_load_read_index_scacquire(q), 2u);
    hsa_signal_destroy(first_done);
    hsa_signal_destroy(second_done);
    EXPECT_EQ(hsa_queue_destroy(q), HSA_STATUS_SUCCESS);
}

TEST_F(HsaSim, RingWrapsAround) {
    hsa_queue_t* q = make_queue(64);
    ASSERT_TRUE(q);
    hsa_signal_t done = make_signal(0);
    for (int round = 0; round < 5; ++round) {
        hsa_signal_add_relaxed(done, 40);
        dispatch(q, 40, 1 * kUs, done);
        ASSERT_EQ(wait_lt(done, 1), 0) << "round " << round;
    }
    EXPECT_EQ(hsa_queue_load_read_index_scacquire(q), 200u);
    hsa_signal_destroy(done);
    EXPECT_EQ(hsa_queue_destroy(q), HSA_STATUS_SUCCESS);
}

// Thousands of packets on one signal that nobody looks at meanwhile: each
// still takes exactly one off.
TEST_F(HsaSim, ManyPacketsOnOneUnwatchedSignal) {
    hsa_queue_t* q = make_queue(1024);
    ASSERT_TRUE(q);
    constexpr uint32_t kChunk = 500, kChunks = 8;
    hsa_signal_t done = make_signal(kChunk * kChunks);
    for (uint32_t c = 0; c < kChunks; ++c) {
        auto deadline = steady_clock::now() + std::chrono::seconds(10);
        while (hsa_queue_load_write_index_relaxed(q) - hsa_queue_load_read_index_scacquire(q) +
                       kChunk >
                   q->size &&
               steady_clock::now() < deadline)
            std::this_thread::sleep_for(std::chrono::microseconds(100));
        dispatch(q, kChunk, 1, done);
    }
    EXPECT_EQ(wait_lt(done, 1, 10000 * kMs), 0);
    std::this_thread::sleep_for(std::chrono::milliseconds(2));
    EXPECT_EQ(hsa_signal_load_scacquire(done), 0);
    hsa_signal_destroy(done);
    EXPECT_EQ(hsa_queue_destroy(q), HSA_STATUS_SUCCESS);
}

TEST_F(HsaSim, BarrierPacketsComplete) {
    hsa_queue_t* q = make_queue();
    ASSERT_TRUE(q);
    hsa_signal_t done = make_signal(1);
    uint64_t i = hsa_queue_add_write_index_relaxed(q, 1);
    auto* b = reinterpret_cast<hsa_barrier_and_packet_t*>(slot(q, i));
    memset(reinterpret_cast<char*>(b) + 2, 0, sizeof(*b) - 2);
    b->completion_signal = done;
    __atomic_store_n(&b->header,
                     static_cast<uint16_t>(HSA_PACKET_TYPE_BARRIER_AND << HSA_PACKET_HEADER_TYPE),
                     __ATOMIC_RELEASE);
    hsa_signal_store_screlease(q->doorbell_signal, static_cast<hsa_signal_value_t>(i));
    EXPECT_EQ(wait_lt(done, 1), 0);
    hsa_signal_destroy(done);
    EXPECT_EQ(hsa_queue_destroy(q), HSA_STATUS_SUCCESS);
}

struct ErrorSeen {
    std::atomic<int> calls{0};
    std::atomic<hsa_status_t> status{HSA_STATUS_SUCCESS};
    hsa_queue_t* queue = nullptr;
};

TEST_F(HsaSim, BadPacketStopsTheQueueAndIsReported) {
    ErrorSeen seen;
    hsa_queue_t* q = nullptr;
    ASSERT_EQ(hsa_queue_create(
                  gpu_, 64, HSA_QUEUE_TYPE_SINGLE,
                  [](hsa_status_t st, hsa_queue_t* source, void* data) {
                      auto* e = static_cast<ErrorSeen*>(data);
                      e->status = st;
                      e->queue = source;
                      e->calls++;
                  },
                  &seen, 0, 0, &q),
              HSA_STATUS_SUCCESS);
    hsa_signal_t done = make_signal(1);
    uint64_t i = hsa_queue_add_write_index_relaxed(q, 1);
    write_packet(q, i, 10 * kUs, done, HSA_PACKET_TYPE_VENDOR_SPECIFIC << HSA_PACKET_HEADER_TYPE);
    hsa_signal_store_screlease(q->doorbell_signal, static_cast<hsa_signal_value_t>(i));
    // Reported from a look at the signal once the processor gave up.
    auto deadline = steady_clock::now() + std::chrono::seconds(5);
    while (seen.calls.load() == 0 && steady_clock::now() < deadline)
        EXPECT_EQ(wait_lt(done, 1, 1 * kMs), 1);  // never completes
    EXPECT_EQ(seen.calls.load(), 1);
    EXPECT_EQ(seen.status.load(), HSA_STATUS_ERROR_INVALID_PACKET_FORMAT);
    EXPECT_EQ(seen.queue, q);
    hsa_signal_destroy(done);
    EXPECT_EQ(hsa_queue_destroy(q), HSA_STATUS_SUCCESS);
}

TEST_F(HsaSim, InactiveQueueIgnoresItsDoorbell) {
    hsa_queue_t* q = make_queue();
    ASSERT_TRUE(q);
    EXPECT_EQ(hsa_queue_inactivate(q), HSA_STATUS_SUCCESS);
    hsa_signal_t done = make_signal(1);
    dispatch(q, 1, 10 * kUs, done);
    EXPECT_EQ(wait_lt(done, 1, 10 * kMs), 1);
    EXPECT_EQ(hsa_queue_load_read_index_scacquire(q), 0u);
    hsa_signal_destroy(done);
    EXPECT_EQ(hsa_queue_destroy(q), HSA_STATUS_SUCCESS);
}

TEST_F(HsaSim, SetPriority) {
    hsa_queue_t* q = make_queue();
    ASSERT_TRUE(q);
    EXPECT_EQ(hsa_amd_queue_set_priority(q, HSA_AMD_QUEUE_PRIORITY_LOW), HSA_STATUS_SUCCESS);
    EXPECT_EQ(hsa_amd_queue_set_priority(q, HSA_AMD_QUEUE_PRIORITY_HIGH), HSA_STATUS_SUCCESS);
    EXPECT_EQ(hsa_amd_queue_set_priority(q, HSA_AMD_QUEUE_PRIORITY_NORMAL), HSA_STATUS_SUCCESS);
    EXPECT_EQ(hsa_amd_queue_set_priority(q, static_cast<hsa_amd_queue_priority_t>(9)),
              HSA_STATUS_ERROR_INVALID_ARGUMENT);
    hsa_queue_t bogus{};
    EXPECT_EQ(hsa_amd_queue_set_priority(&bogus, HSA_AMD_QUEUE_PRIORITY_LOW),
              HSA_STATUS_ERROR_INVALID_QUEUE);
    // Still running after the priority changes.
    hsa_signal_t done = make_signal(1);
    dispatch(q, 1, 10 * kUs, done);
    EXPECT_EQ(wait_lt(done, 1), 0);
    hsa_signal_destroy(done);
    EXPECT_EQ(hsa_queue_destroy(q), HSA_STATUS_SUCCESS);
}

TEST_F(HsaSim, CuMaskSetAndGet) {
    uint32_t cus = 0;
    ASSERT_EQ(hsa_agent_get_info(
                  gpu_, static_cast<hsa_agent_info_t>(HSA_AMD_AGENT_INFO_COMPUTE_UNIT_COUNT), &cus),
              HSA_STATUS_SUCCESS);
    ASSERT_GE(cus, 64u);
    ASSERT_EQ(cus % 32, 0u);
    hsa_queue_t* q = make_queue();
    ASSERT_TRUE(q);
    const uint32_t words = cus / 32 + 1;  // one word past the agent's CUs
    std::vector<uint32_t> got(words, 0xdeadbeef);

    // A new queue has every CU, and nothing past them.
    ASSERT_EQ(hsa_amd_queue_cu_get_mask(q, words * 32, got.data()), HSA_STATUS_SUCCESS);
    for (uint32_t i = 0; i + 1 < words; ++i)
        EXPECT_EQ(got[i], 0xffffffffu) << "word " << i;
    EXPECT_EQ(got[words - 1], 0u);

    // The first 4 CUs, as hsa_app --cu-mask 4 asks; bits past the agent's
    // CUs are dropped.
    std::vector<uint32_t> want(words, 0);
    want[0] = 0xf;
    want[words - 1] = 0xffffffff;
    ASSERT_EQ(hsa_amd_queue_cu_set_mask(q, words * 32, want.data()), HSA_STATUS_SUCCESS);
    ASSERT_EQ(hsa_amd_queue_cu_get_mask(q, 64, got.data()), HSA_STATUS_SUCCESS);
    EXPECT_EQ(got[0], 0xfu);
    EXPECT_EQ(got[1], 0u);
    got.assign(words, 0xdeadbeef);
    ASSERT_EQ(hsa_amd_queue_cu_get_mask(q, words * 32, got.data()), HSA_STATUS_SUCCESS);
    EXPECT_EQ(got[words - 1], 0u);
    // A shorter get gives the first bits only.
    got.assign(words, 0xdeadbeef);
    ASSERT_EQ(hsa_amd_queue_cu_get_mask(q, 32, got.data()), HSA_STATUS_SUCCESS);
    EXPECT_EQ(got[0], 0xfu);
    EXPECT_EQ(got[1], 0xdeadbeefu);

    // Bad arguments change nothing.
    EXPECT_EQ(hsa_amd_queue_cu_set_mask(q, 16, want.data()), HSA_STATUS_ERROR_INVALID_ARGUMENT);
    EXPECT_EQ(hsa_amd_queue_cu_set_mask(q, 32, nullptr), HSA_STATUS_ERROR_INVALID_ARGUMENT);
    const uint32_t none[2] = {0, 0};
    EXPECT_EQ(hsa_amd_queue_cu_set_mask(q, 64, none), HSA_STATUS_ERROR_INVALID_ARGUMENT);
    // Only CUs the agent does not have: as empty as no CU.
    std::vector<uint32_t> beyond(words, 0);
    beyond[words - 1] = 1;
    EXPECT_EQ(hsa_amd_queue_cu_set_mask(q, words * 32, beyond.data()),
              HSA_STATUS_ERROR_INVALID_ARGUMENT);
    EXPECT_EQ(hsa_amd_queue_cu_get_mask(q, 0, got.data()), HSA_STATUS_ERROR_INVALID_ARGUMENT);
    EXPECT_EQ(hsa_amd_queue_cu_get_mask(q, 40, got.data()), HSA_STATUS_ERROR_INVALID_ARGUMENT);
    EXPECT_EQ(hsa_amd_queue_cu_get_mask(q, 32, nullptr), HSA_STATUS_ERROR_INVALID_ARGUMENT);
    hsa_queue_t bogus{};
    EXPECT_EQ(hsa_amd_queue_cu_set_mask(&bogus, 32, want.data()), HSA_STATUS_ERROR_INVALID_QUEUE);
    EXPECT_EQ(hsa_amd_queue_cu_get_mask(&bogus, 32, got.data()), HSA_STATUS_ERROR_INVALID_QUEUE);
    EXPECT_EQ(hsa_amd_queue_cu_set_mask(nullptr, 32, want.data()), HSA_STATUS_ERROR_INVALID_QUEUE);
    ASSERT_EQ(hsa_amd_queue_cu_get_mask(q, 32, got.data()), HSA_STATUS_SUCCESS);
    EXPECT_EQ(got[0], 0xfu);

    // 0 bits: every CU again.
    ASSERT_EQ(hsa_amd_queue_cu_set_mask(q, 0, nullptr), HSA_STATUS_SUCCESS);
    ASSERT_EQ(hsa_amd_queue_cu_get_mask(q, 32, got.data()), HSA_STATUS_SUCCESS);
    EXPECT_EQ(got[0], 0xffffffffu);

    // The queue still runs.
    hsa_signal_t done = make_signal(1);
    dispatch(q, 1, 10 * kUs, done);
    EXPECT_EQ(wait_lt(done, 1), 0);
    hsa_signal_destroy(done);
    EXPECT_EQ(hsa_queue_destroy(q), HSA_STATUS_SUCCESS);
}

TEST(HsaSimInit, CuMaskBeforeInitFails) {
    const uint32_t mask = 1;
    uint32_t got = 0;
    hsa_queue_t bogus{};
    EXPECT_EQ(hsa_amd_queue_cu_set_mask(&bogus, 32, &mask), HSA_STATUS_ERROR_NOT_INITIALIZED);
    EXPECT_EQ(hsa_amd_queue_cu_get_mask(&bogus, 32, &got), HSA_STATUS_ERROR_NOT_INITIALIZED);
}

TEST_F(HsaSim, RegionsGiveKernargMemory) {
    hsa_region_t found{};
    ASSERT_EQ(hsa_agent_iterate_regions(
                  gpu_,
                  [](hsa_region_t r, void* data) {
                      uint32_t flags = 0;
                      hsa_region_get_info(r, HSA_REGION_INFO_GLOBAL_FLAGS, &flags);
                      if (flags & HSA_REGION_GLOBAL_FLAG_KERNARG) {
                          *static_cast<hsa_region_t*>(data) = r;
                          return HSA_STATUS_INFO_BREAK;
                      }
                      return HSA_STATUS_SUCCESS;
                  },
                  &found),
              HSA_STATUS_INFO_BREAK);
    void* p = nullptr;
    ASSERT_EQ(hsa_memory_allocate(found, 100, &p), HSA_STATUS_SUCCESS);
    EXPECT_EQ(reinterpret_cast<uintptr_t>(p) % 4096, 0u);
    memset(p, 1, 100);
    EXPECT_EQ(hsa_memory_free(p), HSA_STATUS_SUCCESS);
    EXPECT_EQ(hsa_memory_allocate(hsa_region_t{1}, 100, &p), HSA_STATUS_ERROR_INVALID_REGION);
}

TEST(HsaSimStatus, StatusStrings) {
    const char* s = nullptr;
    ASSERT_EQ(hsa_status_string(HSA_STATUS_ERROR_INVALID_QUEUE, &s), HSA_STATUS_SUCCESS);
    EXPECT_NE(std::string(s).find("HSA_STATUS_ERROR_INVALID_QUEUE"), std::string::npos);
    ASSERT_EQ(hsa_status_string(static_cast<hsa_status_t>(HSA_STATUS_ERROR_MEMORY_FAULT), &s),
              HSA_STATUS_SUCCESS);
    EXPECT_EQ(hsa_status_string(static_cast<hsa_status_t>(0x7777), &s),
              HSA_STATUS_ERROR_INVALID_ARGUMENT);
}

// --- tools libraries ---------------------------------------------------------

class HsaSimTools : public ::testing::Test {
  protected:
    void SetUp() override {
        // Held open by the test too, so the counters outlive the runtime's dlclose.
        handle_ = dlopen(HSASIM_TEST_TOOL_PATH, RTLD_NOW | RTLD_LOCAL);
        ASSERT_NE(handle_, nullptr) << dlerror();
        auto fn =
            reinterpret_cast<HsaSimTestToolCountersFn>(dlsym(handle_, "hsasim_test_tool_counters"));
        ASSERT_NE(fn, nullptr);
        c_ = fn();
        *c_ = HsaSimTestToolCounters{};
    }
    void TearDown() override {
        unsetenv("HSA_TOOLS_LIB");
        unsetenv("HSASIM_TEST_TOOL_FAIL");
        if (handle_)
            dlclose(handle_);
    }

    hsa_agent_t first_gpu() {
        Agents a;
        EXPECT_EQ(hsa_iterate_agents(collect, &a), HSA_STATUS_SUCCESS);
        return a.gpus.empty() ? hsa_agent_t{0} : a.gpus[0];
    }

    void* handle_ = nullptr;
    HsaSimTestToolCounters* c_ = nullptr;
};

TEST_F(HsaSimTools, OnLoadGetsTheTableAndInterceptsCalls) {
    std::string list = std::string("/nonexistent/libnot-a-tool.so ") + HSASIM_TEST_TOOL_PATH;
    setenv("HSA_TOOLS_LIB", list.c_str(), 1);
    ASSERT_EQ(hsa_init(), HSA_STATUS_SUCCESS);
    EXPECT_EQ(c_->onload_calls, 1u);
    EXPECT_EQ(c_->runtime_version, 1u);
    EXPECT_EQ(c_->table_major, 1u);
    EXPECT_EQ(c_->core_table_size, sizeof(CoreApiTable));
    EXPECT_EQ(c_->amd_table_size, sizeof(AmdExtTable));
    EXPECT_EQ(c_->null_entries, 0u);
    EXPECT_EQ(c_->failed_tool_count, 1u);
    EXPECT_STREQ(c_->failed_tool_names, "/nonexistent/libnot-a-tool.so ");

    hsa_queue_t* q = nullptr;
    ASSERT_EQ(hsa_queue_create(first_gpu(), 128, HSA_QUEUE_TYPE_MULTI, nullptr, nullptr, 0, 0, &q),
              HSA_STATUS_SUCCESS);
    EXPECT_EQ(c_->queue_creates, 1u);
    EXPECT_EQ(c_->last_ring, reinterpret_cast<uint64_t>(q->base_address));
    EXPECT_EQ(hsa_amd_queue_set_priority(q, HSA_AMD_QUEUE_PRIORITY_LOW), HSA_STATUS_SUCCESS);
    EXPECT_EQ(c_->set_priority_calls, 1u);
    EXPECT_EQ(c_->last_priority, static_cast<uint32_t>(HSA_AMD_QUEUE_PRIORITY_LOW));

    hsa_signal_t done{};
    ASSERT_EQ(hsa_signal_create(3, 0, nullptr, &done), HSA_STATUS_SUCCESS);
    dispatch(q, 3, 10 * kUs, done);  // doorbell through the tool, which forwards
    EXPECT_EQ(wait_lt(done, 1), 0);
    EXPECT_EQ(c_->doorbell_stores, 1u);
    EXPECT_EQ(c_->last_doorbell_value, 2);
    hsa_signal_store_relaxed(done, 4);
    EXPECT_EQ(c_->other_stores, 1u);
    hsa_signal_destroy(done);
    EXPECT_EQ(hsa_queue_destroy(q), HSA_STATUS_SUCCESS);
    EXPECT_EQ(c_->queue_destroys, 1u);

    EXPECT_EQ(c_->onunload_calls, 0u);
    EXPECT_EQ(hsa_shut_down(), HSA_STATUS_SUCCESS);
    EXPECT_EQ(c_->onunload_calls, 1u);

    // A later instance without tools has the runtime's own table again.
    unsetenv("HSA_TOOLS_LIB");
    ASSERT_EQ(hsa_init(), HSA_STATUS_SUCCESS);
    ASSERT_EQ(hsa_queue_create(first_gpu(), 128, HSA_QUEUE_TYPE_MULTI, nullptr, nullptr, 0, 0, &q),
              HSA_STATUS_SUCCESS);
    EXPECT_EQ(c_->queue_creates, 1u);
    EXPECT_EQ(hsa_queue_destroy(q), HSA_STATUS_SUCCESS);
    EXPECT_EQ(hsa_shut_down(), HSA_STATUS_SUCCESS);
    EXPECT_EQ(c_->onload_calls, 1u);
}

TEST_F(HsaSimTools, RefusingToolIsLeftOut) {
    setenv("HSA_TOOLS_LIB", HSASIM_TEST_TOOL_PATH, 1);
    setenv("HSASIM_TEST_TOOL_FAIL", "1", 1);
    ASSERT_EQ(hsa_init(), HSA_STATUS_SUCCESS);
    EXPECT_EQ(c_->onload_calls, 1u);
    hsa_queue_t* q = nullptr;
    ASSERT_EQ(hsa_queue_create(first_gpu(), 128, HSA_QUEUE_TYPE_MULTI, nullptr, nullptr, 0, 0, &q),
              HSA_STATUS_SUCCESS);
    EXPECT_EQ(c_->queue_creates, 0u);
    EXPECT_EQ(hsa_queue_destroy(q), HSA_STATUS_SUCCESS);
    EXPECT_EQ(hsa_shut_down(), HSA_STATUS_SUCCESS);
    EXPECT_EQ(c_->onunload_calls, 0u);
}

}  // namespace
