// SPDX-License-Identifier: MIT
// What the benchmark's probe tool (table_probe.cpp) keeps: the live API
// table, and its entries as they were before the tools listed after the
// probe in HSA_TOOLS_LIB replaced some.
#pragma once

#ifndef AMD_INTERNAL_BUILD
#define AMD_INTERNAL_BUILD
#endif
#include <hsa/hsa_api_trace.h>

struct HsaSimBenchProbe {
    bool loaded;
    HsaApiTable* live;
    CoreApiTable core;
    AmdExtTable amd_ext;
};

using HsaSimBenchProbeFn = HsaSimBenchProbe* (*)();
