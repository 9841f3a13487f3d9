// SPDX-License-Identifier: MIT
#include "queue.h"

#include <hsa/amd_hsa_queue.h>

#include <algorithm>

#include "aql.h"
#include "signal.h"

namespace hsasim {

namespace {

// A mask of the first @n of @bits bits: every CU, or the bits given.
std::vector<uint32_t> leading_bits(uint32_t bits, uint32_t n) {
    std::vector<uint32_t> words((bits + 31) / 32, 0);
    for (uint32_t i = 0; i < n && i < bits; ++i)
        words[i / 32] |= 1u << (i % 32);
    return words;
}

}  // namespace

Queue::Queue(std::unique_ptr<HwQueue> hw, uint32_t size, hsa_queue_type32_t type,
             uint32_t compute_units, CompletionSource::Callback callback, void* data)
    : hw_(std::move(hw)),
      mask_(size - 1),
      compute_units_(compute_units),
      cu_mask_(leading_bits(compute_units, compute_units)),
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

hsa_status_t Queue::set_cu_mask(uint32_t num_bits, const uint32_t* mask) {
    std::vector<uint32_t> want = leading_bits(compute_units_, compute_units_);
    if (num_bits) {
        const std::vector<uint32_t> keep = leading_bits(compute_units_, num_bits);
        for (size_t i = 0; i < want.size(); ++i)
            want[i] = i < num_bits / 32 ? mask[i] & keep[i] : 0;
    }
    // An empty mask would leave the queue nowhere to run.
    if (std::all_of(want.begin(), want.end(), [](uint32_t w) { return w == 0; }))
        return HSA_STATUS_ERROR_INVALID_ARGUMENT;
    const hsa_status_t st = hw_->set_cu_mask(want);
    if (st == HSA_STATUS_SUCCESS)
        cu_mask_ = std::move(want);
    return st;
}

void Queue::get_cu_mask(uint32_t num_bits, uint32_t* mask) const {
    for (uint32_t i = 0; i < num_bits / 32; ++i)
        mask[i] = i < cu_mask_.size() ? cu_mask_[i] : 0;
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
