// SPDX-License-Identifier: MIT
//
// The part of amdkfd's uapi the tagging layer reads and writes: queue
// creation, destruction and AMDKFD_IOC_UPDATE_QUEUE. From the host's
// <linux/kfd_ioctl.h> (linux-libc-dev) when it can be compiled (it needs
// <drm/drm.h>, which Debian ships in no package this build requires);
// otherwise the few definitions below, which have not changed since
// KFD_IOCTL_MAJOR_VERSION 1 (Linux 3.19). The size checks at the end hold
// either way.
#ifndef AMDQP_PRELOAD_KFD_ABI_HPP
#define AMDQP_PRELOAD_KFD_ABI_HPP

#include <linux/ioctl.h>
#include <linux/types.h>

#if __has_include(<linux/kfd_ioctl.h>) && __has_include(<drm/drm.h>)
#include <linux/kfd_ioctl.h>
#else
#define KFD_IOC_QUEUE_TYPE_COMPUTE 0x0
#define KFD_IOC_QUEUE_TYPE_COMPUTE_AQL 0x2

struct kfd_ioctl_create_queue_args {
    __u64 ring_base_address;
    __u64 write_pointer_address;
    __u64 read_pointer_address;
    __u64 doorbell_offset;
    __u32 ring_size;
    __u32 gpu_id;
    __u32 queue_type;
    __u32 queue_percentage;
    __u32 queue_priority;
    __u32 queue_id;
    __u64 eop_buffer_address;
    __u64 eop_buffer_size;
    __u64 ctx_save_restore_address;
    __u32 ctx_save_restore_size;
    __u32 ctl_stack_size;
};

struct kfd_ioctl_destroy_queue_args {
    __u32 queue_id;
    __u32 pad;
};

struct kfd_ioctl_update_queue_args {
    __u64 ring_base_address;
    __u32 queue_id;
    __u32 ring_size;
    __u32 queue_percentage;
    __u32 queue_priority;
};

#define AMDKFD_IOCTL_BASE 'K'
#define AMDKFD_IOC_CREATE_QUEUE _IOWR(AMDKFD_IOCTL_BASE, 0x02, struct kfd_ioctl_create_queue_args)
#define AMDKFD_IOC_DESTROY_QUEUE _IOWR(AMDKFD_IOCTL_BASE, 0x03, struct kfd_ioctl_destroy_queue_args)
#define AMDKFD_IOC_UPDATE_QUEUE _IOW(AMDKFD_IOCTL_BASE, 0x07, struct kfd_ioctl_update_queue_args)
#endif

static_assert(sizeof(kfd_ioctl_create_queue_args) == 88);
static_assert(sizeof(kfd_ioctl_destroy_queue_args) == 8);
static_assert(sizeof(kfd_ioctl_update_queue_args) == 24);

#endif  // AMDQP_PRELOAD_KFD_ABI_HPP
