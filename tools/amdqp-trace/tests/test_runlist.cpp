// Issue 12 item 4: runlist updates. In 6.12 execute_queues_cpsch calls
// map_queues_cpsch and only pm_send_runlist submits a runlist, so counting both
// calls doubled every update. Each update is attributed to the call it was made
// for, and every other process with queues on that GPU is preempted by it.
// Processes and the GPU are those of the vendored fixtures: pid 94314 (5 queues
// on f7bc, kfd mqds dump) and pid 85406 (the HIP log's process).
#include <gtest/gtest.h>

#include <string>

#include "census.h"
#include "test_util.h"

using namespace amdqp;
using namespace amdqp::test;

namespace {

constexpr int64_t kLow = 94314, kHigh = 85406, kWorker = 900;
const std::string kGpu = "f7bc"; // gpu_id 63420

double g_ts = 100.0;

std::string ev(int64_t pid, const std::string &what) {
    char ts[32];
    std::snprintf(ts, sizeof ts, "%.6f", g_ts += 0.0001);
    return "  task-" + std::to_string(pid) + " [001] ..... " + ts + ": " + what + "\n";
}

// A KFD call with kprobe entry/exit events around what it calls.
std::string call(int64_t pid, const std::string &f, const std::string &inner) {
    return ev(pid, f + "_entry: (" + f + "+0x0/0x100 [amdgpu])") + inner +
           ev(pid, f + "_exit: (x+0x1/0x2 [amdgpu] <- " + f + ") ret=0x0");
}

// What one runlist update looks like under HWS.
std::string execute(int64_t pid) {
    return call(pid, "execute_queues_cpsch",
                call(pid, "unmap_queues_cpsch", call(pid, "pm_send_unmap_queue", "")) +
                    call(pid, "map_queues_cpsch", call(pid, "pm_send_runlist", "")));
}

std::string reg(int64_t pid, int q) {
    return ev(pid, "amdqp_queue_register: gpu_id=63420 pid=" + std::to_string(pid) +
                       " queue_id=" + std::to_string(q) + " priority=7 ring_va=0x1000");
}

std::string capture() {
    g_ts = 100.0;
    std::string t = "# tracer: nop\n";
    for (int q = 1; q <= 5; ++q)
        t += reg(kLow, q);
    t += reg(kHigh, 6);
    // The high-priority process creates another queue.
    t += call(kHigh, "create_queue_cpsch", execute(kHigh)) + reg(kHigh, 7);
    // amdqp's reconcile work suspends and resumes the low-priority queues; its
    // batch event follows the backend call, on the same worker.
    t += execute(kWorker) +
         ev(kWorker, "amdqp_suspend_batch: gpu_id=63420 count=5 failed=0 latency_ns=900000");
    t += execute(kWorker) +
         ev(kWorker, "amdqp_resume_batch: gpu_id=63420 count=5 failed=0 latency_ns=900000");
    // A memory eviction of the low-priority process.
    t += call(kLow, "evict_process_queues_cpsch", execute(kLow));
    return t;
}

} // namespace

TEST(Runlist, OneUpdatePerRunlistNotPerCall) {
    Analysis a;
    parse_buffer(capture(), Format::Ftrace, a);
    a.finish();
    EXPECT_EQ(a.runlist_updates_by_pid.at(kHigh), 1u); // was 2: execute + map
    EXPECT_EQ(a.runlist_updates_by_pid.at(kWorker), 2u);
    EXPECT_EQ(a.runlist_updates_by_pid.at(kLow), 1u);
    EXPECT_EQ(a.runlist_sent_total, 4u);
    EXPECT_EQ(a.unmap_packets, 4u);
    EXPECT_EQ(a.runlist_sent.at({"queue create", kHigh, kGpu}), 1u);
    EXPECT_EQ(a.runlist_sent.at({"amdqp suspend", kWorker, kGpu}), 1u);
    EXPECT_EQ(a.runlist_sent.at({"amdqp resume", kWorker, kGpu}), 1u);
    EXPECT_EQ(a.runlist_sent.at({"eviction", kLow, kGpu}), 1u);
    EXPECT_EQ(a.runlist_sent.size(), 4u);
    // The report says the same (it used to print 2 updates for pid 85406).
    TempDir d;
    ShellResult r = shell(bin() + " report " + d.write("trace.txt", capture()));
    ASSERT_EQ(r.rc, 0) << r.out;
    EXPECT_NE(r.out.find("    queue create             85406      f7bc          1"),
              std::string::npos)
        << r.out;
    EXPECT_NE(r.out.find("    eviction                 94314      f7bc          1"),
              std::string::npos)
        << r.out;
    EXPECT_EQ(r.out.find("runlist updates by pid"), std::string::npos) << r.out;
}

TEST(Runlist, CollateralPreemptionsOfOtherProcesses) {
    Analysis a;
    parse_buffer(capture(), Format::Ftrace, a);
    a.finish();
    auto col = a.collateral(true);
    // Everyone else's updates preempt a process, its own do not.
    std::map<CollateralKey, uint64_t> want = {
        {{kHigh, kGpu, "amdqp resume"}, 1}, {{kHigh, kGpu, "amdqp suspend"}, 1},
        {{kHigh, kGpu, "eviction"}, 1},     {{kLow, kGpu, "amdqp resume"}, 1},
        {{kLow, kGpu, "amdqp suspend"}, 1}, {{kLow, kGpu, "queue create"}, 1},
    };
    EXPECT_EQ(col, want);

    TempDir d;
    ShellResult r = shell(bin() + " report " + d.write("trace.txt", capture()));
    ASSERT_EQ(r.rc, 0) << r.out;
    EXPECT_NE(r.out.find("Runlist updates sent to the HWS firmware (pm_send_runlist): 4, "
                         "4 unmap packets"),
              std::string::npos)
        << r.out;
    EXPECT_NE(r.out.find("    amdqp suspend            900        f7bc          1"),
              std::string::npos)
        << r.out;
    EXPECT_NE(r.out.find("    94314      f7bc   queue create                    1"),
              std::string::npos)
        << r.out;
}

TEST(Runlist, FunctionTracerParentsAreNotCountedTwice) {
    std::string t =
        "# tracer: function\n"
        "  python3-85406 [003] ...1. 101.000000: create_queue_cpsch <-pqm_create_queue\n"
        "  python3-85406 [003] ...1. 101.000100: execute_queues_cpsch "
        "<-create_queue_cpsch\n"
        "  python3-85406 [003] ...1. 101.000200: map_queues_cpsch "
        "<-execute_queues_cpsch\n"
        "  python3-85406 [003] ...1. 101.000300: pm_send_runlist <-map_queues_cpsch\n";
    Analysis a;
    parse_buffer(t, Format::Ftrace, a);
    a.finish();
    EXPECT_EQ(a.runlist_updates_by_pid.at(kHigh), 1u);
    EXPECT_EQ(a.runlist_sent.at({"queue create", kHigh, "?"}), 1u);
    TempDir d;
    ShellResult r = shell(bin() + " report " + d.write("t.txt", t));
    ASSERT_EQ(r.rc, 0) << r.out;
    EXPECT_NE(r.out.find("pm_send_runlist): 1,"), std::string::npos) << r.out;
    EXPECT_NE(r.out.find("    queue create             85406      ?             1"),
              std::string::npos)
        << r.out;
}

TEST(Runlist, CompilerClonesCountAsTheirFunction) {
    // The function tracer names .isra/.constprop clones as kallsyms does
    // (amdqp-capture traces them under --functions function).
    std::string t =
        "# tracer: function\n"
        "  python3-85406 [003] ...1. 101.000000: create_queue_cpsch <-pqm_create_queue\n"
        "  python3-85406 [003] ...1. 101.000100: execute_queues_cpsch.isra.0 "
        "<-create_queue_cpsch\n"
        "  python3-85406 [003] ...1. 101.000200: map_queues_cpsch.constprop.0 "
        "<-execute_queues_cpsch.isra.0\n"
        "  python3-85406 [003] ...1. 101.000300: pm_send_runlist "
        "<-map_queues_cpsch.constprop.0\n";
    Analysis a;
    parse_buffer(t, Format::Ftrace, a);
    a.finish();
    EXPECT_EQ(a.runlist_updates_by_pid.at(kHigh), 1u);
    EXPECT_EQ(a.runlist_sent.at({"queue create", kHigh, "?"}), 1u);
}

TEST(Runlist, WithoutPmSendRunlistTheCallsAreAnUpperBound) {
    // kfd_calls only of execute/map (pm_send_runlist not available to trace).
    std::string t = "# tracer: nop\n" +
                    call(kHigh, "execute_queues_cpsch", call(kHigh, "map_queues_cpsch", ""));
    Analysis a;
    parse_buffer(t, Format::Ftrace, a);
    a.finish();
    EXPECT_EQ(a.runlist_sent_total, 0u);
    EXPECT_EQ(a.runlist_calls.at({"unknown", kHigh, "?"}), 1u);
    TempDir d;
    ShellResult r = shell(bin() + " report " + d.write("t.txt", t));
    EXPECT_NE(r.out.find("Runlist updates: 1 runlist-changing calls"), std::string::npos) << r.out;
    EXPECT_NE(r.out.find("upper bound"), std::string::npos);
}
