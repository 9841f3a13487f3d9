// SPDX-License-Identifier: MIT
//
// The wake/hold channel between a process and its controller
// (activity.h ctl_flags, busy_seq/busy_ack; activity.hpp WakeChannel):
// each case runs in a child process with its own page directory, as a
// tagged process and a controller would.
#include <amdqp/hint.h>
#include <gtest/gtest.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <functional>
#include <thread>

#include <amdqp/activity.hpp>

#include "activity_test_util.hpp"

namespace {

using amdqp::activity::Page;
using amdqp::activity::WakeChannel;
using namespace std::chrono_literals;

// Runs @body in a child whose page directory is @dir; its exit status.
int in_child(const std::string& dir, const std::function<int()>& body) {
    pid_t pid = fork();
    if (pid == 0) {
        ::setenv("AMDQP_RUNTIME_DIR", dir.c_str(), 1);
        int rc = 99;
        try {
            rc = body();
        } catch (...) {
            rc = 98;
        }
        _exit(rc);
    }
    int status;
    if (waitpid(pid, &status, 0) != pid || !WIFEXITED(status))
        return -1;
    return WEXITSTATUS(status);
}

// What each case starts from, inside its child: the process's page exists
// (an idle hint pair) and a controller asked for @flags.
struct Controlled {
    WakeChannel wake;
    Page page;
};
Controlled controlled(const std::string& dir, std::uint32_t flags, std::uint32_t hold_us,
                      std::chrono::milliseconds alive = std::chrono::milliseconds(1000)) {
    WakeChannel wake = WakeChannel::create(dir);
    amdqp_busy_begin();
    amdqp_busy_end();
    Page page = Page::open(getpid(), Page::Access::control, dir);
    page.set_control(flags, hold_us, alive);
    return {std::move(wake), std::move(page)};
}

TEST(BusyAnnounce, WithoutAControllerNothingIsAnnounced) {
    amdqp_test::TempDir dir;
    EXPECT_EQ(in_child(dir.path(),
                       [&] {
                           if (amdqp_busy_begin() != AMDQP_OK)
                               return 1;
                           auto s = Page::open(getpid(), Page::Access::read, dir.path()).snapshot();
                           return s.header.busy_seq == 0 && s.header.holds == 0 ? 0 : 2;
                       }),
              0);
}

TEST(BusyAnnounce, FirstHintWakesTheControllerOnceAndWaitsForItsAck) {
    amdqp_test::TempDir dir;
    EXPECT_EQ(in_child(dir.path(),
                       [&] {
                           auto [wake, page] = controlled(
                               dir.path(), AMDQP_ACT_CTL_WAKE | AMDQP_ACT_CTL_HOLD, 5'000'000);
                           const std::uint32_t seen = wake.value();
                           std::atomic<bool> released{false};
                           std::thread worker([&] {
                               amdqp_busy_begin();  // held here until the ack
                               released = true;
                               amdqp_busy_begin();  // nested: not a transition
                           });
                           if (!wake.wait(seen, 2s))
                               return 1;  // never woken
                           std::this_thread::sleep_for(50ms);
                           if (released)
                               return 2;  // went through without the ack
                           auto s = page.snapshot();
                           if (s.header.busy_seq != 1 || s.header.holds != 1)
                               return 3;
                           page.ack_busy(1);
                           worker.join();
                           s = page.snapshot();
                           return s.header.busy_seq == 1 && s.header.hold_timeouts == 0 ? 0 : 4;
                       }),
              0);
}

TEST(BusyAnnounce, AHoldEndsAtItsDeadlineWithoutAnAck) {
    amdqp_test::TempDir dir;
    EXPECT_EQ(in_child(dir.path(),
                       [&] {
                           auto [wake, page] = controlled(
                               dir.path(), AMDQP_ACT_CTL_WAKE | AMDQP_ACT_CTL_HOLD, 20'000);
                           auto t0 = std::chrono::steady_clock::now();
                           amdqp_busy_begin();
                           auto held = std::chrono::steady_clock::now() - t0;
                           auto s = page.snapshot();
                           if (held < 20ms)
                               return 1;
                           return s.header.hold_timeouts == 1 && s.header.busy_seq == 1 ? 0 : 2;
                       }),
              0);
}

TEST(BusyAnnounce, WakeOnlyDoesNotHold) {
    amdqp_test::TempDir dir;
    EXPECT_EQ(in_child(dir.path(),
                       [&] {
                           auto [wake, page] =
                               controlled(dir.path(), AMDQP_ACT_CTL_WAKE, 5'000'000);
                           const std::uint32_t seen = wake.value();
                           auto t0 = std::chrono::steady_clock::now();
                           amdqp_busy_begin();
                           if (std::chrono::steady_clock::now() - t0 > 1s)
                               return 1;
                           if (wake.value() == seen)
                               return 2;
                           auto s = page.snapshot();
                           return s.header.busy_seq == 1 && s.header.holds == 0 ? 0 : 3;
                       }),
              0);
}

TEST(WakeChannel, IsWorldWritableAndReplacesAForeignFile) {
    amdqp_test::TempDir dir;
    const std::string path = dir.path() + "/" AMDQP_ACT_WAKE_NAME;
    // A symlink planted in its place is replaced, never followed.
    ASSERT_EQ(::symlink("/etc/passwd", path.c_str()), 0);
    WakeChannel wake = WakeChannel::create(dir.path());
    struct stat st;
    ASSERT_EQ(::lstat(path.c_str(), &st), 0);
    EXPECT_TRUE(S_ISREG(st.st_mode));
    EXPECT_EQ(st.st_mode & 0777, 0666u);
    EXPECT_GE(st.st_size, AMDQP_ACT_PAGE_SIZE);
    // A second controller run takes the same file over: same inode.
    const ino_t ino = st.st_ino;
    const std::uint32_t v = wake.value();
    WakeChannel again = WakeChannel::create(dir.path());
    ASSERT_EQ(::lstat(path.c_str(), &st), 0);
    EXPECT_EQ(st.st_ino, ino);
    again.wake();
    EXPECT_TRUE(wake.wait(v, 0ns));
    EXPECT_FALSE(wake.wait(wake.value(), 1ms));
}

TEST(BusyAnnounce, NoHoldOnceTheControllersPromiseRanOut) {
    amdqp_test::TempDir dir;
    EXPECT_EQ(in_child(dir.path(),
                       [&] {
                           // A controller that promised 1 ms and then died.
                           auto [wake, page] =
                               controlled(dir.path(), AMDQP_ACT_CTL_WAKE | AMDQP_ACT_CTL_HOLD,
                                          5'000'000, std::chrono::milliseconds(1));
                           std::this_thread::sleep_for(5ms);
                           auto t0 = std::chrono::steady_clock::now();
                           amdqp_busy_begin();
                           if (std::chrono::steady_clock::now() - t0 > 1s)
                               return 1;
                           auto s = page.snapshot();
                           return s.header.busy_seq == 1 && s.header.holds == 0 ? 0 : 2;
                       }),
              0);
}

}  // namespace
