// SPDX-License-Identifier: MIT
//
// The cooperative fallback as amdqpctl drives it: this test process plays
// a tagged process whose queues only its own tagging layer can take off.
// It publishes an activity page and acknowledges requests from a thread.
#include <fcntl.h>
#include <linux/futex.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <chrono>
#include <climits>
#include <cstring>
#include <nlohmann/json.hpp>
#include <thread>

#include <amdqp/activity.hpp>

#include "cli_fixture.hpp"
#include "exit_status.hpp"

namespace amdqpctl::testing {
namespace {

using nlohmann::json;

template <typename T>
std::atomic_ref<T> at(T& field) {
    return std::atomic_ref<T>(field);
}

class CoopProcess {
  public:
    // This process's page, made as the tagging layer makes it (a sealed
    // memfd it holds).
    CoopProcess(std::uint32_t gpu_id, std::uint32_t priority) {
        fd_ = ::memfd_create(AMDQP_ACT_MEMFD_NAME, MFD_CLOEXEC | MFD_ALLOW_SEALING);
        EXPECT_GE(fd_, 0);
        EXPECT_EQ(::ftruncate(fd_, sizeof(amdqp_act_page)), 0);
        EXPECT_EQ(::fcntl(fd_, F_ADD_SEALS, F_SEAL_SHRINK | F_SEAL_GROW | F_SEAL_SEAL), 0);
        void* p =
            ::mmap(nullptr, sizeof(amdqp_act_page), PROT_READ | PROT_WRITE, MAP_SHARED, fd_, 0);
        EXPECT_NE(p, MAP_FAILED);
        page_ = static_cast<amdqp_act_page*>(p);
        auto& h = page_->hdr;
        h.version = AMDQP_ACT_VERSION;
        h.size = sizeof(amdqp_act_page);
        h.slot_size = sizeof(amdqp_act_slot);
        h.max_slots = AMDQP_ACT_MAX_SLOTS;
        h.pid = static_cast<std::uint32_t>(::getpid());
        h.flags = AMDQP_ACT_F_COOP | AMDQP_ACT_F_PRELOAD;
        h.priority = priority;
        std::strncpy(h.group, "tp-batch", sizeof(h.group));
        for (std::uint32_t i = 0; i < 2; i++) {
            auto& s = page_->slots[i];
            s.gpu_id = gpu_id;
            s.priority = priority;
            s.mechanism = AMDQP_ACT_MECH_COOP;
            s.ring_va = 0x7e0000000000ull + i * 0x10000;
            s.queue_id = UINT32_MAX;
            at(s.state).store(AMDQP_ACT_SLOT_LIVE, std::memory_order_release);
        }
        h.num_slots = 2;
        at(h.magic).store(AMDQP_ACT_MAGIC, std::memory_order_release);
    }
    ~CoopProcess() {
        stop_ = true;
        if (acker_.joinable())
            acker_.join();
        ::munmap(page_, sizeof(amdqp_act_page));
        ::close(fd_);
    }

    // Carries out every request, as a tagging layer would.
    void start_acking() {
        acker_ = std::thread([this] {
            auto& h = page_->hdr;
            while (!stop_) {
                const std::uint32_t seq = at(h.coop_seq).load(std::memory_order_acquire);
                if (seq != at(h.coop_ack_seq).load(std::memory_order_relaxed)) {
                    const bool off = at(h.coop_suspend).load(std::memory_order_relaxed) != 0;
                    at(h.coop_state)
                        .store(off ? AMDQP_ACT_COOP_SUSPENDED : AMDQP_ACT_COOP_RUNNING,
                               std::memory_order_relaxed);
                    at(h.coop_updates).fetch_add(2, std::memory_order_relaxed);
                    at(h.coop_ack_seq).store(seq, std::memory_order_release);
                    syscall(SYS_futex, &h.coop_ack_seq, FUTEX_WAKE, INT_MAX, nullptr, nullptr, 0);
                }
                std::this_thread::sleep_for(std::chrono::milliseconds(1));
            }
        });
    }

    std::uint32_t requested() { return at(page_->hdr.coop_suspend).load(); }
    std::uint32_t state() { return at(page_->hdr.coop_state).load(); }
    std::uint32_t seq() { return at(page_->hdr.coop_seq).load(); }
    std::uint64_t lease() { return at(page_->hdr.coop_lease_ns).load(); }
    // What the tagging layer does when a lease runs out unrenewed.
    void expire() {
        auto& h = page_->hdr;
        at(h.coop_error).store(-ETIMEDOUT);
        at(h.coop_state).store(AMDQP_ACT_COOP_RUNNING);
        at(h.coop_expired).fetch_add(1);
    }
    // Waits up to 5 s for @state after request @seq.
    bool reaches(std::uint32_t seq, std::uint32_t state) {
        for (int i = 0; i < 5000; i++) {
            if (at(page_->hdr.coop_ack_seq).load() == seq && this->state() == state)
                return true;
            std::this_thread::sleep_for(std::chrono::milliseconds(1));
        }
        return false;
    }

  private:
    std::string path_;
    int fd_ = -1;
    amdqp_act_page* page_ = nullptr;
    std::thread acker_;
    std::atomic<bool> stop_{false};
};

class Coop : public CliTest {
  protected:
    void SetUp() override {
        CliTest::SetUp();
        fake->add_gpu(1);
        fake->add_queue(4242, 1, 0x7f0000001000, 12);
        add_process(4242, "llm-server", "/a");
        add_process(static_cast<std::uint32_t>(::getpid()), "coop-proc", "/b");
    }
    const std::string me = std::to_string(::getpid());
};

TEST_F(Coop, ListShowsPageOnlyQueues) {
    CoopProcess proc(1, 2);
    ASSERT_EQ(run({"list", "--json"}), exit_ok) << err.str();
    json rows = json::parse(out.str());
    ASSERT_EQ(rows.size(), 3u);
    int coop = 0;
    for (const auto& r : rows) {
        if (r["mechanism"] != "coop")
            continue;
        coop++;
        EXPECT_EQ(r["pid"], ::getpid());
        EXPECT_EQ(r["comm"], "coop-proc");
        EXPECT_EQ(r["priority"], 2);
        EXPECT_EQ(r["queue_id"], nullptr);
        EXPECT_EQ(r["state"], "running");
        EXPECT_EQ(r["group"], "tp-batch");
    }
    EXPECT_EQ(coop, 2);
}

TEST_F(Coop, ListWithoutTheModuleStillShowsThem) {
    CoopProcess proc(1, 2);
    fake->present = false;
    ASSERT_EQ(run({"list"}), exit_ok) << err.str();
    EXPECT_NE(out.str().find("coop"), std::string::npos);
    EXPECT_NE(err.str().find("activity pages only"), std::string::npos);
}

TEST_F(Coop, SuspendByPidHoldsAndReleases) {
    CoopProcess proc(1, 2);
    proc.start_acking();
    std::uint32_t during = 0;
    waiter.on_wait = [&](int, int) {
        during = proc.state();
        EXPECT_EQ(proc.requested(), 1u);
        return WaitResult::stop;
    };
    ASSERT_EQ(run({"suspend", me, "--json"}), exit_ok) << err.str();
    EXPECT_EQ(during, AMDQP_ACT_COOP_SUSPENDED);
    EXPECT_EQ(proc.requested(), 0u);
    EXPECT_EQ(proc.state(), AMDQP_ACT_COOP_RUNNING);
    json r = json::parse(out.str());
    ASSERT_EQ(r["suspended"].size(), 1u);
    EXPECT_EQ(r["suspended"][0]["mechanism"], "coop");
    EXPECT_EQ(r["suspended"][0]["queues"], 2);
}

TEST_F(Coop, SuspendBelowReachesBothMechanisms) {
    CoopProcess proc(1, 2);
    fake->add_queue(5151, 1, 0x7f0000002000, 2);
    proc.start_acking();
    bool both = false;
    waiter.on_wait = [&](int, int) {
        both = proc.state() == AMDQP_ACT_COOP_SUSPENDED && fake->suspended(5151, 1, 2) &&
               !fake->suspended(4242, 1, 1);
        return WaitResult::timeout;
    };
    ASSERT_EQ(run({"suspend", "--below", "8", "--gpu", "1", "--for", "0"}), exit_ok) << err.str();
    EXPECT_TRUE(both);
    EXPECT_EQ(proc.state(), AMDQP_ACT_COOP_RUNNING);
    EXPECT_FALSE(fake->suspended(5151, 1, 2));
}

TEST_F(Coop, NoAckIsReportedAndTheRequestTakenBack) {
    CoopProcess proc(1, 2);
    EXPECT_EQ(run({"suspend", me, "--ack-timeout", "0.05", "--for", "0"}), exit_error);
    EXPECT_NE(err.str().find("did not acknowledge"), std::string::npos) << err.str();
    EXPECT_EQ(proc.requested(), 0u);
}

TEST_F(Coop, ResumeLiftsALeftoverRequest) {
    CoopProcess proc(1, 2);
    proc.start_acking();
    // A suspend whose amdqpctl was killed, within its lease: the request
    // still stands.
    waiter.on_wait = [&](int, int) { return WaitResult::stop; };
    {
        auto page = amdqp::activity::Page::open(::getpid(), amdqp::activity::Page::Access::control);
        ASSERT_TRUE(page.request_coop(true, std::chrono::seconds(5)).acked);
    }
    ASSERT_EQ(proc.state(), AMDQP_ACT_COOP_SUSPENDED);
    ASSERT_EQ(run({"resume", me}), exit_ok) << err.str();
    EXPECT_EQ(proc.state(), AMDQP_ACT_COOP_RUNNING);
    EXPECT_NE(out.str().find("resumed pid " + me + " (coop-proc): 2 queue(s) [coop]"),
              std::string::npos)
        << out.str();
}

TEST_F(Coop, SuspendRenewsTheLeaseWhileHolding) {
    CoopProcess proc(1, 2);
    proc.start_acking();
    std::vector<int> timeouts;
    std::vector<std::uint64_t> leases;
    waiter.on_wait = [&](int, int timeout_ms) {
        timeouts.push_back(timeout_ms);
        leases.push_back(proc.lease());
        EXPECT_EQ(proc.state(), AMDQP_ACT_COOP_SUSPENDED);
        if (timeouts.size() == 4)
            return WaitResult::stop;
        std::this_thread::sleep_for(std::chrono::milliseconds(timeout_ms));
        return WaitResult::timeout;
    };
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    const std::uint64_t start = static_cast<std::uint64_t>(t.tv_sec) * 1000000000u + t.tv_nsec;
    ASSERT_EQ(run({"suspend", me, "--lease", "0.3"}), exit_ok) << err.str();
    // Woken every third of the lease, each time with a later deadline.
    EXPECT_EQ(timeouts, (std::vector<int>{100, 100, 100, 100}));
    ASSERT_EQ(leases.size(), 4u);
    EXPECT_GE(leases[0], start + 300000000u);
    for (std::size_t i = 1; i < leases.size(); i++)
        EXPECT_GE(leases[i], leases[i - 1] + 100000000u) << i;
    EXPECT_EQ(proc.requested(), 0u);
    EXPECT_EQ(proc.state(), AMDQP_ACT_COOP_RUNNING);
    EXPECT_EQ(err.str().find("lease"), std::string::npos) << err.str();
}

TEST_F(Coop, LapsedLeaseIsAskedForAgain) {
    // amdqpctl was stopped (Ctrl-Z) for longer than the lease: the process
    // resumed on its own; amdqpctl, running again, suspends it again.
    CoopProcess proc(1, 2);
    proc.start_acking();
    int waits = 0;
    bool again = false;
    waiter.on_wait = [&](int, int) {
        if (++waits == 1) {
            proc.expire();
            return WaitResult::timeout;
        }
        again = proc.reaches(2, AMDQP_ACT_COOP_SUSPENDED);
        return WaitResult::stop;
    };
    ASSERT_EQ(run({"suspend", me, "--lease", "0.3"}), exit_ok) << err.str();
    EXPECT_TRUE(again);
    EXPECT_NE(err.str().find("suspending it again"), std::string::npos) << err.str();
    EXPECT_EQ(proc.seq(), 3u);  // suspend, suspend again, resume
    EXPECT_EQ(proc.state(), AMDQP_ACT_COOP_RUNNING);
}

TEST_F(Coop, ReplacedSuspensionIsLeftToTheLaterRequest) {
    CoopProcess proc(1, 2);
    proc.start_acking();
    int waits = 0;
    waiter.on_wait = [&](int, int) {
        if (++waits == 1) {
            // amdqpctl resume from another terminal.
            auto page =
                amdqp::activity::Page::open(::getpid(), amdqp::activity::Page::Access::control);
            EXPECT_TRUE(page.request_coop(false, std::chrono::seconds(5)).acked);
            return WaitResult::timeout;
        }
        return WaitResult::stop;
    };
    ASSERT_EQ(run({"suspend", me, "--lease", "0.3"}), exit_ok) << err.str();
    EXPECT_NE(err.str().find("replaced this suspension"), std::string::npos) << err.str();
    EXPECT_EQ(proc.seq(), 2u);  // no resume of its own on top
    EXPECT_EQ(proc.state(), AMDQP_ACT_COOP_RUNNING);
}

TEST_F(Coop, LeaseUsage) {
    CoopProcess proc(1, 2);
    for (const char* bad : {"0", "-1", "inf", "soon"})
        EXPECT_EQ(run({"suspend", me, "--lease", bad}), exit_usage) << bad;
    EXPECT_EQ(run({"resume", me, "--lease", "1"}), exit_usage);
    EXPECT_EQ(proc.seq(), 0u);
}

TEST_F(Coop, PriorityCannotChangeCooperativeQueues) {
    CoopProcess proc(1, 2);
    EXPECT_EQ(run({"priority", me, "high"}), exit_error);
    EXPECT_NE(err.str().find("restart it with amdqpctl run --priority high"), std::string::npos)
        << err.str();
}

TEST_F(Coop, StatusReportsTheMechanismPerDevice) {
    CoopProcess proc(3, 2);
    ASSERT_EQ(run({"status", "--json"}), exit_ok) << err.str();
    json s = json::parse(out.str());
    ASSERT_EQ(s["devices"].size(), 2u);
    EXPECT_EQ(s["devices"][0]["gpu"], 1);
    EXPECT_EQ(s["devices"][0]["mechanism"], "amdqp");
    EXPECT_EQ(s["devices"][1]["gpu"], 3);
    EXPECT_EQ(s["devices"][1]["mechanism"], "coop");
    EXPECT_EQ(s["devices"][1]["tagged_queues"], 2);
    EXPECT_EQ(s["tagged_processes"], 1);
    EXPECT_EQ(s["coop_capable_processes"], 1);
}

}  // namespace
}  // namespace amdqpctl::testing
