// SPDX-License-Identifier: MIT
//
// Follows amdqp.ko's device events (AMDQP_EVENT_DEVICE_ADDED/REMOVED) on a
// second fd of /dev/amdqp, so that the controller lists a new GPU at once
// and forgets a removed one the moment it goes, instead of at the next
// periodic rescan: until then its policy still holds a suspension level for
// that GPU, and the resume it ends with names a GPU the kernel no longer
// knows, which fails the whole call (ENODEV).
//
// As with the socket (channel.hpp), the controller sleeps on a futex that cannot be polled
// together with the fd: a small thread blocks in poll(2) on it, reads the
// records and calls @on_event, which wakes the controller; the controller
// takes the records from its own thread. An fd that a test double's Sys
// made is no kernel fd, and poll(2) cannot wait on it: then no thread runs
// and take() reads the records itself, at every step.
#ifndef AMDQPD_DEVICE_WATCH_HPP
#define AMDQPD_DEVICE_WATCH_HPP

#include <atomic>
#include <functional>
#include <mutex>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include <amdqp/amdqp.hpp>

namespace amdqp::daemon {

class DeviceWatch {
  public:
    // Opens a second fd of @dev subscribed to the device events. Throws
    // Error when that fails (an older module, no eventfd): the caller falls
    // back to rescanning alone.
    DeviceWatch(Device& dev, std::function<void()> on_event);
    ~DeviceWatch();
    DeviceWatch(const DeviceWatch&) = delete;
    DeviceWatch& operator=(const DeviceWatch&) = delete;

    // The records read since the last call, oldest first (DEVICE_ADDED,
    // DEVICE_REMOVED, and OVERFLOW when some were lost). Throws Error once
    // the stream broke; the watch is of no use after that.
    std::vector<Event> take();

  private:
    void run();
    void fail(Error e);

    EventReader reader_;
    std::function<void()> on_event_;
    bool threaded_ = false;
    int stop_ = -1;  // eventfd: ends run()
    std::atomic<bool> pending_{false};
    std::mutex mutex_;
    std::vector<Event> queued_;   // under mutex_
    std::optional<Error> error_;  // under mutex_
    std::thread thread_;
};

}  // namespace amdqp::daemon

#endif
