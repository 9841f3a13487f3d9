// SPDX-License-Identifier: MIT
//
// The reader side: what the policy sees of a page, what it refuses, and the
// cooperative request/ack handshake.
#include <gtest/gtest.h>

#include <linux/futex.h>
#include <sched.h>
#include <sys/stat.h>
#include <sys/syscall.h>

#include <sys/wait.h>
#include <algorithm>
#include <atomic>
#include <cerrno>
#include <chrono>
#include <climits>
#include <cstring>
#include <thread>
#include <vector>

#include <amdqp/activity.hpp>

#include "activity_page.hpp"
#include "activity_proc.hpp"
#include "activity_test_util.hpp"

namespace {

using amdqp::activity::Page;
using amdqp::activity::PageError;
using amdqp::activity::Problem;
using amdqp::detail::ActivityWriter;
using amdqp::detail::SlotInit;
using amdqp_test::Child;
using amdqp_test::TempDir;
using namespace std::chrono_literals;

std::uint64_t my_start_time() {
    return amdqp::detail::proc_start_time(0).value();
}

Problem open_problem(pid_t pid) {
    try {
        Page::open(pid, Page::Access::read);
    } catch (const PageError& e) {
        return e.problem();
    }
    return Problem::none;
}

TEST(ActivityReader, SeesWhatTheWriterPublishes) {
    ActivityWriter w;
    SlotInit init;
    init.gpu_id = 2;
    init.priority = 12;
    init.mechanism = AMDQP_ACT_MECH_AMDQP;
    init.queue_id = 4;
    init.ring_va = 0x7000;
    int i = w.take_slot(init);
    init.ring_va = 0x9000;
    init.queue_id = UINT32_MAX;
    int j = w.take_slot(init);
    ASSERT_EQ(i, 0);
    ASSERT_EQ(j, 1);
    w.slot(i)->doorbells = 3;
    w.slot(i)->write_index = 17;
    w.slot(i)->demand_wgs = 96;
    w.slot(i)->last_doorbell_ns = 5ull << AMDQP_ACT_DEMAND_EPOCH_SHIFT;
    w.set_flags(AMDQP_ACT_F_PRELOAD);
    std::strcpy(w.page()->hdr.group, "tp0");

    Page page = Page::open(getpid(), Page::Access::read);
    EXPECT_EQ(page.pid(), getpid());
    EXPECT_EQ(page.liveness(), Problem::none);
    auto snap = page.snapshot();
    EXPECT_EQ(snap.header.flags, AMDQP_ACT_F_PRELOAD);
    EXPECT_FALSE(snap.coop_capable());
    EXPECT_EQ(snap.group(), "tp0");
    ASSERT_EQ(snap.slots.size(), 2u);
    EXPECT_EQ(snap.slots[0].ring_va, 0x7000u);
    EXPECT_EQ(snap.slots[0].doorbells, 3u);
    EXPECT_EQ(snap.slots[0].write_index, 17u);
    EXPECT_EQ(snap.slots[0].demand_wgs, 96u);
    EXPECT_EQ(snap.slots[0].demand_at(6ull << AMDQP_ACT_DEMAND_EPOCH_SHIFT), 48u);
    EXPECT_EQ(snap.slots[1].demand_wgs, 0u);
    EXPECT_EQ(snap.slots[0].queue_id, 4u);
    EXPECT_TRUE(snap.slots[0].known_queue());
    EXPECT_FALSE(snap.slots[1].queue_id.has_value());

    w.release_slot(i);
    snap = page.snapshot();
    ASSERT_EQ(snap.slots.size(), 1u);
    EXPECT_EQ(snap.slots[0].index, 1u);
    EXPECT_EQ(snap.slots[0].ring_va, 0x9000u);
}

TEST(ActivityReader, ReadsTheReadIndexInTheOwner) {
    ActivityWriter w;
    static std::uint64_t read_dispatch_id = 41;
    SlotInit init;
    init.read_index_va = reinterpret_cast<std::uint64_t>(&read_dispatch_id);
    ASSERT_EQ(w.take_slot(init), 0);
    Page page = Page::open(getpid(), Page::Access::read);
    auto snap = page.snapshot();
    ASSERT_EQ(snap.slots.size(), 1u);
    EXPECT_EQ(page.read_index(snap.slots[0]), 41u);
    amdqp::activity::Slot none;
    EXPECT_FALSE(page.read_index(none));
}

TEST(ActivityReader, ReadsEveryReadIndexInOneGoAndSkipsTheUnreadable) {
    ActivityWriter w;
    static std::uint64_t ids[3] = {7, 8, 9};
    for (std::uint64_t& id : ids) {
        SlotInit init;
        init.read_index_va = reinterpret_cast<std::uint64_t>(&id);
        ASSERT_GE(w.take_slot(init), 0);
    }
    SlotInit unmapped;  // page 0: never mapped, so the kernel stops there
    unmapped.read_index_va = 8;
    ASSERT_GE(w.take_slot(unmapped), 0);
    SlotInit none;  // no read index at all
    ASSERT_GE(w.take_slot(none), 0);
    Page page = Page::open(getpid(), Page::Access::read);
    auto snap = page.snapshot();
    ASSERT_EQ(snap.slots.size(), 5u);
    // The unreadable one in the middle: those after it are still read.
    std::swap(snap.slots[1], snap.slots[3]);
    auto got = page.read_indexes(snap.slots);
    ASSERT_EQ(got.size(), 5u);
    EXPECT_EQ(got[0], 7u);
    EXPECT_FALSE(got[1].has_value());
    EXPECT_EQ(got[2], 9u);
    EXPECT_EQ(got[3], 8u);
    EXPECT_FALSE(got[4].has_value());
    EXPECT_TRUE(page.read_indexes({}).empty());
}

TEST(ActivityReader, RefusesOtherFormats) {
    pid_t me = getpid();
    amdqp_test::MemPage page;
    auto write = [&](const amdqp_act_page& p, std::size_t len = sizeof(amdqp_act_page)) {
        ASSERT_TRUE(page.set(&p, len));
    };
    amdqp_act_page p = amdqp_test::valid_page(me, my_start_time());

    write(p);
    EXPECT_EQ(open_problem(me), Problem::none);

    amdqp_act_page bad = p;
    bad.hdr.version = AMDQP_ACT_VERSION + 1;
    write(bad);
    EXPECT_EQ(open_problem(me), Problem::bad_version);

    bad = p;
    bad.hdr.magic = 0x12345678;
    write(bad);
    EXPECT_EQ(open_problem(me), Problem::bad_magic);

    bad = p;
    bad.hdr.slot_size = sizeof(amdqp_act_slot) - 8;  // smaller than this reader's
    write(bad);
    EXPECT_EQ(open_problem(me), Problem::bad_layout);

    bad = p;
    bad.hdr.num_slots = AMDQP_ACT_MAX_SLOTS + 1;
    write(bad);
    EXPECT_EQ(open_problem(me), Problem::bad_layout);

    bad = p;
    bad.hdr.max_slots = AMDQP_ACT_MAX_SLOTS + 1;  // more slots than the page holds
    write(bad);
    EXPECT_EQ(open_problem(me), Problem::bad_layout);

    bad = p;
    bad.hdr.size = 2048;
    write(bad);
    EXPECT_EQ(open_problem(me), Problem::too_small);

    write(p, 1000);  // truncated file
    EXPECT_EQ(open_problem(me), Problem::too_small);

    bad = p;
    bad.hdr.pid = me + 1;
    write(bad);
    EXPECT_EQ(open_problem(me), Problem::pid_mismatch);

    EXPECT_EQ(open_problem(me + 100000), Problem::not_a_page);

    // Finding 7 of issue 25: a page claiming 16,376 slots (a 1 MiB file)
    // made adoption take seconds. Nothing past the ABI's size is read.
    std::vector<unsigned char> huge(1u << 20);
    amdqp_act_header hh = p.hdr;
    hh.size = static_cast<std::uint32_t>(huge.size());
    hh.max_slots = 16376;
    hh.num_slots = 16376;
    std::memcpy(huge.data(), &hh, sizeof(hh));
    ASSERT_TRUE(page.set(huge.data(), huge.size()));
    EXPECT_EQ(open_problem(me), Problem::too_small);
    // The same claim in a page of the right size.
    bad = p;
    bad.hdr.max_slots = 16376;
    bad.hdr.num_slots = 16376;
    write(bad);
    EXPECT_EQ(open_problem(me), Problem::bad_layout);

    // Unsealed: it could shrink under a reader's mapping (SIGBUS).
    ASSERT_TRUE(page.set(&p, sizeof(p), false));
    EXPECT_EQ(open_problem(me), Problem::not_a_page);
}

TEST(ActivityReader, LargerSlotsOfANewerMinorVersionAreRead) {
    // A newer writer may grow slots (new fields in what is reserved today);
    // this reader walks them by slot_size and reads the fields it knows.
    pid_t me = getpid();
    struct Bigger {
        amdqp_act_header hdr;
        unsigned char slots[508][128];
    };
    static Bigger big{};
    amdqp_act_page p = amdqp_test::valid_page(me, my_start_time());
    big.hdr = p.hdr;
    big.hdr.version_minor = 7;
    big.hdr.size = sizeof(big);
    big.hdr.slot_size = 128;
    big.hdr.max_slots = 508;
    big.hdr.num_slots = 2;
    amdqp_act_slot s{};
    s.state = AMDQP_ACT_SLOT_LIVE;
    s.ring_va = 0xabc000;
    std::memcpy(big.slots[1], &s, sizeof(s));
    amdqp_test::MemPage page(&big, sizeof(big));
    auto snap = Page::open(me, Page::Access::read).snapshot();
    ASSERT_EQ(snap.slots.size(), 1u);
    EXPECT_EQ(snap.slots[0].index, 1u);
    EXPECT_EQ(snap.slots[0].ring_va, 0xabc000u);
}

TEST(ActivityReader, TellsDeadReusedAndReplacedApart) {
    // A page handed over by a process that is gone.
    pid_t dead = amdqp_test::dead_pid();
    amdqp_act_page p = amdqp_test::valid_page(dead, 123);
    amdqp_test::MemPage held(&p, sizeof(p));
    EXPECT_EQ(Page::adopt(dead, ::dup(held.fd()), Page::Access::read, 123).liveness(),
              Problem::dead);

    // This pid, another start time: the pid was reused.
    pid_t me = getpid();
    p = amdqp_test::valid_page(me, my_start_time());
    amdqp_test::MemPage mine(&p, sizeof(p));
    EXPECT_EQ(Page::adopt(me, ::dup(mine.fd()), Page::Access::read, my_start_time() + 1).liveness(),
              Problem::pid_reused);

    // This very process, but it no longer holds the page: it exec'd since.
    Page page = Page::adopt(me, ::dup(mine.fd()), Page::Access::read, my_start_time());
    EXPECT_EQ(page.liveness(), Problem::none);
    mine.reset();
    EXPECT_EQ(page.liveness(), Problem::replaced);
}

TEST(ActivityReader, ExecLeavesAPageTheReaderRecognisesAsReplaced) {
    int up[2], down[2];
    ASSERT_EQ(pipe(up), 0);
    ASSERT_EQ(pipe(down), 0);
    pid_t child = fork();
    if (child == 0) {
        ActivityWriter w;
        char c = w.page() ? 'y' : 'n';
        (void)!::write(up[1], &c, 1);
        (void)!::read(down[0], &c, 1);
        // exec keeps the pid but closes the page (close-on-exec).
        execl("/bin/sleep", "sleep", "30", static_cast<char*>(nullptr));
        _exit(127);
    }
    char c = 0;
    ASSERT_EQ(::read(up[0], &c, 1), 1);
    ASSERT_EQ(c, 'y');
    Page page = Page::open(child, Page::Access::read);
    EXPECT_EQ(page.liveness(), Problem::none);
    (void)!::write(down[1], &c, 1);
    Problem seen = Problem::none;
    for (int i = 0; i < 500 && seen == Problem::none; i++) {
        seen = page.liveness();
        std::this_thread::sleep_for(10ms);
    }
    kill(child, SIGKILL);
    int status;
    waitpid(child, &status, 0);
    for (int fd : {up[0], up[1], down[0], down[1]})
        ::close(fd);
    EXPECT_EQ(seen, Problem::replaced);
    EXPECT_THROW(Page::open(child, Page::Access::read), PageError);
}

TEST(ActivityReader, ScanFindsEachPageOnceUnderItsOwner) {
    ActivityWriter w;
    ASSERT_NE(w.page(), nullptr);
    int ready[2];
    ASSERT_EQ(pipe(ready), 0);
    pid_t child = fork();
    if (child == 0) {
        ActivityWriter cw;
        char c = cw.page() ? 'y' : 'n';
        (void)!::write(ready[1], &c, 1);
        for (;;)
            pause();
    }
    Child guard(child);
    char c = 0;
    ASSERT_EQ(::read(ready[0], &c, 1), 1);
    ASSERT_EQ(c, 'y');
    // Hold the child's page as amdqpd holds registered ones: it is still
    // the child's, and listed once.
    Page held = Page::open(child, Page::Access::read);
    int extra = ::open(("/proc/" + std::to_string(child) + "/fd/" +
                        std::to_string(amdqp::detail::page_fds(child).at(0)))
                           .c_str(),
                       O_RDONLY | O_CLOEXEC);
    ASSERT_GE(extra, 0);
    auto count = [](const amdqp::activity::ScanResult& r, pid_t pid) {
        return std::count_if(r.pages.begin(), r.pages.end(),
                             [&](const Page& p) { return p.pid() == pid; });
    };
    auto r = amdqp::activity::scan();
    EXPECT_EQ(count(r, getpid()), 1);
    EXPECT_EQ(count(r, child), 1);
    guard.reap();
    r = amdqp::activity::scan();
    EXPECT_EQ(count(r, child), 0);
    EXPECT_EQ(count(r, getpid()), 1);
    ::close(extra);
    ::close(ready[0]);
    ::close(ready[1]);
}

TEST(ActivityReader, NsPidLineParsing) {
    using amdqp::detail::status_text_has_ns_pid;
    const char* status = "Name:\tx\nTgid:\t4321\nNSpid:\t4321\t7\nNSpgid:\t1\n";
    EXPECT_TRUE(status_text_has_ns_pid(status, 4321));
    EXPECT_TRUE(status_text_has_ns_pid(status, 7));
    EXPECT_FALSE(status_text_has_ns_pid(status, 1)) << "NSpgid is not NSpid";
    EXPECT_FALSE(status_text_has_ns_pid(status, 432));
    EXPECT_FALSE(status_text_has_ns_pid("Name:\tx\n", 1));
}

// A process in a pid namespace of its own (a container without hostPID)
// writes the pid it sees into its page; the reader, in the host's
// namespace, finds the page under the host pid all the same.
TEST(ActivityReader, PageOfAProcessInItsOwnPidNamespaceIsFound) {
    if (geteuid() != 0)
        GTEST_SKIP() << "needs root for a new pid namespace";
    // One pipe per writer: the inner process's verdict and the outer's pid
    // report would interleave in a shared one.
    int ready[2], pid_pipe[2];
    ASSERT_EQ(pipe(ready), 0);
    ASSERT_EQ(pipe(pid_pipe), 0);
    pid_t outer = fork();
    if (outer == 0) {
        if (unshare(CLONE_NEWPID) != 0)
            _exit(3);
        pid_t inner = fork();  // pid 1 of the new namespace
        if (inner == 0) {
            ActivityWriter cw;
            char c = cw.page() && getpid() == 1 ? 'y' : 'n';
            (void)!::write(ready[1], &c, 1);
            for (;;)
                pause();
        }
        pid_t host = inner;  // as this (the parent's) namespace sees it
        (void)!::write(pid_pipe[1], &host, sizeof(host));
        waitpid(inner, nullptr, 0);
        _exit(0);
    }
    Child guard(outer);
    pid_t host = 0;
    char c = 0;
    ASSERT_EQ(::read(pid_pipe[0], &host, sizeof(host)), static_cast<ssize_t>(sizeof(host)));
    guard.wait_for(host);
    ASSERT_EQ(::read(ready[0], &c, 1), 1);
    ASSERT_EQ(c, 'y');
    ASSERT_GT(host, 1);
    EXPECT_NO_THROW({
        Page p = Page::open(host, Page::Access::read);
        EXPECT_EQ(p.pid(), host);
        EXPECT_NO_THROW(p.snapshot());
        EXPECT_EQ(p.liveness(), amdqp::activity::Problem::none);
    });
    auto r = amdqp::activity::scan();
    EXPECT_EQ(std::count_if(r.pages.begin(), r.pages.end(),
                            [&](const Page& p) { return p.pid() == host; }),
              1);
    for (int fd : {ready[0], ready[1], pid_pipe[0], pid_pipe[1]})
        ::close(fd);
}

TEST(ActivityReader, AnotherUserCannotOpenThePage) {
    if (geteuid() != 0)
        GTEST_SKIP() << "needs root to become another user";
    ActivityWriter w;
    ASSERT_NE(w.page(), nullptr);
    const pid_t owner = getpid();
    const std::string path = w.path();
    pid_t child = fork();
    if (child == 0) {
        if (setresgid(65534, 65534, 65534) != 0 || setresuid(65534, 65534, 65534) != 0)
            _exit(2);
        // Neither through the reader nor through the link itself.
        bool refused = false;
        try {
            Page::open(owner, Page::Access::read);
        } catch (const PageError&) {
            refused = true;
        }
        const bool link_refused = ::open(path.c_str(), O_RDONLY) < 0;
        _exit(refused && link_refused ? 0 : 1);
    }
    int status = 0;
    waitpid(child, &status, 0);
    EXPECT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0) << status;
}

long futex(void* addr, int op, std::uint32_t val) {
    return syscall(SYS_futex, addr, op, val, nullptr, nullptr, 0);
}

// Plays the process side of the handshake: waits for coop_seq to move,
// then acks it with the state asked for.
class FakeCoopProcess {
  public:
    explicit FakeCoopProcess(amdqp_act_page* page) : page_(page) {
        thread_ = std::thread([this] { run(); });
    }
    ~FakeCoopProcess() {
        stop_ = true;
        std::atomic_ref<std::uint32_t>(page_->hdr.coop_seq).fetch_add(0);
        futex(&page_->hdr.coop_seq, FUTEX_WAKE, 1);
        thread_.join();
    }

  private:
    void run() {
        std::atomic_ref<std::uint32_t> seq(page_->hdr.coop_seq);
        std::uint32_t done = 0;
        while (!stop_) {
            std::uint32_t s = seq.load(std::memory_order_acquire);
            if (s == done) {
                struct timespec ts = {0, 20000000};
                syscall(SYS_futex, &page_->hdr.coop_seq, FUTEX_WAIT, s, &ts, nullptr, 0);
                continue;
            }
            bool off = page_->hdr.coop_suspend;
            page_->hdr.coop_state = off ? AMDQP_ACT_COOP_SUSPENDED : AMDQP_ACT_COOP_RUNNING;
            page_->hdr.coop_updates += 2;
            std::atomic_ref<std::uint32_t>(page_->hdr.coop_ack_seq)
                .store(s, std::memory_order_release);
            futex(&page_->hdr.coop_ack_seq, FUTEX_WAKE, INT_MAX);
            done = s;
        }
    }

    amdqp_act_page* page_;
    std::atomic<bool> stop_{false};
    std::thread thread_;
};

TEST(ActivityReader, CooperativeRequestIsAcked) {
    ActivityWriter w;
    ASSERT_NE(w.page(), nullptr);
    w.set_flags(AMDQP_ACT_F_COOP);
    FakeCoopProcess process(w.page());

    Page page = Page::open(getpid(), Page::Access::control);
    auto r = page.request_coop(true, 5s);
    EXPECT_TRUE(r.acked);
    EXPECT_EQ(r.seq, 1u);
    EXPECT_EQ(r.state, AMDQP_ACT_COOP_SUSPENDED);
    EXPECT_EQ(r.updates, 2u);
    EXPECT_EQ(w.page()->hdr.coop_suspend, 1u);

    r = page.request_coop(false, 5s);
    EXPECT_TRUE(r.acked);
    EXPECT_EQ(r.seq, 2u);
    EXPECT_EQ(r.state, AMDQP_ACT_COOP_RUNNING);
    EXPECT_EQ(r.updates, 4u);
}

std::uint64_t monotonic_ns() {
    return amdqp::detail::monotonic_ns();
}

TEST(ActivityReader, SuspendRequestCarriesItsLease) {
    ActivityWriter w;
    ASSERT_NE(w.page(), nullptr);
    w.set_flags(AMDQP_ACT_F_COOP);
    FakeCoopProcess process(w.page());
    Page page = Page::open(getpid(), Page::Access::control);

    std::uint64_t before = monotonic_ns();
    ASSERT_TRUE(page.request_coop(true, 5s, 3s).acked);
    std::uint64_t after = monotonic_ns();
    EXPECT_GE(w.page()->hdr.coop_lease_ns, before + 3000000000ull);
    EXPECT_LE(w.page()->hdr.coop_lease_ns, after + 3000000000ull);

    // The default: amdqp::activity::default_coop_lease.
    before = monotonic_ns();
    ASSERT_TRUE(page.request_coop(true, 5s).acked);
    EXPECT_GE(w.page()->hdr.coop_lease_ns, before + 2000000000ull);
    EXPECT_LE(w.page()->hdr.coop_lease_ns, monotonic_ns() + 2000000000ull);

    // A resume has no deadline, nor has a suspension asked for without one.
    ASSERT_TRUE(page.request_coop(false, 5s).acked);
    EXPECT_EQ(w.page()->hdr.coop_lease_ns, 0u);
    ASSERT_TRUE(page.request_coop(true, 5s, 0ms).acked);
    EXPECT_EQ(w.page()->hdr.coop_lease_ns, 0u);
}

TEST(ActivityReader, RenewingALeaseSaysWhatBecameOfTheSuspension) {
    ActivityWriter w;
    ASSERT_NE(w.page(), nullptr);
    amdqp_act_header& h = w.page()->hdr;
    Page page = Page::open(getpid(), Page::Access::control);
    using amdqp::activity::Lease;

    std::uint32_t seq = page.send_coop(true, 1s);
    EXPECT_EQ(seq, 1u);
    EXPECT_EQ(h.coop_seq, 1u);
    EXPECT_EQ(h.coop_suspend, 1u);
    // Not acked yet: the request stands, and its deadline moves.
    std::uint64_t before = monotonic_ns();
    EXPECT_EQ(page.renew_lease(seq, 5s), Lease::held);
    EXPECT_GE(h.coop_lease_ns, before + 5000000000ull);

    // The process gave up on it (what the tagging layer writes).
    h.coop_ack_seq = seq;
    h.coop_state = AMDQP_ACT_COOP_RUNNING;
    h.coop_error = -ETIMEDOUT;
    const std::uint64_t old = h.coop_lease_ns;
    EXPECT_EQ(page.renew_lease(seq, 5s), Lease::lapsed);
    EXPECT_EQ(h.coop_lease_ns, old);  // nothing written

    // Someone asked for something else since.
    std::uint32_t next = page.send_coop(false);
    EXPECT_EQ(next, 2u);
    EXPECT_EQ(h.coop_lease_ns, 0u);
    EXPECT_EQ(page.renew_lease(seq, 5s), Lease::replaced);
    EXPECT_EQ(h.coop_lease_ns, 0u);

    EXPECT_THROW(page.renew_lease(next, 0ms), amdqp::Error);
}

TEST(ActivityReader, WaitingForASlowProcessKeepsItsLeaseCurrent) {
    ActivityWriter w;
    ASSERT_NE(w.page(), nullptr);
    Page page = Page::open(getpid(), Page::Access::control);
    const std::uint64_t sent = monotonic_ns();
    auto r = page.request_coop(true, 500ms, 150ms);
    EXPECT_FALSE(r.acked);
    // Renewed while it waited: the deadline is later than the first one.
    EXPECT_GT(w.page()->hdr.coop_lease_ns, sent + 150000000ull + 100000000ull);
    // wait_coop() alone renews nothing.
    const std::uint64_t last = w.page()->hdr.coop_lease_ns;
    EXPECT_FALSE(page.wait_coop(r.seq, 200ms).acked);
    EXPECT_EQ(w.page()->hdr.coop_lease_ns, last);
}

TEST(ActivityReader, SnapshotGroupIsTheNamePadded) {
    amdqp::activity::Snapshot snap;
    EXPECT_EQ(snap.group(), "");
    std::memset(snap.header.group, 'g', sizeof(snap.header.group));  // no NUL at all
    EXPECT_EQ(snap.group(), std::string(AMDQP_ACT_GROUP_LEN, 'g'));
}

TEST(ActivityReader, CooperativeRequestTimesOutWithoutAnAck) {
    ActivityWriter w;
    ASSERT_NE(w.page(), nullptr);
    Page page = Page::open(getpid(), Page::Access::control);
    auto start = std::chrono::steady_clock::now();
    auto r = page.request_coop(true, 100ms);
    auto took = std::chrono::steady_clock::now() - start;
    EXPECT_FALSE(r.acked);
    EXPECT_GE(took, 100ms);
    EXPECT_LT(took, 5s);
    EXPECT_EQ(w.page()->hdr.coop_seq, 1u);  // the request is there for later
}

TEST(ActivityReader, ReadOnlyPageRefusesRequests) {
    ActivityWriter w;
    ASSERT_NE(w.page(), nullptr);
    Page page = Page::open(getpid(), Page::Access::read);
    EXPECT_THROW(page.request_coop(true, 10ms), amdqp::Error);
    EXPECT_THROW(page.send_coop(true), amdqp::Error);
    EXPECT_THROW(page.renew_lease(1, 1s), amdqp::Error);
    EXPECT_EQ(w.page()->hdr.coop_seq, 0u);
    EXPECT_EQ(w.page()->hdr.coop_lease_ns, 0u);
}

TEST(ActivityReader, APageCannotBeTruncatedUnderItsReaders) {
    // Issue 25: a page (or the wake file) truncated under a mapping killed
    // its readers with SIGBUS. Pages are sealed before anyone maps them:
    // even their owner cannot shrink or grow them any more.
    pid_t me = getpid();
    amdqp_act_page p = amdqp_test::valid_page(me, my_start_time());
    amdqp_test::MemPage mem(&p, sizeof(p));
    Page page = Page::open(me, Page::Access::control);
    EXPECT_LT(::ftruncate(mem.fd(), 100), 0);
    EXPECT_EQ(errno, EPERM);
    int fd = ::open(mem.path().c_str(), O_RDWR | O_CLOEXEC);
    ASSERT_GE(fd, 0);
    EXPECT_LT(::ftruncate(fd, 0), 0);
    EXPECT_LT(::ftruncate(fd, 1 << 24), 0);
    ::close(fd);
    EXPECT_NO_THROW(page.snapshot());
}

}  // namespace
