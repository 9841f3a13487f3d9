#include "queue_regs.h"

namespace amdqp {

namespace {
// Index of each register relative to CP_MQD_BASE_ADDR_LO (v9_mqd dword 128).
enum Reg : size_t {
    MQD_BASE_LO = 0,
    MQD_BASE_HI = 1,
    HQD_ACTIVE = 2,
    HQD_VMID = 3,
    PIPE_PRIORITY = 5,
    QUEUE_PRIORITY = 6,
    QUANTUM = 7,
    PQ_BASE_LO = 8,
    PQ_BASE_HI = 9,
    PQ_RPTR = 10,
    RPTR_REPORT_LO = 11,
    RPTR_REPORT_HI = 12,
    WPTR_POLL_LO = 13,
    WPTR_POLL_HI = 14,
    DOORBELL_CONTROL = 15,
    PQ_CONTROL = 17,
    DEQUEUE_REQUEST = 24,
    EOP_BASE_LO = 37,
    EOP_BASE_HI = 38,
    CTX_SAVE_BASE_LO = 43,
    CTX_SAVE_BASE_HI = 44,
    CTX_SAVE_SIZE = 49,
    HQD_ERROR = 51,
    AQL_CONTROL = 53,
    PQ_WPTR_LO = 54,
    PQ_WPTR_HI = 55,
};
static_assert(PQ_WPTR_HI == kQueueRegCount - 1, "block ends at CP_HQD_PQ_WPTR_HI");

uint64_t lohi(const std::array<uint32_t, kQueueRegCount> &r, size_t lo, size_t hi) {
    return (static_cast<uint64_t>(r[hi]) << 32) | r[lo];
}
} // namespace

QueueRegs decode_queue_regs(const std::array<uint32_t, kQueueRegCount> &r) {
    QueueRegs q;
    q.mqd_base = lohi(r, MQD_BASE_LO, MQD_BASE_HI);
    q.active = (r[HQD_ACTIVE] & 1) != 0;
    q.vmid = r[HQD_VMID] & 0xf;
    q.pipe_priority = r[PIPE_PRIORITY] & 0x3;
    q.queue_priority = r[QUEUE_PRIORITY] & 0xf;
    q.quantum = r[QUANTUM];
    // The ring base registers hold the 256-byte aligned address shifted right by 8.
    q.ring_base = lohi(r, PQ_BASE_LO, PQ_BASE_HI) << 8;
    // CP_HQD_PQ_CONTROL.QUEUE_SIZE (bits 5:0): ring is 2^(QUEUE_SIZE+1) dwords.
    uint32_t qs = r[PQ_CONTROL] & 0x3f;
    q.ring_size = (r[PQ_CONTROL] == 0) ? 0 : (uint64_t{4} << (qs + 1));
    q.rptr = r[PQ_RPTR];
    q.wptr = lohi(r, PQ_WPTR_LO, PQ_WPTR_HI);
    q.rptr_report_addr = lohi(r, RPTR_REPORT_LO, RPTR_REPORT_HI);
    q.wptr_poll_addr = lohi(r, WPTR_POLL_LO, WPTR_POLL_HI);
    // CP_HQD_PQ_DOORBELL_CONTROL: DOORBELL_OFFSET bits 27:2, DOORBELL_EN bit 30.
    q.doorbell_offset = (r[DOORBELL_CONTROL] >> 2) & 0x3ffffff;
    q.doorbell_enabled = (r[DOORBELL_CONTROL] >> 30) & 1;
    q.aql = (r[AQL_CONTROL] & 1) != 0;
    q.eop_base = lohi(r, EOP_BASE_LO, EOP_BASE_HI) << 8;
    q.ctx_save_base = lohi(r, CTX_SAVE_BASE_LO, CTX_SAVE_BASE_HI);
    q.ctx_save_size = r[CTX_SAVE_SIZE];
    q.dequeue_request = r[DEQUEUE_REQUEST];
    q.error = r[HQD_ERROR];
    return q;
}

const char *pipe_priority_name(uint32_t p) {
    switch (p) {
    case 0:
        return "low";
    case 1:
        return "medium";
    case 2:
        return "high";
    default:
        return "?";
    }
}

} // namespace amdqp
