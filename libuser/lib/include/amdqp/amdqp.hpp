// SPDX-License-Identifier: MIT
//
// libamdqp C++ API: an RAII wrapper of every /dev/amdqp ioctl
// (uapi/linux/amdqp.h, Documentation/ioctl.rst) with typed errors whose
// messages say what to do.
//
// Failures throw amdqp::Error. Batch calls (suspend/resume) throw only for a
// malformed request; each queue's own outcome is in its RefResult.
#ifndef AMDQP_AMDQP_HPP
#define AMDQP_AMDQP_HPP

#include <linux/amdqp.h>

#include <cstdint>
#include <memory>
#include <optional>
#include <span>
#include <stdexcept>
#include <string>
#include <string_view>
#include <vector>

#include <amdqp/amdqp.h>
#include <amdqp/sys.hpp>

namespace amdqp {

// What went wrong, coarsely; the message says the rest.
enum class errc {
    no_module,     // /dev/amdqp missing: the module is not loaded
    permission,    // a capability or ownership is missing
    no_gpu,        // unknown GPU id
    no_queue,      // no such queue (visible to the caller)
    invalid,       // bad argument
    abi_mismatch,  // the kernel speaks another ABI major
    busy,          // try again later (cooldown, firmware timeout)
    system,        // anything else; see sys_errno()
};

// "no_module", "permission", ...
AMDQP_API const char* errc_name(errc code) noexcept;
// The C API's AMDQP_ERR_* for a code.
AMDQP_API int errc_to_status(errc code) noexcept;

class AMDQP_API Error : public std::runtime_error {
  public:
    Error(errc code, const std::string& message, int sys_errno = 0);
    errc code() const noexcept { return code_; }
    // The errno behind it (positive), 0 if none.
    int sys_errno() const noexcept { return sys_errno_; }

  private:
    errc code_;
    int sys_errno_;
};

// Priorities: KFD's 0 (lowest) .. 15 (highest), with three named levels.
inline constexpr int priority_min = AMDQP_PRIORITY_MIN;
inline constexpr int priority_max = AMDQP_PRIORITY_MAX;
inline constexpr int priority_low = AMDQP_PRIO_LOW;
inline constexpr int priority_normal = AMDQP_PRIO_NORMAL;
inline constexpr int priority_high = AMDQP_PRIO_HIGH;

// "high" | "normal" | "low" | "0".."15" (any case) -> 12 | 7 | 2 | n.
// Throws Error(errc::invalid) naming the accepted words.
AMDQP_API int parse_priority(std::string_view text);
AMDQP_API std::optional<int> try_parse_priority(std::string_view text) noexcept;
// "high", "normal", "low" for 12, 7, 2; the number otherwise.
AMDQP_API std::string priority_name(int priority);

// "queue_created", ... for an AMDQP_EVENT_* type; "unknown" otherwise.
AMDQP_API const char* event_type_name(std::uint32_t type) noexcept;

// $AMDQP_DEVICE if set and not empty, else "/dev/amdqp".
AMDQP_API std::string default_device_path();

struct Version {
    std::uint32_t abi_major = 0;
    std::uint32_t abi_minor = 0;
    std::uint32_t backends = 0;  // AMDQP_BACKEND_* bits
    std::uint32_t num_devices = 0;
    std::uint32_t max_batch = 0;
    std::uint32_t priority_max = 0;
    std::uint64_t features = 0;  // AMDQP_FEATURE_* bits (ABI 1.2)
    // The module's default_ceiling (ABI 1.2; 0 from older kernels).
    std::uint32_t default_ceiling = 0;
};

struct DeviceInfo {
    std::uint32_t gpu_id = 0;
    std::uint32_t backend = 0;     // AMDQP_BACKEND_*
    std::uint32_t sched_mode = 0;  // AMDQP_SCHED_*
    std::uint32_t num_xcc = 0;
    std::uint32_t num_queues = 0;
    std::uint32_t num_suspended = 0;
    std::uint64_t sched_updates = 0;
    std::uint64_t unmap_packets = 0;
    std::uint64_t map_packets = 0;
    std::uint64_t preemptions = 0;
    std::uint64_t preempt_failures = 0;
    std::uint64_t resets = 0;
};

struct QueueInfo {
    std::uint32_t pid = 0;
    std::uint32_t uid = 0;
    std::uint32_t gpu_id = 0;
    std::uint32_t queue_id = 0;
    std::uint64_t ring_va = 0;
    std::uint64_t ring_size = 0;
    std::uint32_t priority = 0;
    std::uint32_t state = 0;  // AMDQP_QSTATE_* bits
    std::uint32_t holders = 0;
    std::uint32_t backend = 0;
    std::uint64_t suspend_count = 0;
    std::uint64_t suspended_ns = 0;
    std::uint64_t busy_ns = 0;
    std::uint64_t submitted = 0;
    std::uint64_t completed = 0;
    std::uint64_t created_ns = 0;
    // ABI 1.2: the priority the owner asked for (priority is the effective
    // one, clamped to ceiling) and the ceiling of its identity. Older
    // kernels leave both 0.
    std::uint32_t requested = 0;
    std::uint32_t ceiling = 0;

    bool suspended() const noexcept { return state & AMDQP_QSTATE_SUSPENDED; }
    bool held() const noexcept { return state & AMDQP_QSTATE_HELD; }
};

// Names one queue: by (pid, gpu, queue id) or by (pid, ring base VA).
struct QueueRef {
    std::uint32_t pid = 0;
    std::uint32_t gpu_id = 0;
    std::uint32_t queue_id = 0;
    std::uint64_t ring_va = 0;
    bool by_ring = false;

    static QueueRef by_id(std::uint32_t pid, std::uint32_t gpu_id, std::uint32_t queue_id) {
        return {pid, gpu_id, queue_id, 0, false};
    }
    static QueueRef by_ring_va(std::uint32_t pid, std::uint64_t ring_va) {
        return {pid, 0, 0, ring_va, true};
    }
    static QueueRef of(const QueueInfo& q) { return by_id(q.pid, q.gpu_id, q.queue_id); }
};

// "pid 42 gpu 1 queue 3" / "pid 42 ring 0x7f..."
AMDQP_API std::string to_string(const QueueRef& ref);

// One queue's outcome in a batch.
struct RefResult {
    QueueRef ref;
    int error = 0;            // 0 or the kernel's negative errno
    std::uint32_t state = 0;  // AMDQP_QSTATE_* after the call

    bool ok() const noexcept { return error == 0; }
};

// errc for an entry's negative errno (the entry must have failed).
AMDQP_API errc entry_errc(int error) noexcept;
// A message for a failed entry that says what to do.
AMDQP_API std::string entry_message(const RefResult& result, bool suspending);

struct BatchResult {
    std::vector<RefResult> entries;  // in the order of the request
    std::uint32_t done = 0;          // entries that succeeded
    std::uint64_t latency_ns = 0;    // kernel time in scheduler updates
};

struct GpuSetResult {
    std::uint32_t affected = 0;  // queues suspended / holds dropped
    std::uint32_t skipped = 0;   // eligible queues left running / resumes refused
    std::uint64_t latency_ns = 0;
};

// One GPU's CU layout for a confinement (AMDQP_IOC_CONFINE, ABI 1.3).
struct AMDQP_API CuGeometry {
    std::uint32_t gpu_id = 0;
    std::uint32_t num_xcc = 0;
    std::uint32_t cu_per_xcc = 0;  // 0: this GPU cannot be confined
    std::uint32_t mask_words = 0;  // words of a mask: num_xcc * ceil(cu_per_xcc / 32)
    std::int32_t error = 0;        // 0, -ENODEV (no such GPU) or -EOPNOTSUPP

    bool confinable() const noexcept { return error == 0 && cu_per_xcc != 0; }
    // The mask of CUs [first, first + count) of every XCC (clipped to the
    // XCC's CUs), in the kernel's layout: XCC 0's words first.
    std::vector<std::uint32_t> cu_range(std::uint32_t first, std::uint32_t count) const;
};

// What a confinement applies on one GPU: its geometry (from
// Device::cu_geometry()) and a mask of geometry.mask_words words.
struct CuTarget {
    CuGeometry geometry;
    std::vector<std::uint32_t> mask;
};

struct Event {
    std::uint32_t type = 0;  // AMDQP_EVENT_*
    std::uint64_t timestamp_ns = 0;
    std::uint32_t pid = 0;
    std::uint32_t gpu_id = 0;
    std::uint32_t queue_id = 0;
    std::int32_t error = 0;
    std::uint64_t data = 0;
};

// One entry of the administrator's ceiling table (AMDQP_IOC_CEILINGS):
// owners matching @kind/@id may reach at most @level.
struct Ceiling {
    std::uint32_t kind = 0;  // AMDQP_CEIL_UID, _GID or _CGROUP
    std::uint64_t id = 0;    // uid, gid, or cgroup v2 id (its inode number)
    int level = 0;           // 0..15
    int error = 0;           // set/clear: 0 or the kernel's negative errno

    bool ok() const noexcept { return error == 0; }
};

struct CeilingResult {
    std::vector<Ceiling> entries;  // the request, with each entry's error
    std::uint32_t done = 0;        // entries that succeeded
    std::uint32_t reclamped = 0;   // queues whose effective priority changed
};

class EventReader;

// An open /dev/amdqp. Suspensions belong to it: destroying it resumes them.
class AMDQP_API Device {
  public:
    // Opens @path and checks the ABI major (GET_VERSION). @sys: nullptr for
    // the real kernel. Throws Error: no_module, permission, abi_mismatch...
    static Device open(const std::string& path = default_device_path(),
                       std::shared_ptr<Sys> sys = nullptr);

    Device(Device&& other) noexcept;
    Device& operator=(Device&& other) noexcept;
    Device(const Device&) = delete;
    Device& operator=(const Device&) = delete;
    ~Device();

    int fd() const noexcept { return fd_; }
    const std::string& path() const noexcept { return path_; }
    const std::shared_ptr<Sys>& sys() const noexcept { return sys_; }

    Version version();
    std::vector<DeviceInfo> devices();
    // @gpu_id / @pid: filters, 0 for all.
    std::vector<QueueInfo> queues(std::uint32_t gpu_id = 0, std::uint32_t pid = 0);
    std::optional<QueueInfo> find_queue(std::uint32_t pid, std::uint64_t ring_va);
    std::optional<QueueInfo> find_queue(std::uint32_t pid, std::uint32_t gpu_id,
                                        std::uint32_t queue_id);

    // Returns the queue's AMDQP_QSTATE_* after the change.
    std::uint32_t set_priority(const QueueRef& ref, int priority);

    // More than max_batch refs are sent in several calls.
    BatchResult suspend(std::span<const QueueRef> refs, std::uint32_t grace_us = 0);
    BatchResult resume(std::span<const QueueRef> refs);

    // @gpu_ids empty: every GPU. @priority: 0..16. 16 suspends every
    // priority: kernels since ABI 1.2 refuse it, so the library then
    // suspends below 15 and the priority-15 queues of others by reference.
    GpuSetResult suspend_below(std::span<const std::uint32_t> gpu_ids, int priority,
                               std::uint32_t grace_us = 0);
    GpuSetResult resume_all(std::span<const std::uint32_t> gpu_ids = {});

    // CU-mask confinement (ABI 1.3): the queues below @priority (0..15) on
    // each target's GPU, except the caller's own, run on the target's mask
    // (ANDed with their owner's) for as long as this Device lives or until
    // release_confinement(). A second call moves them to the new masks.
    // cu_geometry(): one entry per id (its error says -ENODEV/-EOPNOTSUPP).
    std::vector<CuGeometry> cu_geometry(std::span<const std::uint32_t> gpu_ids);
    GpuSetResult confine_below(std::span<const CuTarget> targets, int priority,
                               std::uint32_t grace_us = 0);
    // @gpu_ids empty: every GPU.
    GpuSetResult release_confinement(std::span<const std::uint32_t> gpu_ids = {});

    // The ceiling table (ABI 1.2; CAP_SYS_ADMIN). set/clear: per-entry
    // results, more than max_batch entries go in several calls.
    CeilingResult set_ceilings(std::span<const Ceiling> entries);
    CeilingResult clear_ceilings(std::span<const Ceiling> entries);
    std::vector<Ceiling> ceilings();
    // Removes every entry; returns the queues re-clamped.
    std::uint32_t flush_ceilings();

    // Subscribes this fd to events (records are read from fd()).
    void set_event_mask(std::uint64_t mask);
    // A second, non-blocking fd on the same device subscribed to @mask.
    EventReader events(std::uint64_t mask = AMDQP_EVENT_MASK_ALL);

  private:
    Device(std::shared_ptr<Sys> sys, std::string path, int fd);
    static Device open_flags(const std::string& path, std::shared_ptr<Sys> sys, int flags);
    void close_fd() noexcept;
    [[noreturn]] void fail(const char* what, int err) const;
    GpuSetResult gpu_set(unsigned long request, std::span<const std::uint32_t> gpu_ids,
                         int priority, std::uint32_t grace_us);
    BatchResult batch(unsigned long request, std::span<const QueueRef> refs,
                      std::uint32_t grace_us);
    CeilingResult ceiling_update(std::uint32_t op, std::span<const Ceiling> entries);
    GpuSetResult suspend_every(std::span<const std::uint32_t> gpu_ids, std::uint32_t grace_us);

    std::shared_ptr<Sys> sys_;
    std::string path_;
    int fd_ = -1;
    std::uint32_t max_batch_ = AMDQP_MAX_BATCH;
};

// Reads the event stream of its own fd. Poll-friendly: put fd() in your
// poll/epoll set, call read_some() on POLLIN. Records are parsed by their
// size field, so a newer kernel's longer records are fine; unknown types are
// skipped. An overflow arrives as an AMDQP_EVENT_OVERFLOW Event and is also
// counted in lost().
class AMDQP_API EventReader {
  public:
    EventReader(Device device, std::uint64_t mask);
    EventReader(EventReader&&) noexcept;
    EventReader& operator=(EventReader&&) noexcept;
    ~EventReader();

    int fd() const noexcept { return device_.fd(); }
    void set_mask(std::uint64_t mask);

    // The records queued now; never blocks (empty when none).
    std::vector<Event> read_some();
    // Waits up to @timeout_ms (-1: forever) for the fd to be readable; false
    // on timeout or a signal.
    bool wait(int timeout_ms);
    // wait() then read_some().
    std::vector<Event> read(int timeout_ms);

    // Records the kernel reported lost, in total.
    std::uint64_t lost() const noexcept { return lost_; }

  private:
    Device device_;
    std::vector<unsigned char> pending_;  // a record split across reads
    std::uint64_t lost_ = 0;
};

// Hands a Device to the C API (for programs and tests that mix both);
// amdqp_close() frees it.
AMDQP_API amdqp_t* to_c_handle(Device&& device);

// Marks a stretch of high-priority work for the policy (hint API); never
// throws, nests.
class BusyScope {
  public:
    BusyScope() noexcept { amdqp_busy_begin(); }
    ~BusyScope() { amdqp_busy_end(); }
    BusyScope(const BusyScope&) = delete;
    BusyScope& operator=(const BusyScope&) = delete;
};

}  // namespace amdqp

#endif  // AMDQP_AMDQP_HPP
