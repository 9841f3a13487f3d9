// SPDX-License-Identifier: MIT
// Validation against measured runs (experiments/results/, contract format):
// a result JSON plus the folder of the isolated workloads' kernel
// timelines; the contended phase is simulated and its HP P99 compared.
#ifndef AMDQP_SIM_VALIDATE_HPP
#define AMDQP_SIM_VALIDATE_HPP

#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

#include "evaluate.hpp"

namespace amdqp::sim {

struct Case {
    std::string name;  // the result file's stem
    std::string device;
    Timeline hp, lp;
    double hp_rate = 20;
    double hp_p99_alone = 0, hp_p99_contended = 0;  // ms, measured
    std::optional<double> hp_p50_contended;         // ms, when the result has it
    std::optional<double> lp_alone, lp_contended;   // it/s, measured
};

// Throws std::runtime_error when the files do not make a dual-model case.
Case load_case(const std::string& result_path, const std::string& timelines_dir);

struct CaseSetup {
    DeviceParams device;
    double hp_occupancy = 0.1, lp_occupancy = 1.0;
    Ns duration = 60 * kSec;
};

struct Prediction {
    std::string name;
    double measured_p99 = 0, predicted_p99 = 0, error_pct = 0;
    std::optional<double> measured_p50, predicted_p50, p50_error_pct;
    std::optional<double> measured_lp, predicted_lp, lp_error_pct;
    double host_overhead_ms = 0;   // measured alone P99 - simulated alone P99
    double lp_scale = 1.0;         // LP durations stretched to the measured device's speed
    bool lp_scale_fitted = false;  // then LP throughput is no validation
    bool calibration = false;      // this case's HP P99 was fitted
};

Prediction predict(const Case& c, const CaseSetup& s);
DualModel case_model(const Case& c, const CaseSetup& s, double* lp_scale, bool* fitted);

// Which parameter a calibration fits: timeslice slice length (us) or the
// HWS co-run rate.
enum class Knob { kSliceUs, kCorunRate };
Knob default_knob(DeviceKind k);
std::string_view to_string(Knob k);
// Fits @knob in @s.device so that the case's predicted HP P99 matches the
// measured one (bisection; the P99 is monotonic in both knobs). Returns the value.
double calibrate(const Case& c, CaseSetup& s, Knob knob);

std::string format_prediction(const Prediction& p);
nlohmann::json to_json(const Prediction& p);

}  // namespace amdqp::sim

#endif
