// SPDX-License-Identifier: MIT
#include <dirent.h>
#include <fcntl.h>
#include <linux/futex.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/uio.h>
#include <time.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <charconv>
#include <climits>
#include <cstddef>
#include <cstring>
#include <set>
#include <string_view>
#include <utility>
#include <vector>

#include <amdqp/activity.hpp>

#include "activity_proc.hpp"
#include "errors.h"

namespace amdqp::activity {

namespace {

constexpr std::size_t header_bytes = sizeof(amdqp_act_header);
// The largest page this ABI version has: a larger one is refused, and no
// count read from a page goes past what it holds (a page cannot make a
// reader allocate or loop more than this).
constexpr std::uint32_t max_page_bytes = AMDQP_ACT_PAGE_SIZE;

[[noreturn]] void fail(Problem problem, const std::string& path, const std::string& what,
                       int err = 0) {
    std::string message = "amdqp: activity page " + path + ": " + what;
    if (err)
        message += ": " + detail::errno_text(err);
    throw PageError(problem, message, err);
}

// "/proc/PID/fd/N" -> (PID, N); nullopt for any other path.
std::optional<std::pair<pid_t, int>> parse_fd_path(std::string_view path) {
    constexpr std::string_view prefix = "/proc/";
    if (path.substr(0, prefix.size()) != prefix)
        return std::nullopt;
    path.remove_prefix(prefix.size());
    std::size_t slash = path.find("/fd/");
    if (slash == std::string_view::npos)
        return std::nullopt;
    pid_t pid = 0;
    int n = 0;
    std::string_view p = path.substr(0, slash), f = path.substr(slash + 4);
    auto [e1, c1] = std::from_chars(p.data(), p.data() + p.size(), pid);
    auto [e2, c2] = std::from_chars(f.data(), f.data() + f.size(), n);
    if (c1 != std::errc() || e1 != p.data() + p.size() || pid <= 0 || c2 != std::errc() ||
        e2 != f.data() + f.size() || n < 0 || p[0] == '0' || f.empty())
        return std::nullopt;
    return std::pair{pid, n};
}

// Reads exactly @len bytes at @off; false on a short read.
bool pread_all(int fd, void* buf, std::size_t len, off_t off) {
    auto* p = static_cast<unsigned char*>(buf);
    while (len) {
        ssize_t n = ::pread(fd, p, len, off);
        if (n < 0 && errno == EINTR)
            continue;
        if (n <= 0)
            return false;
        p += n;
        len -= static_cast<std::size_t>(n);
        off += n;
    }
    return true;
}

std::uint64_t to_ns(std::chrono::milliseconds d) {
    return static_cast<std::uint64_t>(std::chrono::nanoseconds(d).count());
}

// The checks every reader makes of a header (amdqp/activity.h, ABI rules).
// @pid: the pid the page must carry (as its writer saw itself).
void check_header(const amdqp_act_header& h, const std::string& path, pid_t pid, off_t file_size) {
    if (h.magic != AMDQP_ACT_MAGIC)
        fail(Problem::bad_magic, path, "not an amdqp activity page (magic)");
    if (h.version != AMDQP_ACT_VERSION)
        fail(Problem::bad_version, path,
             "layout version " + std::to_string(h.version) + ", this reader knows " +
                 std::to_string(AMDQP_ACT_VERSION) + " (update amdqp)");
    if (h.size < sizeof(amdqp_act_page) || h.size > max_page_bytes ||
        file_size < static_cast<off_t>(h.size))
        fail(Problem::too_small, path,
             "size " + std::to_string(h.size) + " in a file of " + std::to_string(file_size) +
                 " bytes");
    if (h.slot_size < sizeof(amdqp_act_slot) || h.max_slots == 0 ||
        h.max_slots > AMDQP_ACT_MAX_SLOTS ||
        header_bytes + static_cast<std::uint64_t>(h.max_slots) * h.slot_size > h.size ||
        h.num_slots > h.max_slots)
        fail(Problem::bad_layout, path, "slot layout out of bounds");
    if (h.pid != static_cast<std::uint32_t>(pid))
        fail(Problem::pid_mismatch, path, "written by pid " + std::to_string(h.pid));
}

long futex(void* addr, int op, std::uint32_t value, const struct timespec* timeout) {
    return syscall(SYS_futex, addr, op, value, timeout, nullptr, 0);
}

Slot slot_of(const amdqp_act_slot& s, std::uint32_t index) {
    Slot out;
    out.index = index;
    out.gpu_id = s.gpu_id;
    out.priority = s.priority;
    out.mechanism = s.mechanism;
    out.ring_va = s.ring_va;
    out.write_index = s.write_index;
    out.doorbells = s.doorbells;
    out.last_doorbell_ns = s.last_doorbell_ns;
    out.read_index_va = s.read_index_va;
    if (s.queue_id != UINT32_MAX)
        out.queue_id = s.queue_id;
    out.demand_wgs = s.demand_wgs;
    return out;
}

}  // namespace

std::string Snapshot::group() const {
    return std::string(header.group, strnlen(header.group, sizeof(header.group)));
}

const char* problem_name(Problem problem) noexcept {
    switch (problem) {
        case Problem::none:
            return "none";
        case Problem::not_a_page:
            return "not_a_page";
        case Problem::unreadable:
            return "unreadable";
        case Problem::foreign_owner:
            return "foreign_owner";
        case Problem::too_small:
            return "too_small";
        case Problem::bad_magic:
            return "bad_magic";
        case Problem::bad_version:
            return "bad_version";
        case Problem::bad_layout:
            return "bad_layout";
        case Problem::pid_mismatch:
            return "pid_mismatch";
        case Problem::dead:
            return "dead";
        case Problem::pid_reused:
            return "pid_reused";
        case Problem::replaced:
            return "replaced";
    }
    return "unknown";
}

PageError::PageError(Problem problem, const std::string& message, int sys_errno)
    : Error(problem == Problem::unreadable && (sys_errno == EACCES || sys_errno == EPERM)
                ? errc::permission
                : errc::system,
            message, sys_errno),
      problem_(problem) {}

Page Page::open(pid_t pid, Access access) {
    std::vector<int> fds = detail::page_fds(pid);
    const std::string where = "of pid " + std::to_string(pid);
    if (fds.empty()) {
        int err = errno;
        if (::access(("/proc/" + std::to_string(pid)).c_str(), F_OK) == 0 && err == EACCES)
            fail(Problem::unreadable, where, "cannot read its open files", err);
        fail(Problem::not_a_page, where, "the process has none (not tagged, or gone)");
    }
    std::optional<PageError> first;
    for (int n : fds) {
        try {
            return open_path("/proc/" + std::to_string(pid) + "/fd/" + std::to_string(n), access);
        } catch (const PageError& e) {
            if (!first)
                first = e;
        }
    }
    throw *first;
}

Page Page::open_path(const std::string& path, Access access) {
    std::optional<std::pair<pid_t, int>> where = parse_fd_path(path);
    if (!where)
        fail(Problem::not_a_page, path, "not a /proc/PID/fd/N path");
    // A magic link to the process's own file: the kernel checks ptrace read
    // access (same user or root) and it cannot point into any directory, so
    // following it is safe; O_NONBLOCK keeps a FIFO from hanging the reader.
    int flags = (access == Access::control ? O_RDWR : O_RDONLY) | O_CLOEXEC | O_NONBLOCK;
    int fd = ::open(path.c_str(), flags);
    if (fd < 0) {
        int err = errno;
        fail(err == ENOENT ? Problem::not_a_page : Problem::unreadable, path, "cannot open", err);
    }
    return from_fd(where->first, fd, access, path, where->second, std::nullopt);
}

Page Page::adopt(pid_t pid, int fd, Access access, std::uint64_t start_time) {
    Page page =
        from_fd(pid, fd, access, "registered by pid " + std::to_string(pid), -1, start_time);
    // Where the process holds it: liveness() then costs one stat, not a
    // read of its maps.
    for (int n : detail::page_fds(pid)) {
        struct stat st;
        const std::string link = "/proc/" + std::to_string(pid) + "/fd/" + std::to_string(n);
        if (::stat(link.c_str(), &st) == 0 && st.st_ino == page.ino_ && st.st_dev == page.dev_) {
            page.owner_fd_ = n;
            break;
        }
    }
    return page;
}

Page Page::from_fd(pid_t pid, int fd, Access access, const std::string& path, int owner_fd,
                   std::optional<std::uint64_t> start_time) {
    try {
        std::size_t size = 0;
        const char* why = "";
        if (int err = detail::check_page_fd(fd, max_page_bytes, &size, &why))
            fail(err == EMSGSIZE ? Problem::too_small : Problem::not_a_page, path, why);
        struct stat st;
        if (fstat(fd, &st) < 0)
            fail(Problem::unreadable, path, "fstat", errno);
        amdqp_act_header h;
        if (!pread_all(fd, &h, sizeof(h), 0))
            fail(Problem::too_small, path, "shorter than the header");
        // A process in a pid namespace of its own (a container) writes the
        // pid it sees; the kernel's NSpid line says whether that is @pid's.
        const pid_t self = h.pid != static_cast<std::uint32_t>(pid) && h.pid != 0 &&
                                   detail::proc_has_ns_pid(pid, h.pid)
                               ? static_cast<pid_t>(h.pid)
                               : pid;
        check_header(h, path, self, static_cast<off_t>(size));
        Page page(path, pid, fd, start_time.value_or(h.start_time), st.st_dev, st.st_ino, access);
        page.self_pid_ = self;
        page.owner_fd_ = owner_fd;
        page.size_ = size;
        return page;
    } catch (...) {
        ::close(fd);
        throw;
    }
}

Page::Page(std::string path, pid_t pid, int fd, std::uint64_t start_time, dev_t dev, ino_t ino,
           Access access)
    : path_(std::move(path)),
      pid_(pid),
      self_pid_(pid),
      fd_(fd),
      start_time_(start_time),
      dev_(dev),
      ino_(ino),
      access_(access) {}

Page::Page(Page&& other) noexcept
    : path_(std::move(other.path_)),
      pid_(other.pid_),
      self_pid_(other.self_pid_),
      fd_(std::exchange(other.fd_, -1)),
      map_(std::exchange(other.map_, nullptr)),
      start_time_(other.start_time_),
      dev_(other.dev_),
      ino_(other.ino_),
      access_(other.access_),
      owner_fd_(other.owner_fd_),
      size_(other.size_) {}

Page& Page::operator=(Page&& other) noexcept {
    if (this != &other) {
        reset();
        path_ = std::move(other.path_);
        pid_ = other.pid_;
        self_pid_ = other.self_pid_;
        fd_ = std::exchange(other.fd_, -1);
        map_ = std::exchange(other.map_, nullptr);
        start_time_ = other.start_time_;
        dev_ = other.dev_;
        ino_ = other.ino_;
        access_ = other.access_;
        owner_fd_ = other.owner_fd_;
        size_ = other.size_;
    }
    return *this;
}

Page::~Page() {
    reset();
}

void Page::reset() noexcept {
    if (map_)
        munmap(map_, size_);
    if (fd_ >= 0)
        ::close(fd_);
    map_ = nullptr;
    fd_ = -1;
}

Problem Page::liveness() const {
    std::optional<std::uint64_t> start = detail::proc_start_time(pid_);
    if (!start)
        return Problem::dead;
    // 0: the writer could not read its own start time; nothing to compare.
    if (start_time_ != 0 && *start != start_time_)
        return Problem::pid_reused;
    // The process still holds the page (it closes it at exec): one stat of
    // the fd it was found at, or its maps when it was handed over.
    if (owner_fd_ >= 0) {
        struct stat st;
        const std::string link =
            "/proc/" + std::to_string(pid_) + "/fd/" + std::to_string(owner_fd_);
        if (::stat(link.c_str(), &st) == 0)
            return st.st_ino == ino_ && st.st_dev == dev_ ? Problem::none : Problem::replaced;
        if (errno == ENOENT)
            return Problem::replaced;
        return Problem::none;  // no access: counts as alive
    }
    // Unknown (no ptrace read access to the maps) counts as alive.
    if (detail::proc_maps_file(pid_, dev_, ino_) == false)
        return Problem::replaced;
    return Problem::none;
}

unsigned char* Page::view() const {
    if (!map_) {
        // Reads and writes are then loads and stores, not syscalls: the
        // control loop samples every page each step, and under emulation
        // (the test VM) each pread cost tens of microseconds. The page is
        // sealed against shrinking and growing (checked at open), so no
        // access through the mapping can fault with SIGBUS whatever its
        // owner does. Made at first need: a mapping held by every reader
        // would make its owner look alive to liveness checks (its maps)
        // that run in the same process.
        const int prot = access_ == Access::control ? PROT_READ | PROT_WRITE : PROT_READ;
        void* map = mmap(nullptr, size_, prot, MAP_SHARED, fd_, 0);
        if (map == MAP_FAILED)
            fail(Problem::unreadable, path_, "mmap", errno);
        map_ = map;
    }
    return static_cast<unsigned char*>(map_);
}

template <typename T>
void Page::store(std::size_t offset, T value) {
    // Whole-word stores the owner reads with atomic loads (activity.h).
    __atomic_store_n(reinterpret_cast<T*>(view() + offset), value, __ATOMIC_RELEASE);
}

void Page::read_header(amdqp_act_header& out) const {
    // A copy, checked as a copy: the owner may change the page meanwhile.
    std::memcpy(&out, view(), sizeof(out));
    check_header(out, path_, self_pid_, static_cast<off_t>(size_));
}

Snapshot Page::snapshot() const {
    Snapshot snap;
    read_header(snap.header);
    const amdqp_act_header& h = snap.header;
    // The slots in use only (num_slots and slot_size from the checked
    // copy, which bounds them by the page's size): the cost follows the
    // process's queues, not the page's size.
    const unsigned char* slots = view() + header_bytes;
    for (std::uint32_t i = 0; i < h.num_slots; i++) {
        amdqp_act_slot s;
        std::memcpy(&s, slots + static_cast<std::size_t>(i) * h.slot_size, sizeof(s));
        if (s.state == AMDQP_ACT_SLOT_LIVE)
            snap.slots.push_back(slot_of(s, i));
    }
    return snap;
}

std::optional<std::uint64_t> Page::read_index(const Slot& slot) const {
    if (!slot.read_index_va) {
        errno = 0;
        return std::nullopt;
    }
    std::uint64_t value = 0;
    struct iovec local = {&value, sizeof(value)};
    struct iovec remote = {reinterpret_cast<void*>(slot.read_index_va), sizeof(value)};
    const ssize_t n = process_vm_readv(pid_, &local, 1, &remote, 1, 0);
    if (n != sizeof(value)) {
        if (n >= 0)
            errno = EFAULT;  // a partial read: the end is not mapped
        return std::nullopt;
    }
    return value;
}

std::vector<std::optional<std::uint64_t>> Page::read_indexes(std::span<const Slot> slots) const {
    std::vector<std::optional<std::uint64_t>> out(slots.size());
    std::vector<std::uint64_t> values(slots.size());
    std::vector<struct iovec> local, remote;
    std::vector<std::size_t> which;
    for (std::size_t i = 0; i < slots.size(); i++) {
        if (!slots[i].read_index_va)
            continue;
        local.push_back({&values[i], sizeof(std::uint64_t)});
        remote.push_back({reinterpret_cast<void*>(slots[i].read_index_va), sizeof(std::uint64_t)});
        which.push_back(i);
    }
    // One syscall for the whole process (each costs tens of microseconds
    // under emulation). The kernel stops at the first address it cannot
    // read: those before it are good, the rest are tried one by one.
    std::size_t done = 0;
    while (done < which.size()) {
        const std::size_t n = std::min<std::size_t>(which.size() - done, IOV_MAX);
        const ssize_t got =
            process_vm_readv(pid_, local.data() + done, n, remote.data() + done, n, 0);
        const std::size_t whole =
            got > 0 ? static_cast<std::size_t>(got) / sizeof(std::uint64_t) : 0;
        for (std::size_t k = 0; k < whole; k++)
            out[which[done + k]] = values[which[done + k]];
        if (whole == n) {
            done += n;
            continue;
        }
        for (std::size_t k = done + whole; k < which.size(); k++)
            out[which[k]] = read_index(slots[which[k]]);
        break;
    }
    return out;
}

void Page::require_control() const {
    if (access_ != Access::control)
        throw Error(errc::invalid, "amdqp: activity page " + path_ +
                                       " was opened read-only: open it with "
                                       "Page::Access::control to send cooperative requests");
}

void Page::write_lease(std::chrono::milliseconds lease) {
    const std::uint64_t deadline = lease.count() > 0 ? detail::monotonic_ns() + to_ns(lease) : 0;
    store(offsetof(amdqp_act_header, coop_lease_ns), deadline);
}

std::uint32_t Page::send_coop(bool suspend, std::chrono::milliseconds lease) {
    require_control();
    amdqp_act_header h;
    read_header(h);
    const std::uint32_t seq = h.coop_seq + 1;
    // Lease, then request, then number: the process reads the number first
    // and then what it stands for.
    write_lease(suspend ? lease : std::chrono::milliseconds(0));
    store<std::uint32_t>(offsetof(amdqp_act_header, coop_suspend), suspend ? 1 : 0);
    store(offsetof(amdqp_act_header, coop_seq), seq);
    futex(futex_word(offsetof(amdqp_act_header, coop_seq)), FUTEX_WAKE, INT_MAX, nullptr);
    return seq;
}

CoopResult Page::wait_coop(std::uint32_t seq, std::chrono::milliseconds timeout) {
    return await_ack(seq, timeout, std::chrono::milliseconds(0));
}

CoopResult Page::request_coop(bool suspend, std::chrono::milliseconds timeout,
                              std::chrono::milliseconds lease) {
    const std::uint32_t seq = send_coop(suspend, lease);
    return await_ack(seq, timeout, suspend ? lease : std::chrono::milliseconds(0));
}

void Page::set_control(std::uint32_t flags, std::uint32_t hold_us,
                       std::chrono::milliseconds alive) {
    require_control();
    const std::uint64_t until = flags ? detail::monotonic_ns() + to_ns(alive) : 0;
    // The deadlines first: a process that sees HOLD finds them set.
    store(offsetof(amdqp_act_header, ctl_alive_ns), until);
    store(offsetof(amdqp_act_header, ctl_hold_us), hold_us);
    store(offsetof(amdqp_act_header, ctl_flags), flags);
}

void Page::ack_busy(std::uint32_t seq) {
    require_control();
    store(offsetof(amdqp_act_header, busy_ack), seq);
    futex(futex_word(offsetof(amdqp_act_header, busy_ack)), FUTEX_WAKE, INT_MAX, nullptr);
}

Lease Page::renew_lease(std::uint32_t seq, std::chrono::milliseconds lease) {
    require_control();
    if (lease.count() <= 0)
        throw Error(errc::invalid, "amdqp: a lease is renewed by a positive time, not " +
                                       std::to_string(lease.count()) + " ms");
    amdqp_act_header h;
    read_header(h);
    if (h.coop_seq != seq)
        return Lease::replaced;
    if (h.coop_ack_seq == seq && h.coop_error == -ETIMEDOUT &&
        h.coop_state != AMDQP_ACT_COOP_SUSPENDED)
        return Lease::lapsed;
    write_lease(lease);
    return Lease::held;
}

CoopResult Page::await_ack(std::uint32_t seq, std::chrono::milliseconds timeout,
                           std::chrono::milliseconds lease) {
    require_control();
    using clock = std::chrono::steady_clock;
    const auto start = clock::now();
    const auto deadline = start + timeout;
    const auto renew_every = std::max(lease / 3, std::chrono::milliseconds(1));
    auto next_renewal = lease.count() > 0 ? start + renew_every : clock::time_point::max();

    CoopResult result;
    result.seq = seq;
    void* ack_addr = futex_word(offsetof(amdqp_act_header, coop_ack_seq));
    for (;;) {
        amdqp_act_header h;
        read_header(h);
        result.state = h.coop_state;
        result.error = h.coop_error;
        result.updates = h.coop_updates;
        if (h.coop_ack_seq == seq) {
            result.acked = true;
            break;
        }
        auto now = clock::now();
        if (now >= deadline)
            break;
        if (now >= next_renewal) {
            // The process may be slow to see the request; it must still
            // find the lease current when it does.
            next_renewal = renew_lease(seq, lease) == Lease::held ? now + renew_every
                                                                  : clock::time_point::max();
        }
        auto left = std::chrono::duration_cast<std::chrono::nanoseconds>(
            std::min(deadline, next_renewal) - now);
        struct timespec ts = {static_cast<time_t>(left.count() / 1000000000),
                              static_cast<long>(left.count() % 1000000000)};
        // The kernel compares the value itself, so an ack that lands between
        // the read above and this wait ends it at once.
        if (futex(ack_addr, FUTEX_WAIT, h.coop_ack_seq, &ts) < 0 && errno == EFAULT)
            fail(Problem::too_small, path_, "truncated while waiting for the ack");
    }
    result.waited = std::chrono::duration_cast<std::chrono::nanoseconds>(clock::now() - start);
    return result;
}

ScanResult scan(const ScanOptions& options) {
    ScanResult result;
    DIR* proc = opendir("/proc");
    if (!proc)
        return result;
    std::vector<pid_t> pids;
    while (struct dirent* e = readdir(proc)) {
        pid_t pid = 0;
        std::string_view name = e->d_name;
        auto [end, ec] = std::from_chars(name.data(), name.data() + name.size(), pid);
        if (ec == std::errc() && end == name.data() + name.size() && pid > 0)
            pids.push_back(pid);
    }
    closedir(proc);

    std::set<std::pair<dev_t, ino_t>> seen;
    for (pid_t pid : pids) {
        for (int n : detail::page_fds(pid)) {
            const std::string path = "/proc/" + std::to_string(pid) + "/fd/" + std::to_string(n);
            try {
                Page page = Page::open_path(path, options.access);
                if (!seen.insert({page.dev_, page.ino_}).second)
                    continue;  // the same page found at a second fd
                Problem alive = page.liveness();
                if (alive != Problem::none) {
                    result.skipped.emplace_back(path, alive);
                    continue;
                }
                result.pages.push_back(std::move(page));
            } catch (const PageError& e) {
                // A page of another process (one it inherited, or was handed)
                // is no page of this pid: not worth a mention.
                if (e.problem() != Problem::pid_mismatch && e.problem() != Problem::not_a_page)
                    result.skipped.emplace_back(path, e.problem());
            }
        }
    }
    return result;
}

}  // namespace amdqp::activity
