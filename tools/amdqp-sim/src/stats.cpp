// SPDX-License-Identifier: MIT
#include <algorithm>
#include <cmath>
#include <numeric>

#include "scenario.hpp"

namespace amdqp::sim {

double percentile(std::vector<double> v, double q) {
    if (v.empty())
        return 0.0;
    std::sort(v.begin(), v.end());
    const double rank = std::ceil(q / 100.0 * static_cast<double>(v.size()));
    const auto idx = static_cast<std::size_t>(std::clamp(rank, 1.0, static_cast<double>(v.size())));
    return v[idx - 1];
}

LatencyStats latency_stats(std::vector<double> ms) {
    LatencyStats s;
    s.n = ms.size();
    if (ms.empty())
        return s;
    s.p50 = percentile(ms, 50);
    s.p95 = percentile(ms, 95);
    s.p99 = percentile(ms, 99);
    s.max = *std::max_element(ms.begin(), ms.end());
    s.mean = std::accumulate(ms.begin(), ms.end(), 0.0) / static_cast<double>(ms.size());
    return s;
}

const WorkloadResult* RunResult::find(const std::string& name) const {
    for (const auto& w : workloads) {
        if (w.name == name)
            return &w;
    }
    return nullptr;
}

}  // namespace amdqp::sim
