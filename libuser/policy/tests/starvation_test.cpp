// SPDX-License-Identifier: MIT
// The starvation bound: lower-priority work gets run slices when a GPU was
// held for max_continuous_suspend or its share fell below min_low_share.
#include <gtest/gtest.h>

#include "harness.hpp"

namespace amdqp::policy::test {
namespace {

// Longest stretch the recorded calls kept @gpu suspended, up to @end.
// (A flag and a time, not std::optional: GCC 12 -O2 warns
// -Wmaybe-uninitialized, falsely, on the optional's value here.)
std::int64_t longest_suspension(const RecordingActions& a, std::uint32_t gpu, std::int64_t end) {
    std::int64_t longest = 0;
    bool held = false;
    std::int64_t since = 0;
    for (const auto& c : a.calls) {
        if (std::find(c.gpus.begin(), c.gpus.end(), gpu) == c.gpus.end())
            continue;
        if (c.kind == Call::kSuspend && !held) {
            held = true;
            since = c.at;
        }
        if (c.kind == Call::kResume && held) {
            longest = std::max(longest, c.at - since);
            held = false;
        }
    }
    if (held)
        longest = std::max(longest, end - since);
    return longest;
}

// Share of [from, to) during which @gpu was not suspended.
double run_share(const RecordingActions& a, std::uint32_t gpu, std::int64_t from, std::int64_t to) {
    std::int64_t suspended = 0;
    bool held = false;  // as in longest_suspension()
    std::int64_t since = 0;
    for (const auto& c : a.calls) {
        if (std::find(c.gpus.begin(), c.gpus.end(), gpu) == c.gpus.end())
            continue;
        if (c.kind == Call::kSuspend && !held) {
            held = true;
            since = c.at;
        }
        if (c.kind == Call::kResume && held) {
            suspended += std::max<std::int64_t>(0, c.at - std::max(since, from));
            held = false;
        }
    }
    if (held)
        suspended += to - std::max(since, from);
    return 1.0 - static_cast<double>(suspended) / static_cast<double>(to - from);
}

// Longest stretch, up to @end, in which @gpu never ran for @slice at a
// time: resumes shorter than that do not end a suspension.
std::int64_t longest_without_slice(const RecordingActions& a, std::uint32_t gpu, std::int64_t end,
                                   std::int64_t slice) {
    std::int64_t longest = 0;
    bool held = false;
    std::int64_t since = 0, resumed = 0;
    bool started = false;
    for (const auto& c : a.calls) {
        if (std::find(c.gpus.begin(), c.gpus.end(), gpu) == c.gpus.end())
            continue;
        if (c.kind == Call::kSuspend && !held) {
            held = true;
            if (!started || c.at - resumed >= slice)
                since = c.at;
            started = true;
        }
        if (c.kind == Call::kResume && held) {
            held = false;
            resumed = c.at;
            longest = std::max(longest, c.at - since);
        }
    }
    if (held)
        longest = std::max(longest, end - since);
    return longest;
}

// SUSPEND_BELOW holds every queue below the level, those the policy does
// not watch too: an untagged victim is counted, and gets its run slices.
TEST(Starvation, UnwatchedQueuesAreVictimsToo) {
    Config c;
    c.min_low_share = 0;
    Rig rig(c);
    rig.add(20, 1, 2);  // a tagged lower queue, idle: it does not count
    const auto hp = rig.add(10, 1, 12);
    rig.policy.set_unwatched(1, 2);  // an untagged queue of priority 2 on GPU 1
    rig.keep_busy(hp);
    rig.advance(3000 * kMs);
    EXPECT_GT(rig.policy.stats().starvation_hits, 0u);
    EXPECT_LE(longest_suspension(rig.actions, 1, rig.clock.now), c.max_continuous_suspend.count());
    // Gone: nothing below is held any more, the bound has nothing to do.
    rig.policy.set_unwatched(1, std::nullopt);
    const auto hits = rig.policy.stats().starvation_hits;
    rig.advance(3000 * kMs);
    EXPECT_LE(rig.policy.stats().starvation_hits, hits + 1);
}

// High work that goes idle for just past its hysteresis and comes back
// gives the victim a few ms each time: those short resumes must not start
// the continuous bound over, or it would never hit.
TEST(Starvation, IdleBusyTogglingDoesNotResetTheBound) {
    Config c;
    c.min_low_share = 0;
    Rig rig(c);
    const auto lp = rig.add(20, 1, 2);
    const auto hp = rig.add(10, 1, 12);
    rig.keep_busy(lp);
    const auto start = rig.clock.now;
    while (rig.clock.now - start < 3000 * kMs) {
        rig.q[hp].ring(rig.clock.now, 1);
        rig.sample();
        rig.advance(300 * kMs);
        rig.q[hp].drain();
        rig.sample();
        // Until the hysteresis lets the lower queue run, then 1 ms more.
        const auto resumes = rig.actions.of(Call::kResume).size();
        for (int i = 0; i < 100 && rig.actions.of(Call::kResume).size() == resumes; ++i) {
            rig.advance(1 * kMs);
            rig.sample();
        }
        rig.advance(1 * kMs);
    }
    EXPECT_GT(rig.policy.stats().starvation_hits, 0u);
    EXPECT_LE(longest_without_slice(rig.actions, 1, rig.clock.now, c.min_run_slice.count()),
              c.max_continuous_suspend.count() + 2 * kMs);
}

TEST(Starvation, ContinuousSuspensionIsBounded) {
    Config c;
    c.min_low_share = 0;  // only the continuous bound
    Rig rig(c);
    const auto lp = rig.add(20, 1, 2);
    const auto hp = rig.add(10, 1, 12);
    rig.keep_busy(lp);
    rig.keep_busy(hp);  // never idle
    const auto start = rig.clock.now;
    rig.advance(3000 * kMs);

    EXPECT_EQ(longest_suspension(rig.actions, 1, rig.clock.now), c.max_continuous_suspend.count());
    const auto resumes = rig.actions.of(Call::kResume);
    const auto suspends = rig.actions.of(Call::kSuspend);
    ASSERT_GE(resumes.size(), 5u);
    EXPECT_EQ(rig.policy.stats().starvation_hits, resumes.size());
    EXPECT_EQ(resumes[0].at - start, c.max_continuous_suspend.count());
    // Each forced run lasts the minimum slice, then the high work has the GPU again.
    for (std::size_t i = 0; i < resumes.size(); ++i) {
        ASSERT_GT(suspends.size(), i + 1);
        EXPECT_EQ(suspends[i + 1].at - resumes[i].at, c.min_run_slice.count());
    }
    EXPECT_LT(c.max_continuous_suspend + c.guard_margin, c.watchdog_max_suspend);
}

TEST(Starvation, MinimumShareOverTheWindow) {
    Config c;
    c.min_low_share = 0.3;
    c.share_window = 200ms;
    c.min_run_slice = 20ms;
    Rig rig(c);
    const auto lp = rig.add(20, 1, 2);
    const auto hp = rig.add(10, 1, 12);
    rig.keep_busy(lp);
    rig.keep_busy(hp);
    const auto start = rig.clock.now;
    rig.advance(2000 * kMs);
    ASSERT_GT(rig.policy.stats().starvation_hits, 0u);
    // Every full window from the first bound on gives low work its share
    // (minus one tick's rounding).
    for (auto from = start + 200 * kMs; from + 200 * kMs <= rig.clock.now; from += 10 * kMs)
        EXPECT_GE(run_share(rig.actions, 1, from, from + 200 * kMs), 0.3 - 1e-6) << from;
    EXPECT_LE(longest_suspension(rig.actions, 1, rig.clock.now), c.max_continuous_suspend.count());
    // No flapping: a run slice ends in a suspension that lasts, not one
    // that the exhausted share takes back at once.
    const auto& calls = rig.actions.calls;
    for (std::size_t i = 1; i < calls.size(); ++i)
        EXPECT_GE(calls[i].at - calls[i - 1].at, c.min_run_slice.count()) << i;
}

TEST(Starvation, IdleLowWorkDoesNotCount) {
    Config c;
    c.min_low_share = 0;
    Rig rig(c);
    rig.add(20, 1, 2);  // exists, never has work
    const auto hp = rig.add(10, 1, 12);
    rig.keep_busy(hp);
    rig.advance(3000 * kMs);
    EXPECT_EQ(rig.policy.stats().starvation_hits, 0u);
    EXPECT_EQ(rig.actions.of(Call::kResume).size(), 0u);
}

TEST(Starvation, RunSliceCoversTheWholeLowGroup) {
    Config c;
    c.min_low_share = 0;
    Rig rig(c);
    const auto a = rig.add(20, 1, 2, "lp-tp");
    const auto b = rig.add(21, 2, 2, "lp-tp");
    const auto hp = rig.add(10, 1, 12);
    rig.keep_busy(a);
    rig.keep_busy(b);
    rig.keep_busy(hp);
    rig.advance(c.max_continuous_suspend.count() + 1);
    const auto resumes = rig.actions.of(Call::kResume);
    ASSERT_EQ(resumes.size(), 1u);
    EXPECT_EQ(resumes[0].gpus, (std::vector<std::uint32_t>{1, 2}));
    for (const auto& s : rig.actions.of(Call::kSuspend))
        EXPECT_TRUE(s.gpus.size() == 2 || s.gpus == std::vector<std::uint32_t>{1} ||
                    s.gpus == std::vector<std::uint32_t>{2});
    EXPECT_EQ(rig.actions.level[1] > 0, rig.actions.level[2] > 0);
}

}  // namespace
}  // namespace amdqp::policy::test
