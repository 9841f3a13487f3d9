// SPDX-License-Identifier: MIT
// A tools library that only looks: listed first in HSA_TOOLS_LIB, it copies
// the runtime's own table entries before the tool under test changes them,
// so that the benchmark can switch between both tables in one process.
#include "table_probe.h"

namespace {
HsaSimBenchProbe g_probe;
}  // namespace

extern "C" {

[[gnu::visibility("default")]] bool OnLoad(HsaApiTable* table, uint64_t, uint64_t,
                                           const char* const*) {
    g_probe.live = table;
    g_probe.core = *table->core_;
    g_probe.amd_ext = *table->amd_ext_;
    g_probe.loaded = true;
    return true;
}

[[gnu::visibility("default")]] HsaSimBenchProbe* hsasim_bench_probe() {
    return &g_probe;
}

}  // extern "C"
