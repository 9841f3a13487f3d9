// SPDX-License-Identifier: MIT
// Tagging cost per submission: what a tools library (the tagging layer,
// libamdqp-preload.so) adds to one AQL submission - reserve a slot, write
// the packet, store the doorbell, all through the HSA API table - on the
// hsa-sim stand-in.
//
// Both sides run in the same process on the same queue: a probe tool
// listed first in HSA_TOOLS_LIB keeps the runtime's own table entries, the
// tool under test then installs its own, and the benchmark swaps the whole
// table between the two between samples ("without" = as if no tools library
// were loaded). Samples alternate between the sides, so drift and
// disturbances hit both alike. A sample times a batch of
// submissions with CLOCK_MONOTONIC and divides; waiting for the packet
// processor to free ring slots is never timed.
//
// Output: {"median_ns_added": N, "p99_ns_added": N, "submissions": N, ...}
// where added = tagged - baseline of the per-submission median (p99), and
// submissions = tagged submissions measured.
#include <dlfcn.h>
#include <hsa/hsa.h>
#include <sched.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <ctime>
#include <string>
#include <vector>

#include "table_probe.h"

namespace {

struct Options {
    std::string tool;
    std::string out;
    std::string probe = HSASIM_BENCH_PROBE_PATH;
    uint64_t submissions = 1000000;  // per side
    uint32_t batch = 16;
};

uint64_t now_ns() {
    timespec ts{};
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return static_cast<uint64_t>(ts.tv_sec) * 1000000000ull + static_cast<uint64_t>(ts.tv_nsec);
}

[[noreturn]] void die(const char* fmt, const char* arg = "") {
    fprintf(stderr, "hsasim_bench_tagging: ");
    fprintf(stderr, fmt, arg);
    fputc('\n', stderr);
    exit(1);
}

void usage(FILE* f) {
    fprintf(f,
            "usage: hsasim_bench_tagging --tool LIB --out FILE [--submissions N] [--batch N]\n"
            "                            [--probe LIB]\n"
            "  --tool LIB         tools library under test (e.g. libamdqp-preload.so)\n"
            "  --out FILE         where to write the JSON result\n"
            "  --submissions N    measured submissions per side (default 1000000)\n"
            "  --batch N          submissions per timed sample (default 16)\n"
            "  --probe LIB        the probe tool (default: the one built with this)\n"
            "The runtime is the hsa-sim stand-in; HSA_SIM_BACKEND picks sim or thread.\n");
}

uint64_t parse_u64(const char* s) {
    char* end = nullptr;
    errno = 0;
    unsigned long long v = strtoull(s, &end, 10);
    if (errno || !*s || *end || v == 0)
        die("bad number: %s", s);
    return v;
}

Options parse(int argc, char** argv) {
    Options o;
    for (int i = 1; i < argc; ++i) {
        std::string a = argv[i];
        auto value = [&]() -> const char* {
            if (i + 1 >= argc)
                die("%s needs a value", argv[i]);
            return argv[++i];
        };
        if (a == "--tool")
            o.tool = value();
        else if (a == "--out")
            o.out = value();
        else if (a == "--probe")
            o.probe = value();
        else if (a == "--submissions")
            o.submissions = parse_u64(value());
        else if (a == "--batch")
            o.batch = static_cast<uint32_t>(std::min<uint64_t>(parse_u64(value()), 1024));
        else if (a == "-h" || a == "--help") {
            usage(stdout);
            exit(0);
        } else {
            usage(stderr);
            exit(2);
        }
    }
    if (o.tool.empty() || o.out.empty()) {
        usage(stderr);
        exit(2);
    }
    // dlopen searches the library path for names without a slash only:
    // ./lib.so and dir/lib.so are files, and must stay so once in the list.
    for (std::string* path : {&o.tool, &o.probe}) {
        if (path->find('/') != std::string::npos) {
            char* abs = realpath(path->c_str(), nullptr);
            if (!abs)
                die("%s: no such file", path->c_str());
            *path = abs;
            free(abs);
        }
    }
    return o;
}

hsa_status_t find_gpu(hsa_agent_t agent, void* data) {
    hsa_device_type_t type;
    if (hsa_agent_get_info(agent, HSA_AGENT_INFO_DEVICE, &type) == HSA_STATUS_SUCCESS &&
        type == HSA_DEVICE_TYPE_GPU) {
        *static_cast<hsa_agent_t*>(data) = agent;
        return HSA_STATUS_INFO_BREAK;
    }
    return HSA_STATUS_SUCCESS;
}

class Submitter {
  public:
    explicit Submitter(hsa_queue_t* q) : q_(q), mask_(q->size - 1) {}

    // One submission as a runtime client makes it: reserve, fill, publish.
    void submit() {
        const uint64_t index = hsa_queue_add_write_index_relaxed(q_, 1);
        auto* p = static_cast<hsa_kernel_dispatch_packet_t*>(q_->base_address) + (index & mask_);
        p->workgroup_size_x = 1;
        p->workgroup_size_y = 1;
        p->workgroup_size_z = 1;
        p->reserved0 = 0;
        p->grid_size_x = 1;
        p->grid_size_y = 1;
        p->grid_size_z = 1;
        p->private_segment_size = 0;
        p->group_segment_size = 0;
        p->kernel_object = 1;  // 1 ns: the processor frees slots quickly
        p->kernarg_address = nullptr;
        p->reserved2 = 0;
        p->completion_signal = hsa_signal_t{0};
        __atomic_store_n(reinterpret_cast<uint32_t*>(p), kHeader, __ATOMIC_RELEASE);
        hsa_signal_store_screlease(q_->doorbell_signal, static_cast<hsa_signal_value_t>(index));
    }

    // Untimed: wait until @n slots are free.
    void make_room(uint32_t n) {
        const uint64_t deadline = now_ns() + 10'000'000'000ull;
        for (;;) {
            uint64_t used =
                hsa_queue_load_write_index_relaxed(q_) - hsa_queue_load_read_index_scacquire(q_);
            if (used + n <= q_->size)
                return;
            if (now_ns() > deadline)
                die("the queue makes no progress%s", " (suspended? no packet processor?)");
            sched_yield();
        }
    }

    // Untimed: everything submitted has been consumed.
    void drain() { make_room(q_->size); }

  private:
    static constexpr uint32_t kHeader =
        ((HSA_PACKET_TYPE_KERNEL_DISPATCH << HSA_PACKET_HEADER_TYPE) |
         (1 << HSA_PACKET_HEADER_BARRIER) |
         (HSA_FENCE_SCOPE_SYSTEM << HSA_PACKET_HEADER_SCACQUIRE_FENCE_SCOPE) |
         (HSA_FENCE_SCOPE_SYSTEM << HSA_PACKET_HEADER_SCRELEASE_FENCE_SCOPE)) |
        ((1u << HSA_KERNEL_DISPATCH_PACKET_SETUP_DIMENSIONS) << 16);

    hsa_queue_t* q_;
    uint64_t mask_;
};

struct Side {
    CoreApiTable core;
    AmdExtTable amd_ext;
    std::vector<double> ns_per_submission;
    uint64_t submissions = 0;
};

void install(HsaApiTable* live, const Side& side) {
    *live->core_ = side.core;
    *live->amd_ext_ = side.amd_ext;
}

void measure(Submitter& sub, Side& side, uint64_t samples, uint32_t batch) {
    for (uint64_t s = 0; s < samples; ++s) {
        sub.make_room(batch);
        const uint64_t t0 = now_ns();
        for (uint32_t k = 0; k < batch; ++k)
            sub.submit();
        const uint64_t t1 = now_ns();
        side.ns_per_submission.push_back(static_cast<double>(t1 - t0) / batch);
        side.submissions += batch;
    }
}

double quantile(std::vector<double> v, double q) {
    if (v.empty())
        return 0;
    std::sort(v.begin(), v.end());
    return v[static_cast<size_t>(q * static_cast<double>(v.size() - 1) + 0.5)];
}

}  // namespace

int main(int argc, char** argv) {
    const Options o = parse(argc, argv);
    // The probe first, so that it sees the table before the tool changes it.
    const std::string tools = o.probe + " " + o.tool;
    setenv("HSA_TOOLS_LIB", tools.c_str(), 1);
    setenv("HSA_TOOLS_REPORT_LOAD_FAILURE", "1", 1);
    setenv("AMDQP_QUIET", "1", 0);  // the tagging layer's one warning line

    if (hsa_init() != HSA_STATUS_SUCCESS)
        die("hsa_init failed%s", "");
    void* probe_lib = dlopen(o.probe.c_str(), RTLD_NOW | RTLD_NOLOAD);
    if (!probe_lib)
        die("probe %s was not loaded by hsa_init", o.probe.c_str());
    auto probe_fn = reinterpret_cast<HsaSimBenchProbeFn>(dlsym(probe_lib, "hsasim_bench_probe"));
    HsaSimBenchProbe* probe = probe_fn ? probe_fn() : nullptr;
    if (!probe || !probe->loaded)
        die("probe %s did not get the API table", o.probe.c_str());
    if (!dlopen(o.tool.c_str(), RTLD_NOW | RTLD_NOLOAD))
        die("tool %s was not loaded by hsa_init", o.tool.c_str());

    hsa_agent_t gpu{0};
    hsa_iterate_agents(find_gpu, &gpu);
    if (!gpu.handle)
        die("no GPU agent%s", "");
    hsa_queue_t* q = nullptr;
    // Created through the tool: it knows (tags) this queue.
    if (hsa_queue_create(gpu, 4096, HSA_QUEUE_TYPE_SINGLE, nullptr, nullptr, UINT32_MAX, UINT32_MAX,
                         &q) != HSA_STATUS_SUCCESS)
        die("hsa_queue_create failed%s", "");

    Side baseline, tagged;
    baseline.core = probe->core;
    baseline.amd_ext = probe->amd_ext;
    tagged.core = *probe->live->core_;
    tagged.amd_ext = *probe->live->amd_ext_;
    const bool intercepted =
        tagged.core.hsa_signal_store_screlease_fn != baseline.core.hsa_signal_store_screlease_fn;
    if (!intercepted)
        fprintf(stderr, "hsasim_bench_tagging: %s does not intercept doorbell stores\n",
                o.tool.c_str());

    Submitter sub(q);
    const uint64_t samples = std::max<uint64_t>(1, o.submissions / o.batch);
    // Warm-up on both sides, not recorded.
    for (Side* side : {&baseline, &tagged}) {
        Side scratch = *side;
        install(probe->live, scratch);
        measure(sub, scratch, std::min<uint64_t>(samples, 1000), o.batch);
    }
    // Sample pairs in ABBA order: whatever disturbs one sample (the packet
    // processor polling, an interrupt) is as likely to hit either side.
    for (uint64_t i = 0; i < samples; ++i) {
        Side* order[2] = {&baseline, &tagged};
        if (i % 2)
            std::swap(order[0], order[1]);
        for (Side* side : order) {
            install(probe->live, *side);
            measure(sub, *side, 1, o.batch);
        }
    }
    install(probe->live, tagged);  // the tool sees its queue destroyed
    sub.drain();
    hsa_queue_destroy(q);
    hsa_shut_down();

    const double base_median = quantile(baseline.ns_per_submission, 0.5);
    const double base_p99 = quantile(baseline.ns_per_submission, 0.99);
    const double tag_median = quantile(tagged.ns_per_submission, 0.5);
    const double tag_p99 = quantile(tagged.ns_per_submission, 0.99);
    const char* backend = getenv("HSA_SIM_BACKEND");

    FILE* f = fopen(o.out.c_str(), "w");
    if (!f)
        die("cannot write %s", o.out.c_str());
    fprintf(f,
            "{\"median_ns_added\": %.1f, \"p99_ns_added\": %.1f, \"submissions\": %llu, "
            "\"baseline_median_ns\": %.1f, \"tagged_median_ns\": %.1f, "
            "\"baseline_p99_ns\": %.1f, \"tagged_p99_ns\": %.1f, \"batch\": %u, "
            "\"backend\": \"%s\", \"doorbell_intercepted\": %s}\n",
            tag_median - base_median, tag_p99 - base_p99,
            static_cast<unsigned long long>(tagged.submissions), base_median, tag_median, base_p99,
            tag_p99, o.batch, backend && *backend ? backend : "sim",
            intercepted ? "true" : "false");
    if (fclose(f) != 0)
        die("cannot write %s", o.out.c_str());
    for (const Side* side : {&baseline, &tagged}) {
        printf("%s ns/submission:", side == &baseline ? "baseline" : "tagged  ");
        for (double q : {0.01, 0.25, 0.5, 0.75, 0.9, 0.95, 0.99, 0.999})
            printf(" p%g=%.1f", q * 100, quantile(side->ns_per_submission, q));
        printf("\n");
    }
    printf(
        "tagging cost: median +%.1f ns, p99 +%.1f ns per submission (%llu submissions, "
        "baseline median %.1f ns)\n",
        tag_median - base_median, tag_p99 - base_p99,
        static_cast<unsigned long long>(tagged.submissions), base_median);
    return 0;
}
