// SPDX-License-Identifier: MIT
#include "amdqp/policy/gap_estimator.hpp"

#include <gtest/gtest.h>

namespace amdqp::policy {
namespace {

Config small() {
    Config c;
    c.hysteresis_min = 100us;
    c.hysteresis_initial = 1ms;
    c.hysteresis_max = 10ms;
    c.hysteresis_factor = 2.0;
    c.hysteresis_window = 4;
    return c;
}

TEST(GapEstimator, StartsAtInitial) {
    GapEstimator e(small());
    EXPECT_EQ(e.hysteresis(), 1ms);
}

TEST(GapEstimator, FactorTimesLargestGapOfRecentBursts) {
    GapEstimator e(small());
    e.gap(200us);
    e.gap(400us);
    e.gap(100us);
    e.end_burst();
    EXPECT_EQ(e.hysteresis(), 800us);
    e.gap(300us);
    e.end_burst();
    EXPECT_EQ(e.hysteresis(), 800us);  // the 400 us burst is still in the window
}

TEST(GapEstimator, ForgetsBurstsThatLeftTheWindow) {
    GapEstimator e(small());
    e.gap(3ms);
    e.end_burst();
    EXPECT_EQ(e.hysteresis(), 6ms);
    for (int i = 0; i < 4; ++i) {
        e.gap(200us);
        e.end_burst();
    }
    EXPECT_EQ(e.hysteresis(), 400us);
}

TEST(GapEstimator, ClampedToBounds) {
    GapEstimator e(small());
    e.gap(10us);
    e.end_burst();
    EXPECT_EQ(e.hysteresis(), 100us);
    e.gap(20ms);
    e.end_burst();
    EXPECT_EQ(e.hysteresis(), 10ms);
}

TEST(GapEstimator, BurstWithoutGapsTeachesNothing) {
    GapEstimator e(small());
    e.end_burst();
    EXPECT_EQ(e.hysteresis(), 1ms);
}

TEST(GapEstimator, RelapseRaisesAtOnce) {
    GapEstimator e(small());
    e.gap(100us);
    e.end_burst();
    EXPECT_EQ(e.hysteresis(), 200us);
    e.relapse(1500us);
    EXPECT_EQ(e.hysteresis(), 3ms);
}

TEST(GapEstimator, QuantileBelowOneIgnoresRareOutliers) {
    auto c = small();
    c.hysteresis_quantile = 0.75;
    GapEstimator e(c);
    for (std::chrono::microseconds g : {100us, 100us, 100us, 4000us}) {
        e.gap(g);
        e.end_burst();
    }
    EXPECT_EQ(e.hysteresis(), 200us);
}

}  // namespace
}  // namespace amdqp::policy
