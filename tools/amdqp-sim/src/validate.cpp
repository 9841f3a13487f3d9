// SPDX-License-Identifier: MIT
#include "validate.hpp"

#include <algorithm>
#include <cctype>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <iomanip>
#include <sstream>
#include <stdexcept>

#include "simulator.hpp"
#include "timeline_json.hpp"

namespace amdqp::sim {
namespace {

std::string squash(std::string s) {
    std::string o;
    for (char c : s) {
        if (std::isalnum(static_cast<unsigned char>(c)))
            o.push_back(static_cast<char>(std::tolower(static_cast<unsigned char>(c))));
    }
    return o;
}

std::optional<double> num(const nlohmann::json& j, const char* key) {
    if (j.contains(key) && j.at(key).is_number())
        return j.at(key).get<double>();
    return std::nullopt;
}

// The timeline in @dir of @task (model name inside the workload name,
// same batch); the one of the task's role as a fallback.
Timeline find_timeline(const std::vector<std::pair<std::string, Timeline>>& all,
                       const nlohmann::json& task, bool hp, const std::string& what) {
    const auto model = squash(task.value("model", std::string{}));
    const int batch = task.value("batch", -1);
    for (const auto& [path, t] : all) {
        if (!model.empty() && squash(t.workload).find(model) != std::string::npos &&
            (batch < 0 || t.batch == batch))
            return t;
    }
    for (const auto& [path, t] : all) {
        if (model.empty() && (t.period_s > 0) == hp)
            return t;
    }
    throw std::runtime_error(what + ": no timeline for " + (hp ? "HP" : "LP") + " task '" +
                             task.value("model", std::string{}) + "' batch " +
                             std::to_string(batch));
}

}  // namespace

Case load_case(const std::string& result_path, const std::string& timelines_dir) {
    std::ifstream f(result_path);
    if (!f)
        throw std::runtime_error(result_path + ": cannot open");
    const auto j = nlohmann::json::parse(f);
    Case c;
    c.name = std::filesystem::path(result_path).stem().string();
    c.device = j.value("device", std::string{});
    if (j.value("experiment", std::string{}) != "dual_model")
        throw std::runtime_error(result_path + ": only dual_model results are simulated");
    const auto& sum = j.at("summary");
    c.hp_p99_alone = sum.at("hp_p99_alone_ms").get<double>();
    c.hp_p99_contended = sum.at("hp_p99_contended_ms").get<double>();
    c.lp_alone = num(sum, "lp_it_per_s_alone");
    c.lp_contended = num(sum, "lp_it_per_s_contended");

    std::vector<std::pair<std::string, Timeline>> all;
    for (const auto& e : std::filesystem::directory_iterator(timelines_dir)) {
        if (e.path().extension() != ".json")
            continue;
        try {
            all.emplace_back(e.path().string(), load_timeline_json(e.path().string()));
        } catch (const std::exception&) {
            // Not a timeline (a README, a result): skipped.
        }
    }
    std::sort(all.begin(), all.end(),
              [](const auto& a, const auto& b) { return a.first < b.first; });
    if (all.empty())
        throw std::runtime_error(timelines_dir + ": no kernel timeline");
    const auto& tasks = j.at("phases").at("contended").at("tasks");
    bool have_hp = false, have_lp = false;
    for (const auto& [name, t] : tasks.items()) {
        const auto role = t.value("role", std::string{});
        if (role == "hp") {
            c.hp = find_timeline(all, t, true, result_path);
            c.hp_rate = t.value("rate_per_s", c.hp_rate);
            if (t.contains("latency_ms") && t.at("latency_ms").contains("p50"))
                c.hp_p50_contended = t.at("latency_ms").at("p50").get<double>();
            have_hp = true;
        } else if (role == "lp") {
            c.lp = find_timeline(all, t, false, result_path);
            have_lp = true;
        }
    }
    if (!have_hp || !have_lp)
        throw std::runtime_error(result_path + ": the contended phase needs an hp and an lp task");
    return c;
}

DualModel case_model(const Case& c, const CaseSetup& s, double* lp_scale, bool* fitted) {
    DualModel m;
    m.hp = fit_to_wall(c.hp);
    m.lp = fit_to_wall(c.lp);
    m.hp_rate = c.hp_rate;
    m.hp_occupancy = s.hp_occupancy;
    m.lp_occupancy = s.lp_occupancy;
    m.device = s.device;
    m.daemon.enabled = false;  // native runs: no amdqpd
    m.duration = s.duration;
    // A trace from another GPU: stretch LP kernels to the measured LP
    // throughput (alone if measured, else contended).
    *lp_scale = 1.0;
    *fitted = false;
    const auto target = c.lp_alone ? c.lp_alone : c.lp_contended;
    if (target && *target > 0 && !c.lp.device.empty() && c.lp.device != c.device) {
        Scenario sc = build(m);
        sc.workloads = {sc.workloads.back()};
        const double its = simulate(sc).workloads.front().it_per_s;
        *lp_scale = its / *target;
        *fitted = true;
        m.lp = scale_durations(c.lp, *lp_scale);
    }
    return m;
}

Prediction predict(const Case& c, const CaseSetup& s) {
    Prediction p;
    p.name = c.name;
    auto m = case_model(c, s, &p.lp_scale, &p.lp_scale_fitted);
    const auto e = evaluate(build(m));
    const auto& hp = e.workloads.front();
    const auto& lp = e.workloads.back();
    // The timeline is the GPU side of a request; what the measured
    // latency adds (Python, the first launch, the final synchronize, the
    // profiler's own inflation) comes from the measured alone P99.
    p.host_overhead_ms = c.hp_p99_alone - hp.alone.p99;
    p.measured_p99 = c.hp_p99_contended;
    p.predicted_p99 = hp.contended.p99 + p.host_overhead_ms;
    p.error_pct = 100.0 * std::abs(p.predicted_p99 - p.measured_p99) / p.measured_p99;
    if (c.hp_p50_contended) {
        p.measured_p50 = *c.hp_p50_contended;
        p.predicted_p50 = hp.contended.p50 + p.host_overhead_ms;
        p.p50_error_pct = 100.0 * std::abs(*p.predicted_p50 - *p.measured_p50) / *p.measured_p50;
    }
    if (c.lp_contended && !p.lp_scale_fitted && c.lp_alone) {
        p.measured_lp = *c.lp_contended;
        p.predicted_lp = *c.lp_alone * (lp.it_alone > 0 ? lp.it_contended / lp.it_alone : 0.0);
        p.lp_error_pct = 100.0 * std::abs(*p.predicted_lp - *p.measured_lp) / *p.measured_lp;
    }
    return p;
}

Knob default_knob(DeviceKind k) {
    return k == DeviceKind::kTimeslice ? Knob::kSliceUs : Knob::kCorunRate;
}

std::string_view to_string(Knob k) {
    return k == Knob::kSliceUs ? "slice_us" : "corun_rate";
}

double calibrate(const Case& c, CaseSetup& s, Knob knob) {
    // Bisection in log space; P99 grows with the slice, falls with the rate.
    double lo = knob == Knob::kSliceUs ? 10.0 : 0.002;
    double hi = knob == Knob::kSliceUs ? 50000.0 : 1.0;
    auto set = [&](double v) {
        if (knob == Knob::kSliceUs)
            s.device.ts.slice = static_cast<Ns>(std::llround(v * 1e3));
        else
            s.device.hws.corun_rate = v;
    };
    for (int i = 0; i < 24; ++i) {
        const double mid = std::sqrt(lo * hi);
        set(mid);
        const double pred = predict(c, s).predicted_p99;
        const bool too_high = pred > c.hp_p99_contended;
        if ((knob == Knob::kSliceUs) == too_high)
            hi = mid;
        else
            lo = mid;
    }
    const double v = std::sqrt(lo * hi);
    set(v);
    return v;
}

std::string format_prediction(const Prediction& p) {
    std::ostringstream o;
    o << std::fixed << std::setprecision(2);
    o << p.name << ": HP P99 measured " << p.measured_p99 << " ms, predicted " << p.predicted_p99
      << " ms (host offset " << p.host_overhead_ms << " ms";
    if (p.lp_scale_fitted)
        o << ", LP durations x" << p.lp_scale << " fitted to the measured LP throughput";
    o << ")\n";
    if (p.calibration)
        o << "  calibration case: HP P99 fitted, error " << p.error_pct
          << " % (not a validation)\n";
    else
        o << "  validation error: " << std::setprecision(1) << p.error_pct << " %\n";
    o << std::setprecision(2);
    if (p.p50_error_pct)
        o << "  HP P50 measured " << *p.measured_p50 << " ms, predicted " << *p.predicted_p50
          << " ms: validation error (P50): " << std::setprecision(1) << *p.p50_error_pct << " %\n"
          << std::setprecision(2);
    if (p.lp_error_pct)
        o << "  LP it/s measured " << *p.measured_lp << ", predicted " << *p.predicted_lp
          << ": validation error (LP throughput): " << std::setprecision(1) << *p.lp_error_pct
          << " %\n";
    return o.str();
}

nlohmann::json to_json(const Prediction& p) {
    nlohmann::json j{{"case", p.name},
                     {"hp_p99_measured_ms", p.measured_p99},
                     {"hp_p99_predicted_ms", p.predicted_p99},
                     {"hp_p99_error_pct", p.error_pct},
                     {"calibration_case", p.calibration},
                     {"host_offset_ms", p.host_overhead_ms},
                     {"lp_scale", p.lp_scale},
                     {"lp_scale_fitted", p.lp_scale_fitted}};
    if (p.p50_error_pct) {
        j["hp_p50_measured_ms"] = *p.measured_p50;
        j["hp_p50_predicted_ms"] = *p.predicted_p50;
        j["hp_p50_error_pct"] = *p.p50_error_pct;
    }
    if (p.lp_error_pct) {
        j["lp_it_per_s_measured"] = *p.measured_lp;
        j["lp_it_per_s_predicted"] = *p.predicted_lp;
        j["lp_error_pct"] = *p.lp_error_pct;
    }
    return j;
}

}  // namespace amdqp::sim
