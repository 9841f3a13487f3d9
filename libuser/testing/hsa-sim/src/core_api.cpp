// SPDX-License-Identifier: MIT
// Core HSA entries that need the runtime instance.
#include <cstdlib>
#include <cstring>

#include "impl.h"
#include "runtime.h"
#include "util.h"

namespace hsasim::impl {

namespace {
constexpr size_t kAllocAlignment = 4096;
}  // namespace

hsa_status_t init() {
    return Runtime::acquire();
}

hsa_status_t shut_down() {
    return Runtime::release();
}

hsa_status_t system_get_info(hsa_system_info_t attribute, void* value) {
    if (!Runtime::get())
        return HSA_STATUS_ERROR_NOT_INITIALIZED;
    if (!value)
        return HSA_STATUS_ERROR_INVALID_ARGUMENT;
    switch (attribute) {
        case HSA_SYSTEM_INFO_VERSION_MAJOR:
        case HSA_SYSTEM_INFO_VERSION_MINOR: {
            const uint16_t v = 1;
            memcpy(value, &v, sizeof(v));
            return HSA_STATUS_SUCCESS;
        }
        case HSA_SYSTEM_INFO_TIMESTAMP: {
            const uint64_t v = now_ns();
            memcpy(value, &v, sizeof(v));
            return HSA_STATUS_SUCCESS;
        }
        case HSA_SYSTEM_INFO_TIMESTAMP_FREQUENCY: {
            const uint64_t v = 1000000000;
            memcpy(value, &v, sizeof(v));
            return HSA_STATUS_SUCCESS;
        }
        case HSA_SYSTEM_INFO_SIGNAL_MAX_WAIT: {
            const uint64_t v = UINT64_MAX;
            memcpy(value, &v, sizeof(v));
            return HSA_STATUS_SUCCESS;
        }
        case HSA_SYSTEM_INFO_ENDIANNESS: {
            const hsa_endianness_t v = HSA_ENDIANNESS_LITTLE;
            memcpy(value, &v, sizeof(v));
            return HSA_STATUS_SUCCESS;
        }
        case HSA_SYSTEM_INFO_MACHINE_MODEL: {
            const hsa_machine_model_t v = HSA_MACHINE_MODEL_LARGE;
            memcpy(value, &v, sizeof(v));
            return HSA_STATUS_SUCCESS;
        }
        case HSA_SYSTEM_INFO_EXTENSIONS:
            memset(value, 0, 128);
            return HSA_STATUS_SUCCESS;
        default:
            return HSA_STATUS_ERROR_INVALID_ARGUMENT;
    }
}

// No extension (finalizer, images, ...) is offered.
hsa_status_t system_extension_supported(uint16_t, uint16_t, uint16_t, bool* result) {
    if (!Runtime::get())
        return HSA_STATUS_ERROR_NOT_INITIALIZED;
    if (!result)
        return HSA_STATUS_ERROR_INVALID_ARGUMENT;
    *result = false;
    return HSA_STATUS_SUCCESS;
}

hsa_status_t system_major_extension_supported(uint16_t, uint16_t, uint16_t* version_minor,
                                              bool* result) {
    if (!Runtime::get())
        return HSA_STATUS_ERROR_NOT_INITIALIZED;
    if (!result || !version_minor)
        return HSA_STATUS_ERROR_INVALID_ARGUMENT;
    *result = false;
    return HSA_STATUS_SUCCESS;
}

hsa_status_t iterate_agents(hsa_status_t (*callback)(hsa_agent_t agent, void* data), void* data) {
    Runtime* rt = Runtime::get();
    if (!rt)
        return HSA_STATUS_ERROR_NOT_INITIALIZED;
    if (!callback)
        return HSA_STATUS_ERROR_INVALID_ARGUMENT;
    for (const auto& a : rt->agents()) {
        hsa_status_t st = callback(a->handle(), data);
        if (st != HSA_STATUS_SUCCESS)
            return st;
    }
    return HSA_STATUS_SUCCESS;
}

hsa_status_t agent_get_info(hsa_agent_t agent, hsa_agent_info_t attribute, void* value) {
    Runtime* rt = Runtime::get();
    if (!rt)
        return HSA_STATUS_ERROR_NOT_INITIALIZED;
    const Agent* a = rt->find_agent(agent);
    if (!a)
        return HSA_STATUS_ERROR_INVALID_AGENT;
    if (!value)
        return HSA_STATUS_ERROR_INVALID_ARGUMENT;
    return hsasim::agent_get_info(*a, static_cast<uint32_t>(attribute), value);
}

hsa_status_t agent_extension_supported(uint16_t, hsa_agent_t agent, uint16_t, uint16_t,
                                       bool* result) {
    Runtime* rt = Runtime::get();
    if (!rt)
        return HSA_STATUS_ERROR_NOT_INITIALIZED;
    if (!rt->find_agent(agent))
        return HSA_STATUS_ERROR_INVALID_AGENT;
    if (!result)
        return HSA_STATUS_ERROR_INVALID_ARGUMENT;
    *result = false;
    return HSA_STATUS_SUCCESS;
}

hsa_status_t agent_major_extension_supported(uint16_t, hsa_agent_t agent, uint16_t,
                                             uint16_t* version_minor, bool* result) {
    Runtime* rt = Runtime::get();
    if (!rt)
        return HSA_STATUS_ERROR_NOT_INITIALIZED;
    if (!rt->find_agent(agent))
        return HSA_STATUS_ERROR_INVALID_AGENT;
    if (!result || !version_minor)
        return HSA_STATUS_ERROR_INVALID_ARGUMENT;
    *result = false;
    return HSA_STATUS_SUCCESS;
}

hsa_status_t queue_create(hsa_agent_t agent, uint32_t size, hsa_queue_type32_t type,
                          void (*callback)(hsa_status_t status, hsa_queue_t* source, void* data),
                          void* data, uint32_t, uint32_t, hsa_queue_t** queue) {
    Runtime* rt = Runtime::get();
    if (!rt)
        return HSA_STATUS_ERROR_NOT_INITIALIZED;
    const Agent* a = rt->find_agent(agent);
    if (!a)
        return HSA_STATUS_ERROR_INVALID_AGENT;
    if (!queue || size == 0 || (size & (size - 1)) != 0 || size > kQueueMaxPackets ||
        (type != HSA_QUEUE_TYPE_MULTI && type != HSA_QUEUE_TYPE_SINGLE))
        return HSA_STATUS_ERROR_INVALID_ARGUMENT;
    if (a->device != HSA_DEVICE_TYPE_GPU)
        return HSA_STATUS_ERROR_INVALID_QUEUE_CREATION;
    return rt->create_queue(*a, size, type, callback, data, queue);
}

hsa_status_t queue_destroy(hsa_queue_t* queue) {
    Runtime* rt = Runtime::get();
    if (!rt)
        return HSA_STATUS_ERROR_NOT_INITIALIZED;
    if (!queue)
        return HSA_STATUS_ERROR_INVALID_QUEUE;
    return rt->destroy_queue(queue);
}

hsa_status_t queue_inactivate(hsa_queue_t* queue) {
    Runtime* rt = Runtime::get();
    if (!rt)
        return HSA_STATUS_ERROR_NOT_INITIALIZED;
    std::unique_lock<std::mutex> hold;
    Queue* q = queue ? rt->find_queue(queue, &hold) : nullptr;
    if (!q)
        return HSA_STATUS_ERROR_INVALID_QUEUE;
    q->inactivate();
    return HSA_STATUS_SUCCESS;
}

hsa_status_t agent_iterate_regions(hsa_agent_t agent,
                                   hsa_status_t (*callback)(hsa_region_t region, void* data),
                                   void* data) {
    Runtime* rt = Runtime::get();
    if (!rt)
        return HSA_STATUS_ERROR_NOT_INITIALIZED;
    const Agent* a = rt->find_agent(agent);
    if (!a)
        return HSA_STATUS_ERROR_INVALID_AGENT;
    if (!callback)
        return HSA_STATUS_ERROR_INVALID_ARGUMENT;
    return callback(a->region(), data);
}

hsa_status_t region_get_info(hsa_region_t region, hsa_region_info_t attribute, void* value) {
    Runtime* rt = Runtime::get();
    if (!rt)
        return HSA_STATUS_ERROR_NOT_INITIALIZED;
    const Agent* a = rt->find_region(region);
    if (!a)
        return HSA_STATUS_ERROR_INVALID_REGION;
    if (!value)
        return HSA_STATUS_ERROR_INVALID_ARGUMENT;
    return hsasim::region_get_info(*a, static_cast<uint32_t>(attribute), value);
}

// Host memory is what every agent of the stand-in sees: nothing to pin.
hsa_status_t memory_register(void* ptr, size_t size) {
    if (!Runtime::get())
        return HSA_STATUS_ERROR_NOT_INITIALIZED;
    return ptr || size == 0 ? HSA_STATUS_SUCCESS : HSA_STATUS_ERROR_INVALID_ARGUMENT;
}

hsa_status_t memory_deregister(void*, size_t) {
    return Runtime::get() ? HSA_STATUS_SUCCESS : HSA_STATUS_ERROR_NOT_INITIALIZED;
}

hsa_status_t memory_allocate(hsa_region_t region, size_t size, void** ptr) {
    Runtime* rt = Runtime::get();
    if (!rt)
        return HSA_STATUS_ERROR_NOT_INITIALIZED;
    if (!rt->find_region(region))
        return HSA_STATUS_ERROR_INVALID_REGION;
    if (!ptr || size == 0)
        return HSA_STATUS_ERROR_INVALID_ARGUMENT;
    const size_t rounded = (size + kAllocAlignment - 1) / kAllocAlignment * kAllocAlignment;
    void* p = aligned_alloc(kAllocAlignment, rounded);
    if (!p)
        return HSA_STATUS_ERROR_OUT_OF_RESOURCES;
    memset(p, 0, rounded);
    *ptr = p;
    return HSA_STATUS_SUCCESS;
}

hsa_status_t memory_free(void* ptr) {
    if (!Runtime::get())
        return HSA_STATUS_ERROR_NOT_INITIALIZED;
    free(ptr);
    return HSA_STATUS_SUCCESS;
}

hsa_status_t signal_create(hsa_signal_value_t initial_value, uint32_t num_consumers,
                           const hsa_agent_t* consumers, hsa_signal_t* signal) {
    Runtime* rt = Runtime::get();
    if (!rt)
        return HSA_STATUS_ERROR_NOT_INITIALIZED;
    if (!signal || (num_consumers > 0 && !consumers))
        return HSA_STATUS_ERROR_INVALID_ARGUMENT;
    for (uint32_t i = 0; i < num_consumers; ++i) {
        if (!rt->find_agent(consumers[i]))
            return HSA_STATUS_ERROR_INVALID_AGENT;
    }
    *signal = rt->signals().create(initial_value)->handle();
    return HSA_STATUS_SUCCESS;
}

hsa_status_t signal_destroy(hsa_signal_t signal) {
    Runtime* rt = Runtime::get();
    if (!rt)
        return HSA_STATUS_ERROR_NOT_INITIALIZED;
    Signal* s = Signal::from_handle(signal);
    // Doorbell signals belong to their queue.
    if (!s || s->doorbell_queue() || !rt->signals().destroy(s))
        return HSA_STATUS_ERROR_INVALID_SIGNAL;
    return HSA_STATUS_SUCCESS;
}

}  // namespace hsasim::impl
