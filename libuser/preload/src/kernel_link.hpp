// SPDX-License-Identifier: MIT
//
// The tagging layer's use of amdqp.ko: register a queue's priority by
// (pid, ring VA) and learn its gpu and queue id. Behind an interface so that
// the registry's decisions are tested without a kernel.
#ifndef AMDQP_PRELOAD_KERNEL_LINK_HPP
#define AMDQP_PRELOAD_KERNEL_LINK_HPP

#include <sys/types.h>

#include <cstdint>
#include <memory>
#include <optional>
#include <string>

#include <amdqp/sys.hpp>

namespace amdqp::preload {

struct RegisterResult {
    enum Status {
        ok,           // amdqp.ko manages the queue at @priority
        refused,      // EPERM: raising needs CAP_SYS_NICE; kept at @priority
        not_managed,  // amdqp.ko does not know the queue (device not managed)
        unavailable,  // no usable /dev/amdqp; @message says why and what to do
    };
    Status status = unavailable;
    std::uint32_t gpu_id = 0;
    std::optional<std::uint32_t> queue_id;
    std::uint32_t priority = 0;  // what the queue runs at now (ok, refused)
    std::string message;
};

class KernelLink {
  public:
    virtual ~KernelLink() = default;
    virtual RegisterResult register_queue(pid_t pid, std::uint64_t ring_va, int priority) = 0;
};

// /dev/amdqp (or $AMDQP_DEVICE) through libamdqp, opened at the first
// registration; a device that cannot be opened is not tried again. @sys:
// nullptr for the real kernel.
std::unique_ptr<KernelLink> make_device_link(std::shared_ptr<Sys> sys = nullptr);

}  // namespace amdqp::preload

#endif  // AMDQP_PRELOAD_KERNEL_LINK_HPP
