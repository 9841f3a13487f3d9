// SPDX-License-Identifier: MIT
// The daemon keys of scenario files and the command line.
#include <gtest/gtest.h>

#include <stdexcept>

#include "scenario_file.hpp"

namespace amdqp::sim {
namespace {

TEST(DaemonKeys, CuDemandTakesLevelNamesAndNumbers) {
    DaemonParams d;
    apply_daemon_keys(nlohmann::json::parse(
                          R"({"cu_demand": {"high": 0.25, "10": 0.5},
                              "max_continuous_confine_ms": 400})"),
                      d);
    EXPECT_EQ(d.policy.cu_demand[12], 0.25);
    EXPECT_EQ(d.policy.cu_demand[10], 0.5);
    EXPECT_EQ(d.policy.cu_demand[7], 0.0);
    EXPECT_EQ(d.policy.max_continuous_confine.count(), 400'000'000);
    EXPECT_TRUE(d.policy.confines());
}

TEST(DaemonKeys, CuDemandRefusesWhatIsNotALevelOrAShare) {
    for (const char* bad : {R"({"cu_demand": {"urgent": 0.2}})", R"({"cu_demand": {"16": 0.2}})",
                            R"({"cu_demand": {"-1": 0.2}})", R"({"cu_demand": {"12x": 0.2}})",
                            R"({"cu_demand": {"high": 1.5}})", R"({"cu_demand": {"high": "a"}})",
                            R"({"cu_demand": [0.2]})"}) {
        DaemonParams d;
        EXPECT_THROW(apply_daemon_keys(nlohmann::json::parse(bad), d), std::runtime_error) << bad;
    }
}

TEST(DaemonKeys, ScenarioFilesAcceptTheConfineKeys) {
    const auto j = nlohmann::json::parse(R"({
        "devices": [{"gpu": 0}],
        "workloads": [{"name": "w", "timeline": "h200/resnet18_bs1.json"}],
        "daemon": {"cu_demand": {"high": 0.3}, "max_continuous_confine_ms": 100}})");
    const auto sc = parse_scenario(j, AMDQP_SIM_DATA);
    EXPECT_EQ(sc.daemon.policy.cu_demand[12], 0.3);
    EXPECT_EQ(sc.daemon.policy.max_continuous_confine.count(), 100'000'000);
}

TEST(WorkloadKeys, CollectivesAreRingUnlessTheFileSaysArrival) {
    auto scenario = [](const char* coll) {
        auto j = nlohmann::json::parse(R"({
            "devices": [{"gpu": 0}],
            "workloads": [{"name": "w", "timeline": "h200/resnet18_bs1.json"}]})");
        if (coll)
            j["workloads"][0]["collectives"] = coll;
        return parse_scenario(j, AMDQP_SIM_DATA);
    };
    EXPECT_EQ(scenario(nullptr).workloads[0].collectives, Collectives::kRing);
    EXPECT_EQ(scenario("ring").workloads[0].collectives, Collectives::kRing);
    EXPECT_EQ(scenario("arrival").workloads[0].collectives, Collectives::kArrival);
    EXPECT_THROW(scenario("tree"), std::runtime_error);
}

}  // namespace
}  // namespace amdqp::sim
