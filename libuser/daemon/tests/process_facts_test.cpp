// SPDX-License-Identifier: MIT
#include <gtest/gtest.h>
#include <unistd.h>

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
    Verdict v = decide(rules, GroupBy::kCgroup, f, "");
    EXPECT_EQ(v.priority, 12);
    EXPECT_EQ(v.rule, "f:7");
    EXPECT_EQ(v.group, "cgroup:/kubepods/burstable/pod-abc/ctr");
    // AMDQP_GROUP beats the cgroup; group_by none keeps loners alone.
    EXPECT_EQ(decide(rules, GroupBy::kCgroup, f, "tp0").group, "tp0");
    EXPECT_EQ(decide({}, GroupBy::kNone, f, "").group, "");
    // The root cgroup is shared by unrelated processes: never a group.
    // (Moved in, not = "/": GCC 12 -O2 warns -Wrestrict, falsely, on that
    // assignment here.)
    f.cgroup = std::string("/");
    EXPECT_EQ(decide({}, GroupBy::kCgroup, f, "").group, "");
    f.exe = "/bin/sh";
    EXPECT_FALSE(decide(rules, GroupBy::kNone, f, "").priority);
}

}  // namespace
