// SPDX-License-Identifier: MIT
// MI308X predictions: the dual-model test under amdqpd across scheduler
// costs, next to what AMD users choose instead (CU masks, CPX), and a
// tensor-parallel case (one call for N GPUs vs N calls).
#ifndef AMDQP_SIM_SWEEP_HPP
#define AMDQP_SIM_SWEEP_HPP

#include <nlohmann/json.hpp>
#include <optional>
#include <string>

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
};

// Runs everything; the JSON is what REPORT.md plots.
nlohmann::json sweep(const SweepOptions& o);
std::string sweep_text(const nlohmann::json& j);

// A copy of @t with a collective (class nccl, @dur) after every @every kernels.
Timeline with_collectives(const Timeline& t, std::size_t every, Ns dur);

}  // namespace amdqp::sim

#endif
