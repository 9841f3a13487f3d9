// SPDX-License-Identifier: MIT
//
// The tagging layer's view of the process's queues, keyed by ring base VA.
// Two sources describe a queue and either may come first: the HSA layer
// (hsa_queue_create: the ring, the doorbell signal, the queue structure) and
// the creation ioctl (the driver's gpu and queue id, the fd). Every queue is
// registered with amdqp.ko at its priority, gets a slot in the activity page
// and, when amdqp.ko cannot steer it but its ids are known, is put under the
// cooperative mechanism.
//
// Thread safety: every method but doorbell_slot() takes the registry's lock;
// doorbell_slot() is the submission hot path and takes none.
#ifndef AMDQP_PRELOAD_QUEUE_REGISTRY_HPP
#define AMDQP_PRELOAD_QUEUE_REGISTRY_HPP

#include <atomic>
#include <cstdint>
#include <functional>
#include <map>
#include <mutex>
#include <optional>

#include <amdqp/activity.h>

#include "activity_page.hpp"
#include "config.hpp"
#include "doorbell_map.hpp"
#include "kernel_link.hpp"
#include "queue_control.hpp"

namespace amdqp::preload {

// What the HSA layer knows of a queue.
struct HsaQueueView {
    std::uint64_t ring_va = 0;        // hsa_queue_t.base_address
    std::uint64_t doorbell = 0;       // hsa_queue_t.doorbell_signal.handle
    std::uint64_t read_index_va = 0;  // &amd_queue_t.read_dispatch_id
    std::uint32_t ring_packets = 0;   // hsa_queue_t.size: packets the ring holds
};

struct CoopOutcome {
    std::uint64_t updates = 0;  // update calls that took effect
    int error = 0;              // 0 or the last failure's negative errno
};

class QueueRegistry {
  public:
    QueueRegistry(detail::ActivityWriter& page, KernelLink& link, QueueControl& control,
                  Config config);

    // Called (without the registry's lock) when the first queue under the
    // cooperative mechanism appears; returns whether requests will be
    // carried out (the watcher runs). Only then is AMDQP_ACT_F_COOP set.
    void set_coop_starter(std::function<bool()> starter) { coop_starter_ = std::move(starter); }

    // --- the HSA layer
    void hsa_queue_created(const HsaQueueView& q);
    void hsa_queue_destroyed(std::uint64_t ring_va);
    // hsa_amd_queue_set_priority succeeded (AMDQP_STREAM_PRIORITY=1 only).
    void hsa_queue_priority(std::uint64_t ring_va, int hsa_priority);

    // --- the ioctl observer
    void kernel_queue_created(const KernelQueueId& id);
    void kernel_queue_destroyed(QueueKind kind, int fd, std::uint32_t gpu_id,
                                std::uint32_t queue_id);
    // The runtime changes a queue (its priority, usually). Returns the
    // queue_percentage to pass on: 0 while the cooperative mechanism holds
    // the queue off, so that a priority change does not put it back.
    std::uint32_t kernel_queue_updated(QueueKind kind, int fd, std::uint32_t gpu_id,
                                       std::uint32_t queue_id, std::uint32_t percentage,
                                       std::uint32_t priority);
    // Whether kernel_queue_updated() may have anything to do (cheap).
    bool holding_off() const noexcept { return holding_.load(std::memory_order_relaxed); }

    // --- the cooperative mechanism
    // Takes every cooperative queue off (@suspend) or puts it back.
    CoopOutcome apply_coop(bool suspend);
    std::size_t coop_queues() const;

    // --- the hot path: the slot of the queue whose doorbell is @handle
    amdqp_act_slot* doorbell_slot(std::uint64_t handle) const noexcept {
        return doorbells_.find(handle);
    }
    // The same with the queue's AQL ring (empty if unknown).
    DoorbellTarget doorbell(std::uint64_t handle) const noexcept {
        return doorbells_.find_target(handle);
    }

    std::size_t size() const;
    // The runtime shut down: forget every queue.
    void clear();
    // fork(): lock in the parent before, unlock after; in the child, unlock
    // and forget everything (none of the parent's queues are the child's).
    void lock_for_fork() { mutex_.lock(); }
    void unlock_after_fork_parent() { mutex_.unlock(); }
    void reset_after_fork_child();

    const Config& config() const noexcept { return config_; }

  private:
    struct Record {
        std::uint64_t ring_va = 0;
        bool hsa = false;  // seen through hsa_queue_create
        std::uint64_t doorbell = 0;
        std::uint64_t read_index_va = 0;
        std::uint32_t ring_packets = 0;
        int slot = -1;
        bool untracked = false;  // no slot free: counted in the page's untracked
        std::uint32_t want_priority = 0;
        bool tagged = false;         // registration tried at want_priority
        std::uint32_t priority = 0;  // what the page shows
        std::uint32_t mechanism = AMDQP_ACT_MECH_NONE;
        std::uint32_t gpu_id = 0;
        std::optional<std::uint32_t> queue_id;
        KernelQueueId kid;
        bool coop_off = false;  // taken off by the cooperative mechanism
    };

    Record* find_kernel(QueueKind kind, int fd, std::uint32_t gpu_id, std::uint32_t queue_id);
    // Brings @r's registration, slot and mechanism up to date. Returns
    // whether it became the first cooperative queue.
    bool sync(Record& r);
    void register_with_kernel(Record& r);
    void write_slot(Record& r);
    void forget(Record& r);
    void after_coop_change(bool first_coop_queue);

    detail::ActivityWriter& page_;
    KernelLink& link_;
    QueueControl& control_;
    Config config_;
    std::function<bool()> coop_starter_;

    mutable std::mutex mutex_;
    std::map<std::uint64_t, Record> records_;  // by ring VA
    std::size_t coop_count_ = 0;
    bool coop_running_ = false;         // the watcher carries out requests
    std::atomic<bool> holding_{false};  // cooperative suspension in force
    DoorbellMap doorbells_;
};

}  // namespace amdqp::preload

#endif  // AMDQP_PRELOAD_QUEUE_REGISTRY_HPP
