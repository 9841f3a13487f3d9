// SPDX-License-Identifier: MIT
//
// The controller end to end against the in-memory /dev/amdqp fake and real
// activity pages of child processes: the children only hold their pages
// (as a tagged process does), the test plays their submissions by writing
// the pages' slots and the read indexes the controller reads from them.
#include <gtest/gtest.h>
#include <signal.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <cstdio>
#include <map>
#include <optional>
#include <set>
#include <thread>
#include <vector>

#include <nlohmann/json.hpp>

#include "activity_page.hpp"
#include "activity_proc.hpp"
#include "activity_test_util.hpp"
#include "controller.hpp"
#include "fake_amdqp.hpp"

namespace {

using namespace amdqp::daemon;
using namespace std::chrono_literals;
using amdqp::testing::FakeAmdqp;

constexpr std::uint32_t kGpu = 1;

// Memory the children share with the test: their queues' read indexes.
struct Shared {
    std::atomic<std::uint64_t> read_index[4];
};

class Tagged {
  public:
    // A child with one slot of @priority on @gpu whose ring is @ring_va.
    Tagged(const std::string& dir, Shared* shared, int n, std::uint32_t priority,
           std::uint64_t ring_va, const char* group = nullptr, std::uint32_t gpu = kGpu)
        : Tagged(dir, {slot(shared, n, priority, ring_va, gpu)}, group) {}
    static amdqp::detail::SlotInit slot(Shared* shared, int n, std::uint32_t priority,
                                        std::uint64_t ring_va, std::uint32_t gpu = kGpu,
                                        std::uint32_t queue_id = UINT32_MAX) {
        amdqp::detail::SlotInit init;
        init.gpu_id = gpu;
        init.priority = priority;
        init.mechanism = AMDQP_ACT_MECH_AMDQP;
        init.ring_va = ring_va;
        init.queue_id = queue_id;
        init.read_index_va = reinterpret_cast<std::uint64_t>(&shared->read_index[n]);
        return init;
    }
    // A child whose page holds @slots, whatever they claim.
    // @as_uid: the child runs as that user (the test must be root).
    Tagged(const std::string& dir, const std::vector<amdqp::detail::SlotInit>& slots,
           const char* group = nullptr, std::optional<uid_t> as_uid = std::nullopt)
        : dir_(dir) {
        int ready[2];
        if (pipe(ready) != 0)
            return;
        pid_ = fork();
        if (pid_ == 0) {
            if (group)
                setenv("AMDQP_GROUP", group, 1);
            if (as_uid && (setgid(*as_uid) != 0 || setuid(*as_uid) != 0))
                _exit(1);
            // The controller's socket: the page is registered over it.
            setenv("AMDQP_RUNTIME_DIR", dir.c_str(), 1);
            amdqp::detail::ActivityWriter w;
            char ok = 'y';
            for (const auto& init : slots)
                if (w.take_slot(init) < 0)
                    ok = 'n';
            [[maybe_unused]] auto r = write(ready[1], &ok, 1);
            for (;;)
                pause();
        }
        char ok = 0;
        [[maybe_unused]] auto r = read(ready[0], &ok, 1);
        close(ready[0]);
        close(ready[1]);
        EXPECT_EQ(ok, 'y');
        // Its own page (it may also hold, inherited from this process, pages
        // the controller here was handed: those name another pid).
        const std::string path = amdqp::activity::Page::open(pid_).path();
        int fd = open(path.c_str(), O_RDWR);
        page_ = static_cast<amdqp_act_page*>(
            mmap(nullptr, sizeof(amdqp_act_page), PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0));
        close(fd);
    }
    ~Tagged() { kill(); }
    void kill() {
        if (pid_ > 0) {
            ::kill(pid_, SIGKILL);
            waitpid(pid_, nullptr, 0);
            pid_ = -1;
        }
    }
    pid_t pid() const { return pid_; }
    amdqp_act_page* page() const { return page_; }
    // What the tagging layer does at a doorbell store.
    void doorbell(std::uint64_t write_index, int slot = 0) {
        amdqp_act_slot& s = page_->slots[slot];
        s.write_index = write_index;
        s.doorbells++;
        s.last_doorbell_ns = amdqp::detail::monotonic_ns();
    }

  private:
    std::string dir_;
    pid_t pid_ = -1;
    amdqp_act_page* page_ = nullptr;
};

// A low (2) and a high (12) process, each with the one queue amdqp.ko
// lists for it on kGpu: the pair most tests start from.
struct LowAndHigh {
    LowAndHigh(const std::string& dir, Shared* shared, FakeAmdqp& fake)
        : lp(dir, shared, 0, 2, 0x10000),
          hp(dir, shared, 1, 12, 0x20000),
          lq(fake.add_queue(lp.pid(), kGpu, 0x10000, 2, getuid()).queue_id) {
        fake.add_queue(hp.pid(), kGpu, 0x20000, 12, getuid());
    }
    Tagged lp;
    Tagged hp;
    std::uint32_t lq;
};

class ControllerTest : public ::testing::Test {
  protected:
    void SetUp() override {
        shared_ = static_cast<Shared*>(mmap(nullptr, sizeof(Shared), PROT_READ | PROT_WRITE,
                                            MAP_SHARED | MAP_ANONYMOUS, -1, 0));
        new (shared_) Shared{};
        fake_ = std::make_shared<FakeAmdqp>();
        fake_->caller_uid = getuid();
        fake_->caller_pid = getpid();
        fake_->cap_sys_admin = true;
        fake_->add_gpu(kGpu);
        cfg_.runtime_dir = dir_.path();
        // Only this test's children: pages of other tests running beside
        // this one stay out of the /proc search.
        cfg_.scan_filter = [me = getpid()](pid_t pid) {
            auto stat = amdqp::detail::read_small_file("/proc/" + std::to_string(pid) + "/stat");
            if (!stat)
                return false;
            std::size_t close = stat->rfind(')');
            int ppid = 0;
            return close != std::string::npos &&
                   std::sscanf(stat->c_str() + close + 1, " %*c %d", &ppid) == 1 && ppid == me;
        };
        cfg_.metrics = "";
        cfg_.rescan = 1ms;
        cfg_.group_by = GroupBy::kNone;
        // The tests' processes are granted any level: their uid's rule.
        Rule grant;
        grant.uid = getuid();
        grant.max_priority = 15;
        grant.where = "grant:1";
        cfg_.rules = {grant};
    }
    void TearDown() override { munmap(shared_, sizeof(Shared)); }

    std::unique_ptr<Controller> make() {
        auto fake = fake_;
        return std::make_unique<Controller>(
            cfg_, metrics_, log_, clock_,
            [fake](const std::string&) { return amdqp::Device::open(fake->path, fake); });
    }
    // Steps until @pred holds or @limit passes.
    bool step_until(Controller& c, const std::function<bool()>& pred,
                    std::chrono::milliseconds limit = 2000ms) {
        auto end = std::chrono::steady_clock::now() + limit;
        do {
            c.step();
            if (pred())
                return true;
            std::this_thread::sleep_for(1ms);
        } while (std::chrono::steady_clock::now() < end);
        return false;
    }

    amdqp_test::TempDir dir_;
    Shared* shared_ = nullptr;
    std::shared_ptr<FakeAmdqp> fake_;
    DaemonConfig cfg_;
    Metrics metrics_;
    Log log_{"error"};
    MonotonicClock clock_;
};

TEST_F(ControllerTest, HighPriorityWorkSuspendsLowerAndTheHysteresisResumesIt) {
    LowAndHigh pair(dir_.path(), shared_, *fake_);
    auto& [lp, hp, lq] = pair;
    auto c = make();
    c->step();
    EXPECT_EQ(c->processes(), 2u);
    EXPECT_FALSE(fake_->suspended(lp.pid(), kGpu, lq));
    // Before-doorbell: only the process that outranks someone is held.
    EXPECT_EQ(hp.page()->hdr.ctl_flags, AMDQP_ACT_CTL_WAKE | AMDQP_ACT_CTL_HOLD);
    EXPECT_EQ(lp.page()->hdr.ctl_flags, AMDQP_ACT_CTL_WAKE);

    hp.doorbell(1);  // read index 0: busy
    hp.page()->hdr.busy_seq = 1;
    c->step();
    EXPECT_TRUE(fake_->suspended(lp.pid(), kGpu, lq));
    EXPECT_EQ(hp.page()->hdr.busy_ack, 1u) << "the held doorbell is released after the suspend";
    EXPECT_EQ(c->policy().suspend_level(kGpu), 12);
    // The lower queue is off: a doorbell after a gap inside the burst has
    // nothing to wait for.
    EXPECT_EQ(hp.page()->hdr.ctl_flags, AMDQP_ACT_CTL_WAKE);

    shared_->read_index[1] = 1;  // drained: the hysteresis (3 ms) starts
    EXPECT_TRUE(step_until(*c, [&] { return !fake_->suspended(lp.pid(), kGpu, lq); }));
    EXPECT_EQ(hp.page()->hdr.ctl_flags, AMDQP_ACT_CTL_WAKE | AMDQP_ACT_CTL_HOLD)
        << "held again once the lower queue runs";
    const std::string m = metrics_.render();
    EXPECT_NE(m.find("amdqpd_suspend_calls_total 1\n"), std::string::npos) << m;
    EXPECT_NE(m.find("amdqpd_control_loop_seconds_count 1\n"), std::string::npos) << m;
}

// A process that starts while the daemon runs is adopted when its page
// appears, not at the next rescan: otherwise its first request runs with
// nothing suspended and no wake/hold flags on its page.
TEST_F(ControllerTest, NewPageIsAdoptedWithoutWaitingForTheRescan) {
    cfg_.rescan = std::chrono::hours(1);
    cfg_.idle_poll = std::chrono::seconds(10);
    auto c = make();
    std::atomic<bool> stop{false};
    std::thread loop([&] {
        while (!stop.load())
            c->cycle();
    });
    const auto t0 = std::chrono::steady_clock::now();
    Tagged hp(dir_.path(), shared_, 0, 12, 0x20000);
    bool adopted = false;
    while (!adopted && std::chrono::steady_clock::now() - t0 < 2s) {
        adopted = std::atomic_ref<std::uint32_t>(hp.page()->hdr.ctl_flags).load() != 0;
        std::this_thread::sleep_for(100us);
    }
    const auto took = std::chrono::steady_clock::now() - t0;
    stop = true;
    c->wake().wake();
    loop.join();
    EXPECT_TRUE(adopted) << "not adopted within 2 s (rescan 1 h, idle poll 10 s)";
    RecordProperty("adopt_us", static_cast<int>(took / 1us));
}

TEST_F(ControllerTest, EqualPrioritiesNeverSuspendEachOther) {
    Tagged a(dir_.path(), shared_, 0, 7, 0x10000);
    Tagged b(dir_.path(), shared_, 1, 7, 0x20000);
    const auto qa = fake_->add_queue(a.pid(), kGpu, 0x10000, 7, getuid()).queue_id;
    const auto qb = fake_->add_queue(b.pid(), kGpu, 0x20000, 7, getuid()).queue_id;
    auto c = make();
    c->step();
    a.doorbell(1);
    b.doorbell(1);
    c->step();
    EXPECT_FALSE(fake_->suspended(a.pid(), kGpu, qa));
    EXPECT_FALSE(fake_->suspended(b.pid(), kGpu, qb));
    EXPECT_EQ(a.page()->hdr.ctl_flags, AMDQP_ACT_CTL_WAKE) << "nothing to outrank: no hold";
}

TEST_F(ControllerTest, HighPriorityExitResumesAndDaemonExitReleasesEverything) {
    LowAndHigh pair(dir_.path(), shared_, *fake_);
    auto& [lp, hp, lq] = pair;
    auto c = make();
    c->step();
    hp.doorbell(1);
    c->step();
    ASSERT_TRUE(fake_->suspended(lp.pid(), kGpu, lq));
    hp.kill();  // crashed mid-request: its queue never drains
    EXPECT_TRUE(step_until(*c, [&] { return !fake_->suspended(lp.pid(), kGpu, lq); }));
    EXPECT_EQ(c->processes(), 1u);

    // A new high-priority process; then the daemon goes away: its fd's
    // holds go with it (the kernel's rule), and pages no longer ask to hold.
    Tagged hp2(dir_.path(), shared_, 2, 12, 0x30000);
    fake_->add_queue(hp2.pid(), kGpu, 0x30000, 12, getuid());
    ASSERT_TRUE(step_until(*c, [&] { return c->processes() == 2; }));
    hp2.doorbell(1);
    c->step();
    ASSERT_TRUE(fake_->suspended(lp.pid(), kGpu, lq));
    c->release_all();
    EXPECT_FALSE(fake_->suspended(lp.pid(), kGpu, lq));
    EXPECT_EQ(hp2.page()->hdr.ctl_flags, 0u);
    c->step();
    hp2.doorbell(2);
    c.reset();  // a crash closes the fd just the same
    EXPECT_FALSE(fake_->suspended(lp.pid(), kGpu, lq));
    EXPECT_EQ(fake_->open_fds(), 0u);
}

TEST_F(ControllerTest, RulesOverrideThePriorityInTheKernelToo) {
    Tagged a(dir_.path(), shared_, 0, 7, 0x10000);
    auto& q = fake_->add_queue(a.pid(), kGpu, 0x10000, 7, getuid());
    Rule r;
    r.uid = getuid();
    r.priority = 3;
    r.where = "test:1";
    cfg_.rules = {r};
    auto c = make();
    c->step();
    EXPECT_EQ(q.priority, 3u);
    EXPECT_NE(c->status_json().find("\"rule\":\"test:1\""), std::string::npos);
}

TEST_F(ControllerTest, DeviceLostInsideADecisionStartsThePolicyOver) {
    LowAndHigh pair(dir_.path(), shared_, *fake_);
    auto& [lp, hp, lq] = pair;
    auto c = make();
    c->step();
    // The module goes away: the suspend the next doorbell asks for finds
    // it gone from inside the policy's own call.
    fake_->ioctl_errno = ENODEV;
    hp.doorbell(1);
    c->step();
    EXPECT_FALSE(c->device_open());
    EXPECT_EQ(c->policy().suspend_level(kGpu), 0) << "a new policy holds nothing";
    // Back: reopened after the retry period, and in control again.
    fake_->ioctl_errno = 0;
    std::this_thread::sleep_for(1100ms);
    EXPECT_TRUE(step_until(*c, [&] { return fake_->suspended(lp.pid(), kGpu, lq); }));
}

// The GPUs the status file lists.
std::set<std::uint32_t> listed_gpus(const Controller& c) {
    std::set<std::uint32_t> out;
    const auto status = nlohmann::json::parse(c.status_json());
    for (const auto& g : status["gpus"])
        out.insert(g["gpu"].get<std::uint32_t>());
    return out;
}

// The tagged queues the status file lists on @gpu.
int queues_on(const Controller& c, std::uint32_t gpu) {
    int n = 0;
    const auto status = nlohmann::json::parse(c.status_json());
    for (const auto& p : status["tagged"])
        for (const auto& q : p["queues"])
            n += q["gpu"].get<std::uint32_t>() == gpu;
    return n;
}

// amdqp.ko announces a new GPU: it is listed, and a tagged queue on it
// adopted, at once rather than at the next rescan (an hour here).
TEST_F(ControllerTest, AddedGpuIsTakenInWithoutWaitingForTheRescan) {
    cfg_.rescan = std::chrono::hours(1);
    Tagged hp(dir_.path(), shared_, 0, 12, 0x20000, nullptr, 2);
    auto c = make();
    c->step();
    EXPECT_EQ(listed_gpus(*c), std::set<std::uint32_t>{kGpu});
    fake_->add_gpu(2);
    fake_->add_queue(hp.pid(), 2, 0x20000, 12, getuid());
    c->step();
    EXPECT_EQ(listed_gpus(*c), (std::set<std::uint32_t>{kGpu, 2}));
    EXPECT_EQ(queues_on(*c, 2), 1) << "its queue is adopted: " << c->status_json();
}

// A low- and a high-priority tagged process on each of GPU 1 and GPU 2,
// their queues known to the fake.
struct TwoGpus {
    TwoGpus(const std::string& dir, Shared* shared, FakeAmdqp& fake)
        : lp1(dir, shared, 0, 2, 0x10000),
          hp1(dir, shared, 1, 12, 0x20000),
          lp2(dir, shared, 2, 2, 0x30000, nullptr, 2),
          hp2(dir, shared, 3, 12, 0x40000, nullptr, 2) {
        fake.add_gpu(2);
        lq1 = fake.add_queue(lp1.pid(), kGpu, 0x10000, 2, getuid()).queue_id;
        fake.add_queue(hp1.pid(), kGpu, 0x20000, 12, getuid());
        lq2 = fake.add_queue(lp2.pid(), 2, 0x30000, 2, getuid()).queue_id;
        fake.add_queue(hp2.pid(), 2, 0x40000, 12, getuid());
    }
    Tagged lp1, hp1, lp2, hp2;
    std::uint32_t lq1 = 0, lq2 = 0;
};

// A GPU that goes away takes its queues and the daemon's holds on it along
// (amdqp_device_unregister): the daemon forgets them at once, and the
// policy's resume of that GPU must not reach the kernel, where it would
// fail the whole call (ENODEV) and look like the module was gone. The
// same when the event itself was lost (its ring full): the OVERFLOW
// record makes it rescan, and the list lacks the GPU.
class GpuRemovalTest : public ControllerTest, public ::testing::WithParamInterface<bool> {};

TEST_P(GpuRemovalTest, RemovedGpuIsForgottenAndTheOthersKeepTheirHolds) {
    cfg_.rescan = std::chrono::hours(1);
    TwoGpus g(dir_.path(), shared_, *fake_);
    auto c = make();
    c->step();
    g.hp1.doorbell(1);  // both busy, never drained
    g.hp2.doorbell(1);
    c->step();
    ASSERT_TRUE(fake_->suspended(g.lp1.pid(), kGpu, g.lq1));
    ASSERT_TRUE(fake_->suspended(g.lp2.pid(), 2, g.lq2));
    ASSERT_NE(metrics_.render().find("amdqpd_suspend_level{gpu=\"2\"} 12"), std::string::npos);

    if (GetParam())
        fake_->event_ring = 0;  // DEVICE_REMOVED dropped, OVERFLOW read instead
    fake_->remove_gpu(2);
    c->step();
    EXPECT_TRUE(c->device_open()) << "a GPU gone is not the module gone";
    EXPECT_EQ(c->policy().suspend_level(2), 0);
    EXPECT_EQ(c->policy().suspend_level(kGpu), 12);
    EXPECT_TRUE(fake_->suspended(g.lp1.pid(), kGpu, g.lq1)) << "GPU 1's hold is kept";
    EXPECT_EQ(listed_gpus(*c), std::set<std::uint32_t>{kGpu});
    EXPECT_EQ(queues_on(*c, 2), 0);
    const std::string m = metrics_.render();
    EXPECT_EQ(m.find("gpu=\"2\""), std::string::npos) << m;
    EXPECT_EQ(m.find("amdqpd_errors_total{kind=\"resume\"}"), std::string::npos) << m;
    // The pages still hold their slots on GPU 2: they are not adopted again.
    g.hp2.doorbell(2);
    c->step();
    EXPECT_EQ(queues_on(*c, 2), 0);
    EXPECT_TRUE(c->device_open());
}
INSTANTIATE_TEST_SUITE_P(Events, GpuRemovalTest, ::testing::Bool(),
                         [](const auto& info) { return info.param ? "Lost" : "Read"; });

// A GPU removed after the step read its events but before the policy's
// call: the call fails whole (ENODEV) with the module fine. It is made
// again on the GPUs still there, the daemon keeps its fd, and the next
// step forgets the GPU.
TEST_F(ControllerTest, GpuRemovedJustBeforeACallIsLeftOutOfIt) {
    cfg_.rescan = std::chrono::hours(1);
    TwoGpus g(dir_.path(), shared_, *fake_);
    auto c = make();
    c->step();
    bool armed = true;
    fake_->before_gpu_set = [&armed](FakeAmdqp& f) {
        if (armed) {
            armed = false;
            f.remove_gpu(2);
        }
    };
    g.hp1.doorbell(1);
    g.hp2.doorbell(1);
    c->step();
    EXPECT_FALSE(armed) << "the policy made no call";
    EXPECT_TRUE(c->device_open()) << "a GPU gone is not the module gone";
    EXPECT_TRUE(fake_->suspended(g.lp1.pid(), kGpu, g.lq1)) << "the call went out without GPU 2";
    c->step();
    EXPECT_TRUE(c->device_open());
    EXPECT_EQ(c->policy().suspend_level(2), 0);
    EXPECT_EQ(c->policy().suspend_level(kGpu), 12);
    EXPECT_EQ(listed_gpus(*c), std::set<std::uint32_t>{kGpu});
    EXPECT_EQ(queues_on(*c, 2), 0);
    const std::string m = metrics_.render();
    EXPECT_EQ(m.find("amdqpd_errors_total{kind=\"suspend\"}"), std::string::npos) << m;
}

// The page is the tenant's: a slot naming another process's queue, a queue
// the kernel does not know, or priority 15/16/2^32-1 changes nothing.
// Without a grant the tenant is held to the default ceiling (normal).
TEST_F(ControllerTest, ForgedPageSlotsChangeNothing) {
    cfg_.rules.clear();  // nobody is granted anything: default normal (7)
    Tagged victim(dir_.path(), shared_, 0, 7, 0x10000);
    auto& vq = fake_->add_queue(victim.pid(), kGpu, 0x10000, 7, getuid());
    using Slots = std::vector<amdqp::detail::SlotInit>;
    // Another Unix user where the test can make one (root: nobody).
    std::optional<uid_t> other;
    if (geteuid() == 0) {
        other = 65534;
        chmod(dir_.path().c_str(), 01777);
    }
    Tagged forger(dir_.path(),
                  Slots{Tagged::slot(shared_, 1, 15, 0x10000, kGpu, vq.queue_id),  // victim's id
                        Tagged::slot(shared_, 2, 15, 0x10000),                     // victim's ring
                        Tagged::slot(shared_, 3, 15, 0x777000, kGpu, 4242)},       // no such queue
                  nullptr, other);
    ASSERT_NE(forger.page(), nullptr);
    forger.page()->slots[1].priority = 16;
    forger.page()->slots[2].priority = 0xFFFFFFFFu;
    auto c = make();
    c->step();
    for (int i = 0; i < 3; ++i)
        forger.doorbell(1, i);
    forger.page()->hdr.busy_seq = 1;
    for (int i = 0; i < 20; ++i) {
        c->step();
        std::this_thread::sleep_for(1ms);
    }
    EXPECT_FALSE(fake_->suspended(victim.pid(), kGpu, vq.queue_id));
    EXPECT_EQ(c->policy().suspend_level(kGpu), 0);
    EXPECT_EQ(c->policy().stats().suspend_calls, 0u);
    EXPECT_EQ(c->processes(), 2u) << "the forger's page was looked at";
    EXPECT_EQ(queues_on(*c, kGpu), 1) << "only the victim's own slot: " << c->status_json();
    EXPECT_EQ(vq.priority, 7u);
}

// A queue's priority is the kernel's, up to the owner's ceiling: one made
// at KFD priority 15 by a tenant granted nothing counts as normal, is set
// to normal in the kernel too, and outranks nobody at normal.
TEST_F(ControllerTest, KernelPriorityAboveTheCeilingIsClamped) {
    cfg_.rules.clear();
    Tagged victim(dir_.path(), shared_, 0, 7, 0x10000);
    Tagged greedy(dir_.path(), shared_, 1, 15, 0x20000);
    auto& vq = fake_->add_queue(victim.pid(), kGpu, 0x10000, 7, getuid());
    auto& gq = fake_->add_queue(greedy.pid(), kGpu, 0x20000, 15, getuid());
    greedy.page()->slots[0].priority = 0xFFFFFFFFu;
    auto c = make();
    c->step();
    greedy.doorbell(1);
    c->step();
    EXPECT_FALSE(fake_->suspended(victim.pid(), kGpu, vq.queue_id));
    EXPECT_EQ(gq.priority, 7u) << "clamped in the kernel to the default ceiling";
    const auto status = nlohmann::json::parse(c->status_json());
    for (const auto& p : status["tagged"])
        for (const auto& q : p["queues"])
            EXPECT_LE(q["priority"].get<int>(), 7) << status.dump();
}

// An admin's grant by uid: the same queue may be high, and the grant goes
// into the kernel's ceiling table (FLUSH first: amdqpd owns the table).
class CeilingSys : public amdqp::Sys {
  public:
    explicit CeilingSys(std::shared_ptr<FakeAmdqp> fake) : fake_(std::move(fake)) {}
    int open(const char* path, int flags) override { return fake_->open(path, flags); }
    int close(int fd) override { return fake_->close(fd); }
    int ioctl(int fd, unsigned long request, void* arg) override {
        if (request != AMDQP_IOC_CEILINGS)
            return fake_->ioctl(fd, request, arg);
        auto* req = static_cast<amdqp_ceilings*>(arg);
        ops.push_back(req->op);
        auto* e = reinterpret_cast<amdqp_ceiling*>(static_cast<std::uintptr_t>(req->entries));
        for (std::uint32_t i = 0; i < req->count; ++i) {
            if (req->op == AMDQP_CEIL_OP_SET)
                table[{e[i].kind, e[i].id}] = e[i].level;
            else if (req->op == AMDQP_CEIL_OP_CLEAR)
                table.erase({e[i].kind, e[i].id});
            e[i].result = 0;
        }
        if (req->op == AMDQP_CEIL_OP_FLUSH)
            table.clear();
        return 0;
    }
    ssize_t read(int fd, void* buf, std::size_t len) override { return fake_->read(fd, buf, len); }
    int poll(struct pollfd* fds, nfds_t n, int timeout_ms) override {
        return fake_->poll(fds, n, timeout_ms);
    }

    std::vector<std::uint32_t> ops;
    std::map<std::pair<std::uint32_t, std::uint64_t>, std::uint32_t> table;

  private:
    std::shared_ptr<FakeAmdqp> fake_;
};

TEST_F(ControllerTest, GrantsArePushedIntoTheKernelCeilingTable) {
    Rule by_gid;
    by_gid.gid = 4242;
    by_gid.priority = 12;
    Rule low_uid;
    low_uid.uid = 777;
    low_uid.max_priority = 2;  // below the default: no entry needed
    cfg_.rules.push_back(by_gid);
    cfg_.rules.push_back(low_uid);
    auto sys = std::make_shared<CeilingSys>(fake_);
    auto c = std::make_unique<Controller>(
        cfg_, metrics_, log_, clock_,
        [this, sys](const std::string&) { return amdqp::Device::open(fake_->path, sys); });
    c->step();
    ASSERT_FALSE(sys->ops.empty());
    EXPECT_EQ(sys->ops.front(), static_cast<std::uint32_t>(AMDQP_CEIL_OP_FLUSH));
    const std::map<std::pair<std::uint32_t, std::uint64_t>, std::uint32_t> want{
        {{AMDQP_CEIL_UID, getuid()}, 15u}, {{AMDQP_CEIL_GID, 4242}, 12u}};
    EXPECT_EQ(sys->table, want);
    // Nothing changed: nothing is sent again.
    const auto calls = sys->ops.size();
    std::this_thread::sleep_for(2ms);
    c->step();
    EXPECT_EQ(sys->ops.size(), calls);
    // A new configuration without the gid grant: its entry is cleared.
    DaemonConfig next = cfg_;
    next.rules.pop_back();
    next.rules.pop_back();
    c->reconfigure(next);
    c->step();
    EXPECT_EQ(sys->table.size(), 1u);
    EXPECT_TRUE(sys->table.contains({AMDQP_CEIL_UID, getuid()}));
}

// SUSPEND_BELOW holds queues nobody tagged as well: the starvation bound
// must let them run (not only the kernel's 5 s watchdog).
TEST_F(ControllerTest, UntaggedVictimGetsItsRunSlices) {
    cfg_.policy.max_continuous_suspend = 100ms;
    cfg_.policy.min_low_share = 0;
    Tagged hp(dir_.path(), shared_, 0, 12, 0x20000);
    fake_->add_queue(hp.pid(), kGpu, 0x20000, 12, getuid());
    // A tagged lower queue, idle: the high work's suspensions are made
    // for it, and hold the untagged one too.
    Tagged lp(dir_.path(), shared_, 1, 2, 0x10000);
    fake_->add_queue(lp.pid(), kGpu, 0x10000, 2, getuid());
    shared_->read_index[1] = 0;
    // No page speaks for this one: a child that never tags.
    const pid_t untagged = fork();
    if (untagged == 0) {
        for (;;)
            pause();
    }
    struct Reap {
        pid_t pid;
        ~Reap() {
            kill(pid, SIGKILL);
            waitpid(pid, nullptr, 0);
        }
    } reap{untagged};
    const auto vq = fake_->add_queue(untagged, kGpu, 0x90000, 2, getuid()).queue_id;
    auto c = make();
    c->step();
    hp.doorbell(1);  // busy for good
    c->step();
    ASSERT_TRUE(fake_->suspended(untagged, kGpu, vq));
    EXPECT_TRUE(step_until(
        *c, [&] { return !fake_->suspended(untagged, kGpu, vq); }, 400ms))
        << "held past 4x its bound";
    EXPECT_GT(c->policy().stats().starvation_hits, 0u);
}

// A child that never tags, holding a queue of the fake: an untagged victim.
class Untagged {
  public:
    Untagged() {
        pid_ = fork();
        if (pid_ == 0) {
            for (;;)
                pause();
        }
    }
    ~Untagged() {
        kill(pid_, SIGKILL);
        waitpid(pid_, nullptr, 0);
    }
    pid_t pid() const { return pid_; }

  private:
    pid_t pid_;
};

// issue 25, trust.vm: a tenant granted high by a uid rule, busy, next to
// another user's untagged queue that has work. amdqpd made no call at all
// (only tagged lower queues asked for one); the backend's counts say the
// victim works, so it is suspended like a tagged one. The tenant's read
// index is unknown (its slot has no address), as it can be: its doorbells
// decide.
TEST_F(ControllerTest, GrantedTenantSuspendsAnUntaggedVictimWithWork) {
    // A tenant of its own uid where the test can make one (root).
    const uid_t tenant = geteuid() == 0 ? 2000 : getuid();
    if (geteuid() == 0)
        chmod(dir_.path().c_str(), 01777);
    Rule grant;
    grant.uid = tenant;
    grant.max_priority = 12;
    grant.where = "grant:1";
    cfg_.rules = {grant};
    auto init = Tagged::slot(shared_, 0, 12, 0x20000);
    init.read_index_va = 0;
    Tagged hp(dir_.path(), {init}, nullptr,
              tenant != getuid() ? std::optional<uid_t>(tenant) : std::nullopt);
    ASSERT_NE(hp.page(), nullptr);
    fake_->add_queue(hp.pid(), kGpu, 0x20000, 12, tenant);
    Untagged victim;
    auto& vq = fake_->add_queue(victim.pid(), kGpu, 0x90000, 7, 65534);
    vq.submitted = 10;  // a kernel in flight
    vq.completed = 9;
    auto c = make();
    c->step();
    EXPECT_FALSE(fake_->suspended(victim.pid(), kGpu, vq.queue_id)) << "H is idle";
    std::uint64_t db = 0;
    EXPECT_TRUE(step_until(*c, [&] {
        hp.doorbell(++db);
        return fake_->suspended(victim.pid(), kGpu, vq.queue_id);
    })) << "no suspension for the granted tenant";
    EXPECT_GT(c->policy().stats().suspend_calls, 0u);
    EXPECT_EQ(c->policy().suspend_level(kGpu), 12);
    // H stops ringing: its hysteresis runs out and the victim runs.
    EXPECT_TRUE(step_until(*c, [&] { return !fake_->suspended(victim.pid(), kGpu, vq.queue_id); }));
}

// The control: an untagged queue whose activity the backend does not
// count (kfd: 0 and 0) asks for no call; one made for it alone would
// preempt the high work for a victim that may have nothing to run.
TEST_F(ControllerTest, UntaggedQueueOfUnknownActivityAsksForNoCall) {
    Tagged hp(dir_.path(), shared_, 0, 12, 0x20000);
    fake_->add_queue(hp.pid(), kGpu, 0x20000, 12, getuid());
    Untagged victim;
    auto& vq = fake_->add_queue(victim.pid(), kGpu, 0x90000, 7, getuid());
    auto c = make();
    c->step();
    hp.doorbell(1);  // read index 0: busy for good
    const auto end = std::chrono::steady_clock::now() + 50ms;
    while (std::chrono::steady_clock::now() < end) {
        c->step();
        std::this_thread::sleep_for(1ms);
    }
    EXPECT_FALSE(fake_->suspended(victim.pid(), kGpu, vq.queue_id));
    EXPECT_EQ(c->policy().stats().suspend_calls, 0u);
}

// Work counts that only grow between two looks (each kernel done by the
// time of the look) show a working queue too; held, it shows nothing
// (the hardware fetches nothing of it) and stays what it was.
TEST_F(ControllerTest, UntaggedQueueWorkingBetweenLooksIsSuspendedAndStaysSo) {
    Tagged hp(dir_.path(), shared_, 0, 12, 0x20000);
    fake_->add_queue(hp.pid(), kGpu, 0x20000, 12, getuid());
    Untagged victim;
    auto& vq = fake_->add_queue(victim.pid(), kGpu, 0x90000, 7, getuid());
    vq.submitted = vq.completed = 5;  // known idle
    auto c = make();
    c->step();
    hp.doorbell(1);  // busy for good
    for (int i = 0; i < 20; i++) {
        c->step();
        std::this_thread::sleep_for(1ms);
    }
    ASSERT_FALSE(fake_->suspended(victim.pid(), kGpu, vq.queue_id)) << "idle: no call";
    vq.submitted = vq.completed = 6;
    EXPECT_TRUE(step_until(*c, [&] { return fake_->suspended(victim.pid(), kGpu, vq.queue_id); }));
    for (int i = 0; i < 20; i++) {
        c->step();
        std::this_thread::sleep_for(1ms);
        ASSERT_TRUE(fake_->suspended(victim.pid(), kGpu, vq.queue_id)) << "let go at look " << i;
    }
}

// amdqp.ko's starvation budget resumes a queue and drops every hold on it,
// then keeps it immune a while. Once it is not, a call still in force
// does not cover it: amdqpd makes the call again, for a tagged victim and
// an untagged one, instead of leaving them running until the high work's
// level changes.
TEST_F(ControllerTest, VictimsLetGoByTheKernelsBudgetAreTakenAgain) {
    cfg_.policy.min_low_share = 0;
    Tagged hp(dir_.path(), shared_, 0, 12, 0x20000);
    fake_->add_queue(hp.pid(), kGpu, 0x20000, 12, getuid());
    Tagged lp(dir_.path(), shared_, 1, 2, 0x10000);
    auto& lq = fake_->add_queue(lp.pid(), kGpu, 0x10000, 2, getuid());
    Untagged victim;
    auto& vq = fake_->add_queue(victim.pid(), kGpu, 0x90000, 7, getuid());
    vq.submitted = 3;
    vq.completed = 2;
    auto c = make();
    c->step();
    lp.doorbell(1);  // read index 0: work queued
    hp.doorbell(1);  // busy for good
    const auto both = [&] {
        return fake_->suspended(lp.pid(), kGpu, lq.queue_id) &&
               fake_->suspended(victim.pid(), kGpu, vq.queue_id);
    };
    ASSERT_TRUE(step_until(*c, both));
    const auto calls = c->policy().stats().suspend_calls;
    lq.holders.clear();  // the budget's resume
    vq.holders.clear();
    lq.cooldown = vq.cooldown = true;
    for (int i = 0; i < 10; i++) {
        c->step();
        std::this_thread::sleep_for(1ms);
    }
    EXPECT_FALSE(fake_->suspended(victim.pid(), kGpu, vq.queue_id)) << "immune";
    lq.cooldown = vq.cooldown = false;
    // Well inside the policy's own bound (500 ms), whose run slice and
    // new call would take them again too.
    EXPECT_TRUE(step_until(*c, both, 200ms)) << "left running under the call in force";
    EXPECT_GT(c->policy().stats().suspend_calls, calls);
}

// One uid's many processes: only max_pages_per_uid of them are looked at.
TEST_F(ControllerTest, PagesPerUidAreCapped) {
    cfg_.max_pages_per_uid = 2;
    Tagged a(dir_.path(), shared_, 0, 7, 0x10000);
    Tagged b(dir_.path(), shared_, 1, 7, 0x20000);
    Tagged d(dir_.path(), shared_, 2, 7, 0x30000);
    auto c = make();
    c->step();
    EXPECT_EQ(c->processes(), 2u);
    EXPECT_NE(metrics_.render().find("amdqpd_errors_total{kind=\"budget\"}"), std::string::npos);
}

// One uid's many queues: only max_queues_per_uid are taken in.
TEST_F(ControllerTest, QueuesPerUidAreCapped) {
    cfg_.max_queues_per_uid = 2;
    using Slots = std::vector<amdqp::detail::SlotInit>;
    Tagged t(dir_.path(),
             Slots{Tagged::slot(shared_, 0, 7, 0x10000), Tagged::slot(shared_, 1, 7, 0x20000),
                   Tagged::slot(shared_, 2, 7, 0x30000)});
    for (std::uint64_t va : {0x10000u, 0x20000u, 0x30000u})
        fake_->add_queue(t.pid(), kGpu, va, 7, getuid());
    auto c = make();
    c->step();
    EXPECT_EQ(queues_on(*c, kGpu), 2);
}

// cu_demand in (0, 1): the lower queue is confined to the rest of the GPU
// (AMDQP_IOC_CONFINE) instead of suspended while the high queue works,
// and let go after the hysteresis. A GPU without a CU geometry (the kfd
// backend today) is suspended instead, and resumed the same way.
// @gpu's entry of the daemon's status (amdqpctl status reads it).
nlohmann::json gpu_status(const Controller& c, std::uint32_t gpu) {
    const auto status = nlohmann::json::parse(c.status_json());
    for (const auto& g : status["gpus"]) {
        if (g["gpu"] == gpu)
            return g;
    }
    return nullptr;
}

class ConfineTest : public ControllerTest, public ::testing::WithParamInterface<bool> {};

TEST_P(ConfineTest, HighWorkConfinesTheLowerQueueOrSuspendsItWhereConfiningCannot) {
    const bool confinable = GetParam();
    cfg_.policy.cu_demand[12] = 0.5;
    if (!confinable)
        fake_->gpu(kGpu)->cu_per_xcc = 0;
    LowAndHigh pair(dir_.path(), shared_, *fake_);
    auto& [lp, hp, lq] = pair;
    auto c = make();
    c->step();
    ASSERT_EQ(c->processes(), 2u);
    hp.doorbell(1);
    hp.page()->hdr.busy_seq = 1;
    c->step();
    if (confinable) {
        // 8 CUs, half kept: the lower queue on CUs 4-7, CUs 0-3 free.
        EXPECT_EQ(fake_->confined(lp.pid(), kGpu, lq), std::vector<std::uint32_t>{0xf0u});
        EXPECT_FALSE(fake_->suspended(lp.pid(), kGpu, lq));
        EXPECT_EQ(c->policy().stats().confine_calls, 1u);
        // amdqpctl status and the metrics show it.
        const auto gpu = gpu_status(*c, kGpu);
        EXPECT_EQ(gpu["confine_level"], 12);
        EXPECT_DOUBLE_EQ(gpu["confine_share"].get<double>(), 0.5);
        EXPECT_EQ(gpu["auto_demand"], nlohmann::json::object());
        const auto m = metrics_.render();
        EXPECT_NE(m.find("amdqpd_confine_level{gpu=\"" + std::to_string(kGpu) + "\"} 12"),
                  std::string::npos)
            << m;
        EXPECT_NE(m.find("amdqpd_confine_share{gpu=\"" + std::to_string(kGpu) + "\"} 0.5"),
                  std::string::npos)
            << m;
    } else {
        EXPECT_TRUE(fake_->suspended(lp.pid(), kGpu, lq));
        EXPECT_TRUE(fake_->confined(lp.pid(), kGpu, lq).empty());
    }
    EXPECT_EQ(hp.page()->hdr.busy_ack, 1u);

    shared_->read_index[1] = 1;  // drained: the hysteresis lets it go
    EXPECT_TRUE(step_until(*c, [&] {
        return fake_->confined(lp.pid(), kGpu, lq).empty() && !fake_->suspended(lp.pid(), kGpu, lq);
    })) << c->status_json();
    const auto st = nlohmann::json::parse(c->status_json());
    EXPECT_EQ(st["stats"]["confine_calls"], 1u);
    EXPECT_EQ(st["stats"]["unconfine_calls"], 1u);
    EXPECT_EQ(gpu_status(*c, kGpu)["confine_level"], 0);
    // Every hold goes with the daemon's fd: nothing stays confined.
    c.reset();
    EXPECT_TRUE(fake_->confined(lp.pid(), kGpu, lq).empty());
}

INSTANTIATE_TEST_SUITE_P(Geometry, ConfineTest, ::testing::Bool());

// cu_demand "auto": the high queue's page says how many work groups its
// recent dispatches need (demand_wgs, written by the tagging layer before
// the doorbell's other fields); the lower queue keeps the rest of the CUs
// (the fake GPU: one XCC of 8 CUs, so eighths are single CUs).
class AutoDemandTest : public ControllerTest {
  protected:
    void SetUp() override {
        ControllerTest::SetUp();
        cfg_.policy.cu_demand_is_auto[12] = true;
    }
    // A doorbell of @t publishing dispatches of @wgs work groups, early
    // enough in a demand epoch that the step reading it falls in the same
    // one (a boundary between them would halve the figure).
    static void ring(Tagged& t, std::uint32_t wgs, std::uint64_t write_index) {
        constexpr std::uint64_t epoch = 1ull << AMDQP_ACT_DEMAND_EPOCH_SHIFT;
        while ((amdqp::detail::monotonic_ns() & (epoch - 1)) > epoch - 25'000'000)
            std::this_thread::sleep_for(1ms);
        t.page()->slots[0].demand_wgs = wgs;
        t.doorbell(write_index);
    }
};

TEST_F(AutoDemandTest, HighDispatchesSizeTheLowerQueuesMask) {
    LowAndHigh pair(dir_.path(), shared_, *fake_);
    auto& [lp, hp, lq] = pair;
    auto c = make();
    c->step();
    ASSERT_EQ(c->processes(), 2u);
    ring(hp, 2, 1);
    c->step();
    // 2 of 8 CUs for the high work: the lower queue on CUs 2-7.
    EXPECT_EQ(fake_->confined(lp.pid(), kGpu, lq), std::vector<std::uint32_t>{0xfcu});
    EXPECT_FALSE(fake_->suspended(lp.pid(), kGpu, lq));
    EXPECT_DOUBLE_EQ(c->policy().auto_demand(kGpu, 12), 0.25);
    // The held demand, as amdqpctl status and the metrics show it.
    EXPECT_DOUBLE_EQ(gpu_status(*c, kGpu)["auto_demand"]["12"].get<double>(), 0.25);
    EXPECT_NE(metrics_.render().find("amdqpd_auto_demand{gpu=\"" + std::to_string(kGpu) +
                                     "\",level=\"12\"} 0.25"),
              std::string::npos);
    // A bigger dispatch: the mask moves at once, in one call.
    ring(hp, 6, 2);
    c->step();
    EXPECT_EQ(fake_->confined(lp.pid(), kGpu, lq), std::vector<std::uint32_t>{0xc0u});
    EXPECT_EQ(c->policy().stats().confine_calls, 2u);
    EXPECT_EQ(c->policy().stats().suspend_calls, 0u);

    shared_->read_index[1] = 2;  // drained: the hysteresis lets it go
    EXPECT_TRUE(step_until(*c, [&] { return fake_->confined(lp.pid(), kGpu, lq).empty(); }))
        << c->status_json();
    EXPECT_FALSE(fake_->suspended(lp.pid(), kGpu, lq));
}

TEST_F(AutoDemandTest, HostileDemandIsAtMostASuspension) {
    LowAndHigh pair(dir_.path(), shared_, *fake_);
    auto& [lp, hp, lq] = pair;
    auto c = make();
    c->step();
    ASSERT_EQ(c->processes(), 2u);
    // The victim's page claims the most: it is no level's demand that
    // counts (low is not adaptive), so nothing happens.
    lp.page()->slots[0].demand_wgs = UINT32_MAX;
    lp.doorbell(1000);
    c->step();
    EXPECT_TRUE(fake_->confined(lp.pid(), kGpu, lq).empty());
    EXPECT_FALSE(fake_->suspended(lp.pid(), kGpu, lq));
    // The high tenant claims the most, stamped in the future so that it
    // never decays: its level takes the whole GPU, which is what
    // suspension gives it without an adaptive demand, and no more.
    hp.doorbell(1);
    hp.page()->slots[0].demand_wgs = UINT32_MAX;
    hp.page()->slots[0].last_doorbell_ns = amdqp::detail::monotonic_ns() + 60'000'000'000;
    c->step();
    EXPECT_TRUE(fake_->suspended(lp.pid(), kGpu, lq));
    EXPECT_TRUE(fake_->confined(lp.pid(), kGpu, lq).empty());
    EXPECT_DOUBLE_EQ(c->policy().auto_demand(kGpu, 12), 1.0);
    EXPECT_EQ(c->policy().stats().confine_calls, 0u);
}

TEST_F(AutoDemandTest, GpuWithoutGeometrySuspends) {
    fake_->gpu(kGpu)->cu_per_xcc = 0;
    LowAndHigh pair(dir_.path(), shared_, *fake_);
    auto& [lp, hp, lq] = pair;
    auto c = make();
    c->step();
    ASSERT_EQ(c->processes(), 2u);
    ring(hp, 2, 1);
    c->step();
    EXPECT_TRUE(fake_->suspended(lp.pid(), kGpu, lq));
    EXPECT_TRUE(fake_->confined(lp.pid(), kGpu, lq).empty());
    EXPECT_DOUBLE_EQ(c->policy().auto_demand(kGpu, 12), 0.0);
}

// A tenant's full pages of slots naming no queue cost the loop its share
// (loop_share_pct) and no more: past it they are read less often, while
// another tenant's page is read at every step and its doorbell is acted
// on at once. At 100 % nobody is metered (the control).
class LoopShareTest : public ControllerTest, public ::testing::WithParamInterface<int> {};

TEST_P(LoopShareTest, JunkPagesAreReadWithinTheirUidsShare) {
    if (geteuid() != 0)
        GTEST_SKIP() << "needs root: the junk tenant runs as another user";
    const int share = GetParam();
    cfg_.loop_share_pct = share;
    chmod(dir_.path().c_str(), 01777);
    std::vector<amdqp::detail::SlotInit> junk;
    for (std::uint32_t i = 0; i < AMDQP_ACT_MAX_SLOTS; i++)
        junk.push_back(Tagged::slot(shared_, 3, 15, 0x1000000 + i * 0x1000ull, kGpu, 5000 + i));
    std::vector<std::unique_ptr<Tagged>> tenant;
    for (int i = 0; i < 4; i++)
        tenant.push_back(std::make_unique<Tagged>(dir_.path(), junk, nullptr, 65534));
    LowAndHigh pair(dir_.path(), shared_, *fake_);
    auto& [lp, hp, lq] = pair;
    auto c = make();
    for (int i = 0; i < 300; i++) {
        // The tenant keeps its slots moving, as a spinning writer would.
        for (auto& t : tenant)
            t->doorbell(i + 1, i % AMDQP_ACT_MAX_SLOTS);
        c->step();
        std::this_thread::sleep_for(1ms);
    }
    ASSERT_EQ(c->processes(), 6u) << c->status_json();
    const auto st = nlohmann::json::parse(c->status_json());
    const std::uint64_t skips = st["stats"]["loop_budget_skips"];
    if (share == 100) {
        EXPECT_EQ(skips, 0u);
    } else {
        // ~4 x 1,016 slots a step against 1 % of each 1 ms step.
        EXPECT_GT(skips, 0u) << st.dump();
        std::printf("loop_budget_skips %llu of 4 x 300 page reads\n",
                    static_cast<unsigned long long>(skips));
        const std::string m = metrics_.render();
        EXPECT_NE(m.find("amdqpd_errors_total{kind=\"loop_budget\"}"), std::string::npos) << m;
    }
    // Root's processes are read at every step whatever the tenant does.
    hp.doorbell(1);
    hp.page()->hdr.busy_seq = 1;
    c->step();
    EXPECT_TRUE(fake_->suspended(lp.pid(), kGpu, lq));
    EXPECT_EQ(hp.page()->hdr.busy_ack, 1u);
}

INSTANTIATE_TEST_SUITE_P(Share, LoopShareTest, ::testing::Values(1, 100));

// Per-queue series carry pid labels (who runs what on the node): only
// when the admin asks for them.
TEST_F(ControllerTest, QueueMetricsWithPidsOnlyWhenAsked) {
    Tagged a(dir_.path(), shared_, 0, 7, 0x10000);
    fake_->add_queue(a.pid(), kGpu, 0x10000, 7, getuid());
    auto c = make();
    c->step();
    EXPECT_EQ(metrics_.render().find("pid=\""), std::string::npos) << metrics_.render();
    cfg_.queue_metrics = true;
    c = make();
    c->step();
    EXPECT_NE(metrics_.render().find("pid=\"" + std::to_string(a.pid()) + "\""), std::string::npos);
}

TEST_F(ControllerTest, WithoutTheModuleItKeepsRunningAndRetries) {
    fake_->present = false;
    Tagged a(dir_.path(), shared_, 0, 12, 0x10000);
    auto c = make();
    c->step();
    EXPECT_FALSE(c->device_open());
    EXPECT_EQ(c->processes(), 1u);
    fake_->present = true;
    std::this_thread::sleep_for(1100ms);  // the retry period
    c->step();
    EXPECT_TRUE(c->device_open());
}

}  // namespace
