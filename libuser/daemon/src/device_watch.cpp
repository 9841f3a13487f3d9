// SPDX-License-Identifier: MIT
#include "device_watch.hpp"

#include <poll.h>
#include <pthread.h>
#include <sys/eventfd.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <utility>

namespace amdqp::daemon {

namespace {

constexpr std::uint64_t kDeviceEvents =
    (1ULL << AMDQP_EVENT_DEVICE_ADDED) | (1ULL << AMDQP_EVENT_DEVICE_REMOVED);

}  // namespace

DeviceWatch::DeviceWatch(Device& dev, std::function<void()> on_event)
    : reader_(dev.events(kDeviceEvents)), on_event_(std::move(on_event)) {
    // Only the kernel's fds can be waited on with poll(2).
    threaded_ = dev.sys() == real_sys();
    if (!threaded_)
        return;
    stop_ = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
    if (stop_ < 0) {
        const int err = errno;
        throw Error(errc::system, std::string("device events: eventfd: ") + std::strerror(err),
                    err);
    }
    thread_ = std::thread([this] { run(); });
}

DeviceWatch::~DeviceWatch() {
    if (!threaded_)
        return;
    const std::uint64_t one = 1;
    [[maybe_unused]] auto r = ::write(stop_, &one, sizeof(one));
    thread_.join();
    ::close(stop_);
}

std::vector<Event> DeviceWatch::take() {
    if (!threaded_)
        return reader_.read_some();
    if (!pending_.exchange(false, std::memory_order_acq_rel))
        return {};
    std::lock_guard lock(mutex_);
    if (error_)
        throw *error_;
    return std::exchange(queued_, {});
}

void DeviceWatch::fail(Error e) {
    {
        std::lock_guard lock(mutex_);
        error_ = std::move(e);
    }
    pending_.store(true, std::memory_order_release);
    on_event_();
}

void DeviceWatch::run() {
    pthread_setname_np(pthread_self(), "amdqpd-devices");
    for (;;) {
        struct pollfd fds[2] = {{reader_.fd(), POLLIN, 0}, {stop_, POLLIN, 0}};
        if (::poll(fds, 2, -1) < 0) {
            if (errno == EINTR)
                continue;
            const int err = errno;
            fail(Error(errc::system, std::string("device events: poll: ") + std::strerror(err),
                       err));
            return;
        }
        if (fds[1].revents)
            return;
        std::vector<Event> got;
        try {
            got = reader_.read_some();
        } catch (const Error& e) {
            fail(e);
            return;
        }
        if (got.empty()) {
            // POLLERR/POLLHUP with nothing to read would wake us forever.
            if (fds[0].revents & (POLLERR | POLLHUP | POLLNVAL)) {
                fail(Error(errc::system, "device events: the fd reports an error or hangup"));
                return;
            }
            continue;
        }
        {
            std::lock_guard lock(mutex_);
            queued_.insert(queued_.end(), got.begin(), got.end());
        }
        pending_.store(true, std::memory_order_release);
        on_event_();
    }
}

}  // namespace amdqp::daemon
