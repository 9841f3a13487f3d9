// SPDX-License-Identifier: MIT
// The AMD extension entries the stand-in implements.
#include <algorithm>

#include "impl.h"
#include "runtime.h"
#include "util.h"

namespace hsasim::impl {

hsa_status_t amd_queue_set_priority(hsa_queue_t* queue, hsa_amd_queue_priority_t priority) {
    Runtime* rt = Runtime::get();
    if (!rt)
        return HSA_STATUS_ERROR_NOT_INITIALIZED;
    // amdqp's levels (KFD priorities): low 2, normal 7, high 12.
    uint32_t level;
    switch (priority) {
        case HSA_AMD_QUEUE_PRIORITY_LOW:
            level = 2;
            break;
        case HSA_AMD_QUEUE_PRIORITY_NORMAL:
            level = 7;
            break;
        case HSA_AMD_QUEUE_PRIORITY_HIGH:
            level = 12;
            break;
        default:
            return HSA_STATUS_ERROR_INVALID_ARGUMENT;
    }
    std::unique_lock<std::mutex> hold;
    Queue* q = queue ? rt->find_queue(queue, &hold) : nullptr;
    if (!q)
        return HSA_STATUS_ERROR_INVALID_QUEUE;
    return q->hw().set_priority(level);
}

hsa_status_t amd_queue_cu_set_mask(const hsa_queue_t* queue, uint32_t num_cu_mask_count,
                                   const uint32_t* cu_mask) {
    Runtime* rt = Runtime::get();
    if (!rt)
        return HSA_STATUS_ERROR_NOT_INITIALIZED;
    if (num_cu_mask_count % 32 != 0 || (num_cu_mask_count && !cu_mask))
        return HSA_STATUS_ERROR_INVALID_ARGUMENT;
    std::unique_lock<std::mutex> hold;
    Queue* q = queue ? rt->find_queue(const_cast<hsa_queue_t*>(queue), &hold) : nullptr;
    if (!q)
        return HSA_STATUS_ERROR_INVALID_QUEUE;
    return q->set_cu_mask(num_cu_mask_count, cu_mask);
}

hsa_status_t amd_queue_cu_get_mask(const hsa_queue_t* queue, uint32_t num_cu_mask_count,
                                   uint32_t* cu_mask) {
    Runtime* rt = Runtime::get();
    if (!rt)
        return HSA_STATUS_ERROR_NOT_INITIALIZED;
    if (num_cu_mask_count == 0 || num_cu_mask_count % 32 != 0 || !cu_mask)
        return HSA_STATUS_ERROR_INVALID_ARGUMENT;
    std::unique_lock<std::mutex> hold;
    Queue* q = queue ? rt->find_queue(const_cast<hsa_queue_t*>(queue), &hold) : nullptr;
    if (!q)
        return HSA_STATUS_ERROR_INVALID_QUEUE;
    q->get_cu_mask(num_cu_mask_count, cu_mask);
    return HSA_STATUS_SUCCESS;
}

hsa_status_t amd_signal_create(hsa_signal_value_t initial_value, uint32_t num_consumers,
                               const hsa_agent_t* consumers, uint64_t, hsa_signal_t* signal) {
    return signal_create(initial_value, num_consumers, consumers, signal);
}

uint32_t amd_signal_wait_any(uint32_t signal_count, hsa_signal_t* signals,
                             hsa_signal_condition_t* conds, hsa_signal_value_t* values,
                             uint64_t timeout_hint, hsa_wait_state_t,
                             hsa_signal_value_t* satisfying_value) {
    if (signal_count == 0 || !signals || !conds || !values)
        return UINT32_MAX;
    const uint64_t start = now_ns();
    const uint64_t deadline = timeout_hint > UINT64_MAX - start ? UINT64_MAX : start + timeout_hint;
    for (;;) {
        for (uint32_t i = 0; i < signal_count; ++i) {
            Signal* s = Signal::from_handle(signals[i]);
            if (!s || s->doorbell_queue())
                continue;
            s->resolve();
            const hsa_signal_value_t v = s->abi.value.load(std::memory_order_acquire);
            if (condition_met(conds[i], v, values[i])) {
                if (satisfying_value)
                    *satisfying_value = v;
                return i;
            }
        }
        const uint64_t now = now_ns();
        if (now >= deadline)
            return UINT32_MAX;
        sleep_ns(std::min(wait_poll_ns(), deadline - now));
    }
}

}  // namespace hsasim::impl
