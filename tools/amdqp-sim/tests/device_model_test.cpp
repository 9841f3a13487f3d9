// SPDX-License-Identifier: MIT
// The device models' arithmetic on hand-computed cases.
#include <gtest/gtest.h>

#include "device_model.hpp"

namespace amdqp::sim {
namespace {

TEST(SharedRates, KernelsThatFitTogetherRunAtFullSpeed) {
    const auto r = shared_rates({{0.3, 1, true}, {0.5, 1, true}}, 1.0, 0.2);
    EXPECT_DOUBLE_EQ(r[0], 1.0);
    EXPECT_DOUBLE_EQ(r[1], 1.0);
}

TEST(SharedRates, SmallKernelNextToAFullOneRunsAtTheCorunRate) {
    const auto r = shared_rates({{0.1, 1, true}, {1.0, 1, true}}, 1.0, 0.2);
    EXPECT_DOUBLE_EQ(r[0], 0.2);
    EXPECT_DOUBLE_EQ(r[1], 1.0 - 0.1 * 0.2);
}

TEST(SharedRates, MaskedQueuesDoNotInterfere) {
    // HP masked to 20 % of the CUs, LP to 80 %: HP's kernel needs 10 %,
    // LP's needs all of them, so LP runs at 0.8.
    const auto r = shared_rates({{0.1, 0.2, true}, {1.0, 0.8, true}}, 1.0, 0.2);
    EXPECT_DOUBLE_EQ(r[0], 1.0);
    EXPECT_DOUBLE_EQ(r[1], 0.8);
}

TEST(SharedRates, CpxPartitionHasAQuarterOfTheCompute) {
    // A kernel filling the whole device runs 4x longer on one XCC; one
    // needing 10 % of the device fits a quarter of it.
    const auto r = shared_rates({{1.0, 1, true}}, 0.25, 0.2);
    EXPECT_DOUBLE_EQ(r[0], 0.25);
    EXPECT_DOUBLE_EQ(shared_rates({{0.1, 1, true}}, 0.25, 0.2)[0], 1.0);
}

TEST(SharedRates, KernelHoldingCusWithoutProgressStillCrowdsOthers) {
    const auto r = shared_rates({{0.1, 1, true}, {1.0, 1, false}}, 1.0, 0.3);
    EXPECT_DOUBLE_EQ(r[0], 0.3);
    EXPECT_DOUBLE_EQ(r[1], 0.0);
}

TEST(UpdateCost, HwsSavesEveryResidentWaveAndRestoresTheMappedOnes) {
    HwsParams p;
    p.unmap = 100 * kUs;
    p.map = 40 * kUs;
    p.cwsr_save_full = 1000 * kUs;
    p.cwsr_restore_full = 800 * kUs;
    // LP fills the device, HP holds 10 %: both saved; only HP restored.
    const auto c = hws_update_cost(p, 1.0, 1.0 + 0.1, 0.1);
    EXPECT_EQ(c.unmap, 100 * kUs);
    EXPECT_EQ(c.save, 1000 * kUs);  // resident share is capped at the device
    EXPECT_EQ(c.map, 40 * kUs);
    EXPECT_EQ(c.restore, 80 * kUs);
    EXPECT_EQ(c.total(), 1220 * kUs);
    // A CPX partition has a quarter of the waves to save.
    EXPECT_EQ(hws_update_cost(p, 0.25, 1.0, 0.0).save, 250 * kUs);
}

TEST(UpdateCost, MesPaysOnlyForTheQueueItMoves) {
    HwsParams p;
    p.unmap = 100 * kUs;
    p.map = 40 * kUs;
    p.cwsr_save_full = 1000 * kUs;
    p.cwsr_restore_full = 800 * kUs;
    EXPECT_EQ(mes_remove_cost(p, 1.0, 0.5), 600 * kUs);
    EXPECT_EQ(mes_add_cost(p, 1.0, 0.5), 440 * kUs);
}

TEST(DeviceKind, ParsesItsNames) {
    EXPECT_EQ(parse_device_kind("mes"), DeviceKind::kMes);
    EXPECT_EQ(to_string(parse_device_kind("timeslice")), "timeslice");
    EXPECT_THROW(parse_device_kind("mps"), std::invalid_argument);
}

}  // namespace
}  // namespace amdqp::sim
