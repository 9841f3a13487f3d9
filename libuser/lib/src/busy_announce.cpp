// SPDX-License-Identifier: MIT
#include "busy_announce.hpp"

#include <linux/futex.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <algorithm>
#include <climits>
#include <ctime>

#include "activity_proc.hpp"
#include "daemon_link.hpp"

namespace amdqp::detail {

namespace {

long futex(void* addr, int op, std::uint32_t value, const struct timespec* timeout) {
    return syscall(SYS_futex, addr, op, value, timeout, nullptr, 0);
}

}  // namespace

void announce_busy(amdqp_act_header& h, std::uint32_t ctl) noexcept {
    if (!(ctl & AMDQP_ACT_CTL_WAKE))
        return;
    const std::uint32_t seq =
        std::atomic_ref<std::uint32_t>(h.busy_seq).fetch_add(1, std::memory_order_release) + 1;
    // On this process's own connection to the controller: nobody else can
    // reach it, and it can wake nobody else.
    wake_daemon();
    if (!(ctl & AMDQP_ACT_CTL_HOLD))
        return;
    const std::uint32_t hold_us =
        std::atomic_ref<std::uint32_t>(h.ctl_hold_us).load(std::memory_order_relaxed);
    const std::int64_t alive = static_cast<std::int64_t>(
        std::atomic_ref<std::uint64_t>(h.ctl_alive_ns).load(std::memory_order_relaxed));
    auto now = [] { return static_cast<std::int64_t>(monotonic_ns()); };
    if (!hold_us || now() >= alive)
        return;  // nobody will ack: the controller stopped renewing its promise
    std::atomic_ref<std::uint64_t>(h.holds).fetch_add(1, std::memory_order_relaxed);
    std::atomic_ref<std::uint32_t> ack(h.busy_ack);
    const std::int64_t deadline = std::min(now() + std::int64_t{hold_us} * 1000, alive);
    for (;;) {
        const std::uint32_t a = ack.load(std::memory_order_acquire);
        if (static_cast<std::int32_t>(a - seq) >= 0)
            return;
        const std::int64_t left = deadline - now();
        if (left <= 0) {
            std::atomic_ref<std::uint64_t>(h.hold_timeouts).fetch_add(1, std::memory_order_relaxed);
            return;
        }
        struct timespec ts = {static_cast<time_t>(left / 1'000'000'000),
                              static_cast<long>(left % 1'000'000'000)};
        // Shared futex: the controller wakes it through its own mapping.
        futex(&h.busy_ack, FUTEX_WAIT, a, &ts);
    }
}

}  // namespace amdqp::detail
