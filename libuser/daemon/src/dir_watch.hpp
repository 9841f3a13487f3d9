// SPDX-License-Identifier: MIT
//
// Watches the runtime directory for activity pages being made (inotify),
// so that a process that just started is adopted (wake/hold flags written)
// within about a millisecond instead of at the next periodic rescan: its
// first request is otherwise not seen in time to be protected.
//
// The controller sleeps on a futex (the wake word), which cannot be
// polled together with an inotify fd: a small thread blocks on the fd and
// calls @on_change, which wakes the controller; the controller then asks
// pending() from its own thread.
#ifndef AMDQPD_DIR_WATCH_HPP
#define AMDQPD_DIR_WATCH_HPP

#include <atomic>
#include <functional>
#include <string>
#include <thread>

namespace amdqp::daemon {

class DirWatch {
  public:
    // Throws Error(errc::system) when inotify or the watch cannot be set
    // up (the caller falls back to rescanning alone).
    DirWatch(const std::string& dir, std::function<void()> on_change);
    ~DirWatch();
    DirWatch(const DirWatch&) = delete;
    DirWatch& operator=(const DirWatch&) = delete;

    // A page appeared (or was replaced) since the last call.
    bool pending() noexcept { return pending_.exchange(false, std::memory_order_acq_rel); }

  private:
    void run();

    int inotify_ = -1;
    int stop_ = -1;  // eventfd: ends run()
    std::function<void()> on_change_;
    std::atomic<bool> pending_{false};
    std::thread thread_;
};

}  // namespace amdqp::daemon

#endif
