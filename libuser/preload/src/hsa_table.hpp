// SPDX-License-Identifier: MIT
//
// Where the entries the tagging layer replaces sit in a runtime's
// HsaApiTable, after checking the table's versions and sizes: a table of a
// runtime this code does not know, or one too short to hold an entry, is
// left alone (the application then runs untagged).
//
// Layouts, from ROCR-Runtime's hsa_api_trace.h history:
//  - HsaApiTable: version, then core_, amd_ext_, ... at fixed places; root
//    major 1 (ROCm <= 5.7), 2 (6.0, 6.1), 3 (6.2 and later, 7.x).
//  - CoreApiTable: entries only ever appended; the queue and signal entries
//    are at the same index in majors 1 and 2 (6.x, 7.x).
//  - AmdExtTable: two entries were inserted after hsa_amd_memory_async_copy
//    in ROCm 5.5 (commit 30920fc9, "Add interface to DMA copy directly to a
//    target engine") while the major stayed 1, which moved
//    hsa_amd_queue_set_priority from index 37 to 39; major 2 (ROCm 6.0,
//    commit 03f2f69d) keeps it at 39. The table's size (minor_id) tells the
//    two major-1 layouts apart: at most 51 entries before, 53 or more after.
#ifndef AMDQP_PRELOAD_HSA_TABLE_HPP
#define AMDQP_PRELOAD_HSA_TABLE_HPP

#ifndef AMD_INTERNAL_BUILD
#define AMD_INTERNAL_BUILD  // hsa_api_trace.h includes its siblings as "inc/..." otherwise
#endif
#include <hsa/hsa_api_trace.h>

#include <string>

namespace amdqp::preload {

// Addresses of the entries in the runtime's table.
struct TableEntries {
    CoreApiTable* core = nullptr;
    decltype(CoreApiTable::hsa_queue_create_fn)* queue_create = nullptr;
    decltype(CoreApiTable::hsa_queue_destroy_fn)* queue_destroy = nullptr;
    decltype(CoreApiTable::hsa_signal_store_relaxed_fn)* signal_store_relaxed = nullptr;
    decltype(CoreApiTable::hsa_signal_store_screlease_fn)* signal_store_screlease = nullptr;
    // nullptr when the AMD extension table is missing or of unknown layout.
    decltype(AmdExtTable::hsa_amd_queue_set_priority_fn)* amd_queue_set_priority = nullptr;
};

// The entries of @table, or false with the reason in @why.
bool locate_entries(HsaApiTable* table, TableEntries* out, std::string* why);

}  // namespace amdqp::preload

#endif  // AMDQP_PRELOAD_HSA_TABLE_HPP
