// SPDX-License-Identifier: MIT
// The stand-in's implementations of the API entries (what reset_api_table
// puts into the table). Queue index and signal operations are templates
// over the memory order of their _relaxed/_scacquire/_screlease/_scacq_screl
// variants.
#pragma once

#include <hsa/hsa.h>
#include <hsa/hsa_ext_amd.h>

#include <atomic>
#include <cstdint>

#include "aql.h"
#include "queue.h"
#include "signal.h"

namespace hsasim::impl {

constexpr std::memory_order kRelaxed = std::memory_order_relaxed;
constexpr std::memory_order kAcquire = std::memory_order_acquire;
constexpr std::memory_order kRelease = std::memory_order_release;
constexpr std::memory_order kAcqRel = std::memory_order_acq_rel;

constexpr std::memory_order load_part(std::memory_order o) {
    return o == kAcqRel ? kAcquire : o == kRelease ? kRelaxed : o;
}

// core_api.cpp
hsa_status_t status_string(hsa_status_t status, const char** string);
hsa_status_t init();
hsa_status_t shut_down();
hsa_status_t system_get_info(hsa_system_info_t attribute, void* value);
hsa_status_t system_extension_supported(uint16_t extension, uint16_t version_major,
                                        uint16_t version_minor, bool* result);
hsa_status_t system_major_extension_supported(uint16_t extension, uint16_t version_major,
                                              uint16_t* version_minor, bool* result);
hsa_status_t iterate_agents(hsa_status_t (*callback)(hsa_agent_t agent, void* data), void* data);
hsa_status_t agent_get_info(hsa_agent_t agent, hsa_agent_info_t attribute, void* value);
hsa_status_t agent_extension_supported(uint16_t extension, hsa_agent_t agent,
                                       uint16_t version_major, uint16_t version_minor,
                                       bool* result);
hsa_status_t agent_major_extension_supported(uint16_t extension, hsa_agent_t agent,
                                             uint16_t version_major, uint16_t* version_minor,
                                             bool* result);
hsa_status_t queue_create(hsa_agent_t agent, uint32_t size, hsa_queue_type32_t type,
                          void (*callback)(hsa_status_t status, hsa_queue_t* source, void* data),
                          void* data, uint32_t private_segment_size, uint32_t group_segment_size,
                          hsa_queue_t** queue);
hsa_status_t queue_destroy(hsa_queue_t* queue);
hsa_status_t queue_inactivate(hsa_queue_t* queue);
hsa_status_t agent_iterate_regions(hsa_agent_t agent,
                                   hsa_status_t (*callback)(hsa_region_t region, void* data),
                                   void* data);
hsa_status_t region_get_info(hsa_region_t region, hsa_region_info_t attribute, void* value);
hsa_status_t memory_register(void* ptr, size_t size);
hsa_status_t memory_deregister(void* ptr, size_t size);
hsa_status_t memory_allocate(hsa_region_t region, size_t size, void** ptr);
hsa_status_t memory_free(void* ptr);
hsa_status_t signal_create(hsa_signal_value_t initial_value, uint32_t num_consumers,
                           const hsa_agent_t* consumers, hsa_signal_t* signal);
hsa_status_t signal_destroy(hsa_signal_t signal);

// amd_ext_api.cpp
hsa_status_t amd_queue_set_priority(hsa_queue_t* queue, hsa_amd_queue_priority_t priority);
hsa_status_t amd_queue_cu_set_mask(const hsa_queue_t* queue, uint32_t num_cu_mask_count,
                                   const uint32_t* cu_mask);
hsa_status_t amd_queue_cu_get_mask(const hsa_queue_t* queue, uint32_t num_cu_mask_count,
                                   uint32_t* cu_mask);
hsa_status_t amd_signal_create(hsa_signal_value_t initial_value, uint32_t num_consumers,
                               const hsa_agent_t* consumers, uint64_t attributes,
                               hsa_signal_t* signal);
uint32_t amd_signal_wait_any(uint32_t signal_count, hsa_signal_t* signals,
                             hsa_signal_condition_t* conds, hsa_signal_value_t* values,
                             uint64_t timeout_hint, hsa_wait_state_t wait_hint,
                             hsa_signal_value_t* satisfying_value);

// Queue indices live in the control page; no lookup of the queue needed.
template <std::memory_order O>
uint64_t queue_load_read_index(const hsa_queue_t* q) {
    return read_index_of(q).load(O);
}

template <std::memory_order O>
uint64_t queue_load_write_index(const hsa_queue_t* q) {
    return write_index_of(q).load(O);
}

template <std::memory_order O>
void queue_store_write_index(const hsa_queue_t* q, uint64_t value) {
    write_index_of(q).store(value, O);
}

template <std::memory_order O>
uint64_t queue_cas_write_index(const hsa_queue_t* q, uint64_t expected, uint64_t value) {
    __u64 observed = expected;
    write_index_of(q).compare_exchange_strong(observed, value, O, load_part(O));
    return observed;
}

template <std::memory_order O>
uint64_t queue_add_write_index(const hsa_queue_t* q, uint64_t value) {
    return write_index_of(q).fetch_add(value, O);
}

// Only soft queues let the application move the read index; on these
// queues the packet processor owns it.
template <std::memory_order O>
void queue_store_read_index(const hsa_queue_t*, uint64_t) {}

// A user signal with its completed packets applied, or nullptr for a
// doorbell or an invalid handle.
inline Signal* user_signal(hsa_signal_t h) {
    Signal* s = Signal::from_handle(h);
    if (!s || s->doorbell_queue())
        return nullptr;
    s->resolve();
    return s;
}

template <std::memory_order O>
hsa_signal_value_t signal_load(hsa_signal_t h) {
    Signal* s = Signal::from_handle(h);
    if (!s)
        return 0;
    if (Queue* q = s->doorbell_queue())
        return q->last_doorbell();
    s->resolve();
    return s->abi.value.load(O);
}

template <std::memory_order O>
void signal_store(hsa_signal_t h, hsa_signal_value_t value) {
    Signal* s = Signal::from_handle(h);
    if (!s)
        return;
    if (Queue* q = s->doorbell_queue()) {
        q->store_doorbell(value);
        return;
    }
    s->resolve();
    s->abi.value.store(value, O);
}

template <std::memory_order O>
hsa_signal_value_t signal_exchange(hsa_signal_t h, hsa_signal_value_t value) {
    Signal* s = user_signal(h);
    return s ? s->abi.value.exchange(value, O) : 0;
}

template <std::memory_order O>
hsa_signal_value_t signal_cas(hsa_signal_t h, hsa_signal_value_t expected,
                              hsa_signal_value_t value) {
    Signal* s = user_signal(h);
    if (!s)
        return 0;
    s->abi.value.compare_exchange_strong(expected, value, O, load_part(O));
    return expected;
}

template <std::memory_order O>
void signal_add(hsa_signal_t h, hsa_signal_value_t value) {
    if (Signal* s = user_signal(h))
        s->abi.value.fetch_add(value, O);
}

template <std::memory_order O>
void signal_subtract(hsa_signal_t h, hsa_signal_value_t value) {
    if (Signal* s = user_signal(h))
        s->abi.value.fetch_sub(value, O);
}

template <std::memory_order O>
void signal_and(hsa_signal_t h, hsa_signal_value_t value) {
    if (Signal* s = user_signal(h))
        s->abi.value.fetch_and(value, O);
}

template <std::memory_order O>
void signal_or(hsa_signal_t h, hsa_signal_value_t value) {
    if (Signal* s = user_signal(h))
        s->abi.value.fetch_or(value, O);
}

template <std::memory_order O>
void signal_xor(hsa_signal_t h, hsa_signal_value_t value) {
    if (Signal* s = user_signal(h))
        s->abi.value.fetch_xor(value, O);
}

template <std::memory_order O>
hsa_signal_value_t signal_wait(hsa_signal_t h, hsa_signal_condition_t condition,
                               hsa_signal_value_t compare_value, uint64_t timeout_hint,
                               hsa_wait_state_t) {
    Signal* s = Signal::from_handle(h);
    if (!s || s->doorbell_queue())
        return 0;
    // Timestamps tick in ns (HSA_SYSTEM_INFO_TIMESTAMP_FREQUENCY is 1 GHz).
    return s->wait(condition, compare_value, timeout_hint, O);
}

}  // namespace hsasim::impl
