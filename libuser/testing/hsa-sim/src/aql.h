// SPDX-License-Identifier: MIT
// The user-mode queue layout shared with the sim (uapi/linux/amdqp_sim.h)
// and with ROCr-aware tools (amd_queue_t): an hsa_queue_t at the start of
// the control page puts write_dispatch_id and read_dispatch_id exactly on
// the sim's write_index and read_index.
#pragma once

#include <hsa/amd_hsa_queue.h>
#include <hsa/hsa.h>
#include <linux/amdqp_sim.h>

#include <atomic>
#include <cstddef>
#include <cstdint>

namespace hsasim {

static_assert(offsetof(amd_queue_t, hsa_queue) == 0);
static_assert(offsetof(amd_queue_t, write_dispatch_id) == offsetof(amdqp_sim_uq_ctl, write_index));
static_assert(offsetof(amd_queue_t, read_dispatch_id) == offsetof(amdqp_sim_uq_ctl, read_index));
static_assert(sizeof(amd_queue_t) <= offsetof(amdqp_sim_uq_ctl, doorbell));
static_assert(sizeof(amdqp_sim_uq_ctl) == AMDQP_SIM_CTL_SIZE);
static_assert(sizeof(hsa_kernel_dispatch_packet_t) == AMDQP_SIM_PACKET_SIZE);
static_assert(offsetof(hsa_kernel_dispatch_packet_t, kernel_object) ==
              AMDQP_SIM_PKT_KERNEL_OBJECT_OFFSET);
static_assert(offsetof(hsa_kernel_dispatch_packet_t, grid_size_x) == AMDQP_SIM_PKT_GRID_X_OFFSET);
static_assert(offsetof(hsa_kernel_dispatch_packet_t, workgroup_size_x) ==
              AMDQP_SIM_PKT_WG_X_OFFSET);
// Every AQL packet type keeps its completion signal in the last 8 bytes.
static_assert(offsetof(hsa_kernel_dispatch_packet_t, completion_signal) == 56);
static_assert(offsetof(hsa_barrier_and_packet_t, completion_signal) == 56);
static_assert(offsetof(hsa_agent_dispatch_packet_t, completion_signal) == 56);
static_assert(HSA_PACKET_TYPE_INVALID == AMDQP_SIM_PKT_INVALID);
static_assert(HSA_PACKET_TYPE_KERNEL_DISPATCH == AMDQP_SIM_PKT_KERNEL_DISPATCH);
static_assert(HSA_PACKET_TYPE_BARRIER_AND == AMDQP_SIM_PKT_BARRIER_AND);
static_assert(HSA_PACKET_TYPE_BARRIER_OR == AMDQP_SIM_PKT_BARRIER_OR);

// Queue sizes in packets: the sim's ring byte limits.
constexpr uint32_t kQueueMinPackets = AMDQP_SIM_RING_MIN / AMDQP_SIM_PACKET_SIZE;
constexpr uint32_t kQueueMaxPackets = AMDQP_SIM_RING_MAX / AMDQP_SIM_PACKET_SIZE;

inline amdqp_sim_uq_ctl* ctl_of(const hsa_queue_t* q) {
    return reinterpret_cast<amdqp_sim_uq_ctl*>(const_cast<hsa_queue_t*>(q));
}

inline std::atomic_ref<__u64> write_index_of(const hsa_queue_t* q) {
    return std::atomic_ref<__u64>(ctl_of(q)->write_index);
}

inline std::atomic_ref<__u64> read_index_of(const hsa_queue_t* q) {
    return std::atomic_ref<__u64>(ctl_of(q)->read_index);
}

inline uint8_t packet_type(uint16_t header) {
    return static_cast<uint8_t>(header & AMDQP_SIM_PKT_TYPE_MASK);
}

}  // namespace hsasim
