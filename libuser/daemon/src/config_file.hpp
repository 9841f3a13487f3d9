// SPDX-License-Identifier: MIT
//
// amdqpd's configuration (/etc/amdqp/amdqpd.toml): the policy's knobs, the
// daemon's own, and the priority rules. Every knob is described in
// Documentation/admin-guide.rst and Documentation/policy.rst.
#ifndef AMDQPD_CONFIG_FILE_HPP
#define AMDQPD_CONFIG_FILE_HPP

#include <sys/types.h>

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <optional>
#include <stdexcept>
#include <string>
#include <string_view>
#include <vector>

#include "amdqp/policy/config.hpp"

namespace amdqp::daemon {

using namespace std::chrono_literals;

inline constexpr const char* kDefaultConfigPath = "/etc/amdqp/amdqpd.toml";

// Grants a level (or a maximum) and/or sets the group of the processes it
// matches: the administrator's word on an identity the tenant cannot
// forge (uid, gid, cgroup, Kubernetes pod). Every match given must hold;
// the first rule that matches wins. Documentation/security.rst.
struct Rule {
    std::string cgroup;  // glob (fnmatch, FNM_PATHNAME) on the cgroup v2 path
    std::optional<std::uint32_t> uid;
    std::optional<std::uint32_t> gid;  // the real, effective or a supplementary group
    std::string exe;                   // glob on /proc/PID/exe's target (not an identity)
    std::string k8s_priority_class;    // the pod's spec.priorityClassName
    std::string k8s_namespace;         // the pod's namespace (glob)
    std::string k8s_label;             // "key=value" among the pod's labels
    std::optional<int> priority;       // the level its queues get, whatever they declared
    std::optional<int> max_priority;   // or: what they declared, up to this
    std::optional<std::string> group;
    std::string where;  // "file:line" of the rule

    bool needs_pod() const {
        return !k8s_priority_class.empty() || !k8s_namespace.empty() || !k8s_label.empty();
    }
    // The most this rule lets a queue have (nullopt: it grants nothing).
    std::optional<int> ceiling() const {
        if (max_priority)
            return max_priority;
        return priority;
    }
};

// Where amdqpd learns a pod's namespace, PriorityClass and labels.
struct KubeConfig {
    // "" = off; http://127.0.0.1:PORT (a kubectl-proxy sidecar, or the
    // kubelet's read-only port) or unix:/PATH; only loopback or a socket.
    std::string api;
    std::string node_name;                   // "" = $NODE_NAME
    std::chrono::milliseconds refresh = 5s;  // pod list re-read at most this often
};

enum class GroupBy {
    kNone,    // only AMDQP_GROUP and rules make groups
    kCgroup,  // processes of one cgroup (container, pod, job step) form one
};

struct DaemonConfig {
    policy::Config policy;
    std::string runtime_dir;  // socket's; "" = AMDQP_RUNTIME_DIR or /run/amdqpd
    // Not in the file: which pids the /proc search may adopt (tests: their
    // own children, not the pages of other tests beside them); empty: all.
    std::function<bool(pid_t)> scan_filter;
    std::string device;                      // "" = libamdqp's default (/dev/amdqp)
    std::string metrics = "127.0.0.1:9464";  // "" = off; HOST:PORT or unix:PATH
    bool queue_metrics = false;              // per-queue series (pid labels: who runs what)
    std::string log_level = "info";          // error, warning, info, debug
    std::chrono::microseconds poll_interval = 250us;  // while something is held off
    std::chrono::milliseconds idle_poll = 50ms;       // otherwise (wake channel covers starts)
    std::chrono::milliseconds rescan = 200ms;         // page directory and queue list
    std::chrono::microseconds hold_timeout = 2000us;  // before-doorbell: longest hold
    std::chrono::milliseconds coop_lease = 2000ms;
    GroupBy group_by = GroupBy::kCgroup;
    int realtime_priority = 0;  // SCHED_FIFO priority of the loop, 0 = normal scheduling
    // [trust]: the ceiling of every process no rule grants more (the
    // config file accepts normal or lower), and per-uid budgets of one
    // step's work: pages (processes) and queues considered.
    int default_max_priority = 7;
    std::size_t max_pages_per_uid = 32;
    std::size_t max_queues_per_uid = 256;
    // The share of the control loop's time one uid's pages may take (%,
    // 100: unmetered; root never is): see loop_budget.hpp.
    int loop_share_pct = 20;
    KubeConfig kube;
    std::vector<Rule> rules;
};

// Every problem found, each as "file:line: what is wrong".
class ConfigError : public std::runtime_error {
  public:
    explicit ConfigError(std::vector<std::string> problems);
    const std::vector<std::string>& problems() const noexcept { return problems_; }

  private:
    std::vector<std::string> problems_;
};

// amdqp.ko's max_confine_ms by default.
inline constexpr std::chrono::milliseconds kMaxConfineDefault{60000};

// Parses @text, named @file in messages. @watchdog_max_suspend: the kernel
// watchdog's bound (amdqp.ko max_suspend_ms) the starvation bound must stay
// under. Throws ConfigError.
// @watchdog_max_confine: the same for confinement (max_confine_ms).
DaemonConfig parse_config(std::string_view text, const std::string& file,
                          std::chrono::milliseconds watchdog_max_suspend,
                          std::chrono::milliseconds watchdog_max_confine = kMaxConfineDefault);

// Reads and parses @path. A missing file is an error if @must_exist, else
// gives the defaults. Throws ConfigError.
DaemonConfig load_config(const std::string& path, bool must_exist,
                         std::chrono::milliseconds watchdog_max_suspend,
                         std::chrono::milliseconds watchdog_max_confine = kMaxConfineDefault);

// amdqp.ko's max_suspend_ms from sysfs, or its default (5000 ms) when the
// module is not loaded; 0 in sysfs means "no watchdog".
std::chrono::milliseconds kernel_watchdog_max_suspend(
    const std::string& param = "/sys/module/amdqp/parameters/max_suspend_ms");
// The same for max_confine_ms (default 60000 ms).
std::chrono::milliseconds kernel_watchdog_max_confine(
    const std::string& param = "/sys/module/amdqp/parameters/max_confine_ms");

}  // namespace amdqp::daemon

#endif
