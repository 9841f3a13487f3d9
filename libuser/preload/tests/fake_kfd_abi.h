/* SPDX-License-Identifier: MIT */
/*
 * The KFD queue ioctls the tests play with, for C test programs on hosts
 * whose <linux/kfd_ioctl.h> cannot be compiled (it needs <drm/drm.h>). Same
 * numbers and layouts as the kernel's uapi (and the layer's kfd_abi.hpp).
 */
#ifndef AMDQP_PRELOAD_TESTS_FAKE_KFD_ABI_H
#define AMDQP_PRELOAD_TESTS_FAKE_KFD_ABI_H

#include <linux/ioctl.h>
#include <linux/types.h>

#define TEST_KFD_QUEUE_TYPE_COMPUTE_AQL 0x2

struct test_kfd_create_queue_args {
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

struct test_kfd_update_queue_args {
    __u64 ring_base_address;
    __u32 queue_id;
    __u32 ring_size;
    __u32 queue_percentage;
    __u32 queue_priority;
};

#define TEST_AMDKFD_IOC_CREATE_QUEUE _IOWR('K', 0x02, struct test_kfd_create_queue_args)
#define TEST_AMDKFD_IOC_UPDATE_QUEUE _IOW('K', 0x07, struct test_kfd_update_queue_args)

#endif /* AMDQP_PRELOAD_TESTS_FAKE_KFD_ABI_H */
