// SPDX-License-Identifier: MIT
// The in-process controller (amdqp/controller.h): Controller in a thread.
#include <amdqp/controller.h>

#include <atomic>
#include <cstring>
#include <memory>
#include <mutex>
#include <string>
#include <thread>

#include "config_file.hpp"
#include "controller.hpp"
#include "log.hpp"
#include "metrics.hpp"
#include "metrics_server.hpp"

namespace {

using namespace amdqp::daemon;

struct Running {
    DaemonConfig cfg;
    Log log;
    Metrics metrics;
    MonotonicClock clock;
    std::unique_ptr<MetricsServer> server;
    std::unique_ptr<Controller> ctl;
    std::atomic<bool> stop{false};
    std::thread thread;
};

std::mutex g_mutex;  // start/stop
std::unique_ptr<Running> g_running;

void say(char* err, std::size_t errlen, const std::string& msg) {
    if (err && errlen) {
        std::strncpy(err, msg.c_str(), errlen - 1);
        err[errlen - 1] = '\0';
    }
}

}  // namespace

extern "C" int amdqp_controller_start(const char* config_path, char* err, size_t errlen) {
    std::lock_guard lock(g_mutex);
    if (g_running) {
        say(err, errlen, "amdqp: an in-process controller already runs");
        return -1;
    }
    try {
        auto r = std::make_unique<Running>();
        if (config_path) {
            r->cfg = load_config(config_path, true, kernel_watchdog_max_suspend(),
                                 kernel_watchdog_max_confine());
        } else {
            r->cfg = load_config("/nonexistent", false, kernel_watchdog_max_suspend(),
                                 kernel_watchdog_max_confine());
            r->cfg.metrics = "";
            // Inside one application, with its own rights only: the
            // kernel's permissions and ceilings are the bound, and its own
            // processes' levels are theirs to choose (no admin config).
            r->cfg.default_max_priority = amdqp::priority_max;
        }
        r->log.set_level(r->cfg.log_level == "info" ? "warning" : r->cfg.log_level);
        if (!r->cfg.metrics.empty())
            r->server = std::make_unique<MetricsServer>(r->cfg.metrics, r->metrics);
        r->ctl = std::make_unique<Controller>(r->cfg, r->metrics, r->log, r->clock);
        Running* raw = r.get();
        r->thread = std::thread([raw] {
            while (!raw->stop.load(std::memory_order_acquire))
                raw->ctl->cycle();
            raw->ctl->release_all();
        });
        g_running = std::move(r);
        return 0;
    } catch (const std::exception& e) {
        say(err, errlen, std::string("amdqp: in-process controller: ") + e.what());
        return -1;
    }
}

extern "C" int amdqp_controller_stop(void) {
    std::lock_guard lock(g_mutex);
    if (!g_running)
        return -1;
    g_running->stop.store(true, std::memory_order_release);
    g_running->ctl->wake().wake();  // end its wait now
    g_running->thread.join();
    g_running.reset();
    return 0;
}
