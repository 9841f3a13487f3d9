// SPDX-License-Identifier: MIT
#include <gtest/gtest.h>

#include "cli.hpp"
#include "exit_status.hpp"
#include "names.hpp"
#include "process_info.hpp"
#include "queue_ref.hpp"

namespace amdqpctl {
namespace {

TEST(QueueRef, ById) {
    auto r = parse_queue_ref("4242:1:3");
    EXPECT_FALSE(r.by_ring);
    EXPECT_EQ(r.pid, 4242u);
    EXPECT_EQ(r.gpu_id, 1u);
    EXPECT_EQ(r.queue_id, 3u);
}

TEST(QueueRef, ByRingVa) {
    auto r = parse_queue_ref("4242@0x7f0000001000");
    EXPECT_TRUE(r.by_ring);
    EXPECT_EQ(r.pid, 4242u);
    EXPECT_EQ(r.ring_va, 0x7f0000001000ull);
}

TEST(QueueRef, RejectsMalformed) {
    for (const char* bad :
         {"", "4242", "4242:1", "4242:1:3:4", "0:1:3", "x:1:3", "4242:1:-3", "4242@", "4242@0x",
          "4242@0xzz", "@0x10", "4242@0x0", "99999999999:1:1"}) {
        EXPECT_THROW(parse_queue_ref(bad), UsageError) << bad;
    }
}

TEST(QueueRef, MessageShowsTheForms) {
    try {
        parse_queue_ref("nope");
        FAIL();
    } catch (const UsageError& e) {
        EXPECT_NE(std::string(e.what()).find("PID:GPU:QUEUE"), std::string::npos);
        EXPECT_NE(std::string(e.what()).find("PID@0xRINGVA"), std::string::npos);
        EXPECT_EQ(e.status(), exit_usage);
    }
}

TEST(Pid, PositiveNumbersOnly) {
    EXPECT_EQ(parse_pid("17"), 17u);
    EXPECT_THROW(parse_pid("0"), UsageError);
    EXPECT_THROW(parse_pid("-1"), UsageError);
    EXPECT_THROW(parse_pid("12abc"), UsageError);
}

TEST(SplitRun, AtDoubleDash) {
    auto s = split_run({"amdqpctl", "run", "-p", "low", "--", "sh", "-c", "exit 7"});
    EXPECT_EQ(s.cli, (std::vector<std::string>{"amdqpctl", "run", "-p", "low"}));
    EXPECT_EQ(s.command, (std::vector<std::string>{"sh", "-c", "exit 7"}));
}

TEST(SplitRun, AtTheFirstWordThatIsNotAnOption) {
    auto s = split_run({"amdqpctl", "run", "--priority", "high", "--group", "tp",
                        "--stream-priority", "python3", "-m", "x", "--priority", "y"});
    EXPECT_EQ(s.cli, (std::vector<std::string>{"amdqpctl", "run", "--priority", "high", "--group",
                                               "tp", "--stream-priority"}));
    EXPECT_EQ(s.command, (std::vector<std::string>{"python3", "-m", "x", "--priority", "y"}));
}

TEST(SplitRun, CommandAfterDoubleDashMayLookLikeAnOption) {
    auto s = split_run({"amdqpctl", "run", "--", "--weird", "-p"});
    EXPECT_EQ(s.command, (std::vector<std::string>{"--weird", "-p"}));
}

TEST(SplitRun, OtherVerbsAreUntouched) {
    std::vector<std::string> args = {"amdqpctl", "list", "--", "run"};
    auto s = split_run(args);
    EXPECT_EQ(s.cli, args);
    EXPECT_TRUE(s.command.empty());
}

TEST(Cgroup, ContainerIds) {
    const std::string id = "0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef";
    EXPECT_EQ(container_of_cgroup("/system.slice/docker-" + id + ".scope"), "0123456789ab");
    EXPECT_EQ(container_of_cgroup("/docker/" + id), "0123456789ab");
    EXPECT_EQ(container_of_cgroup("/kubepods/burstable/pod1/cri-containerd-" + id + ".scope"),
              "0123456789ab");
    EXPECT_EQ(container_of_cgroup("/user.slice/user-1000.slice/session-2.scope"), "");
    // 65 hex digits are not an id.
    EXPECT_EQ(container_of_cgroup("/x/" + id + "0"), "");
}

TEST(Cgroup, Folder) {
    EXPECT_EQ(cgroup_folder("/sys", "/system.slice/x.scope"),
              "/sys/fs/cgroup/system.slice/x.scope");
    EXPECT_EQ(cgroup_folder("/sys", "/sys/fs/cgroup/a"), "/sys/fs/cgroup/a");
    EXPECT_EQ(cgroup_folder("/sys", "a/b"), "/sys/fs/cgroup/a/b");
}

TEST(Names, Words) {
    EXPECT_EQ(priority_label(12), "12 (high)");
    EXPECT_EQ(priority_label(9), "9");
    EXPECT_EQ(seconds(1'234'567'890), "1.234s");
    EXPECT_EQ(hex(0x7f00), "0x7f00");
    EXPECT_EQ(queue_state_name(AMDQP_QSTATE_SUSPENDED | AMDQP_QSTATE_HELD), "suspended,held");
    EXPECT_EQ(backends_name(AMDQP_BACKEND_SIM | AMDQP_BACKEND_KFD), "sim,kfd");
    EXPECT_EQ(sched_mode_name(AMDQP_SCHED_MES), "mes");
}

}  // namespace
}  // namespace amdqpctl
