// SPDX-License-Identifier: MIT
//
// amdqpd: runs the preemption policy for the host (Documentation/policy.rst,
// Documentation/admin-guide.rst).
#include <fcntl.h>
#include <sched.h>
#include <signal.h>
#include <sys/stat.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <iostream>
#include <memory>
#include <optional>

#include <CLI/CLI.hpp>

#include <amdqp/activity.hpp>

#include "config_file.hpp"
#include "controller.hpp"
#include "log.hpp"
#include "metrics.hpp"
#include "metrics_server.hpp"

#if AMDQPD_HAVE_SYSTEMD
#include <systemd/sd-daemon.h>
#endif

namespace {

using namespace amdqp::daemon;

std::atomic<int> g_stop{0};
std::atomic<bool> g_reload{false};

void on_stop(int sig) {
    g_stop = sig;
}
void on_hup(int) {
    g_reload = true;
}

void notify(const std::string& what) {
#if AMDQPD_HAVE_SYSTEMD
    sd_notify(0, what.c_str());
#else
    (void)what;
#endif
}

// Handlers without SA_RESTART: a signal ends the futex wait at once.
void install_signals() {
    struct sigaction sa = {};
    sa.sa_handler = on_stop;
    sigemptyset(&sa.sa_mask);
    sigaction(SIGTERM, &sa, nullptr);
    sigaction(SIGINT, &sa, nullptr);
    sa.sa_handler = on_hup;
    sigaction(SIGHUP, &sa, nullptr);
    signal(SIGPIPE, SIG_IGN);
}

}  // namespace

int main(int argc, char** argv) {
    CLI::App app{
        "amdqpd: suspends lower-priority GPU queues while higher-priority work runs.\n"
        "Finds processes tagged by the amdqp tagging layer (amdqpctl run --priority, or\n"
        "AMDQP_PRIORITY with LD_PRELOAD/HSA_TOOLS_LIB) and steers their queues through\n"
        "/dev/amdqp (amdqp.ko) or cooperatively. See amdqpd(8), Documentation/admin-guide.rst.",
        "amdqpd"};
    std::string config_path = kDefaultConfigPath;
    bool check = false;
    std::optional<std::string> metrics_addr;
    std::optional<std::string> runtime_dir;
    std::optional<std::string> order;
    std::optional<std::string> log_level;
    bool version = false;
    auto* cfg_opt =
        app.add_option("-c,--config", config_path,
                       "Configuration file (default " + std::string(kDefaultConfigPath) +
                           "; missing = built-in defaults)");
    app.add_flag("--check-config", check,
                 "Validate the configuration, print 'file:line: problem' lines, exit 0 or 1");
    app.add_option("--metrics", metrics_addr,
                   "Prometheus endpoint: HOST:PORT, unix:PATH or \"\" for none (overrides "
                   "[daemon] metrics)");
    app.add_option("--runtime-dir", runtime_dir,
                   "Directory of amdqpd's socket, made 0755 if missing (overrides [daemon] "
                   "runtime_dir; default $AMDQP_RUNTIME_DIR or /run/amdqpd)");
    app.add_option("--order", order, "before-doorbell or after-doorbell (overrides [policy] order)")
        ->check(CLI::IsMember({"before-doorbell", "after-doorbell"}));
    app.add_option("--log-level", log_level, "error, warning, info or debug")
        ->check(CLI::IsMember({"error", "warning", "info", "debug"}));
    bool foreground = false;
    app.add_flag("--foreground", foreground, "Accepted for compatibility: amdqpd never forks");
    app.add_flag("-V,--version", version, "Print the version and exit");
    CLI11_PARSE(app, argc, argv);
    if (version) {
        std::cout << "amdqpd " << AMDQPD_VERSION << "\n";
        return 0;
    }
    const bool explicit_config = cfg_opt->count() > 0;

    auto load = [&]() {
        DaemonConfig c = load_config(config_path, explicit_config, kernel_watchdog_max_suspend(),
                                     kernel_watchdog_max_confine());
        if (metrics_addr)
            c.metrics = *metrics_addr;
        if (runtime_dir)
            c.runtime_dir = *runtime_dir;
        if (order)
            c.policy.order = *order == "after-doorbell"
                                 ? amdqp::policy::SuspendOrder::kAfterDoorbell
                                 : amdqp::policy::SuspendOrder::kBeforeDoorbell;
        if (log_level)
            c.log_level = *log_level;
        return c;
    };

    DaemonConfig cfg;
    try {
        cfg = load();
    } catch (const ConfigError& e) {
        for (const auto& p : e.problems())
            std::cerr << p << "\n";
        if (!check)
            std::cerr << "amdqpd: configuration refused; nothing was started\n";
        return 1;
    }
    if (check) {
        std::cout << config_path << ": ok (order " << amdqp::policy::to_string(cfg.policy.order)
                  << ", " << cfg.rules.size() << " rule(s))\n";
        return 0;
    }

    Log log(cfg.log_level);
    install_signals();
    if (cfg.realtime_priority > 0) {
        // A busy host must not delay the control loop behind the batch
        // work it is there to hold off; it sleeps almost all the time.
        struct sched_param sp = {};
        sp.sched_priority = cfg.realtime_priority;
        if (sched_setscheduler(0, SCHED_FIFO, &sp) != 0)
            log.warning("realtime", std::string("realtime_priority ") +
                                        std::to_string(cfg.realtime_priority) +
                                        " refused (needs CAP_SYS_NICE): " + std::strerror(errno));
    }
    Metrics metrics;
    MonotonicClock clock;
    std::unique_ptr<MetricsServer> server;
    std::unique_ptr<Controller> ctl;
    try {
        if (!cfg.metrics.empty()) {
            server = std::make_unique<MetricsServer>(cfg.metrics, metrics);
            log.info("metrics", "metrics on " + server->address() + "/metrics");
        }
        ctl = std::make_unique<Controller>(cfg, metrics, log, clock);
    } catch (const std::exception& e) {
        log.error("start_failed", e.what());
        return 1;
    }
    const std::string dir = ctl->socket_path().empty() ? "/proc" : ctl->socket_path();
    log.info("start", "amdqpd " AMDQPD_VERSION " listening on " + dir + ", order " +
                          std::string(amdqp::policy::to_string(cfg.policy.order)));
    ctl->step();
    ctl->publish_status();
    notify("READY=1\nSTATUS=listening on " + dir);
    std::uint64_t watchdog_us = 0;
#if AMDQPD_HAVE_SYSTEMD
    if (sd_watchdog_enabled(0, &watchdog_us) <= 0)
        watchdog_us = 0;
#endif
    std::int64_t next_status = 0, next_ping = 0;
    while (!g_stop) {
        if (g_reload.exchange(false)) {
            notify("RELOADING=1");
            try {
                DaemonConfig next = load();
                ctl->reconfigure(next);
                log.set_level(next.log_level);
                log.info("reload", "configuration reloaded from " + config_path);
            } catch (const ConfigError& e) {
                log.error("reload_refused", "new configuration refused, keeping the old one: " +
                                                std::string(e.what()));
            }
            notify("READY=1");
        }
        const std::int64_t now = clock.now_ns();
        if (now >= next_status) {
            ctl->publish_status();
            next_status = now + 500'000'000;
        }
        if (watchdog_us && now >= next_ping) {
            notify("WATCHDOG=1");
            next_ping = now + static_cast<std::int64_t>(watchdog_us) * 500;
        }
        ctl->cycle();
    }
    notify("STOPPING=1");
    log.info("stop", "signal " + std::to_string(g_stop.load()) + ": releasing every suspension");
    ctl->release_all();
    return 0;
}
