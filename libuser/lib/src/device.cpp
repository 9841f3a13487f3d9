// SPDX-License-Identifier: MIT
#include <fcntl.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdlib>
#include <utility>

#include <amdqp/amdqp.hpp>

#include "errors.h"

namespace amdqp {

namespace {

// The list ioctls report how many entries exist; lists that keep growing
// between calls get this many tries before the last snapshot is returned.
constexpr int kListAttempts = 8;

std::uint64_t user_ptr(const void* p) {
    return static_cast<std::uint64_t>(reinterpret_cast<std::uintptr_t>(p));
}

DeviceInfo to_device_info(const amdqp_device_info& d) {
    DeviceInfo out;
    out.gpu_id = d.gpu_id;
    out.backend = d.backend;
    out.sched_mode = d.sched_mode;
    out.num_xcc = d.num_xcc;
    out.num_queues = d.num_queues;
    out.num_suspended = d.num_suspended;
    out.sched_updates = d.sched_updates;
    out.unmap_packets = d.unmap_packets;
    out.map_packets = d.map_packets;
    out.preemptions = d.preemptions;
    out.preempt_failures = d.preempt_failures;
    out.resets = d.resets;
    return out;
}

QueueInfo to_queue_info(const amdqp_queue_info& q) {
    QueueInfo out;
    out.pid = q.pid;
    out.uid = q.uid;
    out.gpu_id = q.gpu_id;
    out.queue_id = q.queue_id;
    out.ring_va = q.ring_va;
    out.ring_size = q.ring_size;
    out.priority = q.priority;
    out.state = q.state;
    out.holders = q.holders;
    out.backend = q.backend;
    out.suspend_count = q.suspend_count;
    out.suspended_ns = q.suspended_ns;
    out.busy_ns = q.busy_ns;
    out.submitted = q.submitted;
    out.completed = q.completed;
    out.created_ns = q.created_ns;
    out.requested = q.requested;
    out.ceiling = q.ceiling;
    return out;
}

amdqp_queue_ref to_uapi_ref(const QueueRef& r) {
    amdqp_queue_ref out{};
    out.pid = r.pid;
    if (r.by_ring) {
        out.flags = AMDQP_REF_BY_RING;
        out.ring_va = r.ring_va;
    } else {
        out.gpu_id = r.gpu_id;
        out.queue_id = r.queue_id;
    }
    return out;
}

std::string join_ids(const std::vector<DeviceInfo>& devices) {
    std::string out;
    for (const auto& d : devices)
        out += (out.empty() ? "" : ", ") + std::to_string(d.gpu_id);
    return out.empty() ? "none" : out;
}

}  // namespace

std::string default_device_path() {
    const char* env = ::secure_getenv("AMDQP_DEVICE");
    return (env && *env) ? env : "/dev/amdqp";
}

Device::Device(std::shared_ptr<Sys> sys, std::string path, int fd)
    : sys_(std::move(sys)), path_(std::move(path)), fd_(fd) {}

Device Device::open(const std::string& path, std::shared_ptr<Sys> sys) {
    return open_flags(path, std::move(sys), O_RDWR | O_CLOEXEC);
}

Device Device::open_flags(const std::string& path, std::shared_ptr<Sys> sys, int flags) {
    if (!sys)
        sys = real_sys();
    const int fd = sys->open(path.c_str(), flags);
    if (fd < 0)
        throw detail::open_error(path, -fd);
    Device dev(std::move(sys), path, fd);
    // The major is checked before anything else is asked: a library must
    // not guess at the layout of another ABI.
    const Version v = dev.version();
    if (v.abi_major != AMDQP_VERSION_MAJOR)
        throw Error(errc::abi_mismatch,
                    "amdqp: the kernel module speaks ABI " + std::to_string(v.abi_major) + "." +
                        std::to_string(v.abi_minor) +
                        " but libamdqp " AMDQP_LIBRARY_VERSION " speaks " +
                        std::to_string(AMDQP_VERSION_MAJOR) +
                        ".x: install matching versions of amdqp.ko and libamdqp",
                    0);
    if (v.max_batch)
        dev.max_batch_ = v.max_batch;
    return dev;
}

Device::Device(Device&& other) noexcept
    : sys_(std::move(other.sys_)),
      path_(std::move(other.path_)),
      fd_(std::exchange(other.fd_, -1)),
      max_batch_(other.max_batch_) {}

Device& Device::operator=(Device&& other) noexcept {
    if (this != &other) {
        close_fd();
        sys_ = std::move(other.sys_);
        path_ = std::move(other.path_);
        fd_ = std::exchange(other.fd_, -1);
        max_batch_ = other.max_batch_;
    }
    return *this;
}

Device::~Device() {
    close_fd();
}

void Device::close_fd() noexcept {
    if (fd_ >= 0 && sys_)
        sys_->close(fd_);
    fd_ = -1;
}

void Device::fail(const char* what, int err) const {
    throw detail::call_error(what, err);
}

Version Device::version() {
    amdqp_version v{};
    const int r = sys_->ioctl(fd_, AMDQP_IOC_GET_VERSION, &v);
    if (r == -ENOTTY || r == -EINVAL)
        throw Error(errc::abi_mismatch,
                    "amdqp: " + path_ +
                        " is not an amdqp device (it does not answer AMDQP_IOC_GET_VERSION): "
                        "point $AMDQP_DEVICE at /dev/amdqp, or unset it",
                    -r);
    if (r < 0)
        fail("get version", -r);
    Version out;
    out.abi_major = v.major;
    out.abi_minor = v.minor;
    out.backends = v.backends;
    out.num_devices = v.num_devices;
    out.max_batch = v.max_batch;
    out.priority_max = v.priority_max;
    out.features = v.features;
    if (v.features & AMDQP_FEATURE_CEILING)
        out.default_ceiling = v.reserved;
    return out;
}

namespace {

// Runs a list ioctl until the kernel's array fits: @call(buf) fills the
// request for @buf, issues it and returns it with count (entries that exist)
// and filled (entries written). Done when everything fit, when the kernel
// wrote less than there was room for (its own per-call cap), or when the
// list keeps growing past kListAttempts.
template <typename Raw, typename Call>
std::vector<Raw> list_until_fits(std::size_t initial, std::size_t slack, Call call) {
    std::vector<Raw> buf(initial);
    for (int attempt = 1;; attempt++) {
        const auto req = call(buf);
        if (req.count <= buf.size() || req.filled < buf.size() || attempt == kListAttempts) {
            buf.resize(std::min<std::size_t>(req.filled, buf.size()));
            return buf;
        }
        buf.assign(req.count + req.count / 4 + slack, Raw{});
    }
}

}  // namespace

std::vector<DeviceInfo> Device::devices() {
    const auto raw = list_until_fits<amdqp_device_info>(8, 4, [&](auto& buf) {
        amdqp_list_devices req{};
        req.devices = user_ptr(buf.data());
        req.count = static_cast<std::uint32_t>(buf.size());
        req.info_size = sizeof(amdqp_device_info);
        const int r = sys_->ioctl(fd_, AMDQP_IOC_LIST_DEVICES, &req);
        if (r < 0)
            fail("list devices", -r);
        return req;
    });
    std::vector<DeviceInfo> out;
    out.reserve(raw.size());
    for (const auto& d : raw)
        out.push_back(to_device_info(d));
    return out;
}

std::vector<QueueInfo> Device::queues(std::uint32_t gpu_id, std::uint32_t pid) {
    const auto raw = list_until_fits<amdqp_queue_info>(64, 16, [&](auto& buf) {
        amdqp_list_queues req{};
        req.queues = user_ptr(buf.data());
        req.count = static_cast<std::uint32_t>(buf.size());
        req.info_size = sizeof(amdqp_queue_info);
        req.gpu_id = gpu_id;
        req.pid = pid;
        const int r = sys_->ioctl(fd_, AMDQP_IOC_LIST_QUEUES, &req);
        if (r == -EINVAL && pid)
            throw Error(errc::invalid,
                        "amdqp: list queues: pid " + std::to_string(pid) + " is out of range",
                        EINVAL);
        if (r < 0)
            fail("list queues", -r);
        return req;
    });
    std::vector<QueueInfo> out;
    out.reserve(raw.size());
    for (const auto& q : raw)
        out.push_back(to_queue_info(q));
    return out;
}

std::optional<QueueInfo> Device::find_queue(std::uint32_t pid, std::uint64_t ring_va) {
    for (const auto& q : queues(0, pid))
        if (q.ring_va == ring_va && (pid == 0 || q.pid == pid))
            return q;
    return std::nullopt;
}

std::optional<QueueInfo> Device::find_queue(std::uint32_t pid, std::uint32_t gpu_id,
                                            std::uint32_t queue_id) {
    for (const auto& q : queues(gpu_id, pid))
        if (q.gpu_id == gpu_id && q.queue_id == queue_id && (pid == 0 || q.pid == pid))
            return q;
    return std::nullopt;
}

std::uint32_t Device::set_priority(const QueueRef& ref, int priority) {
    if (priority < priority_min || priority > priority_max)
        throw Error(errc::invalid,
                    "amdqp: priority " + std::to_string(priority) +
                        " is out of range: use 0..15, or high (12), normal (7), low (2)",
                    EINVAL);
    amdqp_set_priority req{};
    req.ref = to_uapi_ref(ref);
    req.priority = static_cast<std::uint32_t>(priority);
    const int r = sys_->ioctl(fd_, AMDQP_IOC_SET_PRIORITY, &req);
    if (r >= 0)
        return req.ref.state;
    const std::string what =
        "cannot set the priority of " + to_string(ref) + " to " + priority_name(priority);
    switch (-r) {
        case EPERM:
        case EACCES:
            throw Error(errc::permission,
                        "amdqp: " + what +
                            ": a priority above the queue's ceiling (see amdqpctl list), or "
                            "another user's queue, needs CAP_SYS_NICE; ask the administrator "
                            "for a higher ceiling (amdqpctl ceiling)",
                        -r);
        case EINVAL:
            throw Error(errc::invalid, "amdqp: " + what + ": invalid queue reference (pid 0?)", -r);
        default:
            fail(what.c_str(), -r);
    }
}

BatchResult Device::batch(unsigned long request, std::span<const QueueRef> refs,
                          std::uint32_t grace_us) {
    const bool suspending = request == AMDQP_IOC_SUSPEND;
    BatchResult out;
    out.entries.reserve(refs.size());
    std::vector<amdqp_queue_ref> chunk;
    for (std::size_t start = 0; start < refs.size(); start += max_batch_) {
        const std::size_t n = std::min<std::size_t>(max_batch_, refs.size() - start);
        chunk.clear();
        for (std::size_t i = 0; i < n; i++)
            chunk.push_back(to_uapi_ref(refs[start + i]));
        amdqp_batch b{};
        b.refs = user_ptr(chunk.data());
        b.count = static_cast<std::uint32_t>(n);
        b.ref_size = sizeof(amdqp_queue_ref);
        b.grace_us = suspending ? grace_us : 0;
        const int r = sys_->ioctl(fd_, request, &b);
        if (r < 0)
            fail(suspending ? "suspend" : "resume", -r);
        for (std::size_t i = 0; i < n; i++)
            out.entries.push_back({refs[start + i], chunk[i].result, chunk[i].state});
        out.done += b.done;
        out.latency_ns += b.latency_ns;
    }
    return out;
}

BatchResult Device::suspend(std::span<const QueueRef> refs, std::uint32_t grace_us) {
    return batch(AMDQP_IOC_SUSPEND, refs, grace_us);
}

BatchResult Device::resume(std::span<const QueueRef> refs) {
    return batch(AMDQP_IOC_RESUME, refs, 0);
}

GpuSetResult Device::gpu_set(unsigned long request, std::span<const std::uint32_t> gpu_ids,
                             int priority, std::uint32_t grace_us) {
    const bool suspending = request == AMDQP_IOC_SUSPEND_BELOW;
    const char* what = suspending ? "suspend below" : "resume all";
    if (gpu_ids.size() > max_batch_)
        throw Error(errc::invalid,
                    std::string("amdqp: ") + what + ": at most " + std::to_string(max_batch_) +
                        " GPUs per call (pass none for every GPU)",
                    EINVAL);
    amdqp_gpu_set s{};
    s.gpu_ids = gpu_ids.empty() ? 0 : user_ptr(gpu_ids.data());
    s.num_gpus = static_cast<std::uint32_t>(gpu_ids.size());
    s.priority = static_cast<std::uint32_t>(priority);
    s.grace_us = grace_us;
    const int r = sys_->ioctl(fd_, request, &s);
    if (r == -ENODEV) {
        // Name the id the caller got wrong, and the ones that exist.
        std::vector<DeviceInfo> known;
        try {
            known = devices();
        } catch (const Error&) {
        }
        std::string unknown;
        for (std::uint32_t id : gpu_ids) {
            const bool found = std::any_of(known.begin(), known.end(),
                                           [id](const DeviceInfo& d) { return d.gpu_id == id; });
            if (!found)
                unknown += (unknown.empty() ? "" : ", ") + std::to_string(id);
        }
        throw Error(errc::no_gpu,
                    std::string("amdqp: ") + what + ": unknown GPU id " +
                        (unknown.empty() ? "(it went away)" : unknown) +
                        " (GPUs: " + join_ids(known) + "; see amdqpctl list)",
                    ENODEV);
    }
    if (r < 0)
        fail(what, -r);
    return {s.affected, s.skipped, s.latency_ns};
}

GpuSetResult Device::suspend_below(std::span<const std::uint32_t> gpu_ids, int priority,
                                   std::uint32_t grace_us) {
    if (priority < priority_min || priority > priority_max + 1)
        throw Error(errc::invalid,
                    "amdqp: suspend below: priority " + std::to_string(priority) +
                        " is out of range: use 0..16 (16 suspends every priority)",
                    EINVAL);
    if (priority > priority_max && (version().features & AMDQP_FEATURE_CEILING))
        return suspend_every(gpu_ids, grace_us);
    return gpu_set(AMDQP_IOC_SUSPEND_BELOW, gpu_ids, priority, grace_us);
}

// "Every priority" on a kernel that takes levels 0..15 only (ABI 1.2):
// below 15 in one call, then the priority-15 queues by reference, with
// the same exemptions (the caller's own process, queues this fd holds).
GpuSetResult Device::suspend_every(std::span<const std::uint32_t> gpu_ids, std::uint32_t grace_us) {
    GpuSetResult out = gpu_set(AMDQP_IOC_SUSPEND_BELOW, gpu_ids, priority_max, grace_us);
    const auto self = static_cast<std::uint32_t>(::getpid());
    std::vector<QueueRef> top;
    for (const auto& q : queues()) {
        const bool on_gpus =
            gpu_ids.empty() || std::find(gpu_ids.begin(), gpu_ids.end(), q.gpu_id) != gpu_ids.end();
        if (on_gpus && q.priority >= static_cast<std::uint32_t>(priority_max) && q.pid != self &&
            !q.held())
            top.push_back(QueueRef::of(q));
    }
    if (top.empty())
        return out;
    const BatchResult b = suspend(top, grace_us);
    for (const auto& e : b.entries)
        if (e.error && e.error != -EALREADY && e.error != -ENOENT)
            out.skipped++;
    out.affected += b.done;
    out.latency_ns += b.latency_ns;
    return out;
}

CeilingResult Device::ceiling_update(std::uint32_t op, std::span<const Ceiling> entries) {
    const char* what = op == AMDQP_CEIL_OP_SET ? "set ceilings" : "clear ceilings";
    CeilingResult out;
    out.entries.assign(entries.begin(), entries.end());
    std::vector<amdqp_ceiling> chunk;
    for (std::size_t start = 0; start < entries.size(); start += max_batch_) {
        const std::size_t n = std::min<std::size_t>(max_batch_, entries.size() - start);
        chunk.assign(n, amdqp_ceiling{});
        for (std::size_t i = 0; i < n; i++) {
            const Ceiling& c = entries[start + i];
            chunk[i].kind = c.kind;
            chunk[i].id = c.id;
            chunk[i].level =
                op == AMDQP_CEIL_OP_SET ? static_cast<std::uint32_t>(std::max(c.level, 0)) : 0;
        }
        amdqp_ceilings req{};
        req.entries = user_ptr(chunk.data());
        req.count = static_cast<std::uint32_t>(n);
        req.entry_size = sizeof(amdqp_ceiling);
        req.op = op;
        const int r = sys_->ioctl(fd_, AMDQP_IOC_CEILINGS, &req);
        if (r == -EPERM || r == -EACCES)
            throw Error(errc::permission,
                        std::string("amdqp: ") + what +
                            ": the ceiling table needs CAP_SYS_ADMIN (run it as root)",
                        -r);
        if (r == -ENOTTY)
            throw Error(errc::abi_mismatch,
                        std::string("amdqp: ") + what +
                            ": this kernel module has no ceiling table (ABI 1.2 needed)",
                        -r);
        if (r < 0)
            fail(what, -r);
        for (std::size_t i = 0; i < n; i++)
            out.entries[start + i].error = chunk[i].result;
        out.done += req.done;
        out.reclamped += req.reclamped;
    }
    return out;
}

CeilingResult Device::set_ceilings(std::span<const Ceiling> entries) {
    return ceiling_update(AMDQP_CEIL_OP_SET, entries);
}

CeilingResult Device::clear_ceilings(std::span<const Ceiling> entries) {
    return ceiling_update(AMDQP_CEIL_OP_CLEAR, entries);
}

std::vector<Ceiling> Device::ceilings() {
    const auto raw = list_until_fits<amdqp_ceiling>(64, 16, [&](auto& buf) {
        amdqp_ceilings req{};
        req.entries = user_ptr(buf.data());
        req.count = static_cast<std::uint32_t>(buf.size());
        req.entry_size = sizeof(amdqp_ceiling);
        req.op = AMDQP_CEIL_OP_LIST;
        const int r = sys_->ioctl(fd_, AMDQP_IOC_CEILINGS, &req);
        if (r == -EPERM || r == -EACCES)
            throw Error(errc::permission,
                        "amdqp: list ceilings: the ceiling table needs CAP_SYS_ADMIN (run it as "
                        "root)",
                        -r);
        if (r < 0)
            fail("list ceilings", -r);
        // list_until_fits reads count and filled.
        struct {
            std::uint32_t count, filled;
        } seen{req.count, req.done};
        return seen;
    });
    std::vector<Ceiling> out;
    out.reserve(raw.size());
    for (const auto& c : raw)
        out.push_back({c.kind, c.id, static_cast<int>(c.level), 0});
    return out;
}

std::uint32_t Device::flush_ceilings() {
    amdqp_ceilings req{};
    req.op = AMDQP_CEIL_OP_FLUSH;
    const int r = sys_->ioctl(fd_, AMDQP_IOC_CEILINGS, &req);
    if (r == -EPERM || r == -EACCES)
        throw Error(errc::permission,
                    "amdqp: flush ceilings: the ceiling table needs CAP_SYS_ADMIN (run it as root)",
                    -r);
    if (r < 0)
        fail("flush ceilings", -r);
    return req.reclamped;
}

std::vector<std::uint32_t> CuGeometry::cu_range(std::uint32_t first, std::uint32_t count) const {
    const std::uint32_t wpx = (cu_per_xcc + 31) / 32;
    std::vector<std::uint32_t> mask(static_cast<std::size_t>(num_xcc) * wpx, 0);
    for (std::uint32_t x = 0; x < num_xcc; x++)
        for (std::uint32_t c = first; c < cu_per_xcc && c - first < count; c++)
            mask[x * wpx + c / 32] |= 1u << (c % 32);
    return mask;
}

namespace {

// The confine ioctl's errors that mean something particular.
[[noreturn]] void confine_error(const char* what, int r) {
    if (r == -ENOTTY)
        throw Error(errc::abi_mismatch,
                    std::string("amdqp: ") + what +
                        ": this kernel module cannot confine queues (ABI 1.3 needed)",
                    -r);
    if (r == -EOPNOTSUPP)
        throw Error(errc::invalid,
                    std::string("amdqp: ") + what +
                        ": a GPU cannot be confined (its backend has no CU-mask control; see "
                        "cu_per_xcc)",
                    -r);
    if (r == -ENODEV)
        throw Error(errc::no_gpu, std::string("amdqp: ") + what + ": unknown GPU id", -r);
    throw detail::call_error(what, -r);
}

}  // namespace

std::vector<CuGeometry> Device::cu_geometry(std::span<const std::uint32_t> gpu_ids) {
    std::vector<CuGeometry> out;
    std::vector<amdqp_cu_target> t;
    for (std::size_t start = 0; start < gpu_ids.size(); start += AMDQP_MAX_CONFINE_GPUS) {
        const std::size_t n = std::min<std::size_t>(AMDQP_MAX_CONFINE_GPUS, gpu_ids.size() - start);
        t.assign(n, amdqp_cu_target{});
        for (std::size_t i = 0; i < n; i++)
            t[i].gpu_id = gpu_ids[start + i];
        amdqp_confine c{};
        c.targets = user_ptr(t.data());
        c.count = static_cast<std::uint32_t>(n);
        c.target_size = sizeof(amdqp_cu_target);
        c.op = AMDQP_CONFINE_OP_INFO;
        const int r = sys_->ioctl(fd_, AMDQP_IOC_CONFINE, &c);
        if (r < 0)
            confine_error("CU geometry", r);
        for (const auto& e : t)
            out.push_back({e.gpu_id, e.num_xcc, e.cu_per_xcc, e.mask_words, e.result});
    }
    return out;
}

GpuSetResult Device::confine_below(std::span<const CuTarget> targets, int priority,
                                   std::uint32_t grace_us) {
    if (priority < priority_min || priority > priority_max)
        throw Error(errc::invalid,
                    "amdqp: confine below: priority " + std::to_string(priority) +
                        " is out of range: use 0..15",
                    EINVAL);
    if (targets.empty() || targets.size() > AMDQP_MAX_CONFINE_GPUS)
        throw Error(
            errc::invalid,
            "amdqp: confine below: name 1.." + std::to_string(AMDQP_MAX_CONFINE_GPUS) + " GPUs",
            EINVAL);
    std::vector<amdqp_cu_target> t(targets.size());
    for (std::size_t i = 0; i < targets.size(); i++) {
        const CuTarget& in = targets[i];
        if (in.mask.size() != in.geometry.mask_words)
            throw Error(errc::invalid,
                        "amdqp: confine below: GPU " + std::to_string(in.geometry.gpu_id) +
                            ": the mask has " + std::to_string(in.mask.size()) +
                            " words, its geometry " + std::to_string(in.geometry.mask_words),
                        EINVAL);
        t[i].gpu_id = in.geometry.gpu_id;
        t[i].num_xcc = in.geometry.num_xcc;
        t[i].cu_per_xcc = in.geometry.cu_per_xcc;
        t[i].mask_words = in.geometry.mask_words;
        t[i].mask_ptr = user_ptr(in.mask.data());
    }
    amdqp_confine c{};
    c.targets = user_ptr(t.data());
    c.count = static_cast<std::uint32_t>(t.size());
    c.target_size = sizeof(amdqp_cu_target);
    c.op = AMDQP_CONFINE_OP_BELOW;
    c.priority = static_cast<std::uint32_t>(priority);
    c.grace_us = grace_us;
    const int r = sys_->ioctl(fd_, AMDQP_IOC_CONFINE, &c);
    if (r == -EINVAL)
        throw Error(errc::invalid,
                    "amdqp: confine below: the kernel refused a mask (a geometry that is not "
                    "the GPU's, an XCC without a CU, or a CU past cu_per_xcc)",
                    EINVAL);
    if (r < 0)
        confine_error("confine below", r);
    return {c.affected, c.skipped, c.latency_ns};
}

GpuSetResult Device::release_confinement(std::span<const std::uint32_t> gpu_ids) {
    if (gpu_ids.size() > AMDQP_MAX_CONFINE_GPUS)
        throw Error(errc::invalid,
                    "amdqp: release confinement: at most " +
                        std::to_string(AMDQP_MAX_CONFINE_GPUS) +
                        " GPUs per call (pass none for every GPU)",
                    EINVAL);
    std::vector<amdqp_cu_target> t(gpu_ids.size());
    for (std::size_t i = 0; i < gpu_ids.size(); i++)
        t[i].gpu_id = gpu_ids[i];
    amdqp_confine c{};
    c.targets = t.empty() ? 0 : user_ptr(t.data());
    c.count = static_cast<std::uint32_t>(t.size());
    c.target_size = sizeof(amdqp_cu_target);
    c.op = AMDQP_CONFINE_OP_RELEASE;
    const int r = sys_->ioctl(fd_, AMDQP_IOC_CONFINE, &c);
    if (r < 0)
        confine_error("release confinement", r);
    return {c.affected, c.skipped, c.latency_ns};
}

GpuSetResult Device::resume_all(std::span<const std::uint32_t> gpu_ids) {
    return gpu_set(AMDQP_IOC_RESUME_ALL, gpu_ids, 0, 0);
}

void Device::set_event_mask(std::uint64_t mask) {
    amdqp_event_mask m{};
    m.mask = mask;
    const int r = sys_->ioctl(fd_, AMDQP_IOC_SET_EVENT_MASK, &m);
    if (r == -EINVAL)
        throw Error(errc::invalid,
                    "amdqp: event mask has bits this kernel does not know (newest type " +
                        std::to_string(AMDQP_EVENT_MAX) + " in libamdqp's ABI)",
                    EINVAL);
    if (r < 0)
        fail("set event mask", -r);
}

EventReader Device::events(std::uint64_t mask) {
    return EventReader(open_flags(path_, sys_, O_RDWR | O_CLOEXEC | O_NONBLOCK), mask);
}

}  // namespace amdqp
