// SPDX-License-Identifier: MIT
//
// Reading and steering other processes' activity pages (amdqp/activity.h):
// what the policy (amdqpd) and amdqpctl use to see which tagged queues are
// busy and to ask a process for a cooperative suspend or resume.
//
// Readers never dereference the shared mapping: a page is read with pread(2)
// into a snapshot and the controller's fields are written with pwrite(2), so
// that a process that truncates its page cannot crash a reader with SIGBUS
// (a root daemon reads files unprivileged users made). A controller maps the
// page only for the futex address it wakes the process and waits for the ack
// on.
//
// A reader must run in the writer's pid namespace and see its page
// directory (AMDQP_RUNTIME_DIR, default /dev/shm).
#ifndef AMDQP_ACTIVITY_HPP
#define AMDQP_ACTIVITY_HPP

#include <sys/types.h>

#include <chrono>
#include <cstdint>
#include <cstring>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include <amdqp/activity.h>
#include <amdqp/export.h>
#include <amdqp/amdqp.hpp>

namespace amdqp::activity {

// Where pages live: $AMDQP_RUNTIME_DIR when set and not empty, else
// AMDQP_ACT_DIR.
AMDQP_API std::string default_dir();
// DIR/amdqp-act.PID
AMDQP_API std::string page_path(pid_t pid, const std::string& dir = default_dir());

// Why a page is not (or no longer) usable.
enum class Problem {
    none,
    not_a_page,     // no such file, not a regular file, or the name is not ours
    unreadable,     // open/read failed (errno in the message)
    foreign_owner,  // the file's owner is not the process's user: spoofed
    too_small,      // shorter than the header says, or than this reader knows
    bad_magic,      // another format
    bad_version,    // another AMDQP_ACT_VERSION
    bad_layout,     // slot size, slot count or num_slots out of bounds
    pid_mismatch,   // header pid differs from the file name's
    dead,           // the process is gone
    pid_reused,     // a different process has the pid now (start time differs)
    replaced,       // the process exec'd: it no longer maps its page
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

    bool known_queue() const noexcept { return queue_id.has_value() && gpu_id != 0; }
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
    std::string group() const {
        return std::string(header.group, strnlen(header.group, sizeof(header.group)));
    }
};

// What a cooperative request came to.
struct CoopResult {
    bool acked = false;         // the process carried out request @seq
    std::uint32_t seq = 0;      // the request number sent
    std::uint32_t state = 0;    // AMDQP_ACT_COOP_* after it
    std::int32_t error = 0;     // 0 or the process's negative errno
    std::uint64_t updates = 0;  // scheduler updates the process issued in all
    std::chrono::nanoseconds waited{0};
};

// A mapped activity page of one process.
class AMDQP_API Page {
  public:
    enum class Access {
        read,     // snapshots only
        control,  // also cooperative requests (needs write access)
    };

    // Opens and validates DIR/amdqp-act.PID (format and owner; not
    // liveness: see liveness()). Throws PageError.
    static Page open(pid_t pid, Access access = Access::read,
                     const std::string& dir = default_dir());
    // The same for a file whose name is amdqp-act.PID.
    static Page open_path(const std::string& path, Access access = Access::read);

    Page(Page&& other) noexcept;
    Page& operator=(Page&& other) noexcept;
    Page(const Page&) = delete;
    Page& operator=(const Page&) = delete;
    ~Page();

    pid_t pid() const noexcept { return pid_; }
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
    // be read.
    std::optional<std::uint64_t> read_index(const Slot& slot) const;

    // Asks the process to take its queues off (@suspend) or put them back:
    // stores coop_suspend and the next coop_seq, wakes the process, and waits
    // up to @timeout for coop_ack_seq to reach the new number. Needs
    // Access::control. A process without AMDQP_ACT_F_COOP never acks.
    // Throws Error(errc::invalid) without control access, PageError when the
    // page became unusable.
    CoopResult request_coop(bool suspend, std::chrono::milliseconds timeout);

  private:
    Page(std::string path, pid_t pid, int fd, std::uint64_t start_time, dev_t dev, ino_t ino,
         Access access);
    void reset() noexcept;
    void read_header(amdqp_act_header& out) const;

    std::string path_;
    pid_t pid_ = 0;
    int fd_ = -1;
    void* map_ = nullptr;  // futex addresses only, never dereferenced; made by
                           // the first request_coop()
    std::uint64_t start_time_ = 0;
    dev_t dev_ = 0;
    ino_t ino_ = 0;
    Access access_ = Access::read;
};

struct ScanOptions {
    std::string dir = default_dir();
    Page::Access access = Page::Access::read;
    // Unlink pages of dead, reused or replaced processes (when this reader
    // may: same user, or root).
    bool drop_stale = false;
};

struct ScanResult {
    std::vector<Page> pages;                               // live and valid
    std::vector<std::pair<std::string, Problem>> skipped;  // path, why
    unsigned dropped = 0;                                  // stale files unlinked
};

// Every page in the directory, validated, with liveness checked.
AMDQP_API ScanResult scan(const ScanOptions& options = {});

}  // namespace amdqp::activity

#endif  // AMDQP_ACTIVITY_HPP
