// SPDX-License-Identifier: MIT
// Agents: a CPU agent first (node 0), as ROCr lists them, then one GPU agent
// per device of the backend (nodes 1, 2, ... in gpu id order). Each agent
// has one memory region: host memory usable for kernel arguments.
#pragma once

#include <hsa/hsa.h>
#include <hsa/hsa_ext_amd.h>

#include <cstdint>

#include "backend.h"

namespace hsasim {

struct Agent {
    hsa_device_type_t device;
    uint32_t node_id;
    const GpuDesc* gpu;   // nullptr for the CPU agent
    char region_tag = 0;  // its address is the handle of the agent's region

    hsa_agent_t handle() const { return hsa_agent_t{reinterpret_cast<uint64_t>(this)}; }
    hsa_region_t region() const { return hsa_region_t{reinterpret_cast<uint64_t>(&region_tag)}; }
};

hsa_status_t agent_get_info(const Agent& agent, uint32_t attribute, void* value);
// HSA_AMD_AGENT_INFO_COMPUTE_UNIT_COUNT: the bits of a queue's CU mask.
uint32_t agent_compute_units(const Agent& agent);
hsa_status_t region_get_info(const Agent& agent, uint32_t attribute, void* value);

}  // namespace hsasim
