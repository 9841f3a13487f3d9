// SPDX-License-Identifier: MIT
//
// Carries out cooperative requests: a thread that sleeps on the page's
// coop_seq (a futex the controller wakes), applies coop_suspend to the
// process's cooperative queues and acks with coop_ack_seq (then wakes the
// controller). Started when the first cooperative queue appears; a fork
// child has no thread and starts its own the same way.
#ifndef AMDQP_PRELOAD_COOP_WATCHER_HPP
#define AMDQP_PRELOAD_COOP_WATCHER_HPP

#include <atomic>
#include <cstdint>

#include <amdqp/activity.h>

#include "activity_page.hpp"
#include "queue_registry.hpp"

namespace amdqp::preload {

class CoopWatcher {
  public:
    CoopWatcher(detail::ActivityWriter& page, QueueRegistry& registry)
        : page_(page), registry_(registry) {}

    // Starts the thread once per process; whether it runs.
    bool start();
    // Carries out the request pending in @page, if any; whether there was
    // one. (The thread's loop body; tests call it directly.)
    bool handle_pending(amdqp_act_page* page);
    // fork child: there is no thread any more.
    void reset_after_fork_child() { started_.store(false, std::memory_order_relaxed); }

  private:
    void run(amdqp_act_page* page);

    detail::ActivityWriter& page_;
    QueueRegistry& registry_;
    std::atomic<bool> started_{false};
};

}  // namespace amdqp::preload

#endif  // AMDQP_PRELOAD_COOP_WATCHER_HPP
