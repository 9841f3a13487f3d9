// SPDX-License-Identifier: MIT
#include <gtest/gtest.h>
#include <unistd.h>

#include <algorithm>

#include "process_facts.hpp"

namespace {

using namespace amdqp::daemon;

TEST(ProcessFacts, ReadsThisProcess) {
    auto f = read_process_facts(getpid());
    ASSERT_TRUE(f);
    EXPECT_EQ(f->uid, getuid());
    EXPECT_NE(f->exe.find("amdqpd_test"), std::string::npos);
    EXPECT_FALSE(f->comm.empty());
    EXPECT_FALSE(read_process_facts(0x7ffffff0));
}

TEST(ProcessFacts, FirstMatchingRuleWinsAndGroupsFallBack) {
    ProcessFacts f;
    f.uid = 1000;
    f.exe = "/usr/bin/python3.11";
    f.cgroup = "/kubepods/burstable/pod-abc/ctr";
    std::vector<Rule> rules(3);
    rules[0].uid = 2000;
    rules[0].priority = 2;
    rules[1].cgroup = "/kubepods/*/pod-abc/*";
    rules[1].priority = 12;
    rules[1].where = "f:7";
    rules[2].exe = "/usr/bin/python3*";
    rules[2].priority = 7;
    Verdict v = decide(rules, GroupBy::kCgroup, f, "", 15);
    EXPECT_EQ(v.priority, 12);
    EXPECT_EQ(v.rule, "f:7");
    EXPECT_EQ(v.group, "cgroup:/kubepods/burstable/pod-abc/ctr");
    // AMDQP_GROUP beats the cgroup; group_by none keeps loners alone.
    EXPECT_EQ(decide(rules, GroupBy::kCgroup, f, "tp0", 15).group, "uid:1000/tp0");
    EXPECT_EQ(decide({}, GroupBy::kNone, f, "", 15).group, "");
    // The root cgroup is shared by unrelated processes: never a group.
    // (Moved in, not = "/": GCC 12 -O2 warns -Wrestrict, falsely, on that
    // assignment here.)
    f.cgroup = std::string("/");
    EXPECT_EQ(decide({}, GroupBy::kCgroup, f, "", 15).group, "");
    f.exe = "/bin/sh";
    EXPECT_FALSE(decide(rules, GroupBy::kNone, f, "", 15).priority);
}

// '*' stays inside one path component: a rule for the services under
// system.slice must not also grant a tenant's cgroup delegated below one.
TEST(ProcessFacts, CgroupAndExeGlobsStopAtSlashes) {
    ProcessFacts f;
    f.uid = 1000;
    f.cgroup = "/system.slice/inference.service/tenant/x";
    std::vector<Rule> rules(1);
    rules[0].cgroup = "/system.slice/*";
    rules[0].priority = 12;
    EXPECT_FALSE(decide(rules, GroupBy::kNone, f, "", 7).priority);
    f.cgroup = "/system.slice/inference.service";
    EXPECT_EQ(decide(rules, GroupBy::kNone, f, "", 7).priority, 12);
    rules[0].cgroup.clear();
    rules[0].exe = "/opt/*";
    f.exe = "/opt/../home/mallory/opt/python3";
    EXPECT_FALSE(decide(rules, GroupBy::kNone, f, "", 7).priority);
}

// No rule: the default ceiling, and a queue's priority is the kernel's up
// to it; a rule's level or maximum otherwise.
TEST(ProcessFacts, CeilingsAndLevels) {
    ProcessFacts f;
    f.uid = 1000;
    f.gids = {1000, 44};
    Verdict v = decide({}, GroupBy::kNone, f, "", 7);
    EXPECT_EQ(v.ceiling, 7);
    EXPECT_EQ(effective_priority(v, 15), 7);
    EXPECT_EQ(effective_priority(v, 16), 7);
    EXPECT_EQ(effective_priority(v, 0xFFFFFFFFu), 7);
    EXPECT_EQ(effective_priority(v, 2), 2);
    std::vector<Rule> rules(2);
    rules[0].gid = 44;
    rules[0].max_priority = 12;
    rules[1].uid = 1000;
    rules[1].priority = 2;
    v = decide(rules, GroupBy::kNone, f, "", 7);
    EXPECT_EQ(v.ceiling, 12);
    EXPECT_EQ(effective_priority(v, 15), 12);
    EXPECT_EQ(effective_priority(v, 9), 9);
    f.gids = {1000};
    v = decide(rules, GroupBy::kNone, f, "", 7);
    EXPECT_EQ(effective_priority(v, 15), 2) << "a level is set whatever was declared";
}

// AMDQP_GROUP is the tenant's word: it groups only its own processes (its
// pod's, or its uid's), never with another tenant's.
TEST(ProcessFacts, PageGroupsStayInsideOneTenant) {
    ProcessFacts a, b;
    a.uid = 1000;
    b.uid = 2000;
    const auto ga = decide({}, GroupBy::kNone, a, "tp0", 7).group;
    const auto gb = decide({}, GroupBy::kNone, b, "tp0", 7).group;
    EXPECT_FALSE(ga.empty());
    EXPECT_NE(ga, gb);
    b.uid = 1000;
    EXPECT_EQ(decide({}, GroupBy::kNone, b, "tp0", 7).group, ga);
    // In pods (containers often all run as uid 0): the pod decides.
    a.uid = b.uid = 0;
    a.pod_uid = "6f1c2b0e-3d4a-4c5b-9e8f-0a1b2c3d4e5f";
    b.pod_uid = "0f1c2b0e-3d4a-4c5b-9e8f-0a1b2c3d4e5f";
    EXPECT_NE(decide({}, GroupBy::kNone, a, "tp0", 7).group,
              decide({}, GroupBy::kNone, b, "tp0", 7).group);
    b.pod_uid = a.pod_uid;
    EXPECT_EQ(decide({}, GroupBy::kNone, a, "tp0", 7).group,
              decide({}, GroupBy::kNone, b, "tp0", 7).group);
}

TEST(ProcessFacts, PodUidFromKubepodsCgroups) {
    const std::string uid = "6f1c2b0e-3d4a-4c5b-9e8f-0a1b2c3d4e5f";
    std::string u = uid;
    std::replace(u.begin(), u.end(), '-', '_');
    // systemd driver, each QoS class
    EXPECT_EQ(pod_uid_of_cgroup("/kubepods.slice/kubepods-burstable.slice/kubepods-burstable-pod" +
                                u + ".slice/cri-containerd-0123abcd.scope"),
              uid);
    EXPECT_EQ(
        pod_uid_of_cgroup("/kubepods.slice/kubepods-besteffort.slice/kubepods-besteffort-pod" + u +
                          ".slice/crio-0123.scope"),
        uid);
    EXPECT_EQ(
        pod_uid_of_cgroup("/kubepods.slice/kubepods-pod" + u + ".slice/cri-containerd-1.scope"),
        uid);
    // cgroupfs driver
    EXPECT_EQ(pod_uid_of_cgroup("/kubepods/burstable/pod" + uid + "/0123456789abcdef"), uid);
    EXPECT_EQ(pod_uid_of_cgroup("/kubepods/pod" + uid + "/0123456789abcdef"), uid);
    // Seen from inside a cgroup namespace (amdqpd in a pod): relative paths.
    EXPECT_EQ(pod_uid_of_cgroup("/../../kubepods-besteffort.slice/kubepods-besteffort-pod" + u +
                                ".slice/cri-containerd-1.scope"),
              uid);
    EXPECT_EQ(pod_uid_of_cgroup("/../../../kubepods-pod" + u + ".slice/cri-containerd-1.scope"),
              uid);
    EXPECT_EQ(pod_uid_of_cgroup("/../../pod" + uid + "/0123"), uid);
    EXPECT_EQ(pod_uid_of_cgroup("/../../burstable/pod" + uid + "/0123"), uid);
    EXPECT_EQ(pod_uid_of_cgroup("/../../user.slice/kubepods-pod" + u + ".slice/x"), "");
    // Not a pod: outside kubepods (a tenant may name its own cgroups so),
    // malformed uids, the QoS level itself.
    EXPECT_EQ(pod_uid_of_cgroup("/user.slice/user-1000.slice/kubepods/pod" + uid + "/x"), "");
    EXPECT_EQ(pod_uid_of_cgroup("/kubepods/burstable/pod" + uid + "x/1"), "");
    EXPECT_EQ(pod_uid_of_cgroup("/kubepods/burstable/podnot-a-uid/1"), "");
    EXPECT_EQ(pod_uid_of_cgroup("/kubepods.slice/kubepods-burstable.slice"), "");
    EXPECT_EQ(pod_uid_of_cgroup("/"), "");
}

TEST(ProcessFacts, KubernetesRulesMatchThePod) {
    ProcessFacts f;
    f.pod_uid = "6f1c2b0e-3d4a-4c5b-9e8f-0a1b2c3d4e5f";
    std::vector<Rule> rules(3);
    rules[0].k8s_priority_class = "inference-high";
    rules[0].priority = 12;
    rules[1].k8s_namespace = "batch-*";
    rules[1].priority = 2;
    rules[2].k8s_label = "amdqp.io/tier=gold";
    rules[2].max_priority = 10;
    EXPECT_EQ(decide(rules, GroupBy::kNone, f, "", 7).ceiling, 7) << "pod unknown: the default";
    f.pod = PodInfo{f.pod_uid, "serving", "llm-0", "inference-high", {}};
    EXPECT_EQ(decide(rules, GroupBy::kNone, f, "", 7).priority, 12);
    f.pod->priority_class = "other";
    f.pod->namespace_ = "batch-7";
    EXPECT_EQ(decide(rules, GroupBy::kNone, f, "", 7).priority, 2);
    f.pod->namespace_ = "x";
    f.pod->labels["amdqp.io/tier"] = "gold";
    EXPECT_EQ(decide(rules, GroupBy::kNone, f, "", 7).ceiling, 10);
}

}  // namespace
