// SPDX-License-Identifier: MIT
#include <unistd.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <map>
#include <nlohmann/json.hpp>
#include <sstream>

#include <amdqp/amdqp.h>

#include "commands.hpp"
#include "daemon_status.hpp"
#include "exit_status.hpp"
#include "inventory.hpp"
#include "json_util.hpp"
#include "names.hpp"
#include "queue_ref.hpp"
#include "table.hpp"

namespace amdqpctl {

namespace {

namespace fs = std::filesystem;
using json = nlohmann::json;

struct GpuRow {
    std::optional<amdqp::DeviceInfo> amdqp;  // registered with amdqp.ko
    bool kfd = false;                        // in KFD's topology
    std::uint32_t amdqp_slots = 0;           // tagged queues per mechanism
    std::uint32_t coop_slots = 0;

    // What takes this GPU's low-priority queues off: amdqp.ko, or the
    // tagged processes themselves.
    std::string mechanism() const {
        if (amdqp && !(coop_slots && !amdqp_slots))
            return "amdqp";
        return "coop";
    }
};

// gpu_ids of KFD's topology (CPU nodes have gpu_id 0).
std::vector<std::uint32_t> kfd_gpus(const std::string& sys_root) {
    std::vector<std::uint32_t> out;
    std::error_code ec;
    const fs::path nodes = sys_root + "/class/kfd/kfd/topology/nodes";
    for (auto it = fs::directory_iterator(nodes, ec); !ec && it != fs::directory_iterator();
         it.increment(ec)) {
        std::ifstream in(it->path() / "gpu_id");
        std::string line;
        std::getline(in, line);
        if (auto id = parse_u32(line); id && *id)
            out.push_back(*id);
    }
    return out;
}

std::string find_daemon(const std::string& search_path) {
    std::size_t start = 0;
    while (start <= search_path.size()) {
        std::size_t end = search_path.find(':', start);
        if (end == std::string::npos)
            end = search_path.size();
        std::string dir = search_path.substr(start, end - start);
        if (!dir.empty()) {
            std::string p = dir + "/amdqpd";
            if (::access(p.c_str(), X_OK) == 0)
                return p;
        }
        start = end + 1;
    }
    return {};
}

struct DaemonView {
    std::string path;  // the binary: the running one's, else the one found
    DaemonStatus status;

    std::string state() const {
        switch (status.liveness) {
            case DaemonStatus::Liveness::running:
                return "running";
            case DaemonStatus::Liveness::stale:
                return "stale";
            case DaemonStatus::Liveness::unknown:
                return "unknown";
            case DaemonStatus::Liveness::no_file:
                break;
        }
        return path.empty() ? "not installed" : "not running";
    }
};

DaemonView inspect_daemon(const Context& ctx) {
    DaemonView v;
    v.status = read_daemon_status(ctx.runtime_dir.empty() ? amdqp::activity::runtime_dir()
                                                          : ctx.runtime_dir);
    std::error_code ec;
    if (v.status.liveness == DaemonStatus::Liveness::running)
        v.path = fs::read_symlink(ctx.proc_root + "/" + std::to_string(*v.status.pid) + "/exe", ec)
                     .string();
    if (v.path.empty() || ec)
        v.path = find_daemon(ctx.daemon_search_path);
    return v;
}

// A share of a GPU as whole percent ("38 %").
std::string percent(double share) {
    return std::to_string(static_cast<int>(share * 100 + 0.5)) + " %";
}

std::string joined(const std::vector<std::uint32_t>& values) {
    // Appended piece by piece: "," + std::to_string(v) makes GCC 12 warn
    // (-Wrestrict, a false positive in its inlined string insert) at -O2.
    std::string out;
    for (auto v : values) {
        if (!out.empty())
            out += ',';
        out += std::to_string(v);
    }
    return out.empty() ? "-" : out;
}

json daemon_json(const DaemonView& v) {
    const DaemonStatus& st = v.status;
    const bool running = st.liveness == DaemonStatus::Liveness::running;
    json gpus = json::array();
    json groups = json::object();
    json stats = json::object();
    for (const auto& g : st.gpus) {
        json demand = json::object();
        for (const auto& [level, share] : g.auto_demand)
            demand[std::to_string(level)] = share;
        gpus.push_back({{"gpu", g.gpu},
                        {"suspend_level", g.suspend_level},
                        {"confine_level", g.confine_level},
                        {"confine_share", g.confine_share},
                        {"auto_demand", demand},
                        {"queues", g.queues},
                        {"active_queues", g.active_queues}});
    }
    for (const auto& [name, g] : st.groups)
        groups[name] = {{"priority", g.priority}, {"gpus", g.gpus}, {"pids", g.pids}};
    for (const auto& [name, n] : st.stats)
        stats[name] = n;
    return {{"installed", running || !v.path.empty()},
            {"path", or_null(v.path)},
            {"state", v.state()},
            {"pid", or_null(st.pid)},
            {"socket", st.file},
            {"error", or_null(st.problem)},
            {"order", or_null(st.order)},
            {"device_open", st.reported() ? json(st.device_open) : json()},
            {"processes", st.reported() ? json(st.processes) : json()},
            {"gpus", gpus},
            {"groups", groups},
            {"stats", st.reported() ? stats : json()}};
}

// Under the daemon line, two spaces in: the daemon's view, apart from the
// module's device table above it.
void print_indented(std::ostream& out, const Table& table) {
    std::ostringstream text;
    table.print(text);
    std::istringstream lines(text.str());
    for (std::string line; std::getline(lines, line);)
        out << "  " << line << '\n';
}

void print_daemon(std::ostream& out, const DaemonView& v) {
    const DaemonStatus& st = v.status;
    const std::string unreadable = "status unreadable: " + st.problem + " (" + st.file + ")";
    out << "amdqpd: ";
    switch (st.liveness) {
        case DaemonStatus::Liveness::no_file:
            if (v.path.empty())
                out << "not installed\n";
            else
                out << "not running (installed at " << v.path << ")\n";
            return;
        case DaemonStatus::Liveness::stale:
            out << "not running\n";
            return;
        case DaemonStatus::Liveness::unknown:
            out << unreadable << '\n';
            return;
        case DaemonStatus::Liveness::running:
            break;
    }
    out << "running (pid " << *st.pid << ")\n";
    if (!st.reported()) {
        out << "  " << unreadable << '\n';
        return;
    }
    out << "  order: " << st.order << '\n';
    out << "  processes: " << st.processes << " tagged, "
        << (st.device_open ? "/dev/amdqp open" : "no /dev/amdqp (cooperative only)") << '\n';
    std::string stats;
    for (const auto& [name, n] : st.stats)
        stats += (stats.empty() ? "" : ", ") + name + " " + std::to_string(n);
    out << "  stats: " << (stats.empty() ? "none" : stats) << '\n';
    if (st.gpus.empty()) {
        out << "  GPUs: none\n";
    } else {
        // Confinement and adaptive demand get columns only where a GPU
        // has them: most hosts suspend only.
        const bool confine = std::any_of(st.gpus.begin(), st.gpus.end(), [](const auto& g) {
            return g.confine_level > 0 || !g.auto_demand.empty();
        });
        const bool demand = std::any_of(st.gpus.begin(), st.gpus.end(),
                                        [](const auto& g) { return !g.auto_demand.empty(); });
        std::vector<std::string> head{"GPU", "SUSPEND-BELOW", "ACTIVE-QUEUES"};
        if (confine)
            head.emplace_back("CONFINE-BELOW");
        if (demand)
            head.emplace_back("AUTO-DEMAND");
        Table table(head);
        for (const auto& g : st.gpus) {
            std::vector<std::string> row{
                std::to_string(g.gpu), g.suspend_level ? priority_label(g.suspend_level) : "-",
                std::to_string(g.active_queues) + " of " + std::to_string(g.queues)};
            if (confine)
                row.push_back(g.confine_level ? priority_label(g.confine_level) + ", keeps " +
                                                    percent(g.confine_share)
                                              : "-");
            if (demand) {
                std::string d;
                for (const auto& [level, share] : g.auto_demand)
                    d += (d.empty() ? "" : ", ") + priority_label(level) + " " + percent(share);
                row.push_back(d.empty() ? "-" : d);
            }
            table.add(row);
        }
        print_indented(out, table);
    }
    if (st.groups.empty()) {
        out << "  groups: none\n";
    } else {
        Table table({"GROUP", "PRIORITY", "GPUS", "PIDS"});
        for (const auto& [name, g] : st.groups)
            table.add({name, priority_label(g.priority), joined(g.gpus), joined(g.pids)});
        print_indented(out, table);
    }
}

}  // namespace

int cmd_status(Context& ctx, const StatusOptions& opt) {
    Sources src = open_sources(ctx);
    std::optional<amdqp::Version> version;
    std::map<std::uint32_t, GpuRow> gpus;
    if (src.device) {
        version = src.device->version();
        for (const auto& d : src.device->devices())
            gpus[d.gpu_id].amdqp = d;
    }
    for (auto id : kfd_gpus(ctx.sys_root))
        gpus[id].kfd = true;
    std::uint32_t coop_capable = 0;
    for (const auto& t : src.tagged) {
        coop_capable += t.snap.coop_capable();
        for (const auto& s : t.snap.slots) {
            if (!s.gpu_id)
                continue;
            if (s.mechanism == AMDQP_ACT_MECH_AMDQP)
                gpus[s.gpu_id].amdqp_slots++;
            else if (s.mechanism == AMDQP_ACT_MECH_COOP)
                gpus[s.gpu_id].coop_slots++;
        }
    }
    std::error_code ec;
    const bool module_in_kernel = fs::exists(ctx.sys_root + "/module/amdqp", ec);
    const DaemonView daemon = inspect_daemon(ctx);
    const std::string device_problem = src.device_error ? src.device_error->what() : "";

    if (opt.json) {
        json devs = json::array();
        for (const auto& [id, g] : gpus)
            devs.push_back(
                {{"gpu", id},
                 {"in_amdqp", g.amdqp.has_value()},
                 {"kfd", g.kfd},
                 {"backend", g.amdqp ? json(backends_name(g.amdqp->backend)) : json()},
                 {"sched_mode", g.amdqp ? json(sched_mode_name(g.amdqp->sched_mode)) : json()},
                 {"queues", g.amdqp ? json(g.amdqp->num_queues) : json()},
                 {"tagged_queues", g.amdqp_slots + g.coop_slots},
                 {"mechanism", g.mechanism()}});
        json module = {{"available", src.device.has_value()},
                       {"loaded", src.device.has_value() || module_in_kernel},
                       {"device", ctx.device_path},
                       {"error", device_problem.empty() ? json() : json(device_problem)}};
        if (version) {
            module["abi"] = {{"major", version->abi_major}, {"minor", version->abi_minor}};
            module["backends"] = backends_name(version->backends);
            module["max_batch"] = version->max_batch;
        }
        ctx.out << json{{"module", module},
                        {"library_version", amdqp_library_version()},
                        {"devices", devs},
                        {"tagged_processes", src.tagged.size()},
                        {"coop_capable_processes", coop_capable},
                        {"daemon", daemon_json(daemon)}}
                       .dump(2)
                << '\n';
    } else {
        ctx.out << "amdqp module: ";
        if (version)
            ctx.out << "loaded (" << ctx.device_path << ", ABI " << version->abi_major << '.'
                    << version->abi_minor << ", backends " << backends_name(version->backends)
                    << ")\n";
        else
            ctx.out << (module_in_kernel ? "loaded, but unusable: " : "not available: ")
                    << device_problem << '\n';
        ctx.out << "libamdqp: " << amdqp_library_version() << '\n';
        if (gpus.empty()) {
            ctx.out << "devices: none\n";
        } else {
            Table table({"GPU", "BACKEND", "SCHED", "QUEUES", "TAGGED", "MECHANISM"});
            for (const auto& [id, g] : gpus)
                table.add({std::to_string(id), g.amdqp ? backends_name(g.amdqp->backend) : "-",
                           g.amdqp ? sched_mode_name(g.amdqp->sched_mode) : "-",
                           g.amdqp ? std::to_string(g.amdqp->num_queues) : "-",
                           std::to_string(g.amdqp_slots + g.coop_slots),
                           g.mechanism() == "amdqp" ? "amdqp" : "coop (cooperative fallback)"});
            table.print(ctx.out);
        }
        ctx.out << "tagged processes: " << src.tagged.size() << " (" << coop_capable
                << " can suspend cooperatively)\n";
        print_daemon(ctx.out, daemon);
    }
    // Like systemctl status: the report always, and a status scripts can test.
    if (!src.device)
        return src.device_error ? exit_status_for(src.device_error->code()) : exit_unavailable;
    return exit_ok;
}

}  // namespace amdqpctl
