// SPDX-License-Identifier: MIT
#include <nlohmann/json.hpp>

#include "commands.hpp"
#include "exit_status.hpp"
#include "inventory.hpp"
#include "names.hpp"
#include "process_info.hpp"
#include "queue_ref.hpp"

namespace amdqpctl {

namespace {

int worse(int a, int b) {
    // Permission problems tell the user more than a generic failure.
    if (a == exit_permission || b == exit_permission)
        return exit_permission;
    return std::max(a, b);
}

}  // namespace

int cmd_priority(Context& ctx, const PriorityOptions& opt) {
    const bool by_pid = opt.queues.empty() && opt.cgroup.empty();
    if (!opt.queues.empty() && !opt.cgroup.empty())
        throw UsageError("priority: give a PID, --queue or --cgroup, not several");
    if (opt.args.size() != (by_pid ? 2u : 1u))
        throw UsageError(by_pid ? "priority: expected PID LEVEL (or --queue REF LEVEL, --cgroup "
                                  "PATH LEVEL)"
                                : "priority: expected only LEVEL after --queue/--cgroup");
    const std::string& level_text = opt.args.back();
    auto level = amdqp::try_parse_priority(level_text);
    if (!level)
        throw UsageError("unknown priority '" + level_text +
                         "': use high (12), normal (7), low (2) or a number 0..15 (15 highest)");

    std::vector<amdqp::QueueRef> refs;
    std::vector<std::uint32_t> pids;
    for (const auto& q : opt.queues)
        refs.push_back(parse_queue_ref(q));
    if (by_pid)
        pids.push_back(parse_pid(opt.args.front()));

    Sources src = open_sources(ctx);
    if (!src.device)
        src.throw_device_error();
    amdqp::Device& dev = *src.device;

    if (!opt.cgroup.empty()) {
        pids = cgroup_pids(cgroup_folder(ctx.sys_root, opt.cgroup));
        if (pids.empty())
            throw CtlError(exit_error, "cgroup " + opt.cgroup + " has no processes");
    }
    int status = exit_ok;
    for (auto pid : pids) {
        auto queues = dev.queues(0, pid);
        for (const auto& q : queues)
            refs.push_back(amdqp::QueueRef::of(q));
        if (!queues.empty() || !by_pid)
            continue;
        // The pid may still be tagged, under the cooperative mechanism only.
        const auto* t = src.find_tagged(pid);
        if (t && !t->snap.slots.empty())
            ctx.err << "amdqpctl: pid " << pid
                    << ": its queues are not under amdqp control (cooperative mechanism), so "
                       "their priority is fixed: restart it with amdqpctl run --priority "
                    << level_text << '\n';
        else
            ctx.err << "amdqpctl: pid " << pid
                    << " has no GPU queues under amdqp (see amdqpctl list)\n";
        status = exit_error;
    }

    nlohmann::json results = nlohmann::json::array();
    for (const auto& ref : refs) {
        std::optional<amdqp::QueueInfo> before =
            ref.by_ring ? dev.find_queue(ref.pid, ref.ring_va)
                        : dev.find_queue(ref.pid, ref.gpu_id, ref.queue_id);
        const amdqp::QueueRef named = before ? amdqp::QueueRef::of(*before) : ref;
        try {
            dev.set_priority(named, *level);
        } catch (const amdqp::Error& e) {
            ctx.err << "amdqpctl: " << amdqp::to_string(named) << ": " << e.what() << '\n';
            status = worse(status, exit_status_for(e.code()));
            continue;
        }
        const std::uint32_t old = before ? before->priority : 0;
        if (opt.json) {
            results.push_back(
                {{"pid", named.pid},
                 {"gpu", named.by_ring ? nlohmann::json(nullptr) : nlohmann::json(named.gpu_id)},
                 {"queue_id",
                  named.by_ring ? nlohmann::json(nullptr) : nlohmann::json(named.queue_id)},
                 {"old_priority", before ? nlohmann::json(old) : nullptr},
                 {"priority", *level}});
        } else {
            ctx.out << amdqp::to_string(named) << ": priority "
                    << (before ? priority_label(old) + " -> " : std::string())
                    << priority_label(static_cast<std::uint32_t>(*level)) << '\n';
        }
    }
    if (opt.json)
        ctx.out << results.dump(2) << '\n';
    if (refs.empty() && status == exit_ok)
        throw CtlError(exit_error, "no queues to change (see amdqpctl list)");
    return status;
}

}  // namespace amdqpctl
