// SPDX-License-Identifier: MIT
#include "coop_watcher.hpp"

#include <linux/futex.h>
#include <pthread.h>
#include <signal.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <climits>

#include "activity_proc.hpp"

namespace amdqp::preload {

namespace {

constexpr std::uint64_t ns_per_s = 1000000000;

// A controller renews a lease with pwrite(2), which does not promise to
// store an 8-byte field in one piece: a deadline read while it is half
// written may look past (or far ahead, see next_check()). An end is
// believed only when the field still holds it this much later.
constexpr std::uint64_t confirm_ns = 1000000;

template <typename T>
std::atomic_ref<T> ref(T& field) {
    return std::atomic_ref<T>(field);
}

// Not FUTEX_PRIVATE: the controller waits and wakes in its own mapping.
// Until @deadline_ns, CLOCK_MONOTONIC (0: no limit): FUTEX_WAIT_BITSET takes
// an absolute time, so early wakes do not stretch the wait.
void futex_wait(std::uint32_t* addr, std::uint32_t expected, std::uint64_t deadline_ns) {
    struct timespec ts = {static_cast<time_t>(deadline_ns / ns_per_s),
                          static_cast<long>(deadline_ns % ns_per_s)};
    syscall(SYS_futex, addr, FUTEX_WAIT_BITSET, expected, deadline_ns ? &ts : nullptr, nullptr,
            FUTEX_BITSET_MATCH_ANY);
}

void sleep_ns(std::uint64_t ns) {
    struct timespec ts = {static_cast<time_t>(ns / ns_per_s), static_cast<long>(ns % ns_per_s)};
    while (nanosleep(&ts, &ts) < 0 && errno == EINTR) {
    }
}

void futex_wake(std::uint32_t* addr) {
    syscall(SYS_futex, addr, FUTEX_WAKE, INT_MAX, nullptr, nullptr, 0);
}

}  // namespace

bool CoopWatcher::start() {
    if (started_.load(std::memory_order_acquire))
        return true;
    amdqp_act_page* page = page_.page();
    if (!page)
        return false;
    if (started_.exchange(true, std::memory_order_acq_rel))
        return true;

    // The application's signals are for its own threads.
    sigset_t all, old;
    sigfillset(&all);
    pthread_sigmask(SIG_SETMASK, &all, &old);
    pthread_attr_t attr;
    pthread_attr_init(&attr);
    pthread_attr_setstacksize(&attr, 64 * 1024);
    page_in_use_ = page;
    stop_.store(false, std::memory_order_relaxed);
    int rc = pthread_create(
        &thread_, &attr,
        [](void* self) -> void* {
            auto* w = static_cast<CoopWatcher*>(self);
            w->run(w->page_in_use_);
            return nullptr;
        },
        this);
    pthread_attr_destroy(&attr);
    pthread_sigmask(SIG_SETMASK, &old, nullptr);
    if (rc != 0) {
        started_.store(false, std::memory_order_release);
        return false;
    }
    thread_pid_ = getpid();
    pthread_setname_np(thread_, "amdqp-coop");
    return true;
}

void CoopWatcher::stop() noexcept {
    // A fork child inherits the flag but not the thread.
    if (!started_.load(std::memory_order_acquire) || thread_pid_ != getpid())
        return;
    stop_.store(true, std::memory_order_release);
    // The thread may have checked stop_ just before going to sleep: wake it
    // until it is gone rather than trusting one wake-up.
    for (;;) {
        futex_wake(&page_in_use_->hdr.coop_seq);
        timespec ts;
        clock_gettime(CLOCK_REALTIME, &ts);
        ts.tv_nsec += 10 * 1000 * 1000;
        if (ts.tv_nsec >= 1000000000) {
            ts.tv_sec++;
            ts.tv_nsec -= 1000000000;
        }
        if (pthread_timedjoin_np(thread_, nullptr, &ts) == 0)
            break;
    }
    started_.store(false, std::memory_order_release);
}

bool CoopWatcher::handle_pending(amdqp_act_page* page, std::uint64_t now_ns) {
    amdqp_act_header& h = page->hdr;
    std::uint32_t seq = ref(h.coop_seq).load(std::memory_order_acquire);
    if (seq == ref(h.coop_ack_seq).load(std::memory_order_relaxed))
        return false;
    bool suspend = ref(h.coop_suspend).load(std::memory_order_relaxed) != 0;
    std::uint64_t lease = ref(h.coop_lease_ns).load(std::memory_order_relaxed);
    if (suspend && lease != 0 && lease <= now_ns) {
        // Over before this process saw it (it was stopped or starved of
        // CPU for longer than the lease): the controller may be gone.
        lease_ran_out(page, seq);
        return true;
    }
    CoopOutcome out = registry_.apply_coop(suspend);
    leased_ = suspend && lease != 0;
    lease_span_ns_ = leased_ ? lease - now_ns : 0;
    ref(h.coop_updates).fetch_add(out.updates, std::memory_order_relaxed);
    ref(h.coop_error).store(out.error, std::memory_order_relaxed);
    std::uint32_t state = out.error ? AMDQP_ACT_COOP_FAILED
                          : suspend ? AMDQP_ACT_COOP_SUSPENDED
                                    : AMDQP_ACT_COOP_RUNNING;
    ref(h.coop_state).store(state, std::memory_order_relaxed);
    ref(h.coop_ack_seq).store(seq, std::memory_order_release);
    futex_wake(&h.coop_ack_seq);
    return true;
}

bool CoopWatcher::expire_if_due(amdqp_act_page* page, std::uint64_t now_ns) {
    if (!leased_)
        return false;
    std::uint64_t& field = page->hdr.coop_lease_ns;
    const std::uint64_t deadline = ref(field).load(std::memory_order_relaxed);
    if (now_ns < deadline)
        return false;
    sleep_ns(confirm_ns);
    if (ref(field).load(std::memory_order_relaxed) != deadline)
        return false;  // renewed meanwhile
    lease_ran_out(page, ref(page->hdr.coop_ack_seq).load(std::memory_order_relaxed));
    return true;
}

std::uint64_t CoopWatcher::next_check(amdqp_act_page* page, std::uint64_t now_ns) const {
    if (!leased_)
        return 0;
    const std::uint64_t deadline = ref(page->hdr.coop_lease_ns).load(std::memory_order_relaxed);
    if (deadline <= now_ns)
        return now_ns;
    // A deadline read half written may lie far ahead: look again after one
    // lease at the latest, by when the controller has stored a whole one.
    return std::min(deadline, now_ns + std::min(lease_span_ns_, UINT64_MAX - now_ns));
}

void CoopWatcher::lease_ran_out(amdqp_act_page* page, std::uint32_t seq) {
    amdqp_act_header& h = page->hdr;
    CoopOutcome out = registry_.apply_coop(false);
    leased_ = false;
    ref(h.coop_updates).fetch_add(out.updates, std::memory_order_relaxed);
    ref(h.coop_error).store(-ETIMEDOUT, std::memory_order_relaxed);
    ref(h.coop_state)
        .store(out.error ? AMDQP_ACT_COOP_FAILED : AMDQP_ACT_COOP_RUNNING,
               std::memory_order_relaxed);
    ref(h.coop_expired).fetch_add(1, std::memory_order_relaxed);
    // The same number again, as a release: whoever sees it sees the above.
    ref(h.coop_ack_seq).store(seq, std::memory_order_release);
    futex_wake(&h.coop_ack_seq);
}

void CoopWatcher::run(amdqp_act_page* page) {
    while (!stop_.load(std::memory_order_acquire)) {
        std::uint32_t seq = ref(page->hdr.coop_seq).load(std::memory_order_acquire);
        const std::uint64_t now = detail::monotonic_ns();
        if (handle_pending(page, now) || expire_if_due(page, now))
            continue;
        // Returns at once if coop_seq moved since it was read.
        futex_wait(&page->hdr.coop_seq, seq, next_check(page, now));
    }
}

}  // namespace amdqp::preload
