// SPDX-License-Identifier: MIT
// Validation against measured runs (experiments/results/, the result and
// timeline formats of Documentation/experiments.rst): a result JSON plus the
// folder of its workloads' isolated kernel timelines; the contended phase is
// simulated and its high-priority tail compared. Runs of one test on one GPU
// model (repeats of a command) are pooled into one validation case.
#ifndef AMDQP_SIM_VALIDATE_HPP
#define AMDQP_SIM_VALIDATE_HPP

#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

#include "evaluate.hpp"

namespace amdqp::sim {

enum class Experiment {
    kDualModel,  // experiments/dual_model: open-loop HP requests at a fixed rate
    kLlmTp,      // experiments/llm_tp: an LLM server (Poisson arrivals, TTFT/TPOT)
};

// An open-loop task other than the HP one (bert3's "normal" task).
struct ExtraTask {
    Timeline timeline;
    double rate_per_s = 0;
    int priority = 7;
    std::optional<double> host_ratio;  // see Case::hp_host_ratio
};

struct Case {
    std::string name;   // the result file's stem
    std::string group;  // "<experiment> <preset> on <device>": runs pooled together
    std::string device;
    Experiment experiment = Experiment::kDualModel;
    Timeline hp, lp;
    std::vector<ExtraTask> others;
    double hp_rate = 20;
    // llm_tp: the arrival offsets (s from the phase's start) the driver drew
    // for each phase, the phase timing and the tokens after the first.
    std::vector<double> hp_arrivals_alone, hp_arrivals_contended;
    double warmup_s = 0, duration_s = 0;
    int new_tokens = 0;
    double lp_items = 1;  // tokens (images) per LP step, for the record only
    // Measured, ms: the HP latency (dual_model) or TTFT (llm_tp).
    double hp_p99_alone = 0, hp_p99_contended = 0;
    std::vector<double> hp_alone_ms, hp_contended_ms;  // every request, when recorded
    std::optional<double> hp_p50_contended;
    std::vector<double> tpot_alone_ms, tpot_contended_ms;  // llm_tp
    std::optional<double> tpot_p99_alone, tpot_p99_contended;
    std::optional<double> lp_alone, lp_contended;  // it/s (tokens/s for llm_tp)
    // The in-situ host probe (experiments/common/host_probe.py): a job's
    // median probe time contended / alone, how much slower its host path
    // ran in the contended phase. Measured next to, not fitted to, the
    // latencies; absent in runs of the earlier protocols.
    std::optional<double> hp_host_ratio, lp_host_ratio;
    // llm_tp, probe samples with their times: the HP's host factor for each
    // contended arrival (the median of the kHostNeighbours samples nearest
    // it in time, over the alone median): the host's speed drifts within a
    // phase, and slow stretches are when requests queue.
    std::vector<double> hp_host_factors;
    // Tensor parallelism (llm_tp config.tp): every rank's timeline of
    // both jobs (tp.hpp: peer waits stripped, missing ranks the mean of the
    // present ones, gaps fitted to the wall time); each job's rank r on
    // GPU r. Empty at TP 1 (hp and lp then hold rank 0's).
    int tp = 1;
    std::vector<Timeline> hp_ranks, lp_ranks;
    // A job's host ratio per rank where the result probed every rank
    // (phase task "host_probe_ranks"); otherwise rank 0's for all.
    std::vector<double> hp_rank_ratios, lp_rank_ratios;
    // TP > 1: each contended HP request's decode issue time over the alone
    // median (per arrival, as hp_host_factors), where the result has them.
    std::vector<double> hp_issue_factors;
    // What the loader assumed (missing ranks, rank 0's probe for all).
    std::vector<std::string> notes;
    // llm_tp: the driver stops serving this long after a phase's start
    // (server.py: warmup + duration + max(10 s, duration)) and counts the
    // rest of the schedule as dropped, and drops a request that waited
    // longer than max_queue_delay_s; measured drops of the contended phase.
    double give_up_s = 0;
    double max_queue_delay_s = 0;  // config.max_queue_delay_s (0: none)
    std::optional<double> dropped_contended;
    // The model's structure was chosen on this run (--design-run): it is
    // predicted and listed in a group of its own, never counted as a
    // validation (unless every run counts).
    bool design = false;
    bool has_host_probe() const;
    std::string metric() const { return experiment == Experiment::kLlmTp ? "TTFT P99" : "HP P99"; }
};

inline constexpr std::size_t kHostNeighbours = 5;
// The factor of each time in @at_s: the median of the @k samples (times
// @t_s, values @us) nearest it, over @alone_median.
std::vector<double> host_factors(const std::vector<double>& t_s, const std::vector<double>& us,
                                 const std::vector<double>& at_s, double alone_median,
                                 std::size_t k = kHostNeighbours);

// Throws std::runtime_error when the files do not make a case.
Case load_case(const std::string& result_path, const std::string& timelines_dir);

struct CaseSetup {
    DeviceParams device;
    double hp_occupancy = 0.1, lp_occupancy = 1.0;
    Ns duration = 60 * kSec;  // dual_model: simulated time per phase
    // What-if: every job's launches this much slower in the contended
    // phase (host contention, which the device models leave out); 1: none.
    double launch_stretch = 1.0;
    // Each job's launches slowed by its measured host ratio in the
    // contended phase (runs that carry the host probe); overridden by a
    // launch_stretch other than 1.
    bool host_probe = true;
    // What-if (dual_model): host residuals overlap the GPU's contention
    // excess instead of adding to it (compose_overlapped in validate.cpp).
    bool host_overlap = false;
    // What-if (llm_tp): the alone phase's host noise, per service, goes
    // through the contended phase's queue (queue_noise.hpp) instead of the
    // alone TTFT residuals being added to the simulated contended TTFTs.
    bool queue_noise = false;
    // TP > 1: the HP's host factors from its decode issue times
    // (Case::hp_issue_factors) instead of the host probe's.
    bool tp_issue_host = true;
    // TP > 1: how collectives progress (scenario.hpp); kArrival is the
    // model frozen in 55d0323, a what-if since session 11.
    Collectives collectives = Collectives::kRing;
};

// A predicted distribution: every value stands for @weight requests.
struct Samples {
    std::vector<double> values;
    double weight = 1.0;
};
// Value below which a share q (0..100) of the weight lies (nearest rank).
double weighted_percentile(const std::vector<Samples>& s, double q);
// Every contended value with every host residual, for a what-if where the
// two overlap: @alone + max(value - @alone, residual), a negative residual
// added as is; each value stands for @count / values requests.
Samples compose_overlapped(const std::vector<double>& contended,
                           const std::vector<double>& residuals, double alone, double count);
// The drivers' percentile: linear between closest ranks (numpy's default).
double linear_percentile(std::vector<double> v, double q);

struct Prediction {
    std::string name, group, metric;
    double measured_p99 = 0, predicted_p99 = 0, error_pct = 0;
    std::optional<double> measured_p50, predicted_p50, p50_error_pct;
    std::optional<double> measured_tpot, predicted_tpot, tpot_error_pct;  // TPOT P99 (llm_tp)
    std::optional<double> measured_lp, predicted_lp, lp_error_pct;
    // Host time: from the alone phase's per-request latencies (each minus
    // the simulated alone latency, added to every simulated contended one),
    // or, where a result has no per-request latencies, one constant: the
    // measured alone P99 minus the simulated one.
    bool host_from_requests = false;
    double host_overhead_ms = 0;                         // the constant, or the residuals' median
    std::optional<double> hp_host_ratio, lp_host_ratio;  // as applied (medians)
    std::optional<double> hp_host_min, hp_host_max;      // per request, when timed
    double lp_scale = 1.0;         // LP durations stretched to the measured device's speed
    bool lp_scale_fitted = false;  // then LP throughput is no validation
    bool calibration = false;      // this case's HP P99 was fitted
    int tp = 1;
    Collectives collectives = Collectives::kRing;  // as simulated (TP > 1)
    bool host_from_issue = false;    // HP host factors from decode issue times (TP > 1)
    std::vector<std::string> notes;  // Case::notes
    std::optional<double> measured_dropped, predicted_dropped;  // llm_tp, contended
    Samples samples, tpot_samples;  // predicted, for pooling; weights sum to the measured count
};

Prediction predict(const Case& c, const CaseSetup& s);
DualModel case_model(const Case& c, const CaseSetup& s, double* lp_scale, bool* fitted);

// The runs of one group together: the measured contended requests of all
// runs pooled against the predicted distributions of all runs pooled
// (each run weighted by its number of measured requests), and the runs'
// own spread.
struct GroupPrediction {
    std::string group, metric;
    int tp = 1;
    std::vector<std::string> runs;
    bool calibration = false;  // only the calibration run: not a validation
    bool host_probe = false;   // every run carries the host probe
    bool design = false;       // runs the model was chosen on
    // Counts towards the validation error: not the calibration, and (unless
    // all runs count) its runs' host speed measured by the probe and the
    // model not chosen on them.
    bool validated = false;
    double measured_p99 = 0, predicted_p99 = 0, error_pct = 0;
    double measured_min = 0, measured_max = 0;    // the runs' own measured P99s
    double predicted_min = 0, predicted_max = 0;  // and predicted ones
    std::size_t measured_requests = 0;
    std::optional<double> measured_tpot, predicted_tpot, tpot_error_pct;
    std::optional<double> max_lp_error_pct, max_p50_error_pct;
};
// @all_runs: groups without the host probe count as validations too.
std::vector<GroupPrediction> pool(const std::vector<Case>& cases,
                                  const std::vector<Prediction>& preds, bool all_runs = false);
// Per tensor-parallel degree: the largest error of the groups at that TP
// that count, or nothing where none does (design runs, no host probe).
std::vector<std::pair<int, std::optional<double>>> error_by_tp(
    const std::vector<GroupPrediction>& groups);

// Which parameter a calibration fits: timeslice slice length (us) or the
// HWS co-run rate.
enum class Knob { kSliceUs, kCorunRate };
Knob default_knob(DeviceKind k);
std::string_view to_string(Knob k);
// Fits @knob in @s.device so that the case's predicted HP P99 matches the
// measured one (bisection; the P99 is monotonic in both knobs). Returns the value.
double calibrate(const Case& c, CaseSetup& s, Knob knob);

std::string format_prediction(const Prediction& p);
// @what_if: the predictions came from a what-if (validate
// --launch-stretch), so the errors are not called validation errors.
std::string format_group(const GroupPrediction& g, bool what_if = false);
nlohmann::json to_json(const Prediction& p);
nlohmann::json to_json(const GroupPrediction& g);

}  // namespace amdqp::sim

#endif
