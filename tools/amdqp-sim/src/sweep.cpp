// SPDX-License-Identifier: MIT
#include "sweep.hpp"

#include <cmath>
#include <iomanip>
#include <sstream>

#include "simulator.hpp"
#include "timeline_json.hpp"

namespace amdqp::sim {

Timeline with_collectives(const Timeline& t, std::size_t every, Ns dur) {
    Timeline out = t;
    for (auto& r : out.requests) {
        std::vector<Kernel> ks;
        for (std::size_t i = 0; i < r.kernels.size(); ++i) {
            ks.push_back(r.kernels[i]);
            if ((i + 1) % every == 0 || i + 1 == r.kernels.size()) {
                const auto& k = r.kernels[i];
                ks.push_back({k.start + k.dur, dur, KernelClass::kNccl});
            }
        }
        r.kernels = std::move(ks);
    }
    return out;
}

namespace {

struct Point {
    std::string approach;
    nlohmann::json params;
    double hp_p99 = 0, lp = 0;
    std::uint64_t suspends = 0, confines = 0, updates = 0;
};

std::vector<double> costs(const SweepOptions& o) {
    std::vector<double> v;
    for (int i = 0; i < o.points; ++i) {
        const double f = o.points > 1 ? static_cast<double>(i) / (o.points - 1) : 0.0;
        const double x = o.min_cost_us * std::pow(o.max_cost_us / o.min_cost_us, f);
        v.push_back(std::round(x * 10.0) / 10.0);
    }
    return v;
}

void set_costs(DeviceParams& d, double us, CostVary vary) {
    const Ns x = static_cast<Ns>(std::llround(us * 1e3));
    if (vary != CostVary::kCwsr) {
        d.hws.unmap = x;
        d.hws.map = x;
    }
    if (vary != CostVary::kUnmap) {
        d.hws.cwsr_save_full = x;
        d.hws.cwsr_restore_full = x;
    }
}

}  // namespace

nlohmann::json sweep(const SweepOptions& o) {
    const Case c = load_case(o.calibration_result, o.timelines_dir);
    CaseSetup setup;
    setup.device.kind = DeviceKind::kHws;
    setup.hp_occupancy = o.hp_occupancy;
    setup.duration = o.duration;
    nlohmann::json out;
    if (o.corun_rate) {
        setup.device.hws.corun_rate = *o.corun_rate;
    } else {
        const double v = calibrate(c, setup, Knob::kCorunRate);
        out["calibration"] = {{"knob", "corun_rate"}, {"value", v}, {"case", c.name}};
    }
    const Prediction native = predict(c, setup);
    out["calibration_check"] = to_json(native);
    double lp_scale = 1;
    bool fitted = false;
    DualModel base = case_model(c, setup, &lp_scale, &fitted);
    base.hp_host_overhead = static_cast<Ns>(std::llround(native.host_overhead_ms * 1e6));

    // References: HP and LP each alone on the whole (SPX) device.
    const auto ref = evaluate(build(base));
    const double iso = ref.workloads.front().alone.p99;
    const double lp_alone = ref.workloads.back().it_alone;
    out["isolated_hp_p99_ms"] = iso;
    out["lp_alone_it_per_s"] = lp_alone;
    out["assumptions"] = {
        {"timelines", "H200 shapes; LP durations x" + std::to_string(lp_scale) +
                          " fitted to the MI308X LP throughput; HP kernels unscaled"},
        {"hp_occupancy", o.hp_occupancy},
        {"lp_occupancy", 1.0},
        {"cost_point",
         o.vary == CostVary::kBoth    ? "unmap = map = CWSR save = restore (full device) = X"
         : o.vary == CostVary::kUnmap ? "unmap = map = X, CWSR defaults"
                                      : "CWSR save = restore = X, unmap/map defaults"}};

    std::vector<Point> pts;
    auto run = [&](const std::string& approach, const DualModel& m, nlohmann::json params) {
        const auto r = simulate(build(m));
        Point p;
        p.approach = approach;
        p.params = std::move(params);
        p.hp_p99 = hp_result(r).latency.p99;
        p.lp = lp_throughput(r);
        p.suspends = r.suspend_calls;
        p.confines = r.confine_calls;
        p.updates = r.device_updates;
        pts.push_back(p);
    };
    {
        auto m = base;
        m.daemon.enabled = false;
        run("native", m, nlohmann::json::object());
    }
    for (double x : costs(o)) {
        for (auto kind : {DeviceKind::kHws, DeviceKind::kMes}) {
            for (auto order :
                 {policy::SuspendOrder::kBeforeDoorbell, policy::SuspendOrder::kAfterDoorbell}) {
                auto m = base;
                m.device.kind = kind;
                set_costs(m.device, x, o.vary);
                m.daemon.enabled = true;
                m.daemon.policy.order = order;
                run(std::string("amdqpd-") + std::string(to_string(kind)) + "-" +
                        std::string(policy::to_string(order)),
                    m, {{"cost_us", x}});
            }
        }
    }
    // Confinement (issue 27): the high level's demand is the share its
    // kernels fill (hp_occupancy); the LP queue keeps the rest while HP
    // work runs. Only HWS, the MI308X's scheduler.
    for (double x : costs(o)) {
        auto m = base;
        set_costs(m.device, x, o.vary);
        m.daemon.enabled = true;
        m.daemon.policy.cu_demand[12] = o.hp_occupancy;
        run("amdqpd-hws-confine", m, {{"cost_us", x}, {"cu_demand", o.hp_occupancy}});
    }
    for (double frac : {0.05, 0.1, 0.2, 0.25, 0.5}) {
        auto m = base;
        m.daemon.enabled = false;
        m.layout = Layout::kCuMask;
        m.hp_cu_fraction = frac;
        run("cu-mask", m, {{"hp_cu_fraction", frac}});
    }
    for (int lpp : {1, 3}) {
        auto m = base;
        m.daemon.enabled = false;
        m.layout = Layout::kCpx;
        m.partitions = 4;
        m.lp_partitions = lpp;
        run("cpx", m, {{"partitions", 4}, {"lp_partitions", lpp}});
    }

    nlohmann::json arr = nlohmann::json::array();
    for (const auto& p : pts) {
        arr.push_back({{"approach", p.approach},
                       {"params", p.params},
                       {"hp_p99_ms", p.hp_p99},
                       {"p99_ratio", p.hp_p99 / iso},
                       {"lp_it_per_s", p.lp},
                       {"lp_kept", p.lp / lp_alone},
                       {"suspend_calls", p.suspends},
                       {"confine_calls", p.confines},
                       {"device_updates", p.updates},
                       {"goal_10ms", p.hp_p99 < o.goal_ms},
                       {"goal_ratio", p.hp_p99 <= o.goal_ratio * iso}});
    }
    out["points"] = arr;

    // Where the goals hold along each amdqpd series, and the best LP
    // throughput each approach keeps while meeting a given HP P99.
    nlohmann::json goals = nlohmann::json::object();
    for (const auto& p : pts) {
        if (!p.params.contains("cost_us"))
            continue;
        auto& g = goals[p.approach];
        const double x = p.params.at("cost_us").get<double>();
        for (const auto& [key, ok] :
             {std::pair{"10ms_holds_up_to_cost_us", p.hp_p99 < o.goal_ms},
              std::pair{"ratio_holds_up_to_cost_us", p.hp_p99 <= o.goal_ratio * iso}}) {
            if (!g.contains(key))
                g[key] = nullptr;
            if (ok && (g[key].is_null() || g[key].get<double>() < x))
                g[key] = x;
        }
    }
    out["goals"] = goals;
    nlohmann::json eq = nlohmann::json::object();
    for (const auto& [label, target] :
         {std::pair{std::string("hp_p99_below_10ms"), o.goal_ms},
          std::pair{std::string("hp_p99_within_ratio"), o.goal_ratio * iso},
          std::pair{std::string("hp_p99_within_1.3x"), 1.3 * iso}}) {
        nlohmann::json best = nlohmann::json::object();
        for (const auto& p : pts) {
            const auto& fam = p.approach;
            if (p.hp_p99 > target)
                continue;
            if (!best.contains(fam) || best[fam]["lp_kept"].get<double>() < p.lp / lp_alone)
                best[fam] = {
                    {"lp_kept", p.lp / lp_alone}, {"hp_p99_ms", p.hp_p99}, {"params", p.params}};
        }
        eq[label] = {{"target_ms", target}, {"best_per_approach", best}};
    }
    out["equal_hp_p99"] = eq;
    if (!o.decode_timeline.empty())
        out["decode"] = decode_case(o, base);

    // Tensor parallelism: an HP TP job and an LP TP job on the same N GPUs.
    {
        Scenario sc;
        sc.duration = o.duration;
        DeviceParams d = base.device;
        set_costs(d, o.tp_cost_us, CostVary::kBoth);
        WorkloadSpec hp, lp;
        hp.name = "hp-tp";
        hp.priority = 12;
        hp.ranks = {with_collectives(base.hp, 20, 15 * kUs)};
        hp.rate_per_s = base.hp_rate;
        hp.first_arrival = base.hp_first_arrival;
        hp.occupancy = o.hp_occupancy;
        hp.host_overhead = base.hp_host_overhead;
        lp.name = "lp-tp";
        lp.priority = 2;
        lp.ranks = {with_collectives(base.lp, 20, 100 * kUs)};
        for (int g = 0; g < o.tp; ++g) {
            sc.devices[static_cast<std::uint32_t>(g)] = d;
            hp.gpus.push_back(static_cast<std::uint32_t>(g));
            lp.gpus.push_back(static_cast<std::uint32_t>(g));
        }
        sc.workloads = {hp, lp};
        nlohmann::json tp = {{"gpus", o.tp}, {"cost_us", o.tp_cost_us}};
        for (const auto& [label, enabled, split] :
             {std::tuple{"native", false, false}, std::tuple{"one_call", true, false},
              std::tuple{"n_calls", true, true}}) {
            auto s = sc;
            s.daemon.enabled = enabled;
            s.daemon.split_calls = split;
            const auto r = simulate(s);
            tp[label] = {{"hp_p99_ms", hp_result(r).latency.p99},
                         {"lp_it_per_s", lp_throughput(r)},
                         {"suspend_calls", r.suspend_calls},
                         {"device_updates", r.device_updates}};
        }
        out["tp"] = tp;
    }
    return out;
}

nlohmann::json decode_case(const SweepOptions& o, const DualModel& base) {
    DualModel m0 = base;
    m0.hp = load_timeline_json(o.decode_timeline);
    m0.hp_rate = o.decode_rate;
    m0.hp_host_overhead = 0;  // test 4's fitted offset is ResNet-18's
    const auto ref = evaluate(build(m0));
    const double iso = ref.workloads.front().alone.p99;
    const double lp_alone = ref.workloads.back().it_alone;
    nlohmann::json pts = nlohmann::json::array();
    auto run = [&](const std::string& approach, const DualModel& m, nlohmann::json params) {
        const auto r = simulate(build(m));
        const double p99 = hp_result(r).latency.p99;
        pts.push_back({{"approach", approach},
                       {"params", std::move(params)},
                       {"hp_p99_ms", p99},
                       {"p99_ratio", p99 / iso},
                       {"lp_kept", lp_throughput(r) / lp_alone},
                       {"suspend_calls", r.suspend_calls},
                       {"confine_calls", r.confine_calls},
                       {"device_updates", r.device_updates}});
    };
    {
        auto m = m0;
        m.daemon.enabled = false;
        run("native", m, nlohmann::json::object());
    }
    for (double x : o.decode_costs_us) {
        auto m = m0;
        set_costs(m.device, x, CostVary::kBoth);
        m.daemon.enabled = true;
        run("amdqpd-hws-suspend", m, {{"cost_us", x}});
        m.daemon.policy.cu_demand[12] = o.hp_occupancy;
        run("amdqpd-hws-confine", m, {{"cost_us", x}, {"cu_demand", o.hp_occupancy}});
    }
    for (double frac : {0.1, 0.25}) {
        auto m = m0;
        m.daemon.enabled = false;
        m.layout = Layout::kCuMask;
        m.hp_cu_fraction = frac;
        run("cu-mask", m, {{"hp_cu_fraction", frac}});
    }
    for (int lpp : {1, 3}) {
        auto m = m0;
        m.daemon.enabled = false;
        m.layout = Layout::kCpx;
        m.lp_partitions = lpp;
        run("cpx", m, {{"partitions", m.partitions}, {"lp_partitions", lpp}});
    }
    return {{"workload", m0.hp.workload},
            {"rate_per_s", o.decode_rate},
            {"kernels_per_step", m0.hp.requests.empty() ? 0 : m0.hp.requests[0].kernels.size()},
            {"isolated_hp_p99_ms", iso},
            {"lp_alone_it_per_s", lp_alone},
            {"hp_occupancy", o.hp_occupancy},
            {"assumptions",
             "H200 decode-step shapes unscaled (launch-bound: its ~1 us kernels are assumed "
             "to take as long on an MI308X); the LP job and the device as in test 4's fit; "
             "cost = unmap = map = CWSR save = restore (full device)"},
            {"points", pts}};
}

std::string sweep_text(const nlohmann::json& j) {
    std::ostringstream o;
    o << std::fixed << std::setprecision(2);
    if (j.contains("calibration"))
        o << "calibration: " << j["calibration"]["knob"].get<std::string>() << " = "
          << std::setprecision(4) << j["calibration"]["value"].get<double>() << std::setprecision(2)
          << " (fitted on " << j["calibration"]["case"].get<std::string>() << " HP P99)\n";
    o << "isolated HP P99 " << j["isolated_hp_p99_ms"].get<double>() << " ms, LP alone "
      << j["lp_alone_it_per_s"].get<double>() << " it/s\n";
    o << std::left << std::setw(34) << "approach" << std::setw(26) << "params" << std::right
      << std::setw(10) << "HP P99" << std::setw(8) << "ratio" << std::setw(9) << "LP kept"
      << std::setw(10) << "updates\n";
    for (const auto& p : j["points"]) {
        o << std::left << std::setw(34) << p["approach"].get<std::string>() << std::setw(26)
          << p["params"].dump() << std::right << std::setw(10) << p["hp_p99_ms"].get<double>()
          << std::setw(8) << p["p99_ratio"].get<double>() << std::setw(8)
          << 100 * p["lp_kept"].get<double>() << "%" << std::setw(9)
          << p["device_updates"].get<std::uint64_t>() << "\n";
    }
    o << "goals along the amdqpd cost sweep: " << j["goals"].dump() << "\n";
    o << "best LP kept at equal HP P99: " << j["equal_hp_p99"].dump() << "\n";
    o << "tensor parallel: " << j["tp"].dump() << "\n";
    if (j.contains("decode"))
        o << "decode (" << j["decode"]["workload"].get<std::string>()
          << "): " << j["decode"]["points"].dump() << "\n";
    return o.str();
}

}  // namespace amdqp::sim
