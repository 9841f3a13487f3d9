// SPDX-License-Identifier: MIT
// The adaptive idle hysteresis of one queue.
//
// A request is a burst of kernels separated by gaps (CPU launch time of the
// framework: ResNet-18 bs1 up to ~0.4 ms, GPT-2 decode ~2 ms, eager MoE
// decode ~2.9 ms on an H200), and requests are separated by idle periods
// (tens of ms). Resuming lower-priority work inside a burst costs the next
// kernel a preemption; staying suspended long after it wastes their time.
//
// Estimator: for each burst the largest gap inside it is remembered (a gap
// is the time from "read index caught up" to the next doorbell while the
// queue still counted as busy), the last `window` bursts are kept, and
//
//     H = clamp(factor * quantile_q(largest gaps of recent bursts), min, max)
//
// (H = initial while nothing was learned). The per-burst maximum, not
// every gap, is what is kept because one long gap is enough to be wrong:
// a request of 657 kernels with one 2.9 ms gap needs H > 2.9 ms even
// though its p99 gap is 0.1 ms. q = 1 (the default) takes the largest of the
// window; q < 1 forgets rare outliers and resumes inside them.
//
// Misjudgements feed back: when a doorbell comes within relapse_factor * H
// after the hysteresis ran out, that idle period was a gap of a burst that
// the policy resumed inside; it is recorded as such, so H grows past it at
// once. Old bursts leave the window, so H comes back down when the
// workload's gaps shrink. The floor `min` protects the first bursts of a
// queue, and rare outliers: an estimator cannot learn a gap it has not yet
// seen.
#ifndef AMDQP_POLICY_GAP_ESTIMATOR_HPP
#define AMDQP_POLICY_GAP_ESTIMATOR_HPP

#include <chrono>
#include <cstddef>
#include <vector>

#include "amdqp/policy/config.hpp"

namespace amdqp::policy {

class GapEstimator {
  public:
    explicit GapEstimator(const Config& cfg);

    // A gap inside the burst in progress.
    void gap(std::chrono::nanoseconds g);
    // The burst ended (the hysteresis ran out).
    void end_burst();
    // A misjudged idle period: becomes a burst of its own with this gap.
    void relapse(std::chrono::nanoseconds g);

    std::chrono::nanoseconds hysteresis() const { return current_; }

  private:
    void push(std::chrono::nanoseconds largest);
    void recompute();

    std::chrono::nanoseconds min_, max_;
    double factor_, quantile_;
    std::size_t window_;
    std::vector<std::chrono::nanoseconds> ring_;  // largest gap per burst
    std::size_t next_ = 0;
    std::chrono::nanoseconds burst_max_{-1};  // -1: no gap in this burst yet
    std::chrono::nanoseconds current_;
};

}  // namespace amdqp::policy

#endif
