// SPDX-License-Identifier: MIT
// A tools library for the tests (HSA_TOOLS_LIB): it replaces queue create
// and destroy, the signal stores (to see doorbells) and the AMD queue
// priority entry in the API table, counts what goes through them and calls
// the runtime's originals. Knobs: HSASIM_TEST_TOOL_FAIL=1 makes OnLoad
// refuse (before touching the table); HSASIM_TEST_TOOL_VERBOSE=1 prints one
// line at OnLoad and one with the counts at OnUnload on stderr.
#ifndef AMD_INTERNAL_BUILD
#define AMD_INTERNAL_BUILD
#endif
#include <hsa/hsa_api_trace.h>

#include <atomic>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <mutex>
#include <set>
#include <string>

#include "test_tool.h"

namespace {

CoreApiTable g_orig;
AmdExtTable g_orig_amd;
HsaSimTestToolCounters g_counters;
std::mutex g_mutex;
std::set<uint64_t> g_doorbells;
std::string g_failed_names;

bool env_on(const char* name) {
    const char* v = getenv(name);
    return v && strcmp(v, "1") == 0;
}

template <typename Table>
uint64_t null_entries(const Table* t) {
    // Every entry after the version header is a function pointer.
    const size_t n = (sizeof(Table) - sizeof(ApiTableVersion)) / sizeof(void*);
    void* entries[sizeof(Table) / sizeof(void*)];
    memcpy(entries, reinterpret_cast<const char*>(t) + sizeof(ApiTableVersion), n * sizeof(void*));
    uint64_t nulls = 0;
    for (size_t i = 0; i < n; ++i)
        nulls += entries[i] == nullptr;
    return nulls;
}

void bump(uint64_t& c) {
    std::atomic_ref<uint64_t>(c).fetch_add(1, std::memory_order_relaxed);
}

bool is_doorbell(hsa_signal_t s) {
    std::lock_guard lock(g_mutex);
    return g_doorbells.count(s.handle) != 0;
}

void note_store(hsa_signal_t s, hsa_signal_value_t v) {
    if (is_doorbell(s)) {
        bump(g_counters.doorbell_stores);
        std::atomic_ref<int64_t>(g_counters.last_doorbell_value)
            .store(v, std::memory_order_relaxed);
    } else {
        bump(g_counters.other_stores);
    }
}

hsa_status_t queue_create(hsa_agent_t agent, uint32_t size, hsa_queue_type32_t type,
                          void (*callback)(hsa_status_t, hsa_queue_t*, void*), void* data,
                          uint32_t private_segment_size, uint32_t group_segment_size,
                          hsa_queue_t** queue) {
    hsa_status_t st = g_orig.hsa_queue_create_fn(agent, size, type, callback, data,
                                                 private_segment_size, group_segment_size, queue);
    if (st == HSA_STATUS_SUCCESS) {
        bump(g_counters.queue_creates);
        std::lock_guard lock(g_mutex);
        g_doorbells.insert((*queue)->doorbell_signal.handle);
        g_counters.last_ring = reinterpret_cast<uint64_t>((*queue)->base_address);
    }
    return st;
}

hsa_status_t queue_destroy(hsa_queue_t* queue) {
    {
        std::lock_guard lock(g_mutex);
        g_doorbells.erase(queue->doorbell_signal.handle);
    }
    bump(g_counters.queue_destroys);
    return g_orig.hsa_queue_destroy_fn(queue);
}

void store_relaxed(hsa_signal_t s, hsa_signal_value_t v) {
    note_store(s, v);
    g_orig.hsa_signal_store_relaxed_fn(s, v);
}

void store_screlease(hsa_signal_t s, hsa_signal_value_t v) {
    note_store(s, v);
    g_orig.hsa_signal_store_screlease_fn(s, v);
}

hsa_status_t set_priority(hsa_queue_t* queue, hsa_amd_queue_priority_t priority) {
    bump(g_counters.set_priority_calls);
    g_counters.last_priority = static_cast<uint32_t>(priority);
    return g_orig_amd.hsa_amd_queue_set_priority_fn(queue, priority);
}

}  // namespace

extern "C" {

[[gnu::visibility("default")]] bool OnLoad(HsaApiTable* table, uint64_t runtime_version,
                                           uint64_t failed_tool_count,
                                           const char* const* failed_tool_names) {
    bump(g_counters.onload_calls);
    g_counters.runtime_version = runtime_version;
    g_counters.failed_tool_count = failed_tool_count;
    g_failed_names.clear();
    for (uint64_t i = 0; i < failed_tool_count; ++i) {
        g_failed_names += failed_tool_names[i];
        g_failed_names += ' ';
    }
    g_counters.failed_tool_names = g_failed_names.c_str();
    g_counters.table_major = table->version.major_id;
    g_counters.core_table_size = table->core_->version.minor_id;
    g_counters.amd_table_size = table->amd_ext_->version.minor_id;
    g_counters.null_entries = null_entries(table->core_) + null_entries(table->amd_ext_) +
                              null_entries(table->finalizer_ext_) + null_entries(table->image_ext_);
    if (env_on("HSASIM_TEST_TOOL_VERBOSE"))
        fprintf(stderr, "hsasim-test-tool: OnLoad version=%llu failed=%llu\n",
                static_cast<unsigned long long>(runtime_version),
                static_cast<unsigned long long>(failed_tool_count));
    if (env_on("HSASIM_TEST_TOOL_FAIL"))
        return false;
    g_orig = *table->core_;
    g_orig_amd = *table->amd_ext_;
    table->core_->hsa_queue_create_fn = queue_create;
    table->core_->hsa_queue_destroy_fn = queue_destroy;
    table->core_->hsa_signal_store_relaxed_fn = store_relaxed;
    table->core_->hsa_signal_store_screlease_fn = store_screlease;
    table->amd_ext_->hsa_amd_queue_set_priority_fn = set_priority;
    return true;
}

[[gnu::visibility("default")]] void OnUnload() {
    bump(g_counters.onunload_calls);
    if (env_on("HSASIM_TEST_TOOL_VERBOSE"))
        fprintf(stderr,
                "hsasim-test-tool: OnUnload creates=%llu destroys=%llu doorbells=%llu "
                "priorities=%llu\n",
                static_cast<unsigned long long>(g_counters.queue_creates),
                static_cast<unsigned long long>(g_counters.queue_destroys),
                static_cast<unsigned long long>(g_counters.doorbell_stores),
                static_cast<unsigned long long>(g_counters.set_priority_calls));
}

[[gnu::visibility("default")]] HsaSimTestToolCounters* hsasim_test_tool_counters() {
    return &g_counters;
}

}  // extern "C"
