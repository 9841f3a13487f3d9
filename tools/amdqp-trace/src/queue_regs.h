// Decoding of the gfx9 / gfx9.4.3 compute queue register block: the 56 dwords
// from CP_MQD_BASE_ADDR to CP_HQD_PQ_WPTR_HI, in the order of the v9 MQD
// (dword 128 onwards) and of the kfd hqds dump. Offsets learned from amdgpu's
// v9_structs.h / kfd_mqd_manager_v9.c; the code is ours.
#pragma once
#include <array>
#include <cstdint>
#include <string>

namespace amdqp {

constexpr size_t kQueueRegCount = 56;
constexpr size_t kMqdRegFirstDword = 128; // cp_mqd_base_addr_lo in struct v9_mqd

struct QueueRegs {
    bool active = false;
    uint32_t vmid = 0;
    uint32_t pipe_priority = 0;  // 0 low, 1 medium, 2 high
    uint32_t queue_priority = 0; // 0..15, the HSA queue priority
    uint32_t quantum = 0;
    uint64_t mqd_base = 0;  // GPU VA of the MQD this HQD was loaded from
    uint64_t ring_base = 0; // byte address (register holds addr >> 8)
    uint64_t ring_size = 0; // bytes
    uint32_t rptr = 0;      // CP_HQD_PQ_RPTR (dwords)
    uint64_t wptr = 0;      // CP_HQD_PQ_WPTR_LO/HI (dwords)
    uint64_t rptr_report_addr = 0;
    uint64_t wptr_poll_addr = 0;
    uint32_t doorbell_offset = 0; // dword offset into the doorbell BAR
    bool doorbell_enabled = false;
    bool aql = false;
    uint64_t eop_base = 0;
    uint64_t ctx_save_base = 0;
    uint32_t ctx_save_size = 0;
    uint32_t dequeue_request = 0;
    uint32_t error = 0;
};

// regs: the 56 dwords starting at CP_MQD_BASE_ADDR.
QueueRegs decode_queue_regs(const std::array<uint32_t, kQueueRegCount> &regs);
const char *pipe_priority_name(uint32_t p);

} // namespace amdqp
