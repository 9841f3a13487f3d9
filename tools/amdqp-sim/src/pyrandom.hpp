// SPDX-License-Identifier: MIT
// Python's random.Random (MT19937 seeded from an int) and the llm_tp
// driver's arrival schedule, so that a replay sees the requests the
// measured run saw (experiments/llm_tp/server.py: arrival_schedule).
#ifndef AMDQP_SIM_PYRANDOM_HPP
#define AMDQP_SIM_PYRANDOM_HPP

#include <array>
#include <cstdint>
#include <vector>

namespace amdqp::sim {

class PyRandom {
  public:
    // random.Random(seed) for an int seed >= 0.
    explicit PyRandom(std::uint64_t seed);
    double random();                   // random.random(): [0, 1), 53 bits
    double expovariate(double lambd);  // -log(1 - random()) / lambd

  private:
    std::uint32_t next();
    std::array<std::uint32_t, 624> mt_{};
    std::size_t i_ = 624;
};

// Offsets (s) in [0, span_s) of arrivals at @rate per second: exponential
// gaps drawn from PyRandom(@seed) when @poisson, else every 1/rate.
std::vector<double> arrival_schedule(double rate, double span_s, bool poisson, std::uint64_t seed);

}  // namespace amdqp::sim

#endif
