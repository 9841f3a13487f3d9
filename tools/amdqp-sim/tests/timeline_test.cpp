// SPDX-License-Identifier: MIT
// fit_to_wall, stretch_launches, typical_request, mark_decode_steps:
// hand-computed cases.
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

TEST(StretchLaunches, ScalesSubmissionTimesNotDurationsOrSyncs) {
    // Launches at 0, 30 and 90 us, 2 us kernels, a sync after the second:
    // 1.5x slower launches submit at 0, 45 and 135 us, same kernels, same sync.
    auto t = timeline({{0, 2 * kUs}, {30 * kUs, 2 * kUs}, {90 * kUs, 2 * kUs}});
    t.requests.front().syncs = {1};
    const auto out = stretch_launches(t, 1.5);
    const auto& k = out.requests.front().kernels;
    ASSERT_EQ(k.size(), 3u);
    EXPECT_EQ(k[0].start, 0);
    EXPECT_EQ(k[1].start, 45 * kUs);
    EXPECT_EQ(k[2].start, 135 * kUs);
    EXPECT_EQ(k[2].dur, 2 * kUs);
    EXPECT_EQ(out.requests.front().syncs, std::vector<std::size_t>{1});
}

TEST(TypicalRequest, TakesEachKernelsMedianStepAndDuration) {
    Timeline t;
    t.requests = {request({{0, 10 * kUs}, {100 * kUs, 20 * kUs}}),
                  request({{0, 30 * kUs}, {300 * kUs, 40 * kUs}}),
                  request({{0, 20 * kUs}, {200 * kUs, 30 * kUs}})};
    const auto out = typical_request(t);
    ASSERT_EQ(out.requests.size(), 1u);
    const auto& k = out.requests.front().kernels;
    ASSERT_EQ(k.size(), 2u);
    EXPECT_EQ(k[0].start, 0);
    EXPECT_EQ(k[0].dur, 20 * kUs);     // median of 10, 30, 20
    EXPECT_EQ(k[1].start, 200 * kUs);  // median step of 100, 300, 200
    EXPECT_EQ(k[1].dur, 30 * kUs);     // median of 20, 40, 30
}

TEST(TypicalRequest, LeavesRequestsOfDifferentLengthsAlone) {
    Timeline t;
    t.requests = {request({{0, 10 * kUs}}), request({{0, 10 * kUs}, {50 * kUs, 10 * kUs}})};
    EXPECT_EQ(typical_request(t).requests.size(), 2u);
}

Kernel k(KernelClass c) {
    return Kernel{0, 1 * kUs, c};
}

TEST(MarkDecodeSteps, FindsThePrefillAndTheSyncAfterEveryStep) {
    // Prefill: gemm, other; then 3 decode steps of gemm, other, other.
    const auto g = KernelClass::kGemm, o = KernelClass::kOther;
    Timeline t;
    t.requests = {request({k(g), k(o), k(g), k(o), k(o), k(g), k(o), k(o), k(g), k(o), k(o)})};
    ASSERT_TRUE(mark_decode_steps(t, 3));
    const auto& r = t.requests.front();
    EXPECT_EQ(r.first_token, 1u);                             // the prefill's last kernel
    EXPECT_EQ(r.syncs, (std::vector<std::size_t>{1, 4, 7}));  // the last step ends the request
}

TEST(MarkDecodeSteps, RefusesRequestsWithoutRepeatedSteps) {
    const auto g = KernelClass::kGemm, o = KernelClass::kOther;
    Timeline t;
    t.requests = {request({k(g), k(o), k(o), k(g), k(g), k(o)})};
    EXPECT_FALSE(mark_decode_steps(t, 2));
    EXPECT_EQ(t.requests.front().first_token, kNoKernel);
    EXPECT_TRUE(t.requests.front().syncs.empty());
}

}  // namespace
}  // namespace amdqp::sim::test
