// SPDX-License-Identifier: MIT
// What one simulation runs: devices, workloads, the daemon and its policy.
#ifndef AMDQP_SIM_SCENARIO_HPP
#define AMDQP_SIM_SCENARIO_HPP

#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "amdqp/policy/config.hpp"
#include "device_model.hpp"
#include "timeline.hpp"

namespace amdqp::sim {

// How a tensor-parallel job's collectives progress across its ranks.
enum class Collectives {
    // As NCCL's and RCCL's ring all-reduce: 2 (n - 1) steps; a rank
    // finishes step k only while it runs on its GPU and after the rank
    // before it in the ring finished step k - 1 (whose data it then sent).
    // Ranks resident together finish at once; ranks that take turns on
    // their GPUs (time slicing, a suspended peer) each wait for the others'
    // turns, as the real kernels do.
    kRing,
    // A collective progresses once every rank has started it, resident or
    // not (the TP model frozen in 55d0323, kept for comparison).
    kArrival,
};

struct WorkloadSpec {
    std::string name;
    int priority = 7;  // KFD scale: low 2, normal 7, high 12
    // One timeline per rank; a job of N ranks with one timeline runs it on
    // every rank.
    std::vector<Timeline> ranks;
    std::vector<std::uint32_t> gpus{0};  // one per rank
    double rate_per_s = 0.0;             // open loop at this rate; 0: back to back
    // Open loop at these arrival times instead of a fixed rate (an LLM
    // server's Poisson schedule); no request after the last.
    std::vector<Ns> arrivals;
    Ns first_arrival = 0;
    double occupancy = 1.0;    // share of a full device's CUs its kernels fill alone
    double cu_fraction = 1.0;  // CU mask of its queues, share of the device (1: none)
    // Host time a request's latency includes beyond its GPU span (Python,
    // the first launch, the final synchronize): from the measured alone
    // latency, or 0.
    Ns host_overhead = 0;
    std::string group;  // tensor-parallel group; empty: its own unit (or "<name>" if tp > 1)
    Collectives collectives = Collectives::kRing;
    // Tokens a request produces after its first (TPOT = (end - first token)
    // / this); 0: no TTFT/TPOT. Needs timelines with first_token marked.
    int tokens_after_first = 0;
    // Open loop: a server that has fallen this far behind gives up (the
    // llm_tp driver's bound): no request starts after this time (0: none),
    // and every later arrival in the measured window counts as dropped.
    Ns give_up = 0;
    // Open loop: a request that has waited longer than this when the
    // server gets to it is dropped, not served (llm_tp --max-queue-delay;
    // 0: none); counted as dropped when it arrived in the measured window.
    Ns max_queue_delay = 0;
    bool open_loop() const { return rate_per_s > 0 || !arrivals.empty(); }
};

struct DaemonParams {
    bool enabled = true;
    policy::Config policy;
    // libuser/daemon/src/config_file.hpp defaults.
    Ns poll_interval = 250 * kUs;  // while something is held off
    Ns idle_poll = 50 * kMs;       // otherwise
    Ns hold_timeout = 2 * kMs;     // activity.h hold_timeout_us default
    // Doorbell store to the daemon's step: futex wake-up and the page reads
    // (assumption; the control-loop benchmark measured p50 73 us natively,
    // Documentation/policy.rst).
    Ns wake_latency = 50 * kUs;
    // One ioctl per GPU issued one after the other instead of one ioctl
    // covering every GPU of the decision (the TP comparison).
    bool split_calls = false;
};

struct Scenario {
    std::map<std::uint32_t, DeviceParams> devices;  // by gpu id
    std::vector<WorkloadSpec> workloads;
    DaemonParams daemon;
    Ns duration = 30 * kSec;
    Ns warmup = 1 * kSec;  // requests arriving earlier are not measured
    // End of the measured window (0: duration): later arrivals are not
    // measured, later back-to-back completions not counted.
    Ns measure_end = 0;
};

struct LatencyStats {
    double p50 = 0, p95 = 0, p99 = 0, max = 0, mean = 0;
    std::size_t n = 0;
};
LatencyStats latency_stats(std::vector<double> ms);
double percentile(std::vector<double> v, double q);  // nearest rank, q in [0, 100]

struct WorkloadResult {
    std::string name;
    int priority = 0;
    bool open_loop = false;
    std::vector<double> latencies_ms;      // in arrival order
    std::vector<double> ttft_ms, tpot_ms;  // tokens_after_first > 0
    LatencyStats latency;
    double it_per_s = 0.0;
    std::uint64_t completed = 0;
    std::uint64_t dropped = 0;  // measured arrivals never started (WorkloadSpec::give_up)
};

struct RunResult {
    std::vector<WorkloadResult> workloads;
    std::uint64_t suspend_calls = 0, resume_calls = 0;
    std::uint64_t confine_calls = 0, unconfine_calls = 0;
    std::uint64_t device_updates = 0;  // HWS runlist updates, MES queue removes and adds
    std::uint64_t relapses = 0, starvation_hits = 0;
    Ns stall_ns = 0;  // device time lost in scheduler updates (all devices)
    const WorkloadResult* find(const std::string& name) const;
};

}  // namespace amdqp::sim

#endif
