// Real-world inputs that used to give wrong answers or abort (issue 12): pipes,
// format detection on look-alike files, folders with one bad file in them.
// Every input is cut from or built around the vendored fixtures at run time.
#include <gtest/gtest.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdio>
#include <filesystem>
#include <fstream>
#include <memory>
#include <string>

#include "census.h"
#include "json_out.h"
#include "test_util.h"

namespace {

struct Result {
    int rc;
    std::string out;
};

const std::string kFix = AMDQP_TRACE_FIXTURES;
const std::string kBin = AMDQP_TRACE_BIN;

// A shell command line, stdout and stderr together.
Result sh(const std::string &cmd) {
    std::string full = "(" + cmd + ") 2>&1";
    std::unique_ptr<FILE, int (*)(FILE *)> p(popen(full.c_str(), "r"), pclose);
    std::string out;
    char buf[4096];
    size_t n;
    while ((n = fread(buf, 1, sizeof buf, p.get())) > 0)
        out.append(buf, n);
    int st = pclose(p.release());
    return {WIFEXITED(st) ? WEXITSTATUS(st) : -1, out};
}

class Robust : public ::testing::Test {
protected:
    void SetUp() override {
        dir_ = std::filesystem::temp_directory_path() /
               ("amdqp-trace-robust-" + std::to_string(::getpid()) + "-" +
                ::testing::UnitTest::GetInstance()->current_test_info()->name());
        std::filesystem::remove_all(dir_);
        std::filesystem::create_directories(dir_);
    }
    void TearDown() override { std::filesystem::remove_all(dir_); }
    std::string path(const std::string &name) const { return (dir_ / name).string(); }
    std::string write(const std::string &name, const std::string &data) const {
        std::ofstream(path(name), std::ios::binary) << data;
        return path(name);
    }
    std::filesystem::path dir_;
};

std::string fix(const std::string &name) {
    return amdqp::test::slurp(kFix + "/" + name);
}

const std::string kF7bc = "f7bc   2         4           20      4  x0:5 x1:5 x2:5 x3:5";
const std::string kHipQueues = "{\"pid\": 85406, \"gpu_id\": \"dev0\", \"queues\": 4";

// Item 5: detection used to read 64 KiB and reopen the path, which loses them
// on a pipe; "-" was refused as a missing file.
TEST_F(Robust, StdinDashReadsTheWholePipe) {
    std::string f = kFix + "/debugfs-kfd-hqds-16streams.txt";
    ASSERT_GT(std::filesystem::file_size(f), 65536u);
    Result r = sh("cat " + f + " | " + kBin + " census -");
    ASSERT_EQ(r.rc, 0) << r.out;
    EXPECT_NE(r.out.find(kF7bc), std::string::npos) << r.out;
    Result file = sh(kBin + " census " + f);
    ASSERT_EQ(file.rc, 0);
    // The same census as from the file itself, which stdin is named after.
    file.out.replace(file.out.find(f), f.size(), "<stdin>");
    EXPECT_EQ(r.out, file.out);
}

TEST_F(Robust, DevStdinPipeKeepsFirst64KiB) {
    std::string f = kFix + "/hip-amd-log-level3-16streams.log";
    ASSERT_GT(std::filesystem::file_size(f), 65536u);
    Result r = sh("cat " + f + " | " + kBin + " census --json /dev/stdin");
    ASSERT_EQ(r.rc, 0) << r.out;
    EXPECT_NE(r.out.find(kHipQueues), std::string::npos) << r.out;
    Result file = sh(kBin + " census --json " + f);
    // Same census as from the file itself (the path printed differs).
    EXPECT_NE(file.out.find(kHipQueues), std::string::npos);
}

// Item 6: dmesg, PyTorch warnings and "[INFO]" logs start with '[' too.
TEST_F(Robust, BracketTextIsNotRocprofJson) {
    std::filesystem::create_directories(path("cap"));
    write("cap/dmesg.txt", "[    0.000000] Linux version 6.12.0 (gcc 12)\n"
                           "[    3.141592] amdgpu 0000:0c:00.0: amdgpu: SMU is initialized\n");
    write("cap/train.log", "[INFO 2026-01-12 10:00:01] starting\n[W init.cpp:12] warning\n");
    write("cap/hqds.txt", fix("debugfs-kfd-hqds-16streams.txt"));
    Result r = sh(kBin + " census " + path("cap"));
    ASSERT_EQ(r.rc, 0) << r.out;
    EXPECT_NE(r.out.find(kF7bc), std::string::npos) << r.out;
    EXPECT_NE(r.out.find("skipping " + path("cap/dmesg.txt") + ": not a recognised format"),
              std::string::npos)
        << r.out;
    EXPECT_NE(r.out.find("skipping " + path("cap/train.log")), std::string::npos) << r.out;
    // The real rocprof JSON is still recognised.
    Result j = sh(kBin + " report " + kFix + "/rocprof-trace.json");
    EXPECT_EQ(j.rc, 0) << j.out;
}

TEST_F(Robust, HipLogAfterManyUnrelatedLines) {
    std::string noise;
    for (int i = 0; i < 500; ++i)
        noise += "epoch 1 step " + std::to_string(i) + " loss 0.25\n";
    std::string f = write("hip.log", noise + fix("hip-amd-log-level3-16streams.log"));
    Result r = sh(kBin + " census --json " + f);
    ASSERT_EQ(r.rc, 0) << r.out;
    EXPECT_NE(r.out.find(kHipQueues), std::string::npos) << r.out;
}

TEST_F(Robust, HipLogWithCaptureHeaderBeyondTheSample) {
    // More than 64 KiB of output before the first HIP line: only amdqp-capture's
    // header can tell what the file is.
    std::string noise;
    while (noise.size() < 70000)
        noise += "model warm-up output line that says nothing about queues\n";
    std::string f = write("hip-log.txt", "# amdqp-capture hip-log pid=85406 AMD_LOG_LEVEL=3\n" +
                                             noise + fix("hip-amd-log-level3-16streams.log"));
    Result r = sh(kBin + " census --json " + f);
    ASSERT_EQ(r.rc, 0) << r.out;
    EXPECT_NE(r.out.find(kHipQueues), std::string::npos) << r.out;
}

// kfd/rls has the hqds node header followed by a hex dump of the runlist.
TEST_F(Robust, RlsDumpIsNotHqds) {
    std::string h = fix("debugfs-kfd-hqds-16streams.txt"), rls;
    size_t pos = 0;
    while (pos < h.size() && rls.size() < 4000) {
        size_t nl = h.find('\n', pos);
        std::string l = h.substr(pos, nl - pos + 1);
        pos = nl + 1;
        if (l.find("Inst ") == std::string::npos)
            rls += l; // node headers and hex rows only
    }
    std::filesystem::create_directories(path("cap"));
    write("cap/rls.txt", rls);
    write("cap/mqds.txt", fix("debugfs-kfd-mqds-16streams.txt"));
    Result r = sh(kBin + " census " + path("cap"));
    ASSERT_EQ(r.rc, 0) << r.out;
    EXPECT_NE(r.out.find("skipping " + path("cap/rls.txt") + ": kfd runlist dump"),
              std::string::npos)
        << r.out;
    Result one = sh(kBin + " census " + path("cap/rls.txt"));
    EXPECT_EQ(one.rc, 1);
    EXPECT_NE(one.out.find("kfd runlist dump (debugfs kfd/rls): not analysed"), std::string::npos)
        << one.out;
}

TEST_F(Robust, HqdsDeviceIsStoppedIsNotFatal) {
    std::string f = write("hqds.txt", "Node 1, gpu_id 1a2b:\n Device is stopped\n" +
                                          fix("debugfs-kfd-hqds-16streams.txt"));
    Result r = sh(kBin + " census " + f);
    ASSERT_EQ(r.rc, 0) << r.out;
    EXPECT_NE(r.out.find(kF7bc), std::string::npos) << r.out;
}

TEST_F(Robust, TraceCmdReportCpuIsEmpty) {
    std::string f = write("report.txt", "cpus=4\n"
                                        "CPU 0 is empty\n"
                                        "CPU 2 is empty\n"
                                        "  bash-1 [001] 1.000001: amdqp_error: gpu_id=1\n");
    Result r = sh(kBin + " report " + f);
    EXPECT_EQ(r.rc, 0) << r.out;
}

// One broken file in a folder: named with its reason and skipped, and none of
// its records reach the analysis; --strict makes it fatal.
TEST_F(Robust, BrokenFileInFolderIsSkipped) {
    std::string h = fix("debugfs-kfd-hqds-16streams.txt").substr(0, 700);
    std::filesystem::create_directories(path("cap"));
    write("cap/a-hqds-cut.txt", h.substr(0, h.rfind('\n') + 1));
    write("cap/b-mqds.txt", fix("debugfs-kfd-mqds-16streams.txt"));
    Result r = sh(kBin + " census --json " + path("cap"));
    ASSERT_EQ(r.rc, 0) << r.out;
    EXPECT_NE(r.out.find("skipping " + path("cap/a-hqds-cut.txt") + ": " +
                         path("cap/a-hqds-cut.txt") + ":10: CP queue block has"),
              std::string::npos)
        << r.out;
    EXPECT_NE(r.out.find("{\"pid\": 94314, \"gpu_id\": \"f7bc\", \"queues\": 5"), std::string::npos)
        << r.out;
    // The HIQ block before the cut is complete, but the file was left out whole.
    EXPECT_EQ(r.out.find("\"active_hiq\""), std::string::npos) << r.out;

    Result strict = sh(kBin + " census --strict " + path("cap"));
    EXPECT_EQ(strict.rc, 1) << strict.out;
    EXPECT_NE(strict.out.find("a-hqds-cut.txt:10: CP queue block has"), std::string::npos);
}

// Item 1: `cat hqds >> log` in a loop puts several dumps in one file; each is a
// snapshot, counts must not add up across them.
TEST_F(Robust, SeveralHqdsDumpsInOneFileAreSnapshots) {
    std::string busy = fix("debugfs-kfd-hqds-16streams.txt");
    std::string idle = fix("debugfs-kfd-hqds-idle.txt");
    std::string f = write("log.txt", busy + busy);
    Result j = sh(kBin + " census --json " + f);
    ASSERT_EQ(j.rc, 0) << j.out;
    EXPECT_NE(
        j.out.find("{\"gpu_id\": \"f7bc\", \"node\": 2, \"xcc_count\": 4, \"active_hqds\": 20, "
                   "\"active_hiq\": 4, \"per_xcc\": {\"0\": 5, \"1\": 5, \"2\": 5, \"3\": 5}}"),
        std::string::npos)
        << j.out;
    EXPECT_NE(j.out.find("\"snapshot\": 2, \"active_hqds\": 20}"), std::string::npos) << j.out;
    Result t = sh(kBin + " census " + f);
    ASSERT_EQ(t.rc, 0) << t.out;
    EXPECT_NE(t.out.find(kF7bc), std::string::npos) << t.out;
    EXPECT_NE(t.out.find("snapshot 1 of 2: the one with the most active user HQDs"),
              std::string::npos)
        << t.out;

    // Busy then idle: the census shows the busiest snapshot and says the last is idle.
    std::string g = write("log2.txt", busy + idle);
    Result m = sh(kBin + " census --json " + g);
    ASSERT_EQ(m.rc, 0) << m.out;
    EXPECT_NE(m.out.find("\"hqds_snapshot_index\": 1,\n  \"hqds_max_active\": 20,\n  "
                         "\"hqds_last_active\": 0,"),
              std::string::npos)
        << m.out;
    Result mt = sh(kBin + " census " + g);
    EXPECT_NE(mt.out.find("max 20, last of that file 0"), std::string::npos) << mt.out;
}

// Item 7: a run that crashed before printing results is an error, not zeros.
TEST_F(Robust, CrashedWorkloadRunIsAnError) {
    std::string log = fix("dual-model-test3-standard.log");
    size_t start = log.find("Starting workers...");
    ASSERT_NE(start, std::string::npos);
    std::string crashed = log.substr(0, log.find('\n', start) + 1) +
                          "python3: symbol lookup error: /opt/rocm/lib/libMIOpen.so.1: undefined "
                          "symbol: hipExtModuleLaunchKernel\n";
    amdqp::test::Collect c;
    amdqp::parse_buffer(crashed, amdqp::Format::Workload, c);
    ASSERT_EQ(c.workloads.size(), 1u);
    EXPECT_EQ(c.workloads[0].scenario, "baseline (error)");
    Result r = sh(kBin + " report " + write("run.log", crashed));
    ASSERT_EQ(r.rc, 0) << r.out;
    EXPECT_NE(r.out.find("  baseline (error)       ResNet-18         -        -        -"),
              std::string::npos)
        << r.out;
    // Cut before any result even without an error line: no measurement either.
    amdqp::test::Collect cut;
    amdqp::parse_buffer(log.substr(0, log.find('\n', start) + 1), amdqp::Format::Workload, cut);
    ASSERT_EQ(cut.workloads.size(), 1u);
    EXPECT_EQ(cut.workloads[0].scenario, "baseline (error)");
    // The complete run still reads as before.
    amdqp::test::Collect full;
    amdqp::parse_buffer(log, amdqp::Format::Workload, full);
    ASSERT_FALSE(full.workloads.empty());
    EXPECT_EQ(full.workloads[0].scenario, "baseline");
}

// Item 7: an mqds dump cut at a line boundary parsed cleanly with partial counts.
TEST_F(Robust, MqdsCutAtLineBoundaryIsFlagged) {
    std::string m = fix("debugfs-kfd-mqds-16streams.txt");
    // Inside an MQD: the first 300 lines end in the first MQD of the second queue.
    std::string mid;
    size_t pos = 0;
    for (int i = 0; i < 300; ++i)
        pos = m.find('\n', pos) + 1;
    mid = m.substr(0, pos);
    std::string f = write("mqds-mid.txt", mid);
    Result r = sh(kBin + " census " + f);
    EXPECT_EQ(r.rc, 1) << r.out;
    EXPECT_NE(r.out.find("truncated dump?"), std::string::npos) << r.out;
    Result kg = sh(kBin + " census --keep-going " + f);
    EXPECT_EQ(kg.rc, 0) << kg.out;
    EXPECT_NE(kg.out.find("warning: " + f), std::string::npos) << kg.out;

    // Exactly at an MQD boundary: the last queue lacks MQDs (XCCs) the others have.
    size_t last_q = m.rfind("queue on device");
    ASSERT_NE(last_q, std::string::npos);
    size_t second = m.find("00000000:", m.find("00000000:", last_q) + 1);
    ASSERT_NE(second, std::string::npos);
    std::string g = write("mqds-boundary.txt", m.substr(0, m.rfind('\n', second) + 1));
    Result b = sh(kBin + " census " + g);
    EXPECT_EQ(b.rc, 1) << b.out;
    EXPECT_NE(b.out.find("truncated dump?"), std::string::npos) << b.out;

    // The whole dump is fine.
    EXPECT_EQ(sh(kBin + " census " + kFix + "/debugfs-kfd-mqds-16streams.txt").rc, 0);
}

// Acceptance "mixed folder": every file is listed as used or skipped with its
// reason, in the JSON census and in the text one, and the rest is analysed.
TEST_F(Robust, MixedFolderCensusListsEveryInput) {
    std::string h = fix("debugfs-kfd-hqds-16streams.txt");
    std::filesystem::create_directories(path("cap"));
    write("cap/a-dmesg.txt", "[    0.000000] Linux version 6.12.0 (gcc 12)\n"
                             "[    3.141592] amdgpu 0000:0c:00.0: amdgpu: SMU is initialized\n");
    std::string cut = h.substr(0, 700);
    write("cap/b-hqds-cut.txt", cut.substr(0, cut.rfind('\n') + 1));
    write("cap/c-hqds.txt", h);

    // stdout alone: the notes on stderr stay as they were.
    Result j = sh(kBin + " census --json " + path("cap") + " 2>/dev/null");
    ASSERT_EQ(j.rc, 0) << j.out;
    amdqp::Json doc = amdqp::Json::parse(j.out);
    // The fields scripts read are all still there, in their order, before "inputs".
    std::vector<std::string> keys;
    for (const auto &[k, v] : doc.items())
        keys.push_back(k);
    EXPECT_EQ(keys, (std::vector<std::string>{"processes", "hqds_snapshot", "hqds_snapshot_index",
                                              "hqds_max_active", "hqds_last_active", "gpus",
                                              "snapshots", "inputs"}));
    EXPECT_EQ(doc["hqds_snapshot"], path("cap/c-hqds.txt"));
    EXPECT_EQ(doc["hqds_max_active"], 20);
    const amdqp::Json &in = doc["inputs"];
    ASSERT_EQ(in.size(), 3u) << j.out;
    EXPECT_EQ(in[0], (amdqp::Json{{"path", path("cap/a-dmesg.txt")},
                                  {"format", nullptr},
                                  {"status", "skipped"},
                                  {"reason", in[0]["reason"]}}));
    EXPECT_EQ(in[0]["reason"].get<std::string>().rfind("not a recognised format", 0), 0u) << in[0];
    EXPECT_EQ(in[1]["path"], path("cap/b-hqds-cut.txt"));
    EXPECT_EQ(in[1]["format"], "kfd-hqds"); // recognised, then found broken
    EXPECT_EQ(in[1]["status"], "skipped");
    EXPECT_EQ(in[1]["reason"].get<std::string>().rfind("line 10: CP queue block has", 0), 0u)
        << in[1];
    EXPECT_EQ(in[2], (amdqp::Json{{"path", path("cap/c-hqds.txt")},
                                  {"format", "kfd-hqds"},
                                  {"status", "used"},
                                  {"reason", nullptr}}));
    // One row per line, like the other arrays.
    EXPECT_NE(j.out.find("\n    {\"path\": \"" + path("cap/c-hqds.txt") +
                         "\", \"format\": \"kfd-hqds\", \"status\": \"used\", \"reason\": null}"),
              std::string::npos)
        << j.out;

    Result t = sh(kBin + " census " + path("cap") + " 2>/dev/null");
    ASSERT_EQ(t.rc, 0) << t.out;
    EXPECT_NE(t.out.find(kF7bc), std::string::npos) << t.out;
    EXPECT_NE(t.out.find("\ninputs: 1 used, 2 skipped\n  skipped " + path("cap/a-dmesg.txt") +
                         ": not a recognised format"),
              std::string::npos)
        << t.out;
    EXPECT_NE(
        t.out.find("\n  skipped " + path("cap/b-hqds-cut.txt") + ": line 10: CP queue block has "),
        std::string::npos)
        << t.out;
    // report names the skipped files in its inputs section.
    Result r = sh(kBin + " report " + path("cap") + " 2>/dev/null");
    ASSERT_EQ(r.rc, 0) << r.out;
    EXPECT_NE(r.out.find("  skipped       " + path("cap/a-dmesg.txt") + ": not a recognised"),
              std::string::npos)
        << r.out;
}

// Files named on the command line are listed too; an unreadable one in a folder
// is skipped with the system's reason and no format.
TEST_F(Robust, CensusInputsOfSingleFile) {
    Result j = sh(kBin + " census --json " + kFix + "/debugfs-kfd-mqds-16streams.txt");
    ASSERT_EQ(j.rc, 0) << j.out;
    amdqp::Json doc = amdqp::Json::parse(j.out);
    ASSERT_EQ(doc["inputs"].size(), 1u);
    EXPECT_EQ(doc["inputs"][0]["format"], "kfd-mqds");
    EXPECT_EQ(doc["inputs"][0]["status"], "used");
    Result t = sh(kBin + " census " + kFix + "/debugfs-kfd-mqds-16streams.txt");
    EXPECT_NE(t.out.find("\ninputs: 1 used, 0 skipped\n"), std::string::npos) << t.out;
}

TEST_F(Robust, CensusInputsUnreadableFileIsSkipped) {
    if (::geteuid() == 0)
        GTEST_SKIP() << "root reads files whatever their mode";
    std::filesystem::create_directories(path("cap"));
    write("cap/hqds.txt", fix("debugfs-kfd-hqds-idle.txt"));
    std::string locked = write("cap/locked.txt", "x\n");
    std::filesystem::permissions(locked, std::filesystem::perms::none);
    Result u = sh(kBin + " census --json " + path("cap") + " 2>/dev/null");
    ASSERT_EQ(u.rc, 0) << u.out;
    amdqp::Json d2 = amdqp::Json::parse(u.out);
    ASSERT_EQ(d2["inputs"].size(), 2u) << u.out;
    EXPECT_EQ(d2["inputs"][1], (amdqp::Json{{"path", locked},
                                            {"format", nullptr},
                                            {"status", "skipped"},
                                            {"reason", "cannot open: Permission denied"}}));
}

// A GPU whose hqds dump says "Device is stopped" was dropped from the census
// without a word: it is listed, flagged as stopped.
TEST_F(Robust, StoppedGpuIsListedInCensus) {
    std::string h = fix("debugfs-kfd-hqds-16streams.txt");
    size_t b = h.find("Node 3, gpu_id f05b:\n"), e = h.find("Node 4, gpu_id eb40:");
    ASSERT_NE(b, std::string::npos);
    ASSERT_NE(e, std::string::npos);
    std::string dump = h.substr(0, b) + "Node 3, gpu_id f05b:\n Device is stopped\n" + h.substr(e);
    std::string f = write("hqds.txt", dump);
    Result j = sh(kBin + " census --json " + f);
    ASSERT_EQ(j.rc, 0) << j.out;
    EXPECT_NE(j.out.find("{\"gpu_id\": \"f05b\", \"node\": 3, \"xcc_count\": 0, \"active_hqds\": "
                         "0, \"active_hiq\": 0, \"per_xcc\": {}, \"stopped\": true}"),
              std::string::npos)
        << j.out;
    // Running GPUs' rows are unchanged (no "stopped" member).
    EXPECT_NE(
        j.out.find("{\"gpu_id\": \"f7bc\", \"node\": 2, \"xcc_count\": 4, \"active_hqds\": 20, "
                   "\"active_hiq\": 4, \"per_xcc\": {\"0\": 5, \"1\": 5, \"2\": 5, \"3\": 5}},"),
        std::string::npos)
        << j.out;
    amdqp::Json doc = amdqp::Json::parse(j.out);
    EXPECT_EQ(doc["gpus"].size(), 8u);
    EXPECT_EQ(doc["hqds_max_active"], 20);
    Result t = sh(kBin + " census " + f);
    ASSERT_EQ(t.rc, 0) << t.out;
    EXPECT_NE(t.out.find("  f05b   3         -            -      -  device is stopped"),
              std::string::npos)
        << t.out;
    EXPECT_NE(t.out.find(kF7bc), std::string::npos) << t.out;
}

// A stopped GPU belongs to its own dump: two dumps that both say so are two
// snapshots, and rows of that GPU after "stopped" start the next dump.
TEST_F(Robust, StoppedGpuInSeveralDumps) {
    std::string stopped = "Node 1, gpu_id 1a2b:\n Device is stopped\n";
    std::string busy = fix("debugfs-kfd-hqds-16streams.txt");
    amdqp::test::Collect c;
    amdqp::parse_buffer(stopped + busy, amdqp::Format::Hqds, c);
    EXPECT_EQ(c.stopped, (std::vector<std::string>{"1:1a2b"}));

    amdqp::Analysis twice;
    amdqp::parse_buffer(stopped + busy + stopped + busy, amdqp::Format::Hqds, twice);
    ASSERT_EQ(twice.hqds.size(), 2u);
    for (const auto &s : twice.hqds) {
        EXPECT_EQ(s.active_user(), 20u);
        ASSERT_TRUE(s.gpus.count("1a2b"));
        EXPECT_TRUE(s.gpus.at("1a2b").stopped);
        EXPECT_EQ(s.gpus.size(), 9u);
    }

    // Stopped in the first dump, running in the second (node 2 of the fixture).
    std::string first = "Node 2, gpu_id f7bc:\n Device is stopped\n" +
                        busy.substr(busy.find("Node 3, gpu_id f05b:"));
    amdqp::Analysis back;
    amdqp::parse_buffer(first + busy, amdqp::Format::Hqds, back);
    ASSERT_EQ(back.hqds.size(), 2u);
    EXPECT_TRUE(back.hqds[0].gpus.at("f7bc").stopped);
    EXPECT_EQ(back.hqds[0].active_user(), 0u);
    EXPECT_FALSE(back.hqds[1].gpus.at("f7bc").stopped);
    EXPECT_EQ(back.hqds[1].active_user(), 20u);
}

} // namespace
