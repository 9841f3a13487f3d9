// SPDX-License-Identifier: MIT
//
// The per-uid share of the control loop, fed times by hand.
#include <gtest/gtest.h>

#include "loop_budget.hpp"

namespace {

using amdqp::daemon::LoopBudget;

constexpr std::int64_t kMs = 1'000'000;

// Steps every @period_ms for @steps; each step @uid's pages cost @cost_ms
// when read. Returns how many steps read them.
int reads(LoopBudget& b, std::uint32_t uid, int steps, std::int64_t period_ms, std::int64_t cost_ms,
          std::int64_t start_ms = 0) {
    int n = 0;
    for (int i = 0; i < steps; i++) {
        if (b.allows(uid, (start_ms + i * period_ms) * kMs)) {
            b.charge(uid, cost_ms * kMs);
            n++;
        }
    }
    return n;
}

TEST(LoopBudget, AUidPastItsShareIsReadThatShareOfTheTime) {
    // Pages costing 1 ms read every 1 ms step: 100 % of the loop. At a
    // 10 % share they are read 1 step in 10, once the 50 ms burst is spent.
    LoopBudget b(10, 50 * kMs);
    const int n = reads(b, 1000, 10'000, 1, 1);
    EXPECT_GE(n, 1000 + 50 - 5);
    EXPECT_LE(n, 1000 + 50 + 5);
    EXPECT_EQ(b.skips(), static_cast<std::uint64_t>(10'000 - n));
    EXPECT_EQ(b.skips(1000), b.skips());
}

TEST(LoopBudget, AUidWithinItsShareIsReadEveryStep) {
    LoopBudget b(10, 50 * kMs);
    // 50 us every 1 ms: 5 %.
    int n = 0;
    for (int i = 0; i < 10'000; i++) {
        ASSERT_TRUE(b.allows(2000, i * kMs)) << "step " << i;
        b.charge(2000, 50'000);
        n++;
    }
    EXPECT_EQ(b.skips(), 0u);
}

TEST(LoopBudget, OneUidsCostIsNotAnothersAndRootIsNotMetered) {
    LoopBudget b(10, 50 * kMs);
    for (int i = 0; i < 1000; i++) {
        const std::int64_t now = i * kMs;
        if (b.allows(1000, now))
            b.charge(1000, 5 * kMs);  // 500 %
        ASSERT_TRUE(b.allows(2000, now));
        b.charge(2000, 10'000);
        ASSERT_TRUE(b.allows(0, now));  // root: whatever it costs
        b.charge(0, 50 * kMs);
    }
    EXPECT_GT(b.skips(1000), 900u);
    EXPECT_EQ(b.skips(2000), 0u);
    EXPECT_EQ(b.skips(0), 0u);
}

TEST(LoopBudget, AFullShareMetersNobody) {
    LoopBudget b(100, 50 * kMs);
    EXPECT_EQ(reads(b, 1000, 1000, 1, 10), 1000);
    EXPECT_EQ(b.skips(), 0u);
}

TEST(LoopBudget, DebtIsBoundedAndSavingsAreCapped) {
    LoopBudget b(10, 50 * kMs);
    // One read of 10 s (a stalled host) is paid off in at most
    // burst / share = 500 ms, not 100 s.
    ASSERT_TRUE(b.allows(1000, 0));
    b.charge(1000, 10'000 * kMs);
    EXPECT_FALSE(b.allows(1000, 400 * kMs));
    EXPECT_TRUE(b.allows(1000, 501 * kMs));
    // An hour idle saves up one burst, no more: ~55 reads of 1 ms at once
    // (50 ms, plus what they earn meanwhile), then one in ten; uncapped,
    // all 100 would be.
    LoopBudget c(10, 50 * kMs);
    const std::int64_t hour_ms = 3'600'000;
    ASSERT_TRUE(c.allows(1000, 0));
    c.charge(1000, 50 * kMs);
    const int n = reads(c, 1000, 100, 1, 1, hour_ms);
    EXPECT_GE(n, 55);
    EXPECT_LE(n, 62);
}

TEST(LoopBudget, ForgottenUidsStartAfresh) {
    LoopBudget b(10, 50 * kMs);
    ASSERT_TRUE(b.allows(1000, 0));
    b.charge(1000, 60 * kMs);
    EXPECT_FALSE(b.allows(1000, kMs));
    b.keep_if([](std::uint32_t uid) { return uid == 2000; });
    EXPECT_EQ(b.skips(1000), 0u);
    EXPECT_TRUE(b.allows(1000, 2 * kMs));  // a new bucket, full
    EXPECT_EQ(b.skips(), 1u);              // the total keeps what it counted
}

}  // namespace
