// SPDX-License-Identifier: MIT
#include "completion.h"

#include <atomic>
#include <cerrno>

namespace hsasim {

namespace {
hsa_status_t status_of_queue_error(int32_t err) {
    switch (err) {
        case -EINVAL:
            return HSA_STATUS_ERROR_INVALID_PACKET_FORMAT;
        case -EIO:
            return HSA_STATUS_ERROR_FATAL;
        default:
            return HSA_STATUS_ERROR;
    }
}
}  // namespace

uint64_t CompletionSource::read_index(bool report_error) {
    Callback report = nullptr;
    hsa_status_t status = HSA_STATUS_SUCCESS;
    hsa_queue_t* queue = nullptr;
    uint64_t index;
    {
        std::lock_guard lock(mu_);
        if (!ctl_)
            return frozen_;
        index = std::atomic_ref<__u64>(ctl_->read_index).load(std::memory_order_acquire);
        int32_t err = std::atomic_ref<__s32>(ctl_->error).load(std::memory_order_relaxed);
        if (err && report_error && !error_reported_) {
            error_reported_ = true;
            report = callback_;
            status = status_of_queue_error(err);
            queue = reinterpret_cast<hsa_queue_t*>(ctl_);
        }
    }
    // Outside the lock: the callback may call back into the runtime.
    if (report)
        report(status, queue, data_);
    return index;
}

void CompletionSource::detach() {
    std::lock_guard lock(mu_);
    if (!ctl_)
        return;
    frozen_ = std::atomic_ref<__u64>(ctl_->read_index).load(std::memory_order_acquire);
    ctl_ = nullptr;
}

}  // namespace hsasim
