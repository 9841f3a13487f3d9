// SPDX-License-Identifier: MIT
#include <gtest/gtest.h>

#include "config_file.hpp"

namespace {

using namespace amdqp::daemon;
using namespace std::chrono_literals;

DaemonConfig parse(const std::string& text, std::chrono::milliseconds wd = 5000ms) {
    return parse_config(text, "amdqpd.toml", wd);
}

std::vector<std::string> problems(const std::string& text, std::chrono::milliseconds wd = 5000ms) {
    try {
        parse(text, wd);
    } catch (const ConfigError& e) {
        return e.problems();
    }
    return {};
}

TEST(Config, EmptyFileGivesTheDefaults) {
    DaemonConfig c = parse("");
    EXPECT_EQ(c.metrics, "127.0.0.1:9464");
    EXPECT_EQ(c.policy.order, amdqp::policy::SuspendOrder::kBeforeDoorbell);
    EXPECT_EQ(c.policy.hysteresis_min, 3ms);
    EXPECT_EQ(c.group_by, GroupBy::kCgroup);
    EXPECT_FALSE(c.queue_metrics) << "pid labels tell who runs what: off unless asked";
    EXPECT_TRUE(c.rules.empty());
}

TEST(Config, EveryKnobIsRead) {
    DaemonConfig c = parse(R"(
[daemon]
runtime_dir = "/run/x"
metrics = "unix:/run/amdqp/m.sock"
queue_metrics = true
log_level = "debug"
poll_interval_us = 100
idle_poll_ms = 20
rescan_ms = 500
coop_lease_ms = 3000
group_by = "none"
realtime_priority = 10

[policy]
order = "after-doorbell"
hold_timeout_us = 1500
hysteresis_min_ms = 2.5
hysteresis_max_ms = 30
hysteresis_initial_ms = 4
hysteresis_factor = 2.0
hysteresis_quantile = 0.9
hysteresis_window = 16
relapse_factor = 3
max_continuous_suspend_ms = 800
min_low_share = 0.2
share_window_ms = 2000
min_run_slice_ms = 25
guard_margin_ms = 200

[[rule]]
match.cgroup = "/kubepods/*/pod-inference*"
priority = "high"

[[rule]]
match = { uid = 1001, exe = "/usr/bin/python3*" }
priority = 2
group = "train-job"
)");
    EXPECT_EQ(c.runtime_dir, "/run/x");
    EXPECT_EQ(c.metrics, "unix:/run/amdqp/m.sock");
    EXPECT_TRUE(c.queue_metrics);
    EXPECT_EQ(c.poll_interval, 100us);
    EXPECT_EQ(c.idle_poll, 20ms);
    EXPECT_EQ(c.coop_lease, 3000ms);
    EXPECT_EQ(c.group_by, GroupBy::kNone);
    EXPECT_EQ(c.realtime_priority, 10);
    EXPECT_EQ(c.policy.order, amdqp::policy::SuspendOrder::kAfterDoorbell);
    EXPECT_EQ(c.hold_timeout, 1500us);
    EXPECT_EQ(c.policy.hysteresis_min, 2500us);
    EXPECT_EQ(c.policy.max_continuous_suspend, 800ms);
    EXPECT_DOUBLE_EQ(c.policy.min_low_share, 0.2);
    EXPECT_EQ(c.policy.hysteresis_window, 16u);
    ASSERT_EQ(c.rules.size(), 2u);
    EXPECT_EQ(c.rules[0].priority, 12);
    EXPECT_EQ(c.rules[0].where, "amdqpd.toml:30");
    EXPECT_EQ(c.rules[1].uid, 1001u);
    EXPECT_EQ(c.rules[1].priority, 2);
    EXPECT_EQ(c.rules[1].group, "train-job");
}

TEST(Config, ProblemsNameFileLineAndWhat) {
    auto p = problems("[daemon]\nmetrics = \"127.0.0.1:9464\"\npol_interval_us = 5\n");
    ASSERT_EQ(p.size(), 1u);
    EXPECT_EQ(p[0], "amdqpd.toml:3: unknown key 'pol_interval_us' in [daemon]");

    p = problems("[policy]\n\norder = \"sometimes\"\nhysteresis_min_ms = \"fast\"\n");
    ASSERT_EQ(p.size(), 2u);
    EXPECT_NE(p[0].find("amdqpd.toml:3: order must be before-doorbell or after-doorbell"),
              std::string::npos);
    EXPECT_EQ(p[1], "amdqpd.toml:4: hysteresis_min_ms must be a number >= 0");
}

TEST(Config, SyntaxErrorsCarryTheirLine) {
    auto p = problems("[daemon]\nmetrics = \n");
    ASSERT_EQ(p.size(), 1u);
    EXPECT_EQ(p[0].rfind("amdqpd.toml:2: ", 0), 0u) << p[0];
}

TEST(Config, StarvationBoundMustStayUnderTheKernelWatchdog) {
    auto p = problems("[policy]\nmax_continuous_suspend_ms = 900\n", 1000ms);
    ASSERT_EQ(p.size(), 1u);
    EXPECT_NE(p[0].find("max_suspend_ms"), std::string::npos) << p[0];
    EXPECT_EQ(p[0].rfind("amdqpd.toml:1: ", 0), 0u) << p[0];
    EXPECT_TRUE(problems("[policy]\nmax_continuous_suspend_ms = 800\n", 1000ms).empty());
}

TEST(Config, RulesNeedAMatchAndAnEffect) {
    auto p = problems(
        "[[rule]]\npriority = 12\n\n[[rule]]\nmatch.uid = 5\n\n[[rule]]\n"
        "match.exe = \"/bin/x\"\npriority = 99\n");
    ASSERT_EQ(p.size(), 3u);
    EXPECT_NE(p[0].find("needs a match table"), std::string::npos) << p[0];
    EXPECT_NE(p[1].find("must set priority, max_priority or group"), std::string::npos) << p[1];
    EXPECT_EQ(p[2], "amdqpd.toml:9: priority must be 0..15 or low, normal, high");
}

TEST(Config, TrustAndKubernetesAreRead) {
    DaemonConfig c = parse(R"(
[trust]
default_max_priority = "low"
max_pages_per_uid = 4
max_queues_per_uid = 16
loop_share_pct = 5

[kubernetes]
api = "http://127.0.0.1:8001"
node_name = "node-7"
refresh_ms = 1000

[[rule]]
match.k8s_priority_class = "inference-high"
priority = "high"

[[rule]]
match = { gid = 2001, cgroup = "/system.slice/*.service" }
max_priority = 10

[[rule]]
match.k8s_label = "amdqp.io/tier=batch"
priority = "low"
)");
    EXPECT_EQ(c.default_max_priority, 2);
    EXPECT_EQ(c.max_pages_per_uid, 4u);
    EXPECT_EQ(c.max_queues_per_uid, 16u);
    EXPECT_EQ(c.loop_share_pct, 5);
    EXPECT_EQ(parse("").loop_share_pct, 20);
    for (const char* bad : {"0", "101", "\"all\""}) {
        auto p = problems(std::string("[trust]\nloop_share_pct = ") + bad + "\n");
        ASSERT_EQ(p.size(), 1u) << bad;
        EXPECT_NE(p[0].find("loop_share_pct"), std::string::npos) << p[0];
    }
    EXPECT_EQ(c.kube.api, "http://127.0.0.1:8001");
    EXPECT_EQ(c.kube.node_name, "node-7");
    EXPECT_EQ(c.kube.refresh, 1000ms);
    ASSERT_EQ(c.rules.size(), 3u);
    EXPECT_EQ(c.rules[0].k8s_priority_class, "inference-high");
    EXPECT_EQ(c.rules[0].ceiling(), 12);
    EXPECT_EQ(c.rules[1].gid, 2001u);
    EXPECT_EQ(c.rules[1].max_priority, 10);
    EXPECT_EQ(c.rules[2].k8s_label, "amdqp.io/tier=batch");
    // The default is normal: above it only by a rule.
    EXPECT_EQ(parse("").default_max_priority, 7);
}

TEST(Config, CuDemandIsReadPerLevelAndChecked) {
    DaemonConfig c = parse(
        "[policy]\ncu_demand = { high = 0.4, 10 = 0.25, low = 1 }\n"
        "max_continuous_confine_ms = 20000\n");
    EXPECT_DOUBLE_EQ(c.policy.cu_demand[12], 0.4);
    EXPECT_DOUBLE_EQ(c.policy.cu_demand[10], 0.25);
    EXPECT_DOUBLE_EQ(c.policy.cu_demand[2], 1.0);
    EXPECT_DOUBLE_EQ(c.policy.cu_demand[7], 0.0);
    EXPECT_EQ(c.policy.max_continuous_confine, 20000ms);
    EXPECT_TRUE(c.policy.confines());
    EXPECT_FALSE(parse("").policy.confines());
    auto p = problems("[policy]\ncu_demand = { nope = 0.5 }\n");
    ASSERT_EQ(p.size(), 1u);
    EXPECT_NE(p[0].find("'nope' is not a priority"), std::string::npos) << p[0];
    p = problems("[policy]\ncu_demand = { high = 1.5 }\n");
    ASSERT_EQ(p.size(), 1u);
    EXPECT_NE(p[0].find("cu_demand.high must be a number from 0 to 1"), std::string::npos) << p[0];
    p = problems("[policy]\ncu_demand = 0.5\n");
    ASSERT_EQ(p.size(), 1u);
    EXPECT_NE(p[0].find("cu_demand must be a table"), std::string::npos) << p[0];
    // The bound must stay under amdqp.ko's max_confine_ms.
    EXPECT_FALSE(problems("[policy]\ncu_demand = { high = 0.5 }\nmax_continuous_confine_ms = "
                          "70000\n")
                     .empty());
}

TEST(Config, CuDemandAutoIsReadAndChecked) {
    DaemonConfig c = parse(
        "[policy]\ncu_demand = { high = \"auto\", normal = 0.25 }\n"
        "cu_demand_auto = { workgroups_per_cu = 4, min = 0.1, max = 0.9, hold_ms = 250 }\n");
    EXPECT_TRUE(c.policy.cu_demand_is_auto[12]);
    EXPECT_DOUBLE_EQ(c.policy.cu_demand[12], 0.0);
    EXPECT_FALSE(c.policy.cu_demand_is_auto[7]);
    EXPECT_DOUBLE_EQ(c.policy.cu_demand[7], 0.25);
    EXPECT_EQ(c.policy.cu_demand_auto.workgroups_per_cu, 4u);
    EXPECT_DOUBLE_EQ(c.policy.cu_demand_auto.min, 0.1);
    EXPECT_DOUBLE_EQ(c.policy.cu_demand_auto.max, 0.9);
    EXPECT_EQ(c.policy.cu_demand_auto.hold, 250ms);
    EXPECT_TRUE(c.policy.confines());
    // The defaults: one work group per CU, unbounded, held a second.
    c = parse("[policy]\ncu_demand = { 12 = \"auto\" }\n");
    EXPECT_TRUE(c.policy.cu_demand_is_auto[12]);
    EXPECT_EQ(c.policy.cu_demand_auto.workgroups_per_cu, 1u);
    EXPECT_DOUBLE_EQ(c.policy.cu_demand_auto.min, 0.0);
    EXPECT_DOUBLE_EQ(c.policy.cu_demand_auto.max, 1.0);
    EXPECT_EQ(c.policy.cu_demand_auto.hold, 1000ms);

    auto p = problems("[policy]\ncu_demand = { high = \"adaptive\" }\n");
    ASSERT_EQ(p.size(), 1u);
    EXPECT_NE(p[0].find("cu_demand.high must be a number from 0 to 1 or \"auto\""),
              std::string::npos)
        << p[0];
    p = problems(
        "[policy]\ncu_demand = { high = \"auto\" }\n"
        "cu_demand_auto = { workgroups_per_cu = 0, min = 2, max = \"x\", hold_ms = -1, "
        "occupancy = 3 }\n");
    ASSERT_EQ(p.size(), 5u);
    EXPECT_NE(p[0].find("amdqpd.toml:3: unknown key 'occupancy' in cu_demand_auto"),
              std::string::npos)
        << p[0];
    EXPECT_NE(p[1].find("workgroups_per_cu must be 1..64"), std::string::npos) << p[1];
    EXPECT_NE(p[2].find("cu_demand_auto.min must be a number from 0 to 1"), std::string::npos)
        << p[2];
    EXPECT_NE(p[3].find("cu_demand_auto.max must be a number from 0 to 1"), std::string::npos)
        << p[3];
    EXPECT_NE(p[4].find("hold_ms must be a number >= 0"), std::string::npos) << p[4];
    p = problems("[policy]\ncu_demand_auto = 1\n");
    ASSERT_EQ(p.size(), 1u);
    EXPECT_NE(p[0].find("cu_demand_auto must be a table"), std::string::npos) << p[0];
    // Cross-knob: the policy's own validation, attributed to [policy].
    p = problems(
        "[policy]\ncu_demand = { high = \"auto\" }\ncu_demand_auto = { min = 0.6, max = 0.5 "
        "}\n");
    ASSERT_EQ(p.size(), 1u);
    EXPECT_NE(p[0].find("cu_demand_auto.max must be >= cu_demand_auto.min"), std::string::npos)
        << p[0];
}

TEST(Config, GrantsNeedAnIdentityTheTenantCannotChoose) {
    auto p = problems("[trust]\ndefault_max_priority = \"high\"\n");
    ASSERT_EQ(p.size(), 1u);
    EXPECT_NE(p[0].find("normal (7) or lower"), std::string::npos) << p[0];
    // exe alone: anyone can copy a program under that name.
    p = problems("[[rule]]\nmatch.exe = \"*/vllm\"\npriority = \"high\"\n");
    ASSERT_EQ(p.size(), 1u);
    EXPECT_NE(p[0].find("exe alone is chosen by the tenant"), std::string::npos) << p[0];
    EXPECT_TRUE(problems("[[rule]]\nmatch.exe = \"*/train\"\npriority = \"low\"\n").empty());
    EXPECT_TRUE(
        problems("[[rule]]\nmatch = { uid = 5, exe = \"*/vllm\" }\npriority = \"high\"\n").empty());
    // Pods need the pod list; the API only on loopback (TLS stays in the proxy).
    p = problems("[[rule]]\nmatch.k8s_namespace = \"x\"\npriority = 2\n");
    ASSERT_EQ(p.size(), 1u);
    EXPECT_NE(p[0].find("needs [kubernetes] api"), std::string::npos) << p[0];
    p = problems("[kubernetes]\napi = \"http://10.0.0.1:8001\"\n");
    ASSERT_EQ(p.size(), 1u);
    EXPECT_NE(p[0].find("loopback only"), std::string::npos) << p[0];
    p = problems("[[rule]]\nmatch.uid = 5\npriority = 12\nmax_priority = 7\n");
    ASSERT_EQ(p.size(), 1u);
    EXPECT_NE(p[0].find("max_priority must not be below priority"), std::string::npos) << p[0];
    p = problems(
        "[[rule]]\nmatch.k8s_label = \"novalue\"\npriority = 2\n[kubernetes]\n"
        "api = \"unix:/run/k.sock\"\n");
    ASSERT_EQ(p.size(), 1u);
    EXPECT_NE(p[0].find("key=value"), std::string::npos) << p[0];
}

TEST(Config, BadMetricsAddressAndHoldLongerThanHysteresis) {
    auto p = problems("[daemon]\nmetrics = \"9464\"\n");
    ASSERT_EQ(p.size(), 1u);
    EXPECT_NE(p[0].find("HOST:PORT"), std::string::npos);
    p = problems("[policy]\nhold_timeout_us = 5000\n");
    ASSERT_EQ(p.size(), 1u);
    EXPECT_NE(p[0].find("hold_timeout_us"), std::string::npos);
}

TEST(Config, MissingDefaultFileIsDefaultsButAnExplicitOneIsAnError) {
    EXPECT_NO_THROW(load_config("/nonexistent/amdqpd.toml", false, 5000ms));
    try {
        load_config("/nonexistent/amdqpd.toml", true, 5000ms);
        FAIL() << "no error";
    } catch (const ConfigError& e) {
        EXPECT_NE(std::string(e.what()).find("/nonexistent/amdqpd.toml:1: cannot read"),
                  std::string::npos);
    }
}

TEST(Config, KernelWatchdogIsReadFromSysfs) {
    EXPECT_EQ(kernel_watchdog_max_suspend("/nonexistent"), 5000ms);
    char path[] = "/tmp/amdqpd-wd.XXXXXX";
    int fd = mkstemp(path);
    ASSERT_GE(fd, 0);
    ASSERT_EQ(write(fd, "750\n", 4), 4);
    close(fd);
    EXPECT_EQ(kernel_watchdog_max_suspend(path), 750ms);
    unlink(path);
}

}  // namespace
