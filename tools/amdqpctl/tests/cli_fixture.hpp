// SPDX-License-Identifier: MIT
//
// amdqpctl's verbs run in-process against the in-memory /dev/amdqp
// (libuser/testing/fake_amdqp), a fake /proc and /sys, a private activity
// page folder, and a waiter the test scripts.
#ifndef AMDQPCTL_TESTS_CLI_FIXTURE_HPP
#define AMDQPCTL_TESTS_CLI_FIXTURE_HPP

#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <functional>
#include <memory>
#include <sstream>
#include <string>
#include <vector>

#include "cli.hpp"
#include "context.hpp"
#include "fake_amdqp.hpp"

namespace amdqpctl::testing {

class ScriptedWaiter : public Waiter {
  public:
    // What each wait does; default: a stop request at once.
    std::function<WaitResult(int fd, int timeout_ms)> on_wait;
    bool armed = false;
    int waits = 0;

    void arm() override { armed = true; }
    WaitResult wait(int fd, int timeout_ms) override {
        waits++;
        return on_wait ? on_wait(fd, timeout_ms) : WaitResult::stop;
    }
};

class CliTest : public ::testing::Test {
  protected:
    void SetUp() override {
        namespace fs = std::filesystem;
        root_ = fs::temp_directory_path() /
                ("amdqpctl-test." + std::to_string(::getpid()) + "." +
                 ::testing::UnitTest::GetInstance()->current_test_info()->name());
        fs::remove_all(root_);
        fs::create_directories(root_ / "proc");
        fs::create_directories(root_ / "sys");
        fs::create_directories(root_ / "act");
        ctx.sys = fake;
        ctx.device_path = fake->path;
        ctx.proc_root = (root_ / "proc").string();
        ctx.sys_root = (root_ / "sys").string();
        ctx.runtime_dir = (root_ / "act").string();
        // Tests beside this one hold pages too.
        ctx.page_filter = [](pid_t pid) { return pid == ::getpid(); };
    }
    void TearDown() override { std::filesystem::remove_all(root_); }

    int run(std::vector<std::string> args) {
        args.insert(args.begin(), "amdqpctl");
        out.str("");
        err.str("");
        return run_cli(args, ctx, PreloadSearch{}, "test");
    }

    // A process as /proc shows it.
    void add_process(std::uint32_t pid, const std::string& comm, const std::string& cgroup) {
        auto dir = root_ / "proc" / std::to_string(pid);
        std::filesystem::create_directories(dir);
        std::ofstream(dir / "comm") << comm << '\n';
        std::ofstream(dir / "cgroup") << "0::" << cgroup << '\n';
    }

    void write_file(const std::filesystem::path& rel, const std::string& text) {
        auto p = root_ / rel;
        std::filesystem::create_directories(p.parent_path());
        std::ofstream(p) << text;
    }

    std::shared_ptr<amdqp::testing::FakeAmdqp> fake = std::make_shared<amdqp::testing::FakeAmdqp>();
    std::ostringstream out;
    std::ostringstream err;
    ScriptedWaiter waiter;
    Context ctx{out, err, waiter};
    std::filesystem::path root_;
};

}  // namespace amdqpctl::testing

#endif  // AMDQPCTL_TESTS_CLI_FIXTURE_HPP
