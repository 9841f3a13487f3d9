// SPDX-License-Identifier: MIT
// Validation on the measured H200 dual-model numbers (data/): the
// timeslice model is calibrated on the HP P99 and the LP throughput, which
// was not fitted, is predicted.
#include <gtest/gtest.h>

#include <cstdio>
#include <filesystem>
#include <fstream>

#include "timeline_json.hpp"
#include "validate.hpp"

namespace amdqp::sim {
namespace {

const std::string kData = AMDQP_SIM_DATA;

TEST(Timeline, LoadsTheContractFormat) {
    const auto t = load_timeline_json(kData + "/h200/resnet18_bs1.json");
    EXPECT_EQ(t.batch, 1);
    EXPECT_DOUBLE_EQ(t.period_s, 0.05);
    ASSERT_EQ(t.requests.size(), 30u);
    EXPECT_EQ(t.requests.front().kernels.size(), 114u);
    EXPECT_EQ(t.requests.front().kernels.front().start, 0);
    EXPECT_EQ(t.requests.front().kernels.front().dur, 30020);
}

TEST(Timeline, ReadsTheKernelClass) {
    const auto t = parse_timeline_json(
        nlohmann::json::parse(R"({"requests": [[[5, 1], [7, 2, "nccl"]]]})"), "inline");
    EXPECT_EQ(t.requests[0].kernels[0].start, 0);  // relative to the first kernel
    EXPECT_EQ(t.requests[0].kernels[1].cls, KernelClass::kNccl);
    EXPECT_THROW(
        parse_timeline_json(nlohmann::json::parse(R"({"requests": [[[0, 1, "x"]]]})"), "inline"),
        std::runtime_error);
}

TEST(Validate, CalibratesOnTheHpP99AndPredictsAnotherNumber) {
    const auto c = load_case(kData + "/h200_dual_r18_r50bs1024.json", kData + "/h200");
    EXPECT_EQ(c.hp.batch, 1);
    EXPECT_EQ(c.lp.batch, 1024);
    CaseSetup s;
    s.device.kind = DeviceKind::kTimeslice;
    s.duration = 20 * kSec;
    const double slice = calibrate(c, s, Knob::kSliceUs);
    EXPECT_GT(slice, 100.0);
    EXPECT_LT(slice, 20000.0);
    auto p = predict(c, s);
    // The fit reproduces the measured P99...
    EXPECT_LT(p.error_pct, 10.0);
    // ...and the LP throughput, not fitted, is predicted and its error printed.
    ASSERT_TRUE(p.lp_error_pct.has_value());
    EXPECT_NEAR(*p.measured_lp, 7.37, 1e-9);
    EXPECT_GT(*p.predicted_lp, 0.0);
    p.calibration = true;
    const auto text = format_prediction(p);
    EXPECT_NE(text.find("validation error (LP throughput): "), std::string::npos) << text;
    EXPECT_NE(text.find("calibration case"), std::string::npos) << text;
}

TEST(Validate, SecondCaseGetsItsOwnHpP99Error) {
    // A second measured case with a different contended P99 (written here
    // in the contract format): its error is computed against the model
    // calibrated on the first.
    const auto dir = std::filesystem::temp_directory_path() / "amdqp-sim-validate-test";
    std::filesystem::create_directories(dir);
    auto j = nlohmann::json::parse(std::ifstream(kData + "/h200_dual_r18_r50bs1024.json"));
    j["summary"]["hp_p99_contended_ms"] = 8.0;
    const auto file = (dir / "other.json").string();
    std::ofstream(file) << j.dump();
    const auto cal = load_case(kData + "/h200_dual_r18_r50bs1024.json", kData + "/h200");
    const auto other = load_case(file, kData + "/h200");
    CaseSetup s;
    s.device.kind = DeviceKind::kTimeslice;
    s.duration = 20 * kSec;
    calibrate(cal, s, Knob::kSliceUs);
    const auto p = predict(other, s);
    EXPECT_EQ(p.name, "other");
    // Same workloads, so the same prediction, compared with 8 ms.
    EXPECT_NEAR(p.error_pct, 100.0 * std::abs(p.predicted_p99 - 8.0) / 8.0, 1e-9);
    EXPECT_GT(p.error_pct, 15.0);
    EXPECT_NE(format_prediction(p).find("validation error: "), std::string::npos);
    std::filesystem::remove_all(dir);
}

}  // namespace
}  // namespace amdqp::sim
