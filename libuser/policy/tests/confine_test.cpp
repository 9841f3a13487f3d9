// SPDX-License-Identifier: MIT
// Confinement instead of suspension (Config::cu_demand, issue 27): the
// lower queues keep running on part of the GPU while the high work's
// demand fits in the rest (fake clock).
#include <gtest/gtest.h>

#include <algorithm>
#include <limits>
#include <stdexcept>

#include "harness.hpp"

namespace amdqp::policy::test {
namespace {

using V = std::vector<std::uint32_t>;
using S = std::vector<double>;

// High work (12) needs a quarter of the GPU: the lower queues keep 0.75.
Config confining() {
    Config c;
    c.cu_demand[12] = 0.25;
    return c;
}

void ring(Rig& rig, std::initializer_list<QueueKey> keys) {
    for (const auto& k : keys)
        rig.q[k].ring(rig.clock.now);
    rig.sample();
}

void finish(Rig& rig, std::initializer_list<QueueKey> keys) {
    for (const auto& k : keys)
        rig.q[k].drain();
    rig.sample();
}

std::int64_t h(const Rig& rig) {
    return rig.policy.config().hysteresis_initial.count();
}

bool on(const Call& c, std::uint32_t gpu) {
    return std::find(c.gpus.begin(), c.gpus.end(), gpu) != c.gpus.end();
}

// Share of [from, to) that @gpu's lower work ran at, from the recorded
// calls: 1 free, its share confined, 0 suspended (suspension wins).
double effective_share(const RecordingActions& a, std::uint32_t gpu, std::int64_t from,
                       std::int64_t to) {
    bool suspended = false;
    double share = 1.0;
    std::int64_t since = std::numeric_limits<std::int64_t>::min();
    double sum = 0;
    auto run = [&](std::int64_t until) {
        const std::int64_t b = std::max(since, from), e = std::min(until, to);
        if (e > b)
            sum += (suspended ? 0.0 : share) * static_cast<double>(e - b);
        since = until;
    };
    for (const auto& c : a.calls) {
        if (!on(c, gpu))
            continue;
        run(c.at);
        if (c.kind == Call::kSuspend)
            suspended = true;
        else if (c.kind == Call::kResume)
            suspended = false;
        else if (c.kind == Call::kConfine)
            share = c.shares[static_cast<std::size_t>(std::find(c.gpus.begin(), c.gpus.end(), gpu) -
                                                      c.gpus.begin())];
        else if (c.kind == Call::kUnconfine)
            share = 1.0;
    }
    run(to);
    return sum / static_cast<double>(to - from);
}

TEST(Confine, HighWorkThatFitsConfinesAndReleasesAfterTheHysteresis) {
    Rig rig(confining());
    const auto lp = rig.add(20, 1, 2);
    const auto hp = rig.add(10, 1, 12);
    rig.keep_busy(lp);
    EXPECT_TRUE(rig.actions.calls.empty());

    ring(rig, {hp});
    ASSERT_EQ(rig.actions.calls.size(), 1u);
    EXPECT_EQ(rig.actions.calls[0].kind, Call::kConfine);
    EXPECT_EQ(rig.actions.calls[0].gpus, V{1});
    EXPECT_EQ(rig.actions.calls[0].priority, 12);
    EXPECT_EQ(rig.actions.calls[0].shares, S{0.75});
    EXPECT_EQ(rig.policy.suspend_level(1), 0);
    EXPECT_EQ(rig.policy.confine_level(1), 12);
    EXPECT_DOUBLE_EQ(rig.policy.confine_share(1), 0.75);

    rig.advance(500 * kUs);
    finish(rig, {hp});
    const auto idle_at = rig.clock.now;
    rig.advance(h(rig) - 1);
    EXPECT_EQ(rig.actions.calls.size(), 1u) << "released inside the hysteresis";
    rig.advance(10 * kMs);
    ASSERT_EQ(rig.actions.calls.size(), 2u);
    EXPECT_EQ(rig.actions.calls[1].kind, Call::kUnconfine);
    EXPECT_EQ(rig.actions.calls[1].gpus, V{1});
    EXPECT_EQ(rig.actions.calls[1].at, idle_at + h(rig));
    EXPECT_EQ(rig.policy.confine_level(1), 0);
    EXPECT_EQ(rig.policy.stats().confine_calls, 1u);
    EXPECT_EQ(rig.policy.stats().unconfine_calls, 1u);
    EXPECT_EQ(rig.policy.stats().suspend_calls, 0u);
    EXPECT_EQ(rig.policy.stats().resume_calls, 0u);
}

TEST(Confine, MisjudgedGapRaisesTheHysteresisAsForSuspend) {
    Config c = confining();
    c.hysteresis_min = 200us;
    c.hysteresis_initial = 200us;
    Rig rig(c);
    const auto lp = rig.add(20, 1, 2);
    const auto hp = rig.add(10, 1, 12);
    rig.keep_busy(lp);
    // Bursts of 5 kernels with 0.5 ms launch gaps: the first one is misjudged.
    auto burst = [&rig, hp] {
        for (int k = 0; k < 5; ++k) {
            rig.q[hp].ring(rig.clock.now);
            rig.sample();
            rig.advance(20 * kUs);
            rig.q[hp].complete();
            rig.sample();
            rig.advance(500 * kUs);
        }
        rig.advance(50 * kMs);
    };
    burst();
    EXPECT_GE(rig.policy.stats().relapses, 1u);
    EXPECT_EQ(*rig.policy.hysteresis(hp), 750us);
    const auto releases = rig.actions.of(Call::kUnconfine).size();
    burst();
    burst();
    EXPECT_EQ(rig.actions.of(Call::kUnconfine).size(), releases + 2) << "one release per burst";
    EXPECT_EQ(rig.actions.of(Call::kConfine).size(), rig.actions.of(Call::kUnconfine).size());
    EXPECT_TRUE(rig.actions.of(Call::kSuspend).empty());
}

TEST(Confine, WholeGpuOrUnknownDemandSuspends) {
    Config c;
    c.cu_demand[12] = 1.0;  // the whole GPU
    c.cu_demand[7] = 0.5;   // a level that is not busy here
    Rig rig(c);
    const auto lp = rig.add(20, 1, 2);
    const auto hp = rig.add(10, 1, 12);
    const auto top = rig.add(30, 2, 14);  // cu_demand[14] = 0: not known
    rig.keep_busy(lp);
    rig.keep_busy(rig.add(21, 2, 2));
    ring(rig, {hp, top});
    ASSERT_EQ(rig.actions.calls.size(), 2u);
    EXPECT_EQ(rig.actions.calls[0].kind, Call::kSuspend);
    EXPECT_EQ(rig.actions.calls[0].priority, 14);
    EXPECT_EQ(rig.actions.calls[1].kind, Call::kSuspend);
    EXPECT_EQ(rig.actions.calls[1].priority, 12);
    EXPECT_TRUE(rig.actions.of(Call::kConfine).empty());
}

// Work that needs the whole GPU arrives on a confined GPU: suspended, then
// the confinement lifted (off first, so no queue runs a moment unconfined);
// when it ends, confined again, then back on the hardware.
TEST(Confine, SwitchesBetweenConfineAndSuspendWhenTheDemandChanges) {
    Rig rig(confining());
    const auto lp = rig.add(20, 1, 2);
    const auto hp = rig.add(10, 1, 12);
    const auto top = rig.add(30, 1, 14);  // needs the whole GPU
    rig.keep_busy(lp);
    rig.keep_busy(hp);
    ASSERT_EQ(rig.actions.calls.size(), 1u);
    EXPECT_EQ(rig.actions.calls[0].kind, Call::kConfine);

    ring(rig, {top});
    ASSERT_EQ(rig.actions.calls.size(), 3u);
    EXPECT_EQ(rig.actions.calls[1].kind, Call::kSuspend);
    EXPECT_EQ(rig.actions.calls[1].priority, 14);
    EXPECT_EQ(rig.actions.calls[2].kind, Call::kUnconfine);
    EXPECT_EQ(rig.actions.calls[2].gpus, V{1});
    EXPECT_EQ(rig.actions.calls[1].at, rig.actions.calls[2].at);
    EXPECT_EQ(rig.policy.suspend_level(1), 14);
    EXPECT_EQ(rig.policy.confine_level(1), 0);

    finish(rig, {top});
    const auto idle_at = rig.clock.now;
    rig.advance(50 * kMs);
    ASSERT_EQ(rig.actions.calls.size(), 5u);
    EXPECT_EQ(rig.actions.calls[3].kind, Call::kConfine);
    EXPECT_EQ(rig.actions.calls[3].priority, 12);
    EXPECT_EQ(rig.actions.calls[3].shares, S{0.75});
    EXPECT_EQ(rig.actions.calls[4].kind, Call::kResume);
    EXPECT_EQ(rig.actions.calls[3].at, idle_at + h(rig)) << "the same hysteresis";
    EXPECT_EQ(rig.actions.calls[4].at, rig.actions.calls[3].at);
    EXPECT_EQ(rig.policy.suspend_level(1), 0);
    EXPECT_EQ(rig.policy.confine_level(1), 12);
}

// Two levels with their own demands: the confinement moves in one call each
// way, never released in between.
TEST(Confine, ALevelChangeMovesTheConfinementInOneCall) {
    Config c = confining();
    c.cu_demand[7] = 0.5;
    Rig rig(c);
    const auto low = rig.add(20, 1, 2);
    const auto normal = rig.add(30, 1, 7);
    const auto high = rig.add(40, 1, 12);
    rig.keep_busy(low);
    rig.keep_busy(normal);
    ASSERT_EQ(rig.actions.calls.size(), 1u);
    EXPECT_EQ(rig.actions.calls[0].priority, 7);
    EXPECT_EQ(rig.actions.calls[0].shares, S{0.5});

    ring(rig, {high});
    ASSERT_EQ(rig.actions.calls.size(), 2u);
    EXPECT_EQ(rig.actions.calls[1].kind, Call::kConfine);
    EXPECT_EQ(rig.actions.calls[1].priority, 12);
    EXPECT_EQ(rig.actions.calls[1].shares, S{0.75});

    finish(rig, {high});
    rig.advance(50 * kMs);
    ASSERT_EQ(rig.actions.calls.size(), 3u);
    EXPECT_EQ(rig.actions.calls[2].kind, Call::kConfine);
    EXPECT_EQ(rig.actions.calls[2].priority, 7);
    EXPECT_EQ(rig.actions.calls[2].shares, S{0.5});
    EXPECT_TRUE(rig.actions.of(Call::kUnconfine).empty());
}

TEST(Confine, GpusBusyInOneStepAreOneCall) {
    Rig rig(confining());
    std::vector<QueueKey> hp;
    for (std::uint32_t g = 1; g <= 8; ++g) {
        rig.keep_busy(rig.add(100 + static_cast<int>(g), g, 2));
        hp.push_back(rig.add(10, g, 12));
    }
    for (const auto& k : hp)
        rig.q[k].ring(rig.clock.now);
    rig.sample();
    ASSERT_EQ(rig.actions.calls.size(), 1u);
    EXPECT_EQ(rig.actions.calls[0].kind, Call::kConfine);
    EXPECT_EQ(rig.actions.calls[0].gpus, (V{1, 2, 3, 4, 5, 6, 7, 8}));
    EXPECT_EQ(rig.actions.calls[0].shares, S(8, 0.75));

    for (const auto& k : hp)
        rig.q[k].drain();
    rig.sample();
    rig.advance(50 * kMs);
    ASSERT_EQ(rig.actions.calls.size(), 2u);
    EXPECT_EQ(rig.actions.calls[1].kind, Call::kUnconfine);
    EXPECT_EQ(rig.actions.calls[1].gpus, (V{1, 2, 3, 4, 5, 6, 7, 8}));
}

TEST(Confine, QueueCreatedWhileConfinedIsConfinedToo) {
    Rig rig(confining());
    rig.keep_busy(rig.add(20, 1, 2));
    ring(rig, {rig.add(10, 1, 12)});
    ASSERT_EQ(rig.actions.calls.size(), 1u);
    rig.add(21, 1, 5);
    ASSERT_EQ(rig.actions.calls.size(), 2u);
    EXPECT_EQ(rig.actions.calls[1].kind, Call::kConfine);
    EXPECT_EQ(rig.actions.calls[1].priority, 12);
    rig.add(22, 1, 12);  // its peer: nothing to do
    EXPECT_EQ(rig.actions.calls.size(), 2u);
}

TEST(Confine, LowGroupIsConfinedOnAllItsGpusInOneCall) {
    Rig rig(confining());
    std::vector<QueueKey> lp;
    for (std::uint32_t g = 1; g <= 3; ++g)
        lp.push_back(rig.add(30 + static_cast<int>(g), g, 2, "lp-tp"));
    const auto other = rig.add(40, 4, 2);  // not in the group: left alone
    for (const auto& k : lp)
        rig.keep_busy(k);
    rig.keep_busy(other);
    const auto hp = rig.add(10, 2, 12);

    ring(rig, {hp});
    // The whole group at its priority + 1 in one call, then GPU 2 below 12.
    ASSERT_EQ(rig.actions.calls.size(), 2u);
    EXPECT_EQ(rig.actions.calls[0].kind, Call::kConfine);
    EXPECT_EQ(rig.actions.calls[0].gpus, (V{1, 2, 3}));
    EXPECT_EQ(rig.actions.calls[0].priority, 3);
    EXPECT_EQ(rig.actions.calls[0].shares, S(3, 0.75));
    EXPECT_EQ(rig.actions.calls[1].gpus, V{2});
    EXPECT_EQ(rig.actions.calls[1].priority, 12);
    EXPECT_EQ(rig.actions.confined.count(4), 0u);

    finish(rig, {hp});
    rig.advance(50 * kMs);
    ASSERT_EQ(rig.actions.calls.size(), 3u);
    EXPECT_EQ(rig.actions.calls[2].kind, Call::kUnconfine);
    EXPECT_EQ(rig.actions.calls[2].gpus, (V{1, 2, 3}));
}

// Ranks change pace together: a group confined at two shares on two GPUs
// is confined at the smaller one on both.
TEST(Confine, LowGroupTakesItsSmallestShareEverywhere) {
    Config c = confining();
    c.cu_demand[10] = 0.5;
    Rig rig(c);
    rig.keep_busy(rig.add(30, 1, 2, "lp-tp"));
    rig.keep_busy(rig.add(31, 2, 2, "lp-tp"));
    const auto h1 = rig.add(10, 1, 12);
    const auto h2 = rig.add(11, 2, 10);
    ring(rig, {h1, h2});
    ASSERT_EQ(rig.actions.calls.size(), 2u);
    EXPECT_EQ(rig.actions.calls[0].gpus, (V{1, 2}));  // both ranks in the first call
    EXPECT_EQ(rig.actions.calls[0].priority, 10);
    EXPECT_EQ(rig.actions.calls[0].shares, (S{0.5, 0.5}));
    EXPECT_EQ(rig.actions.calls[1].gpus, V{1});
    EXPECT_EQ(rig.actions.calls[1].priority, 12);
    EXPECT_EQ(rig.actions.calls[1].shares, S{0.5});
}

// Suspension wins: a group suspended on one GPU is suspended on all, even
// where the work there would only confine it.
TEST(Confine, LowGroupSuspendedOnOneGpuIsSuspendedOnAll) {
    Rig rig(confining());
    rig.keep_busy(rig.add(30, 1, 2, "lp-tp"));
    rig.keep_busy(rig.add(31, 2, 2, "lp-tp"));
    const auto h1 = rig.add(10, 1, 12);  // fits: would confine
    const auto h2 = rig.add(11, 2, 14);  // the whole GPU
    ring(rig, {h1, h2});
    EXPECT_TRUE(rig.actions.of(Call::kConfine).empty());
    ASSERT_EQ(rig.actions.calls.size(), 2u);
    EXPECT_EQ(rig.actions.calls[0].kind, Call::kSuspend);
    EXPECT_EQ(rig.actions.calls[0].gpus, (V{1, 2}));
    EXPECT_EQ(rig.actions.calls[0].priority, 12);
    EXPECT_EQ(rig.actions.calls[1].gpus, V{2});
    EXPECT_EQ(rig.actions.calls[1].priority, 14);
    EXPECT_EQ(rig.policy.suspend_level(1), 12);
    EXPECT_EQ(rig.policy.suspend_level(2), 14);
}

// A cooperative queue cannot be confined: it is asked off as before.
TEST(Confine, CooperativeQueuesAreAskedOff) {
    Rig rig(confining());
    const auto lp = rig.add(20, 1, 2, {}, Mechanism::kCoop);
    rig.keep_busy(rig.add(21, 1, 2));
    rig.keep_busy(lp);
    ring(rig, {rig.add(10, 1, 12)});
    ASSERT_EQ(rig.actions.of(Call::kConfine).size(), 1u);
    ASSERT_EQ(rig.actions.of(Call::kCoopSuspend).size(), 1u);
    EXPECT_EQ(rig.actions.of(Call::kCoopSuspend)[0].pid, 20);
}

// A confined queue runs: at a share of at least min_low_share neither
// bound ever hits, however long the high work stays busy.
TEST(Confine, ConfinedAtTheMinimumShareOrMoreIsNotStarved) {
    Config c = confining();
    c.min_low_share = 0.3;
    c.cu_demand[12] = 0.5;
    Rig rig(c);
    rig.keep_busy(rig.add(20, 1, 2));
    const auto hp = rig.add(10, 1, 12);
    rig.keep_busy(hp);
    rig.advance(3000 * kMs);
    EXPECT_EQ(rig.policy.stats().starvation_hits, 0u);
    EXPECT_EQ(rig.actions.calls.size(), 1u);
    EXPECT_EQ(rig.policy.confine_level(1), 12);
}

// Below min_low_share a confined queue owes (1 - share) of its time: the
// share bound hits later than for a suspension, and every window gives
// the lower work its share counting the confined time at its share.
TEST(Confine, ConfinedBelowTheMinimumShareOwesTheRest) {
    Config c;
    c.cu_demand[12] = 0.9;  // the lower work keeps 0.1
    c.min_low_share = 0.3;
    c.share_window = 200ms;
    c.min_run_slice = 20ms;
    Rig rig(c);
    rig.keep_busy(rig.add(20, 1, 2));
    const auto hp = rig.add(10, 1, 12);
    rig.keep_busy(hp);
    const auto start = rig.clock.now;
    rig.advance(2000 * kMs);
    ASSERT_GT(rig.policy.stats().starvation_hits, 0u);
    const auto releases = rig.actions.of(Call::kUnconfine);
    ASSERT_FALSE(releases.empty());
    // 140 ms owed at 0.9 per ms: 155.6 ms, not a suspension's 140.
    EXPECT_NEAR(static_cast<double>(releases[0].at - start), 140e6 / 0.9, 2.0);
    for (auto from = start + 200 * kMs; from + 200 * kMs <= rig.clock.now; from += 10 * kMs)
        EXPECT_GE(effective_share(rig.actions, 1, from, from + 200 * kMs), 0.3 - 1e-6) << from;
    EXPECT_TRUE(rig.actions.of(Call::kSuspend).empty());
}

// The continuous suspension bound is about suspension; a confinement has
// its own, below the kernel's max_confine_ms watchdog.
TEST(Confine, ContinuousConfinementStaysBelowTheWatchdog) {
    Config c = confining();
    c.min_low_share = 0;
    c.max_continuous_confine = 1000ms;
    c.watchdog_max_confine = 2000ms;
    Rig rig(c);
    rig.keep_busy(rig.add(20, 1, 2));
    const auto hp = rig.add(10, 1, 12);
    rig.keep_busy(hp);
    const auto start = rig.clock.now;
    rig.advance(3500 * kMs);
    EXPECT_EQ(rig.policy.stats().starvation_hits, 0u) << "500 ms confined is no suspension";
    EXPECT_EQ(rig.policy.stats().confine_slices, 3u);
    const auto confines = rig.actions.of(Call::kConfine);
    const auto releases = rig.actions.of(Call::kUnconfine);
    ASSERT_EQ(releases.size(), 3u);
    ASSERT_EQ(confines.size(), 4u);
    EXPECT_EQ(releases[0].at - start, 1000 * kMs);
    for (std::size_t i = 0; i < releases.size(); ++i) {
        EXPECT_EQ(releases[i].at - confines[i].at, c.max_continuous_confine.count()) << i;
        EXPECT_EQ(confines[i + 1].at - releases[i].at, c.min_run_slice.count()) << i;
    }
}

TEST(Confine, ActionsThatCannotConfineAreRefused) {
    FakeClock clock;
    RecordingActions actions(clock);
    actions.confinable = false;
    EXPECT_THROW(Policy(confining(), clock, actions), std::invalid_argument);
    EXPECT_NO_THROW(Policy(Config{}, clock, actions));
}

TEST(Confine, UnsetKnobNeverConfines) {
    EXPECT_FALSE(Config{}.confines());
    EXPECT_TRUE(confining().confines());
    Config c;
    c.cu_demand[12] = 1.0;
    EXPECT_FALSE(c.confines()) << "the whole GPU is a suspension";
}

}  // namespace
}  // namespace amdqp::policy::test
