// SPDX-License-Identifier: MIT
#include "queue_registry.hpp"

#include <unistd.h>

#include <string>

#include "internal_call.hpp"

namespace amdqp::preload {

namespace {

template <typename T>
void store(T& field, T value) {
    std::atomic_ref<T>(field).store(value, std::memory_order_relaxed);
}

}  // namespace

QueueRegistry::QueueRegistry(detail::ActivityWriter& page, KernelLink& link, QueueControl& control,
                             Config config)
    : page_(page), link_(link), control_(control), config_(std::move(config)) {}

void QueueRegistry::hsa_queue_created(const HsaQueueView& q) {
    if (!q.ring_va)
        return;
    bool first_coop;
    {
        std::lock_guard lock(mutex_);
        auto [it, added] = records_.try_emplace(q.ring_va);
        Record& r = it->second;
        if (added) {
            r.ring_va = q.ring_va;
            r.want_priority = config_.priority;
        }
        r.hsa = true;
        if (r.doorbell && r.doorbell != q.doorbell)
            doorbells_.erase(r.doorbell);
        r.doorbell = q.doorbell;
        r.read_index_va = q.read_index_va;
        r.ring_packets = q.ring_packets;
        first_coop = sync(r);
    }
    after_coop_change(first_coop);
}

void QueueRegistry::hsa_queue_destroyed(std::uint64_t ring_va) {
    std::lock_guard lock(mutex_);
    auto it = records_.find(ring_va);
    if (it == records_.end())
        return;
    forget(it->second);
    records_.erase(it);
}

void QueueRegistry::hsa_queue_priority(std::uint64_t ring_va, int hsa_priority) {
    bool first_coop;
    {
        std::lock_guard lock(mutex_);
        auto it = records_.find(ring_va);
        if (it == records_.end())
            return;
        Record& r = it->second;
        std::uint32_t want = stream_priority_level(hsa_priority, config_.priority);
        if (want == r.want_priority)
            return;
        r.want_priority = want;
        r.tagged = false;
        first_coop = sync(r);
    }
    after_coop_change(first_coop);
}

void QueueRegistry::kernel_queue_created(const KernelQueueId& id) {
    if (!id.ring_va || !id.known())
        return;
    bool first_coop;
    {
        std::lock_guard lock(mutex_);
        auto [it, added] = records_.try_emplace(id.ring_va);
        Record& r = it->second;
        if (added) {
            r.ring_va = id.ring_va;
            r.want_priority = config_.priority;
        }
        r.kid = id;
        first_coop = sync(r);
    }
    after_coop_change(first_coop);
}

void QueueRegistry::kernel_queue_destroyed(QueueKind kind, int fd, std::uint32_t gpu_id,
                                           std::uint32_t queue_id) {
    std::lock_guard lock(mutex_);
    Record* r = find_kernel(kind, fd, gpu_id, queue_id);
    if (!r)
        return;
    std::uint64_t ring_va = r->ring_va;
    forget(*r);
    records_.erase(ring_va);
}

std::uint32_t QueueRegistry::kernel_queue_updated(QueueKind kind, int fd, std::uint32_t gpu_id,
                                                  std::uint32_t queue_id, std::uint32_t percentage,
                                                  std::uint32_t priority) {
    std::lock_guard lock(mutex_);
    Record* r = find_kernel(kind, fd, gpu_id, queue_id);
    if (!r)
        return percentage;
    r->kid.priority = priority;
    // KFD reads only bits 0-7 as the percentage and gives the others other
    // meanings: clear the percentage, keep the rest.
    if (r->coop_off && (percentage & 0xffu) != 0)
        return percentage & ~0xffu;
    return percentage;
}

QueueRegistry::Record* QueueRegistry::find_kernel(QueueKind kind, int fd, std::uint32_t gpu_id,
                                                  std::uint32_t queue_id) {
    for (auto& [va, r] : records_) {
        if (r.kid.kind != kind || r.kid.queue_id != queue_id)
            continue;
        // KFD queue ids are unique per process; sim ones per device and fd.
        if (kind == QueueKind::sim && (r.kid.gpu_id != gpu_id || r.kid.fd != fd))
            continue;
        return &r;
    }
    return nullptr;
}

bool QueueRegistry::sync(Record& r) {
    if (r.slot < 0) {
        detail::SlotInit init;
        init.ring_va = r.ring_va;
        init.read_index_va = r.read_index_va;
        init.priority = r.want_priority;
        r.slot = page_.take_slot(init);
    }
    if ((r.slot < 0) != r.untracked) {
        r.untracked = r.slot < 0;
        page_.note_untracked(r.untracked ? 1 : -1);
    }
    const std::uint32_t before = r.mechanism;
    if (!r.tagged)
        register_with_kernel(r);
    // amdqp.ko cannot steer it, but its ids are known: the process can.
    if (r.mechanism != AMDQP_ACT_MECH_AMDQP && r.kid.known())
        r.mechanism = AMDQP_ACT_MECH_COOP;
    bool first_coop = false;
    if (before != AMDQP_ACT_MECH_COOP && r.mechanism == AMDQP_ACT_MECH_COOP)
        first_coop = ++coop_count_ == 1;
    else if (before == AMDQP_ACT_MECH_COOP && r.mechanism != AMDQP_ACT_MECH_COOP)
        --coop_count_;

    // A queue born while the process is held off joins the others.
    if (r.mechanism == AMDQP_ACT_MECH_COOP && holding_.load(std::memory_order_relaxed) &&
        !r.coop_off) {
        InternalCall internal;
        if (control_.set_active(r.kid, false) == 0) {
            r.coop_off = true;
            if (amdqp_act_page* p = page_.peek())
                std::atomic_ref<std::uint64_t>(p->hdr.coop_updates)
                    .fetch_add(1, std::memory_order_relaxed);
        }
    }
    write_slot(r);
    if (r.hsa && r.doorbell && r.slot >= 0)
        doorbells_.insert(r.doorbell, page_.slot(r.slot), AqlRing::of(r.ring_va, r.ring_packets));
    return first_coop;
}

void QueueRegistry::register_with_kernel(Record& r) {
    RegisterResult res;
    {
        InternalCall internal;
        res = link_.register_queue(getpid(), r.ring_va, static_cast<int>(r.want_priority));
    }
    r.tagged = true;
    switch (res.status) {
        case RegisterResult::ok:
            r.mechanism = AMDQP_ACT_MECH_AMDQP;
            r.priority = res.priority;
            break;
        case RegisterResult::refused:
            r.mechanism = AMDQP_ACT_MECH_AMDQP;
            r.priority = res.priority;
            // Never advise setcap: a capability on an interpreter is
            // one for every user who runs it (Documentation/security.rst).
            warn_once("amdqp: GPU queues may not be raised to priority " +
                      std::to_string(r.want_priority) +
                      ": above what the administrator granted this user or container "
                      "(amdqpd's [[rule]]s, amdqp.ko's ceilings); they keep priority " +
                      std::to_string(res.priority));
            break;
        case RegisterResult::not_managed:
            r.mechanism = AMDQP_ACT_MECH_NONE;
            r.priority = r.want_priority;
            break;
        case RegisterResult::unavailable:
            r.mechanism = AMDQP_ACT_MECH_NONE;
            r.priority = r.want_priority;
            warn_once(res.message +
                      (r.kid.known() ? "; this process's GPU queues are steered cooperatively"
                                     : "; this process's GPU queues keep their default priority"));
            break;
    }
    if (res.status == RegisterResult::ok || res.status == RegisterResult::refused) {
        if (res.gpu_id)
            r.gpu_id = res.gpu_id;
        if (res.queue_id)
            r.queue_id = res.queue_id;
    }
}

void QueueRegistry::write_slot(Record& r) {
    amdqp_act_slot* s = r.slot >= 0 ? page_.slot(r.slot) : nullptr;
    if (!s)
        return;
    std::uint32_t gpu = r.gpu_id ? r.gpu_id : r.kid.gpu_id;
    std::uint32_t qid = r.queue_id ? *r.queue_id : r.kid.queue_id;
    store(s->gpu_id, gpu);
    store(s->queue_id, qid);
    store(s->priority, r.priority);
    store(s->mechanism, r.mechanism);
    store(s->ring_va, r.ring_va);
    store(s->read_index_va, r.read_index_va);
}

void QueueRegistry::forget(Record& r) {
    if (r.doorbell)
        doorbells_.erase(r.doorbell);
    if (r.slot >= 0)
        page_.release_slot(r.slot);
    if (r.untracked)
        page_.note_untracked(-1);
    if (r.mechanism == AMDQP_ACT_MECH_COOP && --coop_count_ == 0)
        page_.clear_flags(AMDQP_ACT_F_COOP);
}

void QueueRegistry::after_coop_change(bool first_coop_queue) {
    if (!first_coop_queue)
        return;
    bool running = coop_starter_ && coop_starter_();
    if (!running)
        return;
    std::lock_guard lock(mutex_);
    coop_running_ = true;
    if (coop_count_ > 0)
        page_.set_flags(AMDQP_ACT_F_COOP);
}

CoopOutcome QueueRegistry::apply_coop(bool suspend) {
    std::lock_guard lock(mutex_);
    holding_.store(suspend, std::memory_order_relaxed);
    CoopOutcome out;
    for (auto& [va, r] : records_) {
        if (r.mechanism != AMDQP_ACT_MECH_COOP || r.coop_off == suspend)
            continue;
        int rc;
        {
            InternalCall internal;
            rc = control_.set_active(r.kid, !suspend);
        }
        if (rc == 0) {
            r.coop_off = suspend;
            out.updates++;
        } else {
            out.error = rc;
        }
    }
    return out;
}

std::size_t QueueRegistry::coop_queues() const {
    std::lock_guard lock(mutex_);
    return coop_count_;
}

std::size_t QueueRegistry::size() const {
    std::lock_guard lock(mutex_);
    return records_.size();
}

void QueueRegistry::clear() {
    std::lock_guard lock(mutex_);
    for (auto& [va, r] : records_)
        forget(r);
    records_.clear();
    coop_count_ = 0;
    holding_.store(false, std::memory_order_relaxed);
}

void QueueRegistry::reset_after_fork_child() {
    // The parent's page is unmapped in the child already: only forget.
    records_.clear();
    doorbells_.clear();
    coop_count_ = 0;
    coop_running_ = false;
    holding_.store(false, std::memory_order_relaxed);
    mutex_.unlock();
}

}  // namespace amdqp::preload
