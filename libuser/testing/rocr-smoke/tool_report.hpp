// SPDX-License-Identifier: MIT
//
// What the smoke tools library saw when ROCr loaded it, read back by the
// smoke program through the library's one extra export. Both are built from
// this folder in the same build, so the layout carries no version.
#pragma once

#include <atomic>
#include <cstdint>

#define AMD_INTERNAL_BUILD  // hsa_api_trace.h includes its siblings as "inc/..." otherwise
#include <hsa/hsa_api_trace.h>

namespace amdqp::rocr_smoke {

struct TableVersion {
    std::uint32_t major = 0;
    std::uint32_t minor = 0;  // ROCr stores the table's size in bytes here
    std::uint32_t step = 0;
};

struct ToolReport {
    std::atomic<std::uint32_t> on_load_calls{0};
    std::atomic<std::uint32_t> on_unload_calls{0};

    // OnLoad's arguments and the tables it was given.
    std::uint64_t runtime_version = 0;
    std::uint64_t failed_tool_count = 0;
    TableVersion root;
    TableVersion core;
    TableVersion amd_ext;
    bool has_core = false;
    bool has_amd_ext = false;
    // The runtime's live core table: after every tool's OnLoad, its entries
    // show which library each public call lands in first.
    const CoreApiTable* live_core = nullptr;

    // Entries of the tables that the tagging layer replaces or calls: how
    // many were checked, and the first one that lies beyond the size the
    // runtime declared or is null ("" when all are there).
    std::uint32_t entries_checked = 0;
    char missing_entry[64] = {};

    // The tool replaced hsa_iterate_agents and hsa_queue_create in the table
    // with counting wrappers: the program's calls must pass through them.
    bool hooks_installed = false;
    std::atomic<std::uint32_t> iterate_agents_calls{0};
    std::atomic<std::uint32_t> queue_create_calls{0};
    std::atomic<std::int32_t> last_queue_create_status{-1};
};

// extern "C" const ToolReport* amdqp_rocr_smoke_report(void)
inline constexpr const char kReportSymbol[] = "amdqp_rocr_smoke_report";
using ReportFunction = const ToolReport* (*)();

}  // namespace amdqp::rocr_smoke
