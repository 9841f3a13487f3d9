// SPDX-License-Identifier: MIT
//
// Reading and steering other processes' activity pages (amdqp/activity.h):
// what the policy (amdqpd) and amdqpctl use to see which tagged queues are
// busy and to ask a process for a cooperative suspend or resume.
//
// A cooperative suspension is leased: the process puts its queues back on
// its own when the lease runs out, unless the controller renews it (every
// third of the lease is a safe pace). A controller that dies, is killed or
// stops therefore leaves nothing suspended for more than one lease after
// its last renewal.
//
// Pages are sealed memfds a process keeps open (amdqp/activity.h); a reader
// finds them at /proc/PID/fd/N and opens them through that link, which the
// kernel allows to the process's user and root only. Before it reads, a
// reader checks the seals (no shrinking: no SIGBUS; no growing) and the
// size; every count it reads is capped at the ABI's maximum, and a
// snapshot reads the slots in use only, so that a hostile page costs a
// reader no more than an honest full one. Readers read with pread(2) into a
// snapshot and write the controller's fields with pwrite(2); a controller
// maps the header only for the futex addresses it wakes the process and
// waits for the ack on.
//
// A reader must run in the writer's pid namespace (the header's pid is
// compared with the /proc one).
#ifndef AMDQP_ACTIVITY_HPP
#define AMDQP_ACTIVITY_HPP

#include <sys/types.h>

#include <cerrno>
#include <chrono>
#include <cstddef>
#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <utility>
#include <vector>

#include <amdqp/activity.h>
#include <amdqp/export.h>
#include <amdqp/amdqp.hpp>

namespace amdqp::activity {

// amdqpd's runtime directory, where its socket is: $AMDQP_RUNTIME_DIR
// (read with secure_getenv: ignored in set-id programs) when set and not
// empty, else AMDQP_DAEMON_DIR.
AMDQP_API std::string runtime_dir();
// DIR/AMDQP_DAEMON_SOCKET
AMDQP_API std::string socket_path(const std::string& dir = runtime_dir());
// Whether @dir may hold a socket this process trusts with its page or its
// status questions: a real directory (no symlink) owned by root or by this
// process's user, writable by its owner only. Empty if so, else why not.
AMDQP_API std::string untrusted_dir_reason(const std::string& dir);
// amdqpd's status (JSON text; the daemon leaves out other users' processes
// unless the caller is root or has CAP_SYS_ADMIN), asked over its socket
// in @dir. Throws Error(errc::permission) when @dir is not trusted,
// Error(errc::system) otherwise: sys_errno() ENOENT when no daemon listens
// there, ETIMEDOUT when it did not answer in @timeout.
AMDQP_API std::string daemon_status(
    const std::string& dir = runtime_dir(),
    std::chrono::milliseconds timeout = std::chrono::milliseconds(2000));

// Why a page is not (or no longer) usable.
enum class Problem {
    none,
    not_a_page,     // no such page, not a regular file, not sealed, or the path is not ours
    unreadable,     // open/read failed (errno in the message)
    foreign_owner,  // (unused since pages are memfds; kept for the ABI of problem_name)
    too_small,      // shorter than the header says, or than this reader knows
    bad_magic,      // another format
    bad_version,    // another AMDQP_ACT_VERSION
    bad_layout,     // slot size, slot count (> AMDQP_ACT_MAX_SLOTS) or num_slots out of bounds
    pid_mismatch,   // header pid differs from the process's
    dead,           // the process is gone
    pid_reused,     // a different process has the pid now (start time differs)
    replaced,       // the process exec'd: it no longer holds its page
};
AMDQP_API const char* problem_name(Problem problem) noexcept;

// Thrown by Page::open when the page cannot be used.
class AMDQP_API PageError : public Error {
  public:
    PageError(Problem problem, const std::string& message, int sys_errno = 0);
    Problem problem() const noexcept { return problem_; }

  private:
    Problem problem_;
};

// One live slot (a tagged HSA queue). A slot index is reused after its queue
// is destroyed: identify a queue by (index, ring_va).
struct Slot {
    std::uint32_t index = 0;
    std::uint32_t gpu_id = 0;  // 0 if unknown
    std::uint32_t priority = 0;
    std::uint32_t mechanism = AMDQP_ACT_MECH_NONE;
    std::uint64_t ring_va = 0;
    // One past the last packet announced at the last doorbell store: the
    // queue is idle once its read index reached it.
    std::uint64_t write_index = 0;
    std::uint64_t doorbells = 0;
    std::uint64_t last_doorbell_ns = 0;  // CLOCK_MONOTONIC, 0 = never
    std::uint64_t read_index_va = 0;     // in the owner; 0 if unknown
    std::optional<std::uint32_t> queue_id;
    // Decaying maximum of its dispatches' work-group counts as of
    // last_doorbell_ns (amdqp/activity.h); written by the tenant: a hint.
    std::uint32_t demand_wgs = 0;

    bool known_queue() const noexcept { return queue_id.has_value() && gpu_id != 0; }
    // demand_wgs as of @now_ns (CLOCK_MONOTONIC): decayed since the last doorbell.
    std::uint32_t demand_at(std::uint64_t now_ns) const noexcept {
        return amdqp_act_demand_at(demand_wgs, last_doorbell_ns, now_ns);
    }
};

// A consistent-enough copy of a page (fields are read at once, each one
// whole; counters of different fields may be a doorbell apart).
struct Snapshot {
    amdqp_act_header header{};
    std::vector<Slot> slots;  // LIVE slots only

    // amdqp_busy_begin() calls outnumber amdqp_busy_end() calls.
    bool hinted_busy() const noexcept { return header.hint_begin != header.hint_end; }
    bool coop_capable() const noexcept { return header.flags & AMDQP_ACT_F_COOP; }
    // AMDQP_GROUP of the process ("" if none).
    AMDQP_API std::string group() const;
};

// The lease of a cooperative suspension when none is given: long enough
// that a loaded machine renews in time, short enough that a killed
// controller's suspension ends soon.
inline constexpr std::chrono::milliseconds default_coop_lease{2000};

// What a cooperative request came to.
struct CoopResult {
    bool acked = false;         // the process carried out request @seq
    std::uint32_t seq = 0;      // the request number sent
    std::uint32_t state = 0;    // AMDQP_ACT_COOP_* after it
    std::int32_t error = 0;     // 0 or the process's negative errno
    std::uint64_t updates = 0;  // scheduler updates the process issued in all
    std::chrono::nanoseconds waited{0};

    // The suspension's lease ran out (before the process even saw the
    // request, or since): its queues are back on.
    bool lease_ran_out() const noexcept {
        return acked && error == -ETIMEDOUT && state != AMDQP_ACT_COOP_SUSPENDED;
    }
};

// What renewing a suspension's lease found.
enum class Lease {
    held,      // the request stands (carried out or still pending); deadline moved
    lapsed,    // it ran out first: the process put its queues back (send a new request)
    replaced,  // a later request (another controller, a resume) took its place
};

struct ScanOptions;
struct ScanResult;
AMDQP_API ScanResult scan(const ScanOptions& options);

// A mapped activity page of one process.
class AMDQP_API Page {
  public:
    enum class Access {
        read,     // snapshots only
        control,  // also cooperative requests (needs write access)
    };

    // Opens and validates the page process @pid holds (format and seals;
    // not liveness: see liveness()). Throws PageError.
    static Page open(pid_t pid, Access access = Access::read);
    // The same for one fd of it: "/proc/PID/fd/N".
    static Page open_path(const std::string& path, Access access = Access::read);
    // The same for a page fd process @pid handed over (amdqpd's socket; the
    // pid comes from the connection, never from the page): takes @fd.
    // @start_time is the process's, read by the caller when it took the fd.
    static Page adopt(pid_t pid, int fd, Access access, std::uint64_t start_time);

    Page(Page&& other) noexcept;
    Page& operator=(Page&& other) noexcept;
    Page(const Page&) = delete;
    Page& operator=(const Page&) = delete;
    ~Page();

    pid_t pid() const noexcept { return pid_; }
    // Identity of the page (one memfd may be open in several processes).
    ino_t inode() const noexcept { return ino_; }
    const std::string& path() const noexcept { return path_; }
    std::uint64_t start_time() const noexcept { return start_time_; }

    // Problem::none while the process that wrote the page still runs it;
    // dead, pid_reused or replaced otherwise.
    Problem liveness() const;

    // Reads the page now. Throws PageError when it became unusable
    // (truncated, rewritten with another magic or version).
    Snapshot snapshot() const;

    // The 64-bit read index at @slot.read_index_va in the owner
    // (process_vm_readv(2): needs ptrace read access); nullopt if it cannot
    // be read (errno says why; 0 when the slot has no address).
    std::optional<std::uint64_t> read_index(const Slot& slot) const;
    // read_index() of each of @slots, in one process_vm_readv where it can.
    std::vector<std::optional<std::uint64_t>> read_indexes(std::span<const Slot> slots) const;

    // Asks the process to take its queues off (@suspend) or put them back,
    // and returns the request's number (the new coop_seq) without waiting:
    // stores coop_lease_ns, coop_suspend and coop_seq and wakes the process.
    // A suspension lasts @lease from now unless renew_lease() moves its end;
    // @lease 0: until a resume request (no crash safety). Needs
    // Access::control; a process without AMDQP_ACT_F_COOP never acts on it.
    // Throws Error(errc::invalid) without control access, PageError when the
    // page became unusable (also for the calls below).
    std::uint32_t send_coop(bool suspend, std::chrono::milliseconds lease = default_coop_lease);

    // Waits up to @timeout for the process to carry out request @seq
    // (coop_ack_seq reaches it). Renews nothing: while waiting longer than
    // a third of a lease, wait in slices and renew in between.
    CoopResult wait_coop(std::uint32_t seq, std::chrono::milliseconds timeout);

    // send_coop() and wait_coop() in one, renewing the lease of a suspension
    // while it waits (a process slower to ack than the lease still finds
    // its request current).
    CoopResult request_coop(bool suspend, std::chrono::milliseconds timeout,
                            std::chrono::milliseconds lease = default_coop_lease);

    // The controller's wake/hold request (amdqp/activity.h, ctl_flags):
    // AMDQP_ACT_CTL_* @flags, @hold_us the longest hold of a doorbell, and
    // the promise to ack until now + @alive (renew it with this call). 0
    // flags turn the channel off. Needs Access::control.
    void set_control(std::uint32_t flags, std::uint32_t hold_us,
                     std::chrono::milliseconds alive = std::chrono::milliseconds(1000));
    // The controller acted on the process's announcement @seq (busy_seq):
    // releases a doorbell held for it. Needs Access::control.
    void ack_busy(std::uint32_t seq);

    // Moves the end of suspension request @seq's lease to now + @lease
    // (> 0) and says whether it still stands. Writes nothing unless held.
    // A renewal racing the lease's end may report held just after the
    // process gave up: the next renewal reports lapsed.
    Lease renew_lease(std::uint32_t seq, std::chrono::milliseconds lease);

  private:
    Page(std::string path, pid_t pid, int fd, std::uint64_t start_time, dev_t dev, ino_t ino,
         Access access);
    static Page from_fd(pid_t pid, int fd, Access access, const std::string& path, int owner_fd,
                        std::optional<std::uint64_t> start_time);
    friend ScanResult scan(const ScanOptions& options);
    void reset() noexcept;
    void read_header(amdqp_act_header& out) const;
    void require_control() const;
    // This reader's shared mapping of the whole page, made at first need:
    // read-only, or read-write for Access::control.
    unsigned char* view() const;
    // The address of the header field at @offset in view(), for futex(2).
    void* futex_word(std::size_t offset) { return view() + offset; }
    template <typename T>
    void store(std::size_t offset, T value);
    void write_lease(std::chrono::milliseconds lease);
    // wait_coop(), renewing the lease every @lease / 3 when @lease > 0.
    CoopResult await_ack(std::uint32_t seq, std::chrono::milliseconds timeout,
                         std::chrono::milliseconds lease);

    std::string path_;
    pid_t pid_ = 0;
    pid_t self_pid_ = 0;  // the pid in the page: pid_, or pid_ in its own pid namespace
    int fd_ = -1;
    mutable void* map_ = nullptr;  // view(): size_ bytes, or nullptr
    std::uint64_t start_time_ = 0;
    dev_t dev_ = 0;
    ino_t ino_ = 0;
    Access access_ = Access::read;
    int owner_fd_ = -1;     // N of /proc/PID/fd/N where it was found, -1 if handed over
    std::size_t size_ = 0;  // sealed size
};

struct ScanOptions {
    Page::Access access = Page::Access::read;
};

struct ScanResult {
    std::vector<Page> pages;                               // live and valid
    std::vector<std::pair<std::string, Problem>> skipped;  // path, why
};

// Every page this reader may open (its user's processes; every process for
// root), found through /proc/*/fd, validated, with liveness checked; each
// page once. Nothing is ever left to clean up: a page dies with its process.
AMDQP_API ScanResult scan(const ScanOptions& options);
inline ScanResult scan() {
    return scan(ScanOptions{});
}

}  // namespace amdqp::activity

#endif  // AMDQP_ACTIVITY_HPP
