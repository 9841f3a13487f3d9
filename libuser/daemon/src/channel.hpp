// SPDX-License-Identifier: MIT
//
// amdqpd's socket (amdqp/activity.h, AMDQP_DAEMON_*): where tagged processes
// register their activity pages and announce idle->busy, and where amdqpctl
// asks for the status. Replaces the world-writable wake file and status file
// of earlier versions, and the inotify watch of the page directory (there is
// no directory any more: a process registers the moment it makes its page).
//
// Trust: the socket lives in a directory only its owner (root) can write;
// the socket itself is 0666, since every user's processes register. A peer
// is known by SO_PEERCRED (pid, uid at connect), never by what it sends: a
// page is attributed to the connecting pid, whatever its header says. Each
// connection can do one thing: register one page and then wake, or ask for
// the status. Bounds per user: at most max_conns_per_uid connections, and
// wakes from one user end the controller's sleep at most once per
// wake_gap (more are folded into that one); so a tenant spamming its own
// connections costs the daemon a bounded share of its CPU and cannot delay
// anyone else's wake by more than one gap.
//
// Who polls the socket and the connections: the controller's own loop
// thread (serve_once(), in its wait), so that an announcement reaches the
// control loop without a second thread's wake-up in between (under
// emulation each costs hundreds of microseconds); or, for other users, a
// small thread of the channel's own. Either hands registrations over
// through take() and wakes through @on_wake. Status requests are
// answered from the last text the controller published (set_status()),
// filtered to the caller's own processes unless the caller is root or has
// CAP_SYS_ADMIN.
#ifndef AMDQPD_CHANNEL_HPP
#define AMDQPD_CHANNEL_HPP

#include <poll.h>
#include <sys/types.h>
#include <time.h>

#include <atomic>
#include <chrono>
#include <cstdint>
#include <functional>
#include <map>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

namespace amdqp::daemon {

// A page fd a process handed over, with who it is (SO_PEERCRED).
struct Registration {
    pid_t pid = 0;
    uid_t uid = 0;
    std::uint64_t start_time = 0;  // of pid, read when the fd came
    int fd = -1;                   // owned by whoever holds the Registration
};

struct ChannelLimits {
    unsigned max_conns_per_uid = 64;
    unsigned max_conns = 4096;
    std::chrono::microseconds wake_gap{1000};
};

// Private futex word the controller sleeps on (no file, no sharing), with
// an eventfd that a wake also makes readable, for a wait in poll(2).
class WakeWord {
  public:
    WakeWord() noexcept;
    ~WakeWord();
    WakeWord(const WakeWord&) = delete;
    WakeWord& operator=(const WakeWord&) = delete;

    std::uint32_t value() const noexcept { return word_.load(std::memory_order_acquire); }
    // Sleeps until the word is no longer @seen or @timeout passed.
    bool wait(std::uint32_t seen, std::chrono::nanoseconds timeout) const noexcept;
    // Async-signal-safe.
    void wake() noexcept;
    // A wake by the thread that waits: only the word changes.
    void note() noexcept { word_.fetch_add(1, std::memory_order_release); }
    // Readable after a wake until drain(); -1 if no eventfd could be made.
    int fd() const noexcept { return fd_; }
    void drain() const noexcept;

  private:
    mutable std::atomic<std::uint32_t> word_{0};
    int fd_ = -1;
};

class Channel {
  public:
    // Makes @dir (0755) if missing, refuses one that is not a directory of
    // this user writable by it alone, and listens on @dir/amdqpd.sock
    // (0666; a stale socket is replaced). Throws Error(errc::system).
    // @own_thread: serve it from a thread of its own; else the owner calls
    // serve_once() (and @on_wake runs in the owner's thread).
    Channel(const std::string& dir, std::function<void()> on_wake, ChannelLimits limits = {},
            bool own_thread = true);
    ~Channel();
    Channel(const Channel&) = delete;
    Channel& operator=(const Channel&) = delete;

    const std::string& path() const noexcept { return path_; }

    enum class Served { timeout, served, extra, interrupted, failed };
    // Without a thread of its own: waits up to @timeout (and no longer than
    // a deferred wake) for the socket, its connections or @extra_fd (-1:
    // none), and serves what is ready. Returns extra when @extra_fd became
    // readable (left to the caller to drain), interrupted on a signal,
    // failed when poll(2) failed otherwise.
    Served serve_once(std::chrono::nanoseconds timeout, int extra_fd = -1);
    // Registrations since the last call, oldest first (the caller owns
    // their fds).
    std::vector<Registration> take();
    // The status that requests are answered from (JSON, as status_json()).
    void set_status(std::string json);

    struct Stats {
        std::uint64_t registrations = 0;
        std::uint64_t refused = 0;  // connections or messages refused
        std::uint64_t wakes = 0;    // wakes passed to the controller
        std::uint64_t status_requests = 0;
    };
    Stats stats() const;

  private:
    struct Conn {
        int fd = -1;
        pid_t pid = 0;
        uid_t uid = 0;
        bool registered = false;
    };
    void run();
    Served round(const struct timespec* limit, int extra_fd);
    void accept_one();
    // false: close the connection.
    bool serve(Conn& c);
    void answer_status(const Conn& c);

    std::string dir_, path_;
    std::function<void()> on_wake_;
    ChannelLimits limits_;
    int listen_ = -1;
    int stop_ = -1;  // eventfd: ends run()
    // "Serving only": touched by the thread that serves (run(), or the
    // caller of serve_once()), and by nothing else.
    std::vector<Conn> conns_;                     // serving only
    std::map<uid_t, unsigned> conns_per_uid_;     // serving only
    std::map<uid_t, std::int64_t> last_wake_ns_;  // serving only
    std::int64_t deferred_wake_ns_ = 0;           // serving only: 0 none
    std::vector<struct pollfd> fds_;              // serving only
    // Users whose wake was folded into a deferred one, and when it is due
    // (their slot: their last_wake_ns_ already says it). Serving only.
    std::map<uid_t, std::int64_t> pending_wake_;
    mutable std::mutex mutex_;
    std::vector<Registration> pending_;  // under mutex_
    std::string status_ = "{}";          // under mutex_
    Stats stats_;                        // under mutex_
    std::thread thread_;
};

// The status text @json as a caller of @uid sees it: everything for
// @privileged callers; otherwise only the tagged processes of @uid (and
// groups and counts reduced to them). Pure; unparsable text gives "{}".
std::string filter_status(const std::string& json, uid_t uid, bool privileged);

}  // namespace amdqp::daemon

#endif
