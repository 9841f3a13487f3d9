// SPDX-License-Identifier: MIT
// An HSA queue of the stand-in. Its hsa_queue_t lives at the start of the
// control page (see aql.h), its ring is hsa_queue_t.base_address, and its
// doorbell signal publishes packets to the packet processor.
#pragma once

#include <hsa/hsa.h>

#include <atomic>
#include <cstdint>
#include <memory>
#include <mutex>
#include <vector>

#include "backend.h"
#include "completion.h"

namespace hsasim {

class Signal;

class Queue {
  public:
    // @compute_units: the agent's CU count, the bits of the CU mask.
    Queue(std::unique_ptr<HwQueue> hw, uint32_t size, hsa_queue_type32_t type,
          uint32_t compute_units, CompletionSource::Callback callback, void* data);
    ~Queue();
    Queue(const Queue&) = delete;
    Queue& operator=(const Queue&) = delete;

    hsa_queue_t* hsa() const { return reinterpret_cast<hsa_queue_t*>(hw_->ctl()); }
    HwQueue& hw() { return *hw_; }
    Signal* doorbell_signal() const { return doorbell_; }
    void set_doorbell(Signal* doorbell);

    // A store to the doorbell signal. In HSA the value is the index of the
    // last packet written; the sim's doorbell is one more (packets below it
    // are ready). Packets are handed over up to the first one whose header
    // is still INVALID, after their completion signals were noted, so that
    // the processor never finishes a packet this runtime has not seen.
    void store_doorbell(int64_t value);
    int64_t last_doorbell() const { return last_doorbell_.load(std::memory_order_relaxed); }

    // hsa_queue_inactivate: later doorbell stores are ignored.
    void inactivate() { inactive_.store(true, std::memory_order_relaxed); }

    // hsa_amd_queue_cu_set_mask / _get_mask, arguments checked. Set: the
    // first @num_bits bits of @mask, those past the agent's CUs dropped (as
    // KFD drops them); 0 bits: every CU. Callers hold the runtime's queue
    // lock (Runtime::find_queue), which serialises these.
    hsa_status_t set_cu_mask(uint32_t num_bits, const uint32_t* mask);
    void get_cu_mask(uint32_t num_bits, uint32_t* mask) const;

  private:
    std::unique_ptr<HwQueue> hw_;
    uint64_t mask_;
    uint32_t compute_units_;
    std::vector<uint32_t> cu_mask_;  // compute_units_ bits
    Signal* doorbell_ = nullptr;
    std::shared_ptr<CompletionSource> completions_;
    std::atomic<bool> inactive_{false};
    std::atomic<int64_t> last_doorbell_{-1};
    std::mutex doorbell_mutex_;
    uint64_t requested_ = 0;  // highest doorbell + 1 stored by the application
    uint64_t published_ = 0;  // ctl->doorbell: packets handed to the processor
};

}  // namespace hsasim
