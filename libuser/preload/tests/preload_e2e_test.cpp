// SPDX-License-Identifier: MIT
//
// The tagging layer in whole programs: an unmodified HSA program
// (tagging_app) on the hsa-sim stand-in's thread backend, started with the
// layer the way amdqpctl run does (LD_PRELOAD and HSA_TOOLS_LIB), watched
// through the activity page from this process.
#include <gtest/gtest.h>

#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <map>
#include <optional>
#include <sstream>
#include <string>
#include <vector>

#include <amdqp/activity.hpp>

#include "../../lib/src/activity_proc.hpp"
#include "../../lib/tests/activity_test_util.hpp"

extern char** environ;

namespace {

using amdqp::activity::Page;
using namespace std::chrono_literals;

// A started program with its stdin, stdout and stderr on pipes.
class Child {
  public:
    Child(const std::vector<std::string>& argv, const std::map<std::string, std::string>& env) {
        int in[2], out[2], err[2];
        if (pipe2(in, O_CLOEXEC) || pipe2(out, O_CLOEXEC) || pipe2(err, O_CLOEXEC))
            return;
        std::vector<std::string> env_strings;
        for (char** e = environ; *e; e++) {
            std::string s = *e;
            std::string name = s.substr(0, s.find('='));
            if (!env.count(name) && name != "LD_PRELOAD" && name != "HSA_TOOLS_LIB" &&
                name.rfind("AMDQP_", 0) != 0)
                env_strings.push_back(s);
        }
        for (auto& [k, v] : env)
            if (!v.empty())
                env_strings.push_back(k + "=" + v);
        std::vector<char*> cargv, cenv;
        for (auto& a : argv)
            cargv.push_back(const_cast<char*>(a.c_str()));
        cargv.push_back(nullptr);
        for (auto& e : env_strings)
            cenv.push_back(const_cast<char*>(e.c_str()));
        cenv.push_back(nullptr);
        pid_ = fork();
        if (pid_ == 0) {
            dup2(in[0], 0);
            dup2(out[1], 1);
            dup2(err[1], 2);
            execve(cargv[0], cargv.data(), cenv.data());
            _exit(126);
        }
        ::close(in[0]);
        ::close(out[1]);
        ::close(err[1]);
        in_ = in[1];
        out_ = out[0];
        err_ = err[0];
    }
    ~Child() {
        if (pid_ > 0 && status_ < 0) {
            kill(pid_, SIGKILL);
            wait();
        }
        for (int fd : {in_, out_, err_})
            if (fd >= 0)
                ::close(fd);
    }

    pid_t pid() const { return pid_; }

    // The next line of stdout (without '\n'); nullopt at EOF or timeout.
    std::optional<std::string> line(std::chrono::milliseconds timeout = 20s) {
        auto deadline = std::chrono::steady_clock::now() + timeout;
        for (;;) {
            if (auto nl = buf_.find('\n'); nl != std::string::npos) {
                std::string l = buf_.substr(0, nl);
                buf_.erase(0, nl + 1);
                return l;
            }
            auto left = std::chrono::duration_cast<std::chrono::milliseconds>(
                deadline - std::chrono::steady_clock::now());
            if (left.count() <= 0)
                return std::nullopt;
            struct pollfd p = {out_, POLLIN, 0};
            if (poll(&p, 1, static_cast<int>(left.count())) <= 0)
                return std::nullopt;
            char b[512];
            ssize_t n = ::read(out_, b, sizeof(b));
            if (n <= 0)
                return std::nullopt;
            buf_.append(b, static_cast<std::size_t>(n));
        }
    }
    // Reads stdout lines until one starts with @prefix.
    std::optional<std::string> line_starting(const std::string& prefix) {
        while (auto l = line()) {
            if (l->rfind(prefix, 0) == 0)
                return l;
            seen_.push_back(*l);
        }
        return std::nullopt;
    }
    const std::vector<std::string>& seen() const { return seen_; }

    void send(const std::string& s) { (void)!::write(in_, s.data(), s.size()); }

    // Exit status (128 + signal if killed).
    int wait() {
        if (status_ >= 0)
            return status_;
        int st = 0;
        waitpid(pid_, &st, 0);
        status_ = WIFEXITED(st) ? WEXITSTATUS(st) : 128 + WTERMSIG(st);
        return status_;
    }
    std::string stderr_text() {
        wait();
        std::string s;
        char b[512];
        ssize_t n;
        while ((n = ::read(err_, b, sizeof(b))) > 0)
            s.append(b, static_cast<std::size_t>(n));
        return s;
    }

  private:
    pid_t pid_ = -1;
    int in_ = -1, out_ = -1, err_ = -1;
    int status_ = -1;
    std::string buf_;
    std::vector<std::string> seen_;
};

int lines(const std::string& s) {
    int n = 0;
    for (char c : s)
        n += c == '\n';
    return n;
}

// Pages process @pid holds (memfds: they go with it, nothing is left).
std::size_t pages_of(pid_t pid) {
    return amdqp::detail::page_fds(pid).size();
}

class E2e : public ::testing::Test {
  protected:
    // The environment amdqpctl run sets up, on a host without amdqp.ko.
    std::map<std::string, std::string> tagged_env(const std::string& priority = "normal") {
        return {{"HSA_SIM_BACKEND", "thread"},          {"AMDQP_RUNTIME_DIR", pages.path()},
                {"AMDQP_DEVICE", "/nonexistent/amdqp"}, {"AMDQP_PRIORITY", priority},
                {"LD_PRELOAD", AMDQP_TEST_PRELOAD_LIB}, {"HSA_TOOLS_LIB", AMDQP_TEST_PRELOAD_LIB}};
    }
    std::unique_ptr<Child> start(std::vector<std::string> args,
                                 const std::map<std::string, std::string>& env) {
        args.insert(args.begin(), AMDQP_TEST_TAGGING_APP);
        return std::make_unique<Child>(args, env);
    }
    amdqp::activity::Snapshot page_of(pid_t pid) {
        return Page::open(pid, Page::Access::read).snapshot();
    }
    static std::vector<std::uint64_t> rings(const Child& c) {
        std::vector<std::uint64_t> out;
        for (const auto& l : c.seen())
            if (l.rfind("queue ", 0) == 0)
                out.push_back(std::stoull(l.substr(6), nullptr, 16));
        return out;
    }

    amdqp_test::TempDir pages;
};

TEST_F(E2e, QueuesAppearWithTheirPriorityAndDoorbellsAreCounted) {
    auto app = start({"--queues", "3", "--packets", "5", "--workgroups", "6", "--hold"},
                     tagged_env("high"));
    auto ready = app->line_starting("ready");
    ASSERT_TRUE(ready) << app->stderr_text();
    auto snap = page_of(app->pid());
    EXPECT_TRUE(snap.header.flags & AMDQP_ACT_F_PRELOAD);
    EXPECT_FALSE(snap.coop_capable());  // no ids without a creation ioctl
    EXPECT_EQ(snap.header.priority, 12u);
    ASSERT_EQ(snap.slots.size(), 3u);
    auto want = rings(*app);
    ASSERT_EQ(want.size(), 3u);
    for (const auto& s : snap.slots) {
        EXPECT_EQ(s.priority, 12u);
        EXPECT_EQ(s.mechanism, AMDQP_ACT_MECH_NONE);
        EXPECT_EQ(s.doorbells, 0u);
        EXPECT_EQ(s.demand_wgs, 0u);
        EXPECT_NE(std::find(want.begin(), want.end(), s.ring_va), want.end());
    }

    app->send("go\n");
    ASSERT_TRUE(app->line_starting("fed"));
    Page page = Page::open(app->pid(), Page::Access::read);
    snap = page.snapshot();
    ASSERT_EQ(snap.slots.size(), 3u);
    for (const auto& s : snap.slots) {
        EXPECT_EQ(s.doorbells, 5u);
        EXPECT_EQ(s.write_index, 5u);  // packets 0..4 announced
        EXPECT_EQ(s.demand_wgs, 6u);   // read from the ring by the doorbell hook
        EXPECT_GT(s.last_doorbell_ns, 0u);
        EXPECT_EQ(page.read_index(s), 5u);  // and all consumed: idle
    }

    app->send("go\n");
    EXPECT_EQ(app->wait(), 0);
    std::string err = app->stderr_text();
    EXPECT_EQ(lines(err), 1) << err;
    EXPECT_NE(err.find("amdqp: /nonexistent/amdqp not found"), std::string::npos) << err;
    EXPECT_EQ(pages_of(app->pid()), 0u);  // the page went with the process
}

TEST_F(E2e, QuietAndTheExitStatusPassesThrough) {
    auto env = tagged_env("low");
    env["AMDQP_QUIET"] = "1";
    auto app = start({"--exit", "7"}, env);
    EXPECT_EQ(app->wait(), 7);
    EXPECT_EQ(app->stderr_text(), "");
}

TEST_F(E2e, WithoutTheLayerTheProgramBehavesTheSame) {
    auto app = start({"--exit", "7"},
                     {{"HSA_SIM_BACKEND", "thread"}, {"AMDQP_RUNTIME_DIR", pages.path()}});
    EXPECT_TRUE(app->line_starting("done"));
    EXPECT_EQ(app->wait(), 7);
    EXPECT_EQ(app->stderr_text(), "");
}

TEST_F(E2e, CooperativeRequestTakesTheQueuesOffAndBack) {
    amdqp_test::TempDir logs;
    std::string log = logs.path() + "/sim.log";
    auto env = tagged_env("low");
    env["LD_PRELOAD"] = std::string(AMDQP_TEST_PRELOAD_LIB) + ":" + AMDQP_TEST_FAKE_SIM_LIB;
    env["AMDQP_FAKE_SIM_LOG"] = log;
    auto app = start({"--queues", "2", "--announce-ioctl", "--hold"}, env);
    ASSERT_TRUE(app->line_starting("ready")) << app->stderr_text();

    Page page = Page::open(app->pid(), Page::Access::control);
    auto snap = page.snapshot();
    EXPECT_TRUE(snap.coop_capable());
    ASSERT_EQ(snap.slots.size(), 2u);
    for (const auto& s : snap.slots) {
        EXPECT_EQ(s.mechanism, AMDQP_ACT_MECH_COOP);
        EXPECT_EQ(s.gpu_id, 1u);
        ASSERT_TRUE(s.queue_id);
        EXPECT_GE(*s.queue_id, 100u);
        EXPECT_EQ(s.priority, 2u);
    }

    auto r = page.request_coop(true, 5s);
    EXPECT_TRUE(r.acked);
    EXPECT_EQ(r.state, AMDQP_ACT_COOP_SUSPENDED);
    EXPECT_EQ(r.updates, 2u);
    r = page.request_coop(false, 5s);
    EXPECT_TRUE(r.acked);
    EXPECT_EQ(r.state, AMDQP_ACT_COOP_RUNNING);
    EXPECT_EQ(r.updates, 4u);

    std::ifstream f(log);
    std::vector<std::string> updates;
    for (std::string l; std::getline(f, l);)
        updates.push_back(l);
    ASSERT_EQ(updates.size(), 4u);
    EXPECT_EQ(updates[0].substr(0, 9), "update 1 ");
    EXPECT_NE(updates[0].find(" 0 7"), std::string::npos) << updates[0];
    EXPECT_NE(updates[1].find(" 0 7"), std::string::npos) << updates[1];
    EXPECT_NE(updates[2].find(" 100 7"), std::string::npos) << updates[2];
    EXPECT_NE(updates[3].find(" 100 7"), std::string::npos) << updates[3];

    app->send("go\n");
    app->send("go\n");
    EXPECT_EQ(app->wait(), 0);
    std::string err = app->stderr_text();
    // Announced after hsa_queue_create returned (a real runtime's ioctl
    // comes inside it): the line was said before the ids were known.
    EXPECT_EQ(lines(err), 1) << err;
    EXPECT_NE(err.find("not found"), std::string::npos) << err;
}

TEST_F(E2e, CooperativeRequestOnKfdQueuesResendsTheirRing) {
    // What ROCr's libhsakmt does on stock amdgpu, answered by the fake.
    amdqp_test::TempDir logs;
    std::string log = logs.path() + "/kfd.log";
    auto env = tagged_env("low");
    env["LD_PRELOAD"] = std::string(AMDQP_TEST_PRELOAD_LIB) + ":" + AMDQP_TEST_FAKE_SIM_LIB;
    env["AMDQP_FAKE_SIM_LOG"] = log;
    env["AMDQP_QUIET"] = "1";
    auto app = start({"--announce-kfd", "--hold"}, env);
    ASSERT_TRUE(app->line_starting("ready")) << app->stderr_text();
    std::uint64_t ring = rings(*app).at(0);
    Page page = Page::open(app->pid(), Page::Access::control);
    auto snap = page.snapshot();
    ASSERT_EQ(snap.slots.size(), 1u);
    EXPECT_EQ(snap.slots[0].mechanism, AMDQP_ACT_MECH_COOP);
    EXPECT_EQ(snap.slots[0].gpu_id, 0x1234u);
    EXPECT_TRUE(page.request_coop(true, 5s).acked);
    EXPECT_TRUE(page.request_coop(false, 5s).acked);
    std::ifstream f(log);
    std::vector<std::string> updates;
    for (std::string l; std::getline(f, l);)
        updates.push_back(l);
    ASSERT_EQ(updates.size(), 2u);
    // KFD takes the ring address, size and priority from every update:
    // the ones the queue was created with go back unchanged.
    char want[128];
    std::snprintf(want, sizeof(want), "kfd-update %u 0 7 %#llx %u", *snap.slots[0].queue_id,
                  static_cast<unsigned long long>(ring), 256u * 64u);
    EXPECT_EQ(updates[0], want);
    std::snprintf(want, sizeof(want), "kfd-update %u 100 7 %#llx %u", *snap.slots[0].queue_id,
                  static_cast<unsigned long long>(ring), 256u * 64u);
    EXPECT_EQ(updates[1], want);
    app->send("go\n");
    app->send("go\n");
    EXPECT_EQ(app->wait(), 0);
}

TEST_F(E2e, ForkAndExecChildrenLeaveTheParentsPageAlone) {
    for (const std::vector<std::string>& how :
         {std::vector<std::string>{"--fork"}, std::vector<std::string>{"--fork-exec", "exit 3"}}) {
        std::vector<std::string> args = {"--hold", "--packets", "2"};
        args.insert(args.end(), how.begin(), how.end());
        auto app = start(args, tagged_env());
        ASSERT_TRUE(app->line_starting("ready"));
        app->send("go\n");
        auto child = app->line_starting("child");
        ASSERT_TRUE(child);
        EXPECT_EQ(*child, how.size() == 1 ? "child 5" : "child 3");
        ASSERT_TRUE(app->line_starting("fed"));
        auto snap = page_of(app->pid());
        ASSERT_EQ(snap.slots.size(), 1u);
        EXPECT_EQ(snap.slots[0].doorbells, 2u);
        EXPECT_EQ(pages_of(app->pid()), 1u);  // its own, not the child's
        app->send("go\n");
        EXPECT_EQ(app->wait(), 0);
        EXPECT_EQ(lines(app->stderr_text()), 1);
    }
}

TEST_F(E2e, ManyThreadsCreatingAndFeedingQueues) {
    auto app =
        start({"--queues", "8", "--threads", "8", "--packets", "50", "--hold"}, tagged_env());
    ASSERT_TRUE(app->line_starting("ready")) << app->stderr_text();
    app->send("go\n");
    ASSERT_TRUE(app->line_starting("fed"));
    auto snap = page_of(app->pid());
    ASSERT_EQ(snap.slots.size(), 8u);
    for (const auto& s : snap.slots)
        EXPECT_EQ(s.doorbells, 50u);
    app->send("go\n");
    EXPECT_EQ(app->wait(), 0);
}

TEST_F(E2e, MoreQueuesThanTheOldPageHeldAreAllTracked) {
    // Issue 28: a 4 KiB page held 56 queues; the 57th on were not seen.
    auto app = start({"--queues", "63", "--packets", "1", "--hold"}, tagged_env());
    ASSERT_TRUE(app->line_starting("ready")) << app->stderr_text();
    app->send("go\n");
    ASSERT_TRUE(app->line_starting("fed"));
    auto snap = page_of(app->pid());
    EXPECT_EQ(snap.slots.size(), 63u);
    EXPECT_EQ(snap.header.untracked, 0u);
    for (const auto& s : snap.slots)
        EXPECT_EQ(s.doorbells, 1u);
    app->send("go\n");
    EXPECT_EQ(app->wait(), 0);
}

TEST_F(E2e, LoadedTwiceFromTwoPathsTagsOnce) {
    amdqp_test::TempDir libs;
    std::string copy = libs.path() + "/libamdqp-preload.so";
    std::filesystem::copy_file(AMDQP_TEST_PRELOAD_LIB, copy);
    // LD_PRELOAD's copy sees the creation ioctl, HSA_TOOLS_LIB's gets the
    // table: one registry must get both, or each queue shows up twice.
    auto env = tagged_env();
    env["LD_PRELOAD"] = std::string(AMDQP_TEST_PRELOAD_LIB) + ":" + AMDQP_TEST_FAKE_SIM_LIB;
    env["HSA_TOOLS_LIB"] = copy;
    auto app = start({"--queues", "2", "--packets", "3", "--announce-ioctl", "--hold"}, env);
    ASSERT_TRUE(app->line_starting("ready")) << app->stderr_text();
    app->send("go\n");
    ASSERT_TRUE(app->line_starting("fed"));
    EXPECT_EQ(pages_of(app->pid()), 1u);
    auto snap = page_of(app->pid());
    ASSERT_EQ(snap.slots.size(), 2u);
    for (const auto& s : snap.slots) {
        EXPECT_EQ(s.doorbells, 3u);  // counted once, not once per copy
        EXPECT_EQ(s.mechanism, AMDQP_ACT_MECH_COOP);
    }
    app->send("go\n");
    EXPECT_EQ(app->wait(), 0);
    EXPECT_EQ(lines(app->stderr_text()), 1);
}

TEST_F(E2e, TwoToolsLibraryCopiesInstallOnce) {
    amdqp_test::TempDir libs;
    std::string a = libs.path() + "/a.so", b = libs.path() + "/b.so";
    std::filesystem::copy_file(AMDQP_TEST_PRELOAD_LIB, a);
    std::filesystem::copy_file(AMDQP_TEST_PRELOAD_LIB, b);
    auto env = tagged_env();
    env.erase("LD_PRELOAD");
    env["HSA_TOOLS_LIB"] = a + " " + b;  // both get OnLoad
    auto app = start({"--queues", "2", "--packets", "3", "--hold"}, env);
    ASSERT_TRUE(app->line_starting("ready")) << app->stderr_text();
    app->send("go\n");
    ASSERT_TRUE(app->line_starting("fed"));
    auto snap = page_of(app->pid());
    ASSERT_EQ(snap.slots.size(), 2u);
    for (const auto& s : snap.slots)
        EXPECT_EQ(s.doorbells, 3u);
    app->send("go\n");
    EXPECT_EQ(app->wait(), 0);
    EXPECT_EQ(lines(app->stderr_text()), 1);
}

TEST_F(E2e, ToolsLibraryAloneTagsAndCounts) {
    auto env = tagged_env("low");
    env.erase("LD_PRELOAD");
    auto app = start({"--packets", "4", "--hold"}, env);
    ASSERT_TRUE(app->line_starting("ready")) << app->stderr_text();
    app->send("go\n");
    ASSERT_TRUE(app->line_starting("fed"));
    auto snap = page_of(app->pid());
    ASSERT_EQ(snap.slots.size(), 1u);
    EXPECT_EQ(snap.slots[0].priority, 2u);
    EXPECT_EQ(snap.slots[0].doorbells, 4u);
    app->send("go\n");
    EXPECT_EQ(app->wait(), 0);
}

TEST_F(E2e, StreamPriorityTagsByTheHsaQueuePriority) {
    for (auto [hsa_priority, want] :
         {std::pair<std::string, unsigned>{"high", 12u}, {"low", 2u}, {"normal", 7u}}) {
        auto env = tagged_env("normal");
        env["AMDQP_STREAM_PRIORITY"] = "1";
        auto app = start({"--queues", "2", "--hsa-priority", hsa_priority, "--hold"}, env);
        ASSERT_TRUE(app->line_starting("ready")) << app->stderr_text();
        auto snap = page_of(app->pid());
        ASSERT_EQ(snap.slots.size(), 2u);
        for (const auto& s : snap.slots)
            EXPECT_EQ(s.priority, want) << hsa_priority;
        app->send("go\n");
        app->send("go\n");
        EXPECT_EQ(app->wait(), 0);
    }
    // Without AMDQP_STREAM_PRIORITY the process's level wins.
    auto app = start({"--hsa-priority", "high", "--hold"}, tagged_env("low"));
    ASSERT_TRUE(app->line_starting("ready"));
    EXPECT_EQ(page_of(app->pid()).slots.at(0).priority, 2u);
    app->send("go\n");
    app->send("go\n");
    EXPECT_EQ(app->wait(), 0);
}

TEST_F(E2e, PreloadAloneLearnsQueuesFromTheCreationIoctl) {
    auto env = tagged_env("low");
    env.erase("HSA_TOOLS_LIB");
    env["LD_PRELOAD"] = std::string(AMDQP_TEST_PRELOAD_LIB) + ":" + AMDQP_TEST_FAKE_SIM_LIB;
    auto app = start({"--announce-ioctl", "--hold"}, env);
    ASSERT_TRUE(app->line_starting("ready")) << app->stderr_text();
    auto snap = page_of(app->pid());
    ASSERT_EQ(snap.slots.size(), 1u);
    EXPECT_EQ(snap.slots[0].mechanism, AMDQP_ACT_MECH_COOP);
    EXPECT_EQ(snap.slots[0].ring_va, rings(*app).at(0));
    app->send("go\n");
    app->send("go\n");
    EXPECT_EQ(app->wait(), 0);
}

}  // namespace
