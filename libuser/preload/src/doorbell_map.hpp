// SPDX-License-Identifier: MIT
//
// Doorbell signal handle -> the queue's slot in the activity page and its
// AQL ring (the doorbell hook reads the packets it publishes). Every
// hsa_signal_store_* of the process looks here, so a lookup is a hash and a
// load or two, without a lock: open addressing, keys published with release
// stores, removals leave tombstones that later insertions reuse. A lookup
// probes no further than the longest distance any key was placed from its
// home, so a table that churned into tombstones stays as fast for the many
// signals that are no doorbell. Writers are serialised by the caller.
#ifndef AMDQP_PRELOAD_DOORBELL_MAP_HPP
#define AMDQP_PRELOAD_DOORBELL_MAP_HPP

#include <array>
#include <atomic>
#include <cstddef>
#include <cstdint>

#include <amdqp/activity.h>

#include "aql_demand.hpp"

namespace amdqp::preload {

// What a doorbell store needs of its queue.
struct DoorbellTarget {
    amdqp_act_slot* slot = nullptr;
    AqlRing ring;  // empty: packets not read
};

class DoorbellMap {
  public:
    // Far more than AMDQP_ACT_MAX_SLOTS: probes stay short.
    static constexpr std::size_t capacity = 512;

    DoorbellTarget find_target(std::uint64_t handle) const noexcept {
        std::size_t i = home(handle);
        const std::size_t probes = max_probe_.load(std::memory_order_acquire) + 1;
        for (std::size_t n = 0; n < probes; n++, i = (i + 1) & mask) {
            std::uint64_t k = keys_[i].load(std::memory_order_acquire);
            if (k == handle)
                return {values_[i].slot.load(std::memory_order_relaxed),
                        AqlRing::from_word(values_[i].ring.load(std::memory_order_relaxed))};
            if (k == empty)
                return {};
        }
        return {};
    }
    amdqp_act_slot* find(std::uint64_t handle) const noexcept { return find_target(handle).slot; }

    // False when there is no room (the queue then goes uncounted).
    bool insert(std::uint64_t handle, amdqp_act_slot* slot, AqlRing ring = {}) noexcept {
        if (handle == empty || handle == tombstone)
            return false;
        std::size_t i = home(handle);
        std::size_t reuse = capacity, distance = 0;
        for (std::size_t n = 0; n < capacity; n++, i = (i + 1) & mask) {
            std::uint64_t k = keys_[i].load(std::memory_order_relaxed);
            if (k == handle) {
                values_[i].ring.store(ring.word(), std::memory_order_relaxed);
                values_[i].slot.store(slot, std::memory_order_release);
                return true;
            }
            if ((k == tombstone || k == empty) && reuse == capacity) {
                reuse = i;
                distance = n;
            }
            if (k == empty)
                break;
        }
        if (reuse == capacity)
            return false;
        if (distance > max_probe_.load(std::memory_order_relaxed))
            max_probe_.store(distance, std::memory_order_release);
        values_[reuse].slot.store(slot, std::memory_order_relaxed);
        values_[reuse].ring.store(ring.word(), std::memory_order_relaxed);
        keys_[reuse].store(handle, std::memory_order_release);
        return true;
    }

    void erase(std::uint64_t handle) noexcept {
        std::size_t i = home(handle);
        const std::size_t probes = max_probe_.load(std::memory_order_relaxed) + 1;
        for (std::size_t n = 0; n < probes; n++, i = (i + 1) & mask) {
            std::uint64_t k = keys_[i].load(std::memory_order_relaxed);
            if (k == handle) {
                keys_[i].store(tombstone, std::memory_order_release);
                return;
            }
            if (k == empty)
                return;
        }
    }

    // Only when no other thread can look (fork child, tests).
    void clear() noexcept {
        for (auto& k : keys_)
            k.store(empty, std::memory_order_relaxed);
        max_probe_.store(0, std::memory_order_relaxed);
    }

    // Longest probe a lookup makes, minus one (tests).
    std::size_t max_probe() const noexcept { return max_probe_.load(std::memory_order_relaxed); }

  private:
    static constexpr std::uint64_t empty = 0;  // handle 0 is no signal
    static constexpr std::uint64_t tombstone = ~std::uint64_t{0};
    static constexpr std::size_t mask = capacity - 1;
    static_assert((capacity & mask) == 0);

    static std::size_t home(std::uint64_t handle) noexcept {
        // Handles are addresses of signal objects: drop the alignment bits,
        // then a Fibonacci hash spreads neighbours apart.
        return static_cast<std::size_t>(((handle >> 4) * 0x9E3779B97F4A7C15ull) >> 55) & mask;
    }

    std::array<std::atomic<std::uint64_t>, capacity> keys_{};
    // Side by side: a hit loads both from one cache line. The ring is one
    // word (AqlRing): a lookup racing a re-insert may pair the slot of one
    // queue with the ring of another, both valid, never a base with a
    // foreign size.
    struct Value {
        std::atomic<amdqp_act_slot*> slot{nullptr};
        std::atomic<std::uint64_t> ring{0};
    };
    std::array<Value, capacity> values_{};
    std::atomic<std::size_t> max_probe_{0};
};

}  // namespace amdqp::preload

#endif  // AMDQP_PRELOAD_DOORBELL_MAP_HPP
