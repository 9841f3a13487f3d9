// SPDX-License-Identifier: MIT
//
// The one libc name the tagging layer interposes (when it is in
// LD_PRELOAD): ioctl, to read the replies of queue creation on /dev/kfd and
// /dev/amdqp_sim (gpu id, queue id, fd: what the cooperative mechanism and
// the page need and an hsa_queue_t does not tell). Every call goes on to the
// next ioctl in the lookup order unchanged, errno included; only an update
// that would put a cooperatively held queue back on is sent with
// queue_percentage 0.
#include <dlfcn.h>
#include <sys/ioctl.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <cstdarg>

#include <linux/amdqp_sim.h>

#include "export.hpp"
#include "internal_call.hpp"
#include "kfd_abi.hpp"
#include "preload.hpp"

namespace amdqp::preload {

namespace {

using IoctlFn = int (*)(int, unsigned long, ...);

std::atomic<IoctlFn> g_real{nullptr};

int raw_ioctl(int fd, unsigned long request, ...) {
    va_list ap;
    va_start(ap, request);
    void* arg = va_arg(ap, void*);
    va_end(ap);
    return static_cast<int>(syscall(SYS_ioctl, fd, request, arg));
}

IoctlFn real_ioctl() {
    IoctlFn f = g_real.load(std::memory_order_acquire);
    if (f)
        return f;
    f = reinterpret_cast<IoctlFn>(dlsym(RTLD_NEXT, "ioctl"));
    if (!f)
        f = &raw_ioctl;
    g_real.store(f, std::memory_order_release);
    return f;
}

// Resolved at load time, before any thread can race for it.
[[gnu::constructor]] void resolve_real_ioctl() {
    real_ioctl();
}

bool interesting(unsigned long request) {
    switch (request) {
        case AMDKFD_IOC_CREATE_QUEUE:
        case AMDKFD_IOC_DESTROY_QUEUE:
        case AMDKFD_IOC_UPDATE_QUEUE:
        case AMDQP_SIM_IOC_CREATE_QUEUE:
        case AMDQP_SIM_IOC_DESTROY_QUEUE:
        case AMDQP_SIM_IOC_UPDATE_QUEUE:
            return true;
        default:
            return false;
    }
}

bool compute_queue(std::uint32_t queue_type) {
    return queue_type == KFD_IOC_QUEUE_TYPE_COMPUTE || queue_type == KFD_IOC_QUEUE_TYPE_COMPUTE_AQL;
}

void observe_create(int fd, unsigned long request, void* arg) {
    KernelQueueId id;
    id.fd = fd;
    if (request == AMDKFD_IOC_CREATE_QUEUE) {
        auto* a = static_cast<kfd_ioctl_create_queue_args*>(arg);
        if (!compute_queue(a->queue_type))
            return;
        id.kind = QueueKind::kfd;
        id.gpu_id = a->gpu_id;
        id.queue_id = a->queue_id;
        id.ring_va = a->ring_base_address;
        id.ring_size = a->ring_size;
        id.priority = a->queue_priority;
    } else {
        auto* a = static_cast<amdqp_sim_create_queue*>(arg);
        id.kind = QueueKind::sim;
        id.gpu_id = a->gpu_id;
        id.queue_id = a->queue_id;
        id.ring_va = a->ring_va;
        id.ring_size = static_cast<std::uint32_t>(a->ring_size);
        id.priority = a->priority;
    }
    Preload::get().registry().kernel_queue_created(id);
}

void observe_destroy(int fd, unsigned long request, void* arg) {
    if (request == AMDKFD_IOC_DESTROY_QUEUE) {
        auto* a = static_cast<kfd_ioctl_destroy_queue_args*>(arg);
        Preload::get().registry().kernel_queue_destroyed(QueueKind::kfd, fd, 0, a->queue_id);
    } else {
        auto* a = static_cast<amdqp_sim_queue_id*>(arg);
        Preload::get().registry().kernel_queue_destroyed(QueueKind::sim, fd, a->gpu_id,
                                                         a->queue_id);
    }
}

int update(IoctlFn real, int fd, unsigned long request, void* arg) {
    QueueRegistry& registry = Preload::get().registry();
    if (request == AMDKFD_IOC_UPDATE_QUEUE) {
        auto args = *static_cast<kfd_ioctl_update_queue_args*>(arg);
        std::uint32_t pct = registry.kernel_queue_updated(
            QueueKind::kfd, fd, 0, args.queue_id, args.queue_percentage, args.queue_priority);
        if (pct == args.queue_percentage)
            return real(fd, request, arg);
        args.queue_percentage = pct;
        return real(fd, request, &args);
    }
    auto args = *static_cast<amdqp_sim_update_queue*>(arg);
    std::uint32_t pct = registry.kernel_queue_updated(
        QueueKind::sim, fd, args.gpu_id, args.queue_id, args.queue_percentage, args.priority);
    if (pct == args.queue_percentage)
        return real(fd, request, arg);
    args.queue_percentage = pct;
    return real(fd, request, &args);
}

int hook(int fd, unsigned long request, void* arg) {
    IoctlFn real = real_ioctl();
    // Most ioctls of a process are not about queues: decide on the request
    // number alone before anything else.
    if (!interesting(request) || !arg || t_internal_call || !is_primary())
        return real(fd, request, arg);
    if (request == AMDKFD_IOC_UPDATE_QUEUE || request == AMDQP_SIM_IOC_UPDATE_QUEUE) {
        int rc;
        try {
            rc = update(real, fd, request, arg);
        } catch (...) {
            rc = real(fd, request, arg);
        }
        return rc;
    }
    int rc = real(fd, request, arg);
    if (rc != 0)
        return rc;
    const int saved = errno;
    try {
        InternalCall internal;
        if (request == AMDKFD_IOC_CREATE_QUEUE || request == AMDQP_SIM_IOC_CREATE_QUEUE)
            observe_create(fd, request, arg);
        else
            observe_destroy(fd, request, arg);
    } catch (...) {
        // Observation is best effort; the call itself succeeded.
    }
    errno = saved;
    return rc;
}

}  // namespace

}  // namespace amdqp::preload

extern "C" AMDQP_PRELOAD_EXPORT int ioctl(int fd, unsigned long request, ...) noexcept {
    va_list ap;
    va_start(ap, request);
    void* arg = va_arg(ap, void*);
    va_end(ap);
    return amdqp::preload::hook(fd, request, arg);
}
