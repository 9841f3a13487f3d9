// SPDX-License-Identifier: MIT
#include "dir_watch.hpp"

#include <poll.h>
#include <pthread.h>
#include <sys/eventfd.h>
#include <sys/inotify.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <string_view>

#include <amdqp/activity.h>
#include <amdqp/amdqp.hpp>

namespace amdqp::daemon {

namespace {

[[noreturn]] void fail(const std::string& dir, const char* what, int err) {
    throw Error(errc::system, "watching " + dir + ": " + what + ": " + std::strerror(err), err);
}

}  // namespace

DirWatch::DirWatch(const std::string& dir, std::function<void()> on_change)
    : on_change_(std::move(on_change)) {
    inotify_ = inotify_init1(IN_CLOEXEC | IN_NONBLOCK);
    if (inotify_ < 0)
        fail(dir, "inotify_init1", errno);
    // A writer creates its page, sizes and maps it, closes the fd, then
    // fills the header: CLOSE_WRITE comes just before the page is valid
    // (the controller retries such a page shortly). MOVED_TO: pages
    // renamed into place.
    if (inotify_add_watch(inotify_, dir.c_str(), IN_CREATE | IN_CLOSE_WRITE | IN_MOVED_TO) < 0) {
        const int err = errno;
        ::close(inotify_);
        fail(dir, "inotify_add_watch", err);
    }
    stop_ = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
    if (stop_ < 0) {
        const int err = errno;
        ::close(inotify_);
        fail(dir, "eventfd", err);
    }
    thread_ = std::thread([this] { run(); });
}

DirWatch::~DirWatch() {
    const std::uint64_t one = 1;
    [[maybe_unused]] auto r = ::write(stop_, &one, sizeof(one));
    thread_.join();
    ::close(stop_);
    ::close(inotify_);
}

void DirWatch::run() {
    pthread_setname_np(pthread_self(), "amdqpd-watch");
    alignas(struct inotify_event) char buf[4096];
    for (;;) {
        struct pollfd fds[2] = {{inotify_, POLLIN, 0}, {stop_, POLLIN, 0}};
        if (poll(fds, 2, -1) < 0) {
            if (errno == EINTR)
                continue;
            return;
        }
        if (fds[1].revents)
            return;
        bool page = false;
        for (;;) {
            const ssize_t n = ::read(inotify_, buf, sizeof(buf));
            if (n <= 0)
                break;  // EAGAIN: drained
            for (ssize_t off = 0; off < n;) {
                const auto* ev = reinterpret_cast<const struct inotify_event*>(buf + off);
                off += static_cast<ssize_t>(sizeof(*ev) + ev->len);
                // Overflow: events were lost, one of them may be a page.
                if (ev->mask & IN_Q_OVERFLOW)
                    page = true;
                else if (ev->len && std::string_view(ev->name).starts_with(AMDQP_ACT_PREFIX))
                    page = true;
            }
        }
        if (page) {
            pending_.store(true, std::memory_order_release);
            on_change_();
        }
    }
}

}  // namespace amdqp::daemon
