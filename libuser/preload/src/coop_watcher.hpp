// SPDX-License-Identifier: MIT
//
// Carries out cooperative requests: a thread that sleeps on the page's
// coop_seq (a futex the controller wakes), applies coop_suspend to the
// process's cooperative queues and acks with coop_ack_seq (then wakes the
// controller). A suspension is leased (amdqp/activity.h, coop_lease_ns):
// while one is in force the thread also wakes at the lease's end and, if
// the controller did not move it, puts the queues back on its own, so that
// a controller that died cannot leave them off. Started when the first
// cooperative queue appears; a fork child has no thread and starts its own
// the same way.
#ifndef AMDQP_PRELOAD_COOP_WATCHER_HPP
#define AMDQP_PRELOAD_COOP_WATCHER_HPP

#include <pthread.h>
#include <sys/types.h>

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
    // Stops and joins the thread: the page it reads must outlive it. The
    // layer's own watcher is never destroyed (it may be needed until exit).
    ~CoopWatcher() { stop(); }
    CoopWatcher(const CoopWatcher&) = delete;
    CoopWatcher& operator=(const CoopWatcher&) = delete;

    // Starts the thread once per process; whether it runs.
    bool start();
    // Ends the thread started by this process, if any, and waits for it.
    void stop() noexcept;

    // The thread's loop body, in three steps; tests call them directly with
    // the CLOCK_MONOTONIC time @now_ns they want.
    // Carries out the request pending in @page, if any; whether there was
    // one.
    bool handle_pending(amdqp_act_page* page, std::uint64_t now_ns);
    // Puts the queues back when the lease of the suspension in force ended
    // by @now_ns; whether it did.
    bool expire_if_due(amdqp_act_page* page, std::uint64_t now_ns);
    // When to look at the lease again (CLOCK_MONOTONIC ns), 0 if no lease
    // is running.
    std::uint64_t next_check(amdqp_act_page* page, std::uint64_t now_ns) const;

    // fork child: there is no thread any more, nor a suspension.
    void reset_after_fork_child() {
        started_.store(false, std::memory_order_relaxed);
        leased_ = false;
    }

  private:
    void run(amdqp_act_page* page);
    // Acks the end of a lease: queues back, coop_error -ETIMEDOUT, counted.
    void lease_ran_out(amdqp_act_page* page, std::uint32_t seq);

    detail::ActivityWriter& page_;
    QueueRegistry& registry_;
    std::atomic<bool> started_{false};
    std::atomic<bool> stop_{false};
    pthread_t thread_{};
    pid_t thread_pid_ = 0;                   // the process that started it
    amdqp_act_page* page_in_use_ = nullptr;  // the page the thread reads
    // Only the watcher thread uses these.
    bool leased_ = false;              // a suspension with a lease is in force
    std::uint64_t lease_span_ns_ = 0;  // its length when it was asked for
};

}  // namespace amdqp::preload

#endif  // AMDQP_PRELOAD_COOP_WATCHER_HPP
