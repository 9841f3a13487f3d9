// SPDX-License-Identifier: MIT
//
// The process side of the cooperative handshake, against the controller
// side of amdqp/activity.hpp.
#include <gtest/gtest.h>

#include <sys/wait.h>
#include <unistd.h>

#include <chrono>

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
    CoopTest()
        : writer(dir.path()), registry(writer, link, control, {}), watcher(writer, registry) {
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
};

TEST_F(CoopTest, PendingRequestIsCarriedOutAndAcked) {
    registry.kernel_queue_created(sim(0x10000, 6));
    registry.kernel_queue_created(sim(0x20000, 7));
    amdqp_act_page* p = writer.page();
    EXPECT_FALSE(watcher.handle_pending(p));  // nothing asked yet

    p->hdr.coop_suspend = 1;
    p->hdr.coop_seq = 1;
    EXPECT_TRUE(watcher.handle_pending(p));
    EXPECT_EQ(p->hdr.coop_ack_seq, 1u);
    EXPECT_EQ(p->hdr.coop_state, AMDQP_ACT_COOP_SUSPENDED);
    EXPECT_EQ(p->hdr.coop_updates, 2u);
    EXPECT_EQ(p->hdr.coop_error, 0);
    EXPECT_FALSE(watcher.handle_pending(p));  // done once

    p->hdr.coop_suspend = 0;
    p->hdr.coop_seq = 2;
    EXPECT_TRUE(watcher.handle_pending(p));
    EXPECT_EQ(p->hdr.coop_state, AMDQP_ACT_COOP_RUNNING);
    EXPECT_EQ(p->hdr.coop_updates, 4u);
}

TEST_F(CoopTest, FailureIsAckedWithItsErrno) {
    registry.kernel_queue_created(sim(0x10000, 6));
    control.rc = -EBUSY;
    amdqp_act_page* p = writer.page();
    p->hdr.coop_suspend = 1;
    p->hdr.coop_seq = 1;
    EXPECT_TRUE(watcher.handle_pending(p));
    EXPECT_EQ(p->hdr.coop_state, AMDQP_ACT_COOP_FAILED);
    EXPECT_EQ(p->hdr.coop_error, -EBUSY);
    EXPECT_EQ(p->hdr.coop_ack_seq, 1u);
}

TEST_F(CoopTest, ControllerAndWatcherThreadHandshake) {
    registry.set_coop_starter([this] { return watcher.start(); });
    registry.kernel_queue_created(sim(0x10000, 6));  // first coop queue: starts the thread
    Page page = Page::open(getpid(), Page::Access::control, dir.path());
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
    Page page = Page::open(child, Page::Access::control, dir.path());
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

}  // namespace
