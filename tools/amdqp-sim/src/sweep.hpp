// SPDX-License-Identifier: MIT
// MI308X predictions: the dual-model test under amdqpd across scheduler
// costs, next to what AMD users choose instead (CU masks, CPX), and a
// tensor-parallel case (one call for N GPUs vs N calls).
#ifndef AMDQP_SIM_SWEEP_HPP
#define AMDQP_SIM_SWEEP_HPP

#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

#include "validate.hpp"

namespace amdqp::sim {

enum class CostVary { kBoth, kUnmap, kCwsr };

struct SweepOptions {
    std::string calibration_result;    // the MI308X measured case (result JSON)
    std::string timelines_dir;         // its timelines (H200 shapes)
    std::optional<double> corun_rate;  // skip the calibration
    double hp_occupancy = 0.1;
    double min_cost_us = 10, max_cost_us = 5000;
    int points = 12;
    CostVary vary = CostVary::kBoth;
    Ns duration = 30 * kSec;
    int tp = 8;
    double tp_cost_us = 500;
    double goal_ms = 10.0, goal_ratio = 1.1;
    // The decode case: this timeline (one request = one decode step) as the
    // high-priority job at decode_rate steps/s next to the same LP job;
    // empty: none.
    std::string decode_timeline;
    double decode_rate = 20;
    std::vector<double> decode_costs_us{96, 522};
};

// DeepSeek-class decode next to the dual-model test's LP job on the same
// modelled device (@base: the fitted test 4 model): native, amdqpd
// suspending and confining at each of o.decode_costs_us, CU masks, CPX.
nlohmann::json decode_case(const SweepOptions& o, const DualModel& base);

// Runs everything; the JSON is what REPORT.md plots.
nlohmann::json sweep(const SweepOptions& o);
std::string sweep_text(const nlohmann::json& j);

// A copy of @t with a collective (class nccl, @dur) after every @every kernels.
Timeline with_collectives(const Timeline& t, std::size_t every, Ns dur);

}  // namespace amdqp::sim

#endif
