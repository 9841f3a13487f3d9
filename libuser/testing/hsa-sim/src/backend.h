// SPDX-License-Identifier: MIT
// What runs the queues: sim devices of the amdqp_sim kernel module
// (user-mode queues, HSA_SIM_BACKEND=sim, the default) or a thread per queue
// in this process (HSA_SIM_BACKEND=thread, for hosts without the module).
// Both give a ring followed by a struct amdqp_sim_uq_ctl page and consume
// packets below ctl->doorbell, publishing ctl->read_index.
#pragma once

#include <hsa/hsa.h>
#include <linux/amdqp_sim.h>

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

namespace hsasim {

struct GpuDesc {
    uint32_t gpu_id;  // sim device id, 0 for the thread backend
    uint32_t num_xcc;
    std::string product;
};

// One hardware queue: owns the ring mapping and whatever feeds it.
class HwQueue {
  public:
    virtual ~HwQueue() = default;
    uint8_t* ring() const { return ring_; }
    amdqp_sim_uq_ctl* ctl() const { return ctl_; }
    // Scheduling priority 0..15 (KFD's), set as AMDKFD_IOC_UPDATE_QUEUE would.
    virtual hsa_status_t set_priority(uint32_t priority) = 0;
    // The CUs the queue's work may use, as AMDKFD_IOC_SET_CU_MASK sets
    // them: bit i of word i / 32 is CU i; never empty.
    virtual hsa_status_t set_cu_mask(const std::vector<uint32_t>& cus) = 0;

  protected:
    uint8_t* ring_ = nullptr;
    amdqp_sim_uq_ctl* ctl_ = nullptr;
};

class Backend {
  public:
    virtual ~Backend() = default;
    virtual const char* name() const = 0;
    virtual const std::vector<GpuDesc>& gpus() const = 0;
    // @ring_bytes: power of two in AMDQP_SIM_RING_MIN..MAX. @priority 0..15.
    virtual hsa_status_t create_queue(const GpuDesc& gpu, uint32_t ring_bytes, uint32_t priority,
                                      std::unique_ptr<HwQueue>* out) = 0;
};

// nullptr and a reason in @why when the backend cannot start.
std::unique_ptr<Backend> make_sim_backend(std::string* why);
std::unique_ptr<Backend> make_thread_backend(std::string* why);

}  // namespace hsasim
