// SPDX-License-Identifier: MIT
//
// The wake/hold channel between a process and its controller
// (activity.h ctl_flags, busy_seq/busy_ack; the daemon's socket): each case
// runs in a child process with its own runtime directory, where a stand-in
// for amdqpd's socket takes the page's registration and counts wakes.
#include <amdqp/hint.h>
#include <fcntl.h>
#include <gtest/gtest.h>
#include <poll.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstring>
#include <functional>
#include <memory>
#include <stdexcept>
#include <thread>
#include <vector>

#include <amdqp/activity.hpp>

#include "activity_test_util.hpp"

namespace {

using amdqp::activity::Page;
using namespace std::chrono_literals;

// amdqpd's socket, as far as a tagged process sees it: takes registrations
// (one page fd each) and counts wake bytes. Single-threaded: it serves
// only inside value() and wait().
class FakeDaemon {
  public:
    explicit FakeDaemon(const std::string& dir) {
        listen_ = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
        struct sockaddr_un addr = {};
        addr.sun_family = AF_UNIX;
        const std::string path = amdqp::activity::socket_path(dir);
        std::strncpy(addr.sun_path, path.c_str(), sizeof(addr.sun_path) - 1);
        if (bind(listen_, reinterpret_cast<struct sockaddr*>(&addr), sizeof(addr)) < 0 ||
            listen(listen_, 16) < 0)
            throw std::runtime_error("FakeDaemon: cannot listen");
    }
    ~FakeDaemon() {
        for (int fd : conns_)
            ::close(fd);
        for (int fd : pages_)
            ::close(fd);
        ::close(listen_);
    }
    std::uint32_t value() {
        serve(0);
        return wakes_;
    }
    bool wait(std::uint32_t seen, std::chrono::nanoseconds timeout) {
        const auto end = std::chrono::steady_clock::now() + timeout;
        for (;;) {
            auto left = std::chrono::duration_cast<std::chrono::milliseconds>(
                end - std::chrono::steady_clock::now());
            serve(static_cast<int>(
                std::max<std::int64_t>(0, std::min<std::int64_t>(left.count(), 10))));
            if (wakes_ != seen)
                return true;
            if (std::chrono::steady_clock::now() >= end)
                return false;
        }
    }
    std::size_t registered() {
        serve(0);
        return pages_.size();
    }

  private:
    void serve(int timeout_ms) {
        // Connections waiting first, then whatever they sent.
        for (;;) {
            int fd = accept4(listen_, nullptr, nullptr, SOCK_CLOEXEC | SOCK_NONBLOCK);
            if (fd < 0)
                break;
            conns_.push_back(fd);
        }
        std::vector<struct pollfd> fds{{listen_, POLLIN, 0}};
        for (int fd : conns_)
            fds.push_back({fd, POLLIN, 0});
        if (poll(fds.data(), fds.size(), timeout_ms) <= 0)
            return;
        for (std::size_t i = 1; i < fds.size(); i++) {
            if (!(fds[i].revents & POLLIN))
                continue;
            char buf[64];
            union {
                char b[CMSG_SPACE(sizeof(int))];
                struct cmsghdr align;
            } control;
            struct iovec iov = {buf, sizeof(buf)};
            struct msghdr msg = {};
            msg.msg_iov = &iov;
            msg.msg_iovlen = 1;
            msg.msg_control = control.b;
            msg.msg_controllen = sizeof(control.b);
            ssize_t n = recvmsg(fds[i].fd, &msg, MSG_DONTWAIT | MSG_CMSG_CLOEXEC);
            for (struct cmsghdr* h = CMSG_FIRSTHDR(&msg); n > 0 && h; h = CMSG_NXTHDR(&msg, h)) {
                int fd;
                std::memcpy(&fd, CMSG_DATA(h), sizeof(fd));
                pages_.push_back(fd);
            }
            for (ssize_t k = 0; k < n; k++)
                wakes_ += buf[k] == AMDQP_DAEMON_MSG_WAKE;
        }
    }

    int listen_ = -1;
    std::vector<int> conns_, pages_;
    std::uint32_t wakes_ = 0;
};

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
    std::unique_ptr<FakeDaemon> daemon;
    Page page;
};
Controlled controlled(const std::string& dir, std::uint32_t flags, std::uint32_t hold_us,
                      std::chrono::milliseconds alive = std::chrono::milliseconds(1000)) {
    auto daemon = std::make_unique<FakeDaemon>(dir);
    amdqp_busy_begin();
    amdqp_busy_end();
    Page page = Page::open(getpid(), Page::Access::control);
    page.set_control(flags, hold_us, alive);
    return {std::move(daemon), std::move(page)};
}

TEST(BusyAnnounce, WithoutAControllerNothingIsAnnounced) {
    amdqp_test::TempDir dir;
    EXPECT_EQ(in_child(dir.path(),
                       [&] {
                           if (amdqp_busy_begin() != AMDQP_OK)
                               return 1;
                           auto s = Page::open(getpid(), Page::Access::read).snapshot();
                           return s.header.busy_seq == 0 && s.header.holds == 0 ? 0 : 2;
                       }),
              0);
}

TEST(BusyAnnounce, FirstHintWakesTheControllerOnceAndWaitsForItsAck) {
    amdqp_test::TempDir dir;
    EXPECT_EQ(in_child(dir.path(),
                       [&] {
                           auto [daemon, page] = controlled(
                               dir.path(), AMDQP_ACT_CTL_WAKE | AMDQP_ACT_CTL_HOLD, 5'000'000);
                           const std::uint32_t seen = daemon->value();
                           std::atomic<bool> released{false};
                           std::thread worker([&] {
                               amdqp_busy_begin();  // held here until the ack
                               released = true;
                               amdqp_busy_begin();  // nested: not a transition
                           });
                           if (!daemon->wait(seen, 2s))
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
                           auto [daemon, page] = controlled(
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
                           auto [daemon, page] =
                               controlled(dir.path(), AMDQP_ACT_CTL_WAKE, 5'000'000);
                           const std::uint32_t seen = daemon->value();
                           auto t0 = std::chrono::steady_clock::now();
                           amdqp_busy_begin();
                           if (std::chrono::steady_clock::now() - t0 > 1s)
                               return 1;
                           if (daemon->value() == seen)
                               return 2;
                           auto s = page.snapshot();
                           return s.header.busy_seq == 1 && s.header.holds == 0 ? 0 : 3;
                       }),
              0);
}

TEST(BusyAnnounce, ThePageIsRegisteredOverTheSocketAtOnce) {
    amdqp_test::TempDir dir;
    EXPECT_EQ(in_child(dir.path(),
                       [&] {
                           FakeDaemon daemon(dir.path());
                           amdqp_busy_begin();
                           amdqp_busy_end();
                           return daemon.registered() == 1 ? 0 : 1;
                       }),
              0);
}

TEST(BusyAnnounce, AnUntrustedRuntimeDirectoryGetsNoPage) {
    // A directory others can write to could hold anyone's socket: the
    // process does not hand its page to whatever listens there.
    amdqp_test::TempDir dir;
    ASSERT_EQ(::chmod(dir.path().c_str(), 0777), 0);
    EXPECT_EQ(in_child(dir.path(),
                       [&] {
                           FakeDaemon daemon(dir.path());
                           amdqp_busy_begin();
                           amdqp_busy_end();
                           return daemon.registered() == 0 ? 0 : 1;
                       }),
              0);
}

TEST(BusyAnnounce, TheOldSharedWakeFileCannotKillATaggedProcess) {
    // Issue 25 finding 3: every tagged process mapped a 0666 amdqpd.wake
    // read-write; truncating it (any user could) made the next idle->busy
    // announcement die of SIGBUS. No shared file is used any more: a planted
    // one, truncated between two announcements, changes nothing.
    amdqp_test::TempDir dir;
    const std::string wake = dir.path() + "/amdqpd.wake";
    int fd = ::open(wake.c_str(), O_RDWR | O_CREAT | O_CLOEXEC, 0666);
    ASSERT_GE(fd, 0);
    ASSERT_EQ(::ftruncate(fd, 4096), 0);
    ::close(fd);
    EXPECT_EQ(in_child(dir.path(),
                       [&] {
                           auto [daemon, page] =
                               controlled(dir.path(), AMDQP_ACT_CTL_WAKE, 5'000'000);
                           amdqp_busy_begin();
                           amdqp_busy_end();
                           if (::truncate(wake.c_str(), 0) != 0)
                               return 1;
                           amdqp_busy_begin();  // SIGBUS here before
                           amdqp_busy_end();
                           return daemon->wait(0, 1s) ? 0 : 2;
                       }),
              0);
}

TEST(BusyAnnounce, NoHoldOnceTheControllersPromiseRanOut) {
    amdqp_test::TempDir dir;
    EXPECT_EQ(in_child(dir.path(),
                       [&] {
                           // A controller that promised 1 ms and then died.
                           auto [daemon, page] =
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
