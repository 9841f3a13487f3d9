// SPDX-License-Identifier: MIT
//
// The process side of the cooperative handshake, against the controller
// side of amdqp/activity.hpp.
#include <gtest/gtest.h>

#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <optional>
#include <thread>

#include <amdqp/activity.hpp>

#include "../../lib/tests/activity_test_util.hpp"
#include "activity_page.hpp"
#include "coop_watcher.hpp"
#include "preload_test_util.hpp"

namespace {

using amdqp::activity::Page;
using amdqp::detail::ActivityWriter;
using amdqp::preload::CoopWatcher;
using amdqp::preload::KernelQueueId;
using amdqp::preload::QueueKind;
using amdqp::preload::QueueRegistry;
using namespace std::chrono_literals;

KernelQueueId sim(std::uint64_t ring, std::uint32_t qid) {
    KernelQueueId k;
    k.kind = QueueKind::sim;
    k.fd = 9;
    k.gpu_id = 4;
    k.queue_id = qid;
    k.ring_va = ring;
    return k;
}

class CoopTest : public ::testing::Test {
  protected:
    CoopTest() : writer(), registry(writer, link, control, {}), watcher(writer, registry) {
        amdqp::preload::warn_reset_after_fork();
        ::setenv("AMDQP_QUIET", "1", 1);
    }
    ~CoopTest() override { ::unsetenv("AMDQP_QUIET"); }

    amdqp_test::TempDir dir;
    ActivityWriter writer;
    amdqp_test::FakeLink link;
    amdqp_test::FakeControl control;
    QueueRegistry registry;
    CoopWatcher watcher;
    // The watcher's clock in the tests that drive it by hand (ns).
    const std::uint64_t now = 1000000000;
};

TEST_F(CoopTest, PendingRequestIsCarriedOutAndAcked) {
    registry.kernel_queue_created(sim(0x10000, 6));
    registry.kernel_queue_created(sim(0x20000, 7));
    amdqp_act_page* p = writer.page();
    EXPECT_FALSE(watcher.handle_pending(p, now));  // nothing asked yet

    p->hdr.coop_suspend = 1;
    p->hdr.coop_seq = 1;
    EXPECT_TRUE(watcher.handle_pending(p, now));
    EXPECT_EQ(p->hdr.coop_ack_seq, 1u);
    EXPECT_EQ(p->hdr.coop_state, AMDQP_ACT_COOP_SUSPENDED);
    EXPECT_EQ(p->hdr.coop_updates, 2u);
    EXPECT_EQ(p->hdr.coop_error, 0);
    EXPECT_FALSE(watcher.handle_pending(p, now));  // done once

    p->hdr.coop_suspend = 0;
    p->hdr.coop_seq = 2;
    EXPECT_TRUE(watcher.handle_pending(p, now));
    EXPECT_EQ(p->hdr.coop_state, AMDQP_ACT_COOP_RUNNING);
    EXPECT_EQ(p->hdr.coop_updates, 4u);
}

TEST_F(CoopTest, FailureIsAckedWithItsErrno) {
    registry.kernel_queue_created(sim(0x10000, 6));
    control.rc = -EBUSY;
    amdqp_act_page* p = writer.page();
    p->hdr.coop_suspend = 1;
    p->hdr.coop_seq = 1;
    EXPECT_TRUE(watcher.handle_pending(p, now));
    EXPECT_EQ(p->hdr.coop_state, AMDQP_ACT_COOP_FAILED);
    EXPECT_EQ(p->hdr.coop_error, -EBUSY);
    EXPECT_EQ(p->hdr.coop_ack_seq, 1u);
}

// Asks for a suspension that lasts until @deadline (0: no lease).
void ask_suspend(amdqp_act_page* p, std::uint64_t deadline) {
    p->hdr.coop_lease_ns = deadline;
    p->hdr.coop_suspend = 1;
    p->hdr.coop_seq++;
}

TEST_F(CoopTest, LeaseThatRunsOutPutsTheQueuesBack) {
    registry.kernel_queue_created(sim(0x10000, 6));
    registry.kernel_queue_created(sim(0x20000, 7));
    amdqp_act_page* p = writer.page();
    ask_suspend(p, now + 500);
    ASSERT_TRUE(watcher.handle_pending(p, now));
    EXPECT_EQ(p->hdr.coop_state, AMDQP_ACT_COOP_SUSPENDED);
    EXPECT_EQ(watcher.next_check(p, now), now + 500);

    EXPECT_FALSE(watcher.expire_if_due(p, now + 499));
    EXPECT_EQ(control.calls.size(), 2u);
    EXPECT_TRUE(watcher.expire_if_due(p, now + 500));
    ASSERT_EQ(control.calls.size(), 4u);
    EXPECT_TRUE(control.calls[2].on);
    EXPECT_TRUE(control.calls[3].on);
    EXPECT_EQ(p->hdr.coop_state, AMDQP_ACT_COOP_RUNNING);
    EXPECT_EQ(p->hdr.coop_error, -ETIMEDOUT);
    EXPECT_EQ(p->hdr.coop_expired, 1u);
    EXPECT_EQ(p->hdr.coop_updates, 4u);
    EXPECT_EQ(p->hdr.coop_ack_seq, 1u);  // no request of its own

    // Over once: no further expiry, nothing left to wake up for.
    EXPECT_FALSE(watcher.expire_if_due(p, now + 5000));
    EXPECT_EQ(watcher.next_check(p, now + 5000), 0u);
    EXPECT_EQ(control.calls.size(), 4u);
}

TEST_F(CoopTest, RenewedLeaseKeepsTheQueuesOff) {
    registry.kernel_queue_created(sim(0x10000, 6));
    amdqp_act_page* p = writer.page();
    ask_suspend(p, now + 500);
    ASSERT_TRUE(watcher.handle_pending(p, now));
    for (std::uint64_t t = now + 400; t < now + 5000; t += 400) {
        p->hdr.coop_lease_ns = t + 500;  // what renew_lease() stores
        EXPECT_FALSE(watcher.expire_if_due(p, t + 100)) << t;
    }
    EXPECT_EQ(control.calls.size(), 1u);
    EXPECT_EQ(p->hdr.coop_state, AMDQP_ACT_COOP_SUSPENDED);
    EXPECT_EQ(p->hdr.coop_expired, 0u);
}

TEST_F(CoopTest, FarDeadlineIsLookedAtAgainAfterOneLease) {
    // A deadline read while a renewal was half written may be far off: the
    // watcher does not sleep past one lease length on it.
    registry.kernel_queue_created(sim(0x10000, 6));
    amdqp_act_page* p = writer.page();
    ask_suspend(p, now + 500);
    ASSERT_TRUE(watcher.handle_pending(p, now));
    p->hdr.coop_lease_ns = now + (1ull << 40);
    EXPECT_EQ(watcher.next_check(p, now + 100), now + 600);
}

TEST_F(CoopTest, RequestSeenAfterItsLeaseTakesNothingOff) {
    // The process was stopped for longer than the lease: the controller
    // that asked may be gone.
    registry.kernel_queue_created(sim(0x10000, 6));
    amdqp_act_page* p = writer.page();
    ask_suspend(p, now - 1);
    ASSERT_TRUE(watcher.handle_pending(p, now));
    EXPECT_TRUE(control.calls.empty());
    EXPECT_EQ(p->hdr.coop_ack_seq, 1u);
    EXPECT_EQ(p->hdr.coop_state, AMDQP_ACT_COOP_RUNNING);
    EXPECT_EQ(p->hdr.coop_error, -ETIMEDOUT);
    EXPECT_EQ(p->hdr.coop_expired, 1u);
}

TEST_F(CoopTest, WithoutALeaseTheSuspensionLastsUntilResumed) {
    registry.kernel_queue_created(sim(0x10000, 6));
    amdqp_act_page* p = writer.page();
    ask_suspend(p, 0);
    ASSERT_TRUE(watcher.handle_pending(p, now));
    EXPECT_EQ(watcher.next_check(p, now), 0u);  // sleeps until a request
    EXPECT_FALSE(watcher.expire_if_due(p, UINT64_MAX));
    EXPECT_EQ(p->hdr.coop_state, AMDQP_ACT_COOP_SUSPENDED);
    EXPECT_EQ(control.calls.size(), 1u);
}

TEST_F(CoopTest, ResumeEndsTheLease) {
    registry.kernel_queue_created(sim(0x10000, 6));
    amdqp_act_page* p = writer.page();
    ask_suspend(p, now + 500);
    ASSERT_TRUE(watcher.handle_pending(p, now));
    p->hdr.coop_suspend = 0;
    p->hdr.coop_seq = 2;
    ASSERT_TRUE(watcher.handle_pending(p, now + 100));
    EXPECT_FALSE(watcher.expire_if_due(p, now + 1000));
    EXPECT_EQ(p->hdr.coop_error, 0);
    EXPECT_EQ(p->hdr.coop_expired, 0u);
    EXPECT_EQ(control.calls.size(), 2u);
}

TEST_F(CoopTest, ControllerAndWatcherThreadHandshake) {
    registry.set_coop_starter([this] { return watcher.start(); });
    registry.kernel_queue_created(sim(0x10000, 6));  // first coop queue: starts the thread
    Page page = Page::open(getpid(), Page::Access::control);
    EXPECT_TRUE(page.snapshot().coop_capable());

    auto r = page.request_coop(true, 5s);
    EXPECT_TRUE(r.acked);
    EXPECT_EQ(r.state, AMDQP_ACT_COOP_SUSPENDED);
    EXPECT_EQ(r.updates, 1u);
    ASSERT_EQ(control.calls.size(), 1u);
    EXPECT_FALSE(control.calls[0].on);

    r = page.request_coop(false, 5s);
    EXPECT_TRUE(r.acked);
    EXPECT_EQ(r.state, AMDQP_ACT_COOP_RUNNING);
    EXPECT_EQ(r.updates, 2u);
    EXPECT_LT(r.waited, 1s);
}

TEST_F(CoopTest, ForkChildStartsItsOwnWatcher) {
    registry.set_coop_starter([this] { return watcher.start(); });
    registry.kernel_queue_created(sim(0x10000, 6));  // the parent's watcher runs
    int ready[2], done[2];
    ASSERT_EQ(pipe(ready), 0);
    ASSERT_EQ(pipe(done), 0);
    // What the layer's atfork handlers do around fork().
    registry.lock_for_fork();
    pid_t child = fork();
    if (child == 0) {
        registry.reset_after_fork_child();
        watcher.reset_after_fork_child();
        // The parent's queue is not the child's; a queue of its own starts
        // a watcher of its own on the child's own page.
        registry.kernel_queue_created(sim(0x20000, 7));
        char c = registry.size() == 1 ? 'y' : 'n';
        (void)!::write(ready[1], &c, 1);
        (void)!::read(done[0], &c, 1);
        _exit(control.calls.size() == 1 && control.calls[0].q.queue_id == 7 ? 0 : 1);
    }
    registry.unlock_after_fork_parent();
    char c = 0;
    ASSERT_EQ(::read(ready[0], &c, 1), 1);
    EXPECT_EQ(c, 'y');
    Page page = Page::open(child, Page::Access::control);
    EXPECT_TRUE(page.snapshot().coop_capable());
    auto r = page.request_coop(true, 5s);
    EXPECT_TRUE(r.acked);
    EXPECT_EQ(r.updates, 1u);
    (void)!::write(done[1], "x", 1);
    int status = 0;
    waitpid(child, &status, 0);
    EXPECT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0);
    EXPECT_TRUE(control.calls.empty());  // the parent's queue was not touched
    for (int fd : {ready[0], ready[1], done[0], done[1]})
        ::close(fd);
}

// Waits until the page says the process put its queues back on its own;
// how long that took, or nullopt after @limit.
std::optional<std::chrono::milliseconds> time_to_expiry(Page& page,
                                                        std::chrono::milliseconds limit) {
    const auto start = std::chrono::steady_clock::now();
    for (;;) {
        auto took = std::chrono::duration_cast<std::chrono::milliseconds>(
            std::chrono::steady_clock::now() - start);
        if (page.snapshot().header.coop_expired != 0)
            return took;
        if (took > limit)
            return std::nullopt;
        std::this_thread::sleep_for(5ms);
    }
}

TEST_F(CoopTest, ControllerThatStopsRenewingLosesTheSuspension) {
    registry.set_coop_starter([this] { return watcher.start(); });
    registry.kernel_queue_created(sim(0x10000, 6));
    Page page = Page::open(getpid(), Page::Access::control);
    const auto lease = 200ms;
    auto r = page.request_coop(true, 5s, lease);
    ASSERT_TRUE(r.acked);
    ASSERT_EQ(r.state, AMDQP_ACT_COOP_SUSPENDED);

    // No renewal: back within the lease, plus scheduling slack.
    auto took = time_to_expiry(page, lease + 2s);
    ASSERT_TRUE(took) << "the queues stayed off";
    EXPECT_LE(*took, lease + 2s);
    auto h = page.snapshot().header;
    EXPECT_EQ(h.coop_state, AMDQP_ACT_COOP_RUNNING);
    EXPECT_EQ(h.coop_error, -ETIMEDOUT);
    EXPECT_EQ(h.coop_updates, 2u);
    ASSERT_EQ(control.calls.size(), 2u);
    EXPECT_TRUE(control.calls[1].on);
    EXPECT_EQ(page.renew_lease(r.seq, lease), amdqp::activity::Lease::lapsed);
}

TEST_F(CoopTest, RenewingControllerKeepsTheSuspensionForSeveralLeases) {
    registry.set_coop_starter([this] { return watcher.start(); });
    registry.kernel_queue_created(sim(0x10000, 6));
    Page page = Page::open(getpid(), Page::Access::control);
    const auto lease = 150ms;
    auto r = page.request_coop(true, 5s, lease);
    ASSERT_TRUE(r.acked);
    const auto until = std::chrono::steady_clock::now() + 6 * lease;
    while (std::chrono::steady_clock::now() < until) {
        ASSERT_EQ(page.renew_lease(r.seq, lease), amdqp::activity::Lease::held);
        std::this_thread::sleep_for(lease / 3);
    }
    auto h = page.snapshot().header;
    EXPECT_EQ(h.coop_state, AMDQP_ACT_COOP_SUSPENDED);
    EXPECT_EQ(h.coop_expired, 0u);
    EXPECT_EQ(h.coop_updates, 1u);
    // Then it stops: the lease runs out.
    EXPECT_TRUE(time_to_expiry(page, lease + 2s));
}

TEST_F(CoopTest, KilledControllerProcessLeavesNothingSuspended) {
    registry.set_coop_starter([this] { return watcher.start(); });
    registry.kernel_queue_created(sim(0x10000, 6));
    const auto lease = 300ms;
    int ready[2];
    ASSERT_EQ(pipe(ready), 0);
    const pid_t me = getpid();
    pid_t controller = fork();
    // Killed however the test ends.
    struct Reaper {
        pid_t pid;
        ~Reaper() {
            if (pid > 0) {
                kill(pid, SIGKILL);
                waitpid(pid, nullptr, 0);
            }
        }
    } reaper{controller};
    if (controller == 0) {
        // A controller in another process that holds the suspension,
        // renewing it, until it is killed.
        Page page = Page::open(me, Page::Access::control);
        auto r = page.request_coop(true, 5s, lease);
        char c = r.acked && r.state == AMDQP_ACT_COOP_SUSPENDED ? 'y' : 'n';
        (void)!::write(ready[1], &c, 1);
        for (;;) {
            page.renew_lease(r.seq, lease);
            std::this_thread::sleep_for(lease / 3);
        }
    }
    char c = 0;
    ASSERT_EQ(::read(ready[0], &c, 1), 1);
    ASSERT_EQ(c, 'y');
    Page page = Page::open(me, Page::Access::read);
    // Held across several leases while the controller lives...
    std::this_thread::sleep_for(3 * lease);
    EXPECT_EQ(page.snapshot().header.coop_state, AMDQP_ACT_COOP_SUSPENDED);
    EXPECT_EQ(page.snapshot().header.coop_expired, 0u);
    // ...and over soon after it dies without a word.
    kill(controller, SIGKILL);
    waitpid(controller, nullptr, 0);
    reaper.pid = -1;
    auto took = time_to_expiry(page, lease + 2s);
    ASSERT_TRUE(took) << "the queues stayed off after the controller died";
    EXPECT_LE(*took, lease + 2s);
    EXPECT_EQ(page.snapshot().header.coop_state, AMDQP_ACT_COOP_RUNNING);
    ::close(ready[0]);
    ::close(ready[1]);
}

}  // namespace
