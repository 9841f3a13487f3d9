// SPDX-License-Identifier: MIT
// The process's connection to amdqpd (daemon_link.hpp), and the client side
// of its socket (amdqp/activity.hpp: runtime_dir, daemon_status).
#include "daemon_link.hpp"

#include <fcntl.h>
#include <poll.h>
#include <pthread.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <chrono>
#include <cstdlib>
#include <cstring>
#include <mutex>
#include <string>

#include <amdqp/activity.hpp>

#include "activity_page.hpp"
#include "activity_proc.hpp"
#include "errors.h"

namespace amdqp {

namespace detail {

namespace {

constexpr std::int64_t retry_ns = 1'000'000'000;

// The connection (-1: none). Written under g_mutex, read by wake_daemon()
// without it; a closed connection is only replaced under the lock.
std::atomic<int> g_conn{-1};
std::atomic<std::int64_t> g_next_try{0};
std::mutex g_mutex;

// A connected socket to the daemon in the runtime directory, -1 if none
// (or the directory is not one to trust with the page).
int connect_daemon(const std::string& dir) {
    if (!activity::untrusted_dir_reason(dir).empty())
        return -1;
    const std::string path = activity::socket_path(dir);
    struct sockaddr_un addr = {};
    addr.sun_family = AF_UNIX;
    if (path.size() >= sizeof(addr.sun_path))
        return -1;
    std::memcpy(addr.sun_path, path.c_str(), path.size() + 1);
    int fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
    if (fd < 0)
        return -1;
    if (connect(fd, reinterpret_cast<struct sockaddr*>(&addr), sizeof(addr)) < 0) {
        ::close(fd);
        return -1;
    }
    return fd;
}

bool send_register(int conn, int page_fd) {
    char byte = AMDQP_DAEMON_MSG_REGISTER;
    struct iovec iov = {&byte, 1};
    union {
        char buf[CMSG_SPACE(sizeof(int))];
        struct cmsghdr align;
    } control = {};
    struct msghdr msg = {};
    msg.msg_iov = &iov;
    msg.msg_iovlen = 1;
    msg.msg_control = control.buf;
    msg.msg_controllen = sizeof(control.buf);
    struct cmsghdr* c = CMSG_FIRSTHDR(&msg);
    c->cmsg_level = SOL_SOCKET;
    c->cmsg_type = SCM_RIGHTS;
    c->cmsg_len = CMSG_LEN(sizeof(int));
    std::memcpy(CMSG_DATA(c), &page_fd, sizeof(int));
    return sendmsg(conn, &msg, MSG_DONTWAIT | MSG_NOSIGNAL) == 1;
}

void drop_connection_locked() {
    int fd = g_conn.exchange(-1, std::memory_order_acq_rel);
    if (fd >= 0)
        ::close(fd);
}

// Under g_mutex: connects and registers @page_fd.
void register_locked(int page_fd) {
    std::string dir;
    try {
        dir = activity::runtime_dir();
    } catch (...) {
        return;
    }
    g_next_try.store(static_cast<std::int64_t>(monotonic_ns()) + retry_ns,
                     std::memory_order_relaxed);
    int conn = connect_daemon(dir);
    if (conn < 0)
        return;
    if (!send_register(conn, page_fd)) {
        ::close(conn);
        return;
    }
    drop_connection_locked();
    g_conn.store(conn, std::memory_order_release);
}

// A fork child must not speak for its parent: it registers its own page.
void atfork_child() noexcept {
    int fd = g_conn.exchange(-1, std::memory_order_relaxed);
    if (fd >= 0)
        ::close(fd);
    g_next_try.store(0, std::memory_order_relaxed);
    new (&g_mutex) std::mutex;
}

void atfork_prepare() noexcept {
    g_mutex.lock();
}

void atfork_parent() noexcept {
    g_mutex.unlock();
}

void install_atfork() {
    static std::once_flag once;
    std::call_once(once, [] { pthread_atfork(atfork_prepare, atfork_parent, atfork_child); });
}

}  // namespace

void register_page(int page_fd) noexcept {
    try {
        install_atfork();
        std::lock_guard lock(g_mutex);
        register_locked(page_fd);
    } catch (...) {
    }
}

void wake_daemon() noexcept {
    int conn = g_conn.load(std::memory_order_acquire);
    if (conn >= 0) {
        char byte = AMDQP_DAEMON_MSG_WAKE;
        if (send(conn, &byte, 1, MSG_DONTWAIT | MSG_NOSIGNAL) == 1 || errno == EAGAIN ||
            errno == EINTR)
            return;  // EAGAIN: wakes the daemon has not read yet are pending
    }
    // No daemon (yet), or it went away: look again at most once a second.
    if (static_cast<std::int64_t>(monotonic_ns()) < g_next_try.load(std::memory_order_relaxed))
        return;
    try {
        install_atfork();
        std::lock_guard lock(g_mutex);
        if (g_conn.load(std::memory_order_relaxed) != conn)
            return;  // another thread reconnected meanwhile
        if (static_cast<std::int64_t>(monotonic_ns()) < g_next_try.load(std::memory_order_relaxed))
            return;
        drop_connection_locked();
        ActivityWriter& writer = ActivityWriter::instance();
        const std::string path = writer.path();
        if (path.empty())
            return;
        int fd = ::open(path.c_str(), O_RDWR | O_CLOEXEC | O_NONBLOCK);
        if (fd < 0)
            return;
        register_locked(fd);
        ::close(fd);
        if (int c = g_conn.load(std::memory_order_relaxed); c >= 0) {
            char byte = AMDQP_DAEMON_MSG_WAKE;
            [[maybe_unused]] ssize_t n = send(c, &byte, 1, MSG_DONTWAIT | MSG_NOSIGNAL);
        }
    } catch (...) {
    }
}

}  // namespace detail

namespace activity {

std::string runtime_dir() {
    const char* dir = secure_getenv("AMDQP_RUNTIME_DIR");
    if (dir && *dir)
        return dir;
    return AMDQP_DAEMON_DIR;
}

std::string socket_path(const std::string& dir) {
    return dir + "/" AMDQP_DAEMON_SOCKET;
}

std::string untrusted_dir_reason(const std::string& dir) {
    struct stat st;
    if (lstat(dir.c_str(), &st) < 0)
        return std::string("cannot stat: ") + std::strerror(errno);
    if (!S_ISDIR(st.st_mode))
        return "not a directory";
    if (st.st_uid != 0 && st.st_uid != geteuid())
        return "owned by uid " + std::to_string(st.st_uid) + ", neither root nor this user";
    if (st.st_mode & (S_IWGRP | S_IWOTH))
        return "writable by others than its owner";
    return {};
}

std::string daemon_status(const std::string& dir, std::chrono::milliseconds timeout) {
    struct stat st;
    if (lstat(dir.c_str(), &st) < 0 && errno == ENOENT)
        throw Error(errc::system, "amdqp: no amdqpd runtime directory " + dir, ENOENT);
    if (std::string why = untrusted_dir_reason(dir); !why.empty())
        throw Error(errc::permission, "amdqp: not asking a daemon in " + dir + ": " + why);
    const std::string path = socket_path(dir);
    struct sockaddr_un addr = {};
    addr.sun_family = AF_UNIX;
    if (path.size() >= sizeof(addr.sun_path))
        throw Error(errc::invalid, "amdqp: socket path too long: " + path);
    std::memcpy(addr.sun_path, path.c_str(), path.size() + 1);
    int fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
    if (fd < 0)
        throw Error(errc::system, "amdqp: socket: " + std::string(std::strerror(errno)), errno);
    struct Closer {
        int fd;
        ~Closer() { ::close(fd); }
    } closer{fd};
    if (connect(fd, reinterpret_cast<struct sockaddr*>(&addr), sizeof(addr)) < 0) {
        int err = errno;
        if (err == ENOENT || err == ECONNREFUSED)
            throw Error(errc::system, "amdqp: no amdqpd listens on " + path, ENOENT);
        throw Error(errc::system, "amdqp: connect " + path + ": " + std::strerror(err), err);
    }
    char byte = AMDQP_DAEMON_MSG_STATUS;
    if (send(fd, &byte, 1, MSG_NOSIGNAL) != 1)
        throw Error(errc::system, "amdqp: send to " + path + ": " + std::strerror(errno), errno);
    std::string out;
    const auto deadline = std::chrono::steady_clock::now() + timeout;
    char buf[4096];
    for (;;) {
        auto left = std::chrono::duration_cast<std::chrono::milliseconds>(
            deadline - std::chrono::steady_clock::now());
        struct pollfd pfd = {fd, POLLIN, 0};
        if (left.count() <= 0 || poll(&pfd, 1, static_cast<int>(left.count())) == 0)
            throw Error(errc::system, "amdqp: amdqpd did not answer on " + path, ETIMEDOUT);
        ssize_t n = ::read(fd, buf, sizeof(buf));
        if (n < 0 && errno == EINTR)
            continue;
        if (n < 0)
            throw Error(errc::system, "amdqp: read " + path + ": " + std::strerror(errno), errno);
        if (n == 0)
            break;
        out.append(buf, static_cast<std::size_t>(n));
        if (out.size() > (64u << 20))
            throw Error(errc::system, "amdqp: status from " + path + " too long");
    }
    return out;
}

}  // namespace activity

}  // namespace amdqp
