// SPDX-License-Identifier: MIT
#include "signal.h"

#include <sched.h>

#include <algorithm>

#include "util.h"

namespace hsasim {

namespace {
constexpr uint64_t kSpinNs = 5000;
}  // namespace

uint64_t wait_poll_ns() {
    static const uint64_t ns = std::max<uint64_t>(env_u64("HSA_SIM_POLL_US", 20), 1) * 1000;
    return ns;
}

bool condition_met(hsa_signal_condition_t cond, int64_t value, int64_t compare) {
    switch (cond) {
        case HSA_SIGNAL_CONDITION_EQ:
            return value == compare;
        case HSA_SIGNAL_CONDITION_NE:
            return value != compare;
        case HSA_SIGNAL_CONDITION_LT:
            return value < compare;
        case HSA_SIGNAL_CONDITION_GTE:
            return value >= compare;
    }
    return false;
}

void Signal::add_pending(const std::shared_ptr<CompletionSource>& source, uint64_t index) {
    std::lock_guard lock(mu_);
    if (pending_.size() >= prune_at_) {
        resolve_locked(false);
        prune_at_ = std::max(kPruneMin, 2 * pending_.size());
    }
    pending_.push_back(Pending{source, index});
    npending_.store(static_cast<uint32_t>(pending_.size()), std::memory_order_release);
}

void Signal::resolve_slow() {
    std::lock_guard lock(mu_);
    resolve_locked(true);
}

void Signal::resolve_locked(bool report) {
    const CompletionSource* last = nullptr;
    uint64_t read_index = 0;
    auto done = [&](const Pending& p) {
        // Entries of one queue come in index order: one look per queue.
        if (p.source.get() != last) {
            last = p.source.get();
            read_index = p.source->read_index(report);
        }
        if (p.index >= read_index)
            return false;
        abi.value.fetch_sub(1, std::memory_order_acq_rel);
        return true;
    };
    std::erase_if(pending_, done);
    npending_.store(static_cast<uint32_t>(pending_.size()), std::memory_order_release);
}

int64_t Signal::wait(hsa_signal_condition_t cond, int64_t compare, uint64_t timeout_ns,
                     std::memory_order order) {
    const uint64_t start = now_ns();
    const uint64_t deadline = timeout_ns > UINT64_MAX - start ? UINT64_MAX : start + timeout_ns;
    for (;;) {
        resolve();
        int64_t v = abi.value.load(order);
        if (condition_met(cond, v, compare))
            return v;
        uint64_t now = now_ns();
        if (now >= deadline)
            return v;
        if (now - start < kSpinNs)
            sched_yield();
        else
            sleep_ns(std::min(wait_poll_ns(), deadline - now));
    }
}

Signal* SignalPool::create(int64_t value, Queue* doorbell_of) {
    std::lock_guard lock(mu_);
    Signal* s;
    if (free_.empty()) {
        all_.push_back(std::make_unique<Signal>());
        s = all_.back().get();
    } else {
        s = free_.back();
        free_.pop_back();
    }
    s->abi.kind = doorbell_of ? AMD_SIGNAL_KIND_DOORBELL : AMD_SIGNAL_KIND_USER;
    s->abi.value.store(value, std::memory_order_relaxed);
    s->abi.queue_ptr = reinterpret_cast<uint64_t>(nullptr);
    s->queue_ = doorbell_of;
    s->magic_.store(Signal::kMagic, std::memory_order_release);
    return s;
}

bool SignalPool::destroy(Signal* s) {
    std::lock_guard lock(mu_);
    uint64_t magic = Signal::kMagic;
    if (!s->magic_.compare_exchange_strong(magic, 0, std::memory_order_acq_rel))
        return false;
    {
        std::lock_guard slock(s->mu_);
        s->pending_.clear();
        s->npending_.store(0, std::memory_order_release);
        s->prune_at_ = Signal::kPruneMin;
    }
    s->queue_ = nullptr;
    s->abi.kind = AMD_SIGNAL_KIND_INVALID;
    free_.push_back(s);
    return true;
}

}  // namespace hsasim
