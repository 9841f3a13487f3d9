// SPDX-License-Identifier: MIT
#include "hsa_table.hpp"

#include <cstddef>
#include <cstdint>

namespace amdqp::preload {

namespace {

constexpr std::size_t ptr = sizeof(void*);
constexpr std::size_t header = sizeof(ApiTableVersion);

// This build's header is Debian's 5.2.3 (major 1, the older AmdExt layout).
static_assert(offsetof(CoreApiTable, hsa_queue_create_fn) == header + 7 * ptr);
static_assert(offsetof(CoreApiTable, hsa_queue_destroy_fn) == header + 9 * ptr);
static_assert(offsetof(CoreApiTable, hsa_signal_store_relaxed_fn) == header + 41 * ptr);
static_assert(offsetof(CoreApiTable, hsa_signal_store_screlease_fn) == header + 42 * ptr);
static_assert(offsetof(AmdExtTable, hsa_amd_queue_set_priority_fn) == header + 37 * ptr);
static_assert(offsetof(HsaApiTable, core_) == header);
static_assert(offsetof(HsaApiTable, amd_ext_) == header + ptr);

// Whether a table that says it is @size bytes holds the entry at @offset.
bool holds(std::uint32_t size, std::size_t offset) {
    return size >= offset + ptr;
}

template <typename Table>
auto* entry_at(Table* t, std::size_t offset) {
    return reinterpret_cast<unsigned char*>(t) + offset;
}

// Index of hsa_amd_queue_set_priority in an AmdExtTable of @major with
// @entries entries; -1 when the layout is not known.
int amd_set_priority_index(std::uint32_t major, std::size_t entries) {
    if (major == 1 && entries >= 38 && entries <= 51)
        return 37;
    if ((major == 1 || major == 2) && entries >= 53)
        return 39;
    return -1;
}

}  // namespace

bool locate_entries(HsaApiTable* table, TableEntries* out, std::string* why) {
    *out = TableEntries{};
    if (!table) {
        *why = "no API table";
        return false;
    }
    const ApiTableVersion& root = table->version;
    if (root.major_id < 1 || root.major_id > 3 ||
        !holds(root.minor_id, offsetof(HsaApiTable, core_))) {
        *why = "unknown HSA API table (major " + std::to_string(root.major_id) + ", " +
               std::to_string(root.minor_id) + " bytes)";
        return false;
    }
    CoreApiTable* core = table->core_;
    if (!core || core->version.major_id < 1 || core->version.major_id > 2 ||
        !holds(core->version.minor_id, offsetof(CoreApiTable, hsa_signal_store_screlease_fn))) {
        *why = core
                   ? "unknown HSA core API table (major " + std::to_string(core->version.major_id) +
                         ", " + std::to_string(core->version.minor_id) + " bytes)"
                   : "no HSA core API table";
        return false;
    }
    out->core = core;
    out->queue_create = &core->hsa_queue_create_fn;
    out->queue_destroy = &core->hsa_queue_destroy_fn;
    out->signal_store_relaxed = &core->hsa_signal_store_relaxed_fn;
    out->signal_store_screlease = &core->hsa_signal_store_screlease_fn;
    if (!*out->queue_create || !*out->queue_destroy || !*out->signal_store_relaxed ||
        !*out->signal_store_screlease) {
        *why = "the HSA core API table has empty queue or signal entries";
        *out = TableEntries{};
        return false;
    }

    if (holds(root.minor_id, offsetof(HsaApiTable, amd_ext_)) && table->amd_ext_) {
        AmdExtTable* ext = table->amd_ext_;
        const std::uint32_t size = ext->version.minor_id;
        const std::size_t entries = size >= header ? (size - header) / ptr : 0;
        int index = amd_set_priority_index(ext->version.major_id, entries);
        if (index >= 0 && holds(size, header + index * ptr)) {
            using Entry = decltype(AmdExtTable::hsa_amd_queue_set_priority_fn);
            auto* e = reinterpret_cast<Entry*>(entry_at(ext, header + index * ptr));
            if (*e)
                out->amd_queue_set_priority = e;
        }
    }
    return true;
}

}  // namespace amdqp::preload
