// SPDX-License-Identifier: MIT
//
// The control loop natively: a tagged high-priority queue goes from idle to
// busy (the tagging layer's page update and wake-up), and the controller -
// amdqpd's loop on a thread, woken by the wake channel - samples, decides
// and calls SUSPEND_BELOW. What is timed is the daemon's own measure
// (doorbell time in the page -> SUSPEND_BELOW returned), against the
// in-memory /dev/amdqp fake, so it is the loop's cost without any unmap
// latency: the native counterpart of the VM benchmark's loop_only numbers.
//
//   amdqpd_loop_bench [--iterations N] [--json FILE]
#include <sched.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <string>
#include <thread>
#include <vector>

#include "activity_page.hpp"
#include "activity_proc.hpp"
#include "busy_announce.hpp"
#include "controller.hpp"
#include "daemon_link.hpp"
#include "fake_amdqp.hpp"

using namespace amdqp::daemon;
using namespace std::chrono_literals;

int main(int argc, char** argv) {
    int iterations = 300;
    std::string json;
    for (int i = 1; i < argc; ++i) {
        if (!std::strcmp(argv[i], "--iterations") && i + 1 < argc)
            iterations = std::atoi(argv[++i]);
        else if (!std::strcmp(argv[i], "--json") && i + 1 < argc)
            json = argv[++i];
        else {
            std::fprintf(stderr, "usage: %s [--iterations N] [--json FILE]\n", argv[0]);
            return 2;
        }
    }
    char tmpl[] = "/tmp/amdqpd-bench.XXXXXX";
    const std::string dir = mkdtemp(tmpl);
    setenv("AMDQP_RUNTIME_DIR", dir.c_str(), 1);

    auto fake = std::make_shared<amdqp::testing::FakeAmdqp>();
    fake->caller_uid = getuid();
    fake->caller_pid = static_cast<std::uint32_t>(getpid());
    fake->cap_sys_admin = true;
    fake->add_gpu(1);
    fake->add_queue(getpid(), 1, 0x10000, 2, getuid());
    fake->add_queue(getpid(), 1, 0x20000, 12, getuid());

    // This process plays both tagged queues.
    static std::uint64_t read_index[2] = {0, 0};
    amdqp::detail::ActivityWriter writer;
    for (int q = 0; q < 2; ++q) {
        amdqp::detail::SlotInit init;
        init.gpu_id = 1;
        init.priority = q ? 12 : 2;
        init.mechanism = AMDQP_ACT_MECH_AMDQP;
        init.ring_va = q ? 0x20000 : 0x10000;
        init.read_index_va = reinterpret_cast<std::uint64_t>(&read_index[q]);
        if (writer.take_slot(init) != q) {
            std::fprintf(stderr, "no activity page: %s\n", std::strerror(writer.error()));
            return 1;
        }
    }

    DaemonConfig cfg;
    cfg.runtime_dir = dir;
    cfg.metrics = "";
    cfg.rescan = 1000ms;
    cfg.policy.hysteresis_min = 1ms;
    cfg.policy.hysteresis_initial = 1ms;
    cfg.hold_timeout = 1000us;
    cfg.policy.min_low_share = 0;
    Metrics metrics;
    Log log("error");
    MonotonicClock clock;
    Controller ctl(cfg, metrics, log, clock,
                   [fake](const std::string&) { return amdqp::Device::open(fake->path, fake); });
    // Register with the controller's socket as a process that starts after
    // amdqpd does: its wakes then come over the connection.
    ::setenv("AMDQP_RUNTIME_DIR", dir.c_str(), 1);
    amdqp::detail::register_page(writer.fd());
    std::atomic<bool> stop{false};
    // As amdqpd runs with realtime_priority set (its packaged config): on a
    // busy host the loop's wake-up otherwise waits behind other work.
    std::atomic<int> realtime{-1};
    std::thread loop([&] {
        struct sched_param sp = {};
        sp.sched_priority = 10;
        realtime = sched_setscheduler(0, SCHED_FIFO, &sp) == 0;
        while (!stop)
            ctl.cycle();
    });
    while (realtime < 0)
        std::this_thread::yield();

    amdqp_act_slot* hp = writer.slot(1);
    amdqp_act_header* hdr = amdqp::detail::header_of(hp);
    std::this_thread::sleep_for(300ms);  // discovered, control flags set
    std::uint64_t wi = 0;
    for (int i = 0; i < iterations; ++i) {
        // One request: what record_doorbell() does on an idle queue.
        ++wi;
        std::atomic_ref<std::uint64_t>(hp->write_index).store(wi, std::memory_order_relaxed);
        std::atomic_ref<std::uint64_t>(hp->doorbells).fetch_add(1, std::memory_order_relaxed);
        std::atomic_ref<std::uint64_t>(hp->last_doorbell_ns)
            .store(amdqp::detail::monotonic_ns(), std::memory_order_release);
        amdqp::detail::announce_busy(*hdr, amdqp::detail::controller_flags(*hdr));
        std::this_thread::sleep_for(2ms);  // the "kernel"
        std::atomic_ref<std::uint64_t>(read_index[1]).store(wi, std::memory_order_release);
        std::this_thread::sleep_for(25ms);  // idle well past the hysteresis
    }
    stop = true;
    ctl.wake().wake();
    loop.join();
    ctl.release_all();

    std::vector<double> us = metrics.control_loop_samples();
    std::string cleanup = "rm -rf '" + dir + "'";
    if (std::system(cleanup.c_str()) != 0) {
    }
    if (us.empty()) {
        std::fprintf(stderr, "no control-loop samples\n");
        return 1;
    }
    std::sort(us.begin(), us.end());
    auto q = [&](double p) {
        return us[std::min(us.size() - 1, std::size_t(p * (us.size() - 1) + 0.5))];
    };
    const long holds = static_cast<long>(hdr->holds),
               timeouts = static_cast<long>(hdr->hold_timeouts);
    std::printf(
        "control loop natively (fake /dev/amdqp, no unmap latency): p50 %.1f us, p99 %.1f us, "
        "max %.1f us, n %zu; doorbells held %ld, hold timeouts %ld; loop thread %s\n",
        q(0.5), q(0.99), us.back(), us.size(), holds, timeouts,
        realtime ? "SCHED_FIFO 10" : "normal scheduling (SCHED_FIFO refused: no CAP_SYS_NICE)");
    if (!json.empty()) {
        std::ofstream(json) << "{\"p50_us\": " << q(0.5) << ", \"p99_us\": " << q(0.99)
                            << ", \"max_us\": " << us.back() << ", \"n\": " << us.size()
                            << ", \"holds\": " << holds << ", \"hold_timeouts\": " << timeouts
                            << ", \"realtime\": " << (realtime ? "true" : "false")
                            << ", \"unmap_us\": 0}\n";
    }
    return 0;
}
