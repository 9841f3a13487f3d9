// SPDX-License-Identifier: MIT
//
// The C API: a thin layer over the C++ core that turns exceptions into
// status codes and a thread-local message, and copies between the C API's
// own structures and the core's by the sizes the caller gave.
#include <algorithm>
#include <cerrno>
#include <cstddef>
#include <cstring>
#include <deque>
#include <memory>
#include <new>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include <amdqp/amdqp.h>
#include <amdqp/amdqp.hpp>

struct amdqp_handle {
    explicit amdqp_handle(amdqp::Device dev) : device(std::move(dev)) {}
    amdqp::Device device;
    std::optional<amdqp::EventReader> events;
    std::deque<amdqp::Event> backlog;  // read from the kernel, not yet handed out
};

static_assert(AMDQP_PRIO_MIN == AMDQP_PRIORITY_MIN && AMDQP_PRIO_MAX == AMDQP_PRIORITY_MAX);
static_assert(AMDQP_GPU_BACKEND_SIM == AMDQP_BACKEND_SIM);
static_assert(AMDQP_GPU_BACKEND_KFD == AMDQP_BACKEND_KFD);
static_assert(AMDQP_GPU_SCHED_HWS == AMDQP_SCHED_HWS && AMDQP_GPU_SCHED_MES == AMDQP_SCHED_MES);
static_assert(AMDQP_QUEUE_SUSPENDED == AMDQP_QSTATE_SUSPENDED);
static_assert(AMDQP_QUEUE_HELD == AMDQP_QSTATE_HELD);
static_assert(AMDQP_QUEUE_COOLDOWN == AMDQP_QSTATE_COOLDOWN);
static_assert(AMDQP_EV_OVERFLOW == AMDQP_EVENT_OVERFLOW &&
              AMDQP_EV_PRIORITY == AMDQP_EVENT_PRIORITY &&
              AMDQP_EV_CONFINE_WATCHDOG == AMDQP_EVENT_CONFINE_WATCHDOG);
static_assert(AMDQP_EV_MASK_ALL == AMDQP_EVENT_MASK_ALL);
// The first published layouts: callers built against them must keep working.
static_assert(sizeof(amdqp_version_info_t) == 40);
static_assert(sizeof(amdqp_gpu_t) == 80);
static_assert(sizeof(amdqp_queue_t) == 104);
static_assert(sizeof(amdqp_ref_t) == 40);
static_assert(sizeof(amdqp_batch_stats_t) == 24);
static_assert(sizeof(amdqp_event_record_t) == 40);
static_assert(offsetof(amdqp_confine_gpu_t, mask) == 24);

namespace {

thread_local std::string last_error;
thread_local int last_errno;

int record(int status, std::string message, int err) {
    last_error = std::move(message);
    last_errno = err;
    return status;
}

int invalid(const std::string& message) {
    return record(AMDQP_ERR_INVALID, "amdqp: " + message, EINVAL);
}

template <typename F>
int guarded(F&& body) noexcept {
    try {
        return body();
    } catch (const amdqp::Error& e) {
        return record(amdqp::errc_to_status(e.code()), e.what(), e.sys_errno());
    } catch (const std::bad_alloc&) {
        return record(AMDQP_ERR_SYSTEM, "amdqp: out of memory", ENOMEM);
    } catch (const std::exception& e) {
        return record(AMDQP_ERR_SYSTEM, std::string("amdqp: ") + e.what(), 0);
    } catch (...) {
        return record(AMDQP_ERR_SYSTEM, "amdqp: unexpected failure", 0);
    }
}

// Writes @v into element @i of a caller's array of @elem_size strides,
// truncated to what the caller knows, with its size field saying so.
template <typename T>
void store(void* base, std::size_t elem_size, std::size_t i, T v) {
    const std::size_t n = std::min(elem_size, sizeof(T));
    v.size = static_cast<std::uint32_t>(n);
    std::memcpy(static_cast<char*>(base) + i * elem_size, &v, n);
}

// The smallest element a caller may pass: the size field and one more.
constexpr std::size_t kMinElem = 8;

amdqp_gpu_t to_c(const amdqp::DeviceInfo& d) {
    amdqp_gpu_t g{};
    g.gpu_id = d.gpu_id;
    g.backend = d.backend;
    g.sched_mode = d.sched_mode;
    g.num_xcc = d.num_xcc;
    g.num_queues = d.num_queues;
    g.num_suspended = d.num_suspended;
    g.sched_updates = d.sched_updates;
    g.unmap_packets = d.unmap_packets;
    g.map_packets = d.map_packets;
    g.preemptions = d.preemptions;
    g.preempt_failures = d.preempt_failures;
    g.resets = d.resets;
    return g;
}

amdqp_queue_t to_c(const amdqp::QueueInfo& q) {
    amdqp_queue_t c{};
    c.pid = q.pid;
    c.uid = q.uid;
    c.gpu_id = q.gpu_id;
    c.queue_id = q.queue_id;
    c.priority = q.priority;
    c.ring_va = q.ring_va;
    c.ring_size = q.ring_size;
    c.state = q.state;
    c.holders = q.holders;
    c.backend = q.backend;
    c.suspend_count = q.suspend_count;
    c.suspended_ns = q.suspended_ns;
    c.busy_ns = q.busy_ns;
    c.submitted = q.submitted;
    c.completed = q.completed;
    c.created_ns = q.created_ns;
    return c;
}

amdqp_event_record_t to_c(const amdqp::Event& e) {
    amdqp_event_record_t r{};
    r.type = e.type;
    r.timestamp_ns = e.timestamp_ns;
    r.pid = e.pid;
    r.gpu_id = e.gpu_id;
    r.queue_id = e.queue_id;
    r.error = e.error;
    r.data = e.data;
    return r;
}

amdqp::QueueRef from_c(const amdqp_ref_t& r) {
    return r.by_ring ? amdqp::QueueRef::by_ring_va(r.pid, r.ring_va)
                     : amdqp::QueueRef::by_id(r.pid, r.gpu_id, r.queue_id);
}

amdqp_ref_t* ref_at(amdqp_ref_t* base, std::size_t elem_size, std::size_t i) {
    return reinterpret_cast<amdqp_ref_t*>(reinterpret_cast<char*>(base) + i * elem_size);
}

void store_stats(amdqp_batch_stats_t* stats, std::uint32_t done, std::uint32_t skipped,
                 std::uint64_t latency_ns) {
    if (!stats || stats->size < kMinElem)
        return;
    amdqp_batch_stats_t s{};
    s.done = done;
    s.skipped = skipped;
    s.latency_ns = latency_ns;
    store(stats, stats->size, 0, s);
}

// A call on a set of GPUs answers with the queues it affected.
int report(const amdqp::GpuSetResult& r, amdqp_batch_stats_t* stats) {
    store_stats(stats, r.affected, r.skipped, r.latency_ns);
    return static_cast<int>(r.affected);
}

using GpuIds = std::span<const std::uint32_t>;

// The calls that name a set of GPUs (none: every GPU) check it alike.
template <typename Call>
int gpu_set_call(amdqp_t* h, const uint32_t* gpu_ids, size_t num_gpus, amdqp_batch_stats_t* stats,
                 Call&& call) {
    if (!h)
        return invalid("NULL handle");
    if (num_gpus && !gpu_ids)
        return invalid("NULL GPU id array");
    return guarded([&]() -> int { return report(call(GpuIds(gpu_ids, num_gpus)), stats); });
}

int batch(amdqp_t* h, amdqp_ref_t* refs, std::size_t count, std::size_t elem_size,
          std::uint32_t grace_us, amdqp_batch_stats_t* stats, bool suspending) {
    if (!h)
        return invalid("NULL handle");
    if (count && !refs)
        return invalid("NULL reference array");
    if (count && elem_size < sizeof(amdqp_ref_t))
        return invalid("reference element size " + std::to_string(elem_size) +
                       " is smaller than amdqp_ref_t");
    return guarded([&]() -> int {
        std::vector<amdqp::QueueRef> in;
        in.reserve(count);
        for (std::size_t i = 0; i < count; i++)
            in.push_back(from_c(*ref_at(refs, elem_size, i)));
        const amdqp::BatchResult res =
            suspending ? h->device.suspend(in, grace_us) : h->device.resume(in);
        bool noted = false;
        for (std::size_t i = 0; i < count; i++) {
            amdqp_ref_t* r = ref_at(refs, elem_size, i);
            const amdqp::RefResult& e = res.entries[i];
            r->error = e.error;
            r->state = e.state;
            r->status = e.ok() ? AMDQP_OK : amdqp::errc_to_status(amdqp::entry_errc(e.error));
            // The first failure's message, for callers that print one line.
            if (!e.ok() && !noted) {
                record(r->status, amdqp::entry_message(e, suspending), -e.error);
                noted = true;
            }
        }
        store_stats(stats, res.done, static_cast<std::uint32_t>(count) - res.done, res.latency_ns);
        return static_cast<int>(res.done);
    });
}

}  // namespace

namespace amdqp {

amdqp_t* to_c_handle(Device&& device) {
    return std::make_unique<amdqp_handle>(std::move(device)).release();
}

}  // namespace amdqp

extern "C" {

const char* amdqp_library_version(void) {
    return AMDQP_LIBRARY_VERSION;
}

const char* amdqp_strerror(int status) {
    switch (status) {
        case AMDQP_OK:
            return "success";
        case AMDQP_ERR_NO_MODULE:
            return "amdqp: /dev/amdqp not found: load the module (sudo modprobe amdqp)";
        case AMDQP_ERR_PERMISSION:
            return "amdqp: permission denied (a capability or ownership is missing)";
        case AMDQP_ERR_NO_GPU:
            return "amdqp: unknown GPU id";
        case AMDQP_ERR_NO_QUEUE:
            return "amdqp: no such queue";
        case AMDQP_ERR_INVALID:
            return "amdqp: invalid argument";
        case AMDQP_ERR_ABI_MISMATCH:
            return "amdqp: the kernel module and libamdqp speak different ABIs";
        case AMDQP_ERR_BUSY:
            return "amdqp: busy, try again later";
        case AMDQP_ERR_SYSTEM:
            return "amdqp: system error";
        default:
            return "amdqp: unknown status";
    }
}

const char* amdqp_last_error(void) {
    return last_error.c_str();
}

int amdqp_last_errno(void) {
    return last_errno;
}

int amdqp_open_path(const char* path, amdqp_t** out) {
    if (!out)
        return invalid("NULL output handle");
    *out = nullptr;
    if (!path)
        return invalid("NULL device path");
    return guarded([&]() -> int {
        *out = amdqp::to_c_handle(amdqp::Device::open(path));
        return AMDQP_OK;
    });
}

int amdqp_open(amdqp_t** out) {
    return guarded(
        [&]() -> int { return amdqp_open_path(amdqp::default_device_path().c_str(), out); });
}

void amdqp_close(amdqp_t* h) {
    std::unique_ptr<amdqp_handle> owned(h);
}

int amdqp_fd(const amdqp_t* h) {
    return h ? h->device.fd() : -1;
}

int amdqp_get_version(amdqp_t* h, amdqp_version_info_t* out) {
    if (!h || !out)
        return invalid("NULL handle or output");
    if (out->size < kMinElem)
        return invalid("amdqp_version_info_t.size not set (set it to sizeof)");
    return guarded([&]() -> int {
        const amdqp::Version v = h->device.version();
        amdqp_version_info_t c{};
        c.abi_major = v.abi_major;
        c.abi_minor = v.abi_minor;
        c.backends = v.backends;
        c.num_devices = v.num_devices;
        c.max_batch = v.max_batch;
        c.priority_max = v.priority_max;
        c.features = v.features;
        store(out, out->size, 0, c);
        return AMDQP_OK;
    });
}

int amdqp_get_gpus(amdqp_t* h, amdqp_gpu_t* gpus, size_t capacity, size_t elem_size) {
    if (!h)
        return invalid("NULL handle");
    if (capacity && (!gpus || elem_size < kMinElem))
        return invalid("bad GPU array (NULL, or element size below 8)");
    return guarded([&]() -> int {
        const auto list = h->device.devices();
        for (std::size_t i = 0; i < list.size() && i < capacity; i++)
            store(gpus, elem_size, i, to_c(list[i]));
        return static_cast<int>(list.size());
    });
}

int amdqp_get_queues(amdqp_t* h, uint32_t gpu_id, uint32_t pid, amdqp_queue_t* queues,
                     size_t capacity, size_t elem_size) {
    if (!h)
        return invalid("NULL handle");
    if (capacity && (!queues || elem_size < kMinElem))
        return invalid("bad queue array (NULL, or element size below 8)");
    return guarded([&]() -> int {
        const auto list = h->device.queues(gpu_id, pid);
        for (std::size_t i = 0; i < list.size() && i < capacity; i++)
            store(queues, elem_size, i, to_c(list[i]));
        return static_cast<int>(list.size());
    });
}

int amdqp_find_queue(amdqp_t* h, uint32_t pid, uint32_t gpu_id, uint32_t queue_id,
                     amdqp_queue_t* out, size_t out_size) {
    if (!h)
        return invalid("NULL handle");
    return guarded([&]() -> int {
        const auto q = h->device.find_queue(pid, gpu_id, queue_id);
        if (!q)
            return record(AMDQP_ERR_NO_QUEUE,
                          "amdqp: no queue " +
                              amdqp::to_string(amdqp::QueueRef::by_id(pid, gpu_id, queue_id)) +
                              " (see amdqpctl list)",
                          ENOENT);
        if (out && out_size >= kMinElem)
            store(out, out_size, 0, to_c(*q));
        return AMDQP_OK;
    });
}

int amdqp_find_queue_by_ring(amdqp_t* h, uint32_t pid, uint64_t ring_va, amdqp_queue_t* out,
                             size_t out_size) {
    if (!h)
        return invalid("NULL handle");
    return guarded([&]() -> int {
        const auto q = h->device.find_queue(pid, ring_va);
        if (!q)
            return record(AMDQP_ERR_NO_QUEUE,
                          "amdqp: no queue " +
                              amdqp::to_string(amdqp::QueueRef::by_ring_va(pid, ring_va)) +
                              " (see amdqpctl list)",
                          ENOENT);
        if (out && out_size >= kMinElem)
            store(out, out_size, 0, to_c(*q));
        return AMDQP_OK;
    });
}

int amdqp_set_queue_priority(amdqp_t* h, amdqp_ref_t* ref, int priority) {
    if (!h || !ref)
        return invalid("NULL handle or reference");
    const int status = guarded([&]() -> int {
        ref->state = h->device.set_priority(from_c(*ref), priority);
        return AMDQP_OK;
    });
    ref->status = status;
    ref->error = status == AMDQP_OK ? 0 : -last_errno;
    return status;
}

int amdqp_suspend(amdqp_t* h, amdqp_ref_t* refs, size_t count, size_t elem_size, uint32_t grace_us,
                  amdqp_batch_stats_t* stats) {
    return batch(h, refs, count, elem_size, grace_us, stats, true);
}

int amdqp_resume(amdqp_t* h, amdqp_ref_t* refs, size_t count, size_t elem_size,
                 amdqp_batch_stats_t* stats) {
    return batch(h, refs, count, elem_size, 0, stats, false);
}

const char* amdqp_ref_message(const amdqp_ref_t* ref, int suspending) {
    thread_local std::string message;
    if (!ref)
        return "amdqp: NULL reference";
    try {
        message = amdqp::entry_message({from_c(*ref), ref->error, ref->state}, suspending != 0);
    } catch (...) {
        return "amdqp: out of memory";
    }
    return message.c_str();
}

int amdqp_suspend_below(amdqp_t* h, const uint32_t* gpu_ids, size_t num_gpus, int priority,
                        uint32_t grace_us, amdqp_batch_stats_t* stats) {
    return gpu_set_call(h, gpu_ids, num_gpus, stats, [&](GpuIds ids) {
        return h->device.suspend_below(ids, priority, grace_us);
    });
}

int amdqp_resume_all(amdqp_t* h, const uint32_t* gpu_ids, size_t num_gpus,
                     amdqp_batch_stats_t* stats) {
    return gpu_set_call(h, gpu_ids, num_gpus, stats,
                        [&](GpuIds ids) { return h->device.resume_all(ids); });
}

namespace {

amdqp::CuGeometry geometry_of(const amdqp_confine_gpu_t& t) {
    return {t.gpu_id, t.num_xcc, t.cu_per_xcc, t.mask_words, 0};
}

const amdqp_confine_gpu_t& target_at(const amdqp_confine_gpu_t* base, std::size_t elem_size,
                                     std::size_t i) {
    return *reinterpret_cast<const amdqp_confine_gpu_t*>(reinterpret_cast<const char*>(base) +
                                                         i * elem_size);
}

}  // namespace

int amdqp_cu_geometry(amdqp_t* h, amdqp_confine_gpu_t* targets, size_t count, size_t elem_size) {
    if (!h)
        return invalid("NULL handle");
    if (count && (!targets || elem_size < sizeof(amdqp_confine_gpu_t)))
        return invalid("NULL target array, or elem_size below sizeof(amdqp_confine_gpu_t)");
    return guarded([&]() -> int {
        std::vector<std::uint32_t> ids;
        for (std::size_t i = 0; i < count; i++)
            ids.push_back(target_at(targets, elem_size, i).gpu_id);
        const auto g = h->device.cu_geometry(ids);
        int confinable = 0;
        for (std::size_t i = 0; i < count; i++) {
            auto& t = *reinterpret_cast<amdqp_confine_gpu_t*>(reinterpret_cast<char*>(targets) +
                                                              i * elem_size);
            t.num_xcc = g[i].num_xcc;
            t.cu_per_xcc = g[i].cu_per_xcc;
            t.mask_words = g[i].mask_words;
            t.status = g[i].confinable()       ? AMDQP_OK
                       : g[i].error == -ENODEV ? AMDQP_ERR_NO_GPU
                                               : AMDQP_ERR_INVALID;
            confinable += t.status == AMDQP_OK;
        }
        return confinable;
    });
}

int amdqp_cu_range(const amdqp_confine_gpu_t* target, uint32_t first, uint32_t count,
                   uint32_t* mask, size_t mask_words) {
    if (!target || !mask || mask_words < target->mask_words)
        return invalid("NULL target or mask, or a mask shorter than the target's mask_words");
    return guarded([&]() -> int {
        const auto m = geometry_of(*target).cu_range(first, count);
        std::copy(m.begin(), m.end(), mask);
        return static_cast<int>(m.size());
    });
}

int amdqp_confine_below(amdqp_t* h, const amdqp_confine_gpu_t* targets, size_t count,
                        size_t elem_size, int priority, uint32_t grace_us,
                        amdqp_batch_stats_t* stats) {
    if (!h)
        return invalid("NULL handle");
    if (!targets || elem_size < sizeof(amdqp_confine_gpu_t))
        return invalid("NULL target array, or elem_size below sizeof(amdqp_confine_gpu_t)");
    for (std::size_t i = 0; i < count; i++) {
        const auto& t = target_at(targets, elem_size, i);
        if (t.mask_words && !t.mask)
            return invalid("confine below: NULL mask for GPU " + std::to_string(t.gpu_id));
    }
    return guarded([&]() -> int {
        std::vector<amdqp::CuTarget> v;
        for (std::size_t i = 0; i < count; i++) {
            const auto& t = target_at(targets, elem_size, i);
            v.push_back(
                {geometry_of(t), std::vector<std::uint32_t>(t.mask, t.mask + t.mask_words)});
        }
        return report(h->device.confine_below(v, priority, grace_us), stats);
    });
}

int amdqp_confine_release(amdqp_t* h, const uint32_t* gpu_ids, size_t num_gpus,
                          amdqp_batch_stats_t* stats) {
    return gpu_set_call(h, gpu_ids, num_gpus, stats,
                        [&](GpuIds ids) { return h->device.release_confinement(ids); });
}

int amdqp_events_subscribe(amdqp_t* h, uint64_t mask) {
    if (!h)
        return invalid("NULL handle");
    return guarded([&]() -> int {
        if (!mask) {
            h->events.reset();  // closing its fd drops the subscription
            h->backlog.clear();
        } else if (h->events) {
            h->events->set_mask(mask);
        } else {
            h->events.emplace(h->device.events(mask));
        }
        return AMDQP_OK;
    });
}

int amdqp_events_fd(const amdqp_t* h) {
    return h && h->events ? h->events->fd() : -1;
}

int amdqp_events_read(amdqp_t* h, amdqp_event_record_t* records, size_t capacity, size_t elem_size,
                      int timeout_ms) {
    if (!h)
        return invalid("NULL handle");
    if (!h->events)
        return invalid("not subscribed to events: call amdqp_events_subscribe() first");
    if (capacity && (!records || elem_size < kMinElem))
        return invalid("bad event array (NULL, or element size below 8)");
    return guarded([&]() -> int {
        if (h->backlog.empty()) {
            auto got = h->events->read(timeout_ms);
            h->backlog.insert(h->backlog.end(), got.begin(), got.end());
        }
        std::size_t n = 0;
        for (; n < capacity && !h->backlog.empty(); n++) {
            store(records, elem_size, n, to_c(h->backlog.front()));
            h->backlog.pop_front();
        }
        return static_cast<int>(n);
    });
}

const char* amdqp_event_name(uint32_t type) {
    return amdqp::event_type_name(type);
}

int amdqp_parse_priority(const char* text, int* priority) {
    if (!text || !priority)
        return invalid("NULL priority text or output");
    return guarded([&]() -> int {
        *priority = amdqp::parse_priority(text);
        return AMDQP_OK;
    });
}

const char* amdqp_priority_name(int priority) {
    static const char* const names[] = {"0", "1", "low", "3",  "4",    "5",  "6",  "normal",
                                        "8", "9", "10",  "11", "high", "13", "14", "15"};
    static_assert(sizeof(names) / sizeof(names[0]) == AMDQP_PRIO_MAX + 1);
    if (priority < AMDQP_PRIO_MIN || priority > AMDQP_PRIO_MAX)
        return nullptr;
    return names[priority];
}

}  // extern "C"
