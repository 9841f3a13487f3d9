// SPDX-License-Identifier: MIT
#include "channel.hpp"

#include <fcntl.h>
#include <linux/futex.h>
#include <poll.h>
#include <sys/eventfd.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/un.h>
#include <time.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <climits>
#include <cstring>
#include <optional>
#include <set>
#include <string_view>

#include <amdqp/activity.hpp>
#include <amdqp/amdqp.hpp>
#include <nlohmann/json.hpp>

#include "activity_proc.hpp"

namespace amdqp::daemon {

namespace {

[[noreturn]] void fail(const std::string& what, int err) {
    throw Error(errc::system, "amdqpd socket: " + what + ": " + std::strerror(err), err);
}

std::int64_t now_ns() {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return static_cast<std::int64_t>(ts.tv_sec) * 1'000'000'000 + ts.tv_nsec;
}

// Whether @pid has CAP_SYS_ADMIN in its effective set (CapEff, bit 21).
bool has_sys_admin(pid_t pid) {
    auto text = detail::read_small_file("/proc/" + std::to_string(pid) + "/status");
    if (!text)
        return false;
    std::size_t at = text->find("\nCapEff:");
    if (at == std::string::npos)
        return false;
    std::uint64_t caps = std::strtoull(text->c_str() + at + 8, nullptr, 16);
    return caps & (std::uint64_t{1} << 21);
}

}  // namespace

WakeWord::WakeWord() noexcept : fd_(eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK)) {}

WakeWord::~WakeWord() {
    if (fd_ >= 0)
        ::close(fd_);
}

void WakeWord::drain() const noexcept {
    std::uint64_t n;
    if (fd_ < 0)
        return;
    [[maybe_unused]] ssize_t r = ::read(fd_, &n, sizeof(n));
}

bool WakeWord::wait(std::uint32_t seen, std::chrono::nanoseconds timeout) const noexcept {
    if (value() != seen)
        return true;
    if (timeout.count() <= 0)
        return false;
    struct timespec ts = {static_cast<time_t>(timeout.count() / 1'000'000'000),
                          static_cast<long>(timeout.count() % 1'000'000'000)};
    syscall(SYS_futex, reinterpret_cast<std::uint32_t*>(&word_), FUTEX_WAIT_PRIVATE, seen, &ts,
            nullptr, 0);
    return value() != seen;
}

void WakeWord::wake() noexcept {
    word_.fetch_add(1, std::memory_order_release);
    syscall(SYS_futex, reinterpret_cast<std::uint32_t*>(&word_), FUTEX_WAKE_PRIVATE, INT_MAX,
            nullptr, nullptr, 0);
    const std::uint64_t one = 1;
    if (fd_ < 0)
        return;
    [[maybe_unused]] ssize_t r = ::write(fd_, &one, sizeof(one));
}

Channel::Channel(const std::string& dir, std::function<void()> on_wake, ChannelLimits limits,
                 bool own_thread)
    : dir_(dir), path_(activity::socket_path(dir)), on_wake_(std::move(on_wake)), limits_(limits) {
    if (::mkdir(dir.c_str(), 0755) < 0 && errno != EEXIST)
        fail("mkdir " + dir, errno);
    struct stat st;
    if (lstat(dir.c_str(), &st) < 0)
        fail("stat " + dir, errno);
    // Tenants must not be able to put another socket (or anything) here.
    if (!S_ISDIR(st.st_mode) || st.st_uid != geteuid() || (st.st_mode & (S_IWGRP | S_IWOTH)))
        throw Error(errc::permission,
                    "amdqpd socket: " + dir + " must be a directory of this user (uid " +
                        std::to_string(geteuid()) + ") that no one else can write to");
    struct sockaddr_un addr = {};
    addr.sun_family = AF_UNIX;
    if (path_.size() >= sizeof(addr.sun_path))
        fail(path_, ENAMETOOLONG);
    std::memcpy(addr.sun_path, path_.c_str(), path_.size() + 1);
    // A socket a previous run left (the directory is ours alone).
    if (lstat(path_.c_str(), &st) == 0 && S_ISSOCK(st.st_mode))
        ::unlink(path_.c_str());
    listen_ = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
    if (listen_ < 0)
        fail("socket", errno);
    if (bind(listen_, reinterpret_cast<struct sockaddr*>(&addr), sizeof(addr)) < 0 ||
        chmod(path_.c_str(), 0666) < 0 || listen(listen_, 128) < 0) {
        const int err = errno;
        ::close(listen_);
        fail("listen on " + path_, err);
    }
    stop_ = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
    if (stop_ < 0) {
        const int err = errno;
        ::close(listen_);
        ::unlink(path_.c_str());
        fail("eventfd", err);
    }
    if (own_thread)
        thread_ = std::thread([this] { run(); });
}

Channel::~Channel() {
    const std::uint64_t one = 1;
    [[maybe_unused]] ssize_t n = ::write(stop_, &one, sizeof(one));
    if (thread_.joinable())
        thread_.join();
    for (Conn& c : conns_)
        ::close(c.fd);
    for (Registration& r : pending_)
        ::close(r.fd);
    ::close(stop_);
    ::close(listen_);
    ::unlink(path_.c_str());
}

std::vector<Registration> Channel::take() {
    std::lock_guard lock(mutex_);
    return std::exchange(pending_, {});
}

void Channel::set_status(std::string json) {
    std::lock_guard lock(mutex_);
    status_ = std::move(json);
}

Channel::Stats Channel::stats() const {
    std::lock_guard lock(mutex_);
    return stats_;
}

void Channel::run() {
    for (Served r = Served::served; r != Served::extra && r != Served::failed;)
        r = round(nullptr, stop_);
}

Channel::Served Channel::serve_once(std::chrono::nanoseconds timeout, int extra_fd) {
    const std::int64_t t = std::max<std::int64_t>(timeout.count(), 0);
    const struct timespec limit = {static_cast<time_t>(t / 1'000'000'000),
                                   static_cast<long>(t % 1'000'000'000)};
    return round(&limit, extra_fd);
}

// One wait and what it found: the extra fd first (run()'s stop), then due
// deferred wakes, the connections, new connections.
Channel::Served Channel::round(const struct timespec* limit, int extra_fd) {
    auto& fds = fds_;
    fds.clear();
    fds.push_back({extra_fd, POLLIN, 0});  // fd -1: ignored by poll
    fds.push_back({listen_, POLLIN, 0});
    for (const Conn& c : conns_)
        fds.push_back({c.fd, POLLIN, 0});
    struct timespec wait;
    const struct timespec* until = limit;
    if (deferred_wake_ns_) {
        const std::int64_t left = std::max<std::int64_t>(deferred_wake_ns_ - now_ns(), 0);
        if (!limit || left < limit->tv_sec * 1'000'000'000LL + limit->tv_nsec) {
            wait = {static_cast<time_t>(left / 1'000'000'000),
                    static_cast<long>(left % 1'000'000'000)};
            until = &wait;
        }
    }
    const int n = ppoll(fds.data(), fds.size(), until, nullptr);
    if (n < 0)
        return errno == EINTR ? Served::interrupted : Served::failed;
    if (fds[0].revents)
        return Served::extra;
    Served result = n == 0 ? Served::timeout : Served::served;
    if (deferred_wake_ns_ && now_ns() >= deferred_wake_ns_) {
        // One wake for every user due by now; the next due, if any, is
        // the new deadline.
        const std::int64_t now = now_ns();
        deferred_wake_ns_ = 0;
        for (auto it = pending_wake_.begin(); it != pending_wake_.end();) {
            if (it->second <= now) {
                it = pending_wake_.erase(it);
                continue;
            }
            if (!deferred_wake_ns_ || it->second < deferred_wake_ns_)
                deferred_wake_ns_ = it->second;
            ++it;
        }
        {
            std::lock_guard lock(mutex_);
            stats_.wakes++;
        }
        on_wake_();
    }
    // Connections first (their indexes match fds), then new ones.
    std::vector<Conn> keep;
    keep.reserve(conns_.size());
    for (std::size_t i = 0; i < conns_.size(); i++) {
        Conn& c = conns_[i];
        const short ev = fds[i + 2].revents;
        bool ok = true;
        if (ev & POLLIN)
            ok = serve(c);
        else if (ev & (POLLHUP | POLLERR | POLLNVAL))
            ok = false;
        if (ok) {
            keep.push_back(c);
        } else {
            ::close(c.fd);
            if (--conns_per_uid_[c.uid] == 0)
                conns_per_uid_.erase(c.uid);
        }
    }
    conns_ = std::move(keep);
    if (fds[1].revents & POLLIN) {
        // A bounded number per round: a flood of connects cannot starve
        // the connections already there.
        for (int i = 0; i < 64; i++)
            accept_one();
    }
    return result;
}

void Channel::accept_one() {
    int fd = accept4(listen_, nullptr, nullptr, SOCK_CLOEXEC | SOCK_NONBLOCK);
    if (fd < 0)
        return;
    struct ucred cred = {};
    socklen_t len = sizeof(cred);
    if (getsockopt(fd, SOL_SOCKET, SO_PEERCRED, &cred, &len) < 0 || cred.pid <= 0 ||
        conns_.size() >= limits_.max_conns ||
        conns_per_uid_[cred.uid] >= limits_.max_conns_per_uid) {
        if (conns_per_uid_[cred.uid] == 0)
            conns_per_uid_.erase(cred.uid);
        ::close(fd);
        std::lock_guard lock(mutex_);
        stats_.refused++;
        return;
    }
    conns_per_uid_[cred.uid]++;
    conns_.push_back({fd, cred.pid, cred.uid, false});
}

bool Channel::serve(Conn& c) {
    char buf[256];
    union {
        char b[CMSG_SPACE(sizeof(int) * 4)];
        struct cmsghdr align;
    } control;
    struct iovec iov = {buf, sizeof(buf)};
    struct msghdr msg = {};
    msg.msg_iov = &iov;
    msg.msg_iovlen = 1;
    msg.msg_control = control.b;
    msg.msg_controllen = sizeof(control.b);
    ssize_t n = recvmsg(c.fd, &msg, MSG_DONTWAIT | MSG_CMSG_CLOEXEC);
    if (n < 0)
        return errno == EAGAIN || errno == EINTR;
    if (n == 0)
        return false;
    // Whatever fds came: at most one is used, every other one is closed.
    std::vector<int> got;
    for (struct cmsghdr* h = CMSG_FIRSTHDR(&msg); h; h = CMSG_NXTHDR(&msg, h)) {
        if (h->cmsg_level != SOL_SOCKET || h->cmsg_type != SCM_RIGHTS)
            continue;
        const std::size_t count = (h->cmsg_len - CMSG_LEN(0)) / sizeof(int);
        for (std::size_t i = 0; i < count; i++) {
            int fd;
            std::memcpy(&fd, CMSG_DATA(h) + i * sizeof(int), sizeof(int));
            got.push_back(fd);
        }
    }
    auto close_got = [&] {
        for (int fd : got)
            ::close(fd);
        got.clear();
    };
    auto refuse = [&] {
        close_got();
        std::lock_guard lock(mutex_);
        stats_.refused++;
        return false;
    };
    if (msg.msg_flags & MSG_CTRUNC)
        return refuse();
    bool woke = false;
    for (ssize_t i = 0; i < n; i++) {
        switch (buf[i]) {
            case AMDQP_DAEMON_MSG_REGISTER: {
                if (c.registered || got.size() != 1)
                    return refuse();
                std::size_t size = 0;
                const char* why = nullptr;
                std::optional<std::uint64_t> start = detail::proc_start_time(c.pid);
                if (detail::check_page_fd(got[0], AMDQP_ACT_PAGE_SIZE, &size, &why) != 0 || !start)
                    return refuse();
                c.registered = true;
                {
                    std::lock_guard lock(mutex_);
                    pending_.push_back({c.pid, c.uid, *start, got[0]});
                    stats_.registrations++;
                }
                got.clear();
                woke = true;  // adopt it now
                break;
            }
            case AMDQP_DAEMON_MSG_WAKE:
                if (!c.registered)
                    return refuse();
                woke = true;
                break;
            case AMDQP_DAEMON_MSG_STATUS:
                if (c.registered || n != 1 || !got.empty())
                    return refuse();
                answer_status(c);
                return false;
            default:
                return refuse();
        }
    }
    close_got();
    if (woke) {
        const std::int64_t now = now_ns();
        const std::int64_t gap =
            std::chrono::duration_cast<std::chrono::nanoseconds>(limits_.wake_gap).count();
        std::int64_t& last = last_wake_ns_[c.uid];
        if (now - last >= gap) {
            last = now;
            {
                std::lock_guard lock(mutex_);
                stats_.wakes++;
            }
            on_wake_();
        } else if (!pending_wake_.contains(c.uid)) {
            // Folded into one wake at the end of this user's gap, which takes
            // the user's next slot: a deferred wake counts like any other, so
            // one user wakes the loop at most once a gap however it sends.
            const std::int64_t at = last + gap;
            last = at;
            pending_wake_[c.uid] = at;
            if (!deferred_wake_ns_ || deferred_wake_ns_ > at)
                deferred_wake_ns_ = at;
        }
    }
    return true;
}

void Channel::answer_status(const Conn& c) {
    std::string text;
    {
        std::lock_guard lock(mutex_);
        text = status_;
        stats_.status_requests++;
    }
    text = filter_status(text, c.uid, c.uid == 0 || has_sys_admin(c.pid)) + "\n";
    // The reader is amdqpctl: a bounded blocking send (it reads at once).
    int flags = fcntl(c.fd, F_GETFL);
    fcntl(c.fd, F_SETFL, flags & ~O_NONBLOCK);
    struct timeval tv = {1, 0};
    setsockopt(c.fd, SOL_SOCKET, SO_SNDTIMEO, &tv, sizeof(tv));
    std::size_t off = 0;
    while (off < text.size()) {
        ssize_t n = send(c.fd, text.data() + off, text.size() - off, MSG_NOSIGNAL);
        if (n <= 0)
            break;
        off += static_cast<std::size_t>(n);
    }
}

std::string filter_status(const std::string& json, uid_t uid, bool privileged) {
    nlohmann::json j = nlohmann::json::parse(json, nullptr, false);
    if (j.is_discarded() || !j.is_object())
        return "{}";
    if (privileged)
        return j.dump();
    std::set<std::int64_t> mine;
    nlohmann::json tagged = nlohmann::json::array();
    if (j.contains("tagged") && j["tagged"].is_array()) {
        for (const auto& p : j["tagged"]) {
            if (p.value("uid", std::int64_t{-1}) == static_cast<std::int64_t>(uid)) {
                tagged.push_back(p);
                mine.insert(p.value("pid", std::int64_t{0}));
            }
        }
    }
    j["tagged"] = tagged;
    j["processes"] = tagged.size();
    if (j.contains("groups") && j["groups"].is_object()) {
        nlohmann::json groups = nlohmann::json::object();
        for (auto& [name, g] : j["groups"].items()) {
            nlohmann::json pids = nlohmann::json::array();
            if (g.contains("pids") && g["pids"].is_array())
                for (const auto& p : g["pids"])
                    if (p.is_number_integer() && mine.contains(p.get<std::int64_t>()))
                        pids.push_back(p);
            if (!pids.empty()) {
                nlohmann::json copy = g;
                copy["pids"] = pids;
                groups[name] = copy;
            }
        }
        j["groups"] = groups;
    }
    j["filtered"] = true;
    return j.dump();
}

}  // namespace amdqp::daemon
