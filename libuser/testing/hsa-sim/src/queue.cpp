// SPDX-License-Identifier: MIT
#include "queue.h"

#include <hsa/amd_hsa_queue.h>

#include <algorithm>

#include "aql.h"
#include "signal.h"

namespace hsasim {

Queue::Queue(std::unique_ptr<HwQueue> hw, uint32_t size, hsa_queue_type32_t type,
             CompletionSource::Callback callback, void* data)
    : hw_(std::move(hw)),
      mask_(size - 1),
      completions_(std::make_shared<CompletionSource>(hw_->ctl(), callback, data)) {
    auto* amd = reinterpret_cast<amd_queue_t*>(hw_->ctl());
    hsa_queue_t& q = amd->hsa_queue;
    q.type = type;
    q.features = HSA_QUEUE_FEATURE_KERNEL_DISPATCH;
    q.base_address = hw_->ring();
    q.size = size;
    q.reserved1 = 0;
    // Fresh ring memory is zero, which reads as VENDOR_SPECIFIC packets: an
    // unwritten slot must read as INVALID, or a processor could run it.
    for (uint32_t i = 0; i < size; ++i) {
        auto* pkt = reinterpret_cast<hsa_kernel_dispatch_packet_t*>(hw_->ring() +
                                                                    i * AMDQP_SIM_PACKET_SIZE);
        pkt->header = HSA_PACKET_TYPE_INVALID << HSA_PACKET_HEADER_TYPE;
    }
    amd->queue_properties = AMD_QUEUE_PROPERTIES_IS_PTR64;
    amd->read_dispatch_id_field_base_byte_offset =
        static_cast<uint32_t>(offsetof(amd_queue_t, read_dispatch_id));
}

void Queue::set_doorbell(Signal* doorbell) {
    doorbell_ = doorbell;
    doorbell->abi.queue_ptr = reinterpret_cast<uint64_t>(hw_->ctl());
    hsa()->doorbell_signal = doorbell->handle();
}

Queue::~Queue() {
    // Waiters on signals of abandoned packets keep the last read index.
    completions_->detach();
}

void Queue::store_doorbell(int64_t value) {
    if (inactive_.load(std::memory_order_relaxed))
        return;
    amdqp_sim_uq_ctl* ctl = hw_->ctl();
    uint8_t* ring = hw_->ring();
    std::lock_guard lock(doorbell_mutex_);
    last_doorbell_.store(value, std::memory_order_relaxed);
    requested_ = std::max(requested_, static_cast<uint64_t>(value) + 1);
    // A slot holds a packet of this lap only below read_index + size.
    const uint64_t read_index =
        std::atomic_ref<__u64>(ctl->read_index).load(std::memory_order_acquire);
    const uint64_t limit = std::min(requested_, read_index + mask_ + 1);
    uint64_t i = published_;
    for (; i < limit; ++i) {
        auto* pkt = reinterpret_cast<hsa_kernel_dispatch_packet_t*>(
            ring + (i & mask_) * AMDQP_SIM_PACKET_SIZE);
        const uint16_t header =
            std::atomic_ref<uint16_t>(pkt->header).load(std::memory_order_acquire);
        if (packet_type(header) == HSA_PACKET_TYPE_INVALID)
            break;
        if (pkt->completion_signal.handle) {
            if (Signal* s = Signal::from_handle(pkt->completion_signal))
                s->add_pending(completions_, i);
        }
    }
    published_ = i;
    // Stored even when unchanged: a doorbell write is what the sim polls for.
    std::atomic_ref<__u64>(ctl->doorbell).store(i, std::memory_order_release);
}

}  // namespace hsasim
