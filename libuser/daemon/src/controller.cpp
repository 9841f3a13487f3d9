// SPDX-License-Identifier: MIT
#include "controller.hpp"

#include "amdqp/policy/cu_mask.hpp"

#include <stdlib.h>
#include <time.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <limits>

#include <nlohmann/json.hpp>

namespace amdqp::daemon {

std::int64_t MonotonicClock::now_ns() const {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return std::int64_t{ts.tv_sec} * 1'000'000'000 + ts.tv_nsec;
}

namespace {

constexpr std::int64_t kDeviceRetryNs = 1'000'000'000;
// Rescans the directory watch asks for come at most this often (a user
// making files in a shared /dev/shm must not keep the loop rescanning);
// also the retry pace of a page found half made, for kUnreadyRetryNs.
constexpr std::int64_t kFastRescanNs = 1'000'000;
constexpr std::int64_t kUnreadyRetryNs = 1'000'000'000;
// A page slot naming no queue the kernel lists for its process makes the
// daemon ask the kernel for that process's queues again, at most this
// often (a forged slot must not cost an ioctl every step).
constexpr std::int64_t kLookupNs = 10'000'000;
// What a uid may have saved up of its loop_share_pct: its share of one
// second (one page read, at most 1,016 slots, costs well under 10 ms even
// emulated).
LoopBudget loop_budget(int share_pct) {
    return LoopBudget(share_pct, std::int64_t{share_pct} * 10'000'000);
}

// Charges a uid with the loop's time from its making to its end.
class LoopCharge {
  public:
    LoopCharge(LoopBudget& budget, const policy::Clock& clock, std::uint32_t uid,
               std::int64_t start_ns)
        : budget_(budget), clock_(clock), uid_(uid), start_ns_(start_ns) {}
    ~LoopCharge() { budget_.charge(uid_, clock_.now_ns() - start_ns_); }
    LoopCharge(const LoopCharge&) = delete;
    LoopCharge& operator=(const LoopCharge&) = delete;

  private:
    LoopBudget& budget_;
    const policy::Clock& clock_;
    std::uint32_t uid_;
    std::int64_t start_ns_;
};

// What a queue's owner asked for: the kernel's effective priority, or
// (uapi 1.2) the request it clamped to the kernel's ceiling, which a grant
// of the daemon's own (SET_PRIORITY) may allow.
std::uint32_t asked(const QueueInfo& q) {
    return std::max(q.priority, q.requested);
}

std::unique_ptr<PodDirectory> make_pods(const KubeConfig& k) {
    if (k.api.empty())
        return nullptr;
    std::string node = k.node_name;
    if (node.empty())
        if (const char* env = secure_getenv("NODE_NAME"))
            node = env;
    return std::make_unique<KubePods>(loopback_http(k.api, std::chrono::seconds(2)),
                                      pods_path(k.api, node), k.refresh);
}

// A queue's demand as the policy sees it at most (work groups): far above
// what fills any GPU (a few hundred CUs, a few dozen groups each).
constexpr std::uint32_t kMaxDemandWgs = 1u << 24;

// How often /proc is searched for pages while the socket is up (processes
// that registered are adopted at once; this finds the others).
constexpr std::int64_t kProcScanNs = 5'000'000'000;

std::int64_t ns(std::chrono::nanoseconds d) {
    return d.count();
}

std::string gpu_list(std::span<const std::uint32_t> gpus) {
    // Appended piece by piece: "," + std::to_string(g) makes GCC 12 warn
    // (-Wrestrict, a false positive in its inlined string insert) at -O2.
    std::string s;
    for (auto g : gpus) {
        if (!s.empty())
            s += ',';
        s += std::to_string(g);
    }
    return s;
}

// "gpu N", appended for the reason gpu_list() gives.
std::string gpu_name(std::uint32_t gpu) {
    std::string s = "gpu ";
    s += std::to_string(gpu);
    return s;
}

// The kernel went away under us (module unloaded, device removed).
bool device_gone(const Error& e) {
    return e.code() == errc::no_module || e.sys_errno() == ENODEV || e.sys_errno() == EBADF;
}

}  // namespace

// The policy's hands: one ioctl per decision, cooperative requests by page.
class Controller::Acts : public policy::Actions {
  public:
    explicit Acts(Controller& c) : c_(c) {}

    void suspend_below(std::span<const std::uint32_t> asked, int priority) override {
        // The policy's own suspension: a GPU suspended in place of a
        // confinement is now the policy's to resume, not unconfine's.
        for (auto g : asked)
            suspended_instead_.erase(g);
        suspend(asked, priority);
    }

    void resume_all(std::span<const std::uint32_t> asked) override {
        for (auto g : asked)
            suspended_instead_.erase(g);
        resume(asked);
    }

    void coop_suspend(std::int32_t pid) override { coop(pid, true); }
    void coop_resume(std::int32_t pid) override { coop(pid, false); }

    // Confinement through AMDQP_IOC_CONFINE, each GPU's mask from its
    // geometry (INFO). A GPU that cannot be confined (the kfd backend until
    // its glue exists, an older module) is suspended below the level
    // instead: the stronger action, never a dropped one.
    bool can_confine() const override { return true; }

    void confine_below(std::span<const policy::Confinement> asked, int priority) override {
        if (!c_.dev_) {
            c_.metrics_.error("no_device");
            return;
        }
        std::vector<std::uint32_t> gpus;
        for (const policy::Confinement& t : asked)
            if (!c_.removed_gpus_.contains(t.gpu))
                gpus.push_back(t.gpu);
        if (gpus.empty())
            return;
        std::vector<CuTarget> targets;
        std::vector<std::uint32_t> instead;
        try {
            const std::vector<CuGeometry> geo = c_.dev_->cu_geometry(gpus);
            for (const policy::Confinement& t : asked) {
                auto g = std::find_if(geo.begin(), geo.end(),
                                      [&t](const CuGeometry& x) { return x.gpu_id == t.gpu; });
                if (g == geo.end())
                    continue;  // removed meanwhile
                std::vector<std::uint32_t> mask =
                    g->error ? std::vector<std::uint32_t>{}
                             : policy::confine_mask(t.share, {g->num_xcc, g->cu_per_xcc});
                if (mask.empty())
                    instead.push_back(t.gpu);
                else
                    targets.push_back({*g, std::move(mask)});
            }
        } catch (const Error& e) {
            // No CONFINE in this module (ABI < 1.3): every GPU suspends.
            instead = gpus;
            targets.clear();
            if (device_gone(e)) {
                c_.lose_device(e);
                return;
            }
        }
        if (!instead.empty()) {
            for (auto g : instead)
                if (c_.unconfinable_.insert(g).second)
                    c_.log_.warning("confine_unsupported",
                                    gpu_name(g) +
                                        " cannot be confined (no CU geometry): its "
                                        "lower queues are suspended instead");
            suspend(instead, priority);
            suspended_instead_.insert(instead.begin(), instead.end());
        }
        if (targets.empty())
            return;
        try {
            GpuSetResult r = c_.dev_->confine_below(targets, priority);
            confined_any_ = true;
            std::vector<std::uint32_t> done;
            for (const CuTarget& t : targets)
                done.push_back(t.geometry.gpu_id);
            c_.log_.debug("confine", "confine below " + std::to_string(priority) + " on gpu " +
                                         gpu_list(done) + ": " + std::to_string(r.affected) +
                                         " queue(s) confined, " + std::to_string(r.skipped) +
                                         " left as they were");
        } catch (const Error& e) {
            c_.metrics_.error("confine");
            c_.log_.warning(
                "confine_failed",
                std::string("confine below ") + std::to_string(priority) + " failed: " + e.what());
            if (device_gone(e))
                c_.lose_device(e);
        }
    }

    void unconfine(std::span<const std::uint32_t> asked) override {
        std::vector<std::uint32_t> buf;
        const auto gpus = present(asked, buf);
        if (gpus.empty() || !c_.dev_)
            return;
        std::vector<std::uint32_t> resumed, released;
        for (auto g : gpus)
            (suspended_instead_.erase(g) ? resumed : released).push_back(g);
        if (!resumed.empty())
            resume(resumed);
        if (released.empty() || !confined_any_)
            return;
        try {
            GpuSetResult r = c_.dev_->release_confinement(released);
            c_.log_.debug("unconfine", "unconfine on gpu " + gpu_list(released) + ": " +
                                           std::to_string(r.affected) + " queue(s) back");
        } catch (const Error& e) {
            c_.metrics_.error("unconfine");
            c_.log_.warning("unconfine_failed", std::string("unconfine on gpu ") +
                                                    gpu_list(released) + " failed: " + e.what());
            if (device_gone(e))
                c_.lose_device(e);
        }
    }

    std::optional<std::int64_t> trigger_ns_;
    std::int64_t step_start_ns_ = 0;
    std::int64_t housekept_ns_ = 0;  // when adoption and any rescan were done
    std::int64_t sampled_ns_ = 0;    // when this step had read every page

  private:
    void suspend(std::span<const std::uint32_t> asked, int priority) {
        std::vector<std::uint32_t> buf;
        const auto gpus = present(asked, buf);
        if (gpus.empty())
            return;
        if (!c_.dev_) {
            c_.metrics_.error("no_device");
            return;
        }
        try {
            const std::int64_t t0 = c_.clock_.now_ns();
            GpuSetResult r = c_.dev_->suspend_below(gpus, priority);
            const std::int64_t call_us = (c_.clock_.now_ns() - t0) / 1000;
            c_.metrics_.suspend_call(static_cast<std::uint32_t>(gpus.size()), r.affected);
            std::string loop;
            if (trigger_ns_) {
                const double s = static_cast<double>(c_.clock_.now_ns() - *trigger_ns_) / 1e9;
                c_.metrics_.control_loop(std::max(s, 0.0));
                // Parsed by the control-loop benchmark (experiments/demo/demo.py).
                loop = " (control loop " + std::to_string(static_cast<long>(s * 1e6)) +
                       " us; socket woke " +
                       std::to_string((c_.socket_wake_ns_ - *trigger_ns_) / 1000) +
                       " us, step began " + std::to_string((step_start_ns_ - *trigger_ns_) / 1000) +
                       " us after the doorbell, housekeeping " +
                       std::to_string((housekept_ns_ - step_start_ns_) / 1000) +
                       " us, pages read " + std::to_string((sampled_ns_ - housekept_ns_) / 1000) +
                       " us, ioctl " + std::to_string(call_us) + " us, " +
                       std::to_string(r.latency_ns / 1000) + " us in scheduler updates)";
            }
            for (auto g : gpus)
                c_.metrics_.set_suspend_level(g, priority);
            c_.log_.debug("suspend", "suspend below " + std::to_string(priority) + " on gpu " +
                                         gpu_list(gpus) + ": " + std::to_string(r.affected) +
                                         " queue(s) off, " + std::to_string(r.skipped) +
                                         " left running" + loop);
        } catch (const Error& e) {
            if (c_.leave_out_removed(e, gpus)) {
                suspend(asked, priority);  // on the GPUs still there
                return;
            }
            c_.metrics_.error("suspend");
            c_.log_.warning("suspend_failed", std::string("suspend on gpu ") + gpu_list(gpus) +
                                                  " failed: " + e.what());
            if (device_gone(e))
                c_.lose_device(e);
        }
    }

    void resume(std::span<const std::uint32_t> asked) {
        std::vector<std::uint32_t> buf;
        const auto gpus = present(asked, buf);
        if (gpus.empty() || !c_.dev_)
            return;
        // Holds back on before the lower queues run: a doorbell in between
        // would go out next to them.
        const std::int64_t now = c_.clock_.now_ns();
        for (auto& [pid, p] : c_.procs_)
            c_.update_control(p, now, gpus);
        try {
            GpuSetResult r = c_.dev_->resume_all(gpus);
            c_.metrics_.resume_call(static_cast<std::uint32_t>(gpus.size()), r.affected);
            for (auto g : gpus)
                c_.metrics_.set_suspend_level(g, 0);
            c_.log_.debug("resume", "resume on gpu " + gpu_list(gpus) + ": " +
                                        std::to_string(r.affected) + " queue(s) back");
        } catch (const Error& e) {
            if (c_.leave_out_removed(e, gpus)) {
                resume(asked);
                return;
            }
            c_.metrics_.error("resume");
            c_.log_.warning("resume_failed", std::string("resume on gpu ") + gpu_list(gpus) +
                                                 " failed: " + e.what());
            if (device_gone(e))
                c_.lose_device(e);
        }
    }

    // @gpus without those amdqp removed: their queues and holds went with
    // them, and naming one fails the whole call (ENODEV). The policy's
    // last word on such a GPU, a resume, needs no call.
    std::span<const std::uint32_t> present(std::span<const std::uint32_t> gpus,
                                           std::vector<std::uint32_t>& buf) const {
        if (c_.removed_gpus_.empty())
            return gpus;
        for (auto g : gpus)
            if (!c_.removed_gpus_.contains(g))
                buf.push_back(g);
        return buf;
    }

    void coop(std::int32_t pid, bool off) {
        auto it = c_.procs_.find(pid);
        if (it == c_.procs_.end())
            return;
        Proc& p = it->second;
        try {
            const auto lease =
                std::chrono::duration_cast<std::chrono::milliseconds>(c_.cfg_.coop_lease);
            std::uint32_t seq = p.page.send_coop(off, lease);
            p.coop_seq = off ? std::optional(seq) : std::nullopt;
            p.coop_renewed = c_.clock_.now_ns();
            c_.metrics_.coop_request(off);
        } catch (const Error& e) {
            c_.metrics_.error("coop");
            c_.log_.warning("coop_failed", "cooperative request to pid " + std::to_string(pid) +
                                               " failed: " + e.what());
        }
    }

    Controller& c_;
    std::set<std::uint32_t> suspended_instead_;  // GPUs suspended in place of a confinement
    // Whether a CONFINE BELOW was made: RELEASE only then (a module
    // older than ABI 1.3 has no CONFINE at all).
    bool confined_any_ = false;

  public:
    bool confined_any() const noexcept { return confined_any_; }
    // A new policy starts from nothing held (release_all, a new fd).
    void forget() noexcept {
        suspended_instead_.clear();
        confined_any_ = false;
    }
};

Controller::Controller(const DaemonConfig& cfg, Metrics& metrics, const Log& log,
                       const policy::Clock& clock, DeviceOpener open_device)
    : cfg_(cfg),
      metrics_(metrics),
      log_(log),
      clock_(clock),
      open_device_(open_device ? std::move(open_device)
                               : [](const std::string& path) { return Device::open(path); }),
      acts_(std::make_unique<Acts>(*this)),
      loop_budget_(loop_budget(cfg.loop_share_pct)),
      pods_(make_pods(cfg.kube)) {
    try {
        // Served by this controller's loop thread (cycle()), which the
        // wake therefore only has to note.
        channel_ = std::make_unique<Channel>(
            dir(),
            [this] {
                struct timespec ts;
                clock_gettime(CLOCK_MONOTONIC, &ts);
                socket_wake_ns_ = ts.tv_sec * 1'000'000'000LL + ts.tv_nsec;
                wake_.note();
            },
            ChannelLimits{}, false);
    } catch (const Error& e) {
        log_.warning("no_socket", std::string(e.what()) +
                                      ": processes are found by scanning /proc only, and their "
                                      "idle->busy wakes do not reach amdqpd");
    }
    new_policy();
}

Controller::~Controller() = default;

std::string Controller::dir() const {
    return cfg_.runtime_dir.empty() ? activity::runtime_dir() : cfg_.runtime_dir;
}

void Controller::publish_status() {
    if (channel_)
        channel_->set_status(status_json());
}

void Controller::new_policy() {
    acts_->forget();
    policy_ = std::make_unique<policy::Policy>(cfg_.policy, clock_, *acts_);
    for (auto& [pid, p] : procs_) {
        p.queues.clear();
        p.reprioritized.clear();
        p.coop_seq.reset();
    }
    last_doorbells_.clear();
    metrics_.forget_gpus();
    for (const auto& [gpu, geo] : geometry_)
        policy_->set_geometry(gpu, geo);
}

// An adaptive demand turns work groups into CUs: the policy needs each
// GPU's geometry (CONFINE INFO), asked once per GPU. A module without
// CONFINE (ABI < 1.3) gives none: those levels suspend, as Acts would.
void Controller::learn_geometry() {
    if (!dev_ || !cfg_.policy.adaptive())
        return;
    std::vector<std::uint32_t> missing;
    for (auto g : gpus_)
        if (!geometry_.contains(g))
            missing.push_back(g);
    if (missing.empty())
        return;
    std::vector<CuGeometry> geo;
    try {
        geo = dev_->cu_geometry(missing);
    } catch (const Error& e) {
        if (device_gone(e)) {
            lose_device(e);
            return;
        }
        log_.warning("no_geometry", std::string("CU geometry of gpu ") + gpu_list(missing) +
                                        " unknown (" + e.what() +
                                        "): levels of cu_demand \"auto\" suspend there");
        for (auto g : missing)
            geo.push_back(CuGeometry{g, 0, 0, 0, -EOPNOTSUPP});
    }
    for (const CuGeometry& g : geo) {
        const policy::CuGeometry pg =
            g.confinable() ? policy::CuGeometry{g.num_xcc, g.cu_per_xcc} : policy::CuGeometry{1, 0};
        geometry_[g.gpu_id] = pg;
        policy_->set_geometry(g.gpu_id, pg);
    }
}

void Controller::open_device_if_due(std::int64_t now) {
    if (dev_ || now < next_device_try_)
        return;
    next_device_try_ = now + kDeviceRetryNs;
    const std::string path = cfg_.device.empty() ? default_device_path() : cfg_.device;
    try {
        dev_.emplace(open_device_(path));
        log_.info("device", "opened " + path);
        ceilings_.reset();
        clamp_failed_.clear();
        watch_devices();
    } catch (const Error& e) {
        // Cooperative queues still work without the module.
        if (!warned_no_device_)
            log_.warning("no_device", std::string(e.what()) + " (retrying every second)");
        warned_no_device_ = true;
    }
}

void Controller::lose_device(const Error& e) {
    log_.warning("device_lost", std::string("lost ") +
                                    (cfg_.device.empty() ? default_device_path() : cfg_.device) +
                                    ": " + e.what() + "; starting over when it is back");
    device_watch_.reset();
    dev_.reset();
    queue_table_.clear();
    geometry_.clear();  // the module that comes back may be another one
    next_device_try_ = clock_.now_ns() + kDeviceRetryNs;
    // The kernel dropped every hold with the fd; the policy must not think
    // otherwise (it starts over at the end of this step: the loss may be
    // found inside one of its own calls). Cooperative suspensions are
    // released by hand.
    for (auto& [pid, p] : procs_) {
        if (p.coop_seq) {
            try {
                p.page.send_coop(false);
            } catch (const Error&) {
            }
        }
    }
    restart_policy_ = true;
}

bool Controller::leave_out_removed(const Error& e, std::span<const std::uint32_t> gpus) {
    if (e.sys_errno() != ENODEV || !dev_)
        return false;
    std::set<std::uint32_t> listed;
    try {
        for (const DeviceInfo& d : dev_->devices())
            listed.insert(d.gpu_id);
    } catch (const Error&) {
        return false;  // the module itself is gone
    }
    bool any = false;
    for (auto g : gpus) {
        if (listed.contains(g))
            continue;
        // Acts::present() leaves it out from now on; the rescan at the
        // start of the next step forgets its queues, outside the policy's
        // own call.
        removed_gpus_.insert(g);
        any = true;
        log_.info("device_removed", gpu_name(g) + " went away before its call: left out of it");
    }
    if (any)
        next_scan_ = clock_.now_ns();
    return any;
}

void Controller::watch_devices() {
    try {
        device_watch_ = std::make_unique<DeviceWatch>(*dev_, [w = &wake_] { w->wake(); });
    } catch (const std::exception& e) {  // Error, or std::thread's system_error
        log_.warning("no_device_events",
                     std::string(e.what()) +
                         ": GPUs added or removed are found by the periodic rescan only");
    }
}

void Controller::read_device_events(std::int64_t now) {
    std::vector<Event> events;
    try {
        events = device_watch_->take();
    } catch (const Error& e) {
        log_.warning("no_device_events",
                     std::string(e.what()) +
                         ": GPUs added or removed are found by the periodic rescan only");
        device_watch_.reset();
        next_scan_ = now;
        return;
    }
    for (const Event& ev : events) {
        // Whatever came (or was lost: OVERFLOW), the rescan lists what is
        // there now: a new GPU's queues, the GPU list in the status.
        next_scan_ = now;
        if (ev.type == AMDQP_EVENT_DEVICE_ADDED) {
            log_.info("device_added", gpu_name(ev.gpu_id) + " added: rescanning now");
            removed_gpus_.erase(ev.gpu_id);
        } else if (ev.type == AMDQP_EVENT_DEVICE_REMOVED) {
            log_.info("device_removed",
                      gpu_name(ev.gpu_id) + " removed: its queues and holds went with it");
            forget_gpu(ev.gpu_id);
        }
    }
}

void Controller::forget_gpu(std::uint32_t gpu) {
    // First: removing its queues makes the policy resume the GPU, and that
    // call must leave it out (Acts::present).
    removed_gpus_.insert(gpu);
    gpus_.erase(gpu);
    geometry_.erase(gpu);
    for (auto& [pid, p] : procs_) {
        for (auto it = p.queues.begin(); it != p.queues.end();) {
            const policy::QueueKey key = it->second.key;
            if (key.gpu_id != gpu) {
                ++it;
                continue;
            }
            it = p.queues.erase(it);
            p.reprioritized.erase(key);
            last_doorbells_.erase(key);
            unreadable_.erase(key);
            policy_->remove_queue(key);
        }
    }
    std::erase_if(queue_table_, [gpu](const auto& kv) { return kv.second.gpu_id == gpu; });
    std::erase_if(queue_ids_, [gpu](const auto& kv) { return kv.second.gpu_id == gpu; });
    metrics_.forget_gpu(gpu);
}

void Controller::refresh_queue_table() {
    queue_table_.clear();
    queue_ids_.clear();
    if (!dev_)
        return;
    std::map<std::tuple<std::uint32_t, std::uint32_t, std::uint32_t>, double> suspended;
    std::vector<std::uint32_t> gone;
    try {
        for (const QueueInfo& q : dev_->queues()) {
            queue_table_[{q.pid, q.ring_va}] = q;
            queue_ids_[{static_cast<std::int32_t>(q.pid), q.gpu_id, q.queue_id}] = q;
            if (cfg_.queue_metrics && procs_.contains(static_cast<pid_t>(q.pid)))
                suspended[{q.pid, q.gpu_id, q.queue_id}] =
                    static_cast<double>(q.suspended_ns) / 1e9;
        }
        std::set<std::uint32_t> gpus;
        for (const DeviceInfo& d : dev_->devices()) {
            gpus.insert(d.gpu_id);
            removed_gpus_.erase(d.gpu_id);
        }
        // Removed without an event read (none subscribed, or lost).
        for (auto g : gpus_)
            if (!gpus.contains(g))
                gone.push_back(g);
        if (gpus != gpus_) {
            log_.info("devices", "GPUs under amdqp: " + gpu_list(std::vector<std::uint32_t>(
                                                            gpus.begin(), gpus.end())));
            gpus_ = std::move(gpus);
        }
    } catch (const Error& e) {
        metrics_.error("list");
        if (device_gone(e))
            lose_device(e);
        return;
    }
    metrics_.set_queue_suspended(suspended);
    for (auto g : gone) {
        log_.info("device_removed",
                  gpu_name(g) + " is no longer listed: its queues and holds went with it");
        forget_gpu(g);
    }
    learn_geometry();
}

void Controller::rescan(std::int64_t now) {
    next_scan_ = now + ns(cfg_.rescan);
    last_scan_ = now;
    open_device_if_due(now);
    adopt_registered();
    // Processes that registered over the socket need no search; /proc is
    // searched at start, on a slow timer (processes that could not reach
    // the socket: started before amdqpd, or in a container without it) and
    // at every rescan when there is no socket.
    if (!channel_ || now >= next_proc_scan_) {
        next_proc_scan_ = now + kProcScanNs;
        activity::ScanOptions opt;
        opt.access = activity::Page::Access::control;
        activity::ScanResult found = activity::scan(opt);
        std::map<std::string, std::int64_t> unready;
        for (const auto& [path, problem] : found.skipped) {
            if (problem != activity::Problem::too_small && problem != activity::Problem::bad_magic)
                continue;
            // A page being made right now (its header comes last).
            auto it = unready_.find(path);
            const std::int64_t first = it == unready_.end() ? now : it->second;
            unready.emplace(path, first);
            if (now - first < kUnreadyRetryNs) {
                next_scan_ = std::min(next_scan_, now + kFastRescanNs);
                next_proc_scan_ = std::min(next_proc_scan_, now + kFastRescanNs);
            }
        }
        unready_ = std::move(unready);
        for (activity::Page& page : found.pages)
            if (!cfg_.scan_filter || cfg_.scan_filter(page.pid()))
                adopt(std::move(page));
    }
    // A pod the directory learnt since: the process is decided again and
    // its queues taken in afresh.
    for (auto& [pid, p] : procs_) {
        if (!p.pod_pending)
            continue;
        decide_process(p);
        if (p.pod_pending)
            continue;
        log_.info("process",
                  "pid " + std::to_string(pid) + ": pod " + p.facts.pod->namespace_ + "/" +
                      p.facts.pod->name +
                      (p.verdict.rule.empty() ? ", default" : ", rule " + p.verdict.rule));
        for (const auto& [id, q] : p.queues)
            policy_->remove_queue(q.key);
        p.queues.clear();
    }
    for (auto it = procs_.begin(); it != procs_.end();) {
        if (it->second.page.liveness() != activity::Problem::none) {
            log_.info("process_gone", "pid " + std::to_string(it->first) + " gone");
            policy_->remove_process(it->first);
            it = procs_.erase(it);
        } else {
            ++it;
        }
    }
    refresh_queue_table();
    reconcile_kernel();
    metrics_.set_processes(procs_.size());
    std::map<int, std::uint64_t> by_prio;
    std::uint64_t holds = 0, timeouts = 0;
    for (const auto& [pid, p] : procs_) {
        for (const auto& [id, q] : p.queues)
            by_prio[q.priority]++;
        holds += p.holds;
        timeouts += p.hold_timeouts;
    }
    metrics_.set_queues(by_prio);
    metrics_.set_hold_counters(holds, timeouts);
    metrics_.set_policy_counters(policy_->stats().starvation_hits, policy_->stats().relapses);
}

void Controller::decide_process(Proc& p) {
    p.facts.pod.reset();
    if (!p.facts.pod_uid.empty() && pods_)
        p.facts.pod = pods_->find(p.facts.pod_uid);
    p.pod_pending = !p.facts.pod_uid.empty() && pods_ && !p.facts.pod;
    p.verdict = decide(cfg_.rules, cfg_.group_by, p.facts, p.page_group, cfg_.default_max_priority);
}

QueueInfo* Controller::kernel_queue(pid_t pid, const activity::Slot& s) {
    auto look = [&]() -> QueueInfo* {
        if (s.known_queue()) {
            auto it = queue_ids_.find({pid, s.gpu_id, *s.queue_id});
            return it == queue_ids_.end() ? nullptr : &it->second;
        }
        auto it = queue_table_.find({static_cast<std::uint32_t>(pid), s.ring_va});
        return it == queue_table_.end() || !s.ring_va ? nullptr : &it->second;
    };
    if (QueueInfo* q = look())
        return q;
    if (!dev_)
        return nullptr;
    const std::int64_t now = clock_.now_ns();
    auto [last, fresh] = looked_up_.try_emplace(pid, now);
    if (!fresh && now - last->second < kLookupNs)
        return nullptr;
    last->second = now;
    try {
        for (const QueueInfo& q : dev_->queues(0, static_cast<std::uint32_t>(pid))) {
            if (q.pid != static_cast<std::uint32_t>(pid))
                continue;
            queue_table_[{q.pid, q.ring_va}] = q;
            queue_ids_[{pid, q.gpu_id, q.queue_id}] = q;
        }
    } catch (const Error& e) {
        metrics_.error("list");
        if (device_gone(e))
            lose_device(e);
        return nullptr;
    }
    return look();
}

void Controller::clamp(QueueInfo& q, int want) {
    const policy::QueueKey key{static_cast<std::int32_t>(q.pid), q.gpu_id, q.queue_id};
    if (!dev_ || static_cast<int>(q.priority) == want || clamp_failed_.contains(key))
        return;
    try {
        dev_->set_priority(QueueRef::of(q), want);
        log_.debug("priority", "pid " + std::to_string(q.pid) + " gpu " + std::to_string(q.gpu_id) +
                                   " queue " + std::to_string(q.queue_id) + ": priority " +
                                   std::to_string(q.priority) + " -> " + std::to_string(want));
        q.priority = static_cast<std::uint32_t>(want);
    } catch (const Error& e) {
        clamp_failed_.insert(key);
        metrics_.error("priority");
        log_.warning("priority_failed", e.what());
    }
}

void Controller::adopt_registered() {
    if (!channel_)
        return;
    for (Registration& r : channel_->take()) {
        try {
            adopt(
                activity::Page::adopt(r.pid, r.fd, activity::Page::Access::control, r.start_time));
        } catch (const activity::PageError& e) {
            pages_refused_++;
            metrics_.error("page_refused");
            log_.debug("page_refused", "pid " + std::to_string(r.pid) + " (uid " +
                                           std::to_string(r.uid) + "): " + e.what());
        }
    }
}

void Controller::adopt(activity::Page page) {
    const pid_t pid = page.pid();
    auto it = procs_.find(pid);
    // One page per process: the one it holds now.
    if (it != procs_.end() && it->second.page.start_time() == page.start_time() &&
        it->second.page.inode() == page.inode())
        return;
    if (page.liveness() != activity::Problem::none)
        return;
    if (it != procs_.end()) {
        policy_->remove_process(pid);  // pid reused, or a new page
        procs_.erase(it);
    }
    std::optional<ProcessFacts> facts = read_process_facts(pid);
    if (!facts)
        return;
    // One tenant's many processes must not stall the loop for all.
    std::size_t pages = 0;
    for (const auto& [other, q] : procs_)
        pages += q.facts.uid == facts->uid;
    if (pages >= cfg_.max_pages_per_uid) {
        if (over_budget_.insert(facts->uid).second)
            log_.warning("budget", "uid " + std::to_string(facts->uid) + " has " +
                                       std::to_string(cfg_.max_pages_per_uid) +
                                       " tagged processes (max_pages_per_uid): more are "
                                       "not looked at");
        metrics_.error("budget");
        return;
    }
    Proc p(std::move(page));
    p.facts = *facts;
    try {
        activity::Snapshot snap = p.page.snapshot();
        p.acked = snap.header.busy_seq;  // announcements from before us need no ack
        p.page_group = snap.group();
    } catch (const Error&) {
        return;
    }
    decide_process(p);
    log_.info("process",
              "pid " + std::to_string(pid) + " (" + p.facts.comm + ", uid " +
                  std::to_string(p.facts.uid) + ") tagged" +
                  (p.verdict.priority ? ", priority " + std::to_string(*p.verdict.priority)
                                      : ", up to priority " + std::to_string(p.verdict.ceiling)) +
                  (p.verdict.rule.empty() ? " (default)" : " by rule " + p.verdict.rule) +
                  (p.pod_pending ? " (pod not known yet)" : "") +
                  (p.verdict.group.empty() ? "" : ", group " + p.verdict.group));
    procs_.emplace(pid, std::move(p));
}

void Controller::sync_slots(pid_t pid, Proc& p, const activity::Snapshot& snap,
                            std::map<std::uint32_t, std::size_t>& uid_queues) {
    std::set<SlotId> seen;
    for (const activity::Slot& s : snap.slots) {
        const SlotId id{s.index, s.ring_va};
        if (p.queues.contains(id)) {
            seen.insert(id);
            continue;
        }
        std::size_t& count = uid_queues[p.facts.uid];
        if (count >= cfg_.max_queues_per_uid) {
            if (over_budget_.insert(p.facts.uid).second)
                log_.warning("budget", "uid " + std::to_string(p.facts.uid) + " has " +
                                           std::to_string(cfg_.max_queues_per_uid) +
                                           " queues (max_queues_per_uid): more are not looked at");
            continue;
        }
        policy::QueueInfo qi;
        qi.key.pid = pid;
        int declared = 0;
        QueueInfo* kq = nullptr;
        if (s.mechanism == AMDQP_ACT_MECH_COOP) {
            // A queue amdqp does not hold: the process takes it off itself
            // when asked. Only the page knows it, so the page's priority
            // counts, up to the process's ceiling, on a GPU amdqp lists.
            if (!s.known_queue() || (dev_ && !gpus_.contains(s.gpu_id)))
                continue;
            qi.key.gpu_id = s.gpu_id;
            qi.key.queue_id = *s.queue_id;
            declared = static_cast<int>(std::min<std::uint32_t>(s.priority, policy::kPriorityMax));
        } else {
            // The kernel's word on which queues are this process's, their
            // GPU and priority; a slot it does not list is no queue.
            kq = kernel_queue(pid, s);
            if (!kq)
                continue;  // not (yet) the kernel's: looked for again later
            qi.key.gpu_id = kq->gpu_id;
            qi.key.queue_id = kq->queue_id;
            declared = static_cast<int>(asked(*kq));
        }
        if (removed_gpus_.contains(qi.key.gpu_id))
            continue;  // the slot outlived its queue: the GPU went away
        if (std::any_of(p.queues.begin(), p.queues.end(),
                        [&qi](const auto& kv) { return kv.second.key == qi.key; }))
            continue;  // a second slot for one queue
        qi.priority = effective_priority(p.verdict, static_cast<std::uint32_t>(declared));
        qi.mechanism = kq ? policy::Mechanism::kAmdqp : policy::Mechanism::kCoop;
        if (!p.verdict.group.empty())
            qi.group = p.verdict.group + "@" + std::to_string(qi.priority);
        // SUSPEND_BELOW compares the kernel's priority: the rule's level,
        // or the ceiling, must be there.
        if (kq && !p.reprioritized.contains(qi.key) && declared != qi.priority) {
            clamp(*kq, qi.priority);
            p.reprioritized.insert(qi.key);
        }
        policy_->add_queue(qi);
        p.queues.emplace(id, qi);
        seen.insert(id);
        ++count;
    }
    for (auto it = p.queues.begin(); it != p.queues.end();) {
        if (!seen.contains(it->first)) {
            policy_->remove_queue(it->second.key);
            last_doorbells_.erase(it->second.key);
            it = p.queues.erase(it);
        } else {
            ++it;
        }
    }
}

namespace {

// On the hardware, held by nobody, and suspendable (not immune after a
// watchdog or budget resume): a call in force does not cover it.
bool runs_unheld(const QueueInfo& q) {
    return !q.held() && !q.suspended() && !(q.state & AMDQP_QSTATE_COOLDOWN);
}

}  // namespace

void Controller::reconcile_kernel() {
    if (!dev_)
        return;
    std::set<policy::QueueKey> watched;
    for (auto& [pid, p] : procs_) {
        for (auto it = p.queues.begin(); it != p.queues.end();) {
            policy::QueueInfo& q = it->second;
            if (q.mechanism == policy::Mechanism::kCoop) {
                ++it;
                continue;
            }
            auto k = queue_ids_.find(q.key);
            if (k == queue_ids_.end()) {
                // Gone from the kernel's list: no queue any more.
                policy_->remove_queue(q.key);
                last_doorbells_.erase(q.key);
                it = p.queues.erase(it);
                continue;
            }
            watched.insert(q.key);
            // The owner may have set it since (SET_PRIORITY within its
            // kernel ceiling): the daemon's bound holds again.
            const int want = effective_priority(p.verdict, asked(k->second));
            clamp(k->second, want);
            if (want != q.priority) {
                q.priority = want;
                if (!p.verdict.group.empty())
                    q.group = p.verdict.group + "@" + std::to_string(want);
                policy_->add_queue(q);
            } else if (policy_->active(q.key) && runs_unheld(k->second) &&
                       q.priority < policy_->suspend_level(q.key.gpu_id)) {
                // Let go by amdqp.ko's starvation budget and no longer
                // immune: the call in force does not hold it any more, and
                // the policy makes it again (as for a newcomer).
                policy_->add_queue(q);
            }
            ++it;
        }
    }
    // Queues no page speaks for: clamped to their owner's ceiling, and
    // victims of every suspension above them.
    std::map<std::uint32_t, policy::Policy::Unwatched> unwatched;
    std::map<policy::QueueKey, UnwatchedSeen> seen;
    const auto lower = [](std::optional<int>& at, int priority) {
        at = std::min(at.value_or(priority), priority);
    };
    std::map<pid_t, std::pair<ProcessFacts, Verdict>> owners;
    for (auto& [key, q] : queue_ids_) {
        if (watched.contains(key) || removed_gpus_.contains(q.gpu_id))
            continue;
        const Verdict* v = nullptr;
        if (auto t = procs_.find(key.pid); t != procs_.end()) {
            v = &t->second.verdict;
        } else if (auto o = owners.find(key.pid); o != owners.end()) {
            v = &o->second.second;
        } else if (auto c = owners_.find(key.pid); c != owners_.end()) {
            v = &owners.emplace(key.pid, c->second).first->second.second;
        } else if (auto f = read_process_facts(key.pid)) {
            if (!f->pod_uid.empty() && pods_)
                f->pod = pods_->find(f->pod_uid);
            Verdict d = decide(cfg_.rules, cfg_.group_by, *f, "", cfg_.default_max_priority);
            if (f->pod_uid.empty() || !pods_ || f->pod)  // else asked again next time
                v = &owners.emplace(key.pid, std::make_pair(*f, d)).first->second.second;
            else
                clamp(q, effective_priority(d, asked(q)));
        }
        if (v)
            clamp(q, effective_priority(*v, asked(q)));
        const int prio = static_cast<int>(q.priority);
        policy::Policy::Unwatched& u = unwatched[q.gpu_id];
        const auto before = unwatched_.find(key);
        // Working, by the backend's counts: work in flight, or submitted
        // since the last look. A queue this daemon holds off cannot show
        // either (the hardware fetches nothing of it): it keeps what it was
        // when it was taken, until it runs again.
        const bool working =
            q.submitted > q.completed ||
            (before != unwatched_.end() && q.submitted > before->second.submitted) ||
            (q.held() && before != unwatched_.end() && before->second.working);
        seen[key] = {q.submitted, working};
        if (working)
            lower(u.working, prio);
        // Not held by a call in force: new (a call holds the queues that
        // exist), or working again after amdqp.ko's budget let it go.
        if (before == unwatched_.end() || (working && runs_unheld(q)))
            lower(u.unheld, prio);
        // Its activity is unknown unless the backend counts its work: it
        // is a victim of any suspension above it unless known to be idle.
        if (working || q.submitted == 0 || q.completed < q.submitted)
            lower(u.lowest, prio);
    }
    owners_ = std::move(owners);
    unwatched_ = std::move(seen);
    std::set<std::uint32_t> gpus = gpus_;
    for (const auto& [g, u] : unwatched)
        gpus.insert(g);
    for (auto g : gpus) {
        auto it = unwatched.find(g);
        policy_->set_unwatched(g, it == unwatched.end() ? policy::Policy::Unwatched{} : it->second);
    }
    push_ceilings();
}

void Controller::push_ceilings() {
    std::vector<Decided> decided;
    for (const auto& [pid, p] : procs_)
        decided.push_back({&p.facts, p.verdict.rule_index});
    for (const auto& [pid, o] : owners_)
        decided.push_back({&o.first, o.second.rule_index});
    const CeilingMap want = ceiling_entries(cfg_.rules, cfg_.default_max_priority, decided);
    std::string error;
    switch (ceilings_.sync(*dev_, want, error)) {
        case CeilingTable::Result::same:
            break;
        case CeilingTable::Result::pushed:
            log_.info("ceilings", "kernel ceiling table: " + std::to_string(want.size()) + " entr" +
                                      (want.size() == 1 ? "y" : "ies"));
            break;
        case CeilingTable::Result::unsupported:
            if (!warned_ceilings_)
                log_.warning("ceilings",
                             "amdqp.ko has no ceiling table (uapi before 1.2): queues are "
                             "clamped by amdqpd alone, after it sees them");
            warned_ceilings_ = true;
            break;
        case CeilingTable::Result::failed:
            metrics_.error("ceilings");
            log_.warning("ceilings", error);
            break;
    }
}

void Controller::update_control(Proc& p, std::int64_t now,
                                std::span<const std::uint32_t> resuming) {
    std::uint32_t flags = AMDQP_ACT_CTL_WAKE;
    // Hold only where the new work outranks something that runs: with the
    // lower queues off already (the later kernels of a burst whose queue
    // drained in a gap) a hold would cost a control loop for nothing.
    bool hold = false;
    for (const auto& [id, q] : p.queues) {
        const std::uint32_t gpu = q.key.gpu_id;
        hold = hold || (q.priority > min_priority_ &&
                        (policy_->suspend_level(gpu) < q.priority ||
                         std::find(resuming.begin(), resuming.end(), gpu) != resuming.end()));
    }
    if (cfg_.policy.order == policy::SuspendOrder::kBeforeDoorbell && hold)
        flags |= AMDQP_ACT_CTL_HOLD;
    const std::int64_t alive = 1'000'000'000;  // promise; renewed every third
    if (flags == p.ctl_written && now - p.ctl_renewed < alive / 3)
        return;
    try {
        p.page.set_control(flags, static_cast<std::uint32_t>(cfg_.hold_timeout.count()),
                           std::chrono::milliseconds(alive / 1'000'000));
        p.ctl_written = flags;
        p.ctl_renewed = now;
    } catch (const Error&) {
        metrics_.error("page");
    }
}

void Controller::renew_coop(std::int64_t now) {
    const auto lease = std::chrono::duration_cast<std::chrono::milliseconds>(cfg_.coop_lease);
    for (auto& [pid, p] : procs_) {
        if (!p.coop_seq || now - p.coop_renewed < ns(lease) / 3)
            continue;
        try {
            if (p.page.renew_lease(*p.coop_seq, lease) != activity::Lease::held &&
                policy_->coop_suspended(pid)) {
                p.coop_seq = p.page.send_coop(true, lease);
                metrics_.coop_request(true);
            }
            p.coop_renewed = now;
        } catch (const Error&) {
            metrics_.error("coop");
        }
    }
}

void Controller::step() {
    std::int64_t now = clock_.now_ns();
    acts_->step_start_ns_ = now;
    // A process that registered just now is adopted in this step: its
    // first submission may be what the wake is about. (After cycle()'s
    // wait the socket was just served; a caller of step() alone gets it
    // served here.)
    if (channel_ && !std::exchange(socket_served_, false))
        channel_->serve_once(std::chrono::nanoseconds(0));
    adopt_registered();
    if (device_watch_)
        read_device_events(now);
    if (now >= next_scan_)
        rescan(now);
    acts_->housekept_ns_ = clock_.now_ns();

    std::vector<policy::QueueSample> samples;
    std::vector<policy::ProcessSample> hints;
    std::vector<std::pair<pid_t, std::uint32_t>> to_ack;
    std::vector<pid_t> broken;
    std::optional<std::int64_t> trigger;
    int min_prio = policy::kPriorityMax;
    std::map<std::uint32_t, std::size_t> uid_queues;
    for (const auto& [pid, p] : procs_)
        uid_queues[p.facts.uid] += p.queues.size();
    for (auto& [pid, p] : procs_) {
        const std::uint32_t uid = p.facts.uid;
        const std::int64_t start_ns = clock_.now_ns();
        if (!loop_budget_.allows(uid, start_ns)) {
            metrics_.error("loop_budget");
            if (over_loop_budget_.insert(uid).second)
                log_.warning("budget", "uid " + std::to_string(uid) +
                                           ": its pages took more than " +
                                           std::to_string(cfg_.loop_share_pct) +
                                           "% of the control loop (loop_share_pct): they are "
                                           "read less often");
            continue;
        }
        // What this process's page costs the loop, paid by its uid.
        const LoopCharge charge(loop_budget_, clock_, uid, start_ns);
        activity::Snapshot snap;
        try {
            snap = p.page.snapshot();
        } catch (const Error&) {
            broken.push_back(pid);
            continue;
        }
        sync_slots(pid, p, snap, uid_queues);
        p.holds = snap.header.holds;
        p.hold_timeouts = snap.header.hold_timeouts;
        // The slots of queues taken in only: the rest of a page is the
        // tenant's to fill, and must cost the loop nothing per slot.
        std::vector<activity::Slot> mine;
        std::vector<std::map<SlotId, policy::QueueInfo>::iterator> where;
        for (const activity::Slot& s : snap.slots) {
            auto it = p.queues.find({s.index, s.ring_va});
            if (it != p.queues.end()) {
                mine.push_back(s);
                where.push_back(it);
            }
        }
        const auto read_indexes = p.page.read_indexes(mine);
        const std::int64_t sample_ns = clock_.now_ns();
        for (std::size_t i = 0; i < mine.size(); i++) {
            const activity::Slot& s = mine[i];
            auto it = where[i];
            const policy::QueueKey& key = it->second.key;
            min_prio = std::min(min_prio, it->second.priority);
            policy::QueueSample qs;
            qs.key = key;
            qs.write_index = s.write_index;
            qs.doorbells = s.doorbells;
            qs.last_doorbell_ns = static_cast<std::int64_t>(s.last_doorbell_ns);
            // The tenant's figure: decayed to now, and bounded so that the
            // policy's sums stay plain arithmetic. It counts only for the
            // queue's granted level, as at most the whole GPU: never more
            // than a busy queue of that level takes by suspension.
            qs.demand_wgs = std::min(
                s.demand_at(static_cast<std::uint64_t>(std::max<std::int64_t>(sample_ns, 0))),
                kMaxDemandWgs);
            if (const auto& r = read_indexes[i]) {
                qs.read_index = *r;
            } else {
                qs.read_index_known = false;
                // No address (yet): the tagging layer takes the slot when
                // the queue's creation ioctl returns and learns the address
                // only when the HSA call does. Not a failure to report.
                // Else, once per queue, read alone again for the reason.
                errno = 0;
                const int err =
                    s.read_index_va && !unreadable_.contains(key) && !p.page.read_index(s) ? errno
                                                                                           : 0;
                if (s.read_index_va && unreadable_.insert(key).second)
                    log_.warning("read_index",
                                 "pid " + std::to_string(pid) + " gpu " +
                                     std::to_string(key.gpu_id) + " queue " +
                                     std::to_string(key.queue_id) + ": read index unreadable (" +
                                     std::strerror(err) + "): idle is judged by doorbells alone");
            }
            // The control loop is timed from the doorbell that starts work
            // outranking something: not a lower queue's own doorbell.
            auto& last = last_doorbells_[key];
            if (s.doorbells != last && !policy_->active(key) && s.last_doorbell_ns &&
                it->second.priority > min_priority_)
                trigger = std::min(trigger.value_or(qs.last_doorbell_ns), qs.last_doorbell_ns);
            last = s.doorbells;
            samples.push_back(qs);
        }
        if (snap.header.hint_begin || snap.header.hint_end)
            hints.push_back({pid, snap.header.hint_begin, snap.header.hint_end});
        if (snap.header.busy_seq != p.acked)
            to_ack.emplace_back(pid, snap.header.busy_seq);
    }
    for (pid_t pid : broken) {
        policy_->remove_process(pid);
        procs_.erase(pid);
    }
    // uid_queues names every uid with a process at this step's start.
    loop_budget_.keep_if([&uid_queues](std::uint32_t uid) { return uid_queues.contains(uid); });
    min_priority_ = min_prio;

    acts_->sampled_ns_ = clock_.now_ns();
    acts_->trigger_ns_ = trigger;
    policy_->update(samples, hints);
    policy_->tick();
    if (restart_policy_) {
        restart_policy_ = false;
        new_policy();
    }
    acts_->trigger_ns_.reset();
    publish_holds();

    now = clock_.now_ns();
    // Acks last: a held doorbell goes out after the suspension returned.
    for (auto [pid, seq] : to_ack) {
        auto it = procs_.find(pid);
        if (it == procs_.end())
            continue;
        try {
            it->second.page.ack_busy(seq);
            it->second.acked = seq;
        } catch (const Error&) {
            metrics_.error("page");
        }
    }
    for (auto& [pid, p] : procs_)
        update_control(p, now);
    renew_coop(now);
}

void Controller::cycle() {
    const std::uint32_t seen = wake_.value();
    step();
    const std::chrono::nanoseconds timeout = wait_for();
    if (!channel_) {
        wake_.wait(seen, timeout);
        return;
    }
    // The socket is served in this wait, by this thread: an announcement
    // ends it with no other thread's wake-up between it and the next step.
    // At least one round however late the step ran: a loop kept busy
    // (steps that use up their wait) must still answer and read the socket.
    const auto until = std::chrono::steady_clock::now() + timeout;
    for (;;) {
        const auto left = std::max(until - std::chrono::steady_clock::now(),
                                   std::chrono::steady_clock::duration::zero());
        const Channel::Served served = channel_->serve_once(left, wake_.fd());
        socket_served_ = true;
        switch (served) {
            case Channel::Served::extra:
                wake_.drain();  // another thread's wake(): the word says
                break;
            case Channel::Served::interrupted:
                return;  // a signal: the caller looks at why
            case Channel::Served::failed:
                wake_.wait(seen, left);
                return;
            case Channel::Served::timeout:
            case Channel::Served::served:
                break;
        }
        if (wake_.value() != seen || std::chrono::steady_clock::now() >= until)
            return;
    }
}

std::chrono::nanoseconds Controller::wait_for() const {
    const std::int64_t now = clock_.now_ns();
    bool holding = false;
    for (auto g : gpus_)
        holding = holding || policy_->suspend_level(g) > 0;
    for (const auto& [pid, p] : procs_) {
        holding = holding || policy_->coop_suspended(pid);
        for (const auto& [id, q] : p.queues)
            holding = holding || (q.priority > min_priority_ && policy_->active(q.key));
    }
    std::int64_t wait = holding ? ns(cfg_.poll_interval) : ns(cfg_.idle_poll);
    if (auto d = policy_->next_deadline_ns())
        wait = std::min(wait, std::max<std::int64_t>(*d - now, 0));
    wait = std::min(wait, std::max<std::int64_t>(next_scan_ - now, 0));
    return std::chrono::nanoseconds(wait);
}

void Controller::reconfigure(const DaemonConfig& cfg) {
    release_all();
    cfg_ = cfg;
    loop_budget_ = loop_budget(cfg.loop_share_pct);
    over_loop_budget_.clear();
    // Rules may have changed: every process is looked at again.
    procs_.clear();
    new_policy();
    next_scan_ = 0;
}

void Controller::release_all() {
    if (dev_) {
        try {
            dev_->resume_all({});
            metrics_.resume_call(0, 0);
        } catch (const Error& e) {
            log_.warning("resume_failed", std::string("releasing every hold: ") + e.what());
        }
        try {
            if (acts_->confined_any())
                dev_->release_confinement({});
        } catch (const Error& e) {
            log_.warning("unconfine_failed",
                         std::string("releasing every confinement: ") + e.what());
        }
    }
    for (auto& [pid, p] : procs_) {
        try {
            if (p.coop_seq || policy_->coop_suspended(pid))
                p.page.send_coop(false);
            p.page.set_control(0, 0);
            p.ctl_written = 0;
        } catch (const Error&) {
        }
        p.coop_seq.reset();
    }
    metrics_.forget_gpus();
}

void Controller::publish_holds() {
    const auto& auto_levels = policy_->config().cu_demand_is_auto;
    for (auto gpu : gpus_) {
        metrics_.set_confinement(gpu, policy_->confine_level(gpu), policy_->confine_share(gpu));
        for (int level = 0; level <= policy::kPriorityMax; ++level) {
            if (auto_levels[static_cast<std::size_t>(level)])
                metrics_.set_auto_demand(gpu, level, policy_->auto_demand(gpu, level));
        }
    }
}

namespace {

// The adaptive demand @p holds on @gpu for each level set to cu_demand
// "auto", by level ({} when no level is).
nlohmann::json auto_demand_json(const policy::Policy& p, std::uint32_t gpu) {
    nlohmann::json j = nlohmann::json::object();
    for (int level = 0; level <= policy::kPriorityMax; ++level) {
        if (p.config().cu_demand_is_auto[static_cast<std::size_t>(level)])
            j[std::to_string(level)] = p.auto_demand(gpu, level);
    }
    return j;
}

}  // namespace

std::string Controller::status_json() const {
    nlohmann::json j;
    j["pid"] = ::getpid();
    j["order"] = std::string(policy::to_string(cfg_.policy.order));
    j["device_open"] = dev_.has_value();
    j["processes"] = procs_.size();
    const auto& st = policy_->stats();
    j["stats"] = {
        {"suspend_calls", st.suspend_calls},     {"resume_calls", st.resume_calls},
        {"coop_suspends", st.coop_suspends},     {"coop_resumes", st.coop_resumes},
        {"starvation_hits", st.starvation_hits}, {"relapses", st.relapses},
        {"confine_calls", st.confine_calls},     {"unconfine_calls", st.unconfine_calls},
        {"pages_refused", pages_refused_},       {"loop_budget_skips", loop_budget_.skips()}};
    std::set<std::uint32_t> gpus = gpus_;
    nlohmann::json groups = nlohmann::json::object();
    nlohmann::json procs = nlohmann::json::array();
    for (const auto& [pid, p] : procs_) {
        nlohmann::json qs = nlohmann::json::array();
        for (const auto& [id, q] : p.queues) {
            gpus.insert(q.key.gpu_id);
            qs.push_back({{"gpu", q.key.gpu_id},
                          {"queue", q.key.queue_id},
                          {"priority", q.priority},
                          {"mechanism", q.mechanism == policy::Mechanism::kCoop ? "coop" : "amdqp"},
                          {"active", policy_->active(q.key)},
                          {"group", q.group}});
            if (!q.group.empty()) {
                auto& g = groups[q.group];
                if (g.is_null())
                    g = {{"priority", q.priority},
                         {"gpus", nlohmann::json::array()},
                         {"pids", nlohmann::json::array()}};
                if (std::find(g["gpus"].begin(), g["gpus"].end(), q.key.gpu_id) == g["gpus"].end())
                    g["gpus"].push_back(q.key.gpu_id);
                if (std::find(g["pids"].begin(), g["pids"].end(), pid) == g["pids"].end())
                    g["pids"].push_back(pid);
            }
        }
        procs.push_back({{"pid", pid},
                         {"uid", p.facts.uid},
                         {"comm", p.facts.comm},
                         {"cgroup", p.facts.cgroup},
                         {"rule", p.verdict.rule},
                         {"coop_suspended", policy_->coop_suspended(pid)},
                         {"queues", qs}});
    }
    nlohmann::json g = nlohmann::json::array();
    for (auto gpu : gpus) {
        g.push_back({{"gpu", gpu},
                     {"suspend_level", policy_->suspend_level(gpu)},
                     {"confine_level", policy_->confine_level(gpu)},
                     {"confine_share", policy_->confine_share(gpu)},
                     {"auto_demand", auto_demand_json(*policy_, gpu)}});
    }
    j["gpus"] = g;
    j["groups"] = groups;
    j["tagged"] = procs;
    return j.dump();
}

}  // namespace amdqp::daemon
