// Issue 12 items 2 and 3: queues per process, device and lifetime. HIP logs of
// two devices, of two processes in one log, of queues destroyed and created
// again; captures that start after the queues were created. Every input is
// the vendored fixtures, cut, rewritten or concatenated here.
#include <gtest/gtest.h>

#include <map>
#include <string>

#include "census.h"
#include "report.h"
#include "test_util.h"

using namespace amdqp;
using namespace amdqp::test;

namespace {

const std::string kHip = "hip-amd-log-level3-16streams.log";
const char *kHwqs[] = {"0x7f3660c00000", "0x7f1654e00000", "0x7f1654200000", "0x7f1649800000"};

std::string hip_log() {
    return slurp(fixture(kHip));
}

// The same run with other hardware queue addresses (another run's queues).
std::string moved_queues(std::string log) {
    for (const char *h : kHwqs)
        log = replace_all(log, h, std::string("0x7e") + (h + 4));
    return log;
}

// Runtime lines tagged the way newer runtimes print them: ": [pid:P tid:T] msg".
std::string tagged(const std::string &log, int pid, int tid) {
    std::string out;
    for (const auto &l : lines_of(log)) {
        auto us = l.find(" us: ");
        if (l.rfind(":3:", 0) == 0 && us != std::string::npos)
            out += l.substr(0, us + 5) + "[pid:" + std::to_string(pid) + " tid:0x" +
                   std::to_string(tid) + "] " + l.substr(us + 5) + "\n";
        else if (l.rfind("Process ID:", 0) != 0)
            out += l + "\n";
    }
    return out;
}

const ProcessRow *row(const std::vector<ProcessRow> &rows, int64_t pid, const std::string &gpu) {
    for (const auto &r : rows)
        if (r.pid == pid && r.gpu_id == gpu)
            return &r;
    return nullptr;
}

} // namespace

// Item 2: hipSetDevice(N) was ignored and every HIP queue was put on dev0.
TEST(QueueLife, HipSetDeviceMovesQueuesToThatDevice) {
    TempDir d;
    std::string one =
        d.write("dev1.log", replace_all(hip_log(), "hipSetDevice ( 0 )", "hipSetDevice ( 1 )"));
    ShellResult r = shell(bin() + " census --json " + one);
    ASSERT_EQ(r.rc, 0) << r.out;
    EXPECT_NE(r.out.find("{\"pid\": 85406, \"gpu_id\": \"dev1\", \"queues\": 4, "
                         "\"xcc_instances\": 0, \"submissions\": 96"),
              std::string::npos)
        << r.out;
    EXPECT_EQ(r.out.find("\"dev0\""), std::string::npos) << r.out;

    // Half the streams created after hipSetDevice(1): two queues on each device;
    // kernels go to their stream's device.
    std::string log = hip_log();
    size_t third = log.find("hipStreamCreate ( 0xb1c720 )");
    ASSERT_NE(third, std::string::npos);
    size_t bol = log.rfind('\n', third) + 1;
    log.insert(bol, ":3:hip_device_runtime.cpp   :717 : 6306344297 us:  \x1b[32m hipSetDevice "
                    "( 1 ) \x1b[0m\n");
    Analysis a;
    parse_buffer(log, Format::HipLog, a);
    auto rows = process_rows(a);
    const ProcessRow *d0 = row(rows, 85406, "dev0"), *d1 = row(rows, 85406, "dev1");
    ASSERT_TRUE(d0 && d1);
    EXPECT_EQ(d0->queues, 2u);
    EXPECT_EQ(d1->queues, 2u);
    EXPECT_EQ(d0->submissions, 48u);
    EXPECT_EQ(d1->submissions, 48u);
}

// Item 2: two processes in one log (ranks sharing stderr) mixed their streams.
TEST(QueueLife, TwoProcessesInOneLogStayApart) {
    auto a = lines_of(tagged(hip_log(), 111, 1));
    auto b = lines_of(tagged(moved_queues(hip_log()), 222, 2));
    std::string mixed;
    for (size_t i = 0; i < std::max(a.size(), b.size()); ++i) {
        if (i < a.size())
            mixed += a[i] + "\n";
        if (i < b.size())
            mixed += b[i] + "\n";
    }
    Collect c;
    parse_buffer(mixed, Format::HipLog, c);
    std::map<std::pair<int64_t, std::string>, int> per_queue;
    for (const auto &d : c.dispatches)
        ++per_queue[{d.pid, d.queue}];
    std::map<std::pair<int64_t, std::string>, int> want;
    for (const char *h : kHwqs) {
        want[{111, h}] = 24;
        want[{222, std::string("0x7e") + (h + 4)}] = 24;
    }
    EXPECT_EQ(per_queue, want);
    TempDir d;
    ShellResult r = shell(bin() + " report " + d.write("mixed.log", mixed));
    ASSERT_EQ(r.rc, 0) << r.out;
    for (const char *h : kHwqs) {
        EXPECT_NE(r.out.find(std::string("hip-log  111        dev0     ") + h + "         24"),
                  std::string::npos)
            << h << "\n"
            << r.out;
        EXPECT_NE(
            r.out.find(std::string("hip-log  222        dev0     0x7e") + (h + 4) + "         24"),
            std::string::npos)
            << h;
    }
    Analysis an;
    parse_buffer(mixed, Format::HipLog, an);
    auto rows = process_rows(an);
    for (int64_t pid : {111, 222}) {
        const ProcessRow *r = row(rows, pid, "dev0");
        ASSERT_TRUE(r) << pid;
        EXPECT_EQ(r->queues, 4u) << pid;
        EXPECT_EQ(r->submissions, 96u) << pid;
    }
}

// Item 2: queues destroyed and created again were counted as live together.
TEST(QueueLife, RecreatedQueuesAreNotSimultaneous) {
    TempDir d;
    std::string f = d.write("two-rounds.log", hip_log() + moved_queues(hip_log()));
    ShellResult j = shell(bin() + " census --json " + f);
    ASSERT_EQ(j.rc, 0) << j.out;
    EXPECT_NE(j.out.find("{\"pid\": 85406, \"gpu_id\": \"dev0\", \"queues\": 4,"),
              std::string::npos)
        << j.out;
    EXPECT_NE(j.out.find("\"verdict\": \"multi-queue\", \"queues_seen\": 8}"), std::string::npos)
        << j.out;
    ShellResult t = shell(bin() + " census " + f);
    EXPECT_NE(t.out.find("multi-queue (4): suspend all 4 together"), std::string::npos) << t.out;
    EXPECT_NE(t.out.find("8 queues over the capture, at most 4 at once"), std::string::npos)
        << t.out;
}

// Item 3: a HIP log that starts after the queues were created.
TEST(QueueLife, HipLogStartingAfterQueueCreation) {
    std::string log = hip_log();
    std::string late = log.substr(log.find(":3:rocvirtual.cpp           :3351:"));
    TempDir d;
    std::string f = d.write("late.log", "Process ID: 85406\n" + late);
    ShellResult r = shell(bin() + " census --json " + f);
    ASSERT_EQ(r.rc, 0) << r.out;
    EXPECT_NE(r.out.find("{\"pid\": 85406, \"gpu_id\": \"dev0\", \"queues\": 4,"),
              std::string::npos)
        << r.out;
    EXPECT_NE(r.out.find("\"created_before_capture\": 4}"), std::string::npos) << r.out;
}

// Item 3: tracing a running server (--pid) sees its queues only unregistered.
TEST(QueueLife, AmdqpCaptureStartingAfterRegistration) {
    // The process and queues of the mqds fixture: pid 94314, 5 queues on f7bc.
    Analysis m;
    parse_fixture("debugfs-kfd-mqds-16streams.txt", Format::Mqds, m);
    ASSERT_EQ(m.mqds.size(), 1u);
    const auto &[key, proc] = *m.mqds[0].procs.begin();
    std::string trace = "# tracer: nop\n";
    uint64_t gpu = std::stoull(key.second, nullptr, 16);
    for (const auto &[ord, q] : proc.queues)
        trace += "  python3-" + std::to_string(key.first) + " [003] ..... 200.0000" +
                 std::to_string(ord) + ": amdqp_queue_unregister: gpu_id=" + std::to_string(gpu) +
                 " pid=" + std::to_string(key.first) + " queue_id=" + std::to_string(ord + 1) +
                 "\n";
    // A priority change names a queue that is not unregistered in the capture.
    trace += "  python3-" + std::to_string(key.first) +
             " [003] ..... 199.5: amdqp_priority_change: gpu_id=" + std::to_string(gpu) +
             " pid=" + std::to_string(key.first) + " queue_id=9 priority=7->2\n";
    TempDir d;
    std::string f = d.write("trace.txt", trace);
    ShellResult r = shell(bin() + " census --json " + f);
    ASSERT_EQ(r.rc, 0) << r.out;
    EXPECT_NE(r.out.find("{\"pid\": 94314, \"gpu_id\": \"f7bc\", \"queues\": 6, \"xcc_instances\": "
                         "0, \"submissions\": 0, \"source\": \"amdqp-trace\", \"verdict\": "
                         "\"multi-queue\", \"created_before_capture\": 6}"),
              std::string::npos)
        << r.out;
    ShellResult t = shell(bin() + " census " + f);
    EXPECT_EQ(t.out.find("no user queues"), std::string::npos) << t.out;
    EXPECT_NE(t.out.find("6 of its queues were created before the capture started"),
              std::string::npos)
        << t.out;

    // One registered in the capture while the five old ones were still up: 6 at once.
    Analysis a;
    parse_buffer("  x-1 [000] ..... 100.0: amdqp_queue_register: gpu_id=63420 pid=94314 "
                 "queue_id=42 priority=7 ring_va=0x1\n" +
                     trace.substr(trace.find('\n') + 1),
                 Format::Ftrace, a);
    auto k = std::make_pair(int64_t{94314}, std::string("f7bc"));
    EXPECT_EQ(a.amdqp_max_queues.at(k), 7u);
    EXPECT_EQ(a.amdqp_queues.at(k).before_capture().size(), 6u);
}
