// SPDX-License-Identifier: MIT
// A packet processor in a thread, for hosts without the amdqp_sim module:
// same ring and control page as a sim user-mode queue and the same packet
// rules (amdqp_sim.h), one thread per queue and no contention between
// queues. The thread polls the doorbell as the sim's executor does, so the
// submission path is the same syscall-free one.
#include <pthread.h>
#include <sys/mman.h>
#include <sys/prctl.h>

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <thread>

#include "aql.h"
#include "backend.h"
#include "util.h"

namespace hsasim {

namespace {

constexpr uint64_t kMaxKernelNs = 10'000'000'000ull;
constexpr uint64_t kSpinBelowNs = 20'000;       // shorter kernels: spin, sleeping overshoots
constexpr uint64_t kSleepSliceNs = 10'000'000;  // a long kernel still sees stop promptly
constexpr uint64_t kLazyAfterNs = 10'000'000;   // idle longer than this: poll less often
constexpr uint64_t kLazyPollNs = 200'000;

class ThreadQueue final : public HwQueue {
  public:
    ThreadQueue(Mapping mapping, uint32_t ring_bytes)
        : mapping_(std::move(mapping)), mask_(ring_bytes / AMDQP_SIM_PACKET_SIZE - 1) {
        ring_ = static_cast<uint8_t*>(mapping_.get());
        ctl_ = reinterpret_cast<amdqp_sim_uq_ctl*>(ring_ + ring_bytes);
        poll_ns_ = std::max<uint64_t>(env_u64("HSA_SIM_POLL_US", 20), 1) * 1000;
        worker_ = std::jthread([this](std::stop_token st) { run(st); });
    }

    ~ThreadQueue() override {
        worker_.request_stop();
        worker_.join();
    }

    // Queues of this backend do not compete: there is no scheduler to tell,
    // and no compute units to confine a queue to.
    hsa_status_t set_priority(uint32_t) override { return HSA_STATUS_SUCCESS; }
    hsa_status_t set_cu_mask(const std::vector<uint32_t>&) override { return HSA_STATUS_SUCCESS; }

  private:
    void run(std::stop_token st) {
        // This thread's own timer slack: sleeps end close to when asked.
        prctl(PR_SET_TIMERSLACK, 1000UL, 0, 0, 0);
        pthread_setname_np(pthread_self(), "hsa-sim-cp");
        std::atomic_ref<__u64> doorbell(ctl_->doorbell);
        std::atomic_ref<__u64> read_index(ctl_->read_index);
        uint64_t r = 0;
        uint64_t idle_since = now_ns();
        while (!st.stop_requested()) {
            auto* pkt = reinterpret_cast<hsa_kernel_dispatch_packet_t*>(
                ring_ + (r & mask_) * AMDQP_SIM_PACKET_SIZE);
            std::atomic_ref<uint16_t> header(pkt->header);
            const bool rung = r < doorbell.load(std::memory_order_acquire);
            const uint16_t h = rung ? header.load(std::memory_order_acquire) : 0;
            const uint8_t type = packet_type(h);
            if (!rung || type == HSA_PACKET_TYPE_INVALID) {
                uint64_t now = now_ns();
                sleep_ns(now - idle_since > kLazyAfterNs ? kLazyPollNs : poll_ns_);
                continue;
            }
            if (type == HSA_PACKET_TYPE_KERNEL_DISPATCH) {
                const uint64_t ns = pkt->kernel_object;
                if (ns < 1 || ns > kMaxKernelNs) {
                    fail(-EINVAL);
                    return;
                }
                execute(ns, st);
                if (st.stop_requested())
                    return;
            } else if (type != HSA_PACKET_TYPE_BARRIER_AND && type != HSA_PACKET_TYPE_BARRIER_OR) {
                fail(-EINVAL);
                return;
            }
            // The slot is free for the producer only once read_index passes it.
            header.store(
                static_cast<uint16_t>((h & ~AMDQP_SIM_PKT_TYPE_MASK) | HSA_PACKET_TYPE_INVALID),
                std::memory_order_release);
            ++r;
            idle_since = now_ns();
            std::atomic_ref<__u64>(ctl_->completed_ns).store(idle_since, std::memory_order_relaxed);
            read_index.store(r, std::memory_order_release);
        }
    }

    static void execute(uint64_t ns, const std::stop_token& st) {
        const uint64_t end = now_ns() + ns;
        for (uint64_t now = now_ns(); now < end && !st.stop_requested(); now = now_ns()) {
            uint64_t left = end - now;
            if (left > kSpinBelowNs)
                sleep_ns(std::min(left - kSpinBelowNs / 2, kSleepSliceNs));
        }
    }

    void fail(int32_t err) {
        std::atomic_ref<__s32>(ctl_->error).store(err, std::memory_order_release);
    }

    Mapping mapping_;
    uint64_t mask_;
    uint64_t poll_ns_;
    std::jthread worker_;  // last: stopped before the mapping goes
};

class ThreadBackend final : public Backend {
  public:
    ThreadBackend() { gpus_.push_back(GpuDesc{0, 1, "hsa-sim thread GPU"}); }

    const char* name() const override { return "thread"; }
    const std::vector<GpuDesc>& gpus() const override { return gpus_; }

    hsa_status_t create_queue(const GpuDesc&, uint32_t ring_bytes, uint32_t,
                              std::unique_ptr<HwQueue>* out) override {
        const size_t len = size_t{ring_bytes} + AMDQP_SIM_CTL_SIZE;
        void* p = mmap(nullptr, len, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
        if (p == MAP_FAILED)
            return HSA_STATUS_ERROR_OUT_OF_RESOURCES;
        *out = std::make_unique<ThreadQueue>(Mapping(p, len), ring_bytes);
        return HSA_STATUS_SUCCESS;
    }

  private:
    std::vector<GpuDesc> gpus_;
};

}  // namespace

std::unique_ptr<Backend> make_thread_backend(std::string*) {
    return std::make_unique<ThreadBackend>();
}

}  // namespace hsasim
