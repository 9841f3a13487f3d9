// SPDX-License-Identifier: MIT
/*
 * A test double of the queue ioctls of /dev/amdqp_sim and /dev/kfd for hosts
 * without them: preloaded after libamdqp-preload.so, it answers
 * AMDQP_SIM_IOC_CREATE_QUEUE / DESTROY_QUEUE / UPDATE_QUEUE and
 * AMDKFD_IOC_CREATE_QUEUE / UPDATE_QUEUE on any fd and passes every other
 * ioctl on. Each update is appended to the file named by
 * $AMDQP_FAKE_SIM_LOG, as "update GPU QUEUE PERCENTAGE PRIORITY" (sim) or
 * "kfd-update QUEUE PERCENTAGE PRIORITY RING RING_SIZE", so a test sees what
 * the cooperative mechanism asked of the "hardware".
 *
 * Test code only: nothing in the product refers to it.
 */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <linux/amdqp_sim.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "fake_kfd_abi.h"

static unsigned int next_queue_id = 100;

static void log_line(const char* line) {
    const char* path = getenv("AMDQP_FAKE_SIM_LOG");
    size_t len = strlen(line);
    int fd;

    if (!path)
        return;
    fd = open(path, O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0600);
    if (fd < 0)
        return;
    if (write(fd, line, len) != (ssize_t)len)
        len = 0;
    close(fd);
}

static void log_update(const struct amdqp_sim_update_queue* u) {
    char line[128];

    snprintf(line, sizeof(line), "update %u %u %u %u\n", u->gpu_id, u->queue_id,
             u->queue_percentage, u->priority);
    log_line(line);
}

static void log_kfd_update(const struct test_kfd_update_queue_args* u) {
    char line[160];

    snprintf(line, sizeof(line), "kfd-update %u %u %u %#llx %u\n", u->queue_id, u->queue_percentage,
             u->queue_priority, (unsigned long long)u->ring_base_address, u->ring_size);
    log_line(line);
}

__attribute__((visibility("default"))) int ioctl(int fd, unsigned long request, ...) {
    static int (*next)(int, unsigned long, ...);
    va_list ap;
    void* arg;

    va_start(ap, request);
    arg = va_arg(ap, void*);
    va_end(ap);
    switch (request) {
        case AMDQP_SIM_IOC_CREATE_QUEUE:
            ((struct amdqp_sim_create_queue*)arg)->queue_id =
                __atomic_fetch_add(&next_queue_id, 1, __ATOMIC_RELAXED);
            return 0;
        case AMDQP_SIM_IOC_DESTROY_QUEUE:
            return 0;
        case AMDQP_SIM_IOC_UPDATE_QUEUE:
            log_update(arg);
            return 0;
        case TEST_AMDKFD_IOC_CREATE_QUEUE:
            ((struct test_kfd_create_queue_args*)arg)->queue_id =
                __atomic_fetch_add(&next_queue_id, 1, __ATOMIC_RELAXED);
            return 0;
        case TEST_AMDKFD_IOC_UPDATE_QUEUE:
            log_kfd_update(arg);
            return 0;
    }
    if (!next)
        next = (int (*)(int, unsigned long, ...))dlsym(RTLD_NEXT, "ioctl");
    if (!next) {
        errno = ENOSYS;
        return -1;
    }
    return next(fd, request, arg);
}
