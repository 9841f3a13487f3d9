// SPDX-License-Identifier: MIT
// fit_to_wall: hand-computed cases.
#include <gtest/gtest.h>

#include "helpers.hpp"

namespace amdqp::sim::test {
namespace {

TEST(FitToWall, ShrinksIdleGapsToTheUnprofiledWallTime) {
    // Two kernels of 100 us with a 900 us gap: span 1100 us, idle 900 us.
    // Unprofiled wall 500 us: idle must become 300 us, i.e. f = 1/3.
    auto t = timeline({{0, 100 * kUs}, {1000 * kUs, 100 * kUs}});
    t.request_wall_us = {500.0};
    const auto out = fit_to_wall(t);
    ASSERT_EQ(out.requests.front().kernels.size(), 2u);
    EXPECT_EQ(out.requests.front().kernels[0].start, 0);
    EXPECT_EQ(out.requests.front().kernels[1].start, 400 * kUs);
    EXPECT_EQ(out.requests.front().kernels[1].dur, 100 * kUs);
    EXPECT_EQ(out.requests.front().span(), 500 * kUs);
}

TEST(FitToWall, NeverStretchesAndNeedsWallTimes) {
    auto t = timeline({{0, 100 * kUs}, {300 * kUs, 100 * kUs}});
    EXPECT_EQ(fit_to_wall(t).requests.front().span(), 400 * kUs);  // no wall times
    t.request_wall_us = {2000.0};                                  // longer than the trace
    EXPECT_EQ(fit_to_wall(t).requests.front().span(), 400 * kUs);
}

}  // namespace
}  // namespace amdqp::sim::test
