// SPDX-License-Identifier: MIT
// What the test tools library (test_tool.cpp) saw; the tests reach it with
// dlsym(handle, "hsasim_test_tool_counters").
#pragma once

#include <cstdint>

struct HsaSimTestToolCounters {
    uint64_t onload_calls;
    uint64_t onunload_calls;
    uint64_t runtime_version;
    uint64_t failed_tool_count;
    const char* failed_tool_names;  // space separated
    uint32_t table_major;
    uint32_t core_table_size;
    uint32_t amd_table_size;
    uint64_t null_entries;  // table entries left empty by the runtime
    uint64_t queue_creates;
    uint64_t queue_destroys;
    uint64_t doorbell_stores;
    uint64_t other_stores;
    int64_t last_doorbell_value;
    uint64_t last_ring;
    uint64_t set_priority_calls;
    uint32_t last_priority;
};

using HsaSimTestToolCountersFn = HsaSimTestToolCounters* (*)();
