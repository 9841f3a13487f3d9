// SPDX-License-Identifier: MIT
//
// amdqpctl status reporting amdqpd from hand-written answers of a stand-in
// for its socket.
#include <poll.h>
#include <sys/eventfd.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>

#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <memory>
#include <thread>

#include <amdqp/activity.h>
#include <nlohmann/json.hpp>

#include "cli_fixture.hpp"
#include "daemon_status.hpp"
#include "exit_status.hpp"

namespace amdqpctl::testing {
namespace {

using nlohmann::json;

// What amdqpd writes (Controller::status_json), one GPU suspending below
// normal, a low-priority tensor-parallel group on two GPUs.
const char* const kStatus = R"({
  "pid": 4242, "order": "before-doorbell", "device_open": true, "processes": 3,
  "stats": {"suspend_calls": 9, "resume_calls": 8, "coop_suspends": 1, "coop_resumes": 1,
            "starvation_hits": 2, "relapses": 0},
  "gpus": [{"gpu": 2, "suspend_level": 0}, {"gpu": 1, "suspend_level": 7}],
  "groups": {"tp0": {"priority": 2, "gpus": [1, 2], "pids": [5151, 5152]}},
  "tagged": [
    {"pid": 4000, "comm": "llm-server", "cgroup": "/", "rule": "tag", "coop_suspended": false,
     "queues": [{"gpu": 1, "queue": 1, "priority": 12, "mechanism": "amdqp", "active": true,
                 "group": ""}]},
    {"pid": 5151, "comm": "train", "cgroup": "/", "rule": "tag", "coop_suspended": false,
     "queues": [{"gpu": 1, "queue": 2, "priority": 2, "mechanism": "amdqp", "active": false,
                 "group": "tp0"}]},
    {"pid": 5152, "comm": "train", "cgroup": "/", "rule": "tag", "coop_suspended": true,
     "queues": [{"gpu": 2, "queue": 1, "priority": 2, "mechanism": "coop", "active": true,
                 "group": "tp0"}]}
  ]
})";

// amdqpd's socket as amdqpctl sees it: answers every status request with
// @text and closes.
class StatusServer {
  public:
    StatusServer(const std::string& dir, std::string text) : text_(std::move(text)) {
        std::filesystem::create_directories(dir);
        ::chmod(dir.c_str(), 0755);
        listen_ = ::socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
        struct sockaddr_un addr = {};
        addr.sun_family = AF_UNIX;
        path_ = dir + "/amdqpd.sock";
        ::unlink(path_.c_str());
        std::strncpy(addr.sun_path, path_.c_str(), sizeof(addr.sun_path) - 1);
        EXPECT_EQ(::bind(listen_, reinterpret_cast<struct sockaddr*>(&addr), sizeof(addr)), 0);
        EXPECT_EQ(::listen(listen_, 8), 0);
        stop_ = ::eventfd(0, EFD_CLOEXEC);
        thread_ = std::thread([this] { run(); });
    }
    ~StatusServer() {
        const std::uint64_t one = 1;
        (void)!::write(stop_, &one, sizeof(one));
        thread_.join();
        ::close(stop_);
        ::close(listen_);
        ::unlink(path_.c_str());
    }

  private:
    void run() {
        for (;;) {
            struct pollfd fds[2] = {{stop_, POLLIN, 0}, {listen_, POLLIN, 0}};
            if (::poll(fds, 2, -1) < 0 || fds[0].revents)
                return;
            int c = ::accept4(listen_, nullptr, nullptr, SOCK_CLOEXEC);
            if (c < 0)
                continue;
            char req = 0;
            if (::read(c, &req, 1) == 1 && req == AMDQP_DAEMON_MSG_STATUS)
                (void)!::write(c, text_.data(), text_.size());
            ::close(c);
        }
    }
    std::string text_, path_;
    int listen_ = -1, stop_ = -1;
    std::thread thread_;
};

class DaemonStatusTest : public CliTest {
  protected:
    void SetUp() override {
        CliTest::SetUp();
        fake->add_gpu(1);
    }

    void write_status(const std::string& text) {
        server_.reset();
        server_ = std::make_unique<StatusServer>(ctx.runtime_dir, text);
    }
    std::unique_ptr<StatusServer> server_;

    json status_json() {
        EXPECT_EQ(run({"status", "--json"}), exit_ok) << err.str();
        return json::parse(out.str())["daemon"];
    }

    std::string status_text() {
        EXPECT_EQ(run({"status"}), exit_ok) << err.str();
        return out.str();
    }

    // The status file with one key replaced (or removed, for null).
    static std::string with(const char* key, const json& value) {
        json j = json::parse(kStatus);
        if (value.is_null())
            j.erase(key);
        else
            j[key] = value;
        return j.dump();
    }
};

bool contains(const std::string& text, const std::string& part) {
    return text.find(part) != std::string::npos;
}

TEST_F(DaemonStatusTest, NoFileAndNothingInstalled) {
    json d = status_json();
    EXPECT_EQ(d["state"], "not installed");
    EXPECT_EQ(d["installed"], false);
    EXPECT_TRUE(d["pid"].is_null());
    EXPECT_TRUE(d["order"].is_null());
    EXPECT_EQ(d["gpus"], json::array());
    EXPECT_EQ(d["socket"], ctx.runtime_dir + "/amdqpd.sock");
    EXPECT_TRUE(contains(status_text(), "\namdqpd: not installed\n")) << out.str();
}

TEST_F(DaemonStatusTest, NoFileButInstalled) {
    write_file("bin/amdqpd", "#!/bin/sh\n");
    const std::string bin = (root_ / "bin").string();
    ::chmod((bin + "/amdqpd").c_str(), 0755);
    ctx.daemon_search_path = "/nonexistent:" + bin;
    json d = status_json();
    EXPECT_EQ(d["state"], "not running");
    EXPECT_EQ(d["installed"], true);
    EXPECT_EQ(d["path"], bin + "/amdqpd");
    EXPECT_TRUE(contains(status_text(), "amdqpd: not running (installed at " + bin + "/amdqpd)\n"))
        << out.str();
}

TEST_F(DaemonStatusTest, RunningDaemonJson) {
    add_process(4242, "amdqpd", "/system.slice/amdqpd.service");
    write_status(kStatus);
    json d = status_json();
    EXPECT_EQ(d["state"], "running");
    EXPECT_EQ(d["installed"], true);
    EXPECT_EQ(d["pid"], 4242);
    EXPECT_EQ(d["order"], "before-doorbell");
    EXPECT_EQ(d["device_open"], true);
    EXPECT_EQ(d["processes"], 3);
    EXPECT_TRUE(d["error"].is_null());
    ASSERT_EQ(d["gpus"].size(), 2u);
    // A daemon without confinement (kStatus) reports none.
    const json none = {
        {"confine_level", 0}, {"confine_share", 0.0}, {"auto_demand", json::object()}};
    json gpu1 = {{"gpu", 1}, {"suspend_level", 7}, {"queues", 2}, {"active_queues", 1}};
    json gpu2 = {{"gpu", 2}, {"suspend_level", 0}, {"queues", 1}, {"active_queues", 1}};
    gpu1.update(none);
    gpu2.update(none);
    EXPECT_EQ(d["gpus"][0], gpu1);
    EXPECT_EQ(d["gpus"][1], gpu2);
    EXPECT_EQ(d["groups"]["tp0"],
              json({{"priority", 2}, {"gpus", {1, 2}}, {"pids", {5151, 5152}}}));
    EXPECT_EQ(d["stats"]["suspend_calls"], 9);
    EXPECT_EQ(d["stats"]["starvation_hits"], 2);
    EXPECT_EQ(d["stats"].size(), 6u);
}

TEST_F(DaemonStatusTest, RunningDaemonText) {
    add_process(4242, "amdqpd", "/system.slice/amdqpd.service");
    write_status(kStatus);
    const std::string text = status_text();
    const std::string expected =
        "amdqpd: running (pid 4242)\n"
        "  order: before-doorbell\n"
        "  processes: 3 tagged, /dev/amdqp open\n"
        "  stats: coop_resumes 1, coop_suspends 1, relapses 0, resume_calls 8, "
        "starvation_hits 2, suspend_calls 9\n"
        "  GPU  SUSPEND-BELOW  ACTIVE-QUEUES\n"
        "  1    7 (normal)     1 of 2\n"
        "  2    -              1 of 1\n"
        "  GROUP  PRIORITY  GPUS  PIDS\n"
        "  tp0    2 (low)   1,2   5151,5152\n";
    EXPECT_TRUE(text.ends_with(expected)) << text;
}

TEST_F(DaemonStatusTest, RunningDaemonWithoutGpusOrGroups) {
    add_process(4242, "amdqpd", "/");
    json j = json::parse(kStatus);
    j["gpus"] = json::array();
    j["groups"] = json::object();
    j["tagged"] = json::array();
    j["device_open"] = false;
    write_status(j.dump());
    const std::string text = status_text();
    EXPECT_TRUE(contains(text, "  processes: 3 tagged, no /dev/amdqp (cooperative only)\n"))
        << text;
    EXPECT_TRUE(contains(text, "  GPUs: none\n  groups: none\n")) << text;
}

TEST_F(DaemonStatusTest, AProcessNamedAmdqpdIsNotADaemon) {
    // Issue 25 finding 9: amdqpctl believed any status file whose pid was a
    // process named amdqpd. Only the socket in the trusted folder answers
    // now: a look-alike process with a planted file says nothing.
    add_process(4242, "amdqpd", "/");
    write_file("act/amdqpd.status.json", kStatus);
    json d = status_json();
    EXPECT_EQ(d["state"], "not installed");
    EXPECT_TRUE(d["pid"].is_null());
}

TEST_F(DaemonStatusTest, AFolderOthersCanWriteToIsNotAsked) {
    write_status(kStatus);
    ASSERT_EQ(::chmod(ctx.runtime_dir.c_str(), 0777), 0);
    json d = status_json();
    EXPECT_EQ(d["state"], "unknown");
    EXPECT_TRUE(contains(d["error"].get<std::string>(), "writable by others")) << d;
    EXPECT_TRUE(d["order"].is_null());
}

TEST_F(DaemonStatusTest, UnreadableFileNeverFailsTheCommand) {
    struct Case {
        std::string text;
        std::string why;
    };
    const std::vector<Case> cases = {
        {"", "not JSON: "},
        {"{\"pid\": 4242,", "not JSON: "},
        {"[1, 2]", "the file: expected an object, got [1,2]"},
        {"{}", "pid: missing"},
        {R"({"pid": "4242"})", "pid: expected a non-negative integer, got \"4242\""},
        {R"({"pid": -1})", "pid: expected a non-negative integer, got -1"},
        {R"({"pid": 0})", "pid: 0 is not a process"},
        {R"({"pid": 99999999999})", "pid: 99999999999 is out of range"},
    };
    for (const auto& c : cases) {
        write_status(c.text);
        json d = status_json();
        EXPECT_EQ(d["state"], "unknown") << c.text;
        EXPECT_TRUE(d["pid"].is_null()) << c.text;
        EXPECT_TRUE(d["error"].get<std::string>().starts_with(c.why)) << c.text << ": " << d;
        const std::string text = status_text();
        EXPECT_TRUE(contains(text, "amdqpd: status unreadable: " + c.why)) << text;
        EXPECT_TRUE(contains(text, "(" + ctx.runtime_dir + "/amdqpd.sock)\n")) << text;
    }
}

// GPU 1 confines below high to a quarter of its CUs, by a demand held for
// high (cu_demand "auto"); GPU 2 holds no demand yet.
json confining() {
    json j = json::parse(kStatus);
    j["gpus"] = {{{"gpu", 1},
                  {"suspend_level", 0},
                  {"confine_level", 12},
                  {"confine_share", 0.25},
                  {"auto_demand", {{"12", 0.75}}}},
                 {{"gpu", 2},
                  {"suspend_level", 0},
                  {"confine_level", 0},
                  {"confine_share", 0.0},
                  {"auto_demand", {{"12", 0.0}}}}};
    return j;
}

TEST_F(DaemonStatusTest, ConfinementAndHeldDemand) {
    add_process(4242, "amdqpd", "/system.slice/amdqpd.service");
    write_status(confining().dump());
    json d = status_json();
    ASSERT_EQ(d["gpus"].size(), 2u);
    EXPECT_EQ(d["gpus"][0]["confine_level"], 12);
    EXPECT_DOUBLE_EQ(d["gpus"][0]["confine_share"].get<double>(), 0.25);
    EXPECT_EQ(d["gpus"][0]["auto_demand"], json({{"12", 0.75}}));
    EXPECT_EQ(d["gpus"][1]["confine_level"], 0);
    const std::string text = status_text();
    const std::string table =
        "  GPU  SUSPEND-BELOW  ACTIVE-QUEUES  CONFINE-BELOW          AUTO-DEMAND\n"
        "  1    -              1 of 2         12 (high), keeps 25 %  12 (high) 75 %\n"
        "  2    -              1 of 1         -                      12 (high) 0 %\n";
    EXPECT_TRUE(contains(text, table)) << text;
}

TEST_F(DaemonStatusTest, MalformedReportOfARunningDaemon) {
    add_process(4242, "amdqpd", "/");
    struct Case {
        std::string text;
        std::string why;
    };
    const std::vector<Case> cases = {
        {with("order", nullptr), "order: missing"},
        {with("order", 3), "order: expected a policy order name, got 3"},
        {with("device_open", "yes"), "device_open: expected true or false"},
        {with("stats", {{"suspend_calls", -2}}), "stats.suspend_calls: expected a non-negative"},
        {with("gpus", {{{"gpu", 1}}}), "gpus[0].suspend_level: missing"},
        {with("gpus", {1}), "gpus[0]: expected an object, got 1"},
        {with("gpus", {{{"gpu", 1}, {"suspend_level", 0}, {"confine_level", 12}}}),
         "gpus[0].confine_share: missing"},
        {with("gpus",
              {{{"gpu", 1}, {"suspend_level", 0}, {"confine_level", 12}, {"confine_share", 1.5}}}),
         "gpus[0].confine_share: expected a share in [0, 1], got 1.5"},
        {with("gpus", {{{"gpu", 1}, {"suspend_level", 0}, {"auto_demand", {{"high", 0.5}}}}}),
         "gpus[0].auto_demand.high: the key is not a priority level 0-15"},
        {with("gpus", {{{"gpu", 1}, {"suspend_level", 0}, {"auto_demand", {{"12", "half"}}}}}),
         "gpus[0].auto_demand.12: expected a share in [0, 1]"},
        {with("groups", {{"tp0", {{"priority", 2}, {"gpus", "1,2"}, {"pids", json::array()}}}}),
         "groups.tp0.gpus: expected an array"},
        {with("tagged", {{{"queues", {{{"gpu", 1}, {"active", 1}}}}}}),
         "tagged[0].queues[0].active: expected true or false, got 1"},
    };
    for (const auto& c : cases) {
        write_status(c.text);
        json d = status_json();
        EXPECT_EQ(d["state"], "running") << c.text;
        EXPECT_EQ(d["pid"], 4242) << c.text;
        EXPECT_TRUE(d["order"].is_null()) << c.text;
        EXPECT_TRUE(d["error"].get<std::string>().starts_with(c.why)) << c.text << ": " << d;
        const std::string text = status_text();
        EXPECT_TRUE(contains(text, "amdqpd: running (pid 4242)\n  status unreadable: " + c.why))
            << text;
        EXPECT_FALSE(contains(text, "  order: ")) << text;
    }
}

TEST_F(DaemonStatusTest, AFifoInPlaceOfTheSocketDoesNotHang) {
    namespace fs = std::filesystem;
    fs::create_directories(ctx.runtime_dir);
    const fs::path file = fs::path(ctx.runtime_dir) / "amdqpd.sock";
    ASSERT_EQ(::mkfifo(file.c_str(), 0600), 0);
    EXPECT_EQ(status_json()["state"], "not installed");
}

TEST_F(DaemonStatusTest, RuntimeDirFromTheEnvironment) {
    add_process(4242, "amdqpd", "/");
    write_status(kStatus);
    const std::string dir = ctx.runtime_dir;
    ctx.runtime_dir.clear();
    ::setenv("AMDQP_RUNTIME_DIR", dir.c_str(), 1);
    json d = status_json();
    ::unsetenv("AMDQP_RUNTIME_DIR");
    EXPECT_EQ(d["state"], "running");
    EXPECT_EQ(d["socket"], dir + "/amdqpd.sock");
}

TEST_F(DaemonStatusTest, ReadDirectly) {
    DaemonStatus st = read_daemon_status(ctx.runtime_dir);
    EXPECT_EQ(st.liveness, DaemonStatus::Liveness::no_file);
    EXPECT_FALSE(st.pid);

    add_process(4242, "amdqpd", "/");
    st = parse_daemon_status("f", kStatus);
    EXPECT_EQ(st.liveness, DaemonStatus::Liveness::running);
    EXPECT_TRUE(st.reported());
    ASSERT_EQ(st.gpus.size(), 2u);
    EXPECT_EQ(st.gpus[0].gpu, 1u);
    EXPECT_EQ(st.gpus[0].suspend_level, 7u);
    EXPECT_EQ(st.groups.at("tp0").pids, (std::vector<std::uint32_t>{5151, 5152}));
}

}  // namespace
}  // namespace amdqpctl::testing
