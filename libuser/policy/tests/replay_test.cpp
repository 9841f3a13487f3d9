// SPDX-License-Identifier: MIT
// Replays the kernel timelines measured on an H200 (fixtures/, cut by
// fixtures/excerpt.py) through the policy with its default config: a
// high-priority queue runs the requests, a low-priority one always has
// work. The policy must suspend once per request, never resume inside a
// request, and resume soon after its last kernel.
#include <gtest/gtest.h>

#include <algorithm>
#include <fstream>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "harness.hpp"

namespace amdqp::policy::test {
namespace {

struct Kernel {
    std::int64_t start, end;  // ns, relative to the request's first kernel
};
using Request = std::vector<Kernel>;

std::vector<Request> load(const std::string& name) {
    std::ifstream f(std::string(AMDQP_POLICY_FIXTURES) + "/" + name + ".json");
    EXPECT_TRUE(f.good()) << name;
    const auto j = nlohmann::json::parse(f);
    std::vector<Request> reqs;
    for (const auto& r : j.at("requests")) {
        Request req;
        for (const auto& k : r) {
            const auto s = static_cast<std::int64_t>(k.at(0).get<double>() * 1000.0);
            const auto d = static_cast<std::int64_t>(k.at(1).get<double>() * 1000.0);
            req.push_back({s, s + d});
        }
        reqs.push_back(std::move(req));
    }
    return reqs;
}

// Largest time the queue has nothing in flight inside one request.
std::int64_t largest_gap(const std::vector<Request>& reqs) {
    std::int64_t gap = 0;
    for (const auto& r : reqs) {
        std::int64_t end = r.front().end;
        for (const auto& k : r) {
            gap = std::max(gap, k.start - end);
            end = std::max(end, k.end);
        }
    }
    return gap;
}

struct Window {
    std::int64_t first, last;  // first doorbell, last kernel end
};

struct Event {
    std::int64_t t;
    bool end;  // completion, else doorbell
    int rank;
};

// Requests of @reqs one after the other with @idle between them, on every
// rank (rank r starts @skew * r later), each rank's queue being @hp[r].
std::vector<Window> replay(Rig& rig, const std::vector<Request>& reqs,
                           const std::vector<QueueKey>& hp, std::int64_t idle,
                           std::int64_t skew = 0) {
    std::vector<Event> ev;
    std::vector<Window> windows;
    std::int64_t base = rig.clock.now + 10 * kMs;
    for (const auto& r : reqs) {
        std::int64_t last = 0;
        for (std::size_t rank = 0; rank < hp.size(); ++rank) {
            const std::int64_t off = base + skew * static_cast<std::int64_t>(rank);
            for (const auto& k : r) {
                ev.push_back({off + k.start, false, static_cast<int>(rank)});
                ev.push_back({off + k.end, true, static_cast<int>(rank)});
                last = std::max(last, off + k.end);
            }
        }
        windows.push_back({base, last});
        base = last + idle;
    }
    // Completions first at equal times: a zero gap is still a gap.
    std::stable_sort(ev.begin(), ev.end(), [](const Event& a, const Event& b) {
        return a.t != b.t ? a.t < b.t : (a.end && !b.end);
    });
    for (const auto& e : ev) {
        rig.run_until(e.t);
        auto& q = rig.q[hp[static_cast<std::size_t>(e.rank)]];
        if (e.end)
            q.complete();
        else
            q.ring(e.t);
        rig.sample();
    }
    rig.run_until(windows.back().last + idle);
    return windows;
}

void expect_resumes_outside(const RecordingActions& a, const std::vector<Window>& w,
                            std::int64_t bound) {
    const auto resumes = a.of(Call::kResume);
    for (const auto& r : resumes) {
        for (std::size_t i = 0; i < w.size(); ++i) {
            EXPECT_FALSE(r.at >= w[i].first && r.at < w[i].last)
                << "resumed inside request " << i << " at +" << (r.at - w[i].first) / kUs << " us";
        }
    }
    // Exactly one resume per request, soon after its last kernel.
    ASSERT_EQ(resumes.size(), w.size());
    for (std::size_t i = 0; i < w.size(); ++i) {
        EXPECT_GE(resumes[i].at, w[i].last);
        EXPECT_LE(resumes[i].at - w[i].last, bound) << "request " << i;
    }
}

class Replay : public ::testing::TestWithParam<const char*> {};

TEST_P(Replay, NeverResumesInsideARequestAndResumesAfterIt) {
    const auto reqs = load(GetParam());
    ASSERT_FALSE(reqs.empty());
    Rig rig;
    const auto lp = rig.add(20, 1, 2);
    const auto hp = rig.add(10, 1, 12);
    rig.keep_busy(lp);
    const auto w = replay(rig, reqs, {hp}, 50 * kMs);

    const auto& cfg = rig.policy.config();
    // Once per request, not per kernel.
    const auto suspends = rig.actions.of(Call::kSuspend);
    ASSERT_EQ(suspends.size(), w.size());
    for (std::size_t i = 0; i < w.size(); ++i) {
        EXPECT_EQ(suspends[i].at, w[i].first);
        EXPECT_EQ(suspends[i].gpus, std::vector<std::uint32_t>{1});
        EXPECT_EQ(suspends[i].priority, 12);
    }
    // The hysteresis learned the workload: at most factor x its largest gap,
    // never less than the floor, always within the configured maximum.
    const auto learned = std::max<std::int64_t>(
        cfg.hysteresis_min.count(),
        static_cast<std::int64_t>(cfg.hysteresis_factor * static_cast<double>(largest_gap(reqs))));
    expect_resumes_outside(rig.actions, w, std::min(learned + 1, cfg.hysteresis_max.count()));
    EXPECT_EQ(rig.policy.stats().relapses, 0u);
    EXPECT_EQ(rig.policy.stats().starvation_hits, 0u);
    EXPECT_EQ(rig.policy.suspend_level(1), 0);
}

INSTANTIATE_TEST_SUITE_P(H200, Replay,
                         ::testing::Values("resnet18_bs1", "gpt2_decode16", "deepseek_v3_tiny_1gpu",
                                           "deepseek_v3_tiny_tp2"));

// DeepSeek-architecture decode under TP 2: both ranks are one
// high-priority group; a low-priority TP group shares the two GPUs. Every
// call covers both GPUs, never one of them.
TEST(ReplayTp2, GroupsMoveAsOneOnBothGpus) {
    const auto reqs = load("deepseek_v3_tiny_tp2");
    Rig rig;
    const auto lp0 = rig.add(30, 1, 2, "lp-tp");
    const auto lp1 = rig.add(31, 2, 2, "lp-tp");
    const auto hp0 = rig.add(10, 1, 12, "hp-tp");
    const auto hp1 = rig.add(11, 2, 12, "hp-tp");
    rig.keep_busy(lp0);
    rig.keep_busy(lp1);
    // Rank 1 starts 3 us after rank 0: rank 0's doorbell alone makes the
    // group busy on both GPUs.
    const auto w = replay(rig, reqs, {hp0, hp1}, 30 * kMs, 3 * kUs);

    const std::vector<std::uint32_t> both{1, 2};
    const auto suspends = rig.actions.of(Call::kSuspend);
    ASSERT_EQ(suspends.size(), w.size());
    for (std::size_t i = 0; i < w.size(); ++i) {
        EXPECT_EQ(suspends[i].gpus, both);
        EXPECT_EQ(suspends[i].at, w[i].first);
    }
    for (const auto& r : rig.actions.of(Call::kResume))
        EXPECT_EQ(r.gpus, both);
    expect_resumes_outside(rig.actions, w, rig.policy.config().hysteresis_max.count());
}

}  // namespace
}  // namespace amdqp::policy::test
