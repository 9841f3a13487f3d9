// SPDX-License-Identifier: MIT
#include <gtest/gtest.h>

#include <limits>
#include <stdexcept>

#include "harness.hpp"

namespace amdqp::policy::test {
namespace {

bool mentions(const std::vector<std::string>& errs, const std::string& what) {
    for (const auto& e : errs) {
        if (e.find(what) != std::string::npos)
            return true;
    }
    return false;
}

TEST(Config, DefaultsAreValid) {
    EXPECT_TRUE(Config{}.validate().empty());
    EXPECT_EQ(Config{}.order, SuspendOrder::kBeforeDoorbell);
}

TEST(Config, StarvationBoundMustStayBelowTheWatchdog) {
    Config c;
    c.watchdog_max_suspend = 5000ms;
    c.guard_margin = 100ms;
    c.max_continuous_suspend = 4900ms;
    EXPECT_TRUE(mentions(c.validate(), "watchdog"));
    c.max_continuous_suspend = 4899ms;
    EXPECT_TRUE(c.validate().empty());
}

TEST(Config, EveryBadKnobIsReported) {
    Config c;
    c.hysteresis_min = 0ns;
    c.hysteresis_factor = 0.5;
    c.hysteresis_quantile = 0.0;
    c.hysteresis_window = 0;
    c.min_low_share = 1.0;
    c.min_run_slice = 0ns;
    const auto errs = c.validate();
    EXPECT_EQ(errs.size(), 6u);
    EXPECT_TRUE(mentions(errs, "hysteresis_min"));
    EXPECT_TRUE(mentions(errs, "hysteresis_factor"));
    EXPECT_TRUE(mentions(errs, "hysteresis_quantile"));
    EXPECT_TRUE(mentions(errs, "hysteresis_window"));
    EXPECT_TRUE(mentions(errs, "min_low_share"));
    EXPECT_TRUE(mentions(errs, "min_run_slice"));
}

TEST(Config, HysteresisBoundsAreOrdered) {
    Config c;
    c.hysteresis_max = 1ms;
    EXPECT_TRUE(mentions(c.validate(), "hysteresis_max"));
    c = Config{};
    c.hysteresis_initial = 30ms;
    EXPECT_TRUE(mentions(c.validate(), "hysteresis_initial"));
}

TEST(Config, CuDemandMustBeAFraction) {
    Config c;
    c.cu_demand[12] = 1.5;
    c.cu_demand[7] = -0.1;
    c.cu_demand[3] = std::numeric_limits<double>::quiet_NaN();
    const auto errs = c.validate();
    EXPECT_EQ(errs.size(), 3u);
    EXPECT_TRUE(mentions(errs, "cu_demand[12]"));
    EXPECT_TRUE(mentions(errs, "cu_demand[7]"));
    EXPECT_TRUE(mentions(errs, "cu_demand[3]"));
    c = Config{};
    c.cu_demand[12] = 1.0;  // the whole GPU: a suspension, valid
    c.cu_demand[7] = 0.5;
    EXPECT_TRUE(c.validate().empty());
}

TEST(Config, ConfinementBoundMustStayBelowItsWatchdog) {
    Config c;
    c.max_continuous_confine = 60000ms;  // not checked while nothing confines
    EXPECT_TRUE(c.validate().empty());
    c.cu_demand[12] = 0.25;
    EXPECT_TRUE(mentions(c.validate(), "max_confine_ms"));
    c.max_continuous_confine = 59899ms;
    EXPECT_TRUE(c.validate().empty());
    c.max_continuous_confine = 0ns;
    EXPECT_TRUE(mentions(c.validate(), "max_continuous_confine must be > 0"));
}

TEST(Config, PolicyRefusesAnInvalidConfig) {
    Config c;
    c.max_continuous_suspend = 10s;
    FakeClock clock;
    RecordingActions actions(clock);
    EXPECT_THROW(Policy(c, clock, actions), std::invalid_argument);
}

TEST(Config, OrderIsReported) {
    Config c;
    c.order = SuspendOrder::kAfterDoorbell;
    Rig rig(c);
    EXPECT_EQ(rig.policy.order(), SuspendOrder::kAfterDoorbell);
    EXPECT_EQ(to_string(rig.policy.order()), "after-doorbell");
    EXPECT_EQ(to_string(SuspendOrder::kBeforeDoorbell), "before-doorbell");
}

}  // namespace
}  // namespace amdqp::policy::test
