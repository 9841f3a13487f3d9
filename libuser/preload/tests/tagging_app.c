// SPDX-License-Identifier: MIT
/*
 * tagging_app: an unmodified HSA program, for the tagging layer's end-to-end
 * tests. Written against the public HSA headers only; it knows nothing of
 * amdqp. It creates queues on the first GPU agent, dispatches packets whose
 * "kernel" is a duration (the hsa-sim convention), rings doorbells with both
 * signal store flavours and waits for completion.
 *
 * Options (all optional, in any order):
 *   --queues N        queues to create (1)
 *   --packets N       packets per queue, one doorbell each (4)
 *   --workgroups N    work groups of each dispatch (grid N, groups of 1: 1)
 *   --threads N       create and feed the queues from N threads at once (1)
 *   --hold            after the queues exist, print "ready PID" and wait for
 *                     a line on stdin before dispatching (the test looks at
 *                     the process meanwhile)
 *   --hsa-priority P  set each queue's HSA priority (low, normal, high) with
 *                     hsa_amd_queue_set_priority, as HIP does for stream
 *                     priorities
 *   --announce-ioctl  after creating each queue, announce it with
 *                     AMDQP_SIM_IOC_CREATE_QUEUE on /dev/null, as a sim
 *                     runtime would (answered by the fake-sim test double)
 *   --announce-kfd    the same with AMDKFD_IOC_CREATE_QUEUE, as ROCr's libhsakmt
 *                     does on /dev/kfd
 *   --fork            fork a child that exits 5; report its status
 *   --fork-exec CMD   fork a child that runs "sh -c CMD"; report its status
 *   --exit N          exit status when all went well (0)
 *
 * Prints "queue RING DOORBELL" per queue, "child STATUS", "done".
 */
#define _GNU_SOURCE
#include <fcntl.h>
#include <hsa/hsa.h>
#include <hsa/hsa_ext_amd.h>
#include <linux/amdqp_sim.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/wait.h>
#include <unistd.h>

#include "fake_kfd_abi.h"

struct options {
    int queues, packets, threads, hold, announce, fork_plain, exit_status, hsa_priority;
    const char* fork_exec;
    int workgroups;
};

static struct options opt = {1, 4, 1, 0, 0, 0, 0, -1, NULL, 1};
static hsa_agent_t gpu;
static int have_gpu;
static int null_fd = -1;
static pthread_mutex_t out_lock = PTHREAD_MUTEX_INITIALIZER;

static hsa_status_t find_gpu(hsa_agent_t agent, void* data) {
    hsa_device_type_t type;

    (void)data;
    if (hsa_agent_get_info(agent, HSA_AGENT_INFO_DEVICE, &type) != HSA_STATUS_SUCCESS)
        return HSA_STATUS_ERROR;
    if (type == HSA_DEVICE_TYPE_GPU && !have_gpu) {
        gpu = agent;
        have_gpu = 1;
    }
    return HSA_STATUS_SUCCESS;
}

static int fail(const char* what, hsa_status_t st) {
    const char* text = NULL;

    hsa_status_string(st, &text);
    fprintf(stderr, "tagging_app: %s: %s\n", what, text ? text : "?");
    return 1;
}

/* One kernel-dispatch packet of 1 us on opt.workgroups compute slots. */
static void dispatch(hsa_queue_t* q, hsa_signal_t done, int flavour) {
    uint64_t index = hsa_queue_add_write_index_relaxed(q, 1);
    hsa_kernel_dispatch_packet_t* p =
        (hsa_kernel_dispatch_packet_t*)q->base_address + (index & (q->size - 1));
    uint16_t header;

    memset((char*)p + 4, 0, sizeof(*p) - 4);
    p->setup = 1;
    p->workgroup_size_x = 1;
    p->workgroup_size_y = 1;
    p->workgroup_size_z = 1;
    p->grid_size_x = (uint32_t)opt.workgroups;
    p->grid_size_y = 1;
    p->grid_size_z = 1;
    p->kernel_object = 1000;
    p->completion_signal = done;
    header = (HSA_PACKET_TYPE_KERNEL_DISPATCH << HSA_PACKET_HEADER_TYPE) |
             (HSA_FENCE_SCOPE_SYSTEM << HSA_PACKET_HEADER_ACQUIRE_FENCE_SCOPE) |
             (HSA_FENCE_SCOPE_SYSTEM << HSA_PACKET_HEADER_RELEASE_FENCE_SCOPE);
    __atomic_store_n(&p->header, header, __ATOMIC_RELEASE);
    if (flavour)
        hsa_signal_store_relaxed(q->doorbell_signal, (hsa_signal_value_t)index);
    else
        hsa_signal_store_screlease(q->doorbell_signal, (hsa_signal_value_t)index);
}

struct worker {
    int first, count;
    hsa_queue_t** queues;
    int rc;
};

static void announce(hsa_queue_t* q, int index) {
    struct amdqp_sim_create_queue c;

    if (opt.announce == 2) {
        struct test_kfd_create_queue_args k;

        memset(&k, 0, sizeof(k));
        k.ring_base_address = (uintptr_t)q->base_address;
        k.ring_size = q->size * 64;
        k.gpu_id = 0x1234;
        k.queue_type = TEST_KFD_QUEUE_TYPE_COMPUTE_AQL;
        k.queue_percentage = 100;
        k.queue_priority = 7;
        if (ioctl(null_fd, TEST_AMDKFD_IOC_CREATE_QUEUE, &k) != 0)
            fprintf(stderr, "tagging_app: announce of queue %d refused\n", index);
        return;
    }
    if (!opt.announce)
        return;
    memset(&c, 0, sizeof(c));
    c.gpu_id = 1;
    c.priority = 7;
    c.ring_va = (uintptr_t)q->base_address;
    c.ring_size = (uint64_t)q->size * 64;
    c.flags = AMDQP_SIM_QUEUE_USERMODE;
    if (ioctl(null_fd, AMDQP_SIM_IOC_CREATE_QUEUE, &c) != 0)
        fprintf(stderr, "tagging_app: announce of queue %d refused\n", index);
}

static void* create_queues(void* arg) {
    struct worker* w = arg;

    for (int i = w->first; i < w->first + w->count; i++) {
        hsa_status_t st = hsa_queue_create(gpu, 256, HSA_QUEUE_TYPE_SINGLE, NULL, NULL, UINT32_MAX,
                                           UINT32_MAX, &w->queues[i]);
        if (st != HSA_STATUS_SUCCESS) {
            w->rc = fail("hsa_queue_create", st);
            return NULL;
        }
        if (opt.hsa_priority >= 0) {
            st = hsa_amd_queue_set_priority(w->queues[i],
                                            (hsa_amd_queue_priority_t)opt.hsa_priority);
            if (st != HSA_STATUS_SUCCESS) {
                w->rc = fail("hsa_amd_queue_set_priority", st);
                return NULL;
            }
        }
        announce(w->queues[i], i);
        pthread_mutex_lock(&out_lock);
        printf("queue %#llx %#llx\n", (unsigned long long)(uintptr_t)w->queues[i]->base_address,
               (unsigned long long)w->queues[i]->doorbell_signal.handle);
        pthread_mutex_unlock(&out_lock);
    }
    return NULL;
}

static void* feed_queues(void* arg) {
    struct worker* w = arg;

    for (int i = w->first; i < w->first + w->count; i++) {
        hsa_signal_t done;
        hsa_status_t st = hsa_signal_create(opt.packets, 0, NULL, &done);

        if (st != HSA_STATUS_SUCCESS) {
            w->rc = fail("hsa_signal_create", st);
            return NULL;
        }
        for (int k = 0; k < opt.packets; k++)
            dispatch(w->queues[i], done, k & 1);
        if (hsa_signal_wait_scacquire(done, HSA_SIGNAL_CONDITION_EQ, 0, 10000000000ull,
                                      HSA_WAIT_STATE_BLOCKED) != 0) {
            fprintf(stderr, "tagging_app: packets did not complete\n");
            w->rc = 3;
        }
        hsa_signal_destroy(done);
    }
    return NULL;
}

/* Runs @fn over the queues from opt.threads threads. */
static int in_threads(void* (*fn)(void*), hsa_queue_t** queues) {
    pthread_t th[64];
    struct worker w[64];
    int n = opt.threads, per = opt.queues / n, rc = 0;

    for (int t = 0; t < n; t++) {
        w[t].first = t * per;
        w[t].count = t == n - 1 ? opt.queues - t * per : per;
        w[t].queues = queues;
        w[t].rc = 0;
        pthread_create(&th[t], NULL, fn, &w[t]);
    }
    for (int t = 0; t < n; t++) {
        pthread_join(th[t], NULL);
        if (w[t].rc)
            rc = w[t].rc;
    }
    return rc;
}

static void run_child(void) {
    pid_t pid = fork();
    int status = 0;

    if (pid == 0) {
        if (opt.fork_exec)
            execl("/bin/sh", "sh", "-c", opt.fork_exec, (char*)NULL);
        _exit(opt.fork_exec ? 127 : 5);
    }
    waitpid(pid, &status, 0);
    printf("child %d\n", WIFEXITED(status) ? WEXITSTATUS(status) : -1);
    fflush(stdout);
}

static int parse(int argc, char** argv) {
    for (int i = 1; i < argc; i++) {
        const char* a = argv[i];
        const char* v = i + 1 < argc ? argv[i + 1] : NULL;

        if (!strcmp(a, "--hold")) {
            opt.hold = 1;
        } else if (!strcmp(a, "--announce-ioctl")) {
            opt.announce = 1;
        } else if (!strcmp(a, "--announce-kfd")) {
            opt.announce = 2;
        } else if (!strcmp(a, "--fork")) {
            opt.fork_plain = 1;
        } else if (v && !strcmp(a, "--hsa-priority")) {
            opt.hsa_priority = !strcmp(v, "low")    ? HSA_AMD_QUEUE_PRIORITY_LOW
                               : !strcmp(v, "high") ? HSA_AMD_QUEUE_PRIORITY_HIGH
                                                    : HSA_AMD_QUEUE_PRIORITY_NORMAL;
            i++;
        } else if (v && !strcmp(a, "--fork-exec")) {
            opt.fork_exec = v;
            i++;
        } else if (v && !strcmp(a, "--queues")) {
            opt.queues = atoi(v);
            i++;
        } else if (v && !strcmp(a, "--workgroups")) {
            opt.workgroups = atoi(v);
            i++;
        } else if (v && !strcmp(a, "--packets")) {
            opt.packets = atoi(v);
            i++;
        } else if (v && !strcmp(a, "--threads")) {
            opt.threads = atoi(v);
            i++;
        } else if (v && !strcmp(a, "--exit")) {
            opt.exit_status = atoi(v);
            i++;
        } else {
            fprintf(stderr, "tagging_app: bad argument %s\n", a);
            return 2;
        }
    }
    if (opt.queues < 1 || opt.queues > 256 || opt.threads < 1 || opt.threads > 64 ||
        opt.threads > opt.queues)
        return 2;
    return 0;
}

int main(int argc, char** argv) {
    hsa_queue_t* queues[256];
    hsa_status_t st;
    int rc = parse(argc, argv);

    if (rc)
        return rc;
    setvbuf(stdout, NULL, _IOLBF, 0);
    null_fd = open("/dev/null", O_RDONLY | O_CLOEXEC);
    st = hsa_init();
    if (st != HSA_STATUS_SUCCESS)
        return fail("hsa_init", st);
    hsa_iterate_agents(find_gpu, NULL);
    if (!have_gpu) {
        fprintf(stderr, "tagging_app: no GPU agent\n");
        return 1;
    }
    rc = in_threads(create_queues, queues);
    if (rc)
        return rc;
    if (opt.hold) {
        char line[64];

        printf("ready %d\n", (int)getpid());
        if (!fgets(line, sizeof(line), stdin))
            return 4;
    }
    if (opt.fork_plain || opt.fork_exec)
        run_child();
    rc = in_threads(feed_queues, queues);
    if (opt.hold) {
        char line[64];

        printf("fed\n");
        if (!fgets(line, sizeof(line), stdin))
            return 4;
    }
    for (int i = 0; i < opt.queues; i++)
        hsa_queue_destroy(queues[i]);
    hsa_shut_down();
    printf("done\n");
    return rc ? rc : opt.exit_status;
}
