// SPDX-License-Identifier: MIT
//
// The cooperative suspensions one `amdqpctl suspend` holds. Each is leased
// (amdqp/activity.h, coop_lease_ns): the process puts its queues back on
// its own unless the lease is renewed in time, which is what makes a
// killed amdqpctl harmless. So requests go to every process before any ack
// is awaited, and no wait while holding, acks included, is longer than one
// renewal interval.
#ifndef AMDQPCTL_COOP_HOLDS_HPP
#define AMDQPCTL_COOP_HOLDS_HPP

#include <chrono>
#include <cstdint>
#include <ostream>
#include <vector>

#include <amdqp/activity.hpp>

namespace amdqpctl {

class CoopHolds {
  public:
    struct Hold {
        std::uint32_t pid = 0;
        amdqp::activity::Page page;
        std::uint32_t seq = 0;            // our request in force
        amdqp::activity::CoopResult ack;  // what await_acks() found for it
        // False once a later request replaced ours, or the process is gone:
        // nothing of it is held any more.
        bool ours = true;
    };

    // Problems found while renewing go to @err, one line each.
    CoopHolds(std::ostream& err, std::chrono::milliseconds lease);

    // Asks the process behind @page to suspend. Throws amdqp::Error.
    void add(std::uint32_t pid, amdqp::activity::Page page);
    // Waits up to @timeout for every process to carry out its request,
    // renewing the leases meanwhile (not after release_all()).
    void await_acks(std::chrono::milliseconds timeout);
    // Renews every lease; asks again where one lapsed (amdqpctl was stopped
    // for longer than a lease), lets go where a later request replaced ours.
    void renew();
    // How often renew() must run: a third of the lease, so that one late
    // renewal still finds the lease current.
    std::chrono::milliseconds interval() const { return interval_; }
    // Asks every process still held to resume; await_acks() then waits for
    // them.
    void release_all();

    std::vector<Hold>& holds() { return holds_; }
    // Whether anything is still held.
    bool holding() const;

  private:
    std::ostream& err_;
    std::chrono::milliseconds lease_;
    std::chrono::milliseconds interval_;
    bool released_ = false;
    std::vector<Hold> holds_;
};

}  // namespace amdqpctl

#endif  // AMDQPCTL_COOP_HOLDS_HPP
