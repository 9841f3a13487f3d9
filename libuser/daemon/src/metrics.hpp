// SPDX-License-Identifier: MIT
//
// amdqpd's Prometheus metrics: counters and a histogram the control loop
// updates, rendered in the text exposition format (version 0.0.4). The
// loop writes, the metrics server thread renders: one mutex guards all.
#ifndef AMDQPD_METRICS_HPP
#define AMDQPD_METRICS_HPP

#include <array>
#include <cstdint>
#include <map>
#include <mutex>
#include <string>
#include <tuple>
#include <utility>
#include <vector>

namespace amdqp::daemon {

class Metrics {
  public:
    // Control-loop latency buckets (seconds): first doorbell of an idle
    // queue -> lower priorities off the hardware.
    static constexpr std::array<double, 12> kBuckets = {
        50e-6, 100e-6, 200e-6, 300e-6, 500e-6, 750e-6, 1e-3, 2e-3, 5e-3, 10e-3, 50e-3, 250e-3};

    void suspend_call(std::uint32_t gpus, std::uint32_t affected);
    void resume_call(std::uint32_t gpus, std::uint32_t affected);
    void coop_request(bool suspend);
    void control_loop(double seconds);
    void error(const std::string& kind);
    void set_policy_counters(std::uint64_t starvation_hits, std::uint64_t relapses);
    void set_processes(std::uint64_t tagged);
    void set_hold_counters(std::uint64_t holds, std::uint64_t timeouts);
    // Per priority: queues known.
    void set_queues(const std::map<int, std::uint64_t>& by_priority);
    // Time the kernel reports each queue suspended (LIST_QUEUES suspended_ns).
    void set_queue_suspended(
        const std::map<std::tuple<std::uint32_t, std::uint32_t, std::uint32_t>, double>& seconds);
    void set_suspend_level(std::uint32_t gpu, int level);
    // Per GPU: queues below @level confined to @share of its CUs (0: none).
    void set_confinement(std::uint32_t gpu, int level, double share);
    // Per GPU and level set to cu_demand "auto": the demand the policy holds.
    void set_auto_demand(std::uint32_t gpu, int level, double share);
    void forget_gpus();
    // A GPU that went away: its level and its queues' suspended times.
    void forget_gpu(std::uint32_t gpu);

    std::string render() const;
    // The last kSamples control-loop latencies, in microseconds (benchmarks).
    std::vector<double> control_loop_samples() const;
    static constexpr std::size_t kSamples = 4096;

  private:
    mutable std::mutex mutex_;
    std::uint64_t suspend_calls_ = 0, resume_calls_ = 0;
    std::uint64_t suspended_queues_ = 0, resumed_queues_ = 0;
    std::uint64_t coop_suspends_ = 0, coop_resumes_ = 0;
    std::uint64_t starvation_hits_ = 0, relapses_ = 0;
    std::uint64_t processes_ = 0, holds_ = 0, hold_timeouts_ = 0;
    std::array<std::uint64_t, kBuckets.size()> buckets_{};
    std::uint64_t loop_count_ = 0;
    double loop_sum_ = 0;
    std::vector<double> samples_;  // ring of kSamples
    std::size_t next_sample_ = 0;
    std::map<std::string, std::uint64_t> errors_;
    std::map<int, std::uint64_t> queues_;
    std::map<std::tuple<std::uint32_t, std::uint32_t, std::uint32_t>, double> queue_suspended_;
    std::map<std::uint32_t, int> levels_;
    std::map<std::uint32_t, std::pair<int, double>> confined_;  // level, share kept
    std::map<std::pair<std::uint32_t, int>, double> demand_;    // (gpu, level) -> share
};

}  // namespace amdqp::daemon

#endif
