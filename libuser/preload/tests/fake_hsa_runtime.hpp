// SPDX-License-Identifier: MIT
//
// A runtime's API tables as the tagging layer finds them, filled with
// functions that do nothing (or hand out one fake queue), in the layouts of
// the runtimes the layer must handle.
#ifndef AMDQP_PRELOAD_TESTS_FAKE_HSA_RUNTIME_HPP
#define AMDQP_PRELOAD_TESTS_FAKE_HSA_RUNTIME_HPP

#include <cstring>
#include <vector>

#include "hsa_table.hpp"

namespace amdqp_test {

// The one queue the fake runtime creates: an amd_queue_t-sized block with a
// ring of its own (the doorbell hook reads the packets it publishes) and a
// made-up doorbell handle.
struct FakeQueue {
    alignas(64) unsigned char bytes[256] = {};
    alignas(64) hsa_kernel_dispatch_packet_t ring[256] = {};
    hsa_queue_t* hsa() { return reinterpret_cast<hsa_queue_t*>(bytes); }
};
inline FakeQueue g_fake_queue;
inline int g_fake_stores = 0;
inline int g_fake_destroys = 0;

inline hsa_status_t fake_create(hsa_agent_t, uint32_t, hsa_queue_type32_t,
                                void (*)(hsa_status_t, hsa_queue_t*, void*), void*, uint32_t,
                                uint32_t, hsa_queue_t** queue) {
    hsa_queue_t* q = g_fake_queue.hsa();
    q->base_address = g_fake_queue.ring;
    q->doorbell_signal.handle = 0xabc0;
    q->size = 256;
    if (queue)
        *queue = q;
    return HSA_STATUS_SUCCESS;
}
inline hsa_status_t fake_destroy(hsa_queue_t*) {
    g_fake_destroys++;
    return HSA_STATUS_SUCCESS;
}
inline void fake_store(hsa_signal_t, hsa_signal_value_t) {
    g_fake_stores++;
}
inline hsa_status_t fake_set_priority(hsa_queue_t*, hsa_amd_queue_priority_t) {
    return HSA_STATUS_SUCCESS;
}

// A runtime's tables: root, core and an AMD extension table of @amd_entries
// pointer entries, with hsa_amd_queue_set_priority at @set_priority_index.
struct Runtime {
    Runtime(std::uint32_t root_major, std::uint32_t core_major, std::uint32_t amd_major,
            std::size_t amd_entries, int set_priority_index)
        : amd(2 + amd_entries) {  // ApiTableVersion is two pointers wide
        root.version.major_id = root_major;
        root.version.minor_id = sizeof(HsaApiTable);
        root.core_ = &core;
        root.amd_ext_ = reinterpret_cast<AmdExtTable*>(amd.data());
        std::memset(&core, 0, sizeof(core));
        core.version.major_id = core_major;
        core.version.minor_id = sizeof(CoreApiTable);
        core.hsa_queue_create_fn = fake_create;
        core.hsa_queue_destroy_fn = fake_destroy;
        core.hsa_signal_store_relaxed_fn = fake_store;
        core.hsa_signal_store_screlease_fn = fake_store;
        auto* v = reinterpret_cast<ApiTableVersion*>(amd.data());
        v->major_id = amd_major;
        v->minor_id = static_cast<std::uint32_t>(sizeof(ApiTableVersion) + amd_entries * 8);
        if (set_priority_index >= 0)
            amd[2 + set_priority_index] = reinterpret_cast<void*>(&fake_set_priority);
    }
    void** amd_entry(int index) { return &amd[2 + index]; }

    HsaApiTable root{};
    CoreApiTable core;
    std::vector<void*> amd;
};

}  // namespace amdqp_test

#endif  // AMDQP_PRELOAD_TESTS_FAKE_HSA_RUNTIME_HPP
