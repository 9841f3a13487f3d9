// SPDX-License-Identifier: MIT
//
// A tools library for ROCr's HSA_TOOLS_LIB: the runtime dlopen()s it at
// hsa_init and calls OnLoad with the API table every public hsa_* call
// dispatches through; OnUnload at hsa_shut_down. It records what it was
// given and puts counting wrappers around two entries, so that the smoke
// program can tell that the interception point the tagging layer relies on
// exists in the runtime it runs on, not only that the library was mapped.
#include <cstddef>
#include <cstdint>
#include <cstring>

#include "tool_report.hpp"

#define SMOKE_EXPORT __attribute__((visibility("default")))

namespace {

using amdqp::rocr_smoke::TableVersion;
using amdqp::rocr_smoke::ToolReport;

ToolReport report;
CoreApiTable* hooked_core = nullptr;
decltype(hsa_iterate_agents)* next_iterate_agents = nullptr;
decltype(hsa_queue_create)* next_queue_create = nullptr;

TableVersion version_of(const ApiTableVersion& v) {
    return {v.major_id, v.minor_id, v.step_id};
}

// An entry is usable when it lies within the size the runtime says its table
// has (minor_id) and is set: a newer header than the runtime must not make
// us read past the runtime's table.
template <typename Table, typename Entry>
bool has_entry(const Table& table, Entry Table::*member) {
    const auto* base = reinterpret_cast<const char*>(&table);
    const auto* field = reinterpret_cast<const char*>(&(table.*member));
    const auto end = static_cast<std::size_t>(field - base) + sizeof(Entry);
    return end <= table.version.minor_id && table.*member != nullptr;
}

template <typename Table, typename Entry>
void require(const Table& table, Entry Table::*member, const char* name) {
    ++report.entries_checked;
    if (report.missing_entry[0] == '\0' && !has_entry(table, member)) {
        std::strncpy(report.missing_entry, name, sizeof(report.missing_entry) - 1);
    }
}

void check_core(const CoreApiTable& core) {
    require(core, &CoreApiTable::hsa_init_fn, "core.hsa_init_fn");
    require(core, &CoreApiTable::hsa_shut_down_fn, "core.hsa_shut_down_fn");
    require(core, &CoreApiTable::hsa_iterate_agents_fn, "core.hsa_iterate_agents_fn");
    require(core, &CoreApiTable::hsa_agent_get_info_fn, "core.hsa_agent_get_info_fn");
    require(core, &CoreApiTable::hsa_queue_create_fn, "core.hsa_queue_create_fn");
    require(core, &CoreApiTable::hsa_queue_destroy_fn, "core.hsa_queue_destroy_fn");
    require(core, &CoreApiTable::hsa_queue_load_read_index_scacquire_fn,
            "core.hsa_queue_load_read_index_scacquire_fn");
    require(core, &CoreApiTable::hsa_queue_load_write_index_relaxed_fn,
            "core.hsa_queue_load_write_index_relaxed_fn");
    require(core, &CoreApiTable::hsa_queue_add_write_index_screlease_fn,
            "core.hsa_queue_add_write_index_screlease_fn");
    require(core, &CoreApiTable::hsa_signal_create_fn, "core.hsa_signal_create_fn");
    require(core, &CoreApiTable::hsa_signal_store_screlease_fn,
            "core.hsa_signal_store_screlease_fn");
}

void check_amd_ext(const AmdExtTable& amd_ext) {
    require(amd_ext, &AmdExtTable::hsa_amd_queue_set_priority_fn,
            "amd_ext.hsa_amd_queue_set_priority_fn");
    require(amd_ext, &AmdExtTable::hsa_amd_queue_cu_set_mask_fn,
            "amd_ext.hsa_amd_queue_cu_set_mask_fn");
}

hsa_status_t counted_iterate_agents(hsa_status_t (*callback)(hsa_agent_t, void*), void* data) {
    report.iterate_agents_calls.fetch_add(1);
    return next_iterate_agents(callback, data);
}

hsa_status_t counted_queue_create(hsa_agent_t agent, std::uint32_t size, hsa_queue_type32_t type,
                                  void (*callback)(hsa_status_t, hsa_queue_t*, void*), void* data,
                                  std::uint32_t private_segment_size,
                                  std::uint32_t group_segment_size, hsa_queue_t** queue) {
    report.queue_create_calls.fetch_add(1);
    const hsa_status_t status = next_queue_create(agent, size, type, callback, data,
                                                  private_segment_size, group_segment_size, queue);
    report.last_queue_create_status.store(static_cast<std::int32_t>(status));
    return status;
}

}  // namespace

extern "C" SMOKE_EXPORT bool OnLoad(HsaApiTable* table, std::uint64_t runtime_version,
                                    std::uint64_t failed_tool_count,
                                    const char* const* /*failed_tool_names*/) {
    report.on_load_calls.fetch_add(1);
    report.runtime_version = runtime_version;
    report.failed_tool_count = failed_tool_count;
    if (table == nullptr) {
        return true;
    }
    report.root = version_of(table->version);
    const auto root_has = [table](std::size_t offset) {
        return offset + sizeof(void*) <= table->version.minor_id;
    };
    if (root_has(offsetof(HsaApiTable, core_)) && table->core_ != nullptr) {
        report.has_core = true;
        report.live_core = table->core_;
        report.core = version_of(table->core_->version);
        check_core(*table->core_);
    } else {
        std::strncpy(report.missing_entry, "core_", sizeof(report.missing_entry) - 1);
    }
    if (root_has(offsetof(HsaApiTable, amd_ext_)) && table->amd_ext_ != nullptr) {
        report.has_amd_ext = true;
        report.amd_ext = version_of(table->amd_ext_->version);
        check_amd_ext(*table->amd_ext_);
    } else if (report.missing_entry[0] == '\0') {
        std::strncpy(report.missing_entry, "amd_ext_", sizeof(report.missing_entry) - 1);
    }
    // Wrap only what is there; the program reports a missing entry anyway.
    CoreApiTable* core = report.has_core ? table->core_ : nullptr;
    if (core != nullptr && has_entry(*core, &CoreApiTable::hsa_iterate_agents_fn) &&
        has_entry(*core, &CoreApiTable::hsa_queue_create_fn)) {
        hooked_core = core;
        next_iterate_agents = core->hsa_iterate_agents_fn;
        next_queue_create = core->hsa_queue_create_fn;
        core->hsa_iterate_agents_fn = counted_iterate_agents;
        core->hsa_queue_create_fn = counted_queue_create;
        report.hooks_installed = true;
    }
    return true;
}

// Leave the table as we found it where nobody wrapped our entries since: not
// every runtime resets its table after OnUnload, and ours is unloaded next.
extern "C" SMOKE_EXPORT void OnUnload() {
    report.on_unload_calls.fetch_add(1);
    if (hooked_core != nullptr) {
        if (hooked_core->hsa_iterate_agents_fn == counted_iterate_agents) {
            hooked_core->hsa_iterate_agents_fn = next_iterate_agents;
        }
        if (hooked_core->hsa_queue_create_fn == counted_queue_create) {
            hooked_core->hsa_queue_create_fn = next_queue_create;
        }
        hooked_core = nullptr;
    }
}

extern "C" SMOKE_EXPORT const ToolReport* amdqp_rocr_smoke_report() {
    return &report;
}
