// SPDX-License-Identifier: MIT
/*
 * hsa_app: an HSA program written only against the public HSA headers
 * (Debian's libhsa-runtime-dev). It finds a GPU agent, creates a queue and
 * dispatches kernel-dispatch packets whose "kernel" is a duration (the
 * hsa-sim convention: kernel_object = run time in ns), rings the doorbell
 * with hsa_signal_store_screlease and waits on the completion signal.
 * It runs unchanged on ROCr and on the hsa-sim stand-in (put first with
 * LD_LIBRARY_PATH), with or without a tools library (HSA_TOOLS_LIB).
 *
 * A request is --request-kernels kernels, each its own doorbell store, with
 * --gap-us of CPU time between the stores (the way a framework launches
 * the kernels of one inference one by one); its latency runs to the
 * completion of its last kernel, from its scheduled arrival in open loop
 * (request k is due at start + k * --period-us, however late this process
 * gets round to it), from its first doorbell store in closed loop.
 *
 * Output: JSON lines on stdout (start, agent, progress, packet, request,
 * summary).
 * Exit status: 0 every packet completed, 1 HSA error, 2 usage,
 * 3 packets still outstanding when the drain timeout expired.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <getopt.h>
#include <hsa/hsa.h>
#include <hsa/hsa_ext_amd.h>
#include <signal.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#define NS_PER_US 1000ull
#define NS_PER_MS 1000000ull
#define NS_PER_S 1000000000ull
/* Longest single wait, so that SIGINT/SIGTERM and progress stay prompt. */
#define MAX_WAIT_NS (100 * NS_PER_MS)
/* Gaps shorter than this are spun: a sleep would overshoot them. */
#define SPIN_BELOW_NS (50 * NS_PER_US)
/* A full ring is rung again after this long (closed loop, within a request). */
#define RETRY_FULL_NS (100 * NS_PER_US)

struct options {
    uint64_t count;
    bool count_set;
    uint64_t duration_ns;
    uint64_t period_ns;
    uint32_t batch;
    double seconds;
    bool loop_until_signal;
    uint32_t width;
    uint32_t queue_size;
    const char* priority;
    uint32_t agent_index;
    uint64_t progress_ns;
    bool per_packet;
    double drain_timeout_s;
    bool list_agents;
    bool quiet;
    uint32_t cu_mask;         /* first N CUs; 0: not set */
    uint32_t request_kernels; /* doorbell stores per request */
    uint64_t gap_ns;          /* CPU time between the stores of a request */
    bool per_request;
};

/* A growing array of latency samples. */
struct samples {
    uint64_t* v;
    size_t len, cap;
};

/* A request whose last kernel has not completed yet. */
struct request {
    uint64_t index;   /* requests started before it */
    uint64_t arrival; /* due time (open loop) or first doorbell store */
    uint64_t end;     /* packets submitted up to its last kernel so far */
    bool closed;      /* all of its kernels are stored */
};

struct run {
    hsa_queue_t* queue;
    hsa_signal_t done;
    uint64_t submitted;
    uint64_t completed;
    uint64_t doorbells;
    uint64_t rerings;
    uint64_t* submit_ns; /* per ring slot: doorbell time of its packet */
    struct samples latency;
    volatile sig_atomic_t queue_error;
    uint64_t requests; /* requests started */
    struct samples request_latency;
    struct request* open; /* FIFO of requests not yet complete, ring of open_cap */
    size_t open_cap, open_head, open_len;
    uint64_t last_done_ns; /* when the completed count last moved */
};

static volatile sig_atomic_t stop_requested;

static void on_signal(int sig) {
    (void)sig;
    stop_requested = 1;
}

static uint64_t now_ns(void) {
    struct timespec ts;

    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * NS_PER_S + (uint64_t)ts.tv_nsec;
}

static void sleep_ns(uint64_t ns) {
    struct timespec ts = {(time_t)(ns / NS_PER_S), (long)(ns % NS_PER_S)};

    nanosleep(&ts, NULL); /* EINTR: a signal to look at */
}

static const char* status_text(hsa_status_t st) {
    const char* s = NULL;

    if (hsa_status_string(st, &s) != HSA_STATUS_SUCCESS || !s)
        return "unknown status";
    return s;
}

static void print_json_string(const char* s) {
    putchar('"');
    for (; *s; ++s) {
        if (*s == '"' || *s == '\\')
            printf("\\%c", *s);
        else if ((unsigned char)*s < 0x20)
            printf("\\u%04x", *s);
        else
            putchar(*s);
    }
    putchar('"');
}

static int fail(const char* what, hsa_status_t st) {
    printf("{\"event\":\"error\",\"call\":\"%s\",\"status\":%d,\"message\":", what, (int)st);
    print_json_string(status_text(st));
    printf("}\n");
    fprintf(stderr, "hsa_app: %s: %s\n", what, status_text(st));
    return 1;
}

static void usage(FILE* f) {
    fprintf(f,
            "usage: hsa_app [options]\n"
            "  -n, --count N            packets to dispatch (default 100; 0 = no limit,\n"
            "                           the default with --seconds/--loop-until-signal)\n"
            "  -d, --duration-us US     run time of each kernel (default 100)\n"
            "  -p, --period-us US       open loop: request k is due at start + k*US, whatever\n"
            "                           completes; a late submitter sends the requests that\n"
            "                           are due at once, and their latency counts from the\n"
            "                           due time (summary \"latency_from\":\"schedule\");\n"
            "                           0 = closed loop, next request when the last completed,\n"
            "                           latency from its first doorbell (\"submit\") (default 0)\n"
            "  -b, --batch N            packets per doorbell store (default 1)\n"
            "      --request-kernels K  a request is K doorbell stores (kernels) of --batch\n"
            "                           packets each (default 1)\n"
            "      --gap-us G           G us between the stores of a request, the launching\n"
            "                           thread's CPU time per kernel (default 0)\n"
            "      --cu-mask N          confine the queue to the first N compute units\n"
            "                           (hsa_amd_queue_cu_set_mask)\n"
            "  -s, --seconds S          stop submitting after S seconds\n"
            "      --loop-until-signal  submit until SIGINT/SIGTERM, then drain\n"
            "  -w, --width N            compute slots per kernel, 0 = all (default 0)\n"
            "  -q, --queue-size N       queue size in packets (default 1024)\n"
            "      --priority LEVEL     low|normal|high: hsa_amd_queue_set_priority\n"
            "      --agent N            use the N-th GPU agent (default 0)\n"
            "      --progress-ms MS     progress line every MS (default 0: none)\n"
            "      --per-packet         one line per completed packet\n"
            "      --per-request        one line per completed request\n"
            "      --drain-timeout-s S  wait at most S for outstanding packets (default 60)\n"
            "      --list-agents        print the agents and exit\n"
            "      --quiet              only the summary line\n"
            "Exit: 0 all completed, 1 HSA error, 2 usage, 3 packets left outstanding.\n");
}

static bool parse_u64(const char* s, uint64_t* out) {
    char* end;

    errno = 0;
    unsigned long long v = strtoull(s, &end, 10);
    if (errno || end == s || *end || *s == '-')
        return false;
    *out = v;
    return true;
}

static bool parse_double(const char* s, double* out) {
    char* end;

    errno = 0;
    double v = strtod(s, &end);
    if (errno || end == s || *end || v < 0)
        return false;
    *out = v;
    return true;
}

enum {
    OPT_LOOP = 256,
    OPT_PRIORITY,
    OPT_AGENT,
    OPT_PROGRESS,
    OPT_PER_PACKET,
    OPT_DRAIN,
    OPT_LIST,
    OPT_QUIET,
    OPT_CU_MASK,
    OPT_REQUEST_KERNELS,
    OPT_GAP,
    OPT_PER_REQUEST,
};

static int parse_options(int argc, char** argv, struct options* o) {
    static const struct option longopts[] = {
        {"count", required_argument, NULL, 'n'},
        {"duration-us", required_argument, NULL, 'd'},
        {"period-us", required_argument, NULL, 'p'},
        {"batch", required_argument, NULL, 'b'},
        {"seconds", required_argument, NULL, 's'},
        {"loop-until-signal", no_argument, NULL, OPT_LOOP},
        {"width", required_argument, NULL, 'w'},
        {"queue-size", required_argument, NULL, 'q'},
        {"priority", required_argument, NULL, OPT_PRIORITY},
        {"agent", required_argument, NULL, OPT_AGENT},
        {"progress-ms", required_argument, NULL, OPT_PROGRESS},
        {"per-packet", no_argument, NULL, OPT_PER_PACKET},
        {"drain-timeout-s", required_argument, NULL, OPT_DRAIN},
        {"list-agents", no_argument, NULL, OPT_LIST},
        {"quiet", no_argument, NULL, OPT_QUIET},
        {"cu-mask", required_argument, NULL, OPT_CU_MASK},
        {"request-kernels", required_argument, NULL, OPT_REQUEST_KERNELS},
        {"gap-us", required_argument, NULL, OPT_GAP},
        {"per-request", no_argument, NULL, OPT_PER_REQUEST},
        {"help", no_argument, NULL, 'h'},
        {NULL, 0, NULL, 0},
    };
    uint64_t v;
    int c;

    *o = (struct options){.count = 100,
                          .duration_ns = 100 * NS_PER_US,
                          .batch = 1,
                          .queue_size = 1024,
                          .drain_timeout_s = 60,
                          .request_kernels = 1};
    while ((c = getopt_long(argc, argv, "n:d:p:b:s:w:q:h", longopts, NULL)) != -1) {
        bool ok = true;

        switch (c) {
            case 'n':
                ok = parse_u64(optarg, &o->count);
                o->count_set = true;
                break;
            case 'd':
                ok = parse_u64(optarg, &v) && v > 0 && v <= 10 * 1000 * 1000;
                o->duration_ns = v * NS_PER_US;
                break;
            case 'p':
                ok = parse_u64(optarg, &v);
                o->period_ns = v * NS_PER_US;
                break;
            case 'b':
                ok = parse_u64(optarg, &v) && v > 0 && v <= 4096;
                o->batch = (uint32_t)v;
                break;
            case 's':
                ok = parse_double(optarg, &o->seconds);
                break;
            case OPT_LOOP:
                o->loop_until_signal = true;
                break;
            case 'w':
                ok = parse_u64(optarg, &v) && v <= UINT32_MAX;
                o->width = (uint32_t)v;
                break;
            case 'q':
                ok = parse_u64(optarg, &v) && v > 0 && v <= UINT32_MAX && !(v & (v - 1));
                o->queue_size = (uint32_t)v;
                break;
            case OPT_PRIORITY:
                o->priority = optarg;
                ok = !strcmp(optarg, "low") || !strcmp(optarg, "normal") || !strcmp(optarg, "high");
                break;
            case OPT_AGENT:
                ok = parse_u64(optarg, &v) && v <= UINT32_MAX;
                o->agent_index = (uint32_t)v;
                break;
            case OPT_PROGRESS:
                ok = parse_u64(optarg, &v);
                o->progress_ns = v * NS_PER_MS;
                break;
            case OPT_PER_PACKET:
                o->per_packet = true;
                break;
            case OPT_DRAIN:
                ok = parse_double(optarg, &o->drain_timeout_s);
                break;
            case OPT_LIST:
                o->list_agents = true;
                break;
            case OPT_QUIET:
                o->quiet = true;
                break;
            case OPT_CU_MASK:
                ok = parse_u64(optarg, &v) && v > 0 && v <= 65536;
                o->cu_mask = (uint32_t)v;
                break;
            case OPT_REQUEST_KERNELS:
                ok = parse_u64(optarg, &v) && v > 0 && v <= 1000000;
                o->request_kernels = (uint32_t)v;
                break;
            case OPT_GAP:
                ok = parse_u64(optarg, &v) && v <= 10 * 1000 * 1000;
                o->gap_ns = v * NS_PER_US;
                break;
            case OPT_PER_REQUEST:
                o->per_request = true;
                break;
            case 'h':
                usage(stdout);
                exit(0);
            default:
                ok = false;
        }
        if (!ok) {
            if (c != '?')
                fprintf(stderr, "hsa_app: bad value for option %s\n", argv[optind - 1]);
            usage(stderr);
            return 2;
        }
    }
    if (optind < argc) {
        fprintf(stderr, "hsa_app: unexpected argument %s\n", argv[optind]);
        usage(stderr);
        return 2;
    }
    if (!o->count_set && (o->seconds > 0 || o->loop_until_signal))
        o->count = 0; /* unlimited: time or a signal ends it */
    if (o->batch > o->queue_size) {
        fprintf(stderr, "hsa_app: --batch larger than --queue-size\n");
        return 2;
    }
    return 0;
}

/* --- agents ------------------------------------------------------------ */

struct agent_pick {
    uint32_t want;
    uint32_t seen;
    hsa_agent_t agent;
    bool found;
    bool print;
};

static hsa_status_t visit_agent(hsa_agent_t agent, void* data) {
    struct agent_pick* pick = data;
    hsa_device_type_t type;
    char name[64] = "", product[64] = "";
    uint32_t node = 0, queue_max = 0, queues = 0;
    hsa_status_t st;

    st = hsa_agent_get_info(agent, HSA_AGENT_INFO_DEVICE, &type);
    if (st != HSA_STATUS_SUCCESS)
        return st;
    hsa_agent_get_info(agent, HSA_AGENT_INFO_NAME, name);
    hsa_agent_get_info(agent, (hsa_agent_info_t)HSA_AMD_AGENT_INFO_PRODUCT_NAME, product);
    hsa_agent_get_info(agent, (hsa_agent_info_t)HSA_AMD_AGENT_INFO_DRIVER_NODE_ID, &node);
    hsa_agent_get_info(agent, HSA_AGENT_INFO_QUEUE_MAX_SIZE, &queue_max);
    hsa_agent_get_info(agent, HSA_AGENT_INFO_QUEUES_MAX, &queues);
    if (pick->print) {
        printf("{\"event\":\"agent\",\"device\":\"%s\",\"name\":",
               type == HSA_DEVICE_TYPE_GPU   ? "gpu"
               : type == HSA_DEVICE_TYPE_CPU ? "cpu"
                                             : "other");
        print_json_string(name);
        printf(",\"product\":");
        print_json_string(product);
        printf(",\"node_id\":%u,\"queue_max_size\":%u,\"queues_max\":%u}\n", node, queue_max,
               queues);
    }
    if (type == HSA_DEVICE_TYPE_GPU) {
        if (pick->seen++ == pick->want && !pick->found) {
            pick->agent = agent;
            pick->found = true;
        }
    }
    return HSA_STATUS_SUCCESS;
}

/* --- submission -------------------------------------------------------- */

static void on_queue_error(hsa_status_t status, hsa_queue_t* source, void* data) {
    struct run* r = data;

    (void)source;
    printf("{\"event\":\"queue_error\",\"status\":%d,\"message\":", (int)status);
    print_json_string(status_text(status));
    printf("}\n");
    r->queue_error = 1;
}

static void submit_batch(struct run* r, const struct options* o, uint32_t n, uint64_t now) {
    hsa_queue_t* q = r->queue;
    const uint64_t mask = q->size - 1;
    const uint64_t first = hsa_queue_add_write_index_relaxed(q, n);
    const uint16_t header = (HSA_PACKET_TYPE_KERNEL_DISPATCH << HSA_PACKET_HEADER_TYPE) |
                            (1 << HSA_PACKET_HEADER_BARRIER) |
                            (HSA_FENCE_SCOPE_SYSTEM << HSA_PACKET_HEADER_SCACQUIRE_FENCE_SCOPE) |
                            (HSA_FENCE_SCOPE_SYSTEM << HSA_PACKET_HEADER_SCRELEASE_FENCE_SCOPE);
    const uint16_t setup = 1 << HSA_KERNEL_DISPATCH_PACKET_SETUP_DIMENSIONS;

    /* The signal counts packets in flight: each completion takes one off. */
    hsa_signal_add_screlease(r->done, n);
    for (uint32_t k = 0; k < n; ++k) {
        hsa_kernel_dispatch_packet_t* p =
            (hsa_kernel_dispatch_packet_t*)q->base_address + ((first + k) & mask);

        memset((char*)p + 4, 0, sizeof(*p) - 4);
        p->workgroup_size_x = 1;
        p->workgroup_size_y = 1;
        p->workgroup_size_z = 1;
        p->grid_size_x = o->width;
        p->grid_size_y = 1;
        p->grid_size_z = 1;
        p->kernel_object = o->duration_ns;
        p->completion_signal = r->done;
        r->submit_ns[(first + k) & mask] = now;
        /* Header last, in one store with setup: the packet becomes valid. */
        __atomic_store_n((uint32_t*)p, (uint32_t)header | ((uint32_t)setup << 16),
                         __ATOMIC_RELEASE);
    }
    hsa_signal_store_screlease(q->doorbell_signal, (hsa_signal_value_t)(first + n - 1));
    r->doorbells++;
    r->submitted += n;
}

static void samples_push(struct samples* s, uint64_t v) {
    if (s->len == s->cap) {
        size_t cap = s->cap ? 2 * s->cap : 4096;
        uint64_t* p = realloc(s->v, cap * sizeof(*p));

        if (!p)
            return; /* keep running, lose the sample */
        s->v = p;
        s->cap = cap;
    }
    s->v[s->len++] = v;
}

static struct request* open_at(struct run* r, size_t i) {
    return &r->open[(r->open_head + i) % r->open_cap];
}

/* Requests complete in order, as their packets do on one queue. */
static void retire_requests(struct run* r, const struct options* o) {
    while (r->open_len) {
        struct request* q = open_at(r, 0);
        uint64_t lat;

        if (!q->closed || r->completed < q->end)
            return;
        lat = r->last_done_ns > q->arrival ? r->last_done_ns - q->arrival : 0;
        samples_push(&r->request_latency, lat);
        if (o->per_request && !o->quiet)
            printf("{\"event\":\"request\",\"index\":%llu,\"latency_us\":%.1f}\n",
                   (unsigned long long)q->index, lat / 1e3);
        r->open_head = (r->open_head + 1) % r->open_cap;
        r->open_len--;
    }
}

static void record_completions(struct run* r, const struct options* o, hsa_signal_value_t left,
                               uint64_t now) {
    const uint64_t mask = r->queue->size - 1;
    const uint64_t finished = r->submitted - (uint64_t)(left < 0 ? 0 : left);

    if (r->completed < finished)
        r->last_done_ns = now;
    /* One queue completes in order: packets completed..finished-1 are done. */
    for (; r->completed < finished; r->completed++) {
        uint64_t lat = now - r->submit_ns[r->completed & mask];

        samples_push(&r->latency, lat);
        if (o->per_packet && !o->quiet)
            printf("{\"event\":\"packet\",\"index\":%llu,\"latency_us\":%.1f}\n",
                   (unsigned long long)r->completed, lat / 1e3);
    }
    retire_requests(r, o);
}

/* A new request: its arrival is the due time in open loop. */
static void open_request(struct run* r, uint64_t arrival) {
    struct request* q = open_at(r, r->open_len++);

    *q = (struct request){.index = r->requests++, .arrival = arrival, .end = r->submitted};
}

/* The request being submitted gets no more kernels. */
static void close_request(struct run* r, const struct options* o) {
    if (r->open_len && !open_at(r, r->open_len - 1)->closed) {
        open_at(r, r->open_len - 1)->closed = true;
        retire_requests(r, o);
    }
}

static void print_progress(const struct run* r, uint64_t t0, uint64_t now) {
    printf(
        "{\"event\":\"progress\",\"t_ms\":%.1f,\"submitted\":%llu,\"completed\":%llu,"
        "\"write_index\":%llu,\"read_index\":%llu,\"doorbells\":%llu}\n",
        (now - t0) / 1e6, (unsigned long long)r->submitted, (unsigned long long)r->completed,
        (unsigned long long)hsa_queue_load_write_index_relaxed(r->queue),
        (unsigned long long)hsa_queue_load_read_index_scacquire(r->queue),
        (unsigned long long)r->doorbells);
}

static int cmp_u64(const void* a, const void* b) {
    uint64_t x = *(const uint64_t*)a, y = *(const uint64_t*)b;

    return x < y ? -1 : x > y;
}

static double pct_us(const uint64_t* sorted, size_t n, double p) {
    size_t i;

    if (!n)
        return 0;
    i = (size_t)(p / 100.0 * (double)(n - 1) + 0.5);
    return sorted[i] / 1e3;
}

static void print_summary(struct run* r, const struct options* o, uint64_t elapsed,
                          const char* status) {
    uint64_t* lat = r->latency.v;
    size_t n = r->latency.len;
    uint64_t* rl = r->request_latency.v;
    size_t rn = r->request_latency.len;
    double mean = 0, rmean = 0;

    qsort(lat, n, sizeof(uint64_t), cmp_u64);
    for (size_t i = 0; i < n; ++i)
        mean += (double)lat[i];
    mean = n ? mean / (double)n / 1e3 : 0;
    qsort(rl, rn, sizeof(uint64_t), cmp_u64);
    for (size_t i = 0; i < rn; ++i)
        rmean += (double)rl[i];
    rmean = rn ? rmean / (double)rn / 1e3 : 0;
    printf(
        "{\"event\":\"summary\",\"status\":\"%s\",\"submitted\":%llu,\"completed\":%llu,"
        "\"doorbells\":%llu,\"rerings\":%llu,\"elapsed_s\":%.6f,\"duration_us\":%.1f,"
        "\"latency_us\":{\"min\":%.1f,\"p50\":%.1f,\"p90\":%.1f,\"p99\":%.1f,"
        "\"max\":%.1f,\"mean\":%.1f},",
        status, (unsigned long long)r->submitted, (unsigned long long)r->completed,
        (unsigned long long)r->doorbells, (unsigned long long)r->rerings, elapsed / 1e9,
        o->duration_ns / 1e3, n ? lat[0] / 1e3 : 0.0, pct_us(lat, n, 50), pct_us(lat, n, 90),
        pct_us(lat, n, 99), n ? lat[n - 1] / 1e3 : 0.0, mean);
    printf(
        "\"it_per_s\":%.3f,\"requests\":%llu,\"request_kernels\":%u,\"gap_us\":%.1f,"
        "\"cu_mask\":%u,\"latency_from\":\"%s\",\"request_latency_us\":{\"p50\":%.1f,"
        "\"p95\":%.1f,\"p99\":%.1f,\"max\":%.1f,\"mean\":%.1f,\"n\":%zu}}\n",
        elapsed ? (double)r->completed / (elapsed / 1e9) : 0.0, (unsigned long long)r->requests,
        o->request_kernels, o->gap_ns / 1e3, o->cu_mask, o->period_ns ? "schedule" : "submit",
        pct_us(rl, rn, 50), pct_us(rl, rn, 95), pct_us(rl, rn, 99), rn ? rl[rn - 1] / 1e3 : 0.0,
        rmean, rn);
}

static uint64_t min_u64(uint64_t a, uint64_t b) {
    return a < b ? a : b;
}

/* The ring has room for @n more packets. */
static bool ring_has_room(const struct run* r, uint32_t n) {
    return r->submitted - r->completed + n <= r->queue->size;
}

/*
 * The submit/wait loop. Returns the exit status. One request at a time is
 * being submitted (one launching thread); between its doorbell stores the
 * loop waits on the completion signal, so completions are seen on time.
 */
static int drive(struct run* r, const struct options* o) {
    const uint64_t t0 = now_ns();
    const uint64_t submit_end = o->seconds > 0 ? t0 + (uint64_t)(o->seconds * 1e9) : UINT64_MAX;
    uint64_t next_due = t0; /* open loop: when request r->requests is due */
    uint64_t next_try = t0; /* no store before this: a gap, a full ring */
    uint32_t kernels = 0;   /* of the request being submitted; 0: none */
    uint64_t next_progress = o->progress_ns ? t0 : UINT64_MAX;
    uint64_t drain_deadline = 0;
    const char* status = "ok";

    for (;;) {
        uint64_t now = now_ns();
        const bool submitting = !stop_requested && !r->queue_error &&
                                (o->count == 0 || r->submitted < o->count) && now < submit_end;

        if (!submitting && kernels) {
            close_request(r, o); /* cut short: it counts with what it got */
            kernels = 0;
        }
        if (!submitting && r->submitted == r->completed)
            break;
        if (r->queue_error) {
            status = "queue_error";
            break;
        }
        if (!submitting && !drain_deadline)
            drain_deadline = now + (uint64_t)(o->drain_timeout_s * 1e9);
        if (!submitting && now >= drain_deadline) {
            status = "incomplete";
            break;
        }

        const bool start_due = o->period_ns ? now >= next_due : r->submitted == r->completed;
        if (submitting && now >= next_try && (kernels || start_due)) {
            uint64_t left = o->count ? o->count - r->submitted : UINT64_MAX;
            uint32_t n = (uint32_t)min_u64(o->batch, left);

            if (ring_has_room(r, n)) {
                if (!kernels)
                    open_request(r, o->period_ns ? next_due : now);
                submit_batch(r, o, n, now);
                open_at(r, r->open_len - 1)->end = r->submitted;
                if (++kernels == o->request_kernels || n == left) {
                    close_request(r, o);
                    kernels = 0;
                    /* Request k is due at t0 + k * period, late or not. */
                    next_due = t0 + r->requests * o->period_ns;
                } else {
                    next_try = now + o->gap_ns;
                }
            } else {
                /* Ring full (the queue is not being served): keep
                 * ringing, as a busy producer's doorbell would. */
                hsa_signal_store_screlease(
                    r->queue->doorbell_signal,
                    (hsa_signal_value_t)(hsa_queue_load_write_index_relaxed(r->queue) - 1));
                r->doorbells++;
                r->rerings++;
                next_try = now + (o->period_ns && !kernels ? o->period_ns : RETRY_FULL_NS);
            }
        }

        /* Sleep until something is due: a completion, a submission,
         * a progress line, the drain deadline. */
        uint64_t wake = min_u64(next_progress, now + MAX_WAIT_NS);
        bool store_next = false; /* a store is due as soon as the wait ends */
        if (submitting && kernels) {
            wake = min_u64(wake, next_try);
            store_next = true;
        } else if (submitting && o->period_ns) {
            wake = min_u64(wake, next_due > next_try ? next_due : next_try);
            store_next = true;
        }
        if (!submitting)
            wake = min_u64(wake, drain_deadline);
        now = now_ns();
        uint64_t timeout = wake > now ? wake - now : 0;
        uint64_t outstanding = r->submitted - r->completed;
        hsa_signal_value_t left;

        if (store_next && timeout && timeout <= SPIN_BELOW_NS) {
            /* A short gap: a wait would overshoot it. */
            while (now_ns() < wake)
                ;
            left = hsa_signal_load_scacquire(r->done);
        } else if (outstanding) {
            left = hsa_signal_wait_scacquire(r->done, HSA_SIGNAL_CONDITION_LT,
                                             (hsa_signal_value_t)outstanding, timeout,
                                             HSA_WAIT_STATE_BLOCKED);
        } else {
            /* Closed loop with nothing open: the next request goes now. */
            if (timeout && !(submitting && !o->period_ns && !kernels))
                sleep_ns(timeout);
            left = hsa_signal_load_scacquire(r->done);
        }
        now = now_ns();
        record_completions(r, o, left, now);
        if (now >= next_progress) {
            if (!o->quiet)
                print_progress(r, t0, now);
            next_progress += o->progress_ns;
            if (next_progress < now)
                next_progress = now + o->progress_ns;
        }
    }
    const uint64_t elapsed = now_ns() - t0;

    if (o->progress_ns && !o->quiet)
        print_progress(r, t0, now_ns());
    print_summary(r, o, elapsed, status);
    if (!strcmp(status, "queue_error"))
        return 1;
    return strcmp(status, "ok") ? 3 : 0;
}

int main(int argc, char** argv) {
    struct options o;
    struct agent_pick pick = {0};
    struct run r = {0};
    struct sigaction sa = {.sa_handler = on_signal};
    hsa_status_t st;
    int rc;

    rc = parse_options(argc, argv, &o);
    if (rc)
        return rc;
    setvbuf(stdout, NULL, _IOLBF, 0);
    sigemptyset(&sa.sa_mask);
    sigaction(SIGINT, &sa, NULL);
    sigaction(SIGTERM, &sa, NULL);

    st = hsa_init();
    if (st != HSA_STATUS_SUCCESS)
        return fail("hsa_init", st);

    pick.want = o.agent_index;
    pick.print = o.list_agents;
    st = hsa_iterate_agents(visit_agent, &pick);
    if (st != HSA_STATUS_SUCCESS) {
        rc = fail("hsa_iterate_agents", st);
        goto out_shut_down;
    }
    if (o.list_agents)
        goto out_shut_down;
    if (!pick.found) {
        printf(
            "{\"event\":\"error\",\"call\":\"hsa_iterate_agents\",\"message\":\"no GPU agent %u "
            "(%u found)\"}\n",
            pick.want, pick.seen);
        fprintf(stderr, "hsa_app: no GPU agent %u (%u found)\n", pick.want, pick.seen);
        rc = 1;
        goto out_shut_down;
    }

    st = hsa_queue_create(pick.agent, o.queue_size, HSA_QUEUE_TYPE_SINGLE, on_queue_error, &r,
                          UINT32_MAX, UINT32_MAX, &r.queue);
    if (st != HSA_STATUS_SUCCESS) {
        rc = fail("hsa_queue_create", st);
        goto out_shut_down;
    }
    if (o.priority) {
        hsa_amd_queue_priority_t p = !strcmp(o.priority, "low")    ? HSA_AMD_QUEUE_PRIORITY_LOW
                                     : !strcmp(o.priority, "high") ? HSA_AMD_QUEUE_PRIORITY_HIGH
                                                                   : HSA_AMD_QUEUE_PRIORITY_NORMAL;

        st = hsa_amd_queue_set_priority(r.queue, p);
        if (st != HSA_STATUS_SUCCESS) {
            rc = fail("hsa_amd_queue_set_priority", st);
            goto out_queue;
        }
    }
    st = hsa_signal_create(0, 0, NULL, &r.done);
    if (st != HSA_STATUS_SUCCESS) {
        rc = fail("hsa_signal_create", st);
        goto out_queue;
    }
    if (o.cu_mask) {
        /* The first N CUs, as hipExtStreamCreateWithCUMask users pass them. */
        uint32_t words = (o.cu_mask + 31) / 32;
        uint32_t* mask = calloc(words, sizeof(*mask));

        if (!mask) {
            fprintf(stderr, "hsa_app: out of memory\n");
            rc = 1;
            goto out_signal;
        }
        for (uint32_t i = 0; i < o.cu_mask; ++i)
            mask[i / 32] |= 1u << (i % 32);
        st = hsa_amd_queue_cu_set_mask(r.queue, words * 32, mask);
        free(mask);
        if (st != HSA_STATUS_SUCCESS) {
            rc = fail("hsa_amd_queue_cu_set_mask", st);
            goto out_signal;
        }
    }
    /* Requests not yet complete: each has a packet in the ring, but one. */
    r.open_cap = (size_t)r.queue->size + 2;
    r.open = calloc(r.open_cap, sizeof(*r.open));
    r.submit_ns = calloc(r.queue->size, sizeof(*r.submit_ns));
    if (!r.submit_ns || !r.open) {
        free(r.open);
        free(r.submit_ns);
        fprintf(stderr, "hsa_app: out of memory\n");
        rc = 1;
        goto out_signal;
    }

    {
        char name[64] = "", product[64] = "";
        uint32_t node = 0, cus = 0;

        hsa_agent_get_info(pick.agent, HSA_AGENT_INFO_NAME, name);
        hsa_agent_get_info(pick.agent, (hsa_agent_info_t)HSA_AMD_AGENT_INFO_PRODUCT_NAME, product);
        hsa_agent_get_info(pick.agent, (hsa_agent_info_t)HSA_AMD_AGENT_INFO_DRIVER_NODE_ID, &node);
        hsa_agent_get_info(pick.agent, (hsa_agent_info_t)HSA_AMD_AGENT_INFO_COMPUTE_UNIT_COUNT,
                           &cus);
        if (!o.quiet) {
            printf("{\"event\":\"start\",\"pid\":%d,\"agent\":", (int)getpid());
            print_json_string(name);
            printf(",\"product\":");
            print_json_string(product);
            printf(
                ",\"node_id\":%u,\"queue_id\":%llu,\"ring_va\":\"%p\",\"queue_size\":%u,"
                "\"count\":%llu,\"duration_us\":%.1f,\"period_us\":%.1f,\"batch\":%u,"
                "\"width\":%u,\"priority\":\"%s\",\"request_kernels\":%u,\"gap_us\":%.1f,"
                "\"cu_mask\":%u,\"compute_units\":%u}\n",
                node, (unsigned long long)r.queue->id, r.queue->base_address, r.queue->size,
                (unsigned long long)o.count, o.duration_ns / 1e3, o.period_ns / 1e3, o.batch,
                o.width, o.priority ? o.priority : "default", o.request_kernels, o.gap_ns / 1e3,
                o.cu_mask, cus);
        }
    }

    rc = drive(&r, &o);

    free(r.latency.v);
    free(r.request_latency.v);
    free(r.open);
    free(r.submit_ns);
out_signal:
    hsa_signal_destroy(r.done);
out_queue:
    st = hsa_queue_destroy(r.queue);
    if (st != HSA_STATUS_SUCCESS && !rc)
        rc = fail("hsa_queue_destroy", st);
out_shut_down:
    st = hsa_shut_down();
    if (st != HSA_STATUS_SUCCESS && !rc)
        rc = fail("hsa_shut_down", st);
    return rc;
}
