// SPDX-License-Identifier: MIT
// HSA signals of the stand-in. A handle points at an amd_signal_t-shaped
// header (kind, value) as in ROCr, so tools that peek at it see what they
// expect. Completion signals of packets are not touched by the sim: each
// one carries the (queue, packet index) pairs still outstanding, and every
// operation on it first applies the decrements of those that completed.
#pragma once

#include <hsa/amd_hsa_signal.h>
#include <hsa/hsa.h>

#include <atomic>
#include <cstdint>
#include <memory>
#include <mutex>
#include <vector>

#include "completion.h"

namespace hsasim {

class Queue;

// amd_signal_t with an atomic value.
struct alignas(64) SignalAbi {
    int64_t kind;
    std::atomic<int64_t> value;
    uint64_t event_mailbox_ptr;
    uint32_t event_id;
    uint32_t reserved1;
    uint64_t start_ts;
    uint64_t end_ts;
    uint64_t queue_ptr;
    uint32_t reserved3[2];
};
static_assert(sizeof(SignalAbi) == sizeof(amd_signal_t));
static_assert(offsetof(SignalAbi, value) == offsetof(amd_signal_t, value));
static_assert(offsetof(SignalAbi, queue_ptr) == offsetof(amd_signal_t, queue_ptr));

class Signal {
  public:
    // abi first: the handle is the address of the Signal and of its abi.
    SignalAbi abi{};

    static Signal* from_handle(hsa_signal_t h) {
        auto* s = reinterpret_cast<Signal*>(h.handle);
        if (!s || s->magic_.load(std::memory_order_relaxed) != kMagic)
            return nullptr;
        return s;
    }
    hsa_signal_t handle() { return hsa_signal_t{reinterpret_cast<uint64_t>(this)}; }

    // Doorbell signals ring this queue instead of holding a value.
    Queue* doorbell_queue() const { return queue_; }

    // Packet @index of the queue behind @source decrements this signal by
    // one when it completes.
    void add_pending(const std::shared_ptr<CompletionSource>& source, uint64_t index);

    // Applies the decrements of completed packets.
    void resolve() {
        if (npending_.load(std::memory_order_acquire) != 0)
            resolve_slow();
    }

    int64_t wait(hsa_signal_condition_t cond, int64_t compare, uint64_t timeout_ns,
                 std::memory_order order);

  private:
    friend class SignalPool;
    static constexpr uint64_t kMagic = 0x68736173696d5347ull;  // "GSmisash"

    struct Pending {
        std::shared_ptr<CompletionSource> source;
        uint64_t index;
    };

    void resolve_slow();
    // Applies completed decrements; mu_ held. @report: let a queue error
    // reach the queue's callback (not from inside a doorbell store).
    void resolve_locked(bool report);

    std::atomic<uint64_t> magic_{0};
    Queue* queue_ = nullptr;
    std::atomic<uint32_t> npending_{0};
    std::mutex mu_;
    std::vector<Pending> pending_;
    // A signal nobody looks at still must not collect entries forever.
    size_t prune_at_ = kPruneMin;
    static constexpr size_t kPruneMin = 256;
};

// Signals of one runtime instance. Destroyed signals are kept for reuse:
// a stale handle in an old packet then still points at a Signal (whose
// magic says it is dead) instead of at freed memory.
class SignalPool {
  public:
    Signal* create(int64_t value, Queue* doorbell_of = nullptr);
    bool destroy(Signal* s);

  private:
    std::mutex mu_;
    std::vector<std::unique_ptr<Signal>> all_;
    std::vector<Signal*> free_;
};

// Waits of hsa_signal_wait_* and hsa_amd_signal_wait_any poll: first
// sched_yield for a few microseconds, then sleep HSA_SIM_POLL_US (default
// 20 us) between looks, since the sim does not wake anybody up.
uint64_t wait_poll_ns();
bool condition_met(hsa_signal_condition_t cond, int64_t value, int64_t compare);

}  // namespace hsasim
