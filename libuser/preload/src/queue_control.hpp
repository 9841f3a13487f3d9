// SPDX-License-Identifier: MIT
//
// A queue as its kernel driver knows it (learned from the creation ioctl),
// and the cooperative mechanism's one operation on it: take it off the
// hardware, or put it back, the way a process may on stock amdgpu
// (AMDKFD_IOC_UPDATE_QUEUE with queue_percentage 0, then 100), or on a sim
// device (AMDQP_SIM_IOC_UPDATE_QUEUE, its model of the same).
#ifndef AMDQP_PRELOAD_QUEUE_CONTROL_HPP
#define AMDQP_PRELOAD_QUEUE_CONTROL_HPP

#include <cstdint>

namespace amdqp::preload {

enum class QueueKind : std::uint8_t {
    unknown,  // never seen at creation (no LD_PRELOAD): not controllable
    kfd,      // /dev/kfd
    sim,      // /dev/amdqp_sim
};

struct KernelQueueId {
    QueueKind kind = QueueKind::unknown;
    int fd = -1;  // the fd the queue was created through
    std::uint32_t gpu_id = 0;
    std::uint32_t queue_id = UINT32_MAX;
    std::uint64_t ring_va = 0;
    std::uint32_t ring_size = 0;  // bytes; KFD's update wants it again
    std::uint32_t priority = 0;   // the driver's current priority, 0..15

    bool known() const noexcept { return kind != QueueKind::unknown; }
};

class QueueControl {
  public:
    virtual ~QueueControl() = default;
    // Takes @q off the hardware (@on false) or puts it back. 0 or -errno.
    virtual int set_active(const KernelQueueId& q, bool on) = 0;
};

// The product's control: the update ioctl on the queue's own fd.
QueueControl& ioctl_queue_control();

}  // namespace amdqp::preload

#endif  // AMDQP_PRELOAD_QUEUE_CONTROL_HPP
