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

inline constexpr std::size_t kNoKernel = static_cast<std::size_t>(-1);

struct Request {
    std::vector<Kernel> kernels;
    // Kernels after which the host waits for the GPU (a .item() in the
    // middle of a request) before it submits the next one; ascending. The
    // request's end is not listed: open-loop requests always end that way.
    std::vector<std::size_t> syncs;
    // The kernel whose completion gives the first token (an LLM's prefill);
    // kNoKernel: none.
    std::size_t first_token = kNoKernel;
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

// Every kernel's start offset (its submission time) multiplied by
// @factor, durations and syncs kept: a host whose launches are that much
// slower (another process contending for the CPU or the launch path;
// experiments/dual_model/launch_cost.py measures it).
Timeline stretch_launches(const Timeline& t, double factor);

// The profiler inflates the host's launch gaps (a profiled ResNet-18 bs1
// request spans ~1.5-2x its unprofiled wall time on an H100; kernel
// durations barely move). When the driver recorded unprofiled wall times
// (request_wall_us), every idle gap shrinks by one factor so that the
// median request spans the median wall time; otherwise, or when the trace
// is not longer, the timeline is returned as is.
Timeline fit_to_wall(const Timeline& t);
// fit_to_wall in two steps: the factor every idle gap of @t shrinks by (1:
// none), and @t with every gap between a kernel's end and the next
// submission multiplied by @f (a tensor-parallel job's ranks all take the
// factor of the rank that paces the group).
double wall_fit_factor(const Timeline& t);
Timeline shrink_gaps(const Timeline& t, double f);

// The recorded requests of one workload differ by host time (the profiler,
// Python, a stall of up to 20 ms inside one request); the measured alone
// latencies already carry that time, so a replay uses one typical request:
// kernel i starts median_r(start_i - start_(i-1)) after kernel i-1 and runs
// median_r(dur_i). Needs every request to have the same kernel count;
// otherwise the timeline is returned unchanged.
Timeline typical_request(const Timeline& t);

// An LLM server request is a prefill and then @steps decode steps of one
// kernel sequence, each ending in a host sync (the token's .item()). Finds
// the decode step length D (the largest D such that the last steps x D
// kernels repeat with period D in their classes, and at least one kernel
// is left for the prefill) in every request, marks the first token (the
// prefill's last kernel) and the syncs after it and every step but the
// last. Returns false, marking nothing, when some request has no such D.
bool mark_decode_steps(Timeline& t, int steps);

}  // namespace amdqp::sim

#endif
