// SPDX-License-Identifier: MIT
#include "busy_announce.hpp"

#include <fcntl.h>
#include <linux/futex.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <algorithm>
#include <climits>
#include <ctime>
#include <mutex>
#include <string>

#include "activity_proc.hpp"

namespace amdqp::detail {

namespace {

constexpr std::int64_t retry_ns = 1'000'000'000;  // after a failed open

std::atomic<std::uint32_t*> g_word{nullptr};
std::atomic<std::int64_t> g_next_try{0};
std::mutex g_open_mutex;

long futex(void* addr, int op, std::uint32_t value, const struct timespec* timeout) {
    return syscall(SYS_futex, addr, op, value, timeout, nullptr, 0);
}

// The controller's wake word, mapped at first need. A controller that is
// not there yet is looked for again at most once a second: the hot path
// must not pay an open(2) per doorbell.
std::uint32_t* wake_word() noexcept {
    if (std::uint32_t* w = g_word.load(std::memory_order_acquire))
        return w;
    const std::int64_t now = monotonic_ns();
    if (now < g_next_try.load(std::memory_order_relaxed))
        return nullptr;
    std::lock_guard lock(g_open_mutex);
    if (std::uint32_t* w = g_word.load(std::memory_order_acquire))
        return w;
    g_next_try.store(now + retry_ns, std::memory_order_relaxed);
    std::string path;
    try {
        path = activity_dir() + "/" AMDQP_ACT_WAKE_NAME;
    } catch (...) {
        return nullptr;
    }
    int fd = ::open(path.c_str(), O_RDWR | O_CLOEXEC | O_NOFOLLOW);
    if (fd < 0)
        return nullptr;
    struct stat st;
    void* map = MAP_FAILED;
    if (fstat(fd, &st) == 0 && S_ISREG(st.st_mode) && st.st_size >= AMDQP_ACT_PAGE_SIZE)
        map = mmap(nullptr, AMDQP_ACT_PAGE_SIZE, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
    ::close(fd);
    if (map == MAP_FAILED)
        return nullptr;
    auto* w = static_cast<std::uint32_t*>(map);
    g_word.store(w, std::memory_order_release);
    return w;
}

}  // namespace

void announce_busy(amdqp_act_header& h, std::uint32_t ctl) noexcept {
    if (!(ctl & AMDQP_ACT_CTL_WAKE))
        return;
    const std::uint32_t seq =
        std::atomic_ref<std::uint32_t>(h.busy_seq).fetch_add(1, std::memory_order_release) + 1;
    std::uint32_t* word = wake_word();
    if (!word)
        return;  // no controller to wait for
    std::atomic_ref<std::uint32_t>(*word).fetch_add(1, std::memory_order_release);
    futex(word, FUTEX_WAKE, INT_MAX, nullptr);
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
