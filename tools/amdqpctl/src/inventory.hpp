// SPDX-License-Identifier: MIT
//
// Everything amdqpctl knows about queues, from both sources: /dev/amdqp
// (queues amdqp.ko controls) and the activity pages of tagged processes
// (which also name queues only the cooperative fallback controls).
#ifndef AMDQPCTL_INVENTORY_HPP
#define AMDQPCTL_INVENTORY_HPP

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include <amdqp/activity.hpp>
#include <amdqp/amdqp.hpp>

#include "context.hpp"
#include "process_info.hpp"

namespace amdqpctl {

// A tagged process's page and what it said when read.
struct TaggedProcess {
    amdqp::activity::Page page;
    amdqp::activity::Snapshot snap;
};

struct Sources {
    std::optional<amdqp::Device> device;
    // Why there is no device (no_module, permission...).
    std::optional<amdqp::Error> device_error;
    std::vector<TaggedProcess> tagged;

    const TaggedProcess* find_tagged(std::uint32_t pid) const;
    // The no-device error as a CtlError with its exit status.
    [[noreturn]] void throw_device_error() const;
};

// Opens /dev/amdqp (remembering why not) and reads every activity page
// visible to this user. @access: control to send cooperative requests.
Sources open_sources(const Context& ctx,
                     amdqp::activity::Page::Access access = amdqp::activity::Page::Access::read);

// "amdqp", "coop", "none" for AMDQP_ACT_MECH_*.
std::string mechanism_name(std::uint32_t mechanism);
// "running", "suspended", "failed" for AMDQP_ACT_COOP_*.
std::string coop_state_name(std::uint32_t state);

struct QueueRow {
    std::uint32_t pid = 0;
    ProcessInfo proc;
    std::uint32_t gpu_id = 0;
    std::optional<std::uint32_t> queue_id;
    std::uint64_t ring_va = 0;
    std::uint32_t priority = 0;
    std::string state;
    bool suspended = false;
    std::optional<std::uint64_t> suspended_ns;
    std::optional<std::uint32_t> holders;
    // amdqp's queues on a kernel with ceilings (ABI 1.2): what the owner
    // asked for and the ceiling of its identity; priority is the effective.
    std::optional<std::uint32_t> requested;
    std::optional<std::uint32_t> ceiling;
    std::string mechanism;
    std::string group;
};

// One row per queue: amdqp's queues, then queues only a page names.
// Sorted by pid, gpu, queue id, ring VA.
std::vector<QueueRow> collect_rows(const Context& ctx, Sources& src);

}  // namespace amdqpctl

#endif  // AMDQPCTL_INVENTORY_HPP
