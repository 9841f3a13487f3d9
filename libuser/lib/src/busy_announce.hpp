// SPDX-License-Identifier: MIT
//
// The process's side of the controller's wake/hold channel (activity.h,
// ctl_flags): work starting on an idle queue is announced to the
// controller at once instead of waiting for its next sample, and, when it
// asks, the doorbell is held until it acted (suspended what the new work
// outranks) or a deadline passed.
#ifndef AMDQP_SRC_BUSY_ANNOUNCE_HPP
#define AMDQP_SRC_BUSY_ANNOUNCE_HPP

#include <atomic>
#include <cstdint>

#include <amdqp/activity.h>

namespace amdqp::detail {

// The header of the page that holds @slot (pages are mapped aligned to
// their size, AMDQP_ACT_PAGE_SIZE: activity_page.cpp).
inline amdqp_act_header* header_of(amdqp_act_slot* slot) noexcept {
    static_assert(sizeof(amdqp_act_page) == AMDQP_ACT_PAGE_SIZE);
    auto addr = reinterpret_cast<std::uintptr_t>(slot);
    return reinterpret_cast<amdqp_act_header*>(addr & ~std::uintptr_t{AMDQP_ACT_PAGE_SIZE - 1});
}

// The controller's AMDQP_ACT_CTL_* request (0 without a controller).
inline std::uint32_t controller_flags(amdqp_act_header& h) noexcept {
    return std::atomic_ref<std::uint32_t>(h.ctl_flags).load(std::memory_order_relaxed);
}

// Announces an idle->busy transition (bumps busy_seq, wakes the
// controller) and, with AMDQP_ACT_CTL_HOLD in @ctl, waits for its ack up to
// ctl_hold_us. Never throws; costs nothing but a few stores and one send(2)
// of a byte on the process's connection to the controller when nothing is
// held.
void announce_busy(amdqp_act_header& h, std::uint32_t ctl) noexcept;

}  // namespace amdqp::detail

#endif  // AMDQP_SRC_BUSY_ANNOUNCE_HPP
