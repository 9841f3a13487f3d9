// SPDX-License-Identifier: MIT
#include "evaluate.hpp"

#include <iomanip>
#include <sstream>
#include <stdexcept>

#include "simulator.hpp"

namespace amdqp::sim {

Evaluation evaluate(const Scenario& sc) {
    Evaluation e;
    e.contended = simulate(sc);
    for (std::size_t i = 0; i < sc.workloads.size(); ++i) {
        Scenario alone = sc;
        alone.workloads = {sc.workloads[i]};
        alone.daemon.enabled = false;
        const auto r = simulate(alone);
        const auto& a = r.workloads.front();
        const auto& c = e.contended.workloads[i];
        WorkloadEval w;
        w.name = c.name;
        w.priority = c.priority;
        w.open_loop = c.open_loop;
        w.alone = a.latency;
        w.contended = c.latency;
        w.it_alone = a.it_per_s;
        w.it_contended = c.it_per_s;
        e.workloads.push_back(w);
    }
    return e;
}

namespace {
nlohmann::json lat_json(const LatencyStats& s) {
    return {{"p50", s.p50}, {"p95", s.p95},   {"p99", s.p99},
            {"max", s.max}, {"mean", s.mean}, {"n", s.n}};
}
}  // namespace

nlohmann::json to_json(const Evaluation& e) {
    nlohmann::json j;
    j["workloads"] = nlohmann::json::array();
    for (const auto& w : e.workloads) {
        nlohmann::json x{{"name", w.name}, {"priority", w.priority}};
        if (w.open_loop) {
            x["latency_ms_alone"] = lat_json(w.alone);
            x["latency_ms_contended"] = lat_json(w.contended);
            x["p99_ratio"] = w.ratio();
        } else {
            x["it_per_s_alone"] = w.it_alone;
            x["it_per_s_contended"] = w.it_contended;
            x["loss_pct"] = w.loss_pct();
        }
        j["workloads"].push_back(x);
    }
    const auto& c = e.contended;
    j["policy"] = {{"suspend_calls", c.suspend_calls},
                   {"resume_calls", c.resume_calls},
                   {"confine_calls", c.confine_calls},
                   {"unconfine_calls", c.unconfine_calls},
                   {"device_updates", c.device_updates},
                   {"relapses", c.relapses},
                   {"starvation_hits", c.starvation_hits},
                   {"update_stall_ms", static_cast<double>(c.stall_ns) / 1e6}};
    return j;
}

std::string to_text(const Evaluation& e) {
    std::ostringstream o;
    o << std::fixed << std::setprecision(2);
    for (const auto& w : e.workloads) {
        if (w.open_loop) {
            o << w.name << " (prio " << w.priority << ") latency ms: alone P50 " << w.alone.p50
              << " P99 " << w.alone.p99 << " | contended P50 " << w.contended.p50 << " P95 "
              << w.contended.p95 << " P99 " << w.contended.p99 << " max " << w.contended.max << " ("
              << w.ratio() << "x alone P99, n=" << w.contended.n << ")\n";
        } else {
            o << w.name << " (prio " << w.priority << ") throughput it/s: alone " << w.it_alone
              << " | contended " << w.it_contended << " (loss " << w.loss_pct() << " %)\n";
        }
    }
    const auto& c = e.contended;
    o << "policy: " << c.suspend_calls << " suspend calls, " << c.resume_calls << " resume calls, "
      << c.confine_calls << " confine calls, " << c.unconfine_calls << " unconfine calls, "
      << c.device_updates << " device updates (" << static_cast<double>(c.stall_ns) / 1e6
      << " ms device stall), " << c.relapses << " relapses, " << c.starvation_hits
      << " starvation hits\n";
    return o.str();
}

std::string_view to_string(Layout l) {
    switch (l) {
        case Layout::kShared:
            return "shared";
        case Layout::kCuMask:
            return "cu-mask";
        case Layout::kCpx:
            return "cpx";
    }
    return "?";
}

Layout parse_layout(std::string_view s) {
    if (s == "shared" || s == "spx")
        return Layout::kShared;
    if (s == "cu-mask")
        return Layout::kCuMask;
    if (s == "cpx")
        return Layout::kCpx;
    throw std::invalid_argument("layout must be shared, cu-mask or cpx, not '" + std::string(s) +
                                "'");
}

Scenario build(const DualModel& m) {
    Scenario sc;
    sc.duration = m.duration;
    sc.warmup = m.warmup;
    sc.daemon = m.daemon;
    WorkloadSpec hp;
    hp.name = "hp";
    hp.priority = 12;
    hp.ranks = {m.hp};
    hp.rate_per_s = m.hp_rate;
    hp.first_arrival = m.hp_first_arrival;
    hp.occupancy = m.hp_occupancy;
    hp.host_overhead = m.hp_host_overhead;
    WorkloadSpec lp;
    lp.name = "lp";
    lp.priority = 2;
    lp.ranks = {m.lp};
    lp.occupancy = m.lp_occupancy;
    switch (m.layout) {
        case Layout::kShared:
            sc.devices[0] = m.device;
            sc.workloads = {hp, lp};
            break;
        case Layout::kCuMask:
            if (m.hp_cu_fraction <= 0 || m.hp_cu_fraction >= 1)
                throw std::invalid_argument("hp_cu_fraction must be in (0, 1)");
            sc.devices[0] = m.device;
            hp.cu_fraction = m.hp_cu_fraction;
            lp.cu_fraction = 1.0 - m.hp_cu_fraction;
            sc.workloads = {hp, lp};
            break;
        case Layout::kCpx: {
            if (m.partitions < 2 || m.lp_partitions < 1 || m.lp_partitions >= m.partitions)
                throw std::invalid_argument(
                    "CPX needs partitions >= 2 and 1 <= lp_partitions < them");
            auto part = m.device;
            part.compute_fraction = m.device.compute_fraction / m.partitions;
            sc.devices[0] = part;
            hp.gpus = {0};
            sc.workloads = {hp};
            for (int p = 0; p < m.lp_partitions; ++p) {
                const auto id = static_cast<std::uint32_t>(p + 1);
                sc.devices[id] = part;
                auto l = lp;
                l.gpus = {id};
                if (m.lp_partitions > 1)
                    l.name = "lp" + std::to_string(p);
                sc.workloads.push_back(l);
            }
            break;
        }
    }
    return sc;
}

double lp_throughput(const RunResult& r) {
    double sum = 0;
    for (const auto& w : r.workloads) {
        if (!w.open_loop)
            sum += w.it_per_s;
    }
    return sum;
}

const WorkloadResult& hp_result(const RunResult& r) {
    for (const auto& w : r.workloads) {
        if (w.open_loop)
            return w;
    }
    throw std::invalid_argument("no open-loop (high-priority) workload");
}

}  // namespace amdqp::sim
