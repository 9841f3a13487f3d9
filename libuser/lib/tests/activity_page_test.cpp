// SPDX-License-Identifier: MIT
//
// The writer side: how a process makes, shares and leaves its page.
#include <gtest/gtest.h>

#include <sys/mman.h>
#include <sys/stat.h>

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
using amdqp_test::TempDir;

bool exists(const std::string& path) {
    struct stat st;
    return ::stat(path.c_str(), &st) == 0;
}

TEST(ActivityPage, CreatedOnFirstUseWithItsIdentity) {
    TempDir dir;
    ::setenv("AMDQP_PRIORITY", "low", 1);
    ::setenv("AMDQP_GROUP", "tp-group-with-a-name-longer-than-31-bytes", 1);
    ActivityWriter w(dir.path());
    EXPECT_FALSE(exists(dir.page(getpid())));  // nothing before the first need
    amdqp_act_page* p = w.page();
    ::unsetenv("AMDQP_PRIORITY");
    ::unsetenv("AMDQP_GROUP");
    ASSERT_NE(p, nullptr) << strerror(w.error());
    EXPECT_TRUE(w.created());
    EXPECT_EQ(w.path(), dir.page(getpid()));

    struct stat st;
    ASSERT_EQ(::stat(w.path().c_str(), &st), 0);
    EXPECT_TRUE(S_ISREG(st.st_mode));
    EXPECT_EQ(st.st_mode & 0777, 0600u);
    EXPECT_EQ(st.st_uid, geteuid());
    EXPECT_EQ(st.st_size, static_cast<off_t>(AMDQP_ACT_PAGE_SIZE));

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
    TempDir dir;
    ::setenv("AMDQP_PRIORITY", "urgent", 1);
    ActivityWriter w(dir.path());
    amdqp_act_page* p = w.page();
    ::unsetenv("AMDQP_PRIORITY");
    ASSERT_NE(p, nullptr);
    EXPECT_EQ(p->hdr.priority, 7u);
}

TEST(ActivityPage, CloseUnlinksWhatThisCopyMade) {
    TempDir dir;
    ActivityWriter w(dir.path());
    ASSERT_NE(w.page(), nullptr);
    ASSERT_TRUE(exists(dir.page(getpid())));
    w.close();
    EXPECT_FALSE(exists(dir.page(getpid())));
}

TEST(ActivityPage, SlotsArePublishedAndReused) {
    TempDir dir;
    ActivityWriter w(dir.path());
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
    TempDir dir;
    ActivityWriter w(dir.path());
    std::vector<std::thread> threads;
    std::vector<int> got(AMDQP_ACT_MAX_SLOTS, -2);
    for (std::uint32_t t = 0; t < AMDQP_ACT_MAX_SLOTS; t++)
        threads.emplace_back([&, t] {
            SlotInit init;
            init.ring_va = 0x1000 * (t + 1);
            got[t] = w.take_slot(init);
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
    TempDir dir;
    ActivityWriter first(dir.path());
    ActivityWriter second(dir.path());
    amdqp_act_page* a = first.page();
    amdqp_act_page* b = second.page();
    ASSERT_NE(a, nullptr);
    ASSERT_NE(b, nullptr);
    EXPECT_TRUE(first.created());
    EXPECT_FALSE(second.created());
    EXPECT_NE(a, b);  // two mappings...
    std::atomic_ref<std::uint64_t>(a->hdr.hint_begin).fetch_add(3);
    EXPECT_EQ(std::atomic_ref<std::uint64_t>(b->hdr.hint_begin).load(), 3u);  // ...one file
    // The joiner never removes the creator's file.
    second.close();
    EXPECT_TRUE(exists(dir.page(getpid())));
}

TEST(ActivityPage, CopiesStartingTogetherShareOnePage) {
    TempDir dir;
    ActivityWriter w1(dir.path()), w2(dir.path()), w3(dir.path()), w4(dir.path());
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

TEST(ActivityPage, LeftOverFileOfThisPidIsReplaced) {
    // What an exec leaves: a finished page of this pid that nobody here maps.
    TempDir dir;
    amdqp_act_page old = amdqp_test::valid_page(getpid(), 1);
    old.hdr.num_slots = 3;
    old.slots[0].state = AMDQP_ACT_SLOT_LIVE;
    ASSERT_TRUE(amdqp_test::write_page(dir.page(getpid()), &old, sizeof(old)));
    ActivityWriter w(dir.path());
    amdqp_act_page* p = w.page();
    ASSERT_NE(p, nullptr) << strerror(w.error());
    EXPECT_TRUE(w.created());
    EXPECT_EQ(p->hdr.num_slots, 0u);
    EXPECT_EQ(p->slots[0].state, AMDQP_ACT_SLOT_FREE);
    EXPECT_EQ(p->hdr.start_time, amdqp::detail::proc_start_time(0).value());
}

TEST(ActivityPage, HalfWrittenLeftOverIsReplacedAfterAWait) {
    TempDir dir;
    char junk[100] = {};
    ASSERT_TRUE(amdqp_test::write_page(dir.page(getpid()), junk, sizeof(junk)));
    ActivityWriter w(dir.path());
    ASSERT_NE(w.page(), nullptr) << strerror(w.error());
    EXPECT_TRUE(w.created());
}

TEST(ActivityPage, SymlinkUnderOurNameIsNotFollowed) {
    TempDir dir;
    std::string target = dir.path() + "/target";
    ASSERT_TRUE(amdqp_test::write_page(target, "x", 1));
    ASSERT_EQ(::symlink(target.c_str(), dir.page(getpid()).c_str()), 0);
    ActivityWriter w(dir.path());
    EXPECT_EQ(w.page(), nullptr);
    EXPECT_EQ(w.error(), ELOOP);
    struct stat st;
    ASSERT_EQ(::stat(target.c_str(), &st), 0);
    EXPECT_EQ(st.st_size, 1);  // untouched
}

TEST(ActivityPage, UnwritableDirectoryFailsQuietlyAndOnce) {
    ActivityWriter w("/nonexistent/amdqp-dir");
    EXPECT_EQ(w.page(), nullptr);
    EXPECT_EQ(w.error(), ENOENT);
    EXPECT_EQ(w.take_slot(SlotInit{}), -1);
    EXPECT_EQ(w.page(), nullptr);  // no retry storm: same answer, no new attempt
}

TEST(ActivityPage, ForkChildMakesItsOwnPageAndLeavesTheParentsAlone) {
    TempDir dir;
    ActivityWriter w(dir.path());
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
        bool had_file = exists(dir.page(getpid()));
        w.close();  // what exit does for the process's writer
        ok = ok && had_file && !exists(dir.page(getpid()));
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
    EXPECT_TRUE(exists(dir.page(getpid())));
}

TEST(ActivityPage, FileOfAnotherUserIsNeitherUsedNorRemoved) {
    if (geteuid() != 0)
        GTEST_SKIP() << "needs root to make a file of another user";
    TempDir dir;
    amdqp_act_page old = amdqp_test::valid_page(getpid(), 1);
    ASSERT_TRUE(amdqp_test::write_page(dir.page(getpid()), &old, sizeof(old)));
    ASSERT_EQ(::chown(dir.page(getpid()).c_str(), 12345, 12345), 0);
    ActivityWriter w(dir.path());
    EXPECT_EQ(w.page(), nullptr);
    EXPECT_EQ(w.error(), EEXIST);
    EXPECT_TRUE(exists(dir.page(getpid())));
}

}  // namespace
