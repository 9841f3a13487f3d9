// SPDX-License-Identifier: MIT
//
// The writer side: how a process makes, shares and leaves its page.
#include <gtest/gtest.h>

#include <fcntl.h>
#include <signal.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/wait.h>

#include <atomic>
#include <thread>
#include <vector>

#include <amdqp/activity.hpp>

#include "activity_page.hpp"
#include "activity_proc.hpp"
#include "activity_test_util.hpp"

namespace {

using amdqp::detail::ActivityWriter;
using amdqp::detail::SlotInit;

// Pages this process holds (its /proc/self/fd links).
std::size_t own_pages() {
    return amdqp::detail::page_fds(0).size();
}

TEST(ActivityPage, CreatedOnFirstUseWithItsIdentity) {
    ::setenv("AMDQP_PRIORITY", "low", 1);
    ::setenv("AMDQP_GROUP", "tp-group-with-a-name-longer-than-31-bytes", 1);
    ActivityWriter w;
    EXPECT_EQ(own_pages(), 0u);  // nothing before the first need
    amdqp_act_page* p = w.page();
    ::unsetenv("AMDQP_PRIORITY");
    ::unsetenv("AMDQP_GROUP");
    ASSERT_NE(p, nullptr) << strerror(w.error());
    EXPECT_TRUE(w.created());
    EXPECT_EQ(w.path(), "/proc/" + std::to_string(getpid()) + "/fd/" + std::to_string(w.fd()));

    // A sealed memfd of the page's size: it can neither shrink nor grow,
    // and it has no name anyone else could take or remove.
    struct stat st;
    ASSERT_EQ(::fstat(w.fd(), &st), 0);
    EXPECT_TRUE(S_ISREG(st.st_mode));
    EXPECT_EQ(st.st_size, static_cast<off_t>(AMDQP_ACT_PAGE_SIZE));
    const int seals = fcntl(w.fd(), F_GET_SEALS);
    EXPECT_EQ(seals & (F_SEAL_SHRINK | F_SEAL_GROW | F_SEAL_SEAL),
              F_SEAL_SHRINK | F_SEAL_GROW | F_SEAL_SEAL);
    EXPECT_NE(fcntl(w.fd(), F_GETFD) & FD_CLOEXEC, 0);
    EXPECT_LT(::ftruncate(w.fd(), 0), 0);
    EXPECT_EQ(errno, EPERM);
    char link[64] = {};
    ASSERT_GT(::readlink(w.path().c_str(), link, sizeof(link) - 1), 0);
    EXPECT_STREQ(link, AMDQP_ACT_MEMFD_LINK);
    // Aligned to its size: a slot's header is found by masking.
    EXPECT_EQ(reinterpret_cast<std::uintptr_t>(p) % AMDQP_ACT_PAGE_SIZE, 0u);

    EXPECT_EQ(p->hdr.magic, AMDQP_ACT_MAGIC);
    EXPECT_EQ(p->hdr.version, AMDQP_ACT_VERSION);
    EXPECT_EQ(p->hdr.version_minor, AMDQP_ACT_VERSION_MINOR);
    EXPECT_EQ(p->hdr.size, AMDQP_ACT_PAGE_SIZE);
    EXPECT_EQ(p->hdr.slot_size, sizeof(amdqp_act_slot));
    EXPECT_EQ(p->hdr.max_slots, AMDQP_ACT_MAX_SLOTS);
    EXPECT_EQ(p->hdr.pid, static_cast<std::uint32_t>(getpid()));
    EXPECT_EQ(p->hdr.start_time, amdqp::detail::proc_start_time(0).value());
    EXPECT_EQ(p->hdr.priority, 2u);
    EXPECT_EQ(std::string(p->hdr.group), "tp-group-with-a-name-longer-tha");  // 31 bytes + NUL
    EXPECT_EQ(p->hdr.num_slots, 0u);
    EXPECT_EQ(p->hdr.coop_state, AMDQP_ACT_COOP_RUNNING);
    EXPECT_EQ(w.page(), p);  // made once
}

TEST(ActivityPage, DefaultPriorityIsNormalAndBadValuesAreIgnored) {
    ::setenv("AMDQP_PRIORITY", "urgent", 1);
    ActivityWriter w;
    amdqp_act_page* p = w.page();
    ::unsetenv("AMDQP_PRIORITY");
    ASSERT_NE(p, nullptr);
    EXPECT_EQ(p->hdr.priority, 7u);
}

TEST(ActivityPage, CloseDropsWhatThisCopyMade) {
    ActivityWriter w;
    ASSERT_NE(w.page(), nullptr);
    ASSERT_EQ(own_pages(), 1u);
    w.close();
    EXPECT_EQ(own_pages(), 0u);
}

TEST(ActivityPage, HoldsFarMoreThanFiftySixQueuesAndCountsTheRest) {
    // Issue 28: the old 4 KiB page held 56 and said nothing about the rest.
    ActivityWriter w;
    SlotInit init;
    for (std::uint32_t i = 0; i < AMDQP_ACT_MAX_SLOTS; i++) {
        init.ring_va = 0x1000 * (i + 1);
        ASSERT_EQ(w.take_slot(init), static_cast<int>(i));
    }
    EXPECT_GT(AMDQP_ACT_MAX_SLOTS, 1000u);
    EXPECT_EQ(w.take_slot(init), -1);
    w.note_untracked(1);
    w.note_untracked(1);
    EXPECT_EQ(w.peek()->hdr.untracked, 2u);
    w.note_untracked(-1);
    EXPECT_EQ(w.peek()->hdr.untracked, 1u);
}

TEST(ActivityPage, SlotsArePublishedAndReused) {
    ActivityWriter w;
    SlotInit init;
    init.gpu_id = 3;
    init.priority = 12;
    init.mechanism = AMDQP_ACT_MECH_COOP;
    init.queue_id = 5;
    init.ring_va = 0x7f0000001000;
    init.read_index_va = 0x7f0000000080;
    int a = w.take_slot(init);
    init.ring_va = 0x7f0000002000;
    int b = w.take_slot(init);
    ASSERT_EQ(a, 0);
    ASSERT_EQ(b, 1);
    amdqp_act_page* p = w.peek();
    EXPECT_EQ(p->hdr.num_slots, 2u);
    EXPECT_EQ(p->slots[0].state, AMDQP_ACT_SLOT_LIVE);
    EXPECT_EQ(p->slots[0].gpu_id, 3u);
    EXPECT_EQ(p->slots[0].priority, 12u);
    EXPECT_EQ(p->slots[0].mechanism, AMDQP_ACT_MECH_COOP);
    EXPECT_EQ(p->slots[0].queue_id, 5u);
    EXPECT_EQ(p->slots[0].ring_va, 0x7f0000001000u);
    EXPECT_EQ(p->slots[0].read_index_va, 0x7f0000000080u);
    EXPECT_EQ(p->slots[1].ring_va, 0x7f0000002000u);

    p->slots[0].doorbells = 9;
    w.release_slot(a);
    EXPECT_EQ(p->slots[0].state, AMDQP_ACT_SLOT_FREE);
    // Fill every never-used slot; only then is the freed one reused, zeroed.
    for (std::uint32_t i = 2; i < AMDQP_ACT_MAX_SLOTS; i++)
        ASSERT_EQ(w.take_slot(init), static_cast<int>(i));
    EXPECT_EQ(w.take_slot(init), 0);
    EXPECT_EQ(p->slots[0].doorbells, 0u);
    EXPECT_EQ(w.take_slot(init), -1);  // full
    EXPECT_EQ(p->hdr.num_slots, AMDQP_ACT_MAX_SLOTS);
}

TEST(ActivityPage, ConcurrentSlotTakersGetDistinctSlots) {
    ActivityWriter w;
    std::vector<std::thread> threads;
    std::vector<int> got(AMDQP_ACT_MAX_SLOTS, -2);
    constexpr std::uint32_t kThreads = 8;
    for (std::uint32_t t = 0; t < kThreads; t++)
        threads.emplace_back([&, t] {
            for (std::uint32_t i = t; i < AMDQP_ACT_MAX_SLOTS; i += kThreads) {
                SlotInit init;
                init.ring_va = 0x1000 * (i + 1);
                got[i] = w.take_slot(init);
            }
        });
    for (auto& t : threads)
        t.join();
    std::vector<bool> seen(AMDQP_ACT_MAX_SLOTS, false);
    for (int i : got) {
        ASSERT_GE(i, 0);
        EXPECT_FALSE(seen[i]) << "slot " << i << " given twice";
        seen[i] = true;
    }
}

TEST(ActivityPage, SecondCopyInTheProcessJoinsTheSamePage) {
    ActivityWriter first;
    ActivityWriter second;
    amdqp_act_page* a = first.page();
    amdqp_act_page* b = second.page();
    ASSERT_NE(a, nullptr);
    ASSERT_NE(b, nullptr);
    EXPECT_TRUE(first.created());
    EXPECT_FALSE(second.created());
    EXPECT_NE(a, b);  // two mappings...
    std::atomic_ref<std::uint64_t>(a->hdr.hint_begin).fetch_add(3);
    EXPECT_EQ(std::atomic_ref<std::uint64_t>(b->hdr.hint_begin).load(), 3u);  // ...one file
    EXPECT_EQ(own_pages(), 1u);
    // The joiner never closes the creator's page.
    second.close();
    EXPECT_EQ(own_pages(), 1u);
}

TEST(ActivityPage, CopiesStartingTogetherShareOnePage) {
    ActivityWriter w1, w2, w3, w4;
    ActivityWriter* ws[] = {&w1, &w2, &w3, &w4};
    std::atomic<int> go{0};
    std::vector<std::thread> threads;
    for (ActivityWriter* w : ws)
        threads.emplace_back([&, w] {
            while (!go.load()) {
            }
            std::atomic_ref<std::uint64_t>(w->page()->hdr.hint_begin).fetch_add(1);
        });
    go = 1;
    for (auto& t : threads)
        t.join();
    int creators = 0;
    for (ActivityWriter* w : ws) {
        ASSERT_NE(w->peek(), nullptr);
        creators += w->created();
        EXPECT_EQ(w->peek()->hdr.hint_begin, 4u);
    }
    EXPECT_EQ(creators, 1);
}

TEST(ActivityPage, ForkChildMakesItsOwnPageAndLeavesTheParentsAlone) {
    ActivityWriter w;
    amdqp_act_page* p = w.page();
    ASSERT_NE(p, nullptr);
    p->hdr.hint_begin = 5;

    int pipefd[2];
    ASSERT_EQ(pipe(pipefd), 0);
    pid_t child = fork();
    if (child == 0) {
        // The inherited mapping is gone; the child's own page appears.
        amdqp_act_page* mine = w.page();
        bool ok = mine && mine->hdr.pid == static_cast<std::uint32_t>(getpid()) && w.created();
        if (ok)
            std::atomic_ref<std::uint64_t>(mine->hdr.hint_begin).fetch_add(100);
        // Only its own page is open: the parent's fd went with the mapping.
        bool one = own_pages() == 1;
        w.close();
        ok = ok && one && own_pages() == 0;
        char c = ok ? 'y' : 'n';
        (void)!::write(pipefd[1], &c, 1);
        _exit(0);
    }
    char c = 0;
    ASSERT_EQ(::read(pipefd[0], &c, 1), 1);
    int status;
    waitpid(child, &status, 0);
    ::close(pipefd[0]);
    ::close(pipefd[1]);
    EXPECT_EQ(c, 'y');
    EXPECT_EQ(p->hdr.hint_begin, 5u);
    EXPECT_EQ(p->hdr.pid, static_cast<std::uint32_t>(getpid()));
    EXPECT_EQ(own_pages(), 1u);
}

TEST(ActivityPage, NothingIsLeftBehindBySigkill) {
    // Issue 28: a SIGKILLed process left /dev/shm/amdqp-act.PID for good.
    // A memfd dies with its last reference: count the shared memory the
    // system has before and after (memfds live on the internal shm mount).
    int ready[2];
    ASSERT_EQ(pipe(ready), 0);
    pid_t child = fork();
    if (child == 0) {
        ActivityWriter w;
        char c = w.page() ? 'y' : 'n';
        (void)!::write(ready[1], &c, 1);
        for (;;)
            pause();
    }
    amdqp_test::Child guard(child);
    char c = 0;
    ASSERT_EQ(::read(ready[0], &c, 1), 1);
    ASSERT_EQ(c, 'y');
    std::vector<int> fds = amdqp::detail::page_fds(child);
    ASSERT_EQ(fds.size(), 1u);
    // Hold a read-only reference as a reader would, then kill the writer.
    int ref = ::open(("/proc/" + std::to_string(child) + "/fd/" + std::to_string(fds[0])).c_str(),
                     O_RDONLY | O_CLOEXEC);
    ASSERT_GE(ref, 0);
    struct stat st;
    ASSERT_EQ(fstat(ref, &st), 0);
    EXPECT_EQ(st.st_nlink, 0u);  // no name anywhere: nothing to clean up, ever
    guard.reap();
    ::close(ref);  // the last reference: the memory is gone
    EXPECT_TRUE(amdqp::detail::page_fds(child).empty());
    ::close(ready[0]);
    ::close(ready[1]);
    // And no file of the old scheme was made anywhere.
    struct stat old;
    EXPECT_NE(::stat(("/dev/shm/amdqp-act." + std::to_string(child)).c_str(), &old), 0);
}

}  // namespace
