// SPDX-License-Identifier: MIT
#include "hsa_hooks.hpp"

#include <hsa/amd_hsa_queue.h>

#include <algorithm>
#include <atomic>
#include <cstddef>

#include "activity_proc.hpp"
#include "busy_announce.hpp"

namespace amdqp::preload {

namespace {

// amd_queue_t starts with the hsa_queue_t; its read_dispatch_id is what the
// packet processor advances (hsa-sim keeps its read index at the same place).
static_assert(offsetof(amd_queue_t, read_dispatch_id) == 128);

struct Next {
    std::atomic<decltype(hsa_queue_create)*> queue_create{nullptr};
    std::atomic<decltype(hsa_queue_destroy)*> queue_destroy{nullptr};
    std::atomic<decltype(hsa_signal_store_relaxed)*> store_relaxed{nullptr};
    std::atomic<decltype(hsa_signal_store_screlease)*> store_screlease{nullptr};
    std::atomic<decltype(hsa_amd_queue_set_priority)*> set_priority{nullptr};
};

Next g_next;
std::atomic<QueueRegistry*> g_registry{nullptr};

HsaQueueView view_of(const hsa_queue_t* q) {
    HsaQueueView v;
    v.ring_va = reinterpret_cast<std::uint64_t>(q->base_address);
    v.doorbell = q->doorbell_signal.handle;
    v.read_index_va = reinterpret_cast<std::uint64_t>(q) + offsetof(amd_queue_t, read_dispatch_id);
    v.ring_packets = q->size;
    return v;
}

hsa_status_t hook_queue_create(hsa_agent_t agent, uint32_t size, hsa_queue_type32_t type,
                               void (*callback)(hsa_status_t, hsa_queue_t*, void*), void* data,
                               uint32_t private_segment_size, uint32_t group_segment_size,
                               hsa_queue_t** queue) {
    hsa_status_t status = g_next.queue_create.load(std::memory_order_relaxed)(
        agent, size, type, callback, data, private_segment_size, group_segment_size, queue);
    QueueRegistry* r = g_registry.load(std::memory_order_acquire);
    if (status == HSA_STATUS_SUCCESS && queue && *queue && r) {
        try {
            r->hsa_queue_created(view_of(*queue));
        } catch (...) {
            // Tagging is best effort; the queue works either way.
        }
    }
    return status;
}

hsa_status_t hook_queue_destroy(hsa_queue_t* queue) {
    QueueRegistry* r = g_registry.load(std::memory_order_acquire);
    if (queue && r) {
        try {
            r->hsa_queue_destroyed(reinterpret_cast<std::uint64_t>(queue->base_address));
        } catch (...) {
        }
    }
    return g_next.queue_destroy.load(std::memory_order_relaxed)(queue);
}

// The hot path: every signal store of the process comes through here.
void hook_store_relaxed(hsa_signal_t signal, hsa_signal_value_t value) {
    QueueRegistry* r = g_registry.load(std::memory_order_relaxed);
    if (const DoorbellTarget t = r ? r->doorbell(signal.handle) : DoorbellTarget{}; t.slot)
        record_doorbell(t.slot, value, t.ring);
    g_next.store_relaxed.load(std::memory_order_relaxed)(signal, value);
}

void hook_store_screlease(hsa_signal_t signal, hsa_signal_value_t value) {
    QueueRegistry* r = g_registry.load(std::memory_order_relaxed);
    if (const DoorbellTarget t = r ? r->doorbell(signal.handle) : DoorbellTarget{}; t.slot)
        record_doorbell(t.slot, value, t.ring);
    g_next.store_screlease.load(std::memory_order_relaxed)(signal, value);
}

hsa_status_t hook_set_priority(hsa_queue_t* queue, hsa_amd_queue_priority_t priority) {
    hsa_status_t status = g_next.set_priority.load(std::memory_order_relaxed)(queue, priority);
    QueueRegistry* r = g_registry.load(std::memory_order_acquire);
    if (status == HSA_STATUS_SUCCESS && queue && r) {
        try {
            r->hsa_queue_priority(reinterpret_cast<std::uint64_t>(queue->base_address),
                                  static_cast<int>(priority));
        } catch (...) {
        }
    }
    return status;
}

template <typename Fn>
void replace(Fn* entry, std::atomic<Fn>& next, Fn hook) {
    if (*entry == hook)
        return;
    next.store(*entry, std::memory_order_relaxed);
    // The saved entry is visible before any call can reach the hook.
    std::atomic_thread_fence(std::memory_order_release);
    *entry = hook;
}

}  // namespace

void record_doorbell(amdqp_act_slot* slot, std::int64_t value, AqlRing ring) noexcept {
    record_doorbell_at(slot, value, ring, detail::monotonic_ns());
}

void record_doorbell_at(amdqp_act_slot* slot, std::int64_t value, AqlRing ring,
                        std::uint64_t now_ns) noexcept {
    amdqp_act_header* hdr = detail::header_of(slot);
    const std::uint32_t ctl = detail::controller_flags(*hdr);
    std::atomic_ref<std::uint64_t> write_index(slot->write_index);
    std::atomic_ref<std::uint64_t> last_ns(slot->last_doorbell_ns);
    std::atomic_ref<std::uint32_t> demand(slot->demand_wgs);
    const std::uint64_t last = write_index.load(std::memory_order_relaxed);
    // Idle: the packet processor caught up with the last doorbell. Only a
    // controller that asked is told (one load otherwise).
    bool was_idle = false;
    if (ctl) {
        const std::uint64_t rva = slot->read_index_va;
        const std::uint64_t read =
            rva ? std::atomic_ref<std::uint64_t>(*reinterpret_cast<std::uint64_t*>(rva))
                      .load(std::memory_order_acquire)
                : last;
        was_idle = read >= last;
    }
    // The packets this store publishes: from the last doorbell's write
    // index to @value (HSA's doorbell value is the index of the last packet
    // made ready). Their work groups raise the decayed demand, stored
    // before last_doorbell_ns (release): a reader that sees this
    // doorbell's time sees its demand.
    const std::uint32_t wgs =
        value >= 0 ? doorbell_workgroups(ring, last, static_cast<std::uint64_t>(value)) : 0;
    const std::uint32_t kept = amdqp_act_demand_at(demand.load(std::memory_order_relaxed),
                                                   last_ns.load(std::memory_order_relaxed), now_ns);
    demand.store(std::max(kept, wgs), std::memory_order_relaxed);
    // The write index is one past the value, comparable with the read index.
    write_index.store(static_cast<std::uint64_t>(value) + 1, std::memory_order_relaxed);
    std::atomic_ref<std::uint64_t>(slot->doorbells).fetch_add(1, std::memory_order_relaxed);
    last_ns.store(now_ns, std::memory_order_release);
    if (was_idle)
        detail::announce_busy(*hdr, ctl);  // may hold this doorbell (ctl_flags HOLD)
}

void patch_table(const TableEntries& e, QueueRegistry* registry, bool stream_priority) {
    g_registry.store(registry, std::memory_order_release);
    replace(e.queue_create, g_next.queue_create, &hook_queue_create);
    replace(e.queue_destroy, g_next.queue_destroy, &hook_queue_destroy);
    replace(e.signal_store_relaxed, g_next.store_relaxed, &hook_store_relaxed);
    replace(e.signal_store_screlease, g_next.store_screlease, &hook_store_screlease);
    if (stream_priority && e.amd_queue_set_priority)
        replace(e.amd_queue_set_priority, g_next.set_priority, &hook_set_priority);
}

}  // namespace amdqp::preload
