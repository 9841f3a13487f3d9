// SPDX-License-Identifier: MIT
//
// The hint API (amdqp/hint.h): counters in the process's activity page,
// made at the first hint, never an error the application notices.
#include <gtest/gtest.h>
#include <sys/resource.h>

#include <dlfcn.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <functional>
#include <string>
#include <thread>
#include <vector>

#include <amdqp/amdqp.h>
#include <amdqp/hint.h>
#include <amdqp/activity.hpp>
#include <amdqp/amdqp.hpp>

#include "activity_proc.hpp"
#include "activity_test_util.hpp"

namespace {

using amdqp::activity::Page;

// The process's page lives in this directory for the whole test program
// (the writer reads AMDQP_RUNTIME_DIR once, at the first hint).
const amdqp_test::TempDir& hint_dir() {
    static amdqp_test::TempDir dir;
    static bool set = ::setenv("AMDQP_RUNTIME_DIR", dir.path().c_str(), 1) == 0;
    (void)set;
    return dir;
}

amdqp::activity::Snapshot my_page() {
    return Page::open(getpid(), Page::Access::read).snapshot();
}

// Runs @body in a child process; returns its exit status (or -1).
int in_child(const std::function<int()>& body) {
    pid_t pid = fork();
    if (pid == 0)
        _exit(body());
    int status;
    if (waitpid(pid, &status, 0) != pid || !WIFEXITED(status))
        return -1;
    return WEXITSTATUS(status);
}

TEST(Hint, BeginAndEndNest) {
    hint_dir();
    ASSERT_EQ(amdqp_busy_begin(), AMDQP_OK);
    auto before = my_page().header;
    ASSERT_EQ(amdqp_busy_begin(), AMDQP_OK);
    auto snap = my_page();
    EXPECT_EQ(snap.header.hint_begin, before.hint_begin + 1);
    EXPECT_TRUE(snap.hinted_busy());
    EXPECT_GE(snap.header.hint_last_ns, before.hint_last_ns);
    EXPECT_EQ(amdqp_busy_end(), AMDQP_OK);
    EXPECT_TRUE(my_page().hinted_busy());  // still inside the outer one
    EXPECT_EQ(amdqp_busy_end(), AMDQP_OK);
    snap = my_page();
    EXPECT_FALSE(snap.hinted_busy());
    EXPECT_EQ(snap.header.hint_end, snap.header.hint_begin);
}

TEST(Hint, EndWithoutBeginIsRefusedAndLeavesTheProcessIdle) {
    hint_dir();
    ASSERT_EQ(amdqp_busy_begin(), AMDQP_OK);
    ASSERT_EQ(amdqp_busy_end(), AMDQP_OK);
    auto before = my_page().header;
    EXPECT_EQ(amdqp_busy_end(), AMDQP_ERR_INVALID);
    auto after = my_page().header;
    EXPECT_EQ(after.hint_end, before.hint_end);
    EXPECT_FALSE(my_page().hinted_busy());
}

TEST(Hint, CppScopeMarksBusyForItsLifetime) {
    hint_dir();
    {
        amdqp::BusyScope busy;
        EXPECT_TRUE(my_page().hinted_busy());
    }
    EXPECT_FALSE(my_page().hinted_busy());
}

TEST(Hint, ConcurrentHintsAreAllCounted) {
    hint_dir();
    ASSERT_EQ(amdqp_busy_begin(), AMDQP_OK);  // the page exists from here on
    ASSERT_EQ(amdqp_busy_end(), AMDQP_OK);
    auto before = my_page().header;
    std::vector<std::thread> threads;
    for (int t = 0; t < 4; t++)
        threads.emplace_back([] {
            for (int i = 0; i < 10000; i++) {
                amdqp_busy_begin();
                amdqp_busy_end();
            }
        });
    for (auto& t : threads)
        t.join();
    auto after = my_page().header;
    EXPECT_EQ(after.hint_begin - before.hint_begin, 40000u);
    EXPECT_EQ(after.hint_end - before.hint_end, 40000u);
}

TEST(Hint, WithoutAPlaceForThePageItFailsQuietly) {
    int status = in_child([] {
        // A child that has made no page yet and can open no more files.
        int err_pipe[2];
        if (pipe(err_pipe) != 0)
            return 10;
        dup2(err_pipe[1], 2);
        struct rlimit rl;
        getrlimit(RLIMIT_NOFILE, &rl);
        rl.rlim_cur = 0;
        if (setrlimit(RLIMIT_NOFILE, &rl) != 0)
            return 13;
        int a = amdqp_busy_begin();
        int b = amdqp_busy_end();
        ::close(err_pipe[1]);
        ::close(2);
        char buf[16];
        ssize_t n = ::read(err_pipe[0], buf, sizeof(buf));
        if (n != 0)
            return 11;  // printed something
        return a < 0 && b < 0 ? 0 : 12;
    });
    EXPECT_EQ(status, 0);
}

TEST(Hint, ForkChildHintsGoToItsOwnPage) {
    hint_dir();
    ASSERT_EQ(amdqp_busy_begin(), AMDQP_OK);
    ASSERT_EQ(amdqp_busy_end(), AMDQP_OK);
    auto before = my_page().header;
    int status = in_child([] {
        if (amdqp_busy_begin() != AMDQP_OK)
            return 10;
        try {
            auto mine = Page::open(getpid(), Page::Access::read).snapshot();
            if (mine.header.hint_begin != 1 || mine.header.pid != static_cast<unsigned>(getpid()))
                return 11;
        } catch (const std::exception&) {
            return 13;
        }
        std::exit(0);  // the child's page goes with it
    });
    EXPECT_EQ(status, 0);
    auto after = my_page().header;
    EXPECT_EQ(after.hint_begin, before.hint_begin);
    EXPECT_EQ(after.hint_end, before.hint_end);
    // This process still holds its one page.
    EXPECT_EQ(amdqp::detail::page_fds(0).size(), 1u);
}

#ifdef AMDQP_TEST_SHARED_LIB
// Three copies of the hint code in one process (this program's static copy
// and libamdqp.so loaded from two paths) write one page.
TEST(Hint, LibraryLoadedTwiceSharesOnePage) {
    amdqp_test::TempDir dir;
    std::string copy_a = dir.path() + "/a/libamdqp.so";
    std::string copy_b = dir.path() + "/b/libamdqp.so";
    std::filesystem::create_directories(dir.path() + "/a");
    std::filesystem::create_directories(dir.path() + "/b");
    std::filesystem::copy_file(AMDQP_TEST_SHARED_LIB, copy_a);
    std::filesystem::copy_file(AMDQP_TEST_SHARED_LIB, copy_b);
    std::string pages = dir.path() + "/pages";
    std::filesystem::create_directories(pages);

    int status = in_child([&] {
        ::setenv("AMDQP_RUNTIME_DIR", pages.c_str(), 1);
        void* a = dlopen(copy_a.c_str(), RTLD_NOW | RTLD_LOCAL);
        void* b = dlopen(copy_b.c_str(), RTLD_NOW | RTLD_LOCAL);
        if (!a || !b || a == b)
            return 10;
        using hint_fn = int (*)();
        auto begin_a = reinterpret_cast<hint_fn>(dlsym(a, "amdqp_busy_begin"));
        auto begin_b = reinterpret_cast<hint_fn>(dlsym(b, "amdqp_busy_begin"));
        if (!begin_a || !begin_b || begin_a == begin_b)
            return 11;
        if (amdqp_busy_begin() != 0 || begin_a() != 0 || begin_b() != 0)
            return 12;
        if (amdqp::detail::page_fds(0).size() != 1)
            return 13;
        auto snap = Page::open(getpid(), Page::Access::read).snapshot();
        return snap.header.hint_begin == 3 ? 0 : 14;
    });
    EXPECT_EQ(status, 0);
}
#endif

}  // namespace
