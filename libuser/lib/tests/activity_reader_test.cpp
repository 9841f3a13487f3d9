// SPDX-License-Identifier: MIT
//
// The reader side: what the policy sees of a page, what it refuses, and the
// cooperative request/ack handshake.
#include <gtest/gtest.h>

#include <linux/futex.h>
#include <sys/stat.h>
#include <sys/syscall.h>

#include <atomic>
#include <cerrno>
#include <chrono>
#include <climits>
#include <cstring>
#include <thread>

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
using amdqp_test::TempDir;
using namespace std::chrono_literals;

std::uint64_t my_start_time() {
    return amdqp::detail::proc_start_time(0).value();
}

Problem open_problem(const std::string& dir, pid_t pid) {
    try {
        Page::open(pid, Page::Access::read, dir);
    } catch (const PageError& e) {
        return e.problem();
    }
    return Problem::none;
}

TEST(ActivityReader, SeesWhatTheWriterPublishes) {
    TempDir dir;
    ActivityWriter w(dir.path());
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
    w.set_flags(AMDQP_ACT_F_PRELOAD);
    std::strcpy(w.page()->hdr.group, "tp0");

    Page page = Page::open(getpid(), Page::Access::read, dir.path());
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
    TempDir dir;
    ActivityWriter w(dir.path());
    static std::uint64_t read_dispatch_id = 41;
    SlotInit init;
    init.read_index_va = reinterpret_cast<std::uint64_t>(&read_dispatch_id);
    ASSERT_EQ(w.take_slot(init), 0);
    Page page = Page::open(getpid(), Page::Access::read, dir.path());
    auto snap = page.snapshot();
    ASSERT_EQ(snap.slots.size(), 1u);
    EXPECT_EQ(page.read_index(snap.slots[0]), 41u);
    amdqp::activity::Slot none;
    EXPECT_FALSE(page.read_index(none));
}

TEST(ActivityReader, RefusesOtherFormats) {
    TempDir dir;
    pid_t me = getpid();
    auto write = [&](const amdqp_act_page& p, std::size_t len = sizeof(amdqp_act_page)) {
        ASSERT_TRUE(amdqp_test::write_page(dir.page(me), &p, len));
    };
    amdqp_act_page p = amdqp_test::valid_page(me, my_start_time());

    write(p);
    EXPECT_EQ(open_problem(dir.path(), me), Problem::none);

    amdqp_act_page bad = p;
    bad.hdr.version = AMDQP_ACT_VERSION + 1;
    write(bad);
    EXPECT_EQ(open_problem(dir.path(), me), Problem::bad_version);

    bad = p;
    bad.hdr.magic = 0x12345678;
    write(bad);
    EXPECT_EQ(open_problem(dir.path(), me), Problem::bad_magic);

    bad = p;
    bad.hdr.slot_size = sizeof(amdqp_act_slot) - 8;  // smaller than this reader's
    write(bad);
    EXPECT_EQ(open_problem(dir.path(), me), Problem::bad_layout);

    bad = p;
    bad.hdr.num_slots = AMDQP_ACT_MAX_SLOTS + 1;
    write(bad);
    EXPECT_EQ(open_problem(dir.path(), me), Problem::bad_layout);

    bad = p;
    bad.hdr.max_slots = 1000;  // more slots than the page holds
    write(bad);
    EXPECT_EQ(open_problem(dir.path(), me), Problem::bad_layout);

    bad = p;
    bad.hdr.size = 2048;
    write(bad);
    EXPECT_EQ(open_problem(dir.path(), me), Problem::too_small);

    write(p, 1000);  // truncated file
    EXPECT_EQ(open_problem(dir.path(), me), Problem::too_small);

    bad = p;
    bad.hdr.pid = me + 1;
    write(bad);
    EXPECT_EQ(open_problem(dir.path(), me), Problem::pid_mismatch);

    EXPECT_EQ(open_problem(dir.path(), me + 100000), Problem::not_a_page);
}

TEST(ActivityReader, LargerSlotsOfANewerMinorVersionAreRead) {
    // A newer writer may grow slots (new fields in what is reserved today);
    // this reader walks them by slot_size and reads the fields it knows.
    TempDir dir;
    pid_t me = getpid();
    struct Bigger {
        amdqp_act_header hdr;
        unsigned char slots[28][128];
    } big{};
    amdqp_act_page p = amdqp_test::valid_page(me, my_start_time());
    big.hdr = p.hdr;
    big.hdr.version_minor = 7;
    big.hdr.size = sizeof(big);
    big.hdr.slot_size = 128;
    big.hdr.max_slots = 28;
    big.hdr.num_slots = 2;
    amdqp_act_slot s{};
    s.state = AMDQP_ACT_SLOT_LIVE;
    s.ring_va = 0xabc000;
    std::memcpy(big.slots[1], &s, sizeof(s));
    ASSERT_TRUE(amdqp_test::write_page(dir.page(me), &big, sizeof(big)));
    auto snap = Page::open(me, Page::Access::read, dir.path()).snapshot();
    ASSERT_EQ(snap.slots.size(), 1u);
    EXPECT_EQ(snap.slots[0].index, 1u);
    EXPECT_EQ(snap.slots[0].ring_va, 0xabc000u);
}

TEST(ActivityReader, TellsDeadReusedAndReplacedApart) {
    TempDir dir;
    // A dead process's page.
    pid_t dead = amdqp_test::dead_pid();
    amdqp_act_page p = amdqp_test::valid_page(dead, 123);
    ASSERT_TRUE(amdqp_test::write_page(dir.page(dead), &p, sizeof(p)));
    EXPECT_EQ(Page::open(dead, Page::Access::read, dir.path()).liveness(), Problem::dead);

    // This pid, another start time: the pid was reused.
    pid_t me = getpid();
    p = amdqp_test::valid_page(me, my_start_time() + 1);
    ASSERT_TRUE(amdqp_test::write_page(dir.page(me), &p, sizeof(p)));
    EXPECT_EQ(Page::open(me, Page::Access::read, dir.path()).liveness(), Problem::pid_reused);

    // This very process, but it does not map the file: it exec'd since.
    p = amdqp_test::valid_page(me, my_start_time());
    ASSERT_TRUE(amdqp_test::write_page(dir.page(me), &p, sizeof(p)));
    EXPECT_EQ(Page::open(me, Page::Access::read, dir.path()).liveness(), Problem::replaced);
}

TEST(ActivityReader, ExecLeavesAPageTheReaderRecognisesAsReplaced) {
    TempDir dir;
    int pipefd[2];
    ASSERT_EQ(pipe(pipefd), 0);
    pid_t child = fork();
    if (child == 0) {
        ActivityWriter w(dir.path());
        char c = w.page() ? 'y' : 'n';
        (void)!::write(pipefd[1], &c, 1);
        // exec keeps the pid and the file but drops the mapping.
        execl("/bin/sleep", "sleep", "30", static_cast<char*>(nullptr));
        _exit(127);
    }
    char c = 0;
    ASSERT_EQ(::read(pipefd[0], &c, 1), 1);
    ASSERT_EQ(c, 'y');
    // Wait for the exec to have happened (/proc/PID/exe changes).
    Problem seen = Problem::none;
    for (int i = 0; i < 500 && seen == Problem::none; i++) {
        seen = Page::open(child, Page::Access::read, dir.path()).liveness();
        std::this_thread::sleep_for(10ms);
    }
    kill(child, SIGKILL);
    int status;
    waitpid(child, &status, 0);
    ::close(pipefd[0]);
    ::close(pipefd[1]);
    EXPECT_EQ(seen, Problem::replaced);
}

TEST(ActivityReader, ScanKeepsLivePagesAndDropsStaleOnes) {
    TempDir dir;
    ActivityWriter w(dir.path());
    ASSERT_NE(w.page(), nullptr);
    pid_t dead = amdqp_test::dead_pid();
    amdqp_act_page p = amdqp_test::valid_page(dead, 1);
    ASSERT_TRUE(amdqp_test::write_page(dir.page(dead), &p, sizeof(p)));
    // A dead process's half-made page is stale too.
    pid_t dead2 = amdqp_test::dead_pid();
    ASSERT_TRUE(amdqp_test::write_page(dir.page(dead2), "xx", 2));
    // Not pages at all: left alone.
    ASSERT_TRUE(amdqp_test::write_page(dir.path() + "/amdqp-act.x", "x", 1));
    ASSERT_TRUE(amdqp_test::write_page(dir.path() + "/other", "x", 1));

    amdqp::activity::ScanOptions opts;
    opts.dir = dir.path();
    auto r = amdqp::activity::scan(opts);
    ASSERT_EQ(r.pages.size(), 1u);
    EXPECT_EQ(r.pages[0].pid(), getpid());
    EXPECT_EQ(r.skipped.size(), 2u);
    EXPECT_EQ(r.dropped, 0u);

    opts.drop_stale = true;
    r = amdqp::activity::scan(opts);
    EXPECT_EQ(r.pages.size(), 1u);
    EXPECT_EQ(r.dropped, 2u);
    struct stat st;
    EXPECT_NE(::stat(dir.page(dead).c_str(), &st), 0);
    EXPECT_NE(::stat(dir.page(dead2).c_str(), &st), 0);
    EXPECT_EQ(::stat((dir.path() + "/amdqp-act.x").c_str(), &st), 0);
    EXPECT_EQ(::stat(dir.page(getpid()).c_str(), &st), 0);
}

TEST(ActivityReader, PageOfAnotherUserIsRefused) {
    if (geteuid() != 0)
        GTEST_SKIP() << "needs root to make a file of another user";
    TempDir dir;
    amdqp_act_page p = amdqp_test::valid_page(getpid(), my_start_time());
    ASSERT_TRUE(amdqp_test::write_page(dir.page(getpid()), &p, sizeof(p)));
    ASSERT_EQ(::chown(dir.page(getpid()).c_str(), 12345, 12345), 0);
    EXPECT_EQ(open_problem(dir.path(), getpid()), Problem::foreign_owner);
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
    TempDir dir;
    ActivityWriter w(dir.path());
    ASSERT_NE(w.page(), nullptr);
    w.set_flags(AMDQP_ACT_F_COOP);
    FakeCoopProcess process(w.page());

    Page page = Page::open(getpid(), Page::Access::control, dir.path());
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
    TempDir dir;
    ActivityWriter w(dir.path());
    ASSERT_NE(w.page(), nullptr);
    w.set_flags(AMDQP_ACT_F_COOP);
    FakeCoopProcess process(w.page());
    Page page = Page::open(getpid(), Page::Access::control, dir.path());

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
    TempDir dir;
    ActivityWriter w(dir.path());
    ASSERT_NE(w.page(), nullptr);
    amdqp_act_header& h = w.page()->hdr;
    Page page = Page::open(getpid(), Page::Access::control, dir.path());
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
    TempDir dir;
    ActivityWriter w(dir.path());
    ASSERT_NE(w.page(), nullptr);
    Page page = Page::open(getpid(), Page::Access::control, dir.path());
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
    TempDir dir;
    ActivityWriter w(dir.path());
    ASSERT_NE(w.page(), nullptr);
    Page page = Page::open(getpid(), Page::Access::control, dir.path());
    auto start = std::chrono::steady_clock::now();
    auto r = page.request_coop(true, 100ms);
    auto took = std::chrono::steady_clock::now() - start;
    EXPECT_FALSE(r.acked);
    EXPECT_GE(took, 100ms);
    EXPECT_LT(took, 5s);
    EXPECT_EQ(w.page()->hdr.coop_seq, 1u);  // the request is there for later
}

TEST(ActivityReader, ReadOnlyPageRefusesRequests) {
    TempDir dir;
    ActivityWriter w(dir.path());
    ASSERT_NE(w.page(), nullptr);
    Page page = Page::open(getpid(), Page::Access::read, dir.path());
    EXPECT_THROW(page.request_coop(true, 10ms), amdqp::Error);
    EXPECT_THROW(page.send_coop(true), amdqp::Error);
    EXPECT_THROW(page.renew_lease(1, 1s), amdqp::Error);
    EXPECT_EQ(w.page()->hdr.coop_seq, 0u);
    EXPECT_EQ(w.page()->hdr.coop_lease_ns, 0u);
}

TEST(ActivityReader, TruncatedPageThrowsInsteadOfCrashing) {
    TempDir dir;
    pid_t me = getpid();
    amdqp_act_page p = amdqp_test::valid_page(me, my_start_time());
    ASSERT_TRUE(amdqp_test::write_page(dir.page(me), &p, sizeof(p)));
    Page page = Page::open(me, Page::Access::control, dir.path());
    ASSERT_EQ(::truncate(dir.page(me).c_str(), 100), 0);
    EXPECT_THROW(page.snapshot(), PageError);
    EXPECT_THROW(page.request_coop(true, 10ms), PageError);
    EXPECT_THROW(page.renew_lease(1, 1s), PageError);
}

}  // namespace
