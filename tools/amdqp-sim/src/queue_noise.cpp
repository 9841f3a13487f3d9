// SPDX-License-Identifier: MIT
#include "queue_noise.hpp"

#include <algorithm>
#include <limits>
#include <stdexcept>

namespace amdqp::sim {

FifoSplit fifo_split(const std::vector<double>& arrivals_s, const std::vector<double>& ttft_ms,
                     const std::vector<double>& total_ms) {
    if (arrivals_s.size() != ttft_ms.size() || arrivals_s.size() != total_ms.size())
        throw std::invalid_argument("fifo_split: arrivals, TTFTs and totals differ in count");
    FifoSplit s;
    double prev_end = -std::numeric_limits<double>::infinity();
    for (std::size_t i = 0; i < arrivals_s.size(); ++i) {
        const double arrival = arrivals_s[i] * 1e3;
        // A server starts a request when the previous one ends, but never
        // after its first token (timer noise).
        const double start = std::clamp(prev_end, arrival, arrival + ttft_ms[i]);
        const double end = arrival + total_ms[i];
        s.wait_ms.push_back(start - arrival);
        s.first_ms.push_back(arrival + ttft_ms[i] - start);
        s.service_ms.push_back(end - start);
        prev_end = end;
    }
    return s;
}

std::vector<double> fifo_replay(const std::vector<double>& arrivals_s, const FifoSplit& s,
                                const std::vector<double>& residuals_ms, std::size_t offset) {
    if (residuals_ms.empty())
        throw std::invalid_argument("fifo_replay: no residuals");
    std::vector<double> ttft;
    double prev_end = -std::numeric_limits<double>::infinity();
    for (std::size_t i = 0; i < arrivals_s.size(); ++i) {
        const double service = s.service_ms[i];
        const double r = std::max(-service, residuals_ms[(i + offset) % residuals_ms.size()]);
        const double first = service > 0 ? s.first_ms[i] * (1.0 + r / service) : s.first_ms[i];
        const double arrival = arrivals_s[i] * 1e3;
        const double start = std::max(arrival, prev_end);
        ttft.push_back(start - arrival + first);
        prev_end = start + service + r;
    }
    return ttft;
}

std::vector<double> fifo_replay_all(const std::vector<double>& arrivals_s, const FifoSplit& s,
                                    const std::vector<double>& residuals_ms) {
    std::vector<double> all;
    all.reserve(arrivals_s.size() * residuals_ms.size());
    for (std::size_t k = 0; k < residuals_ms.size(); ++k) {
        const auto t = fifo_replay(arrivals_s, s, residuals_ms, k);
        all.insert(all.end(), t.begin(), t.end());
    }
    return all;
}

}  // namespace amdqp::sim
