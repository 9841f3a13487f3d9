// SPDX-License-Identifier: MIT
// Test doubles for the policy: a clock the test moves, actions that are
// recorded, and simulated queues that produce activity samples.
#ifndef AMDQP_POLICY_TESTS_HARNESS_HPP
#define AMDQP_POLICY_TESTS_HARNESS_HPP

#include <cstdint>
#include <map>
#include <set>
#include <span>
#include <string>
#include <utility>
#include <vector>

#include "amdqp/policy/policy.hpp"

namespace amdqp::policy::test {

class FakeClock : public Clock {
  public:
    std::int64_t now_ns() const override { return now; }
    std::int64_t now = 1'000'000'000;
};

struct Call {
    enum Kind { kSuspend, kResume, kCoopSuspend, kCoopResume, kConfine, kUnconfine } kind;
    std::int64_t at;
    std::vector<std::uint32_t> gpus;
    int priority = 0;            // suspend_below, confine_below
    std::int32_t pid = 0;        // coop
    std::vector<double> shares;  // confine_below, one per GPU
};

class RecordingActions : public Actions {
  public:
    explicit RecordingActions(const FakeClock& clock) : clock_(clock) {}
    void suspend_below(std::span<const std::uint32_t> gpus, int priority) override {
        calls.push_back({Call::kSuspend, clock_.now, {gpus.begin(), gpus.end()}, priority, 0, {}});
        for (auto g : gpus)
            level[g] = priority;
    }
    void resume_all(std::span<const std::uint32_t> gpus) override {
        calls.push_back({Call::kResume, clock_.now, {gpus.begin(), gpus.end()}, 0, 0, {}});
        for (auto g : gpus)
            level[g] = 0;
    }
    void coop_suspend(std::int32_t pid) override {
        calls.push_back({Call::kCoopSuspend, clock_.now, {}, 0, pid, {}});
    }
    void coop_resume(std::int32_t pid) override {
        calls.push_back({Call::kCoopResume, clock_.now, {}, 0, pid, {}});
    }
    bool can_confine() const override { return confinable; }
    void confine_below(std::span<const Confinement> targets, int priority) override {
        Call c{Call::kConfine, clock_.now, {}, priority, 0, {}};
        for (const auto& t : targets) {
            c.gpus.push_back(t.gpu);
            c.shares.push_back(t.share);
            confined[t.gpu] = {priority, t.share};
        }
        calls.push_back(std::move(c));
    }
    void unconfine(std::span<const std::uint32_t> gpus) override {
        calls.push_back({Call::kUnconfine, clock_.now, {gpus.begin(), gpus.end()}, 0, 0, {}});
        for (auto g : gpus)
            confined.erase(g);
    }
    std::vector<Call> of(Call::Kind k) const {
        std::vector<Call> out;
        for (const auto& c : calls) {
            if (c.kind == k)
                out.push_back(c);
        }
        return out;
    }
    std::vector<Call> calls;
    std::map<std::uint32_t, int> level;                        // what the kernel would hold now
    std::map<std::uint32_t, std::pair<int, double>> confined;  // gpu -> level, share
    bool confinable = true;

  private:
    const FakeClock& clock_;
};

// One queue's activity slot as the tagging layer and the GPU would move it.
struct SimQueue {
    QueueSample s;
    void ring(std::int64_t now, std::uint64_t packets = 1) {
        s.write_index += packets;
        ++s.doorbells;
        s.last_doorbell_ns = now;
    }
    void complete(std::uint64_t packets = 1) { s.read_index += packets; }
    void drain() { s.read_index = s.write_index; }
};

inline QueueInfo info(std::int32_t pid, std::uint32_t gpu, int prio, std::string group = {},
                      Mechanism m = Mechanism::kAmdqp) {
    return QueueInfo{QueueKey{pid, gpu, 1}, prio, std::move(group), m};
}

// A policy with its clock, actions and simulated queues.
struct Rig {
    explicit Rig(const Config& cfg = {}) : actions(clock), policy(cfg, clock, actions) {}

    QueueKey add(std::int32_t pid, std::uint32_t gpu, int prio, std::string group = {},
                 Mechanism m = Mechanism::kAmdqp) {
        auto qi = info(pid, gpu, prio, std::move(group), m);
        q[qi.key].s.key = qi.key;
        policy.add_queue(qi);
        return qi.key;
    }
    void sample() {
        std::vector<QueueSample> v;
        for (const auto& [k, sq] : q)
            v.push_back(sq.s);
        policy.update(v);
    }
    // Advance time to @t, running the policy's timers on the way.
    void run_until(std::int64_t t) {
        for (auto d = policy.next_deadline_ns(); d && *d <= t; d = policy.next_deadline_ns()) {
            clock.now = std::max(clock.now, *d);
            policy.tick();
        }
        clock.now = std::max(clock.now, t);
    }
    void advance(std::int64_t ns) { run_until(clock.now + ns); }
    // A low-priority queue that always has work queued.
    void keep_busy(const QueueKey& k) {
        q[k].ring(clock.now, 1000);
        sample();
    }

    FakeClock clock;
    RecordingActions actions;
    Policy policy;
    std::map<QueueKey, SimQueue> q;
};

inline constexpr std::int64_t kUs = 1000;
inline constexpr std::int64_t kMs = 1000 * kUs;

}  // namespace amdqp::policy::test

#endif
