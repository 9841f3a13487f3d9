// SPDX-License-Identifier: MIT
#include "pyrandom.hpp"

#include <algorithm>
#include <cmath>

namespace amdqp::sim {
namespace {
constexpr std::size_t kN = 624, kM = 397;
}

PyRandom::PyRandom(std::uint64_t seed) {
    // init_genrand(19650218), then init_by_array(the seed's 32-bit words,
    // least significant first; [0] for 0), as CPython's random_seed does.
    std::vector<std::uint32_t> key;
    for (std::uint64_t v = seed; v != 0; v >>= 32)
        key.push_back(static_cast<std::uint32_t>(v & 0xffffffffu));
    if (key.empty())
        key.push_back(0);
    mt_[0] = 19650218u;
    for (std::size_t i = 1; i < kN; ++i)
        mt_[i] = 1812433253u * (mt_[i - 1] ^ (mt_[i - 1] >> 30)) + static_cast<std::uint32_t>(i);
    std::size_t i = 1, j = 0;
    for (std::size_t k = std::max(kN, key.size()); k > 0; --k) {
        mt_[i] = (mt_[i] ^ ((mt_[i - 1] ^ (mt_[i - 1] >> 30)) * 1664525u)) + key[j] +
                 static_cast<std::uint32_t>(j);
        ++i;
        ++j;
        if (i >= kN) {
            mt_[0] = mt_[kN - 1];
            i = 1;
        }
        if (j >= key.size())
            j = 0;
    }
    for (std::size_t k = kN - 1; k > 0; --k) {
        mt_[i] = (mt_[i] ^ ((mt_[i - 1] ^ (mt_[i - 1] >> 30)) * 1566083941u)) -
                 static_cast<std::uint32_t>(i);
        ++i;
        if (i >= kN) {
            mt_[0] = mt_[kN - 1];
            i = 1;
        }
    }
    mt_[0] = 0x80000000u;
    i_ = kN;
}

std::uint32_t PyRandom::next() {
    constexpr std::uint32_t kUpper = 0x80000000u, kLower = 0x7fffffffu, kMatrix = 0x9908b0dfu;
    if (i_ >= kN) {
        for (std::size_t k = 0; k < kN; ++k) {
            const std::uint32_t y = (mt_[k] & kUpper) | (mt_[(k + 1) % kN] & kLower);
            mt_[k] = mt_[(k + kM) % kN] ^ (y >> 1) ^ ((y & 1u) ? kMatrix : 0u);
        }
        i_ = 0;
    }
    std::uint32_t y = mt_[i_++];
    y ^= y >> 11;
    y ^= (y << 7) & 0x9d2c5680u;
    y ^= (y << 15) & 0xefc60000u;
    y ^= y >> 18;
    return y;
}

double PyRandom::random() {
    const std::uint32_t a = next() >> 5, b = next() >> 6;
    return (a * 67108864.0 + b) * (1.0 / 9007199254740992.0);
}

double PyRandom::expovariate(double lambd) {
    return -std::log(1.0 - random()) / lambd;
}

std::vector<double> arrival_schedule(double rate, double span_s, bool poisson, std::uint64_t seed) {
    PyRandom rng(seed);
    std::vector<double> out;
    double t = 0.0;
    if (!(rate > 0))
        return out;
    while (true) {
        t += poisson ? rng.expovariate(rate) : 1.0 / rate;
        if (t >= span_s)
            return out;
        out.push_back(t);
    }
}

}  // namespace amdqp::sim
