// SPDX-License-Identifier: MIT
//
// The hint API: counters in the activity page, no system call once the page
// exists. Errors are reported by the return value only: a hint must never
// disturb the application.
#include <amdqp/amdqp.h>
#include <amdqp/hint.h>

#include <atomic>

#include "activity_page.hpp"
#include "activity_proc.hpp"
#include "busy_announce.hpp"

namespace {

using amdqp::detail::ActivityWriter;

int status_of_page_error(int err) {
    return err == EACCES || err == EPERM ? AMDQP_ERR_PERMISSION : AMDQP_ERR_SYSTEM;
}

}  // namespace

extern "C" int amdqp_busy_begin(void) {
    ActivityWriter& writer = ActivityWriter::instance();
    amdqp_act_page* page = writer.page();
    if (!page)
        return status_of_page_error(writer.error());
    amdqp_act_header& h = page->hdr;
    const std::uint64_t before =
        std::atomic_ref<std::uint64_t>(h.hint_begin).fetch_add(1, std::memory_order_relaxed);
    std::atomic_ref<std::uint64_t>(h.hint_last_ns)
        .store(amdqp::detail::monotonic_ns(), std::memory_order_release);
    // The first open hint makes the process busy: tell a controller that
    // asked, and let it act before the work is submitted.
    if (before == std::atomic_ref<std::uint64_t>(h.hint_end).load(std::memory_order_relaxed))
        amdqp::detail::announce_busy(h, amdqp::detail::controller_flags(h));
    return AMDQP_OK;
}

extern "C" int amdqp_busy_end(void) {
    ActivityWriter& writer = ActivityWriter::instance();
    amdqp_act_page* page = writer.page();
    if (!page)
        return status_of_page_error(writer.error());
    amdqp_act_header& h = page->hdr;
    // An end without its begin must not leave the process "busy" forever
    // (busy while begin != end), so end never overtakes begin.
    std::atomic_ref<std::uint64_t> begin(h.hint_begin);
    std::atomic_ref<std::uint64_t> end(h.hint_end);
    std::uint64_t e = end.load(std::memory_order_relaxed);
    do {
        if (e >= begin.load(std::memory_order_relaxed))
            return AMDQP_ERR_INVALID;
    } while (!end.compare_exchange_weak(e, e + 1, std::memory_order_relaxed));
    std::atomic_ref<std::uint64_t>(h.hint_last_ns)
        .store(amdqp::detail::monotonic_ns(), std::memory_order_release);
    return AMDQP_OK;
}
