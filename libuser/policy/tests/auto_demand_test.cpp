// SPDX-License-Identifier: MIT
// The adaptive demand (Config::cu_demand_is_auto, issue 27): a level's
// share of the GPU comes from the work groups its queues' recent
// dispatches ask for (fake clock).
#include <gtest/gtest.h>

#include <cstdint>
#include <stdexcept>

#include "harness.hpp"

namespace amdqp::policy::test {
namespace {

using V = std::vector<std::uint32_t>;
using S = std::vector<double>;

// An MI308X partition: 4 XCCs of 20 CUs; eighths of an XCC are 3 CUs.
constexpr CuGeometry kMi308x{4, 20};

Config adaptive() {
    Config c;
    c.cu_demand_is_auto[12] = true;
    return c;
}

struct AutoRig : Rig {
    explicit AutoRig(const Config& c = adaptive()) : Rig(c) {
        policy.set_geometry(1, kMi308x);
        lp = add(20, 1, 2);
        hp = add(10, 1, 12);
        keep_busy(lp);
    }
    // A doorbell of the high queue whose page shows @wgs.
    void ring_hp(std::uint32_t wgs) {
        q[hp].s.demand_wgs = wgs;
        q[hp].ring(clock.now);
        sample();
    }
    void finish_hp() {
        q[hp].drain();
        sample();
    }
    QueueKey lp, hp;
};

TEST(AutoDemand, ConfinesToTheCusTheDispatchesNeed) {
    AutoRig rig;
    // 16 work groups, one per CU: 4 per XCC, rounded up to 6 (eighths):
    // the high work needs 0.3 of the GPU, the lower queues keep 0.7.
    rig.ring_hp(16);
    ASSERT_EQ(rig.actions.calls.size(), 1u);
    EXPECT_EQ(rig.actions.calls[0].kind, Call::kConfine);
    EXPECT_EQ(rig.actions.calls[0].gpus, V{1});
    EXPECT_EQ(rig.actions.calls[0].priority, 12);
    ASSERT_EQ(rig.actions.calls[0].shares.size(), 1u);
    EXPECT_DOUBLE_EQ(rig.actions.calls[0].shares[0], 0.7);
    EXPECT_DOUBLE_EQ(rig.policy.auto_demand(1, 12), 0.3);
    EXPECT_EQ(rig.policy.confine_level(1), 12);
    EXPECT_EQ(rig.policy.suspend_level(1), 0);
    // Turned into a mask: 14 of each XCC's 20 CUs stay with the lower work.
    EXPECT_EQ(kept_cus(rig.policy.confine_share(1), kMi308x), 14u);
}

TEST(AutoDemand, WholeGpuHostileOrUnknownDemandSuspendsAsToday) {
    for (std::uint32_t wgs : {80u, 81u, 4000u, UINT32_MAX, 0u}) {
        AutoRig rig;
        rig.ring_hp(wgs);
        ASSERT_EQ(rig.actions.calls.size(), 1u) << wgs;
        EXPECT_EQ(rig.actions.calls[0].kind, Call::kSuspend) << wgs;
        EXPECT_EQ(rig.actions.calls[0].priority, 12) << wgs;
        EXPECT_EQ(rig.policy.suspend_level(1), 12) << wgs;
        EXPECT_EQ(rig.policy.confine_level(1), 0) << wgs;
    }
}

TEST(AutoDemand, UnknownGeometrySuspends) {
    Rig rig(adaptive());
    const auto lp = rig.add(20, 1, 2);
    const auto hp = rig.add(10, 1, 12);
    rig.keep_busy(lp);
    rig.q[hp].s.demand_wgs = 8;
    rig.q[hp].ring(rig.clock.now);
    rig.sample();
    ASSERT_EQ(rig.actions.calls.size(), 1u);
    EXPECT_EQ(rig.actions.calls[0].kind, Call::kSuspend);
    // A GPU that cannot be confined (cu_per_xcc 0) likewise.
    rig.policy.set_geometry(1, CuGeometry{4, 0});
    EXPECT_EQ(rig.policy.suspend_level(1), 12);
    // Its geometry learned: the next decision confines.
    rig.policy.set_geometry(1, kMi308x);
    EXPECT_EQ(rig.policy.confine_level(1), 12);
    EXPECT_DOUBLE_EQ(rig.policy.confine_share(1), 0.85);  // 8 -> 2 per XCC -> 3
}

TEST(AutoDemand, RisesAtOnceFallsAfterTheHold) {
    AutoRig rig;
    rig.ring_hp(16);
    EXPECT_DOUBLE_EQ(rig.policy.confine_share(1), 0.7);
    rig.advance(1 * kMs);
    rig.ring_hp(40);  // 10 per XCC -> 12: 0.6
    ASSERT_EQ(rig.actions.calls.size(), 2u);
    EXPECT_EQ(rig.actions.calls[1].kind, Call::kConfine);
    EXPECT_DOUBLE_EQ(rig.actions.calls[1].shares[0], 0.4);
    const std::int64_t peak = rig.clock.now;
    // Smaller dispatches inside the hold leave the mask alone.
    for (int i = 0; i < 50; i++) {
        rig.advance(10 * kMs);
        rig.ring_hp(4);
    }
    EXPECT_EQ(rig.actions.calls.size(), 2u);
    EXPECT_DOUBLE_EQ(rig.policy.auto_demand(1, 12), 0.6);
    // A hold after the peak the lower demand takes over, in one call.
    rig.run_until(peak + rig.policy.config().cu_demand_auto.hold.count());
    rig.ring_hp(4);
    ASSERT_EQ(rig.actions.calls.size(), 3u);
    EXPECT_EQ(rig.actions.calls[2].kind, Call::kConfine);
    EXPECT_DOUBLE_EQ(rig.actions.calls[2].shares[0], 0.85);
    EXPECT_EQ(rig.policy.stats().confine_calls, 3u);
    EXPECT_EQ(rig.policy.stats().unconfine_calls, 0u);
}

TEST(AutoDemand, RequestAfterRequestKeepsOneMask) {
    AutoRig rig;
    // 20 requests 50 ms apart: each starts with a small kernel (what the
    // page shows first) and peaks at 40 work groups.
    for (int r = 0; r < 20; r++) {
        rig.ring_hp(4);
        rig.advance(500 * kUs);
        rig.ring_hp(40);
        rig.advance(2 * kMs);
        rig.finish_hp();
        rig.advance(48 * kMs);
    }
    const auto confines = rig.actions.of(Call::kConfine);
    const auto releases = rig.actions.of(Call::kUnconfine);
    // The first request confines twice (4, then 40 work groups); every
    // later one once, at the held peak, and is released after it.
    ASSERT_EQ(confines.size(), 21u);
    EXPECT_DOUBLE_EQ(confines[0].shares[0], 0.85);
    for (std::size_t i = 1; i < confines.size(); i++)
        EXPECT_DOUBLE_EQ(confines[i].shares[0], 0.4) << i;
    EXPECT_EQ(releases.size(), 20u);
    EXPECT_TRUE(rig.actions.of(Call::kSuspend).empty());
}

TEST(AutoDemand, QueuesOfTheLevelOnOneGpuAddUp) {
    AutoRig rig;
    const auto hp2 = rig.add(11, 1, 12);
    rig.q[hp2].s.demand_wgs = 24;
    rig.q[hp2].ring(rig.clock.now);
    rig.ring_hp(16);  // 40 in all: 0.6
    EXPECT_DOUBLE_EQ(rig.policy.confine_share(1), 0.4);
    EXPECT_EQ(rig.actions.of(Call::kConfine).size(), 1u) << "both in one step: one call";
    // A queue of another GPU does not count here.
    rig.policy.set_geometry(2, kMi308x);
    const auto other = rig.add(12, 2, 12);
    rig.q[other].s.demand_wgs = 80;
    rig.q[other].ring(rig.clock.now);
    rig.sample();
    EXPECT_DOUBLE_EQ(rig.policy.confine_share(1), 0.4);
}

TEST(AutoDemand, OccupancyAssumptionAndBounds) {
    Config c = adaptive();
    c.cu_demand_auto.workgroups_per_cu = 4;
    {
        AutoRig rig(c);
        rig.ring_hp(40);  // 10 CUs: 3 per XCC: 0.15
        EXPECT_DOUBLE_EQ(rig.policy.auto_demand(1, 12), 0.15);
    }
    c.cu_demand_auto.min = 0.25;
    c.cu_demand_auto.max = 0.5;
    {
        AutoRig rig(c);
        rig.ring_hp(4);  // 0.15 -> at least 0.25
        EXPECT_DOUBLE_EQ(rig.policy.confine_share(1), 0.75);
    }
    {
        AutoRig rig(c);
        rig.ring_hp(UINT32_MAX);  // the whole GPU -> at most 0.5: confined, never suspended
        EXPECT_DOUBLE_EQ(rig.policy.confine_share(1), 0.5);
        EXPECT_TRUE(rig.actions.of(Call::kSuspend).empty());
    }
    {
        AutoRig rig(c);
        rig.ring_hp(0);  // nothing known: the bounds do not invent a demand
        EXPECT_EQ(rig.policy.suspend_level(1), 12);
    }
}

TEST(AutoDemand, FixedAndAdaptiveLevelsSideBySide) {
    Config c = adaptive();
    c.cu_demand[7] = 0.25;
    AutoRig rig(c);
    const auto normal = rig.add(30, 1, 7);
    rig.q[normal].s.demand_wgs = 80;  // ignored: normal's demand is configured
    rig.q[normal].ring(rig.clock.now);
    rig.sample();
    EXPECT_EQ(rig.policy.confine_level(1), 7);
    EXPECT_DOUBLE_EQ(rig.policy.confine_share(1), 0.75);
    EXPECT_DOUBLE_EQ(rig.policy.auto_demand(1, 7), 0.0);
    rig.ring_hp(16);
    EXPECT_EQ(rig.policy.confine_level(1), 12);
    EXPECT_DOUBLE_EQ(rig.policy.confine_share(1), 0.7);
}

TEST(AutoDemand, IdleQueuesOfTheLevelDoNotCount) {
    AutoRig rig;
    const auto idle = rig.add(11, 1, 12);
    rig.q[idle].s.demand_wgs = 80;  // an old peak, never rung while watched
    rig.sample();
    rig.ring_hp(16);
    EXPECT_DOUBLE_EQ(rig.policy.confine_share(1), 0.7);
}

TEST(AutoDemand, IdleRankOfABusyGroupLendsItsDemandOnItsGpu) {
    Rig rig(adaptive());
    rig.policy.set_geometry(1, kMi308x);
    rig.policy.set_geometry(2, kMi308x);
    const auto lp = rig.add(20, 1, 2);
    const auto r1 = rig.add(10, 1, 12, "tp");
    const auto r2 = rig.add(11, 2, 12, "tp");
    rig.keep_busy(lp);
    rig.q[r1].s.demand_wgs = 16;  // what rank 1's last dispatches asked for
    rig.sample();
    EXPECT_DOUBLE_EQ(rig.policy.auto_demand(1, 12), 0.0) << "the group is idle";
    // Rank 2 turns busy: GPU 1 is at the group's level, sized by rank 1.
    rig.q[r2].s.demand_wgs = 40;
    rig.q[r2].ring(rig.clock.now);
    rig.sample();
    EXPECT_EQ(rig.policy.confine_level(1), 12);
    EXPECT_DOUBLE_EQ(rig.policy.confine_share(1), 0.7);
}

TEST(AutoDemand, NewGeometryForgetsTheHeldDemand) {
    AutoRig rig;
    rig.ring_hp(40);
    EXPECT_DOUBLE_EQ(rig.policy.auto_demand(1, 12), 0.6);
    rig.policy.set_geometry(1, CuGeometry{8, 38});  // an MI300X: 40 -> 5 per XCC (step 5)
    rig.sample();
    EXPECT_NEAR(rig.policy.auto_demand(1, 12), 5.0 / 38.0, 1e-12);
}

TEST(AutoDemand, ConfigValidation) {
    Config c = adaptive();
    EXPECT_TRUE(c.validate().empty());
    EXPECT_TRUE(c.confines());
    c.cu_demand[12] = 0.4;
    auto errs = c.validate();
    ASSERT_EQ(errs.size(), 1u);
    EXPECT_NE(errs[0].find("both a fraction and adaptive"), std::string::npos) << errs[0];
    c = adaptive();
    c.cu_demand_auto.workgroups_per_cu = 0;
    c.cu_demand_auto.min = 0.6;
    c.cu_demand_auto.max = 0.5;
    c.cu_demand_auto.hold = -1ns;
    errs = c.validate();
    EXPECT_EQ(errs.size(), 3u);
    c = adaptive();
    c.cu_demand_auto.max = 0;
    c.cu_demand_auto.workgroups_per_cu = kMaxWorkgroupsPerCu + 1;
    EXPECT_EQ(c.validate().size(), 2u);
    // The knobs do not matter while no level is adaptive.
    c.cu_demand_is_auto[12] = false;
    EXPECT_TRUE(c.validate().empty());
    EXPECT_FALSE(c.confines());
    // An adaptive level needs Actions that can confine.
    FakeClock clock;
    RecordingActions actions(clock);
    actions.confinable = false;
    EXPECT_THROW(Policy(adaptive(), clock, actions), std::invalid_argument);
}

}  // namespace
}  // namespace amdqp::policy::test
