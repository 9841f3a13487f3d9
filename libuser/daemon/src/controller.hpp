// SPDX-License-Identifier: MIT
//
// The host's control loop around the pure policy: finds tagged processes
// (their activity pages), feeds the policy their queues and samples, and
// carries its decisions out through /dev/amdqp and the cooperative
// requests. Owns no thread: the daemon (or an in-process controller) calls
// step() and sleeps on the wake channel for wait_for().
//
// Not thread safe; status() and the Metrics it updates may be read from
// other threads.
#ifndef AMDQPD_CONTROLLER_HPP
#define AMDQPD_CONTROLLER_HPP

#include <sys/types.h>

#include <atomic>
#include <chrono>
#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <set>
#include <span>
#include <string>
#include <vector>

#include <amdqp/activity.hpp>
#include <amdqp/amdqp.hpp>

#include "amdqp/policy/policy.hpp"
#include "ceilings.hpp"
#include "channel.hpp"
#include "config_file.hpp"
#include "device_watch.hpp"
#include "kube_pods.hpp"
#include "log.hpp"
#include "loop_budget.hpp"
#include "metrics.hpp"
#include "process_facts.hpp"

namespace amdqp::daemon {

class MonotonicClock : public policy::Clock {
  public:
    std::int64_t now_ns() const override;
};

class Controller {
  public:
    // Opens /dev/amdqp (or what the config names); replaceable for tests.
    using DeviceOpener = std::function<Device(const std::string& path)>;

    Controller(const DaemonConfig& cfg, Metrics& metrics, const Log& log,
               const policy::Clock& clock, DeviceOpener open_device = {});
    ~Controller();
    Controller(const Controller&) = delete;
    Controller& operator=(const Controller&) = delete;

    // One pass: rescan when due, sample every page, decide, act, ack.
    void step();
    // step(), then sleep on the wake channel for wait_for(). The word is
    // read before the step, so a process that turns busy during it ends
    // the sleep at once.
    void cycle();
    // How long the caller may sleep on the wake channel before the next step.
    std::chrono::nanoseconds wait_for() const;
    WakeWord& wake() { return wake_; }
    // Hands status_json() to the socket's status requests (amdqpctl status).
    void publish_status();
    // The socket's path ("" when it could not be set up).
    std::string socket_path() const { return channel_ ? channel_->path() : std::string(); }

    // A new configuration (SIGHUP): everything held is released and the
    // policy starts over with the new knobs and rules.
    void reconfigure(const DaemonConfig& cfg);
    // Stop: resume everything, withdraw the wake/hold request from pages.
    void release_all();

    // Where pods' facts come from (rules with match.k8s_*); by default
    // KubePods over [kubernetes] api, when set. Tests pass a fake.
    void set_pod_directory(std::unique_ptr<PodDirectory> pods) { pods_ = std::move(pods); }

    bool device_open() const { return dev_.has_value(); }
    std::size_t processes() const { return procs_.size(); }
    const policy::Policy& policy() const { return *policy_; }
    // Human- and machine-readable state (amdqpctl status reads it as JSON).
    std::string status_json() const;

  private:
    struct SlotId {
        std::uint32_t index;
        std::uint64_t ring_va;
        auto operator<=>(const SlotId&) const = default;
    };
    struct Proc {
        explicit Proc(activity::Page p) : page(std::move(p)) {}
        activity::Page page;
        ProcessFacts facts;
        Verdict verdict;
        std::string page_group;                      // AMDQP_GROUP as the page says
        bool pod_pending = false;                    // in a pod the directory did not know yet
        std::map<SlotId, policy::QueueInfo> queues;  // live slots the policy knows
        std::set<policy::QueueKey> reprioritized;    // rule priority pushed to the kernel
        std::uint32_t ctl_written = 0;
        std::int64_t ctl_renewed = 0;
        std::uint32_t acked = 0;
        std::optional<std::uint32_t> coop_seq;
        std::int64_t coop_renewed = 0;
        std::uint64_t holds = 0, hold_timeouts = 0;
    };
    class Acts;

    void open_device_if_due(std::int64_t now);
    void lose_device(const Error& e);
    // Device add/remove events: subscribe after an open, act on them in a step.
    void watch_devices();
    void read_device_events(std::int64_t now);
    // A GPU amdqp removed: its queues leave the policy, its metrics go.
    void forget_gpu(std::uint32_t gpu);
    // A call naming a GPU removed since this step read its events fails
    // whole (ENODEV) while the module is fine: marks the GPUs of @gpus that
    // amdqp no longer lists as removed and says whether there were any (the
    // call is then made again without them), false when the module is gone.
    bool leave_out_removed(const Error& e, std::span<const std::uint32_t> gpus);
    void rescan(std::int64_t now);
    // Pages handed over on the socket since the last step.
    void adopt_registered();
    // Takes @page as its process's one page (replacing an older one).
    void adopt(activity::Page page);
    void refresh_queue_table();
    // Page slots are hints: one is adopted only as a queue the kernel lists
    // for the page's own process, with the kernel's priority up to the
    // process's ceiling; the rest are dropped. At most
    // max_queues_per_uid queues of one uid (@uid_queues: theirs so far).
    void sync_slots(pid_t pid, Proc& p, const activity::Snapshot& snap,
                    std::map<std::uint32_t, std::size_t>& uid_queues);
    // The kernel's entry for @s of @pid, looking @pid's queues up again
    // (rate-limited) when the table lacks it; nullptr if none.
    QueueInfo* kernel_queue(pid_t pid, const activity::Slot& s);
    void decide_process(Proc& p);
    // After a rescan: adopted queues follow the kernel's priority (and go
    // when it no longer lists them), queues nobody tagged are clamped to
    // their owner's ceiling and reported to the policy as victims, the
    // kernel's ceiling table follows the rules.
    void reconcile_kernel();
    // SET_PRIORITY @want on @q unless it has it (or was refused before).
    void clamp(QueueInfo& q, int want);
    void push_ceilings();
    // Control flags of @p's page; @resuming: GPUs about to run their lower
    // queues again (their suspension does not count any more).
    void update_control(Proc& p, std::int64_t now, std::span<const std::uint32_t> resuming = {});
    void renew_coop(std::int64_t now);
    void new_policy();
    // Feeds the policy the CU geometry of GPUs it lacks (adaptive demand only).
    void learn_geometry();
    // Each GPU's confinement and held adaptive demand into the metrics
    // (the suspend level goes there with each call).
    void publish_holds();
    std::string dir() const;

    DaemonConfig cfg_;
    Metrics& metrics_;
    const Log& log_;
    const policy::Clock& clock_;
    DeviceOpener open_device_;
    std::optional<Device> dev_;
    std::int64_t next_device_try_ = 0;
    bool warned_no_device_ = false;
    bool restart_policy_ = false;  // the device went away: new policy after this step
    WakeWord wake_;
    // CLOCK_MONOTONIC ns of the socket's last wake, for the control loop's
    // log line only.
    std::int64_t socket_wake_ns_ = 0;
    bool socket_served_ = false;                 // by cycle() since the last step
    std::unique_ptr<Channel> channel_;           // after wake_: it wakes it
    std::unique_ptr<DeviceWatch> device_watch_;  // the same; while dev_ is open
    std::unique_ptr<Acts> acts_;
    std::unique_ptr<policy::Policy> policy_;
    std::map<pid_t, Proc> procs_;
    // LIST_QUEUES by (pid, ring VA): for slots whose ids the page lacks.
    std::map<std::pair<std::uint32_t, std::uint64_t>, QueueInfo> queue_table_;
    // The same by (pid, gpu, queue id).
    std::map<policy::QueueKey, QueueInfo> queue_ids_;
    std::map<pid_t, std::int64_t> looked_up_;  // pid -> last LIST_QUEUES of its own
    // Owners of queues nobody tagged: their verdict, by pid and start.
    std::map<pid_t, std::pair<ProcessFacts, Verdict>> owners_;
    // Queues nobody tagged at the last LIST_QUEUES: their submitted count
    // then, and whether they were working (reconcile_kernel).
    struct UnwatchedSeen {
        std::uint64_t submitted = 0;
        bool working = false;
    };
    std::map<policy::QueueKey, UnwatchedSeen> unwatched_;
    std::set<policy::QueueKey> clamp_failed_;  // SET_PRIORITY refused: not retried
    std::set<std::uint32_t> over_budget_;      // uids told about once
    std::set<std::uint32_t> unconfinable_;     // GPUs told about once (suspended instead)
    LoopBudget loop_budget_;
    std::set<std::uint32_t> over_loop_budget_;  // uids told about once
    std::uint64_t pages_refused_ = 0;           // by the socket's registrations
    std::unique_ptr<PodDirectory> pods_;
    CeilingTable ceilings_;
    bool warned_ceilings_ = false;
    std::int64_t next_scan_ = 0;
    std::int64_t last_scan_ = 0;
    std::int64_t next_proc_scan_ = 0;  // the search of /proc for pages
    // Pages found half made (a writer fills the header after closing the
    // file): path -> when first seen, retried quickly for a while.
    std::map<std::string, std::int64_t> unready_;
    int min_priority_ = policy::kPriorityMax;
    std::map<policy::QueueKey, std::uint64_t> last_doorbells_;
    std::set<std::uint32_t> gpus_;
    // CU geometry by GPU, for an adaptive demand (cu_per_xcc 0: none).
    std::map<std::uint32_t, policy::CuGeometry> geometry_;
    // Removed by amdqp and not listed since: left out of the policy's calls,
    // and page slots on them (their queues are gone) are not adopted.
    std::set<std::uint32_t> removed_gpus_;
    std::set<policy::QueueKey> unreadable_;  // warned about once
};

}  // namespace amdqp::daemon

#endif
