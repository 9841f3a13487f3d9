// SPDX-License-Identifier: MIT
#include <nlohmann/json.hpp>

#include "commands.hpp"
#include "exit_status.hpp"
#include "inventory.hpp"
#include "names.hpp"
#include "table.hpp"

namespace amdqpctl {

int cmd_stats(Context& ctx, const StatsOptions& opt) {
    Sources src = open_sources(ctx);
    if (!src.device)
        src.throw_device_error();
    const auto devices = src.device->devices();

    // The cooperative fallback's cost is counted by each process.
    std::uint64_t coop_updates = 0;
    std::uint32_t coop_processes = 0;
    for (const auto& t : src.tagged) {
        if (!t.snap.coop_capable())
            continue;
        coop_processes++;
        coop_updates += t.snap.header.coop_updates;
    }

    if (opt.json) {
        nlohmann::json devs = nlohmann::json::array();
        for (const auto& d : devices)
            devs.push_back({{"gpu", d.gpu_id},
                            {"backend", backends_name(d.backend)},
                            {"sched_mode", sched_mode_name(d.sched_mode)},
                            {"num_xcc", d.num_xcc},
                            {"queues", d.num_queues},
                            {"suspended", d.num_suspended},
                            {"sched_updates", d.sched_updates},
                            {"unmap_packets", d.unmap_packets},
                            {"map_packets", d.map_packets},
                            {"preemptions", d.preemptions},
                            {"preempt_failures", d.preempt_failures},
                            {"resets", d.resets}});
        ctx.out << nlohmann::json{{"devices", devs},
                                  {"cooperative",
                                   {{"processes", coop_processes},
                                    {"sched_updates", coop_updates}}}}
                       .dump(2)
                << '\n';
        return exit_ok;
    }
    Table table({"GPU", "BACKEND", "SCHED", "XCC", "QUEUES", "SUSPENDED", "SCHED_UPDATES", "UNMAPS",
                 "MAPS", "PREEMPTIONS", "PREEMPT_FAILS", "RESETS"});
    for (const auto& d : devices)
        table.add({std::to_string(d.gpu_id), backends_name(d.backend),
                   sched_mode_name(d.sched_mode), std::to_string(d.num_xcc),
                   std::to_string(d.num_queues), std::to_string(d.num_suspended),
                   std::to_string(d.sched_updates), std::to_string(d.unmap_packets),
                   std::to_string(d.map_packets), std::to_string(d.preemptions),
                   std::to_string(d.preempt_failures), std::to_string(d.resets)});
    if (table.empty())
        ctx.out << "no devices registered with amdqp\n";
    else
        table.print(ctx.out);
    ctx.out << "cooperative: " << coop_processes << " process(es), " << coop_updates
            << " scheduler update(s)\n";
    return exit_ok;
}

}  // namespace amdqpctl
