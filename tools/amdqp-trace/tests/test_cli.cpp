// The amdqp-trace binary end to end: interface, exit codes, error messages.
#include <gtest/gtest.h>
#include <sys/wait.h>

#include <cstdio>
#include <filesystem>
#include <fstream>
#include <memory>
#include <string>

#include "test_util.h"

namespace {

struct Result {
    int rc;
    std::string out;
};

// stdout and stderr together; stdin closed.
Result run(const std::string &args) {
    std::string cmd = std::string(AMDQP_TRACE_BIN) + " " + args + " 2>&1 </dev/null";
    std::unique_ptr<FILE, int (*)(FILE *)> p(popen(cmd.c_str(), "r"), pclose);
    std::string out;
    char buf[4096];
    size_t n;
    while ((n = fread(buf, 1, sizeof buf, p.get())) > 0)
        out.append(buf, n);
    int st = pclose(p.release());
    return {WIFEXITED(st) ? WEXITSTATUS(st) : -1, out};
}

std::string tmpdir() {
    auto d =
        std::filesystem::temp_directory_path() / ("amdqp-trace-test-" + std::to_string(::getpid()));
    std::filesystem::create_directories(d);
    return d.string();
}

void write(const std::string &path, const std::string &data) {
    std::ofstream(path, std::ios::binary) << data;
}

const std::string kFix = AMDQP_TRACE_FIXTURES;

} // namespace

TEST(Cli, CensusJsonOnFixtureFolder) {
    Result r = run("census --json " + kFix);
    ASSERT_EQ(r.rc, 0) << r.out;
    // Process 94314 has 5 user queues on f7bc (mqds), the HIP test 4 HW queues.
    EXPECT_NE(
        r.out.find("{\"pid\": 94314, \"gpu_id\": \"f7bc\", \"queues\": 5, \"xcc_instances\": 4"),
        std::string::npos)
        << r.out;
    EXPECT_NE(r.out.find("{\"pid\": 85406, \"gpu_id\": \"dev0\", \"queues\": 4"),
              std::string::npos);
    EXPECT_NE(
        r.out.find("{\"gpu_id\": \"f7bc\", \"node\": 2, \"xcc_count\": 4, \"active_hqds\": 20, "
                   "\"active_hiq\": 4, \"per_xcc\": {\"0\": 5, \"1\": 5, \"2\": 5, \"3\": 5}}"),
        std::string::npos)
        << r.out;
    EXPECT_NE(
        r.out.find("{\"gpu_id\": \"c3f1\", \"node\": 9, \"xcc_count\": 4, \"active_hqds\": 0,"),
        std::string::npos);
    // GPUs in topology node order: node 2 (f7bc) first, node 9 (c3f1) last.
    EXPECT_LT(r.out.find("\"gpu_id\": \"f7bc\", \"node\": 2"),
              r.out.find("\"gpu_id\": \"f05b\", \"node\": 3"));
    EXPECT_LT(r.out.find("\"gpu_id\": \"eedc\", \"node\": 8"),
              r.out.find("\"gpu_id\": \"c3f1\", \"node\": 9"));
    // The README in the folder is skipped with a note, not an error.
    EXPECT_NE(r.out.find("note: skipping"), std::string::npos);
}

TEST(Cli, CensusTextAndReport) {
    Result c = run("census " + kFix + "/debugfs-kfd-hqds-16streams.txt");
    ASSERT_EQ(c.rc, 0) << c.out;
    EXPECT_NE(c.out.find("f7bc   2         4           20      4  x0:5 x1:5 x2:5 x3:5"),
              std::string::npos)
        << c.out;
    Result r = run("report " + kFix);
    ASSERT_EQ(r.rc, 0) << r.out;
    EXPECT_NE(r.out.find("== Submissions per queue"), std::string::npos);
    EXPECT_NE(r.out.find("hip-log  85406      dev0     0x7f3660c00000         24"),
              std::string::npos)
        << r.out;
    EXPECT_NE(r.out.find("== Verdict per workload"), std::string::npos);
    EXPECT_NE(r.out.find("baseline               ResNet-18      9.99     2.25     2.65"),
              std::string::npos);
}

TEST(Cli, TimelineWritesValidLookingJson) {
    std::string out = tmpdir() + "/t.json";
    Result r = run("timeline --perfetto " + out + " " + kFix + "/rocprof-trace.json " + kFix +
                   "/hip-amd-log-level3-16streams.log");
    ASSERT_EQ(r.rc, 0) << r.out;
    std::string j = amdqp::test::slurp(out);
    EXPECT_EQ(j.rfind("{\"displayTimeUnit\":\"ns\",\"traceEvents\":[", 0), 0u);
    EXPECT_NE(j.find("\"ph\":\"X\",\"name\":\"vectorAdd(float const*, float const*, float*, int) "
                     "[clone .kd]\",\"cat\":\"rocprof\",\"pid\":3108374"),
              std::string::npos);
    EXPECT_NE(j.find("\"name\":\"HW queue created\""), std::string::npos);
    // 97 dispatches + 8 queue events + 460 API spans + 5 queue track names.
    EXPECT_NE(r.out.find("wrote 570 events"), std::string::npos) << r.out;
    // It is well-formed JSON: our own streaming reader accepts it, and finds
    // the 460 API spans plus the rocprof dispatch written back as a span.
    amdqp::test::Collect c;
    EXPECT_NO_THROW(amdqp::parse_buffer(j, amdqp::Format::Rocprof, c));
    EXPECT_EQ(c.spans.size(), 461u);
    std::filesystem::remove_all(std::filesystem::path(out).parent_path());
}

TEST(Cli, UsageErrors) {
    EXPECT_EQ(run("").rc, 2);
    Result h = run("--help");
    EXPECT_EQ(h.rc, 0);
    EXPECT_NE(h.out.find("amdqp-trace census [--json]"), std::string::npos);
    EXPECT_EQ(run("frobnicate x").rc, 2);
    EXPECT_EQ(run("census").rc, 2);
    EXPECT_EQ(run("timeline " + kFix).rc, 2);
    Result bad = run("census --bogus " + kFix);
    EXPECT_EQ(bad.rc, 2);
    EXPECT_NE(bad.out.find("unknown option '--bogus' for census"), std::string::npos);
}

TEST(Cli, InputErrorsNameFileAndLine) {
    std::string d = tmpdir();
    Result missing = run("census " + d + "/nope.txt");
    EXPECT_EQ(missing.rc, 1);
    EXPECT_NE(missing.out.find("nope.txt: no such file or folder"), std::string::npos);

    write(d + "/empty.txt", "");
    Result empty = run("census " + d + "/empty.txt");
    EXPECT_EQ(empty.rc, 1);
    EXPECT_NE(empty.out.find("empty.txt:1: empty file"), std::string::npos) << empty.out;

    write(d + "/bin.dat", std::string("\x7f"
                                      "ELF\0\0\0\1garbage",
                                      15));
    Result bin = run("report " + d + "/bin.dat");
    EXPECT_EQ(bin.rc, 1);
    EXPECT_NE(bin.out.find("bin.dat:1: binary data"), std::string::npos) << bin.out;

    // A trace whose third line is cut off.
    write(d + "/cut.txt",
          "# tracer: nop\n bash-1 [001] ..... 1.000001: amdqp_error: gpu_id=1\n bash-1 [00");
    Result cut = run("report " + d + "/cut.txt");
    EXPECT_EQ(cut.rc, 1);
    EXPECT_NE(cut.out.find("cut.txt:3: not an ftrace event line"), std::string::npos) << cut.out;
    // --keep-going turns it into a warning and still reports.
    Result kg = run("report --keep-going " + d + "/cut.txt");
    EXPECT_EQ(kg.rc, 0) << kg.out;
    EXPECT_NE(kg.out.find("warning: " + d + "/cut.txt:3:"), std::string::npos) << kg.out;
    EXPECT_NE(kg.out.find("(1 bad lines skipped)"), std::string::npos);

    // Truncated hqds dump: the header line of the incomplete block is named.
    std::string h = amdqp::test::slurp(kFix + "/debugfs-kfd-hqds-16streams.txt").substr(0, 700);
    h = h.substr(0, h.rfind('\n') + 1);
    write(d + "/hqds.txt", h);
    Result hq = run("census " + d + "/hqds.txt");
    EXPECT_EQ(hq.rc, 1);
    EXPECT_NE(hq.out.find("hqds.txt:10: CP queue block has"), std::string::npos) << hq.out;

    // Forcing a format on the wrong file.
    Result ff = run("census --format kfd-mqds " + kFix + "/rocprof-trace.json");
    EXPECT_EQ(ff.rc, 1);
    EXPECT_NE(ff.out.find("rocprof-trace.json:1: unrecognised line in kfd mqds dump"),
              std::string::npos)
        << ff.out;
    std::filesystem::remove_all(d);
}
