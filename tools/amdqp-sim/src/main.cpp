// SPDX-License-Identifier: MIT
// amdqp-sim: command line of the trace-driven GPU simulator.
#include <CLI/CLI.hpp>
#include <algorithm>
#include <iomanip>
#include <iostream>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>

#include "evaluate.hpp"
#include "scenario_file.hpp"
#include "sweep.hpp"
#include "timeline_json.hpp"
#include "validate.hpp"

namespace sim = amdqp::sim;

namespace {

// Options shared by run, validate and sweep: the device and the daemon.
struct DeviceOpts {
    std::string model = "hws";
    double slice_us = -1, switch_us = -1, dry_hold_us = -1, corun_rate = -1;
    double unmap_us = -1, map_us = -1, save_us = -1, restore_us = -1;
    bool no_yield = false;

    void add(CLI::App& app) {
        app.add_option("--model", model, "device model: timeslice | hws | mes")
            ->check(CLI::IsMember({"timeslice", "hws", "mes"}))
            ->capture_default_str();
        app.add_option("--slice-us", slice_us, "timeslice: time slice length (us)");
        app.add_option("--switch-us", switch_us, "timeslice: context switch cost (us)");
        app.add_option("--dry-hold-us", dry_hold_us,
                       "timeslice: how long a context that ran dry keeps the GPU (us)");
        app.add_flag("--no-yield", no_yield,
                     "timeslice: a context that runs dry keeps the GPU until its slice ends");
        app.add_option("--corun-rate", corun_rate,
                       "hws/mes: speed of a small kernel next to one filling the device (0..1)");
        app.add_option("--unmap-us", unmap_us, "hws/mes: unmap cost (us)");
        app.add_option("--map-us", map_us, "hws/mes: map cost (us)");
        app.add_option("--cwsr-save-us", save_us, "hws/mes: CWSR save of a full device (us)");
        app.add_option("--cwsr-restore-us", restore_us,
                       "hws/mes: CWSR restore of a full device (us)");
    }
    sim::DeviceParams params() const {
        nlohmann::json j{{"model", model}, {"yield", !no_yield}};
        auto put = [&](const char* k, double v) {
            if (v >= 0)
                j[k] = v;
        };
        put("slice_us", slice_us);
        put("switch_us", switch_us);
        put("dry_hold_us", dry_hold_us);
        put("corun_rate", corun_rate);
        put("unmap_us", unmap_us);
        put("map_us", map_us);
        put("cwsr_save_us", save_us);
        put("cwsr_restore_us", restore_us);
        sim::DeviceParams d;
        sim::apply_device_keys(j, d);
        return d;
    }
};

struct DaemonOpts {
    std::string policy = "on";
    std::string order = "before-doorbell";
    double poll_us = 250, wake_us = 50, hold_us = 2000, hyst_min_us = -1;
    bool split = false;
    std::vector<std::string> cu_demand;

    void add(CLI::App& app) {
        app.add_option("--policy", policy, "run amdqpd's policy in the contended phase: on | off")
            ->check(CLI::IsMember({"on", "off"}))
            ->capture_default_str();
        app.add_option("--order", order, "suspend before or after the high-priority doorbell")
            ->check(CLI::IsMember({"before-doorbell", "after-doorbell"}))
            ->capture_default_str();
        app.add_option("--poll-us", poll_us, "daemon poll interval while holding (us)")
            ->capture_default_str();
        app.add_option("--wake-us", wake_us, "doorbell to daemon step latency (us)")
            ->capture_default_str();
        app.add_option("--hold-timeout-us", hold_us, "longest a held doorbell waits (us)")
            ->capture_default_str();
        app.add_option("--hysteresis-min-us", hyst_min_us, "policy hysteresis floor (us)");
        app.add_flag("--split-calls", split, "one ioctl per GPU instead of one for all");
        app.add_option("--cu-demand", cu_demand,
                       "LEVEL=SHARE (repeatable): the share of a GPU a level's active work "
                       "needs; lower queues are confined to the rest instead of suspended "
                       "(amdqpd.conf's [policy] cu_demand), e.g. high=0.25");
    }
    sim::DaemonParams params() const {
        nlohmann::json j{{"enabled", policy == "on"},   {"order", order},
                         {"poll_interval_us", poll_us}, {"wake_latency_us", wake_us},
                         {"hold_timeout_us", hold_us},  {"split_calls", split}};
        for (const auto& kv : cu_demand) {
            const auto eq = kv.find('=');
            if (eq == std::string::npos)
                throw CLI::ValidationError("--cu-demand", "'" + kv + "' is not LEVEL=SHARE");
            double share = -1;
            try {
                share = std::stod(kv.substr(eq + 1));
            } catch (const std::exception&) {
                throw CLI::ValidationError("--cu-demand", "'" + kv + "': SHARE is not a number");
            }
            j["cu_demand"][kv.substr(0, eq)] = share;
        }
        if (hyst_min_us >= 0) {
            j["hysteresis_min_us"] = hyst_min_us;
            j["hysteresis_initial_us"] = hyst_min_us;
        }
        sim::DaemonParams d;
        sim::apply_daemon_keys(j, d);
        return d;
    }
};

struct RunOpts {
    std::string scenario;
    std::string hp_timeline, lp_timeline;
    double hp_rate = 20, hp_occ = 0.1, lp_occ = 1.0, hp_scale = 1.0, lp_scale = 1.0;
    double hp_host_us = 0;
    std::string layout = "shared";
    double hp_cus = 0.25;
    int partitions = 4, lp_partitions = 1;
    double duration_s = 30, warmup_s = 1;
    bool json = false;
    DeviceOpts dev;
    DaemonOpts daemon;
};

int do_run(const RunOpts& o) {
    sim::Scenario sc;
    if (!o.scenario.empty()) {
        sc = sim::load_scenario(o.scenario);
    } else {
        if (o.hp_timeline.empty() || o.lp_timeline.empty())
            throw CLI::ValidationError("run",
                                       "give --scenario, or --hp-timeline and --lp-timeline");
        sim::DualModel m;
        m.hp = sim::scale_durations(sim::load_timeline_json(o.hp_timeline), o.hp_scale);
        m.lp = sim::scale_durations(sim::load_timeline_json(o.lp_timeline), o.lp_scale);
        m.hp_rate = o.hp_rate;
        m.hp_occupancy = o.hp_occ;
        m.lp_occupancy = o.lp_occ;
        m.hp_host_overhead = static_cast<sim::Ns>(o.hp_host_us * 1e3);
        m.device = o.dev.params();
        m.daemon = o.daemon.params();
        m.layout = sim::parse_layout(o.layout);
        m.hp_cu_fraction = o.hp_cus;
        m.partitions = o.partitions;
        m.lp_partitions = o.lp_partitions;
        m.duration = static_cast<sim::Ns>(o.duration_s * 1e9);
        m.warmup = static_cast<sim::Ns>(o.warmup_s * 1e9);
        sc = sim::build(m);
    }
    const auto e = sim::evaluate(sc);
    if (o.json)
        std::cout << sim::to_json(e).dump(2) << "\n";
    else
        std::cout << sim::to_text(e);
    return 0;
}

struct ValidateOpts {
    std::vector<std::string> results, timelines;
    std::string calibrate_on;
    double max_error = 20;
    double hp_occ = 0.1, lp_occ = 1.0, duration_s = 60, launch_stretch = 1.0;
    bool json = false, all_runs = false, no_host_probe = false, host_overlap = false;
    bool queue_noise = false, arrival_collectives = false;
    std::vector<std::string> design_runs;
    DeviceOpts dev;
};

int do_validate(ValidateOpts& o) {
    if (o.results.size() != o.timelines.size() || o.results.empty())
        throw CLI::ValidationError("validate", "give --result FILE --timelines DIR pairs");
    std::vector<sim::Case> cases;
    for (std::size_t i = 0; i < o.results.size(); ++i)
        cases.push_back(sim::load_case(o.results[i], o.timelines[i]));
    for (const auto& name : o.design_runs) {
        auto it = std::find_if(cases.begin(), cases.end(),
                               [&](const sim::Case& c) { return c.name == name; });
        if (it == cases.end())
            throw CLI::ValidationError("--design-run", "no case named " + name);
        it->design = true;
        it->group += ", runs the model was chosen on";
    }
    sim::CaseSetup setup;
    setup.device = o.dev.params();
    setup.hp_occupancy = o.hp_occ;
    setup.lp_occupancy = o.lp_occ;
    setup.duration = static_cast<sim::Ns>(o.duration_s * 1e9);
    setup.launch_stretch = o.launch_stretch;
    setup.host_probe = !o.no_host_probe;
    setup.host_overlap = o.host_overlap;
    setup.queue_noise = o.queue_noise;
    if (o.arrival_collectives)
        setup.collectives = sim::Collectives::kArrival;
    const bool what_if = o.launch_stretch != 1.0 || o.no_host_probe || o.host_overlap ||
                         o.queue_noise || o.arrival_collectives;
    // The host probe is what lets a run count; what-ifs that replace it
    // (a user's stretch, none at all) count every run.
    const bool every_run = o.all_runs || o.no_host_probe || o.launch_stretch != 1.0;
    nlohmann::json out{{"model", std::string(sim::to_string(setup.device.kind))},
                       {"all_runs", o.all_runs}};
    if (o.launch_stretch != 1.0)
        out["launch_stretch"] = o.launch_stretch;
    if (o.no_host_probe)
        out["host_probe"] = false;
    if (o.host_overlap)
        out["host_overlap"] = true;
    if (o.queue_noise)
        out["queue_noise"] = true;
    if (o.arrival_collectives)
        out["collectives"] = "arrival";
    std::optional<std::size_t> cal;
    if (!o.calibrate_on.empty()) {
        for (std::size_t i = 0; i < cases.size(); ++i) {
            if (cases[i].name == o.calibrate_on || std::to_string(i) == o.calibrate_on)
                cal = i;
        }
        if (!cal)
            throw CLI::ValidationError("--calibrate-on", "no case named " + o.calibrate_on);
        const auto knob = sim::default_knob(setup.device.kind);
        const double v = sim::calibrate(cases[*cal], setup, knob);
        out["calibration"] = {
            {"case", cases[*cal].name}, {"knob", std::string(sim::to_string(knob))}, {"value", v}};
        if (!o.json)
            std::cout << "calibration: " << sim::to_string(knob) << " = " << v << " fitted on "
                      << cases[*cal].name << " HP P99\n";
    }
    double worst = -1, worst_other = -1;
    out["cases"] = nlohmann::json::array();
    std::vector<sim::Prediction> preds;
    for (std::size_t i = 0; i < cases.size(); ++i) {
        auto p = sim::predict(cases[i], setup);
        p.calibration = cal && *cal == i;
        for (auto e : {p.lp_error_pct, p.p50_error_pct}) {
            if (e && p.calibration)
                worst_other = std::max(worst_other, *e);
        }
        out["cases"].push_back(sim::to_json(p));
        if (!o.json)
            std::cout << sim::format_prediction(p);
        preds.push_back(std::move(p));
    }
    // One validation case per group of runs (one test on one GPU model).
    out["groups"] = nlohmann::json::array();
    if (!o.json)
        std::cout << "\n";
    bool any_group = false;
    const auto groups = sim::pool(cases, preds, every_run);
    for (const auto& g : groups) {
        any_group = any_group || !g.calibration;
        if (g.validated)
            worst = std::max(worst, g.error_pct);
        out["groups"].push_back(sim::to_json(g));
        if (!o.json)
            std::cout << sim::format_group(g, what_if);
    }
    // One line per tensor-parallel degree: the largest error of its
    // groups that count (a TP prediction rests on its own degree's).
    out["error_by_tp"] = nlohmann::json::object();
    for (const auto& [tp, e] : sim::error_by_tp(groups)) {
        out["error_by_tp"][std::to_string(tp)] = e ? nlohmann::json(*e) : nlohmann::json(nullptr);
        if (o.json)
            continue;
        std::cout << (what_if ? "what-if error" : "validation error") << " (TP " << tp << "): ";
        if (e)
            std::cout << std::fixed << std::setprecision(1) << *e << " %\n";
        else
            std::cout << "n/a (no group at this degree counts: design runs or no host probe)\n";
    }
    // The overall line: the P99 of the groups not fitted; with only the
    // calibration case, its numbers that were not fitted.
    double overall = worst;
    std::string basis = every_run ? "HP P99 / TTFT P99 of every test's runs pooled, max over tests"
                                  : "HP P99 / TTFT P99 of every test's runs with the host probe "
                                    "pooled, max over tests";
    if (worst < 0 && !any_group) {
        overall = worst_other;
        basis = "only the calibration case: its LP throughput / HP P50, not fitted";
    }
    if (what_if) {
        // Launches slowed by a factor chosen by the user: an experiment on
        // the model, never a validation.
        out["what_if_error_pct"] = overall >= 0 ? nlohmann::json(overall) : nlohmann::json(nullptr);
        out["validation_error_pct"] = nullptr;
        out["basis"] = basis;
        out["pass"] = false;
        if (o.json) {
            std::cout << out.dump(2) << "\n";
            return 0;
        }
        std::cout << "what-if (";
        const char* sep = "";
        if (o.launch_stretch != 1.0) {
            std::cout << "--launch-stretch " << o.launch_stretch;
            sep = " ";
        }
        if (o.no_host_probe) {
            std::cout << sep << "--no-host-probe";
            sep = " ";
        }
        if (o.host_overlap) {
            std::cout << sep << "--host-overlap";
            sep = " ";
        }
        if (o.queue_noise) {
            std::cout << sep << "--queue-noise";
            sep = " ";
        }
        if (o.arrival_collectives)
            std::cout << sep << "--arrival-collectives";
        std::cout << ", not a validation): largest error " << std::fixed << std::setprecision(1)
                  << overall << " % (" << basis << ")\n";
        return 0;
    }
    out["validation_error_pct"] = overall >= 0 ? nlohmann::json(overall) : nlohmann::json(nullptr);
    out["basis"] = basis;
    out["max_error_pct"] = o.max_error;
    const bool ok = overall >= 0 && overall <= o.max_error;
    out["pass"] = ok;
    if (o.json) {
        std::cout << out.dump(2) << "\n";
    } else if (overall >= 0) {
        std::cout << "validation error: " << std::fixed << std::setprecision(1) << overall << " % ("
                  << basis << "; limit " << o.max_error << " %)\n";
    } else if (any_group) {
        std::cout << "validation error: n/a (no run carries the host probe; --all-runs counts "
                     "them anyway)\n";
    } else {
        std::cout << "validation error: n/a (nothing left to validate after the calibration)\n";
    }
    return ok ? 0 : 1;
}

}  // namespace

int main(int argc, char** argv) {
    CLI::App app{"amdqp-sim: trace-driven GPU model running the real amdqp policy"};
    app.require_subcommand(1);

    RunOpts ro;
    auto* run = app.add_subcommand("run", "simulate one scenario: alone and contended");
    run->add_option("--scenario", ro.scenario, "scenario file (.json or .toml)")
        ->check(CLI::ExistingFile);
    run->add_option("--hp-timeline", ro.hp_timeline, "high-priority kernel timeline (JSON)")
        ->check(CLI::ExistingFile);
    run->add_option("--lp-timeline", ro.lp_timeline, "low-priority kernel timeline (JSON)")
        ->check(CLI::ExistingFile);
    run->add_option("--hp-rate", ro.hp_rate, "high-priority requests per second (open loop)")
        ->capture_default_str();
    run->add_option("--hp-occupancy", ro.hp_occ, "share of the device's CUs HP kernels fill")
        ->capture_default_str();
    run->add_option("--lp-occupancy", ro.lp_occ, "share of the device's CUs LP kernels fill")
        ->capture_default_str();
    run->add_option("--hp-scale", ro.hp_scale, "multiply HP kernel durations")
        ->capture_default_str();
    run->add_option("--lp-scale", ro.lp_scale, "multiply LP kernel durations")
        ->capture_default_str();
    run->add_option("--hp-host-us", ro.hp_host_us, "host time added to each HP latency (us)")
        ->capture_default_str();
    run->add_option("--layout", ro.layout, "shared | cu-mask | cpx")
        ->check(CLI::IsMember({"shared", "spx", "cu-mask", "cpx"}))
        ->capture_default_str();
    run->add_option("--hp-cus", ro.hp_cus, "cu-mask: HP's share of the CUs (LP gets the rest)")
        ->capture_default_str();
    run->add_option("--partitions", ro.partitions, "cpx: partitions of the device")
        ->capture_default_str();
    run->add_option("--lp-partitions", ro.lp_partitions, "cpx: partitions the LP job uses")
        ->capture_default_str();
    run->add_option("--duration-s", ro.duration_s, "simulated time (s)")->capture_default_str();
    run->add_option("--warmup-s", ro.warmup_s, "not measured (s)")->capture_default_str();
    run->add_flag("--json", ro.json, "JSON output");
    ro.dev.add(*run);
    ro.daemon.add(*run);
    run->callback([&] { std::exit(do_run(ro)); });

    ValidateOpts vo;
    vo.dev.model = "timeslice";
    auto* val = app.add_subcommand(
        "validate",
        "predict measured contended HP P99s / LLM TTFT P99s (dual_model and llm_tp result JSON + "
        "timelines; runs of one test pooled)");
    val->add_option("--result", vo.results, "measured result JSON (repeat, pairs with --timelines)")
        ->required()
        ->check(CLI::ExistingFile);
    val->add_option("--timelines", vo.timelines, "folder of that run's isolated timelines")
        ->required()
        ->check(CLI::ExistingDirectory);
    val->add_option("--calibrate-on", vo.calibrate_on,
                    "case (file stem or index) whose HP P99 fits the model's knob first");
    val->add_option("--max-error", vo.max_error, "exit 1 above this error (%)")
        ->capture_default_str();
    val->add_option("--hp-occupancy", vo.hp_occ, "share of the device's CUs HP kernels fill")
        ->capture_default_str();
    val->add_option("--lp-occupancy", vo.lp_occ, "share of the device's CUs LP kernels fill")
        ->capture_default_str();
    val->add_option("--duration-s", vo.duration_s, "simulated time per phase (s)")
        ->capture_default_str();
    val->add_option("--launch-stretch", vo.launch_stretch,
                    "what-if: every job's launches this much slower in the contended phase "
                    "(host contention; launch_cost.py measures it); not a validation")
        ->check(CLI::Range(0.1, 10.0))
        ->capture_default_str();
    val->add_flag("--all-runs", vo.all_runs,
                  "count runs without the in-situ host probe (earlier protocols: their host "
                  "speed in each phase is unknown) towards the validation error too");
    val->add_flag("--no-host-probe", vo.no_host_probe,
                  "what-if: ignore the recorded host probes (a GPU-only prediction of every "
                  "run); not a validation");
    val->add_flag("--host-overlap", vo.host_overlap,
                  "what-if (dual_model): a request's host residual from the alone phase "
                  "overlaps the GPU's contention excess instead of adding to it; not a "
                  "validation");
    val->add_flag("--queue-noise", vo.queue_noise,
                  "what-if (llm_tp): each alone request's host noise (its measured service "
                  "minus its simulated one) goes through the contended phase's queue, every "
                  "request with every residual, instead of every alone TTFT residual being "
                  "added to every simulated contended TTFT; not a validation");
    val->add_flag("--arrival-collectives", vo.arrival_collectives,
                  "what-if (TP > 1): a collective progresses once every rank has started it, "
                  "on its GPU or not (the TP model frozen in 55d0323), instead of ring steps "
                  "taken only while a rank runs; not a validation");
    val->add_option("--design-run", vo.design_runs,
                    "a case (file stem) the model's structure was chosen on: predicted and "
                    "listed as a group of its own, not counted (repeat)");
    val->add_flag("--json", vo.json, "JSON output");
    vo.dev.add(*val);
    val->callback([&] { std::exit(do_validate(vo)); });

    sim::SweepOptions so;
    so.calibration_result = std::string(AMDQP_SIM_DATA) + "/mi308x_test4.json";
    so.timelines_dir = std::string(AMDQP_SIM_DATA) + "/h200";
    so.decode_timeline = so.timelines_dir + "/deepseek_v3_tiny_1gpu.json";
    double corun = -1, sweep_duration = 30;
    std::string vary = "both";
    bool sweep_json = false;
    auto* sw = app.add_subcommand("sweep",
                                  "MI308X predictions: amdqpd across unmap/CWSR costs, "
                                  "CU masks, CPX, and a TP case");
    sw->add_option("--calibration", so.calibration_result,
                   "measured MI308X case (result JSON) the co-run rate is fitted on")
        ->check(CLI::ExistingFile)
        ->capture_default_str();
    sw->add_option("--timelines", so.timelines_dir, "timelines of that case")
        ->check(CLI::ExistingDirectory)
        ->capture_default_str();
    sw->add_option("--corun-rate", corun, "use this co-run rate instead of fitting it");
    sw->add_option("--hp-occupancy", so.hp_occupancy, "share of the CUs HP kernels fill")
        ->capture_default_str();
    sw->add_option("--min-cost-us", so.min_cost_us, "cheapest scheduler cost (us)")
        ->capture_default_str();
    sw->add_option("--max-cost-us", so.max_cost_us, "dearest scheduler cost (us)")
        ->capture_default_str();
    sw->add_option("--points", so.points, "log-spaced cost points")->capture_default_str();
    sw->add_option("--vary", vary, "what the cost sets: both | unmap | cwsr")
        ->check(CLI::IsMember({"both", "unmap", "cwsr"}))
        ->capture_default_str();
    sw->add_option("--tp", so.tp, "GPUs of the tensor-parallel case")->capture_default_str();
    sw->add_option("--tp-cost-us", so.tp_cost_us, "scheduler cost of the TP case (us)")
        ->capture_default_str();
    sw->add_option("--goal-ms", so.goal_ms, "absolute HP P99 goal (ms)")->capture_default_str();
    sw->add_option("--goal-ratio", so.goal_ratio, "HP P99 goal relative to isolated")
        ->capture_default_str();
    sw->add_option("--decode-timeline", so.decode_timeline,
                   "the decode case's high-priority timeline, one decode step a request "
                   "(\"\": no decode case)")
        ->capture_default_str();
    sw->add_option("--decode-rate", so.decode_rate, "decode steps per second of the decode case")
        ->check(CLI::PositiveNumber)
        ->capture_default_str();
    sw->add_option("--duration-s", sweep_duration, "simulated time per point (s)")
        ->capture_default_str();
    sw->add_flag("--json", sweep_json, "JSON output");
    sw->callback([&] {
        if (corun >= 0)
            so.corun_rate = corun;
        so.vary = vary == "unmap"  ? sim::CostVary::kUnmap
                  : vary == "cwsr" ? sim::CostVary::kCwsr
                                   : sim::CostVary::kBoth;
        so.duration = static_cast<sim::Ns>(sweep_duration * 1e9);
        const auto j = sim::sweep(so);
        std::cout << (sweep_json ? j.dump(2) + "\n" : sim::sweep_text(j));
        std::exit(0);
    });

    try {
        app.parse(argc, argv);
    } catch (const CLI::ParseError& e) {
        return app.exit(e);
    } catch (const std::exception& e) {
        std::cerr << "amdqp-sim: " << e.what() << "\n";
        return 2;
    }
    return 0;
}
