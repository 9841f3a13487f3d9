// SPDX-License-Identifier: MIT
//
// A C entry into the fake for tests in other languages (the Python
// package's): a handle on a small fixed world, and a way to change it.
//
//   gpu 1 (HWS), gpu 2 (MES); the caller is pid 1000, uid 1000, no caps.
//   pid 4242 uid 1000: gpu 1 queue 1, ring 0x10000, priority 12
//   pid 4343 uid 1000: gpu 1 queue 2, ring 0x20000, priority 2
//                      gpu 2 queue 1, ring 0x30000, priority 2
//   pid 4444 uid 0:    gpu 2 queue 2, ring 0x40000, priority 7
#include <memory>

#include <amdqp/amdqp.hpp>

#include "fake_amdqp.hpp"

namespace {

std::shared_ptr<amdqp::testing::FakeAmdqp> demo;

}  // namespace

extern "C" {

__attribute__((visibility("default"))) amdqp_t* amdqp_fake_open_demo(void) {
    demo = std::make_shared<amdqp::testing::FakeAmdqp>();
    demo->add_gpu(1, AMDQP_SCHED_HWS);
    demo->add_gpu(2, AMDQP_SCHED_MES);
    demo->add_queue(4242, 1, 0x10000, 12);
    demo->add_queue(4343, 1, 0x20000, 2);
    demo->add_queue(4343, 2, 0x30000, 2);
    demo->add_queue(4444, 2, 0x40000, 7, 0);
    try {
        return amdqp::to_c_handle(amdqp::Device::open(demo->path, demo));
    } catch (const amdqp::Error&) {
        return nullptr;
    }
}

// Adds a queue to the demo world (emits QUEUE_CREATED); returns its id.
__attribute__((visibility("default"))) unsigned amdqp_fake_demo_add_queue(
    unsigned pid, unsigned gpu_id, unsigned long long ring_va, unsigned priority) {
    return demo ? demo->add_queue(pid, gpu_id, ring_va, priority).queue_id : 0;
}

// How many holds the queue has (from any fd).
__attribute__((visibility("default"))) int amdqp_fake_demo_holders(unsigned pid, unsigned gpu_id,
                                                                   unsigned queue_id) {
    auto* q = demo ? demo->find(pid, gpu_id, queue_id) : nullptr;
    return q ? static_cast<int>(q->holders.size()) : -1;
}

}  // extern "C"
