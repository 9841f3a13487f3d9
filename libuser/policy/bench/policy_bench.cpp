// SPDX-License-Identifier: MIT
// Decision cost of the policy per event, natively: one update() with one
// queue's new sample, on a host of 8 GPUs with a high- and a low-priority
// queue (plus a low TP group) on each. Every benchmark counts its events as
// items, so items_per_second is events per second of CPU time; 'make
// bench' turns that into bench/out/policy.json (policy_json.py).
#include <benchmark/benchmark.h>

#include <cstdint>
#include <vector>

#include "amdqp/policy/policy.hpp"

namespace {

using namespace amdqp::policy;

class BenchClock : public Clock {
  public:
    std::int64_t now_ns() const override { return now; }
    std::int64_t now = 1'000'000'000;
};

class NullActions : public Actions {
  public:
    void suspend_below(std::span<const std::uint32_t> gpus, int) override { calls += gpus.size(); }
    void resume_all(std::span<const std::uint32_t> gpus) override { calls += gpus.size(); }
    void coop_suspend(std::int32_t) override { ++calls; }
    void coop_resume(std::int32_t) override { ++calls; }
    std::uint64_t calls = 0;
};

struct Host {
    explicit Host(std::uint32_t gpus, int per_gpu) : policy(Config{}, clock, actions) {
        std::int32_t pid = 100;
        for (std::uint32_t g = 1; g <= gpus; ++g) {
            for (int i = 0; i < per_gpu; ++i) {
                const bool high = i == 0;
                QueueInfo qi{{pid++, g, 1},
                             high ? 12 : 2,
                             high ? "" : (i == 1 ? "lp-tp" : ""),
                             Mechanism::kAmdqp};
                policy.add_queue(qi);
                samples.push_back(QueueSample{qi.key});
                if (!high) {
                    // Low-priority work always queued.
                    samples.back().write_index = 1'000'000;
                    samples.back().doorbells = 1;
                }
            }
        }
        policy.update(samples);
    }
    BenchClock clock;
    NullActions actions;
    Policy policy;
    std::vector<QueueSample> samples;
};

// A kernel of the high-priority queue of GPU 1: doorbell, then completion,
// 20 us apart, as the daemon would sample them. Two events per iteration.
void BM_KernelEvents(benchmark::State& state) {
    Host host(static_cast<std::uint32_t>(state.range(0)), static_cast<int>(state.range(1)));
    auto& s = host.samples[0];
    for (auto _ : state) {
        host.clock.now += 20'000;
        ++s.write_index;
        ++s.doorbells;
        s.last_doorbell_ns = host.clock.now;
        host.policy.update(std::span(&s, 1));
        host.clock.now += 20'000;
        s.read_index = s.write_index;
        host.policy.update(std::span(&s, 1));
    }
    state.SetItemsProcessed(state.iterations() * 2);
    benchmark::DoNotOptimize(host.actions.calls);
}
BENCHMARK(BM_KernelEvents)
    ->ArgNames({"gpus", "queues_per_gpu"})
    ->Args({1, 2})
    ->Args({8, 2})
    ->Args({8, 8});

// A whole request and the idle time after it: suspend, kernels, expiry,
// resume. Counts the sampling of every queue of the host each step.
void BM_RequestCycle(benchmark::State& state) {
    const auto per_gpu = static_cast<std::size_t>(state.range(1));
    Host host(static_cast<std::uint32_t>(state.range(0)), static_cast<int>(per_gpu));
    for (auto _ : state) {
        for (int k = 0; k < 100; ++k) {
            // The first queue of each GPU is its high-priority one.
            for (std::size_t i = 0; i < host.samples.size(); i += per_gpu) {
                auto& s = host.samples[i];
                ++s.write_index;
                ++s.doorbells;
                s.last_doorbell_ns = host.clock.now;
            }
            host.policy.update(host.samples);
            host.clock.now += 20'000;
            for (std::size_t i = 0; i < host.samples.size(); i += per_gpu)
                host.samples[i].read_index = host.samples[i].write_index;
            host.policy.update(host.samples);
        }
        host.clock.now += 50'000'000;
        host.policy.tick();
    }
    state.SetItemsProcessed(state.iterations() * 200);
    benchmark::DoNotOptimize(host.actions.calls);
}
BENCHMARK(BM_RequestCycle)->ArgNames({"gpus", "queues_per_gpu"})->Args({8, 2});

}  // namespace

// benchmark_main's, plus the build type in the output's context: numbers
// from an unoptimised build are no measure of the policy.
int main(int argc, char** argv) {
    benchmark::AddCustomContext("amdqp_build_type", AMDQP_BUILD_TYPE);
    benchmark::Initialize(&argc, argv);
    if (benchmark::ReportUnrecognizedArguments(argc, argv))
        return 1;
    benchmark::RunSpecifiedBenchmarks();
    benchmark::Shutdown();
    return 0;
}
