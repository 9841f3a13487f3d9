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

#include "pyrandom.hpp"
#include "queue_noise.hpp"
#include "simulator.hpp"
#include "timeline_json.hpp"
#include "tp.hpp"

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

std::vector<double> list(const nlohmann::json& task, const char* key) {
    if (task.contains(key) && task.at(key).is_array())
        return task.at(key).get<std::vector<double>>();
    return {};
}

const nlohmann::json* phase_task(const nlohmann::json& j, const std::string& phase,
                                 const std::string& task) {
    if (!j.contains("phases") || !j.at("phases").contains(phase))
        return nullptr;
    const auto& tasks = j.at("phases").at(phase).at("tasks");
    return tasks.contains(task) ? &tasks.at(task) : nullptr;
}

// A task's host probe ratio: its median in @contended over @alone.
std::optional<double> probe_ratio(const nlohmann::json& j, const std::string& alone,
                                  const std::string& task) {
    const auto* a = phase_task(j, alone, task);
    const auto* c = phase_task(j, "contended", task);
    if (!a || !c || !a->contains("host_probe") || !c->contains("host_probe"))
        return std::nullopt;
    const auto ma = num(a->at("host_probe"), "median_us");
    const auto mc = num(c->at("host_probe"), "median_us");
    if (!ma || !mc || *ma <= 0 || *mc <= 0)
        return std::nullopt;
    return *mc / *ma;
}

// A task's host probe ratio per rank, where the result probed every rank:
// "host_probe_ranks", one summary per rank (index = rank), in both phases.
std::vector<double> probe_rank_ratios(const nlohmann::json& j, const std::string& alone,
                                      const std::string& task, int tp) {
    const auto* a = phase_task(j, alone, task);
    const auto* c = phase_task(j, "contended", task);
    const char* key = "host_probe_ranks";
    if (!a || !c || !a->contains(key) || !c->contains(key) || !a->at(key).is_array() ||
        !c->at(key).is_array() || a->at(key).size() != static_cast<std::size_t>(tp) ||
        c->at(key).size() != static_cast<std::size_t>(tp))
        return {};
    std::vector<double> out;
    for (int r = 0; r < tp; ++r) {
        const auto ma = num(a->at(key).at(static_cast<std::size_t>(r)), "median_us");
        const auto mc = num(c->at(key).at(static_cast<std::size_t>(r)), "median_us");
        if (!ma || !mc || *ma <= 0 || *mc <= 0)
            return {};
        out.push_back(*mc / *ma);
    }
    return out;
}

std::vector<std::pair<std::string, Timeline>> load_dir(const std::string& dir) {
    std::vector<std::pair<std::string, Timeline>> all;
    for (const auto& e : std::filesystem::directory_iterator(dir)) {
        if (!is_timeline_file(e.path().string()))
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
        throw std::runtime_error(dir + ": no kernel timeline");
    return all;
}

void load_dual_model(Case& c, const nlohmann::json& j, const std::string& result_path,
                     const std::string& timelines_dir) {
    const auto& sum = j.at("summary");
    c.hp_p99_alone = sum.at("hp_p99_alone_ms").get<double>();
    c.hp_p99_contended = sum.at("hp_p99_contended_ms").get<double>();
    c.lp_alone = num(sum, "lp_it_per_s_alone");
    c.lp_contended = num(sum, "lp_it_per_s_contended");
    const auto all = load_dir(timelines_dir);
    const auto& tasks = j.at("phases").at("contended").at("tasks");
    // A task's alone phase: the one phase it ran in by itself.
    const auto alone_phase = [&j](const std::string& task) {
        for (const auto& [phase, ph] : j.at("phases").items()) {
            if (phase != "contended" && ph.contains("tasks") && ph.at("tasks").size() == 1 &&
                ph.at("tasks").contains(task))
                return phase;
        }
        return std::string{};
    };
    bool have_hp = false, have_lp = false;
    std::string hp_name;
    for (const auto& [name, t] : tasks.items()) {
        const auto role = t.value("role", std::string{});
        if (role == "hp") {
            c.hp = find_timeline(all, t, true, result_path);
            c.hp_rate = t.value("rate_per_s", c.hp_rate);
            if (t.contains("latency_ms") && t.at("latency_ms").contains("p50"))
                c.hp_p50_contended = t.at("latency_ms").at("p50").get<double>();
            c.hp_contended_ms = list(t, "latencies_ms");
            c.hp_host_ratio = probe_ratio(j, alone_phase(name), name);
            hp_name = name;
            have_hp = true;
        } else if (role == "lp") {
            c.lp = find_timeline(all, t, false, result_path);
            c.lp_host_ratio = probe_ratio(j, alone_phase(name), name);
            have_lp = true;
        } else if (t.value("rate_per_s", 0.0) > 0) {
            c.others.push_back({find_timeline(all, t, true, result_path),
                                t.at("rate_per_s").get<double>(), 7,
                                probe_ratio(j, alone_phase(name), name)});
        }
    }
    if (!have_hp || !have_lp)
        throw std::runtime_error(result_path + ": the contended phase needs an hp and an lp task");
    if (const auto* a = phase_task(j, alone_phase(hp_name), hp_name))
        c.hp_alone_ms = list(*a, "latencies_ms");
}

// A TP run's ranks of both jobs (timelines of its degree), prepared by
// tp.hpp; what was assumed goes to c.notes.
void load_tp_ranks(Case& c, const nlohmann::json& j,
                   const std::vector<std::pair<std::string, Timeline>>& all,
                   const std::string& timelines_dir) {
    std::vector<Timeline> hp, lp;
    for (const auto& [path, t] : all) {
        if (t.tp != c.tp)
            continue;
        if (t.workload.rfind("llm_tp hp", 0) == 0)
            hp.push_back(t);
        else if (t.workload.rfind("llm_tp lp", 0) == 0)
            lp.push_back(t);
    }
    if (hp.empty() || lp.empty())
        throw std::runtime_error(timelines_dir + ": needs TP " + std::to_string(c.tp) +
                                 " timelines of 'llm_tp hp' and 'llm_tp lp'");
    const auto prepare = [&](const std::vector<Timeline>& present, const char* job) {
        auto p = prepare_tp_job(present, c.tp);
        if (!p.missing.empty())
            c.notes.push_back(std::string(job) + " " + rank_list(p.missing) +
                              " not profiled: each taken as the mean of the present ranks; "
                              "a collective's cost is its least duration over the present "
                              "ranks' requests (an upper bound: they may all have waited for "
                              "a missing rank)");
        return p.ranks;
    };
    c.hp_ranks = prepare(hp, "HP");
    c.lp_ranks = prepare(lp, "LP");
    for (auto& r : c.hp_ranks) {
        if (!mark_decode_steps(r, c.new_tokens))
            throw std::runtime_error(timelines_dir + ": HP rank " + std::to_string(r.rank) +
                                     " does not end in " + std::to_string(c.new_tokens) +
                                     " repeated decode steps; cannot find the first token");
    }
    c.hp = c.hp_ranks.front();
    c.lp = c.lp_ranks.front();
    c.hp_rank_ratios = probe_rank_ratios(j, "hp_alone", "hp", c.tp);
    c.lp_rank_ratios = probe_rank_ratios(j, "lp_alone", "lp", c.tp);
    if (c.has_host_probe() && (c.hp_rank_ratios.empty() || c.lp_rank_ratios.empty()))
        c.notes.push_back(
            std::string("host probe of rank 0 only (") + (c.hp_rank_ratios.empty() ? "HP" : "") +
            (c.hp_rank_ratios.empty() && c.lp_rank_ratios.empty() ? ", " : "") +
            (c.lp_rank_ratios.empty() ? "LP" : "") + "): its slowdown applied to every rank");
}

void load_llm_tp(Case& c, const nlohmann::json& j, const std::string& result_path,
                 const std::string& timelines_dir) {
    const auto& cfg = j.at("config");
    const auto& sum = j.at("summary");
    c.hp_p99_alone = sum.at("ttft_p99_alone_ms").get<double>();
    c.hp_p99_contended = sum.at("ttft_p99_contended_ms").get<double>();
    c.tpot_p99_alone = num(sum, "tpot_p99_alone_ms");
    c.tpot_p99_contended = num(sum, "tpot_p99_contended_ms");
    c.lp_alone = num(sum, "lp_tokens_per_s_alone");
    c.lp_contended = num(sum, "lp_tokens_per_s_contended");
    c.warmup_s = cfg.at("warmup").get<double>();
    c.duration_s = cfg.at("duration").get<double>();
    c.new_tokens = cfg.at("new_tokens").get<int>();
    c.hp_rate = cfg.at("rate").get<double>();
    c.lp_items = cfg.value("lp_batch", 1);
    const auto* hp_a = phase_task(j, "hp_alone", "hp");
    const auto* hp_c = phase_task(j, "contended", "hp");
    if (!hp_a || !hp_c)
        throw std::runtime_error(result_path + ": needs the hp_alone and contended phases");
    c.hp_alone_ms = list(*hp_a, "ttfts_ms");
    c.hp_contended_ms = list(*hp_c, "ttfts_ms");
    c.tpot_alone_ms = list(*hp_a, "tpots_ms");
    c.tpot_contended_ms = list(*hp_c, "tpots_ms");
    c.hp_host_ratio = probe_ratio(j, "hp_alone", "hp");
    c.lp_host_ratio = probe_ratio(j, "lp_alone", "lp");
    if (hp_c->contains("ttft_ms") && hp_c->at("ttft_ms").contains("p50"))
        c.hp_p50_contended = num(hp_c->at("ttft_ms"), "p50");
    // The arrivals each phase's server drew (experiments/llm_tp/server.py):
    // seed * 7919 + the HP job's command number, counted as launch.py
    // numbers them (one per phase it runs in, one per profile after
    // hp_alone).
    const bool poisson = cfg.value("arrival", std::string("poisson")) == "poisson";
    const auto seed = cfg.value("seed", 1);
    const bool profiled = cfg.contains("profile_dir") && !cfg.at("profile_dir").is_null();
    int seq = 0;
    for (const auto& ph : cfg.at("phases")) {
        const auto name = ph.get<std::string>();
        if (name == "lp_alone")
            continue;
        const auto sched =
            arrival_schedule(c.hp_rate, c.warmup_s + c.duration_s, poisson,
                             static_cast<std::uint64_t>(seed) * 7919u + static_cast<unsigned>(seq));
        (name == "hp_alone" ? c.hp_arrivals_alone : c.hp_arrivals_contended) = sched;
        ++seq;
        if (name == "hp_alone" && profiled)
            ++seq;
    }
    if (c.hp_host_ratio && hp_c->contains("host_probe_t_s")) {
        const auto t = list(*hp_c, "host_probe_t_s");
        const auto us = list(*hp_c, "host_probe_us");
        const auto alone = num(hp_a->at("host_probe"), "median_us");
        if (!t.empty() && t.size() == us.size() && alone) {
            // Arrival offsets count from the phase's start, probe times
            // from the end of its warm-up.
            std::vector<double> at;
            for (double a : c.hp_arrivals_contended)
                at.push_back(a - c.warmup_s);
            c.hp_host_factors = host_factors(t, us, at, *alone);
        }
    }
    c.tp = cfg.value("tp", 1);
    // TP > 1: the HP host factor of each contended request is its own
    // decode issue time (the host launching a step's kernels, measured
    // apart from its wait for the GPU) over the alone phase's median.
    const auto issue_a = list(*hp_a, "decode_issue_ms");
    const auto issue_c = list(*hp_c, "decode_issue_ms");
    if (c.tp > 1 && !issue_a.empty() && !issue_c.empty()) {
        const double alone = linear_percentile(issue_a, 50);
        const double typical = linear_percentile(issue_c, 50) / alone;
        std::size_t k = 0;
        for (double a : c.hp_arrivals_contended)
            c.hp_issue_factors.push_back(
                a < c.warmup_s || k >= issue_c.size() ? typical : issue_c[k++] / alone);
    }
    c.give_up_s = c.warmup_s + c.duration_s + std::max(10.0, c.duration_s);
    if (const auto d = num(cfg, "max_queue_delay_s"))
        c.max_queue_delay_s = *d;
    if (const auto d = num(*hp_c, "dropped"))
        c.dropped_contended = *d;
    const auto all = load_dir(timelines_dir);
    if (c.tp > 1) {
        load_tp_ranks(c, j, all, timelines_dir);
        return;
    }
    bool have_hp = false, have_lp = false;
    for (const auto& [path, t] : all) {
        if (t.rank != 0)
            continue;
        if (t.workload.rfind("llm_tp hp", 0) == 0) {
            c.hp = t;
            have_hp = true;
        } else if (t.workload.rfind("llm_tp lp", 0) == 0) {
            c.lp = t;
            have_lp = true;
        }
    }
    if (!have_hp || !have_lp)
        throw std::runtime_error(
            timelines_dir + ": needs the rank 0 timelines of 'llm_tp hp' and " + "'llm_tp lp'");
    if (!mark_decode_steps(c.hp, c.new_tokens))
        throw std::runtime_error(timelines_dir + ": the HP requests do not end in " +
                                 std::to_string(c.new_tokens) +
                                 " repeated decode steps; cannot find the first token");
}

// @t's requests in turn (request n mod their count), once per factor, each
// with its launches stretched by it: request n of the simulation is
// request n of the result.
Timeline per_request_timeline(const Timeline& t, const std::vector<double>& factors) {
    Timeline out = t;
    out.requests.clear();
    for (std::size_t i = 0; i < factors.size(); ++i) {
        Request r = t.requests[i % t.requests.size()];
        for (auto& k : r.kernels)
            k.start = static_cast<Ns>(std::llround(static_cast<double>(k.start) * factors[i]));
        out.requests.push_back(std::move(r));
    }
    return out;
}

Ns ns_of_s(double s) {
    return static_cast<Ns>(std::llround(s * 1e9));
}

std::vector<Ns> to_ns(const std::vector<double>& s) {
    std::vector<Ns> out;
    for (double x : s)
        out.push_back(ns_of_s(x));
    return out;
}

// The timelines as replayed: profiler inflation of the host gaps removed
// (fit_to_wall), then one typical request (host noise is in the measured
// alone latencies, not replayed).
Timeline prepared(const Timeline& t) {
    return typical_request(fit_to_wall(t));
}

// The case's scenario: HP alone (its alone phase's arrivals), LP alone, or
// everything together (the contended phase's arrivals).
enum class Phase { kHpAlone, kLpAlone, kContended };

// The measured host term applies: the run carries the probe, and neither
// a what-if stretch nor --no-host-probe replaces it.
bool host_probe_applies(const Case& c, const CaseSetup& s) {
    return s.launch_stretch == 1.0 && s.host_probe && c.has_host_probe();
}

// The job's ranks with their launches slowed by the host: rank 0's
// per-request factors (or its phase ratio) on every rank, rank r's scaled
// by its own ratio over rank 0's where the result probed every rank.
std::vector<Timeline> host_slowed(const std::vector<Timeline>& ranks,
                                  const std::vector<double>& per_request, double ratio,
                                  const std::vector<double>& rank_ratios) {
    std::vector<Timeline> out;
    for (std::size_t r = 0; r < ranks.size(); ++r) {
        const double rel = rank_ratios.size() == ranks.size() && rank_ratios[0] > 0 && r > 0
                               ? rank_ratios[r] / rank_ratios[0]
                               : 1.0;
        if (per_request.empty()) {
            out.push_back(ratio * rel != 1.0 ? stretch_launches(ranks[r], ratio * rel) : ranks[r]);
        } else {
            std::vector<double> f = per_request;
            for (auto& x : f)
                x *= rel;
            out.push_back(per_request_timeline(ranks[r], f));
        }
    }
    return out;
}

Scenario case_scenario(const Case& c, const CaseSetup& s, const std::vector<Timeline>& hp_tls,
                       const std::vector<Timeline>& lp_tls, Phase phase) {
    Scenario sc;
    std::vector<std::uint32_t> gpus;
    for (std::size_t r = 0; r < hp_tls.size(); ++r) {
        sc.devices[static_cast<std::uint32_t>(r)] = s.device;
        gpus.push_back(static_cast<std::uint32_t>(r));
    }
    sc.daemon.enabled = false;  // native runs: no amdqpd
    WorkloadSpec hp;
    hp.name = "hp";
    hp.priority = 12;
    hp.ranks = hp_tls;
    hp.gpus = gpus;
    hp.occupancy = s.hp_occupancy;
    hp.collectives = s.collectives;
    WorkloadSpec lp;
    lp.name = "lp";
    lp.priority = 2;
    lp.ranks = lp_tls;
    lp.gpus = gpus;
    lp.occupancy = s.lp_occupancy;
    lp.collectives = s.collectives;
    if (c.experiment == Experiment::kLlmTp) {
        hp.arrivals =
            to_ns(phase == Phase::kContended ? c.hp_arrivals_contended : c.hp_arrivals_alone);
        hp.tokens_after_first = c.new_tokens;
        sc.warmup = ns_of_s(c.warmup_s);
        sc.measure_end = ns_of_s(c.warmup_s + c.duration_s);
        // The driver serves every measured request (the LP job runs on until
        // the HP job is done) unless it falls so far behind that it gives
        // up (server.py's bound): the rest of its schedule is dropped.
        hp.give_up = ns_of_s(c.give_up_s);
        hp.max_queue_delay = ns_of_s(c.max_queue_delay_s);
        sc.duration = std::max(sc.measure_end, hp.give_up) + 60 * kSec;
    } else {
        hp.rate_per_s = c.hp_rate;
        hp.first_arrival = 10 * kMs;
        sc.duration = s.duration;
        sc.warmup = 1 * kSec;
    }
    if (phase == Phase::kHpAlone) {
        sc.workloads = {hp};
        return sc;
    }
    if (phase == Phase::kLpAlone) {
        sc.workloads = {lp};
        return sc;
    }
    sc.workloads = {hp};
    for (std::size_t i = 0; i < c.others.size(); ++i) {
        WorkloadSpec o;
        o.name = "open" + std::to_string(i);
        o.priority = c.others[i].priority;
        o.ranks = {prepared(c.others[i].timeline)};
        o.rate_per_s = c.others[i].rate_per_s;
        o.first_arrival = 10 * kMs;
        o.occupancy = s.hp_occupancy;
        sc.workloads.push_back(o);
    }
    sc.workloads.push_back(lp);
    // The contended phase's host: a what-if factor for every job, else each
    // job's own measured one.
    const auto stretch = [](WorkloadSpec& w, double f) {
        if (f != 1.0) {
            for (auto& r : w.ranks)
                r = stretch_launches(r, f);
        }
    };
    if (s.launch_stretch != 1.0) {
        for (auto& w : sc.workloads)
            stretch(w, s.launch_stretch);
    } else if (host_probe_applies(c, s)) {
        const bool issue = s.tp_issue_host && !c.hp_issue_factors.empty();
        sc.workloads.front().ranks =
            host_slowed(hp_tls, issue ? c.hp_issue_factors : c.hp_host_factors, *c.hp_host_ratio,
                        c.hp_rank_ratios);
        for (std::size_t i = 0; i < c.others.size(); ++i)
            stretch(sc.workloads[i + 1], *c.others[i].host_ratio);
        sc.workloads.back().ranks = host_slowed(lp_tls, {}, *c.lp_host_ratio, c.lp_rank_ratios);
    }
    return sc;
}

double median(std::vector<double> v) {
    if (v.empty())
        return 0;
    std::sort(v.begin(), v.end());
    const std::size_t n = v.size();
    return n % 2 ? v[n / 2] : 0.5 * (v[n / 2 - 1] + v[n / 2]);
}

// Contended values plus host residuals: every simulated contended value
// with every residual of the alone phase (host time independent of the GPU
// sharing), each pair standing for @count / pairs measured requests;
// @combine(value, residual) makes the pair's latency.
template <typename Combine>
Samples compose(const std::vector<double>& contended, const std::vector<double>& residuals,
                double count, Combine combine) {
    Samples out;
    out.values.reserve(contended.size() * residuals.size());
    for (double c : contended) {
        for (double r : residuals)
            out.values.push_back(combine(c, r));
    }
    if (!out.values.empty())
        out.weight = count / static_cast<double>(out.values.size());
    return out;
}

Samples compose(const std::vector<double>& contended, const std::vector<double>& residuals,
                double count) {
    return compose(contended, residuals, count, [](double c, double r) { return c + r; });
}

// Residuals of the measured alone values against the simulated ones:
// paired request by request where the simulation replayed the measured
// arrivals (llm_tp), else against the simulated median (fixed-rate arrivals
// and one typical request: every simulated alone latency is the same up to
// the phase of the other workloads).
std::vector<double> residuals(const std::vector<double>& measured,
                              const std::vector<double>& simulated, bool paired) {
    std::vector<double> r;
    const double m = median(simulated);
    for (std::size_t i = 0; i < measured.size(); ++i)
        r.push_back(measured[i] -
                    (paired && simulated.size() == measured.size() ? simulated[i] : m));
    return r;
}

// The arrival offsets (s) of a phase's measured requests, from the end of
// its warm-up.
std::vector<double> measured_arrivals(const std::vector<double>& all, double warmup_s) {
    std::vector<double> out;
    for (double a : all) {
        if (a >= warmup_s)
            out.push_back(a - warmup_s);
    }
    return out;
}

// What-if of compose() for an llm_tp run (CaseSetup::queue_noise): the host noise of each
// alone request, its measured service minus its simulated one, goes
// through the simulated contended queue (queue_noise.hpp), replayed once
// per residual offset.
Samples queue_noise_samples(const Case& c, const WorkloadResult& alone, const WorkloadResult& cont,
                            double count) {
    const auto at_a = measured_arrivals(c.hp_arrivals_alone, c.warmup_s);
    const auto at_c = measured_arrivals(c.hp_arrivals_contended, c.warmup_s);
    if (at_a.size() != c.hp_alone_ms.size() || at_a.size() != c.tpot_alone_ms.size() ||
        at_a.size() != alone.ttft_ms.size() || at_a.size() != alone.latencies_ms.size() ||
        at_c.size() != cont.ttft_ms.size() || at_c.size() != cont.latencies_ms.size())
        throw std::runtime_error(c.name +
                                 ": the host noise through the queue needs every "
                                 "request of both HP phases, measured and simulated");
    std::vector<double> total_a;
    for (std::size_t i = 0; i < at_a.size(); ++i)
        total_a.push_back(c.hp_alone_ms[i] + c.new_tokens * c.tpot_alone_ms[i]);
    const auto measured = fifo_split(at_a, c.hp_alone_ms, total_a);
    const auto simulated = fifo_split(at_a, alone.ttft_ms, alone.latencies_ms);
    std::vector<double> residuals;
    for (std::size_t i = 0; i < at_a.size(); ++i)
        residuals.push_back(measured.service_ms[i] - simulated.service_ms[i]);
    Samples out;
    if (residuals.empty())
        return out;
    out.values =
        fifo_replay_all(at_c, fifo_split(at_c, cont.ttft_ms, cont.latencies_ms), residuals);
    if (!out.values.empty())
        out.weight = count / static_cast<double>(out.values.size());
    return out;
}

double error_pct(double predicted, double measured) {
    return 100.0 * std::abs(predicted - measured) / measured;
}

}  // namespace

double weighted_percentile(const std::vector<Samples>& s, double q) {
    std::vector<std::pair<double, double>> all;
    double total = 0;
    for (const auto& x : s) {
        for (double v : x.values)
            all.emplace_back(v, x.weight);
        total += x.weight * static_cast<double>(x.values.size());
    }
    if (all.empty())
        return 0;
    std::sort(all.begin(), all.end());
    const double want = q / 100.0 * total;
    double cum = 0;
    for (const auto& [v, w] : all) {
        cum += w;
        if (cum >= want * (1 - 1e-12))
            return v;
    }
    return all.back().first;
}

// What-if of compose(): a host residual and the GPU's contention excess
// (each contended value over @alone, the simulated alone latency) overlap
// instead of adding up, as when a host stall delays a request whose kernels
// would have waited for the GPU anyway: alone + max(excess, residual);
// a negative residual (a faster host) still shifts the whole value.
Samples compose_overlapped(const std::vector<double>& contended,
                           const std::vector<double>& residuals, double alone, double count) {
    return compose(contended, residuals, count, [alone](double c, double r) {
        return r < 0 ? c + r : alone + std::max(c - alone, r);
    });
}

double linear_percentile(std::vector<double> v, double q) {
    if (v.empty())
        return 0;
    std::sort(v.begin(), v.end());
    const double pos = static_cast<double>(v.size() - 1) * q / 100.0;
    const auto lo = static_cast<std::size_t>(pos);
    const std::size_t hi = std::min(lo + 1, v.size() - 1);
    return v[lo] + (v[hi] - v[lo]) * (pos - static_cast<double>(lo));
}

std::vector<double> host_factors(const std::vector<double>& t_s, const std::vector<double>& us,
                                 const std::vector<double>& at_s, double alone_median,
                                 std::size_t k) {
    std::vector<double> out;
    if (t_s.empty() || alone_median <= 0)
        return out;
    k = std::min(k, t_s.size());
    std::vector<std::pair<double, double>> by_distance(t_s.size());
    for (double at : at_s) {
        for (std::size_t i = 0; i < t_s.size(); ++i)
            by_distance[i] = {std::abs(t_s[i] - at), us[i]};
        std::partial_sort(by_distance.begin(), by_distance.begin() + static_cast<std::ptrdiff_t>(k),
                          by_distance.end());
        std::vector<double> near;
        for (std::size_t i = 0; i < k; ++i)
            near.push_back(by_distance[i].second);
        out.push_back(median(near) / alone_median);
    }
    return out;
}

Case load_case(const std::string& result_path, const std::string& timelines_dir) {
    std::ifstream f(result_path);
    if (!f)
        throw std::runtime_error(result_path + ": cannot open");
    const auto j = nlohmann::json::parse(f);
    Case c;
    c.name = std::filesystem::path(result_path).stem().string();
    c.device = j.value("device", std::string{});
    const auto exp = j.value("experiment", std::string{});
    if (exp == "dual_model") {
        c.experiment = Experiment::kDualModel;
        load_dual_model(c, j, result_path, timelines_dir);
    } else if (exp == "llm_tp") {
        c.experiment = Experiment::kLlmTp;
        load_llm_tp(c, j, result_path, timelines_dir);
    } else {
        throw std::runtime_error(result_path +
                                 ": only dual_model and llm_tp results are simulated");
    }
    const auto preset = j.contains("preset") && j.at("preset").is_string()
                            ? j.at("preset").get<std::string>()
                            : std::string("?");
    c.group = exp + " " + preset;
    // Runs of another protocol measure something else: llm_tp ranks with
    // one intra-op thread per core contend for CPU (experiments/results/
    // README.md), dual_model rounds spread host disturbances over all phases.
    const auto& cfg = j.contains("config") ? j.at("config") : nlohmann::json::object();
    if (c.experiment == Experiment::kLlmTp) {
        const auto* t = cfg.contains("intra_op_threads") ? &cfg.at("intra_op_threads") : nullptr;
        c.group += t && t->is_number_integer()
                       ? ", " + std::to_string(t->get<int>()) + " intra-op thread(s)"
                       : ", default intra-op threads";
        if (cfg.contains("cpu_sets") && !cfg.at("cpu_sets").is_null())
            c.group += ", pinned cores";
    } else if (cfg.value("rounds", 1) > 1) {
        c.group += ", phases in rounds";
    }
    if (c.has_host_probe())
        c.group += ", host probe";
    // Groups are per (model, TP degree): the preset names the degree
    // (deepseek-small-tp2-...); a preset that does not gets it here.
    if (c.tp > 1 && preset.find("tp" + std::to_string(c.tp)) == std::string::npos)
        c.group += ", TP " + std::to_string(c.tp);
    c.group += " on " + c.device;
    return c;
}

bool Case::has_host_probe() const {
    return hp_host_ratio && lp_host_ratio &&
           std::all_of(others.begin(), others.end(),
                       [](const ExtraTask& o) { return o.host_ratio.has_value(); });
}

namespace {
// LP durations of a trace from another GPU stretched to the measured LP
// throughput (alone if measured, else contended).
Timeline lp_for_device(const Case& c, const CaseSetup& s, double* lp_scale, bool* fitted) {
    *lp_scale = 1.0;
    *fitted = false;
    Timeline lp = prepared(c.lp);
    const auto target = c.lp_alone ? c.lp_alone : c.lp_contended;
    if (target && *target > 0 && !c.lp.device.empty() && c.lp.device != c.device &&
        c.experiment == Experiment::kDualModel) {
        const Scenario sc = case_scenario(c, s, {prepared(c.hp)}, {lp}, Phase::kLpAlone);
        const double its = simulate(sc).workloads.front().it_per_s;
        *lp_scale = its / *target;
        *fitted = true;
        lp = scale_durations(lp, *lp_scale);
    }
    return lp;
}
}  // namespace

DualModel case_model(const Case& c, const CaseSetup& s, double* lp_scale, bool* fitted) {
    DualModel m;
    m.hp = prepared(c.hp);
    m.lp = lp_for_device(c, s, lp_scale, fitted);
    m.hp_rate = c.hp_rate;
    m.hp_occupancy = s.hp_occupancy;
    m.lp_occupancy = s.lp_occupancy;
    m.device = s.device;
    m.daemon.enabled = false;  // native runs: no amdqpd
    m.duration = s.duration;
    return m;
}

Prediction predict(const Case& c, const CaseSetup& s) {
    Prediction p;
    p.name = c.name;
    p.group = c.group;
    p.metric = c.metric();
    if (host_probe_applies(c, s)) {
        p.hp_host_ratio = c.hp_host_ratio;
        p.lp_host_ratio = c.lp_host_ratio;
        p.host_from_issue = s.tp_issue_host && !c.hp_issue_factors.empty();
        const auto& f = p.host_from_issue ? c.hp_issue_factors : c.hp_host_factors;
        if (!f.empty()) {
            const auto [lo, hi] = std::minmax_element(f.begin(), f.end());
            p.hp_host_min = *lo;
            p.hp_host_max = *hi;
        }
    }
    p.tp = c.tp;
    p.collectives = s.collectives;
    p.notes = c.notes;
    // At TP > 1 the ranks were fitted to the wall time as one job when
    // loaded (tp.hpp), and every profiled request is replayed in turn, not
    // one typical request: each rank keeps its own host gaps of that
    // request, so a collective waits for whichever rank was slowest up to
    // it (the straggler the group pays, more of them the more ranks).
    std::vector<Timeline> hp_tl, lp_tl;
    if (c.tp > 1) {
        hp_tl = c.hp_ranks;
        lp_tl = c.lp_ranks;
    } else {
        hp_tl = {prepared(c.hp)};
        lp_tl = {lp_for_device(c, s, &p.lp_scale, &p.lp_scale_fitted)};
    }
    const bool llm = c.experiment == Experiment::kLlmTp;
    const auto cont = simulate(case_scenario(c, s, hp_tl, lp_tl, Phase::kContended));
    const auto alone = simulate(case_scenario(c, s, hp_tl, lp_tl, Phase::kHpAlone));
    const auto& hc = cont.workloads.front();
    const auto& ha = alone.workloads.front();
    const auto& sim_c = llm ? hc.ttft_ms : hc.latencies_ms;
    const auto& sim_a = llm ? ha.ttft_ms : ha.latencies_ms;
    const double count = c.hp_contended_ms.empty() ? static_cast<double>(sim_c.size())
                                                   : static_cast<double>(c.hp_contended_ms.size());
    if (!c.hp_alone_ms.empty()) {
        const auto r = residuals(c.hp_alone_ms, sim_a, llm);
        p.host_from_requests = true;
        p.host_overhead_ms = median(r);
        if (s.queue_noise && llm)
            p.samples = queue_noise_samples(c, ha, hc, count);
        else if (s.host_overlap && !llm)
            p.samples = compose_overlapped(sim_c, r, median(sim_a), count);
        else
            p.samples = compose(sim_c, r, count);
    } else {
        // The timeline is the GPU side of a request; what the measured
        // latency adds (Python, the first launch, the final synchronize, the
        // profiler's own inflation) is taken from the measured alone P99.
        p.host_overhead_ms = c.hp_p99_alone - percentile(sim_a, 99);
        p.samples = compose(sim_c, {p.host_overhead_ms}, count);
    }
    if (llm) {
        p.measured_dropped = c.dropped_contended;
        p.predicted_dropped = static_cast<double>(hc.dropped);
    }
    p.measured_p99 = c.hp_p99_contended;
    p.predicted_p99 = weighted_percentile({p.samples}, 99);
    p.error_pct = error_pct(p.predicted_p99, p.measured_p99);
    if (c.hp_p50_contended) {
        p.measured_p50 = *c.hp_p50_contended;
        p.predicted_p50 = weighted_percentile({p.samples}, 50);
        p.p50_error_pct = error_pct(*p.predicted_p50, *p.measured_p50);
    }
    if (llm && c.tpot_p99_contended && !c.tpot_alone_ms.empty()) {
        const auto r = residuals(c.tpot_alone_ms, ha.tpot_ms, true);
        p.tpot_samples =
            compose(hc.tpot_ms, r,
                    c.tpot_contended_ms.empty() ? static_cast<double>(hc.tpot_ms.size())
                                                : static_cast<double>(c.tpot_contended_ms.size()));
        p.measured_tpot = *c.tpot_p99_contended;
        p.predicted_tpot = weighted_percentile({p.tpot_samples}, 99);
        p.tpot_error_pct = error_pct(*p.predicted_tpot, *p.measured_tpot);
    }
    if (c.lp_contended && !p.lp_scale_fitted && c.lp_alone) {
        const auto lp_a = simulate(case_scenario(c, s, hp_tl, lp_tl, Phase::kLpAlone));
        const double a = lp_a.workloads.front().it_per_s;
        const double b = cont.workloads.back().it_per_s;
        p.measured_lp = *c.lp_contended;
        p.predicted_lp = *c.lp_alone * (a > 0 ? b / a : 0.0);
        p.lp_error_pct = error_pct(*p.predicted_lp, *p.measured_lp);
    }
    return p;
}

std::vector<GroupPrediction> pool(const std::vector<Case>& cases,
                                  const std::vector<Prediction>& preds, bool all_runs) {
    std::vector<std::string> order;
    for (const auto& c : cases) {
        if (std::find(order.begin(), order.end(), c.group) == order.end())
            order.push_back(c.group);
    }
    std::vector<GroupPrediction> out;
    for (const auto& name : order) {
        std::vector<std::size_t> all, used;
        for (std::size_t i = 0; i < cases.size(); ++i) {
            if (cases[i].group == name)
                all.push_back(i);
        }
        for (auto i : all) {
            if (!preds[i].calibration)
                used.push_back(i);
        }
        GroupPrediction g;
        g.group = name;
        g.tp = cases[all.front()].tp;
        g.metric = cases[all.front()].metric();
        g.calibration = used.empty();
        if (used.empty())
            used = all;
        g.host_probe = std::all_of(used.begin(), used.end(),
                                   [&](std::size_t i) { return cases[i].has_host_probe(); });
        g.design =
            std::all_of(used.begin(), used.end(), [&](std::size_t i) { return cases[i].design; });
        g.validated = !g.calibration && (all_runs || (g.host_probe && !g.design));
        std::vector<double> measured, tpot;
        std::vector<Samples> predicted, predicted_tpot;
        std::vector<double> run_measured, run_predicted, run_tpot;
        bool lists = true, tpots = true;
        for (auto i : used) {
            const auto& c = cases[i];
            const auto& p = preds[i];
            g.runs.push_back(c.name);
            lists = lists && !c.hp_contended_ms.empty();
            measured.insert(measured.end(), c.hp_contended_ms.begin(), c.hp_contended_ms.end());
            predicted.push_back(p.samples);
            run_measured.push_back(p.measured_p99);
            run_predicted.push_back(p.predicted_p99);
            tpots = tpots && p.measured_tpot && !c.tpot_contended_ms.empty();
            tpot.insert(tpot.end(), c.tpot_contended_ms.begin(), c.tpot_contended_ms.end());
            predicted_tpot.push_back(p.tpot_samples);
            for (auto e : {p.lp_error_pct})
                if (e)
                    g.max_lp_error_pct = std::max(g.max_lp_error_pct.value_or(0.0), *e);
            if (p.p50_error_pct)
                g.max_p50_error_pct = std::max(g.max_p50_error_pct.value_or(0.0), *p.p50_error_pct);
        }
        g.measured_requests = measured.size();
        if (used.size() == 1 || !lists) {
            // One run (or runs without their requests): the runs' own P99s.
            g.measured_p99 = median(run_measured);
            g.predicted_p99 = median(run_predicted);
        } else {
            g.measured_p99 = linear_percentile(measured, 99);
            g.predicted_p99 = weighted_percentile(predicted, 99);
        }
        g.error_pct = error_pct(g.predicted_p99, g.measured_p99);
        g.measured_min = *std::min_element(run_measured.begin(), run_measured.end());
        g.measured_max = *std::max_element(run_measured.begin(), run_measured.end());
        g.predicted_min = *std::min_element(run_predicted.begin(), run_predicted.end());
        g.predicted_max = *std::max_element(run_predicted.begin(), run_predicted.end());
        if (tpots) {
            g.measured_tpot = linear_percentile(tpot, 99);
            g.predicted_tpot = weighted_percentile(predicted_tpot, 99);
            if (used.size() == 1) {
                g.measured_tpot = *preds[used.front()].measured_tpot;
                g.predicted_tpot = *preds[used.front()].predicted_tpot;
            }
            g.tpot_error_pct = error_pct(*g.predicted_tpot, *g.measured_tpot);
        }
        out.push_back(g);
    }
    return out;
}

std::vector<std::pair<int, std::optional<double>>> error_by_tp(
    const std::vector<GroupPrediction>& groups) {
    std::vector<std::pair<int, std::optional<double>>> out;
    for (const auto& g : groups) {
        if (g.calibration)
            continue;
        auto it =
            std::find_if(out.begin(), out.end(), [&](const auto& e) { return e.first == g.tp; });
        if (it == out.end()) {
            out.emplace_back(g.tp, std::nullopt);
            it = std::prev(out.end());
        }
        if (g.validated)
            it->second = std::max(it->second.value_or(0.0), g.error_pct);
    }
    std::sort(out.begin(), out.end(),
              [](const auto& a, const auto& b) { return a.first < b.first; });
    return out;
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
    o << p.name << ": " << p.metric << " measured " << p.measured_p99 << " ms, predicted "
      << p.predicted_p99 << " ms (host time "
      << (p.host_from_requests ? "from the alone phase's requests, median "
                               : "a constant from the alone P99, ")
      << p.host_overhead_ms << " ms";
    if (p.lp_scale_fitted)
        o << "; LP durations x" << p.lp_scale << " fitted to the measured LP throughput";
    if (p.hp_host_ratio)
        o << "; host probe contended/alone: HP x" << std::setprecision(3) << *p.hp_host_ratio
          << ", LP x" << *p.lp_host_ratio << std::setprecision(2);
    if (p.hp_host_min)
        o << "; HP per request " << (p.host_from_issue ? "by its decode issue time" : "by time")
          << " x" << *p.hp_host_min << " .. x" << *p.hp_host_max;
    o << ")\n";
    if (p.tp > 1 && p.collectives == Collectives::kRing)
        o << "  TP " << p.tp << ": one stream per rank and GPU, collectives as rings of "
          << 2 * (p.tp - 1) << " steps, a rank stepping only while on its GPU\n";
    else if (p.tp > 1)
        o << "  TP " << p.tp << ": one stream per rank and GPU, collectives end when the last rank "
          << "arrives (what-if: --arrival-collectives)\n";
    for (const auto& n : p.notes)
        o << "  assumed: " << n << "\n";
    if (p.predicted_dropped && (p.measured_dropped.value_or(0) > 0 || *p.predicted_dropped > 0))
        o << "  dropped (the server gave up): measured "
          << (p.measured_dropped ? std::to_string(static_cast<long>(*p.measured_dropped))
                                 : std::string("n/a"))
          << ", predicted " << static_cast<long>(*p.predicted_dropped) << "\n";
    if (p.calibration)
        o << "  calibration case: " << p.metric << " fitted, error " << p.error_pct
          << " % (not a validation)\n";
    else
        o << "  this run alone: " << std::setprecision(1) << p.error_pct << " % off\n";
    o << std::setprecision(2);
    if (p.p50_error_pct)
        o << "  P50 measured " << *p.measured_p50 << " ms, predicted " << *p.predicted_p50
          << " ms: " << std::setprecision(1) << *p.p50_error_pct << " % off\n"
          << std::setprecision(2);
    if (p.tpot_error_pct)
        o << "  TPOT P99 measured " << *p.measured_tpot << " ms, predicted " << *p.predicted_tpot
          << " ms: " << std::setprecision(1) << *p.tpot_error_pct << " % off\n"
          << std::setprecision(2);
    if (p.lp_error_pct)
        o << "  LP throughput measured " << *p.measured_lp << ", predicted " << *p.predicted_lp
          << ": " << std::setprecision(1) << *p.lp_error_pct << " % off\n";
    return o.str();
}

std::string format_group(const GroupPrediction& g, bool what_if) {
    const char* error = what_if       ? "what-if error"
                        : g.validated ? "validation error"
                        : g.design    ? "error"
                                      : "GPU-only error";
    std::ostringstream o;
    o << std::fixed << std::setprecision(2);
    o << g.group << " (" << g.runs.size() << (g.runs.size() == 1 ? " run" : " runs");
    if (g.runs.size() > 1)
        o << " pooled, " << g.measured_requests << " requests";
    o << "): " << g.metric << " measured " << g.measured_p99 << " ms";
    if (g.runs.size() > 1)
        o << " (runs " << g.measured_min << " .. " << g.measured_max << ")";
    o << ", predicted " << g.predicted_p99 << " ms";
    if (g.runs.size() > 1)
        o << " (runs " << g.predicted_min << " .. " << g.predicted_max << ")";
    o << "\n";
    if (g.calibration)
        o << "  calibration case (not a validation): " << std::setprecision(1) << g.error_pct
          << " %\n";
    else
        o << "  " << error << ": " << std::setprecision(1) << g.error_pct << " %"
          << (g.validated ? ""
              : g.design  ? " (the model was chosen on these runs; not counted)"
                          : " (no host probe: host speed unknown; not counted)")
          << "\n";
    o << std::setprecision(2);
    if (g.tpot_error_pct)
        o << "  TPOT P99 measured " << *g.measured_tpot << " ms, predicted " << *g.predicted_tpot
          << " ms: " << error << " (TPOT P99): " << std::setprecision(1) << *g.tpot_error_pct
          << " %\n";
    return o.str();
}

nlohmann::json to_json(const Prediction& p) {
    nlohmann::json j{{"case", p.name},
                     {"group", p.group},
                     {"metric", p.metric},
                     {"hp_p99_measured_ms", p.measured_p99},
                     {"hp_p99_predicted_ms", p.predicted_p99},
                     {"hp_p99_error_pct", p.error_pct},
                     {"calibration_case", p.calibration},
                     {"host_from_requests", p.host_from_requests},
                     {"host_offset_ms", p.host_overhead_ms},
                     {"lp_scale", p.lp_scale},
                     {"lp_scale_fitted", p.lp_scale_fitted},
                     {"host_ratio_hp",
                      p.hp_host_ratio ? nlohmann::json(*p.hp_host_ratio) : nlohmann::json(nullptr)},
                     {"host_ratio_lp",
                      p.lp_host_ratio ? nlohmann::json(*p.lp_host_ratio) : nlohmann::json(nullptr)},
                     {"host_timed", p.hp_host_min.has_value()}};
    if (p.hp_host_min)
        j["host_ratio_hp_per_request"] = {*p.hp_host_min, *p.hp_host_max};
    if (p.tp > 1) {
        j["tp"] = p.tp;
        j["collectives"] = p.collectives == Collectives::kRing ? "ring" : "arrival";
        j["host_from_issue"] = p.host_from_issue;
        j["assumed"] = p.notes;
    }
    if (p.predicted_dropped) {
        j["dropped_measured"] =
            p.measured_dropped ? nlohmann::json(*p.measured_dropped) : nlohmann::json(nullptr);
        j["dropped_predicted"] = *p.predicted_dropped;
    }
    if (p.p50_error_pct) {
        j["hp_p50_measured_ms"] = *p.measured_p50;
        j["hp_p50_predicted_ms"] = *p.predicted_p50;
        j["hp_p50_error_pct"] = *p.p50_error_pct;
    }
    if (p.tpot_error_pct) {
        j["tpot_p99_measured_ms"] = *p.measured_tpot;
        j["tpot_p99_predicted_ms"] = *p.predicted_tpot;
        j["tpot_p99_error_pct"] = *p.tpot_error_pct;
    }
    if (p.lp_error_pct) {
        j["lp_it_per_s_measured"] = *p.measured_lp;
        j["lp_it_per_s_predicted"] = *p.predicted_lp;
        j["lp_error_pct"] = *p.lp_error_pct;
    }
    return j;
}

nlohmann::json to_json(const GroupPrediction& g) {
    nlohmann::json j{{"group", g.group},
                     {"metric", g.metric},
                     {"runs", g.runs},
                     {"calibration", g.calibration},
                     {"host_probe", g.host_probe},
                     {"design", g.design},
                     {"validated", g.validated},
                     {"measured_requests", g.measured_requests},
                     {"p99_measured_ms", g.measured_p99},
                     {"p99_predicted_ms", g.predicted_p99},
                     {"p99_error_pct", g.error_pct},
                     {"p99_measured_runs_ms", {g.measured_min, g.measured_max}},
                     {"p99_predicted_runs_ms", {g.predicted_min, g.predicted_max}}};
    if (g.tpot_error_pct) {
        j["tpot_p99_measured_ms"] = *g.measured_tpot;
        j["tpot_p99_predicted_ms"] = *g.predicted_tpot;
        j["tpot_p99_error_pct"] = *g.tpot_error_pct;
    }
    j["tp"] = g.tp;
    if (g.max_lp_error_pct)
        j["lp_error_pct_max"] = *g.max_lp_error_pct;
    if (g.max_p50_error_pct)
        j["p50_error_pct_max"] = *g.max_p50_error_pct;
    return j;
}

}  // namespace amdqp::sim
