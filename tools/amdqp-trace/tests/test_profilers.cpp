// Issue 12 item 8: rocprofv3 (JSON, kernel_trace.csv) and rocprof v1 CSV input,
// merged into the census and the timeline. The profiles are written here from
// the one kernel dispatch of the vendored rocprof-trace.json (vectorAdd on GPU
// 9, queue 0, pid 3108374): its args are rocprof v1's CSV columns.
#include <gtest/gtest.h>

#include <string>

#include "census.h"
#include "error.h"
#include "json_out.h"
#include "report.h"
#include "test_util.h"

using namespace amdqp;
using namespace amdqp::test;

namespace {

const std::string kKernel = "vectorAdd(float const*, float const*, float*, int) [clone .kd]";

// The fixture's dispatch event and its args, as (name, value) in file order.
std::vector<std::pair<std::string, std::string>> dispatch_args() {
    std::string j = slurp(fixture("rocprof-trace.json"));
    size_t at = j.find("\"KernelName\"");
    std::vector<std::pair<std::string, std::string>> out;
    if (at == std::string::npos) {
        ADD_FAILURE() << "no dispatch in the fixture";
        return out;
    }
    // "key":"value" pairs, one per line, up to the closing brace.
    std::string args = j.substr(at, j.find('}', at) - at);
    for (size_t p = 0;;) {
        size_t ks = args.find('"', p), ke = args.find('"', ks + 1);
        size_t vs = args.find('"', ke + 1), ve = args.find('"', vs + 1);
        if (ks == std::string::npos || ve == std::string::npos)
            break;
        out.emplace_back(args.substr(ks + 1, ke - ks - 1), args.substr(vs + 1, ve - vs - 1));
        p = ve + 1;
    }
    return out;
}

std::string arg(const std::string &k) {
    for (const auto &[n, v] : dispatch_args())
        if (n == k)
            return v;
    return "";
}

std::string quoted(const std::string &s) {
    return "\"" + s + "\"";
}

// rocprof v1 results.csv: Index then the args' columns.
std::string v1_csv(int rows) {
    std::string head = "Index", row;
    for (const auto &[k, v] : dispatch_args())
        head += "," + k;
    std::string out = head + "\n";
    for (int i = 0; i < rows; ++i) {
        row = std::to_string(i);
        for (const auto &[k, v] : dispatch_args())
            row += "," + (k == "KernelName" ? quoted(v) : v);
        out += row + "\n";
    }
    return out;
}

// rocprofv3 --kernel-trace CSV (ROCm 6.4 columns), two queues on agent 9.
std::string v3_csv() {
    std::string begin = arg("BeginNs"), end = arg("EndNs");
    std::string out = "\"Kind\",\"Agent_Id\",\"Queue_Id\",\"Stream_Id\",\"Thread_Id\","
                      "\"Dispatch_Id\",\"Kernel_Id\",\"Kernel_Name\",\"Correlation_Id\","
                      "\"Start_Timestamp\",\"End_Timestamp\",\"LDS_Block_Size\",\"Scratch_Size\","
                      "\"VGPR_Count\",\"Accum_VGPR_Count\",\"SGPR_Count\",\"Workgroup_Size_X\","
                      "\"Workgroup_Size_Y\",\"Workgroup_Size_Z\",\"Grid_Size_X\",\"Grid_Size_Y\","
                      "\"Grid_Size_Z\"\n";
    for (int i = 0; i < 3; ++i)
        out += "\"KERNEL_DISPATCH\",\"Agent 9\"," + std::to_string(1 + i % 2) + ",0," + arg("tid") +
               "," + std::to_string(i + 1) + ",7," + quoted(kKernel) + "," +
               std::to_string(i + 10) + "," + begin + "," + end +
               ",0,0,8,0,16,256,1,1,1048576,1,1\n";
    return out;
}

// rocprofv3 --output-format json, the same three dispatches.
std::string v3_json() {
    std::string d;
    for (int i = 0; i < 3; ++i)
        d += std::string(i ? "," : "") +
             "{\"size\":112,\"kind\":11,\"operation\":1,\"thread_id\":" + arg("tid") +
             ",\"correlation_id\":{\"internal\":" + std::to_string(i + 10) +
             ",\"external\":0},\"start_timestamp\":" + arg("BeginNs") +
             ",\"end_timestamp\":" + arg("EndNs") +
             ",\"dispatch_info\":{\"size\":80,\"agent_id\":{\"handle\":11},\"queue_id\":"
             "{\"handle\":" +
             std::to_string(1 + i % 2) +
             "},\"kernel_id\":7,\"dispatch_id\":" + std::to_string(i + 1) +
             ",\"workgroup_size\":{\"x\":256,\"y\":1,\"z\":1}}}";
    return "{\"rocprofiler-sdk-tool\":[{\"metadata\":{\"pid\":" + arg("pid") +
           ",\"init_time\":1,\"fini_time\":2,\"command\":[\"./vectoradd\"]},"
           "\"agents\":[{\"size\":1,\"id\":{\"handle\":10},\"type\":1,\"node_id\":0,\"gpu_id\":0},"
           "{\"size\":1,\"id\":{\"handle\":11},\"type\":2,\"node_id\":9,\"gpu_id\":63420,"
           "\"name\":\"gfx942\"}],"
           "\"kernel_symbols\":[{\"kernel_id\":0},{\"kernel_id\":7,\"kernel_name\":\"_"
           "Z9vectorAddPKfS0_Pfi.kd\","
           "\"formatted_kernel_name\":" +
           quoted(kKernel) + "}],\"buffer_records\":{\"hip_api\":[],\"kernel_dispatch\":[" + d +
           "]}}]}";
}

} // namespace

TEST(Profilers, DetectedByContent) {
    std::string why;
    EXPECT_EQ(detect_format(v1_csv(1), why), Format::RocprofCsv);
    EXPECT_EQ(detect_format(v3_csv(), why), Format::RocprofV3Csv);
    EXPECT_EQ(detect_format(v3_json(), why), Format::RocprofV3Json);
    TempDir d;
    for (const auto &[name, text] : {std::pair<std::string, std::string>{"a.csv", v1_csv(1)},
                                     {"b.csv", v3_csv()},
                                     {"c.json", v3_json()}}) {
        ShellResult r = shell(bin() + " report " + d.write(name, text));
        EXPECT_EQ(r.rc, 0) << name << "\n" << r.out;
    }
    // The Chrome trace of rocprof is still what it was.
    EXPECT_EQ(detect_format(slurp(fixture("rocprof-trace.json")).substr(0, 65536), why),
              Format::Rocprof);
}

TEST(Profilers, RocprofV1CsvMatchesItsChromeTrace) {
    Collect csv, json;
    parse_buffer(v1_csv(2), Format::RocprofCsv, csv);
    parse_fixture("rocprof-trace.json", Format::Rocprof, json);
    ASSERT_EQ(csv.dispatches.size(), 2u);
    ASSERT_EQ(json.dispatches.size(), 1u);
    const auto &c = csv.dispatches[0], &j = json.dispatches[0];
    EXPECT_EQ(c.source, "rocprof");
    EXPECT_EQ(c.pid, j.pid);
    EXPECT_EQ(c.gpu, j.gpu);
    EXPECT_EQ(c.queue, j.queue);
    EXPECT_EQ(csv.kernels[0], json.kernels[0]);
    // BeginNs/EndNs in ns: 13.52 us where the Chrome trace rounds to 13.
    EXPECT_NEAR(c.dur_us, 13.52, 1e-9);
    EXPECT_NEAR(c.ts_us, j.ts_us, 1.0);
    TempDir d;
    ShellResult r = shell(bin() + " census --json " + d.write("results.csv", v1_csv(2)));
    ASSERT_EQ(r.rc, 0) << r.out;
    EXPECT_NE(r.out.find("{\"pid\": 3108374, \"gpu_id\": \"agent9\", \"queues\": 1, "
                         "\"xcc_instances\": 0, \"submissions\": 2, \"source\": \"rocprof\""),
              std::string::npos)
        << r.out;
}

TEST(Profilers, RocprofV3CsvPidFromFileName) {
    TempDir d;
    std::string f = d.write(arg("pid") + "_kernel_trace.csv", v3_csv());
    ShellResult r = shell(bin() + " census --json " + f);
    ASSERT_EQ(r.rc, 0) << r.out;
    EXPECT_NE(r.out.find("{\"pid\": 3108374, \"gpu_id\": \"node9\", \"queues\": 2, "
                         "\"xcc_instances\": 0, \"submissions\": 3, \"source\": \"rocprofv3\""),
              std::string::npos)
        << r.out;
    Collect c;
    parse_buffer(v3_csv(), Format::RocprofV3Csv, c);
    ASSERT_EQ(c.dispatches.size(), 3u);
    EXPECT_EQ(c.kernels[0], kKernel);
    EXPECT_EQ(c.dispatches[0].tid, 3108374);
    EXPECT_NEAR(c.dispatches[0].dur_us, 13.52, 1e-9);
}

TEST(Profilers, RocprofV3JsonJoinsTheKfdGpuId) {
    Collect c;
    parse_buffer(v3_json(), Format::RocprofV3Json, c);
    ASSERT_EQ(c.dispatches.size(), 3u);
    EXPECT_EQ(c.dispatches[0].pid, 3108374);
    EXPECT_EQ(c.dispatches[0].gpu, "f7bc"); // gpu_id 63420, as kfd debugfs names it
    EXPECT_EQ(c.dispatches[1].queue, "2");
    EXPECT_EQ(c.kernels[2], kKernel);
    // With the mqds dump of that GPU, the rows sit side by side in the census.
    TempDir d;
    d.write("cap/results.json", v3_json());
    d.write("cap/mqds.txt", slurp(fixture("debugfs-kfd-mqds-16streams.txt")));
    ShellResult r = shell(bin() + " census --json " + d.path("cap"));
    ASSERT_EQ(r.rc, 0) << r.out;
    EXPECT_NE(r.out.find("{\"pid\": 3108374, \"gpu_id\": \"f7bc\", \"queues\": 2"),
              std::string::npos)
        << r.out;
    // And the timeline has the dispatches on their queues' tracks.
    ShellResult t = shell(bin() + " timeline --perfetto - " + d.path("cap/results.json"));
    ASSERT_EQ(t.rc, 0) << t.out;
    EXPECT_NE(t.out.find("\"name\":\"queue f7bc 2\""), std::string::npos) << t.out;
    EXPECT_NE(t.out.find("\"cat\":\"rocprofv3\""), std::string::npos);
}

TEST(Profilers, MalformedProfilesNameTheLine) {
    auto err = [](const std::string &in, Format f) {
        Collect c;
        try {
            parse_buffer(in, f, c);
        } catch (const ParseError &e) {
            return std::to_string(e.line()) + ":" + e.message();
        }
        return std::string("no error");
    };
    std::string v3 = v3_csv();
    EXPECT_EQ(err(v3.substr(0, v3.rfind(',', v3.size() - 2)), Format::RocprofV3Csv).substr(0, 17),
              "4:CSV row has 21 ");
    EXPECT_EQ(err("\"Kind\",\"Foo\"\n", Format::RocprofV3Csv).substr(0, 5), "1:roc");
    EXPECT_EQ(err(v1_csv(1) + "1,\"unterminated\n", Format::RocprofCsv),
              "3:malformed CSV line (unbalanced quotes or too many columns)");
    std::string j = v3_json();
    EXPECT_EQ(err(j.substr(0, j.size() - 3), Format::RocprofV3Json),
              "1:truncated JSON document (unexpected end of file)");
    EXPECT_EQ(err("", Format::RocprofCsv), "1:empty CSV: no header line");
    TempDir d;
    ShellResult r =
        shell(bin() + " census " +
              d.write("1_kernel_trace.csv", v3.substr(0, v3.rfind(',', v3.size() - 2))));
    EXPECT_EQ(r.rc, 1) << r.out;
    EXPECT_NE(r.out.find("1_kernel_trace.csv:4: CSV row has 21 columns, the header 22"),
              std::string::npos)
        << r.out;
}

// Acceptance: a folder of real-world files, the fixtures and the kinds of files
// people have next to them. Every file is used or skipped with its reason.
TEST(Profilers, MixedFolderEveryFileUsedOrSkipped) {
    TempDir d;
    for (const char *f : {"debugfs-kfd-hqds-16streams.txt", "debugfs-kfd-mqds-16streams.txt",
                          "hip-amd-log-level3-16streams.log", "rocprof-trace.json",
                          "dual-model-test3-standard.log", "README.md"})
        d.write(std::string("cap/") + f, slurp(fixture(f)));
    d.write("cap/dmesg.txt", "[    3.141592] amdgpu 0000:0c:00.0: amdgpu: SMU is initialized\n");
    d.write("cap/train.log", "[W init.cpp:12] Warning: TF32 is off\nepoch 1 loss 0.3\n");
    d.write("cap/report.txt", "cpus=4\nCPU 0 is empty\n"
                              "  bash-1 [001] 1.000001: amdqp_error: gpu_id=63420 what=x "
                              "error=-5\n");
    std::string h = slurp(fixture("debugfs-kfd-hqds-16streams.txt")), rls;
    for (const auto &l : lines_of(h.substr(0, 3000)))
        if (l.find("Inst ") == std::string::npos)
            rls += l + "\n";
    d.write("cap/rls.txt", rls);
    d.write("cap/3108374_kernel_trace.csv", v3_csv());
    ShellResult r = shell(bin() + " report " + d.path("cap"));
    ASSERT_EQ(r.rc, 0) << r.out;
    for (const char *skipped : {"dmesg.txt", "train.log", "rls.txt", "README.md"})
        EXPECT_NE(r.out.find(std::string("skipping ") + d.path("cap/") + skipped + ": "),
                  std::string::npos)
            << skipped << "\n"
            << r.out;
    for (const char *used : {"kfd-hqds", "kfd-mqds", "hip-log", "rocprof-json", "workload-log",
                             "ftrace", "rocprofv3-csv"})
        EXPECT_NE(r.out.find(std::string("  ") + used + " "), std::string::npos) << used;
    EXPECT_NE(r.out.find("rocprofv3 3108374    node9"), std::string::npos) << r.out;

    // The census lists every file of the folder: used, or skipped with its reason.
    ShellResult c = shell(bin() + " census --json " + d.path("cap") + " 2>/dev/null");
    ASSERT_EQ(c.rc, 0) << c.out;
    Json in = Json::parse(c.out)["inputs"];
    ASSERT_EQ(in.size(), 11u) << c.out;
    size_t used = 0;
    for (const auto &e : in) {
        if (e["status"] == "used") {
            ++used;
            EXPECT_TRUE(e["format"].is_string() && e["reason"].is_null()) << e;
        } else {
            EXPECT_EQ(e["status"], "skipped") << e;
            EXPECT_FALSE(e["reason"].get<std::string>().empty()) << e;
        }
    }
    EXPECT_EQ(used, 7u) << c.out;
}
