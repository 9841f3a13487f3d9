// Issue 12 item 9: timeline window (--from/--to), event classes (--only), the
// size guard, and begin/end spans cut by the capture closed at its edges.
#include <gtest/gtest.h>

#include <string>

#include "perfetto.h"
#include "test_util.h"

using namespace amdqp;
using namespace amdqp::test;

namespace {

// GPU f7bc of the fixtures (gpu_id 63420): the capture starts while it is
// suspended and ends while it is suspended again; a KFD call returns that began
// before the capture.
const char *kTrace =
    "# tracer: nop\n"
    "  amdqpd-900 [001] ..... 10.000000: amdqp_resume_batch: gpu_id=63420 count=5 failed=0 "
    "latency_ns=1000\n"
    "  python3-94314 [003] ..... 15.000000: execute_queues_cpsch_exit: (x+0x1/0x2 [amdgpu] <- "
    "execute_queues_cpsch) ret=0x0\n"
    "  amdqpd-900 [001] ..... 20.000000: amdqp_suspend_batch: gpu_id=63420 count=5 failed=0 "
    "latency_ns=1000\n"
    "  python3-94314 [003] ..... 25.000000: sched_switch: prev_comm=python3\n"
    "  amdqpd-900 [001] ..... 30.000000: amdqp_resume_batch: gpu_id=63420 count=5 failed=0 "
    "latency_ns=1000\n"
    "  amdqpd-900 [001] ..... 40.000000: amdqp_suspend_batch: gpu_id=63420 count=5 failed=0 "
    "latency_ns=1000\n"
    "  python3-94314 [003] ..... 50.000000: sched_switch: prev_comm=python3\n";

int count(const std::string &s, const std::string &what) {
    int n = 0;
    for (size_t p = 0; (p = s.find(what, p)) != std::string::npos; p += what.size())
        ++n;
    return n;
}

// The output must stay loadable: our own JSON reader takes it whole.
void expect_valid(const std::string &j) {
    Collect c;
    EXPECT_NO_THROW(parse_buffer(j, Format::Rocprof, c)) << j;
}

} // namespace

TEST(Timeline, SpansCutByTheCaptureAreClosedAtItsEdges) {
    TempDir d;
    std::string f = d.write("trace.txt", kTrace);
    ShellResult r = shell(bin() + " timeline --perfetto " + d.path("t.json") + " " + f);
    ASSERT_EQ(r.rc, 0) << r.out;
    std::string j = slurp(d.path("t.json"));
    expect_valid(j);
    // Every B has its E: 3 suspended spans and the KFD call.
    EXPECT_EQ(count(j, "\"ph\":\"B\""), 4) << j;
    EXPECT_EQ(count(j, "\"ph\":\"E\""), 4) << j;
    // Suspended before the capture: begins at its first event (10 s).
    EXPECT_NE(j.find("\"ph\":\"B\",\"name\":\"suspended\",\"cat\":\"amdqp\",\"pid\":1000000001,"
                     "\"tid\":1,\"ts\":10000000.0,\"args\":{\"amdqp_closed\""),
              std::string::npos)
        << j;
    EXPECT_NE(j.find("\"ph\":\"B\",\"name\":\"execute_queues_cpsch\",\"cat\":\"kfd\",\"pid\":94314,"
                     "\"tid\":94314,\"ts\":10000000.0"),
              std::string::npos)
        << j;
    // Still suspended at the end: closed at its last event (50 s).
    EXPECT_NE(j.find("\"ph\":\"E\",\"name\":\"suspended\",\"cat\":\"amdqp\",\"pid\":1000000001,"
                     "\"tid\":1,\"ts\":50000000.0"),
              std::string::npos)
        << j;
    EXPECT_NE(r.out.find("3 spans cut by the capture or window edges were closed"),
              std::string::npos)
        << r.out;
}

TEST(Timeline, WindowAndClasses) {
    TempDir d;
    std::string f = d.write("trace.txt", kTrace);
    std::string hip = fixture("hip-amd-log-level3-16streams.log");
    // 22..45 s: the resume at 30 ends a span begun in the window, the suspend
    // at 40 is closed at the window's end.
    ShellResult r = shell(bin() + " timeline --perfetto - --from 22 --to 45 " + f);
    ASSERT_EQ(r.rc, 0) << r.out;
    std::string j = r.out.substr(0, r.out.rfind("]}") + 3);
    EXPECT_EQ(j.find("\"ts\":20000000.0"), std::string::npos) << j;
    EXPECT_EQ(j.find("\"ts\":50000000.0"), std::string::npos) << j;
    EXPECT_NE(j.find("\"ph\":\"B\",\"name\":\"suspended\",\"cat\":\"amdqp\",\"pid\":1000000001,"
                     "\"tid\":1,\"ts\":22000000.0"),
              std::string::npos)
        << j;
    EXPECT_NE(j.find("\"ph\":\"E\",\"name\":\"suspended\",\"cat\":\"amdqp\",\"pid\":1000000001,"
                     "\"tid\":1,\"ts\":45000000.0"),
              std::string::npos)
        << j;
    EXPECT_EQ(count(j, "\"name\":\"sched_switch\""), 1);
    // Relative: +12 .. +35 from the first event (10 s) is the same window.
    ShellResult rel = shell(bin() + " timeline --perfetto - --from +12 --to +35 " + f);
    EXPECT_EQ(rel.out, r.out);

    // Only the amdqp class: no ftrace instants, no kernel dispatches.
    ShellResult o = shell(bin() + " timeline --perfetto - --only amdqp,kfd " + f + " " + hip);
    ASSERT_EQ(o.rc, 0) << o.out;
    EXPECT_EQ(o.out.find("sched_switch"), std::string::npos);
    EXPECT_EQ(o.out.find("dummy_kernel"), std::string::npos);
    EXPECT_NE(o.out.find("\"name\":\"suspended\""), std::string::npos);
    ShellResult k = shell(bin() + " timeline --perfetto - --only dispatch " + hip);
    EXPECT_EQ(count(k.out, "dummy_kernel"), 96);
    EXPECT_EQ(shell(bin() + " timeline --perfetto - --only bogus " + f).rc, 2);
    EXPECT_EQ(shell(bin() + " timeline --perfetto - --from soon " + f).rc, 2);
}

TEST(Timeline, SizeGuard) {
    TempDir d;
    std::string hip = fixture("hip-amd-log-level3-16streams.log");
    // The whole HIP log's timeline is about 20 KB; 1 MB is far more, so a file of
    // 120 copies (one process each) overflows it.
    std::string big;
    std::string one = slurp(hip);
    for (int i = 0; i < 120; ++i)
        big += replace_all(one, "Process ID: 85406", "Process ID: " + std::to_string(1000 + i));
    std::string f = d.write("big.log", big);
    ShellResult r =
        shell(bin() + " timeline --perfetto " + d.path("t.json") + " --max-size 1 " + f);
    ASSERT_EQ(r.rc, 0) << r.out;
    EXPECT_NE(r.out.find("warning: timeline stopped at --max-size 1 MB"), std::string::npos)
        << r.out;
    std::string j = slurp(d.path("t.json"));
    EXPECT_LE(j.size(), (1u << 20) + 4096);
    EXPECT_NE(j.find("\"otherData\":{\"amdqp_truncated\""), std::string::npos);
    expect_valid(j);
    ShellResult all =
        shell(bin() + " timeline --perfetto " + d.path("u.json") + " --max-size 0 " + f);
    ASSERT_EQ(all.rc, 0) << all.out;
    EXPECT_GT(std::filesystem::file_size(d.path("u.json")), 1u << 20);
    EXPECT_EQ(all.out.find("warning"), std::string::npos) << all.out;
}
