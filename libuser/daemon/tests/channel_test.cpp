// SPDX-License-Identifier: MIT
//
// amdqpd's socket (channel.hpp) against tenants that lie: each attack runs
// in a child that became another user (uid 65534) and must leave the
// channel serving everyone else.
#include <gtest/gtest.h>
#include <sys/eventfd.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <cstring>
#include <functional>
#include <thread>

#include <amdqp/activity.hpp>
#include <nlohmann/json.hpp>

#include "activity_proc.hpp"
#include "activity_test_util.hpp"
#include "channel.hpp"

namespace {

using namespace amdqp::daemon;
using namespace std::chrono_literals;

constexpr uid_t kNobody = 65534;

// Runs @body in a child as uid/gid 65534 (the test runs as root); its exit
// status, or -1.
int as_nobody(const std::function<int()>& body) {
    pid_t pid = fork();
    if (pid == 0) {
        if (setresgid(kNobody, kNobody, kNobody) != 0 || setresuid(kNobody, kNobody, kNobody) != 0)
            _exit(97);
        int rc = 99;
        try {
            rc = body();
        } catch (...) {
            rc = 98;
        }
        _exit(rc);
    }
    int status = 0;
    if (waitpid(pid, &status, 0) != pid || !WIFEXITED(status))
        return -1;
    return WEXITSTATUS(status);
}

int connect_to(const std::string& path) {
    int fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
    struct sockaddr_un addr = {};
    addr.sun_family = AF_UNIX;
    std::strncpy(addr.sun_path, path.c_str(), sizeof(addr.sun_path) - 1);
    if (connect(fd, reinterpret_cast<struct sockaddr*>(&addr), sizeof(addr)) < 0) {
        ::close(fd);
        return -1;
    }
    return fd;
}

bool send_fd(int conn, char what, int fd) {
    struct iovec iov = {&what, 1};
    union {
        char b[CMSG_SPACE(sizeof(int))];
        struct cmsghdr align;
    } control = {};
    struct msghdr msg = {};
    msg.msg_iov = &iov;
    msg.msg_iovlen = 1;
    if (fd >= 0) {
        msg.msg_control = control.b;
        msg.msg_controllen = sizeof(control.b);
        struct cmsghdr* c = CMSG_FIRSTHDR(&msg);
        c->cmsg_level = SOL_SOCKET;
        c->cmsg_type = SCM_RIGHTS;
        c->cmsg_len = CMSG_LEN(sizeof(int));
        std::memcpy(CMSG_DATA(c), &fd, sizeof(int));
    }
    return sendmsg(conn, &msg, MSG_NOSIGNAL) == 1;
}

// A sealed page as a writer makes it, claiming @pid.
int sealed_page(pid_t pid, bool seal = true) {
    static amdqp_act_page p = amdqp_test::valid_page(0, 0);
    p.hdr.pid = static_cast<std::uint32_t>(pid);
    int fd = memfd_create(AMDQP_ACT_MEMFD_NAME, MFD_CLOEXEC | MFD_ALLOW_SEALING);
    if (fd < 0 || ftruncate(fd, sizeof(p)) < 0 || pwrite(fd, &p, sizeof(p), 0) != sizeof(p))
        return -1;
    if (seal && fcntl(fd, F_ADD_SEALS, F_SEAL_SHRINK | F_SEAL_GROW) < 0)
        return -1;
    return fd;
}

class ChannelTest : public ::testing::Test {
  protected:
    void SetUp() override {
        if (geteuid() != 0)
            GTEST_SKIP() << "needs root to play another user";
        ASSERT_EQ(::chmod(dir_.path().c_str(), 0755), 0);
        channel_ = std::make_unique<Channel>(dir_.path(), [this] { wakes_++; });
    }
    // Waits until @pred holds (the channel's thread serves asynchronously).
    bool eventually(const std::function<bool()>& pred) {
        for (int i = 0; i < 400; i++) {
            if (pred())
                return true;
            std::this_thread::sleep_for(5ms);
        }
        return pred();
    }
    std::vector<Registration> taken_;
    std::size_t take() {
        for (auto& r : channel_->take())
            taken_.push_back(r);
        return taken_.size();
    }
    void TearDown() override {
        for (auto& r : taken_)
            ::close(r.fd);
    }

    amdqp_test::TempDir dir_;
    std::atomic<int> wakes_{0};
    std::unique_ptr<Channel> channel_;
};

TEST_F(ChannelTest, TheSocketIsReachableByEveryUserInAPrivateFolder) {
    struct stat st;
    ASSERT_EQ(::stat(channel_->path().c_str(), &st), 0);
    EXPECT_TRUE(S_ISSOCK(st.st_mode));
    EXPECT_EQ(st.st_mode & 0777, 0666u);
    ASSERT_EQ(::stat(dir_.path().c_str(), &st), 0);
    EXPECT_EQ(st.st_uid, 0u);
    EXPECT_EQ(st.st_mode & 022, 0u);
}

TEST_F(ChannelTest, AFolderAnotherUserCouldWriteIsRefused) {
    amdqp_test::TempDir other;
    ASSERT_EQ(::chown(other.path().c_str(), kNobody, kNobody), 0);
    EXPECT_THROW(Channel(other.path(), [] {}), amdqp::Error);
    ASSERT_EQ(::chown(other.path().c_str(), 0, 0), 0);
    ASSERT_EQ(::chmod(other.path().c_str(), 01777), 0);
    EXPECT_THROW(Channel(other.path(), [] {}), amdqp::Error);
}

TEST_F(ChannelTest, ARegistrationIsThePeersWhateverThePageClaims) {
    // A tenant registers a page that names another process (this one, a
    // root process): the daemon takes pid and uid from the connection.
    const pid_t victim = getpid();
    pid_t liar = 0;
    int pipefd[2];
    ASSERT_EQ(pipe(pipefd), 0);
    EXPECT_EQ(as_nobody([&] {
                  pid_t me = getpid();
                  (void)!::write(pipefd[1], &me, sizeof(me));
                  int conn = connect_to(channel_->path());
                  int page = sealed_page(victim);
                  if (conn < 0 || page < 0 || !send_fd(conn, AMDQP_DAEMON_MSG_REGISTER, page))
                      return 1;
                  std::this_thread::sleep_for(100ms);  // keep the connection a moment
                  return 0;
              }),
              0);
    ASSERT_EQ(::read(pipefd[0], &liar, sizeof(liar)), static_cast<ssize_t>(sizeof(liar)));
    ASSERT_TRUE(eventually([&] { return take() == 1; }));
    EXPECT_EQ(taken_[0].pid, liar);
    EXPECT_EQ(taken_[0].uid, kNobody);
    // And the page, naming another pid than its sender, is refused.
    try {
        amdqp::activity::Page::adopt(taken_[0].pid, ::dup(taken_[0].fd),
                                     amdqp::activity::Page::Access::control, 1);
        ADD_FAILURE() << "a page naming another pid was adopted";
    } catch (const amdqp::activity::PageError& e) {
        EXPECT_EQ(e.problem(), amdqp::activity::Problem::pid_mismatch);
    }
    ::close(pipefd[0]);
    ::close(pipefd[1]);
}

TEST_F(ChannelTest, WhatIsNoSealedPageIsRefusedAndTheChannelGoesOn) {
    EXPECT_EQ(as_nobody([&] {
                  int bad = 0;
                  // Unsealed (could shrink under the daemon), a pipe, a
                  // regular file, no fd, two registrations, garbage.
                  int conn = connect_to(channel_->path());
                  bad += !send_fd(conn, AMDQP_DAEMON_MSG_REGISTER, sealed_page(getpid(), false));
                  conn = connect_to(channel_->path());
                  int p[2];
                  if (pipe(p) != 0)
                      return 2;
                  bad += !send_fd(conn, AMDQP_DAEMON_MSG_REGISTER, p[0]);
                  conn = connect_to(channel_->path());
                  bad += !send_fd(conn, AMDQP_DAEMON_MSG_REGISTER, -1);
                  conn = connect_to(channel_->path());
                  bad += !send_fd(conn, 'X', -1);
                  conn = connect_to(channel_->path());
                  bad += !send_fd(conn, AMDQP_DAEMON_MSG_WAKE, -1);  // wake before registering
                  std::this_thread::sleep_for(100ms);
                  return bad ? 1 : 0;
              }),
              0);
    EXPECT_TRUE(eventually([&] { return channel_->stats().refused >= 5; }))
        << channel_->stats().refused;
    EXPECT_EQ(take(), 0u);
    EXPECT_EQ(wakes_, 0);
    // Root's own registration still goes through.
    int conn = connect_to(channel_->path());
    int page = sealed_page(getpid());
    ASSERT_TRUE(send_fd(conn, AMDQP_DAEMON_MSG_REGISTER, page));
    EXPECT_TRUE(eventually([&] { return take() == 1; }));
    ::close(conn);
    ::close(page);
}

TEST_F(ChannelTest, OneUserCannotTakeEveryConnectionNorFloodTheLoopWithWakes) {
    const auto t0 = std::chrono::steady_clock::now();
    EXPECT_EQ(as_nobody([&] {
                  // One registered connection (first: the cap is per user)...
                  int conn = connect_to(channel_->path());
                  int page = sealed_page(getpid());
                  if (!send_fd(conn, AMDQP_DAEMON_MSG_REGISTER, page))
                      return 1;
                  // ...then 200 more connections, and a wake flood.
                  std::vector<int> conns;
                  for (int i = 0; i < 200; i++)
                      conns.push_back(connect_to(channel_->path()));
                  const auto end = std::chrono::steady_clock::now() + 200ms;
                  char spam[4096];
                  std::memset(spam, AMDQP_DAEMON_MSG_WAKE, sizeof(spam));
                  while (std::chrono::steady_clock::now() < end)
                      (void)!send(conn, spam, sizeof(spam), MSG_DONTWAIT | MSG_NOSIGNAL);
                  std::this_thread::sleep_for(50ms);
                  return 0;
              }),
              0);
    // At most 64 connections of that user were kept: the rest refused.
    EXPECT_GE(channel_->stats().refused, 137u);
    // Wakes from one user reach the loop at most once per gap (1 ms),
    // however many bytes came: a rate, so it is checked against the time
    // since the flood began (the daemon may still be draining the flood's
    // buffered bytes after the flooder left, at the same rate).
    const int woken = wakes_.load();
    const auto elapsed_ms =
        std::chrono::duration_cast<std::chrono::milliseconds>(std::chrono::steady_clock::now() - t0)
            .count();
    EXPECT_LE(woken, elapsed_ms + 20) << "in " << elapsed_ms << " ms";
    // Another user still gets through.
    int conn = connect_to(channel_->path());
    int page = sealed_page(getpid());
    ASSERT_TRUE(send_fd(conn, AMDQP_DAEMON_MSG_REGISTER, page));
    EXPECT_TRUE(eventually([&] {
        take();
        for (const auto& r : taken_)
            if (r.uid == 0)
                return true;
        return false;
    }));
    ::close(conn);
    ::close(page);
}

TEST_F(ChannelTest, StatusShowsAUserOnlyTheirOwnProcesses) {
    nlohmann::json status = {
        {"pid", 1},
        {"processes", 2},
        {"tagged",
         {{{"pid", 10}, {"uid", 0}, {"comm", "root-job"}, {"cgroup", "/secret"}},
          {{"pid", 20}, {"uid", kNobody}, {"comm", "mine"}, {"cgroup", "/mine"}}}},
        {"groups", {{"g", {{"priority", 7}, {"gpus", {1}}, {"pids", {10, 20}}}}}}};
    channel_->set_status(status.dump());
    std::string seen;
    int pipefd[2];
    ASSERT_EQ(pipe(pipefd), 0);
    EXPECT_EQ(as_nobody([&] {
                  const std::string text = amdqp::activity::daemon_status(dir_.path());
                  (void)!::write(pipefd[1], text.data(), text.size());
                  return 0;
              }),
              0);
    ::close(pipefd[1]);
    char buf[4096];
    ssize_t n;
    while ((n = ::read(pipefd[0], buf, sizeof(buf))) > 0)
        seen.append(buf, static_cast<std::size_t>(n));
    ::close(pipefd[0]);
    auto j = nlohmann::json::parse(seen);
    ASSERT_EQ(j["tagged"].size(), 1u) << seen;
    EXPECT_EQ(j["tagged"][0]["pid"], 20);
    EXPECT_EQ(j["processes"], 1);
    EXPECT_EQ(j["groups"]["g"]["pids"], nlohmann::json({20}));
    EXPECT_EQ(seen.find("secret"), std::string::npos);
    // Root sees everything.
    auto all = nlohmann::json::parse(amdqp::activity::daemon_status(dir_.path()));
    EXPECT_EQ(all["tagged"].size(), 2u);
}

TEST(DrivenChannel, TheCallerServesItAndTheWakeRunsInItsThread) {
    amdqp_test::TempDir dir;
    ASSERT_EQ(::chmod(dir.path().c_str(), 0755), 0);
    std::thread::id woke_in;
    int wakes = 0;
    Channel channel(
        dir.path(),
        [&] {
            woke_in = std::this_thread::get_id();
            wakes++;
        },
        ChannelLimits{}, false);
    // Nothing to serve: the wait lasts its timeout.
    const auto t0 = std::chrono::steady_clock::now();
    EXPECT_EQ(channel.serve_once(20ms), Channel::Served::timeout);
    EXPECT_GE(std::chrono::steady_clock::now() - t0, 20ms);
    // The caller's own fd ends the wait, left readable for it to drain.
    int efd = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
    ASSERT_GE(efd, 0);
    const std::uint64_t one = 1;
    ASSERT_EQ(::write(efd, &one, sizeof(one)), static_cast<ssize_t>(sizeof(one)));
    EXPECT_EQ(channel.serve_once(5s, efd), Channel::Served::extra);
    std::uint64_t n = 0;
    EXPECT_EQ(::read(efd, &n, sizeof(n)), static_cast<ssize_t>(sizeof(n)));
    // No thread of its own: a registration and a wake wait for the caller.
    int conn = connect_to(channel.path());
    int page = sealed_page(getpid());
    ASSERT_GE(conn, 0);
    ASSERT_GE(page, 0);
    ASSERT_TRUE(send_fd(conn, AMDQP_DAEMON_MSG_REGISTER, page));
    ASSERT_TRUE(send_fd(conn, AMDQP_DAEMON_MSG_WAKE, -1));
    std::this_thread::sleep_for(50ms);
    EXPECT_TRUE(channel.take().empty());
    EXPECT_EQ(wakes, 0);
    std::vector<Registration> got;
    for (int i = 0; i < 50 && (got.empty() || wakes == 0); i++) {
        EXPECT_NE(channel.serve_once(100ms, efd), Channel::Served::failed);
        for (auto& r : channel.take())
            got.push_back(r);
    }
    ASSERT_EQ(got.size(), 1u);
    EXPECT_EQ(got[0].pid, getpid());
    EXPECT_GE(wakes, 1);
    EXPECT_EQ(woke_in, std::this_thread::get_id());
    for (auto& r : got)
        ::close(r.fd);
    ::close(page);
    ::close(conn);
    ::close(efd);
}

TEST(FilterStatus, GarbageGivesNothing) {
    EXPECT_EQ(filter_status("not json", 5, false), "{}");
    EXPECT_EQ(filter_status("[1]", 5, true), "{}");
}

}  // namespace
