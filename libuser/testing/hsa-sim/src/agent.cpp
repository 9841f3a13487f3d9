// SPDX-License-Identifier: MIT
// Agent attributes. The sim has no notion of most hardware properties; those
// get fixed, plausible MI300-like values so that programs which size grids
// or print them keep working.
#include "agent.h"

#include <algorithm>
#include <cstdio>
#include <cstring>

#include "aql.h"

namespace hsasim {

namespace {

constexpr uint32_t kQueuesMax = 128;
constexpr uint32_t kComputeUnits = 64;
constexpr size_t kRegionSize = 1ull << 32;

template <typename T>
hsa_status_t put(void* value, T v) {
    memcpy(value, &v, sizeof(v));
    return HSA_STATUS_SUCCESS;
}

hsa_status_t put_string(void* value, size_t size, const char* s) {
    memset(value, 0, size);
    memcpy(value, s, std::min(strlen(s), size - 1));
    return HSA_STATUS_SUCCESS;
}

}  // namespace

uint32_t agent_compute_units(const Agent& agent) {
    return agent.gpu ? kComputeUnits * agent.gpu->num_xcc : 1u;
}

hsa_status_t agent_get_info(const Agent& agent, uint32_t attribute, void* value) {
    const bool gpu = agent.device == HSA_DEVICE_TYPE_GPU;
    switch (attribute) {
        case HSA_AGENT_INFO_NAME:
            return put_string(value, 64, gpu ? "amdqp-sim" : "hsa-sim-cpu");
        case HSA_AGENT_INFO_VENDOR_NAME:
            return put_string(value, 64, gpu ? "AMD" : "CPU");
        case HSA_AGENT_INFO_FEATURE:
            return put(value, gpu ? HSA_AGENT_FEATURE_KERNEL_DISPATCH : hsa_agent_feature_t{});
        case HSA_AGENT_INFO_MACHINE_MODEL:
            return put(value, HSA_MACHINE_MODEL_LARGE);
        case HSA_AGENT_INFO_PROFILE:
            return put(value, HSA_PROFILE_BASE);
        case HSA_AGENT_INFO_DEFAULT_FLOAT_ROUNDING_MODE:
            return put(value, HSA_DEFAULT_FLOAT_ROUNDING_MODE_NEAR);
        case HSA_AGENT_INFO_BASE_PROFILE_DEFAULT_FLOAT_ROUNDING_MODES:
            return put(value, uint32_t{HSA_DEFAULT_FLOAT_ROUNDING_MODE_NEAR});
        case HSA_AGENT_INFO_FAST_F16_OPERATION:
            return put(value, false);
        case HSA_AGENT_INFO_WAVEFRONT_SIZE:
            return put(value, uint32_t{gpu ? 64u : 0u});
        case HSA_AGENT_INFO_WORKGROUP_MAX_DIM: {
            const uint16_t dims[3] = {1024, 1024, 1024};
            memcpy(value, dims, sizeof(dims));
            return HSA_STATUS_SUCCESS;
        }
        case HSA_AGENT_INFO_WORKGROUP_MAX_SIZE:
            return put(value, uint32_t{1024});
        case HSA_AGENT_INFO_GRID_MAX_DIM:
            return put(value, hsa_dim3_t{UINT32_MAX, UINT32_MAX, UINT32_MAX});
        case HSA_AGENT_INFO_GRID_MAX_SIZE:
            return put(value, uint32_t{UINT32_MAX});
        case HSA_AGENT_INFO_FBARRIER_MAX_SIZE:
            return put(value, uint32_t{32});
        case HSA_AGENT_INFO_QUEUES_MAX:
            return put(value, uint32_t{gpu ? kQueuesMax : 0u});
        case HSA_AGENT_INFO_QUEUE_MIN_SIZE:
            return put(value, uint32_t{gpu ? kQueueMinPackets : 0u});
        case HSA_AGENT_INFO_QUEUE_MAX_SIZE:
            return put(value, uint32_t{gpu ? kQueueMaxPackets : 0u});
        case HSA_AGENT_INFO_QUEUE_TYPE:
            return put(value, hsa_queue_type32_t{HSA_QUEUE_TYPE_MULTI});
        case HSA_AGENT_INFO_NODE:
        case HSA_AMD_AGENT_INFO_DRIVER_NODE_ID:
            return put(value, agent.node_id);
        case HSA_AGENT_INFO_DEVICE:
            return put(value, agent.device);
        case HSA_AGENT_INFO_CACHE_SIZE: {
            const uint32_t sizes[4] = {16 * 1024, 4 * 1024 * 1024, 0, 0};
            memcpy(value, sizes, sizeof(sizes));
            return HSA_STATUS_SUCCESS;
        }
        case HSA_AGENT_INFO_EXTENSIONS:
            memset(value, 0, 128);
            return HSA_STATUS_SUCCESS;
        case HSA_AGENT_INFO_VERSION_MAJOR:
            return put(value, uint16_t{1});
        case HSA_AGENT_INFO_VERSION_MINOR:
            return put(value, uint16_t{1});
        case HSA_AMD_AGENT_INFO_CHIP_ID:
            return put(value, uint32_t{gpu ? 0x74a1u : 0u});
        case HSA_AMD_AGENT_INFO_CACHELINE_SIZE:
            return put(value, uint32_t{gpu ? 128u : 64u});
        case HSA_AMD_AGENT_INFO_COMPUTE_UNIT_COUNT:
            return put(value, agent_compute_units(agent));
        case HSA_AMD_AGENT_INFO_MAX_CLOCK_FREQUENCY:
            return put(value, uint32_t{2100});
        case HSA_AMD_AGENT_INFO_BDFID:
        case HSA_AMD_AGENT_INFO_DOMAIN:
        case HSA_AMD_AGENT_INFO_ASIC_REVISION:
        case HSA_AMD_AGENT_INFO_MAX_ADDRESS_WATCH_POINTS:
            return put(value, uint32_t{0});
        case HSA_AMD_AGENT_INFO_PRODUCT_NAME:
            return put_string(value, 64, gpu ? agent.gpu->product.c_str() : "hsa-sim CPU");
        case HSA_AMD_AGENT_INFO_MAX_WAVES_PER_CU:
            return put(value, uint32_t{gpu ? 32u : 0u});
        case HSA_AMD_AGENT_INFO_NUM_SIMDS_PER_CU:
            return put(value, uint32_t{gpu ? 4u : 0u});
        case HSA_AMD_AGENT_INFO_NUM_SHADER_ENGINES:
            return put(value, uint32_t{gpu ? 4u * agent.gpu->num_xcc : 0u});
        case HSA_AMD_AGENT_INFO_NUM_SHADER_ARRAYS_PER_SE:
            return put(value, uint32_t{gpu ? 1u : 0u});
        case HSA_AMD_AGENT_INFO_COOPERATIVE_QUEUES:
        case HSA_AMD_AGENT_INFO_SVM_DIRECT_HOST_ACCESS:
            return put(value, false);
        case HSA_AMD_AGENT_INFO_COOPERATIVE_COMPUTE_UNIT_COUNT:
            return put(value, uint32_t{0});
        case HSA_AMD_AGENT_INFO_UUID: {
            // ROCr's form, GPU-<16 hex digits>; the sim's gpu id makes it unique.
            char uuid[21];
            if (gpu)
                snprintf(uuid, sizeof(uuid), "GPU-%016x", agent.gpu->gpu_id);
            else
                snprintf(uuid, sizeof(uuid), "CPU-XX");
            return put_string(value, sizeof(uuid), uuid);
        }
        default:
            return HSA_STATUS_ERROR_INVALID_ARGUMENT;
    }
}

hsa_status_t region_get_info(const Agent&, uint32_t attribute, void* value) {
    switch (attribute) {
        case HSA_REGION_INFO_SEGMENT:
            return put(value, HSA_REGION_SEGMENT_GLOBAL);
        case HSA_REGION_INFO_GLOBAL_FLAGS:
            return put(value, uint32_t{HSA_REGION_GLOBAL_FLAG_KERNARG |
                                       HSA_REGION_GLOBAL_FLAG_FINE_GRAINED});
        case HSA_REGION_INFO_SIZE:
        case HSA_REGION_INFO_ALLOC_MAX_SIZE:
            return put(value, kRegionSize);
        case HSA_REGION_INFO_ALLOC_MAX_PRIVATE_WORKGROUP_SIZE:
            return put(value, uint32_t{1024});
        case HSA_REGION_INFO_RUNTIME_ALLOC_ALLOWED:
            return put(value, true);
        case HSA_REGION_INFO_RUNTIME_ALLOC_GRANULE:
        case HSA_REGION_INFO_RUNTIME_ALLOC_ALIGNMENT:
            return put(value, size_t{4096});
        case HSA_AMD_REGION_INFO_HOST_ACCESSIBLE:
            return put(value, true);
        case HSA_AMD_REGION_INFO_BASE:
            return put(value, static_cast<void*>(nullptr));
        default:
            return HSA_STATUS_ERROR_INVALID_ARGUMENT;
    }
}

}  // namespace hsasim
