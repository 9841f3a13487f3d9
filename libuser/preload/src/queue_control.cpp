// SPDX-License-Identifier: MIT
#include <sys/ioctl.h>

#include <cerrno>

#include <linux/amdqp_sim.h>

#include "kfd_abi.hpp"
#include "queue_control.hpp"

namespace amdqp::preload {

namespace {

class IoctlQueueControl final : public QueueControl {
  public:
    int set_active(const KernelQueueId& q, bool on) override {
        const std::uint32_t percentage = on ? 100 : 0;
        int rc;
        switch (q.kind) {
            case QueueKind::kfd: {
                // KFD rewrites the ring address, size and priority from the
                // arguments: pass them unchanged.
                kfd_ioctl_update_queue_args a{};
                a.ring_base_address = q.ring_va;
                a.queue_id = q.queue_id;
                a.ring_size = q.ring_size;
                a.queue_percentage = percentage;
                a.queue_priority = q.priority;
                rc = ::ioctl(q.fd, AMDKFD_IOC_UPDATE_QUEUE, &a);
                break;
            }
            case QueueKind::sim: {
                amdqp_sim_update_queue u{};
                u.gpu_id = q.gpu_id;
                u.queue_id = q.queue_id;
                u.queue_percentage = percentage;
                u.priority = q.priority;
                rc = ::ioctl(q.fd, AMDQP_SIM_IOC_UPDATE_QUEUE, &u);
                break;
            }
            default:
                return -EINVAL;
        }
        return rc == 0 ? 0 : -errno;
    }
};

}  // namespace

QueueControl& ioctl_queue_control() {
    // Never destroyed: the watcher thread may still use it while the
    // process exits.
    static union Storage {
        Storage() : control() {}
        ~Storage() {}
        IoctlQueueControl control;
    } storage;
    return storage.control;
}

}  // namespace amdqp::preload
