// SPDX-License-Identifier: MIT
#include <algorithm>

#include "commands.hpp"
#include "exit_status.hpp"
#include "inventory.hpp"
#include "json_util.hpp"
#include "names.hpp"
#include "queue_ref.hpp"
#include "table.hpp"

namespace amdqpctl {

namespace {

std::vector<std::uint32_t> parse_all(const std::vector<std::string>& texts, const char* what) {
    std::vector<std::uint32_t> out;
    for (const auto& t : texts) {
        auto v = parse_u32(t);
        if (!v)
            throw UsageError("bad " + std::string(what) + " '" + t + "': expected a number");
        out.push_back(*v);
    }
    return out;
}

bool wanted(const std::vector<std::uint32_t>& filter, std::uint32_t v) {
    return filter.empty() || std::find(filter.begin(), filter.end(), v) != filter.end();
}

}  // namespace

int cmd_list(Context& ctx, const ListOptions& opt) {
    const auto pids = parse_all(opt.pids, "pid");
    const auto gpus = parse_all(opt.gpus, "gpu");
    Sources src = open_sources(ctx);
    // Without /dev/amdqp the pages may still name cooperative queues; with
    // neither there is nothing to list, and the user needs to know why.
    if (!src.device && src.tagged.empty())
        src.throw_device_error();

    std::vector<QueueRow> rows;
    for (auto& r : collect_rows(ctx, src))
        if (wanted(pids, r.pid) && wanted(gpus, r.gpu_id))
            rows.push_back(std::move(r));

    if (!src.device)
        ctx.err << "amdqpctl: showing activity pages only: " << src.device_error->what() << '\n';
    // Queues a process has beyond its page's slots: never left out silently.
    std::uint64_t untracked = 0;
    for (const auto& tp : src.tagged) {
        if (!tp.snap.header.untracked || !wanted(pids, static_cast<std::uint32_t>(tp.page.pid())))
            continue;
        untracked += tp.snap.header.untracked;
        ctx.err << "amdqpctl: pid " << tp.page.pid() << " has " << tp.snap.header.untracked
                << " queue(s) more than its activity page holds (" << AMDQP_ACT_MAX_SLOTS
                << "): not listed\n";
    }

    if (opt.json) {
        nlohmann::json out = nlohmann::json::array();
        for (const auto& r : rows)
            out.push_back(row_json(r));
        ctx.out << out.dump(2) << '\n';
        return exit_ok;
    }
    Table table({"PID", "COMM", "CGROUP", "GPU", "QUEUE", "RING", "PRIORITY", "STATE", "SUSPENDED",
                 "MECH"});
    for (const auto& r : rows) {
        const std::string where = !r.proc.container.empty() ? "container:" + r.proc.container
                                  : !r.proc.cgroup.empty()  ? r.proc.cgroup
                                                            : "-";
        table.add({std::to_string(r.pid), r.proc.comm.empty() ? "-" : r.proc.comm, where,
                   r.gpu_id ? std::to_string(r.gpu_id) : "-",
                   r.queue_id ? std::to_string(*r.queue_id) : "-", hex(r.ring_va),
                   priority_label(r.priority), r.state,
                   r.suspended_ns ? seconds(*r.suspended_ns) : "-", r.mechanism});
    }
    if (table.empty())
        ctx.out << "no queues\n";
    else
        table.print(ctx.out);
    if (untracked)
        ctx.out << "untracked: " << untracked << '\n';
    return exit_ok;
}

}  // namespace amdqpctl
