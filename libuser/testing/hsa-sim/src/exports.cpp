// SPDX-License-Identifier: MIT
// The exported HSA names. Each one calls through the API table, as ROCr's
// do, so that a tools library that replaced an entry sees the call. The
// deprecated _acquire/_release/_acq_rel names use the entries of their
// _scacquire/_screlease/_scacq_screl successors, as in ROCr.
// Keep in step with exports.map (the export list; a test compares them).

// Default visibility for the HSA declarations (the rest of the library is
// hidden). Not through HSA_EXPORT: hsa_ext_image.h redefines HSA_API, which
// would hide the hsa_amd_* names declared after it.
#pragma GCC visibility push(default)
#include <hsa/hsa.h>
#include <hsa/hsa_ext_amd.h>
#pragma GCC visibility pop

#include "api_table.h"

#define CORE(name) hsasim::g_api.core.name##_fn
#define AMD(name) hsasim::g_api.amd_ext.name##_fn

hsa_status_t hsa_status_string(hsa_status_t status, const char** status_string) {
    return CORE(hsa_status_string)(status, status_string);
}
hsa_status_t hsa_init() {
    return CORE(hsa_init)();
}
hsa_status_t hsa_shut_down() {
    return CORE(hsa_shut_down)();
}
hsa_status_t hsa_system_get_info(hsa_system_info_t attribute, void* value) {
    return CORE(hsa_system_get_info)(attribute, value);
}
hsa_status_t hsa_system_extension_supported(uint16_t extension, uint16_t version_major,
                                            uint16_t version_minor, bool* result) {
    return CORE(hsa_system_extension_supported)(extension, version_major, version_minor, result);
}
hsa_status_t hsa_system_major_extension_supported(uint16_t extension, uint16_t version_major,
                                                  uint16_t* version_minor, bool* result) {
    return CORE(hsa_system_major_extension_supported)(extension, version_major, version_minor,
                                                      result);
}
hsa_status_t hsa_iterate_agents(hsa_status_t (*callback)(hsa_agent_t agent, void* data),
                                void* data) {
    return CORE(hsa_iterate_agents)(callback, data);
}

hsa_status_t hsa_agent_get_info(hsa_agent_t agent, hsa_agent_info_t attribute, void* value) {
    return CORE(hsa_agent_get_info)(agent, attribute, value);
}
hsa_status_t hsa_agent_extension_supported(uint16_t extension, hsa_agent_t agent,
                                           uint16_t version_major, uint16_t version_minor,
                                           bool* result) {
    return CORE(hsa_agent_extension_supported)(extension, agent, version_major, version_minor,
                                               result);
}
hsa_status_t hsa_agent_major_extension_supported(uint16_t extension, hsa_agent_t agent,
                                                 uint16_t version_major, uint16_t* version_minor,
                                                 bool* result) {
    return CORE(hsa_agent_major_extension_supported)(extension, agent, version_major, version_minor,
                                                     result);
}
hsa_status_t hsa_agent_iterate_regions(hsa_agent_t agent,
                                       hsa_status_t (*callback)(hsa_region_t region, void* data),
                                       void* data) {
    return CORE(hsa_agent_iterate_regions)(agent, callback, data);
}
hsa_status_t hsa_region_get_info(hsa_region_t region, hsa_region_info_t attribute, void* value) {
    return CORE(hsa_region_get_info)(region, attribute, value);
}
hsa_status_t hsa_memory_register(void* ptr, size_t size) {
    return CORE(hsa_memory_register)(ptr, size);
}
hsa_status_t hsa_memory_deregister(void* ptr, size_t size) {
    return CORE(hsa_memory_deregister)(ptr, size);
}
hsa_status_t hsa_memory_allocate(hsa_region_t region, size_t size, void** ptr) {
    return CORE(hsa_memory_allocate)(region, size, ptr);
}
hsa_status_t hsa_memory_free(void* ptr) {
    return CORE(hsa_memory_free)(ptr);
}

hsa_status_t hsa_queue_create(hsa_agent_t agent, uint32_t size, hsa_queue_type32_t type,
                              void (*callback)(hsa_status_t status, hsa_queue_t* source,
                                               void* data),
                              void* data, uint32_t private_segment_size,
                              uint32_t group_segment_size, hsa_queue_t** queue) {
    return CORE(hsa_queue_create)(agent, size, type, callback, data, private_segment_size,
                                  group_segment_size, queue);
}
hsa_status_t hsa_queue_destroy(hsa_queue_t* queue) {
    return CORE(hsa_queue_destroy)(queue);
}
hsa_status_t hsa_queue_inactivate(hsa_queue_t* queue) {
    return CORE(hsa_queue_inactivate)(queue);
}
uint64_t hsa_queue_load_read_index_scacquire(const hsa_queue_t* queue) {
    return CORE(hsa_queue_load_read_index_scacquire)(queue);
}
uint64_t hsa_queue_load_read_index_relaxed(const hsa_queue_t* queue) {
    return CORE(hsa_queue_load_read_index_relaxed)(queue);
}
uint64_t hsa_queue_load_read_index_acquire(const hsa_queue_t* queue) {
    return CORE(hsa_queue_load_read_index_scacquire)(queue);
}
uint64_t hsa_queue_load_write_index_scacquire(const hsa_queue_t* queue) {
    return CORE(hsa_queue_load_write_index_scacquire)(queue);
}
uint64_t hsa_queue_load_write_index_relaxed(const hsa_queue_t* queue) {
    return CORE(hsa_queue_load_write_index_relaxed)(queue);
}
uint64_t hsa_queue_load_write_index_acquire(const hsa_queue_t* queue) {
    return CORE(hsa_queue_load_write_index_scacquire)(queue);
}
void hsa_queue_store_write_index_relaxed(const hsa_queue_t* queue, uint64_t value) {
    CORE(hsa_queue_store_write_index_relaxed)(queue, value);
}
void hsa_queue_store_write_index_screlease(const hsa_queue_t* queue, uint64_t value) {
    CORE(hsa_queue_store_write_index_screlease)(queue, value);
}
void hsa_queue_store_write_index_release(const hsa_queue_t* queue, uint64_t value) {
    CORE(hsa_queue_store_write_index_screlease)(queue, value);
}
uint64_t hsa_queue_cas_write_index_scacq_screl(const hsa_queue_t* queue, uint64_t expected,
                                               uint64_t value) {
    return CORE(hsa_queue_cas_write_index_scacq_screl)(queue, expected, value);
}
uint64_t hsa_queue_cas_write_index_scacquire(const hsa_queue_t* queue, uint64_t expected,
                                             uint64_t value) {
    return CORE(hsa_queue_cas_write_index_scacquire)(queue, expected, value);
}
uint64_t hsa_queue_cas_write_index_relaxed(const hsa_queue_t* queue, uint64_t expected,
                                           uint64_t value) {
    return CORE(hsa_queue_cas_write_index_relaxed)(queue, expected, value);
}
uint64_t hsa_queue_cas_write_index_screlease(const hsa_queue_t* queue, uint64_t expected,
                                             uint64_t value) {
    return CORE(hsa_queue_cas_write_index_screlease)(queue, expected, value);
}
uint64_t hsa_queue_cas_write_index_acq_rel(const hsa_queue_t* queue, uint64_t expected,
                                           uint64_t value) {
    return CORE(hsa_queue_cas_write_index_scacq_screl)(queue, expected, value);
}
uint64_t hsa_queue_cas_write_index_acquire(const hsa_queue_t* queue, uint64_t expected,
                                           uint64_t value) {
    return CORE(hsa_queue_cas_write_index_scacquire)(queue, expected, value);
}
uint64_t hsa_queue_cas_write_index_release(const hsa_queue_t* queue, uint64_t expected,
                                           uint64_t value) {
    return CORE(hsa_queue_cas_write_index_screlease)(queue, expected, value);
}
uint64_t hsa_queue_add_write_index_scacq_screl(const hsa_queue_t* queue, uint64_t value) {
    return CORE(hsa_queue_add_write_index_scacq_screl)(queue, value);
}
uint64_t hsa_queue_add_write_index_scacquire(const hsa_queue_t* queue, uint64_t value) {
    return CORE(hsa_queue_add_write_index_scacquire)(queue, value);
}
uint64_t hsa_queue_add_write_index_relaxed(const hsa_queue_t* queue, uint64_t value) {
    return CORE(hsa_queue_add_write_index_relaxed)(queue, value);
}
uint64_t hsa_queue_add_write_index_screlease(const hsa_queue_t* queue, uint64_t value) {
    return CORE(hsa_queue_add_write_index_screlease)(queue, value);
}
uint64_t hsa_queue_add_write_index_acq_rel(const hsa_queue_t* queue, uint64_t value) {
    return CORE(hsa_queue_add_write_index_scacq_screl)(queue, value);
}
uint64_t hsa_queue_add_write_index_acquire(const hsa_queue_t* queue, uint64_t value) {
    return CORE(hsa_queue_add_write_index_scacquire)(queue, value);
}
uint64_t hsa_queue_add_write_index_release(const hsa_queue_t* queue, uint64_t value) {
    return CORE(hsa_queue_add_write_index_screlease)(queue, value);
}
void hsa_queue_store_read_index_relaxed(const hsa_queue_t* queue, uint64_t value) {
    CORE(hsa_queue_store_read_index_relaxed)(queue, value);
}
void hsa_queue_store_read_index_screlease(const hsa_queue_t* queue, uint64_t value) {
    CORE(hsa_queue_store_read_index_screlease)(queue, value);
}
void hsa_queue_store_read_index_release(const hsa_queue_t* queue, uint64_t value) {
    CORE(hsa_queue_store_read_index_screlease)(queue, value);
}

hsa_status_t hsa_signal_create(hsa_signal_value_t initial_value, uint32_t num_consumers,
                               const hsa_agent_t* consumers, hsa_signal_t* signal) {
    return CORE(hsa_signal_create)(initial_value, num_consumers, consumers, signal);
}
hsa_status_t hsa_signal_destroy(hsa_signal_t signal) {
    return CORE(hsa_signal_destroy)(signal);
}
hsa_signal_value_t hsa_signal_load_scacquire(hsa_signal_t signal) {
    return CORE(hsa_signal_load_scacquire)(signal);
}
hsa_signal_value_t hsa_signal_load_relaxed(hsa_signal_t signal) {
    return CORE(hsa_signal_load_relaxed)(signal);
}
hsa_signal_value_t hsa_signal_load_acquire(hsa_signal_t signal) {
    return CORE(hsa_signal_load_scacquire)(signal);
}
void hsa_signal_store_relaxed(hsa_signal_t signal, hsa_signal_value_t value) {
    CORE(hsa_signal_store_relaxed)(signal, value);
}
void hsa_signal_store_screlease(hsa_signal_t signal, hsa_signal_value_t value) {
    CORE(hsa_signal_store_screlease)(signal, value);
}
void hsa_signal_store_release(hsa_signal_t signal, hsa_signal_value_t value) {
    CORE(hsa_signal_store_screlease)(signal, value);
}
void hsa_signal_silent_store_relaxed(hsa_signal_t signal, hsa_signal_value_t value) {
    CORE(hsa_signal_silent_store_relaxed)(signal, value);
}
void hsa_signal_silent_store_screlease(hsa_signal_t signal, hsa_signal_value_t value) {
    CORE(hsa_signal_silent_store_screlease)(signal, value);
}
hsa_signal_value_t hsa_signal_exchange_scacq_screl(hsa_signal_t signal, hsa_signal_value_t value) {
    return CORE(hsa_signal_exchange_scacq_screl)(signal, value);
}
hsa_signal_value_t hsa_signal_exchange_scacquire(hsa_signal_t signal, hsa_signal_value_t value) {
    return CORE(hsa_signal_exchange_scacquire)(signal, value);
}
hsa_signal_value_t hsa_signal_exchange_relaxed(hsa_signal_t signal, hsa_signal_value_t value) {
    return CORE(hsa_signal_exchange_relaxed)(signal, value);
}
hsa_signal_value_t hsa_signal_exchange_screlease(hsa_signal_t signal, hsa_signal_value_t value) {
    return CORE(hsa_signal_exchange_screlease)(signal, value);
}
hsa_signal_value_t hsa_signal_exchange_acq_rel(hsa_signal_t signal, hsa_signal_value_t value) {
    return CORE(hsa_signal_exchange_scacq_screl)(signal, value);
}
hsa_signal_value_t hsa_signal_exchange_acquire(hsa_signal_t signal, hsa_signal_value_t value) {
    return CORE(hsa_signal_exchange_scacquire)(signal, value);
}
hsa_signal_value_t hsa_signal_exchange_release(hsa_signal_t signal, hsa_signal_value_t value) {
    return CORE(hsa_signal_exchange_screlease)(signal, value);
}
hsa_signal_value_t hsa_signal_cas_scacq_screl(hsa_signal_t signal, hsa_signal_value_t expected,
                                              hsa_signal_value_t value) {
    return CORE(hsa_signal_cas_scacq_screl)(signal, expected, value);
}
hsa_signal_value_t hsa_signal_cas_scacquire(hsa_signal_t signal, hsa_signal_value_t expected,
                                            hsa_signal_value_t value) {
    return CORE(hsa_signal_cas_scacquire)(signal, expected, value);
}
hsa_signal_value_t hsa_signal_cas_relaxed(hsa_signal_t signal, hsa_signal_value_t expected,
                                          hsa_signal_value_t value) {
    return CORE(hsa_signal_cas_relaxed)(signal, expected, value);
}
hsa_signal_value_t hsa_signal_cas_screlease(hsa_signal_t signal, hsa_signal_value_t expected,
                                            hsa_signal_value_t value) {
    return CORE(hsa_signal_cas_screlease)(signal, expected, value);
}
hsa_signal_value_t hsa_signal_cas_acq_rel(hsa_signal_t signal, hsa_signal_value_t expected,
                                          hsa_signal_value_t value) {
    return CORE(hsa_signal_cas_scacq_screl)(signal, expected, value);
}
hsa_signal_value_t hsa_signal_cas_acquire(hsa_signal_t signal, hsa_signal_value_t expected,
                                          hsa_signal_value_t value) {
    return CORE(hsa_signal_cas_scacquire)(signal, expected, value);
}
hsa_signal_value_t hsa_signal_cas_release(hsa_signal_t signal, hsa_signal_value_t expected,
                                          hsa_signal_value_t value) {
    return CORE(hsa_signal_cas_screlease)(signal, expected, value);
}
void hsa_signal_add_scacq_screl(hsa_signal_t signal, hsa_signal_value_t value) {
    CORE(hsa_signal_add_scacq_screl)(signal, value);
}
void hsa_signal_add_scacquire(hsa_signal_t signal, hsa_signal_value_t value) {
    CORE(hsa_signal_add_scacquire)(signal, value);
}
void hsa_signal_add_relaxed(hsa_signal_t signal, hsa_signal_value_t value) {
    CORE(hsa_signal_add_relaxed)(signal, value);
}
void hsa_signal_add_screlease(hsa_signal_t signal, hsa_signal_value_t value) {
    CORE(hsa_signal_add_screlease)(signal, value);
}
void hsa_signal_add_acq_rel(hsa_signal_t signal, hsa_signal_value_t value) {
    CORE(hsa_signal_add_scacq_screl)(signal, value);
}
void hsa_signal_add_acquire(hsa_signal_t signal, hsa_signal_value_t value) {
    CORE(hsa_signal_add_scacquire)(signal, value);
}
void hsa_signal_add_release(hsa_signal_t signal, hsa_signal_value_t value) {
    CORE(hsa_signal_add_screlease)(signal, value);
}
void hsa_signal_subtract_scacq_screl(hsa_signal_t signal, hsa_signal_value_t value) {
    CORE(hsa_signal_subtract_scacq_screl)(signal, value);
}
void hsa_signal_subtract_scacquire(hsa_signal_t signal, hsa_signal_value_t value) {
    CORE(hsa_signal_subtract_scacquire)(signal, value);
}
void hsa_signal_subtract_relaxed(hsa_signal_t signal, hsa_signal_value_t value) {
    CORE(hsa_signal_subtract_relaxed)(signal, value);
}
void hsa_signal_subtract_screlease(hsa_signal_t signal, hsa_signal_value_t value) {
    CORE(hsa_signal_subtract_screlease)(signal, value);
}
void hsa_signal_subtract_acq_rel(hsa_signal_t signal, hsa_signal_value_t value) {
    CORE(hsa_signal_subtract_scacq_screl)(signal, value);
}
void hsa_signal_subtract_acquire(hsa_signal_t signal, hsa_signal_value_t value) {
    CORE(hsa_signal_subtract_scacquire)(signal, value);
}
void hsa_signal_subtract_release(hsa_signal_t signal, hsa_signal_value_t value) {
    CORE(hsa_signal_subtract_screlease)(signal, value);
}
void hsa_signal_and_scacq_screl(hsa_signal_t signal, hsa_signal_value_t value) {
    CORE(hsa_signal_and_scacq_screl)(signal, value);
}
void hsa_signal_and_scacquire(hsa_signal_t signal, hsa_signal_value_t value) {
    CORE(hsa_signal_and_scacquire)(signal, value);
}
void hsa_signal_and_relaxed(hsa_signal_t signal, hsa_signal_value_t value) {
    CORE(hsa_signal_and_relaxed)(signal, value);
}
void hsa_signal_and_screlease(hsa_signal_t signal, hsa_signal_value_t value) {
    CORE(hsa_signal_and_screlease)(signal, value);
}
void hsa_signal_and_acq_rel(hsa_signal_t signal, hsa_signal_value_t value) {
    CORE(hsa_signal_and_scacq_screl)(signal, value);
}
void hsa_signal_and_acquire(hsa_signal_t signal, hsa_signal_value_t value) {
    CORE(hsa_signal_and_scacquire)(signal, value);
}
void hsa_signal_and_release(hsa_signal_t signal, hsa_signal_value_t value) {
    CORE(hsa_signal_and_screlease)(signal, value);
}
void hsa_signal_or_scacq_screl(hsa_signal_t signal, hsa_signal_value_t value) {
    CORE(hsa_signal_or_scacq_screl)(signal, value);
}
void hsa_signal_or_scacquire(hsa_signal_t signal, hsa_signal_value_t value) {
    CORE(hsa_signal_or_scacquire)(signal, value);
}
void hsa_signal_or_relaxed(hsa_signal_t signal, hsa_signal_value_t value) {
    CORE(hsa_signal_or_relaxed)(signal, value);
}
void hsa_signal_or_screlease(hsa_signal_t signal, hsa_signal_value_t value) {
    CORE(hsa_signal_or_screlease)(signal, value);
}
void hsa_signal_or_acq_rel(hsa_signal_t signal, hsa_signal_value_t value) {
    CORE(hsa_signal_or_scacq_screl)(signal, value);
}
void hsa_signal_or_acquire(hsa_signal_t signal, hsa_signal_value_t value) {
    CORE(hsa_signal_or_scacquire)(signal, value);
}
void hsa_signal_or_release(hsa_signal_t signal, hsa_signal_value_t value) {
    CORE(hsa_signal_or_screlease)(signal, value);
}
void hsa_signal_xor_scacq_screl(hsa_signal_t signal, hsa_signal_value_t value) {
    CORE(hsa_signal_xor_scacq_screl)(signal, value);
}
void hsa_signal_xor_scacquire(hsa_signal_t signal, hsa_signal_value_t value) {
    CORE(hsa_signal_xor_scacquire)(signal, value);
}
void hsa_signal_xor_relaxed(hsa_signal_t signal, hsa_signal_value_t value) {
    CORE(hsa_signal_xor_relaxed)(signal, value);
}
void hsa_signal_xor_screlease(hsa_signal_t signal, hsa_signal_value_t value) {
    CORE(hsa_signal_xor_screlease)(signal, value);
}
void hsa_signal_xor_acq_rel(hsa_signal_t signal, hsa_signal_value_t value) {
    CORE(hsa_signal_xor_scacq_screl)(signal, value);
}
void hsa_signal_xor_acquire(hsa_signal_t signal, hsa_signal_value_t value) {
    CORE(hsa_signal_xor_scacquire)(signal, value);
}
void hsa_signal_xor_release(hsa_signal_t signal, hsa_signal_value_t value) {
    CORE(hsa_signal_xor_screlease)(signal, value);
}
hsa_signal_value_t hsa_signal_wait_scacquire(hsa_signal_t signal, hsa_signal_condition_t condition,
                                             hsa_signal_value_t compare_value,
                                             uint64_t timeout_hint,
                                             hsa_wait_state_t wait_state_hint) {
    return CORE(hsa_signal_wait_scacquire)(signal, condition, compare_value, timeout_hint,
                                           wait_state_hint);
}
hsa_signal_value_t hsa_signal_wait_relaxed(hsa_signal_t signal, hsa_signal_condition_t condition,
                                           hsa_signal_value_t compare_value, uint64_t timeout_hint,
                                           hsa_wait_state_t wait_state_hint) {
    return CORE(hsa_signal_wait_relaxed)(signal, condition, compare_value, timeout_hint,
                                         wait_state_hint);
}
hsa_signal_value_t hsa_signal_wait_acquire(hsa_signal_t signal, hsa_signal_condition_t condition,
                                           hsa_signal_value_t compare_value, uint64_t timeout_hint,
                                           hsa_wait_state_t wait_state_hint) {
    return CORE(hsa_signal_wait_scacquire)(signal, condition, compare_value, timeout_hint,
                                           wait_state_hint);
}

hsa_status_t hsa_amd_queue_set_priority(hsa_queue_t* queue, hsa_amd_queue_priority_t priority) {
    return AMD(hsa_amd_queue_set_priority)(queue, priority);
}
hsa_status_t hsa_amd_queue_cu_set_mask(const hsa_queue_t* queue, uint32_t num_cu_mask_count,
                                       const uint32_t* cu_mask) {
    return AMD(hsa_amd_queue_cu_set_mask)(queue, num_cu_mask_count, cu_mask);
}
hsa_status_t hsa_amd_queue_cu_get_mask(const hsa_queue_t* queue, uint32_t num_cu_mask_count,
                                       uint32_t* cu_mask) {
    return AMD(hsa_amd_queue_cu_get_mask)(queue, num_cu_mask_count, cu_mask);
}
hsa_status_t hsa_amd_signal_create(hsa_signal_value_t initial_value, uint32_t num_consumers,
                                   const hsa_agent_t* consumers, uint64_t attributes,
                                   hsa_signal_t* signal) {
    return AMD(hsa_amd_signal_create)(initial_value, num_consumers, consumers, attributes, signal);
}
uint32_t hsa_amd_signal_wait_any(uint32_t signal_count, hsa_signal_t* signals,
                                 hsa_signal_condition_t* conds, hsa_signal_value_t* values,
                                 uint64_t timeout_hint, hsa_wait_state_t wait_hint,
                                 hsa_signal_value_t* satisfying_value) {
    return AMD(hsa_amd_signal_wait_any)(signal_count, signals, conds, values, timeout_hint,
                                        wait_hint, satisfying_value);
}
