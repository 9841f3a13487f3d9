// SPDX-License-Identifier: MIT
//
// ROCr's tools-library interface (HSA_TOOLS_LIB): at hsa_init the runtime
// loads each library named there and calls its OnLoad with the API table
// every hsa_* call goes through; OnUnload at hsa_shut_down. In ROCr since
// ROCm 1.x and in Debian's 5.2.3. On ROCm 6.2 and later the runtime skips
// these libraries when a rocprofiler-sdk tool is registered, unless
// HSA_TOOLS_ROCPROFILER_V1_TOOLS=1 (then rocprofiler_entry.cpp's library,
// loaded through ROCP_TOOL_LIBRARIES, gets the table instead).
#include <cstdint>

#include "export.hpp"
#include "preload.hpp"

extern "C" AMDQP_PRELOAD_EXPORT bool OnLoad(HsaApiTable* table, std::uint64_t runtime_version,
                                            std::uint64_t failed_tool_count,
                                            const char* const* failed_tool_names) {
    (void)runtime_version;
    (void)failed_tool_count;
    (void)failed_tool_names;
    try {
        amdqp::preload::primary_instance()->install(table);
    } catch (...) {
    }
    // Never "failed": a refusal would only make the runtime report this
    // library, and the program runs the same either way.
    return true;
}

extern "C" AMDQP_PRELOAD_EXPORT void OnUnload() {
    try {
        amdqp::preload::primary_instance()->uninstall();
    } catch (...) {
    }
}
