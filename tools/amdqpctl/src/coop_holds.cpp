// SPDX-License-Identifier: MIT
#include "coop_holds.hpp"

#include <algorithm>

namespace amdqpctl {

namespace act = amdqp::activity;
using std::chrono::milliseconds;

CoopHolds::CoopHolds(std::ostream& err, milliseconds lease)
    : err_(err), lease_(lease), interval_(std::max(lease / 3, milliseconds(1))) {}

void CoopHolds::add(std::uint32_t pid, act::Page page) {
    const std::uint32_t seq = page.send_coop(true, lease_);
    holds_.push_back({pid, std::move(page), seq, {}, true});
}

bool CoopHolds::holding() const {
    return std::any_of(holds_.begin(), holds_.end(), [](const Hold& h) { return h.ours; });
}

void CoopHolds::await_acks(milliseconds timeout) {
    using clock = std::chrono::steady_clock;
    const auto deadline = clock::now() + timeout;
    auto next_renewal = clock::now() + interval_;
    for (auto& h : holds_) {
        while (h.ours) {
            const auto now = clock::now();
            const auto until = released_ ? deadline : std::min(deadline, next_renewal);
            try {
                h.ack = h.page.wait_coop(h.seq, std::chrono::ceil<milliseconds>(
                                                    std::max(until - now, clock::duration(0))));
            } catch (const act::PageError&) {
                h.ours = false;  // the process is gone, and its queues with it
                break;
            }
            if (h.ack.acked || clock::now() >= deadline)
                break;
            if (!released_ && clock::now() >= next_renewal) {
                renew();
                next_renewal = clock::now() + interval_;
            }
        }
    }
}

void CoopHolds::renew() {
    for (auto& h : holds_) {
        if (!h.ours)
            continue;
        try {
            switch (h.page.renew_lease(h.seq, lease_)) {
                case act::Lease::held:
                    break;
                case act::Lease::lapsed:
                    err_ << "amdqpctl: pid " << h.pid
                         << " put its queues back when the lease ran out before amdqpctl renewed "
                            "it (was amdqpctl stopped?): suspending it again\n";
                    h.seq = h.page.send_coop(true, lease_);
                    break;
                case act::Lease::replaced:
                    err_ << "amdqpctl: pid " << h.pid
                         << ": a later request (amdqpctl resume, or another controller) replaced "
                            "this suspension: no longer holding it\n";
                    h.ours = false;
                    break;
            }
        } catch (const act::PageError&) {
            h.ours = false;
        }
    }
}

void CoopHolds::release_all() {
    released_ = true;
    for (auto& h : holds_) {
        if (!h.ours)
            continue;
        try {
            h.seq = h.page.send_coop(false);
            h.ack = {};
        } catch (const act::PageError&) {
            h.ours = false;
        }
    }
}

}  // namespace amdqpctl
