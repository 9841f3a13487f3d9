// SPDX-License-Identifier: MIT
// The sweep's decode case on a short run: what each approach keeps.
#include <gtest/gtest.h>

#include <map>
#include <string>

#include "sweep.hpp"
#include "timeline_json.hpp"

namespace amdqp::sim {
namespace {

TEST(DecodeCase, ConfineKeepsMoreOfTheBatchJobThanSuspendAtTheSameTail) {
    SweepOptions o;
    o.decode_timeline = std::string(AMDQP_SIM_DATA) + "/h200/deepseek_v3_tiny_1gpu.json";
    o.decode_costs_us = {96};
    DualModel base;
    base.lp = load_timeline_json(std::string(AMDQP_SIM_DATA) + "/h200/resnet50_bs1024.json");
    base.device.kind = DeviceKind::kHws;
    base.device.hws.corun_rate = 0.0233;
    base.duration = 3 * kSec;
    const auto j = decode_case(o, base);
    EXPECT_EQ(j["kernels_per_step"].get<std::size_t>(), 657u);
    std::map<std::string, nlohmann::json> by;
    for (const auto& p : j["points"])
        by[p["approach"].get<std::string>() + p["params"].dump()] = p;
    const auto& native = by.at("native{}");
    const auto& sus = by.at(R"(amdqpd-hws-suspend{"cost_us":96.0})");
    const auto& con = by.at(R"(amdqpd-hws-confine{"cost_us":96.0,"cu_demand":0.1})");
    // Without amdqpd the decode steps crawl next to the batch job.
    EXPECT_GT(native["p99_ratio"].get<double>(), 2.0);
    // Either policy brings the tail back; confining keeps more of the LP.
    EXPECT_LT(sus["p99_ratio"].get<double>(), 1.1);
    EXPECT_LT(con["p99_ratio"].get<double>(), 1.1);
    EXPECT_GT(con["lp_kept"].get<double>(), sus["lp_kept"].get<double>() + 0.2);
    EXPECT_GT(con["confine_calls"].get<std::uint64_t>(), 0u);
    EXPECT_EQ(con["suspend_calls"].get<std::uint64_t>(), 0u);
    // The CU mask gives the LP 90 % of the CUs for good.
    EXPECT_NEAR(by.at(R"(cu-mask{"hp_cu_fraction":0.1})")["lp_kept"].get<double>(), 0.9, 0.01);
}

}  // namespace
}  // namespace amdqp::sim
