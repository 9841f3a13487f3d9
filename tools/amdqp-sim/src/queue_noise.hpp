// SPDX-License-Identifier: MIT
// Host noise through a one-at-a-time server's queue (llm_tp's HP server).
//
// A request's TTFT is its wait behind earlier requests plus its own time to
// the first token, and that wait is the rest of earlier services: a slow
// service lengthens every wait behind it, the more so the busier the
// server. So the alone phase's host noise is taken per *service* (measured
// minus simulated, the same arrivals replayed) and added to the contended
// phase's simulated services as they go through its queue.
#pragma once

#include <cstddef>
#include <vector>

namespace amdqp::sim {

// One FIFO server's requests split from their arrivals (s, ascending),
// TTFTs and arrival-to-last-token times (ms): the wait for the server, the
// time from its start to the first token, and its service (start to last
// token). The first request is taken to have found the server free (the
// warm-up requests before it are not recorded).
struct FifoSplit {
    std::vector<double> wait_ms, first_ms, service_ms;
};
FifoSplit fifo_split(const std::vector<double>& arrivals_s, const std::vector<double>& ttft_ms,
                     const std::vector<double>& total_ms);

// The TTFTs of @s's requests served again by the same server with
// @residuals_ms[(i + @offset) % size] added to request i's service, spread
// evenly over it (its first-token time gets its share); a service never
// goes below zero.
std::vector<double> fifo_replay(const std::vector<double>& arrivals_s, const FifoSplit& s,
                                const std::vector<double>& residuals_ms, std::size_t offset);

// fifo_replay once per offset, all TTFTs together: every request meets
// every residual once, and neighbouring requests neighbouring residuals
// (a slow stretch of the host stays a stretch).
std::vector<double> fifo_replay_all(const std::vector<double>& arrivals_s, const FifoSplit& s,
                                    const std::vector<double>& residuals_ms);

}  // namespace amdqp::sim
