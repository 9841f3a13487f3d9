// SPDX-License-Identifier: MIT
#include "fake_amdqp.hpp"

#include <fcntl.h>

#include <algorithm>
#include <cerrno>
#include <cstring>

namespace amdqp::testing {

namespace {

constexpr std::uint32_t kPidMaxLimit = 4 * 1024 * 1024;
constexpr std::uint32_t kPageSize = 4096;

template <typename T>
T* user(std::uint64_t p) {
    return reinterpret_cast<T*>(static_cast<std::uintptr_t>(p));
}

bool valid_elem_size(std::uint32_t size, std::uint32_t min) {
    return size >= min && size <= kPageSize && size % 8 == 0;
}

}  // namespace

FakeGpu& FakeAmdqp::add_gpu(std::uint32_t gpu_id, std::uint32_t sched_mode) {
    FakeGpu g;
    g.gpu_id = gpu_id;
    g.sched_mode = sched_mode;
    gpus_.push_back(g);
    emit(AMDQP_EVENT_DEVICE_ADDED, 0, gpu_id, 0, 0, sched_mode);
    return gpus_.back();
}

void FakeAmdqp::remove_gpu(std::uint32_t gpu_id) {
    std::vector<std::pair<std::uint32_t, std::uint32_t>> gone;  // pid, queue id
    for (const auto& q : queues_)
        if (q->gpu_id == gpu_id)
            gone.emplace_back(q->pid, q->queue_id);
    for (auto [pid, queue_id] : gone)
        remove_queue(pid, gpu_id, queue_id);
    std::erase_if(gpus_, [gpu_id](const FakeGpu& g) { return g.gpu_id == gpu_id; });
    emit(AMDQP_EVENT_DEVICE_REMOVED, 0, gpu_id);
}

FakeQueue& FakeAmdqp::add_queue(std::uint32_t pid, std::uint32_t gpu_id, std::uint64_t ring_va,
                                std::uint32_t priority, std::uint32_t uid) {
    auto q = std::make_unique<FakeQueue>();
    q->pid = pid;
    q->uid = uid;
    q->gpu_id = gpu_id;
    q->ring_va = ring_va;
    q->priority = priority;
    std::uint32_t id = 1;
    for (const auto& other : queues_)
        if (other->gpu_id == gpu_id)
            id = std::max(id, other->queue_id + 1);
    q->queue_id = id;
    queues_.push_back(std::move(q));
    emit(AMDQP_EVENT_QUEUE_CREATED, pid, gpu_id, id, 0, priority);
    return *queues_.back();
}

void FakeAmdqp::remove_queue(std::uint32_t pid, std::uint32_t gpu_id, std::uint32_t queue_id) {
    std::erase_if(queues_, [&](const auto& q) {
        return q->pid == pid && q->gpu_id == gpu_id && q->queue_id == queue_id;
    });
    emit(AMDQP_EVENT_QUEUE_DESTROYED, pid, gpu_id, queue_id);
}

FakeQueue* FakeAmdqp::find(std::uint32_t pid, std::uint32_t gpu_id, std::uint32_t queue_id) {
    for (auto& q : queues_)
        if (q->pid == pid && q->gpu_id == gpu_id && q->queue_id == queue_id)
            return q.get();
    return nullptr;
}

FakeGpu* FakeAmdqp::gpu(std::uint32_t gpu_id) {
    for (auto& g : gpus_)
        if (g.gpu_id == gpu_id)
            return &g;
    return nullptr;
}

bool FakeAmdqp::suspended(std::uint32_t pid, std::uint32_t gpu_id, std::uint32_t queue_id) {
    const FakeQueue* q = find(pid, gpu_id, queue_id);
    return q && !q->holders.empty();
}

std::vector<std::uint32_t> FakeAmdqp::confined(std::uint32_t pid, std::uint32_t gpu_id,
                                               std::uint32_t queue_id) {
    FakeQueue* q = find(pid, gpu_id, queue_id);
    if (!q || q->confiners.empty())
        return {};
    return q->confiners.rbegin()->second;
}

std::size_t FakeAmdqp::calls(unsigned long request) const {
    auto it = calls_.find(_IOC_NR(request));
    return it == calls_.end() ? 0 : it->second;
}

void FakeAmdqp::push(FdState& st, std::vector<unsigned char> record) {
    if (st.records.size() >= event_ring) {
        st.dropped++;  // the oldest are kept
        return;
    }
    st.records.push_back(std::move(record));
}

void FakeAmdqp::emit(std::uint32_t type, std::uint32_t pid, std::uint32_t gpu_id,
                     std::uint32_t queue_id, std::int32_t error, std::uint64_t data) {
    amdqp_event ev{};
    ev.type = type;
    ev.size = sizeof(ev);
    ev.timestamp_ns = clock_ns_ += 1000;
    ev.pid = pid;
    ev.gpu_id = gpu_id;
    ev.queue_id = queue_id;
    ev.error = error;
    ev.data = data;
    const auto* bytes = reinterpret_cast<const unsigned char*>(&ev);
    for (auto& [fd, st] : fds_)
        if (st.mask & (1ULL << type))
            push(st, {bytes, bytes + sizeof(ev)});
}

void FakeAmdqp::emit_raw(const std::vector<unsigned char>& record) {
    for (auto& [fd, st] : fds_)
        if (st.mask)
            push(st, record);
}

int FakeAmdqp::open(const char* p, int flags) {
    if (!present || path != p)
        return -ENOENT;
    if (open_errno)
        return -open_errno;
    const int fd = next_fd_++;
    fds_[fd].flags = flags;
    return fd;
}

int FakeAmdqp::close(int fd) {
    auto it = fds_.find(fd);
    if (it == fds_.end())
        return -EBADF;
    // Holds belong to the fd: closing it resumes what nobody else holds.
    for (auto& q : queues_) {
        release(fd, *q);
        q->confiners.erase(fd);
    }
    fds_.erase(it);
    return 0;
}

int FakeAmdqp::ioctl(int fd, unsigned long request, void* arg) {
    auto it = fds_.find(fd);
    if (it == fds_.end())
        return -EBADF;
    if (_IOC_TYPE(request) != AMDQP_IOC_MAGIC)
        return -ENOTTY;
    if (ioctl_errno)
        return -ioctl_errno;
    calls_[_IOC_NR(request)]++;
    switch (request) {
        case AMDQP_IOC_GET_VERSION: {
            if (!answers_version)
                return -ENOTTY;
            auto* v = static_cast<amdqp_version*>(arg);
            *v = {};
            v->major = abi_major;
            v->minor = abi_minor;
            v->backends = backends;
            v->num_devices = static_cast<std::uint32_t>(gpus_.size());
            v->max_batch = max_batch;
            v->priority_max = AMDQP_PRIORITY_MAX;
            return 0;
        }
        case AMDQP_IOC_LIST_DEVICES:
            return list_devices(static_cast<amdqp_list_devices*>(arg));
        case AMDQP_IOC_LIST_QUEUES:
            return list_queues(fd, static_cast<amdqp_list_queues*>(arg));
        case AMDQP_IOC_SET_PRIORITY:
            return set_priority(fd, static_cast<amdqp_set_priority*>(arg));
        case AMDQP_IOC_SUSPEND:
            return batch(fd, static_cast<amdqp_batch*>(arg), true);
        case AMDQP_IOC_RESUME:
            return batch(fd, static_cast<amdqp_batch*>(arg), false);
        case AMDQP_IOC_SUSPEND_BELOW:
            return gpu_set(fd, static_cast<amdqp_gpu_set*>(arg), true);
        case AMDQP_IOC_RESUME_ALL:
            return gpu_set(fd, static_cast<amdqp_gpu_set*>(arg), false);
        case AMDQP_IOC_SET_EVENT_MASK:
            return set_event_mask(it->second, static_cast<const amdqp_event_mask*>(arg));
        case AMDQP_IOC_CONFINE:
            return confine(fd, static_cast<amdqp_confine*>(arg));
        default:
            return -ENOTTY;
    }
}

int FakeAmdqp::list_devices(amdqp_list_devices* req) {
    if (req->pad || (req->count && !valid_elem_size(req->info_size, 8)))
        return -EINVAL;
    const std::size_t n = std::min({static_cast<std::size_t>(req->count), gpus_.size(), list_cap});
    auto* out = user<unsigned char>(req->devices);
    for (std::size_t i = 0; i < n; i++) {
        const FakeGpu& g = gpus_[i];
        amdqp_device_info d{};
        d.gpu_id = g.gpu_id;
        d.backend = g.backend;
        d.sched_mode = g.sched_mode;
        d.num_xcc = g.num_xcc;
        for (const auto& q : queues_) {
            if (q->gpu_id != g.gpu_id)
                continue;
            d.num_queues++;
            d.num_suspended += !q->holders.empty();
        }
        d.sched_updates = g.sched_updates;
        d.unmap_packets = g.unmap_packets;
        d.map_packets = g.map_packets;
        std::memcpy(out + i * req->info_size, &d, std::min<std::size_t>(req->info_size, sizeof(d)));
    }
    req->count = static_cast<std::uint32_t>(gpus_.size());
    req->info_size = sizeof(amdqp_device_info);
    req->filled = static_cast<std::uint32_t>(n);
    return 0;
}

int FakeAmdqp::list_queues(int fd, amdqp_list_queues* req) {
    if (before_list_queues)
        before_list_queues(*this);
    if (req->flags || req->pid > kPidMaxLimit ||
        (req->count && !valid_elem_size(req->info_size, 8)))
        return -EINVAL;
    std::vector<const FakeQueue*> match;
    for (const auto& q : queues_)
        if ((!req->gpu_id || q->gpu_id == req->gpu_id) && (!req->pid || q->pid == req->pid))
            match.push_back(q.get());
    const std::size_t n = std::min({static_cast<std::size_t>(req->count), match.size(), list_cap});
    auto* out = user<unsigned char>(req->queues);
    const std::size_t copy = std::min<std::size_t>(req->info_size, queue_info_size);
    for (std::size_t i = 0; i < n; i++) {
        const FakeQueue& q = *match[i];
        amdqp_queue_info info{};
        info.pid = q.pid;
        info.uid = q.uid;
        info.gpu_id = q.gpu_id;
        info.queue_id = q.queue_id;
        info.ring_va = q.ring_va;
        info.ring_size = q.ring_size;
        info.priority = q.priority;
        info.holders = static_cast<std::uint32_t>(q.holders.size());
        info.backend = AMDQP_BACKEND_SIM;
        info.suspend_count = q.suspend_count;
        info.submitted = q.submitted;
        info.completed = q.completed;
        info.created_ns = 42;
        info.state = state_of(q, fd);
        std::memcpy(out + i * req->info_size, &info, std::min(copy, sizeof(info)));
    }
    req->count = static_cast<std::uint32_t>(match.size());
    req->info_size = queue_info_size;
    req->filled = static_cast<std::uint32_t>(n);
    return 0;
}

FakeQueue* FakeAmdqp::resolve(const amdqp_queue_ref& ref, int* result) {
    *result = 0;
    if ((ref.flags & ~AMDQP_REF_BY_RING) || !ref.pid || ref.pid > kPidMaxLimit) {
        *result = -EINVAL;
        return nullptr;
    }
    for (auto& q : queues_) {
        if (q->pid != ref.pid)
            continue;
        if ((ref.flags & AMDQP_REF_BY_RING)
                ? q->ring_va == ref.ring_va
                : (q->gpu_id == ref.gpu_id && q->queue_id == ref.queue_id))
            return q.get();
    }
    *result = -ENOENT;
    return nullptr;
}

bool FakeAmdqp::may_suspend(const FakeQueue& q) const {
    return q.pid == caller_pid || cap_sys_admin || (q.uid == caller_uid && q.dumpable);
}

std::uint32_t FakeAmdqp::state_of(const FakeQueue& q, int fd) const {
    std::uint32_t s = 0;
    if (!q.holders.empty())
        s |= AMDQP_QSTATE_SUSPENDED;
    if (q.holders.count(fd))
        s |= AMDQP_QSTATE_HELD;
    if (q.cooldown)
        s |= AMDQP_QSTATE_COOLDOWN;
    if (!q.confiners.empty())
        s |= AMDQP_QSTATE_CONFINED;
    if (q.confiners.count(fd))
        s |= AMDQP_QSTATE_CONFINE_HELD;
    return s;
}

// Returns whether the queue went off the hardware.
bool FakeAmdqp::hold(int fd, FakeQueue& q) {
    const bool first = q.holders.empty();
    q.holders.insert(fd);
    if (first) {
        q.suspend_count++;
        if (FakeGpu* g = gpu(q.gpu_id))
            g->unmap_packets++;
    }
    return first;
}

// Returns whether the queue went back on the hardware.
bool FakeAmdqp::release(int fd, FakeQueue& q) {
    if (!q.holders.erase(fd) || !q.holders.empty())
        return false;
    if (FakeGpu* g = gpu(q.gpu_id))
        g->map_packets++;
    return true;
}

int FakeAmdqp::set_priority(int fd, amdqp_set_priority* req) {
    if (req->flags || req->priority > AMDQP_PRIORITY_MAX)
        return req->ref.result = -EINVAL;
    int result;
    FakeQueue* q = resolve(req->ref, &result);
    if (!q)
        return req->ref.result = result;
    const bool raising = req->priority > q->priority;
    if ((raising || q->uid != caller_uid) && !cap_sys_nice)
        return req->ref.result = -EPERM;
    q->priority = req->priority;
    req->ref.result = 0;
    req->ref.state = state_of(*q, fd);
    emit(AMDQP_EVENT_PRIORITY, q->pid, q->gpu_id, q->queue_id, 0, q->priority);
    return 0;
}

int FakeAmdqp::batch(int fd, amdqp_batch* b, bool suspending) {
    if (b->flags || b->pad || !b->count || b->count > max_batch ||
        !valid_elem_size(b->ref_size, 24) || (!suspending && b->grace_us))
        return -EINVAL;
    auto* base = user<unsigned char>(b->refs);
    std::set<std::uint32_t> updated;
    b->done = 0;
    for (std::uint32_t i = 0; i < b->count; i++) {
        amdqp_queue_ref ref{};
        std::memcpy(&ref, base + i * b->ref_size, std::min<std::size_t>(b->ref_size, sizeof(ref)));
        int result;
        FakeQueue* q = resolve(ref, &result);
        if (q && suspending) {
            if (q->holders.count(fd))
                result = -EALREADY;
            else if (!may_suspend(*q))
                result = -EPERM;
            else if (q->cooldown)
                result = -EAGAIN;
            else if (q->fail_suspend)
                result = q->fail_suspend;
            else if (hold(fd, *q))
                updated.insert(q->gpu_id);
        } else if (q) {
            if (!q->holders.count(fd))
                result = -EALREADY;
            else if (release(fd, *q))
                updated.insert(q->gpu_id);
        }
        ref.result = result;
        ref.state = q ? state_of(*q, fd) : 0;
        b->done += result == 0;
        std::memcpy(base + i * b->ref_size, &ref, std::min<std::size_t>(b->ref_size, sizeof(ref)));
    }
    // One runlist update per device and direction (HWS).
    for (std::uint32_t id : updated)
        if (FakeGpu* g = gpu(id))
            g->sched_updates++;
    b->latency_ns = 1000 * updated.size();
    return 0;
}

int FakeAmdqp::gpu_set(int fd, amdqp_gpu_set* s, bool suspending) {
    if (before_gpu_set)
        before_gpu_set(*this);
    if (s->flags || s->pad || s->reserved || s->num_gpus > AMDQP_MAX_BATCH ||
        s->priority > AMDQP_PRIORITY_MAX + 1 || (!suspending && (s->priority || s->grace_us)))
        return -EINVAL;
    std::set<std::uint32_t> ids;
    const auto* list = user<const std::uint32_t>(s->gpu_ids);
    for (std::uint32_t i = 0; i < s->num_gpus; i++) {
        if (!gpu(list[i]))
            return -ENODEV;
        ids.insert(list[i]);
    }
    s->affected = s->skipped = 0;
    std::set<std::uint32_t> updated;
    for (auto& q : queues_) {
        if (!ids.empty() && !ids.count(q->gpu_id))
            continue;
        if (suspending) {
            if (q->priority >= s->priority || q->pid == caller_pid || q->holders.count(fd))
                continue;
            if (!may_suspend(*q) || q->cooldown || q->fail_suspend) {
                s->skipped++;
                continue;
            }
            if (hold(fd, *q))
                updated.insert(q->gpu_id);
            s->affected++;
        } else if (q->holders.count(fd)) {
            if (release(fd, *q))
                updated.insert(q->gpu_id);
            s->affected++;
        }
    }
    for (std::uint32_t id : updated)
        if (FakeGpu* g = gpu(id))
            g->sched_updates++;
    s->latency_ns = 1000 * updated.size();
    return 0;
}

// AMDQP_IOC_CONFINE as ioctl.rst has it, without the masks' effect (the
// fake runs nothing) and with one update per GPU that changed.
int FakeAmdqp::confine(int fd, amdqp_confine* c) {
    if (c->flags || c->pad || c->count > AMDQP_MAX_CONFINE_GPUS)
        return -EINVAL;
    const bool info = c->op == AMDQP_CONFINE_OP_INFO, below = c->op == AMDQP_CONFINE_OP_BELOW,
               rel = c->op == AMDQP_CONFINE_OP_RELEASE;
    if ((!info && !below && !rel) || (!rel && !c->count) ||
        (below ? c->priority > AMDQP_PRIORITY_MAX : c->priority != 0) || (info && c->grace_us) ||
        (c->count && !valid_elem_size(c->target_size, sizeof(amdqp_cu_target))))
        return -EINVAL;
    auto* base = user<unsigned char>(c->targets);
    std::vector<amdqp_cu_target> t(c->count);
    for (std::uint32_t i = 0; i < c->count; i++) {
        std::memcpy(&t[i], base + i * c->target_size, sizeof(t[i]));
        if (t[i].pad)
            return -EINVAL;
        const FakeGpu* g = gpu(t[i].gpu_id);
        if (info) {
            t[i].num_xcc = g ? g->num_xcc : 0;
            t[i].cu_per_xcc = g ? g->cu_per_xcc : 0;
            t[i].mask_words = g ? g->num_xcc * ((g->cu_per_xcc + 31) / 32) : 0;
            t[i].result = !g ? -ENODEV : !g->cu_per_xcc ? -EOPNOTSUPP : 0;
            continue;
        }
        if (!g)
            return -ENODEV;
        if (rel && (t[i].num_xcc || t[i].cu_per_xcc || t[i].mask_words || t[i].mask_ptr))
            return -EINVAL;
        if (!below)
            continue;
        if (!g->cu_per_xcc)
            return -EOPNOTSUPP;
        const std::uint32_t wpx = (g->cu_per_xcc + 31) / 32;
        if (t[i].num_xcc != g->num_xcc || t[i].cu_per_xcc != g->cu_per_xcc ||
            t[i].mask_words != g->num_xcc * wpx)
            return -EINVAL;
        const auto* m = user<const std::uint32_t>(t[i].mask_ptr);
        for (std::uint32_t x = 0; x < g->num_xcc; x++) {
            std::uint32_t any = 0;
            for (std::uint32_t w = 0; w < wpx; w++)
                any |= m[x * wpx + w];
            const std::uint32_t tail = g->cu_per_xcc % 32;
            if (!any || (tail && (m[x * wpx + wpx - 1] >> tail)))
                return -EINVAL;
        }
    }
    c->done = c->affected = c->skipped = 0;
    c->latency_ns = 0;
    std::set<std::uint32_t> updated;
    for (std::uint32_t i = 0; i < c->count; i++)
        t[i].affected = t[i].skipped = 0;
    if (!info) {
        for (auto& q : queues_) {
            std::uint32_t k = 0;
            while (k < c->count && t[k].gpu_id != q->gpu_id)
                k++;
            if (c->count && k == c->count)
                continue;
            const bool mine = q->confiners.count(fd) != 0;
            bool changed = false;
            if (rel || q->priority >= c->priority || q->pid == caller_pid) {
                changed = mine;
                q->confiners.erase(fd);
            } else {
                const auto* m = user<const std::uint32_t>(t[k].mask_ptr);
                std::vector<std::uint32_t> mask(m, m + t[k].mask_words);
                if (mine && q->confiners[fd] == mask)
                    continue;
                if (!mine && (!may_suspend(*q) || q->cooldown)) {
                    t[k].skipped++;
                    continue;
                }
                q->confiners[fd] = mask;
                changed = true;
            }
            if (!changed)
                continue;
            updated.insert(q->gpu_id);
            if (c->count)
                t[k].affected++;
            else
                c->affected++;
        }
    }
    for (std::uint32_t id : updated)
        if (FakeGpu* g = gpu(id))
            g->sched_updates++;
    c->latency_ns = 1000 * updated.size();
    for (std::uint32_t i = 0; i < c->count; i++) {
        c->done += t[i].result == 0;
        c->affected += t[i].affected;
        c->skipped += t[i].skipped;
        std::memcpy(base + i * c->target_size, &t[i], sizeof(t[i]));
    }
    return 0;
}

int FakeAmdqp::set_event_mask(FdState& st, const amdqp_event_mask* m) {
    if (m->mask & ~static_cast<std::uint64_t>(AMDQP_EVENT_MASK_ALL))
        return -EINVAL;
    // OVERFLOW is always on while anything is.
    st.mask = m->mask ? (m->mask | (1ULL << AMDQP_EVENT_OVERFLOW)) : 0;
    if (!m->mask) {
        st.records.clear();
        st.front_offset = 0;
        st.dropped = 0;
    }
    return 0;
}

ssize_t FakeAmdqp::read(int fd, void* buf, std::size_t len) {
    auto it = fds_.find(fd);
    if (it == fds_.end())
        return -EBADF;
    FdState& st = it->second;
    if (!st.mask || len < sizeof(amdqp_event))
        return -EINVAL;
    if (st.records.empty() && st.dropped) {
        // After the kept records, one notice of how many were lost.
        amdqp_event ev{};
        ev.type = AMDQP_EVENT_OVERFLOW;
        ev.size = sizeof(ev);
        ev.timestamp_ns = clock_ns_ += 1000;
        ev.data = st.dropped;
        st.dropped = 0;
        const auto* bytes = reinterpret_cast<const unsigned char*>(&ev);
        st.records.emplace_back(bytes, bytes + sizeof(ev));
    }
    if (st.records.empty())
        return -EAGAIN;
    const std::size_t limit = std::min(len, read_chunk);
    const bool split = read_chunk < sizeof(amdqp_event);
    auto* out = static_cast<unsigned char*>(buf);
    std::size_t n = 0;
    while (!st.records.empty() && n < limit) {
        const auto& rec = st.records.front();
        const std::size_t left = rec.size() - st.front_offset;
        const std::size_t take = std::min(left, limit - n);
        if (take < left && !split) {
            if (n == 0)
                return -EINVAL;  // the buffer cannot hold one record
            break;               // whole records only, like the kernel
        }
        std::memcpy(out + n, rec.data() + st.front_offset, take);
        n += take;
        st.front_offset += take;
        if (st.front_offset == rec.size()) {
            st.records.pop_front();
            st.front_offset = 0;
        }
    }
    return static_cast<ssize_t>(n);
}

int FakeAmdqp::poll(struct pollfd* fds, nfds_t nfds, int /*timeout_ms*/) {
    int ready = 0;
    for (nfds_t i = 0; i < nfds; i++) {
        fds[i].revents = 0;
        auto it = fds_.find(fds[i].fd);
        if (it == fds_.end()) {
            fds[i].revents = POLLNVAL;
        } else if ((fds[i].events & POLLIN) &&
                   (!it->second.records.empty() || it->second.dropped)) {
            fds[i].revents = POLLIN;
        }
        ready += fds[i].revents != 0;
    }
    return ready;
}

}  // namespace amdqp::testing
