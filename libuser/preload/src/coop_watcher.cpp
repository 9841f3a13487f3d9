// SPDX-License-Identifier: MIT
#include "coop_watcher.hpp"

#include <linux/futex.h>
#include <pthread.h>
#include <signal.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <cerrno>
#include <climits>

namespace amdqp::preload {

namespace {

template <typename T>
std::atomic_ref<T> ref(T& field) {
    return std::atomic_ref<T>(field);
}

// Not FUTEX_PRIVATE: the controller waits and wakes in its own mapping.
void futex_wait(std::uint32_t* addr, std::uint32_t expected) {
    syscall(SYS_futex, addr, FUTEX_WAIT, expected, nullptr, nullptr, 0);
}

void futex_wake(std::uint32_t* addr) {
    syscall(SYS_futex, addr, FUTEX_WAKE, INT_MAX, nullptr, nullptr, 0);
}

struct ThreadArgs {
    CoopWatcher* watcher;
    amdqp_act_page* page;
};

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
    pthread_attr_setdetachstate(&attr, PTHREAD_CREATE_DETACHED);
    pthread_attr_setstacksize(&attr, 64 * 1024);
    // The arguments live as long as the process: the thread never ends.
    static ThreadArgs args;
    args = {this, page};
    pthread_t thread;
    int rc = pthread_create(
        &thread, &attr,
        [](void* p) -> void* {
            auto* a = static_cast<ThreadArgs*>(p);
            a->watcher->run(a->page);
            return nullptr;
        },
        &args);
    pthread_attr_destroy(&attr);
    pthread_sigmask(SIG_SETMASK, &old, nullptr);
    if (rc != 0) {
        started_.store(false, std::memory_order_release);
        return false;
    }
    pthread_setname_np(thread, "amdqp-coop");
    return true;
}

bool CoopWatcher::handle_pending(amdqp_act_page* page) {
    amdqp_act_header& h = page->hdr;
    std::uint32_t seq = ref(h.coop_seq).load(std::memory_order_acquire);
    if (seq == ref(h.coop_ack_seq).load(std::memory_order_relaxed))
        return false;
    bool suspend = ref(h.coop_suspend).load(std::memory_order_relaxed) != 0;
    CoopOutcome out = registry_.apply_coop(suspend);
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

void CoopWatcher::run(amdqp_act_page* page) {
    for (;;) {
        std::uint32_t seq = ref(page->hdr.coop_seq).load(std::memory_order_acquire);
        if (handle_pending(page))
            continue;
        // Returns at once if coop_seq moved since it was read.
        futex_wait(&page->hdr.coop_seq, seq);
    }
}

}  // namespace amdqp::preload
