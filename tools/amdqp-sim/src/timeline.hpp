// SPDX-License-Identifier: MIT
// Kernel timelines: what one request (or one batch iteration) of a
// workload submits to the GPU, kernel by kernel, as a profiler recorded it.
// Loaders (timeline_json.cpp for the contract's JSON; a rocprof one later)
// produce this; the simulator only consumes it.
#ifndef AMDQP_SIM_TIMELINE_HPP
#define AMDQP_SIM_TIMELINE_HPP

#include <cstdint>
#include <string>
#include <vector>

namespace amdqp::sim {

using Ns = std::int64_t;
inline constexpr Ns kUs = 1000;
inline constexpr Ns kMs = 1000 * kUs;
inline constexpr Ns kSec = 1000 * kMs;

enum class KernelClass : std::uint8_t { kOther, kGemm, kNccl };

struct Kernel {
    Ns start = 0;  // recorded start, relative to the request's first kernel
    Ns dur = 0;    // recorded duration on the GPU the trace came from
    KernelClass cls = KernelClass::kOther;
};

struct Request {
    std::vector<Kernel> kernels;
    // GPU span: first start to last end.
    Ns span() const;
    Ns busy() const;  // sum of kernel durations
};

struct Timeline {
    std::string workload;
    std::string device;
    int batch = 1;
    double period_s = 0.0;  // 0: back to back
    int rank = 0;
    int tp = 1;
    std::vector<Request> requests;
    std::vector<double> request_wall_us;  // measured unprofiled, when the driver recorded it
};

// Every kernel duration multiplied by @factor, start offsets (submission
// times) kept: a trace taken on one GPU used as the shape of another.
Timeline scale_durations(const Timeline& t, double factor);

// The profiler inflates the host's launch gaps (a profiled ResNet-18 bs1
// request spans ~1.5-2x its unprofiled wall time on an H100; kernel
// durations barely move). When the driver recorded unprofiled wall times
// (request_wall_us), every idle gap shrinks by one factor so that the
// median request spans the median wall time; otherwise, or when the trace
// is not longer, the timeline is returned as is.
Timeline fit_to_wall(const Timeline& t);

}  // namespace amdqp::sim

#endif
