// SPDX-License-Identifier: MIT
#include "amdqp/policy/gap_estimator.hpp"

#include <algorithm>
#include <cmath>

namespace amdqp::policy {

GapEstimator::GapEstimator(const Config& cfg)
    : min_(cfg.hysteresis_min),
      max_(cfg.hysteresis_max),
      factor_(cfg.hysteresis_factor),
      quantile_(cfg.hysteresis_quantile),
      window_(cfg.hysteresis_window),
      current_(cfg.hysteresis_initial) {
    ring_.reserve(window_);
}

void GapEstimator::gap(std::chrono::nanoseconds g) {
    burst_max_ = std::max(burst_max_, std::max(g, std::chrono::nanoseconds{0}));
}

void GapEstimator::end_burst() {
    // A burst without gaps (one kernel) says nothing about gaps.
    if (burst_max_ >= std::chrono::nanoseconds{0})
        push(burst_max_);
    burst_max_ = std::chrono::nanoseconds{-1};
}

void GapEstimator::relapse(std::chrono::nanoseconds g) {
    push(std::max(g, std::chrono::nanoseconds{0}));
}

void GapEstimator::push(std::chrono::nanoseconds largest) {
    if (ring_.size() < window_) {
        ring_.push_back(largest);
    } else {
        ring_[next_] = largest;
        next_ = (next_ + 1) % window_;
    }
    recompute();
}

void GapEstimator::recompute() {
    std::vector<std::chrono::nanoseconds> sorted(ring_);
    // Nearest rank: the smallest value with at least q of the window at or
    // below it (q = 1: the maximum).
    auto rank = static_cast<std::size_t>(std::ceil(quantile_ * static_cast<double>(sorted.size())));
    rank = std::clamp<std::size_t>(rank, 1, sorted.size());
    std::nth_element(sorted.begin(), sorted.begin() + static_cast<std::ptrdiff_t>(rank - 1),
                     sorted.end());
    const auto q = sorted[rank - 1];
    const auto scaled = std::chrono::nanoseconds{
        static_cast<std::int64_t>(std::llround(factor_ * static_cast<double>(q.count())))};
    current_ = std::clamp(scaled, min_, max_);
}

}  // namespace amdqp::policy
