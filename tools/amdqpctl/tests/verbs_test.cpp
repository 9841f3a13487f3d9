// SPDX-License-Identifier: MIT
#include <nlohmann/json.hpp>

#include "cli_fixture.hpp"
#include "exit_status.hpp"

namespace amdqpctl::testing {
namespace {

using nlohmann::json;

const std::string kDockerId = "0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef";

class Verbs : public CliTest {
  protected:
    void SetUp() override {
        CliTest::SetUp();
        fake->add_gpu(1);
        fake->add_gpu(2, AMDQP_SCHED_MES);
        fake->add_queue(4242, 1, 0x7f0000001000, 12);  // queue 1 on gpu 1
        fake->add_queue(5151, 1, 0x7f0000002000, 2);   // queue 2 on gpu 1
        fake->add_queue(5151, 2, 0x7f0000003000, 2);   // queue 1 on gpu 2
        add_process(4242, "llm-server", "/system.slice/docker-" + kDockerId + ".scope");
        add_process(5151, "batch-train", "/user.slice/user-1000.slice/session-2.scope");
    }
};

TEST_F(Verbs, ListJsonHasEveryColumn) {
    ASSERT_EQ(run({"list", "--json"}), exit_ok) << err.str();
    json rows = json::parse(out.str());
    ASSERT_EQ(rows.size(), 3u);
    EXPECT_EQ(rows[0]["pid"], 4242);
    EXPECT_EQ(rows[0]["comm"], "llm-server");
    EXPECT_EQ(rows[0]["container"], kDockerId.substr(0, 12));
    EXPECT_EQ(rows[0]["gpu"], 1);
    EXPECT_EQ(rows[0]["queue_id"], 1);
    EXPECT_EQ(rows[0]["ring_va"], "0x7f0000001000");
    EXPECT_EQ(rows[0]["priority"], 12);
    EXPECT_EQ(rows[0]["priority_name"], "high");
    EXPECT_EQ(rows[0]["state"], "running");
    EXPECT_EQ(rows[0]["suspended_ns"], 0);
    EXPECT_EQ(rows[0]["mechanism"], "amdqp");
    EXPECT_EQ(rows[1]["pid"], 5151);
    EXPECT_EQ(rows[1]["priority"], 2);
    EXPECT_EQ(rows[1]["container"], nullptr);
    EXPECT_EQ(rows[1]["cgroup"], "/user.slice/user-1000.slice/session-2.scope");
    EXPECT_TRUE(err.str().empty()) << err.str();
}

TEST_F(Verbs, CeilingUsageErrors) {
    EXPECT_EQ(run({"ceiling", "grant"}), exit_usage);
    EXPECT_EQ(run({"ceiling", "set", "--uid", "0"}), exit_usage);  // no LEVEL
    EXPECT_EQ(run({"ceiling", "set", "--uid", "0", "urgent"}), exit_usage);
    EXPECT_EQ(run({"ceiling", "set", "high"}), exit_usage);  // no identity
    EXPECT_EQ(run({"ceiling", "clear", "--gid", "0", "high"}), exit_usage);
    EXPECT_EQ(run({"ceiling", "list", "--uid", "0"}), exit_usage);
    EXPECT_EQ(run({"ceiling", "set", "--uid", "no-such-user-amdqp", "low"}), exit_usage);
    // The fake kernel module predates the table (ABI 1.1): an error, not a crash.
    EXPECT_NE(run({"ceiling", "list"}), exit_ok);
    EXPECT_NE(err.str().find("ceiling"), std::string::npos) << err.str();
}

TEST_F(Verbs, ListTableAndFilters) {
    ASSERT_EQ(run({"list", "--gpu", "2"}), exit_ok) << err.str();
    EXPECT_NE(out.str().find("PID"), std::string::npos);
    EXPECT_NE(out.str().find("batch-train"), std::string::npos);
    EXPECT_EQ(out.str().find("llm-server"), std::string::npos);
    EXPECT_NE(out.str().find("2 (low)"), std::string::npos);
    ASSERT_EQ(run({"list", "--pid", "4242"}), exit_ok);
    EXPECT_NE(out.str().find("container:0123456789ab"), std::string::npos);
    EXPECT_EQ(out.str().find("batch-train"), std::string::npos);
    EXPECT_EQ(run({"list", "--pid", "abc"}), exit_usage);
}

TEST_F(Verbs, ListWithoutTheModuleNamesIt) {
    fake->present = false;
    EXPECT_EQ(run({"list"}), exit_unavailable);
    EXPECT_NE(err.str().find("modprobe amdqp"), std::string::npos) << err.str();
    EXPECT_NE(err.str().find("insmod kmod/amdqp.ko"), std::string::npos);
    const std::string text = err.str();
    EXPECT_EQ(std::count(text.begin(), text.end(), '\n'), 1);
    EXPECT_TRUE(out.str().empty());
}

TEST_F(Verbs, PermissionDeniedIsStatus4) {
    fake->open_errno = EACCES;
    EXPECT_EQ(run({"stats"}), exit_permission);
    EXPECT_NE(err.str().find("permission denied"), std::string::npos) << err.str();
}

TEST_F(Verbs, PriorityOfAProcess) {
    ASSERT_EQ(run({"priority", "5151", "0"}), exit_ok) << err.str();
    EXPECT_EQ(fake->find(5151, 1, 2)->priority, 0u);
    EXPECT_EQ(fake->find(5151, 2, 1)->priority, 0u);
    EXPECT_EQ(fake->find(4242, 1, 1)->priority, 12u);
    EXPECT_NE(out.str().find("priority 2 (low) -> 0"), std::string::npos) << out.str();
}

TEST_F(Verbs, PriorityOfOneQueueByRing) {
    ASSERT_EQ(run({"priority", "--queue", "4242@0x7f0000001000", "normal", "--json"}), exit_ok)
        << err.str();
    EXPECT_EQ(fake->find(4242, 1, 1)->priority, 7u);
    json r = json::parse(out.str());
    ASSERT_EQ(r.size(), 1u);
    EXPECT_EQ(r[0]["old_priority"], 12);
    EXPECT_EQ(r[0]["priority"], 7);
}

TEST_F(Verbs, RaisingNeedsCapSysNice) {
    EXPECT_EQ(run({"priority", "--queue", "5151:1:2", "high"}), exit_permission);
    EXPECT_EQ(fake->find(5151, 1, 2)->priority, 2u);
    EXPECT_NE(err.str().find("5151"), std::string::npos);
}

TEST_F(Verbs, PriorityOfACgroup) {
    write_file("sys/fs/cgroup/batch/cgroup.procs", "5151\n");
    write_file("sys/fs/cgroup/batch/sub/cgroup.procs", "");
    ASSERT_EQ(run({"priority", "--cgroup", "/batch", "1"}), exit_ok) << err.str();
    EXPECT_EQ(fake->find(5151, 1, 2)->priority, 1u);
    EXPECT_EQ(fake->find(4242, 1, 1)->priority, 12u);
    EXPECT_EQ(run({"priority", "--cgroup", "/nope", "1"}), exit_error);
}

TEST_F(Verbs, PriorityBadInput) {
    EXPECT_EQ(run({"priority", "5151", "urgent"}), exit_usage);
    EXPECT_NE(err.str().find("unknown priority 'urgent'"), std::string::npos);
    EXPECT_EQ(run({"priority", "5151"}), exit_usage);
    EXPECT_EQ(run({"priority", "--queue", "5151-1-2", "low"}), exit_usage);
    EXPECT_EQ(run({"priority", "777", "low"}), exit_error);
    EXPECT_NE(err.str().find("no GPU queues"), std::string::npos);
}

TEST_F(Verbs, SuspendHoldsUntilStoppedThenReleases) {
    bool held_during_wait = false;
    waiter.on_wait = [&](int, int timeout_ms) {
        EXPECT_EQ(timeout_ms, -1);
        held_during_wait = fake->suspended(5151, 1, 2) && fake->suspended(5151, 2, 1) &&
                           !fake->suspended(4242, 1, 1);
        return WaitResult::stop;
    };
    ASSERT_EQ(run({"suspend", "5151"}), exit_ok) << err.str();
    EXPECT_TRUE(waiter.armed);
    EXPECT_TRUE(held_during_wait);
    EXPECT_FALSE(fake->suspended(5151, 1, 2));
    EXPECT_EQ(fake->open_fds(), 0u);
    EXPECT_NE(out.str().find("suspended pid 5151 (batch-train) gpu 1 queue 2"), std::string::npos)
        << out.str();
    EXPECT_NE(out.str().find("released 2"), std::string::npos);
}

TEST_F(Verbs, SuspendBelowOnOneGpuForSomeTime) {
    std::vector<bool> state;
    waiter.on_wait = [&](int, int timeout_ms) {
        EXPECT_EQ(timeout_ms, 1500);
        state = {fake->suspended(5151, 1, 2), fake->suspended(5151, 2, 1),
                 fake->suspended(4242, 1, 1)};
        return WaitResult::timeout;
    };
    ASSERT_EQ(run({"suspend", "--below", "8", "--gpu", "1", "--for", "1.5", "--json"}), exit_ok)
        << err.str();
    EXPECT_EQ(state, (std::vector<bool>{true, false, false}));
    json r = json::parse(out.str());
    ASSERT_EQ(r["suspended"].size(), 1u);
    EXPECT_EQ(r["suspended"][0]["pid"], 5151);
    EXPECT_EQ(r["suspended"][0]["gpu"], 1);
    EXPECT_EQ(r["suspended"][0]["mechanism"], "amdqp");
    EXPECT_EQ(r["for_seconds"], 1.5);
    EXPECT_FALSE(fake->suspended(5151, 1, 2));
}

TEST_F(Verbs, SuspendBelowWithNothingToDoDoesNotHold) {
    ASSERT_EQ(run({"suspend", "--below", "low"}), exit_ok) << err.str();
    EXPECT_EQ(waiter.waits, 0);
    EXPECT_NE(out.str().find("nothing to suspend"), std::string::npos);
}

TEST_F(Verbs, ConfineBelowHoldsUntilStoppedThenReleases) {
    std::vector<std::vector<std::uint32_t>> during;
    waiter.on_wait = [&](int, int timeout_ms) {
        EXPECT_EQ(timeout_ms, -1);
        during = {fake->confined(5151, 1, 2), fake->confined(5151, 2, 1),
                  fake->confined(4242, 1, 1)};
        return WaitResult::stop;
    };
    ASSERT_EQ(run({"confine", "--below", "8", "--cus", "2", "--first-cu", "4"}), exit_ok)
        << err.str();
    EXPECT_TRUE(waiter.armed);
    EXPECT_EQ(during, (std::vector<std::vector<std::uint32_t>>{{0x30}, {0x30}, {}}));
    EXPECT_TRUE(fake->confined(5151, 1, 2).empty());
    EXPECT_EQ(fake->open_fds(), 0u);
    EXPECT_NE(out.str().find("confined pid 5151 (batch-train) gpu 1 queue 2"), std::string::npos)
        << out.str();
    EXPECT_NE(out.str().find("released 2"), std::string::npos);
}

TEST_F(Verbs, ConfineOneGpuWithAMaskForSomeTime) {
    std::vector<std::uint32_t> during;
    waiter.on_wait = [&](int, int timeout_ms) {
        EXPECT_EQ(timeout_ms, 1500);
        during = fake->confined(5151, 1, 2);
        EXPECT_TRUE(fake->confined(5151, 2, 1).empty());
        return WaitResult::timeout;
    };
    ASSERT_EQ(run({"confine", "--below", "normal", "--gpu", "1", "--mask", "0x0f", "--for", "1.5",
                   "--json"}),
              exit_ok)
        << err.str();
    EXPECT_EQ(during, std::vector<std::uint32_t>{0x0f});
    json r = json::parse(out.str());
    ASSERT_EQ(r["confined"].size(), 1u);
    EXPECT_EQ(r["confined"][0]["pid"], 5151);
    EXPECT_EQ(r["confined"][0]["gpu"], 1);
    EXPECT_EQ(r["gpus"][0]["mask"][0], 15);
    EXPECT_EQ(r["for_seconds"], 1.5);
    EXPECT_TRUE(fake->confined(5151, 1, 2).empty());
}

TEST_F(Verbs, ConfineUsageAndGpuErrors) {
    EXPECT_EQ(run({"confine", "--cus", "2"}), exit_usage);    // no --below
    EXPECT_EQ(run({"confine", "--below", "8"}), exit_usage);  // no CUs
    EXPECT_EQ(run({"confine", "--below", "8", "--cus", "2", "--mask", "3"}), exit_usage);
    EXPECT_EQ(run({"confine", "--below", "8", "--cus", "0"}), exit_usage);
    EXPECT_EQ(run({"confine", "--below", "all", "--cus", "2"}), exit_usage);
    EXPECT_EQ(run({"confine", "--below", "8", "--first-cu", "2", "--mask", "3"}), exit_usage);
    EXPECT_EQ(run({"confine", "--below", "8", "--mask", "3", "--mask", "3"}), exit_usage);
    EXPECT_EQ(run({"confine", "--below", "8", "--mask", "0x1ffffffff"}), exit_usage);
    EXPECT_EQ(waiter.waits, 0);
    fake->gpu(2)->cu_per_xcc = 0;
    EXPECT_EQ(run({"confine", "--below", "8", "--gpu", "2", "--cus", "2"}), exit_error);
    EXPECT_NE(err.str().find("GPU 2 cannot be confined"), std::string::npos) << err.str();
    EXPECT_EQ(run({"confine", "--below", "8", "--gpu", "7", "--cus", "2"}), exit_error);
    EXPECT_NE(err.str().find("GPU 7 does not exist"), std::string::npos) << err.str();
    EXPECT_EQ(waiter.waits, 0);
    // Without --gpu, a GPU that cannot be confined is left alone.
    waiter.on_wait = [&](int, int) {
        EXPECT_EQ(fake->confined(5151, 1, 2), std::vector<std::uint32_t>{0x3});
        EXPECT_TRUE(fake->confined(5151, 2, 1).empty());
        return WaitResult::stop;
    };
    EXPECT_EQ(run({"confine", "--below", "8", "--cus", "2"}), exit_ok) << err.str();
}

TEST_F(Verbs, SuspendUsageErrors) {
    EXPECT_EQ(run({"suspend"}), exit_usage);
    EXPECT_EQ(run({"suspend", "5151", "--below", "8"}), exit_usage);
    EXPECT_EQ(run({"suspend", "5151", "--gpu", "1"}), exit_usage);
    EXPECT_EQ(run({"suspend", "--below", "urgent"}), exit_usage);
    EXPECT_EQ(run({"suspend", "5151", "--for", "-1"}), exit_usage);
    EXPECT_EQ(run({"suspend", "5151", "--for", "soon"}), exit_usage);
    EXPECT_EQ(run({"resume", "5151", "--for", "1"}), exit_usage);
    EXPECT_EQ(waiter.waits, 0);
}

TEST_F(Verbs, SuspendOfAnUnknownQueueFails) {
    EXPECT_EQ(run({"suspend", "--queue", "5151:1:9"}), exit_error);
    EXPECT_NE(err.str().find("no queue pid 5151 gpu 1 queue 9"), std::string::npos) << err.str();
    EXPECT_EQ(waiter.waits, 0);
}

TEST_F(Verbs, ResumeNamesForeignHolds) {
    // Another holder (an amdqpd, say) suspends queue 5151:1:2.
    amdqp::Device other = amdqp::Device::open(fake->path, fake);
    std::vector<amdqp::QueueRef> refs = {amdqp::QueueRef::by_id(5151, 1, 2)};
    ASSERT_EQ(other.suspend(refs).done, 1u);
    EXPECT_EQ(run({"resume", "5151"}), exit_error);
    EXPECT_NE(err.str().find("held suspended by 1 other handle"), std::string::npos) << err.str();
    EXPECT_TRUE(fake->suspended(5151, 1, 2));
    EXPECT_NE(out.str().find("running pid 5151 (batch-train) gpu 2 queue 1"), std::string::npos)
        << out.str();
}

TEST_F(Verbs, WatchStreamsJsonLines) {
    int round = 0;
    waiter.on_wait = [&](int fd, int) {
        EXPECT_GE(fd, 0);
        if (round++ == 0) {
            fake->add_queue(6000, 2, 0x1000, 9);
            fake->emit(AMDQP_EVENT_WATCHDOG, 5151, 1, 2, 0, 2'500'000'000);
            return WaitResult::ready;
        }
        return WaitResult::stop;
    };
    ASSERT_EQ(run({"watch", "--json"}), exit_ok) << err.str();
    std::istringstream lines(out.str());
    std::string l1, l2, l3;
    ASSERT_TRUE(std::getline(lines, l1));
    ASSERT_TRUE(std::getline(lines, l2));
    EXPECT_FALSE(std::getline(lines, l3));
    json a = json::parse(l1), b = json::parse(l2);
    EXPECT_EQ(a["type"], "queue_created");
    EXPECT_EQ(a["pid"], 6000);
    EXPECT_EQ(a["gpu"], 2);
    EXPECT_EQ(a["priority"], 9);
    EXPECT_EQ(b["type"], "watchdog");
    EXPECT_EQ(b["comm"], "batch-train");
    EXPECT_EQ(b["suspended_ns"], 2'500'000'000ull);
}

TEST_F(Verbs, WatchFiltersAndCounts) {
    waiter.on_wait = [&](int, int) {
        fake->emit(AMDQP_EVENT_GPU_RESET, 0, 1);
        fake->emit(AMDQP_EVENT_PRIORITY, 5151, 1, 2, 0, 3);
        fake->emit(AMDQP_EVENT_PRIORITY, 5151, 1, 2, 0, 4);
        return WaitResult::ready;
    };
    ASSERT_EQ(run({"watch", "--type", "priority", "--count", "1"}), exit_ok) << err.str();
    EXPECT_EQ(out.str().find("gpu_reset"), std::string::npos) << out.str();
    EXPECT_NE(out.str().find("priority pid 5151 (batch-train) gpu 1 queue 2: priority 3"),
              std::string::npos)
        << out.str();
    EXPECT_EQ(out.str().find("priority 4"), std::string::npos);
    EXPECT_EQ(run({"watch", "--type", "nonsense"}), exit_usage);
    EXPECT_NE(err.str().find("queue_created"), std::string::npos);
}

TEST_F(Verbs, StatsJson) {
    ASSERT_EQ(run({"stats", "--json"}), exit_ok) << err.str();
    json s = json::parse(out.str());
    ASSERT_EQ(s["devices"].size(), 2u);
    EXPECT_EQ(s["devices"][0]["gpu"], 1);
    EXPECT_EQ(s["devices"][0]["queues"], 2);
    EXPECT_EQ(s["devices"][1]["sched_mode"], "mes");
    EXPECT_EQ(s["cooperative"]["processes"], 0);
}

TEST_F(Verbs, StatusWithAndWithoutTheModule) {
    write_file("sys/class/kfd/kfd/topology/nodes/0/gpu_id", "0\n");
    write_file("sys/class/kfd/kfd/topology/nodes/1/gpu_id", "7\n");
    ASSERT_EQ(run({"status", "--json"}), exit_ok) << err.str();
    json s = json::parse(out.str());
    EXPECT_TRUE(s["module"]["available"]);
    EXPECT_EQ(s["module"]["abi"]["major"], AMDQP_VERSION_MAJOR);
    EXPECT_EQ(s["module"]["backends"], "sim");
    ASSERT_EQ(s["devices"].size(), 3u);
    EXPECT_EQ(s["devices"][0]["mechanism"], "amdqp");
    EXPECT_EQ(s["devices"][2]["gpu"], 7);
    EXPECT_EQ(s["devices"][2]["in_amdqp"], false);
    EXPECT_EQ(s["devices"][2]["mechanism"], "coop");
    EXPECT_EQ(s["daemon"]["state"], "not installed");

    fake->present = false;
    EXPECT_EQ(run({"status"}), exit_unavailable);
    EXPECT_NE(out.str().find("not available"), std::string::npos) << out.str();
    EXPECT_NE(out.str().find("modprobe amdqp"), std::string::npos);
    EXPECT_NE(out.str().find("amdqpd: not installed"), std::string::npos);
}

TEST_F(Verbs, HelpOfEveryVerb) {
    for (const char* verb :
         {"list", "run", "priority", "suspend", "resume", "watch", "stats", "status"}) {
        EXPECT_EQ(run({verb, "--help"}), exit_ok) << verb;
        EXPECT_NE(out.str().find("Usage:"), std::string::npos) << verb;
    }
    EXPECT_EQ(run({"--help"}), exit_ok);
    EXPECT_NE(out.str().find("Exit status"), std::string::npos);
    EXPECT_EQ(run({"frobnicate"}), exit_usage);
    EXPECT_NE(err.str().find("unknown verb 'frobnicate'"), std::string::npos);
    EXPECT_EQ(run({}), exit_usage);
}

}  // namespace
}  // namespace amdqpctl::testing
