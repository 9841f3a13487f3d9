// SPDX-License-Identifier: MIT
// The preemption policy: decides which GPUs run only their busiest
// priority level. Fed inventory events and activity samples, reads time
// from a Clock, acts through Actions; no I/O, no threads, no globals, so
// the daemon, an in-process controller, unit tests with a fake clock and a
// trace-driven simulator run the same code. Not thread safe: one caller.
//
// Rules (Documentation/policy.rst explains them):
//  - A queue is busy from a new doorbell (or a busy hint) until its read
//    index caught up with its write index and no hint is open, then stays
//    "active" for an adaptive hysteresis (gap_estimator.hpp).
//  - An active queue of priority P makes its GPU's level at least P; an
//    active queue of a group does so on every GPU the group spans.
//  - On a GPU at level L every queue with priority < L is suspended, so
//    equal priorities never suspend each other.
//  - A group with a queue suspended on one GPU is suspended on every GPU
//    it spans (the level there rises to the group's priority + 1).
//  - A GPU kept suspended for max_continuous_suspend, or whose lower work
//    got less than min_low_share of share_window, runs everything for
//    min_run_slice (with every GPU tied to it by a group).
//  - All GPUs that rise to one level in one step are one suspend_below
//    call; all GPUs that fall in one step are one resume_all call.
//  - Where the level's work needs only part of the GPU (Config::cu_demand)
//    the queues below are confined to the rest instead of suspended, with
//    the same levels, groups and calls; suspension wins where both are
//    wanted (a group suspended on one GPU is suspended on all). A confined
//    queue runs, at its share: it starves at (1 - share).
//  - An adaptive level's demand on a GPU (Config::cu_demand_is_auto) is
//    the work groups its active queues' recent dispatches ask for, in
//    CUs of the GPU's geometry, rounded up to eighths of an XCC, capped at
//    the whole GPU; it rises at once and falls only after
//    cu_demand_auto.hold. Unknown demand or geometry suspends.
#ifndef AMDQP_POLICY_POLICY_HPP
#define AMDQP_POLICY_POLICY_HPP

#include <chrono>
#include <cstdint>
#include <deque>
#include <functional>
#include <map>
#include <optional>
#include <set>
#include <span>
#include <string>

#include "amdqp/policy/config.hpp"
#include "amdqp/policy/cu_mask.hpp"
#include "amdqp/policy/gap_estimator.hpp"
#include "amdqp/policy/types.hpp"

namespace amdqp::policy {

struct Stats {
    std::uint64_t suspend_calls = 0;
    std::uint64_t resume_calls = 0;
    std::uint64_t coop_suspends = 0;
    std::uint64_t coop_resumes = 0;
    std::uint64_t starvation_hits = 0;  // run slices forced by the bound
    std::uint64_t relapses = 0;         // doorbells right after a hysteresis ran out
    std::uint64_t confine_calls = 0;
    std::uint64_t unconfine_calls = 0;
    std::uint64_t confine_slices = 0;  // run slices forced by max_continuous_confine
};

class Policy {
  public:
    // Throws std::invalid_argument listing Config::validate()'s errors, or
    // when the config confines and @actions cannot.
    Policy(const Config& cfg, const Clock& clock, Actions& actions);

    // Inventory. Unknown keys are ignored; adding a known key updates it.
    void add_queue(const QueueInfo& info);
    void remove_queue(const QueueKey& key);
    void remove_process(std::int32_t pid);  // exit or crash: all its queues
    // Queues on @gpu the policy does not watch (untagged, or dropped as
    // untrusted), which SUSPEND_BELOW holds all the same.
    struct Unwatched {
        // The lowest priority among those that may have work (activity
        // unknown, or work known): victims whenever the GPU is held above
        // them, which the starvation bound counts as it counts tagged
        // queues. nullopt: none.
        std::optional<int> lowest;
        // The lowest priority among those amdqp.ko's backend reports
        // working (work in flight, or submitted since the last look): they
        // ask for a suspension as a busy tagged lower queue does. Those of
        // unknown activity do not: a call for them alone would preempt the
        // high work (a runlist update) for victims that may have no work.
        std::optional<int> working;
        // The lowest priority among those a call in force does not hold:
        // listed for the first time (a call holds the queues that exist
        // when it is made), or working on the hardware again after amdqp.ko
        // let them go (its starvation budget). One below the level in
        // force has the call made again.
        std::optional<int> unheld;
        bool operator==(const Unwatched&) const = default;
    };
    void set_unwatched(std::uint32_t gpu, const Unwatched& unwatched);
    // Only victims, none known to work: set_unwatched(gpu, {lowest}).
    void set_unwatched(std::uint32_t gpu, std::optional<int> lowest_priority) {
        set_unwatched(gpu, Unwatched{lowest_priority, std::nullopt, std::nullopt});
    }

    // @gpu's CU layout (amdqp.ko's CONFINE INFO), which an adaptive demand
    // needs; without it (or with cu_per_xcc 0) such a level suspends.
    void set_geometry(std::uint32_t gpu, const CuGeometry& geometry);

    // Samples taken now; queues and processes not listed keep their state.
    // Decides and acts before returning.
    void update(std::span<const QueueSample> queues, std::span<const ProcessSample> procs = {});
    // Timers only (hysteresis expiry, starvation bound, end of a run slice).
    void tick();
    // When tick() has something to do next, if anything.
    std::optional<std::int64_t> next_deadline_ns() const;

    SuspendOrder order() const { return cfg_.order; }
    const Config& config() const { return cfg_; }
    const Stats& stats() const { return stats_; }
    // Queues with priority below this are suspended on @gpu (0: none).
    int suspend_level(std::uint32_t gpu) const;
    // Queues with priority below this are confined on @gpu (0: none), to
    // confine_share(gpu) of its CUs.
    int confine_level(std::uint32_t gpu) const;
    double confine_share(std::uint32_t gpu) const;
    // The adaptive demand of @level on @gpu the policy holds now (a
    // fraction of the GPU; 0: none known).
    double auto_demand(std::uint32_t gpu, int level) const;
    bool active(const QueueKey& key) const;
    std::optional<std::chrono::nanoseconds> hysteresis(const QueueKey& key) const;
    bool coop_suspended(std::int32_t pid) const { return coop_applied_.contains(pid); }

  private:
    enum class Activity { kIdle, kBusy, kLingering };

    struct Queue {
        Queue(const QueueInfo& i, const Config& cfg) : info(i), est(cfg) {}
        QueueInfo info;
        GapEstimator est;
        Activity activity = Activity::kIdle;
        std::uint64_t doorbells = 0;
        std::uint32_t demand_wgs = 0;  // at the last sample
        bool seen = false;             // a sample arrived (doorbells is a baseline)
        bool pending = false;          // read index behind write index at the last sample
        std::int64_t idle_since = 0;
        std::optional<std::int64_t> expired_at;  // hysteresis ran out here
        std::int64_t expired_idle_since = 0;
        std::chrono::nanoseconds expired_h{0};
    };

    // What a GPU holds: queues below level (0: none) keep share of it
    // (0: suspended, (0, 1): confined).
    struct Hold {
        int level = 0;
        double share = 0;
        bool suspends() const { return level > 0 && share == 0; }
        bool confines() const { return level > 0 && share > 0; }
        bool operator==(const Hold&) const = default;
    };

    // An adaptive level's demand on a GPU, held against flapping.
    struct HeldDemand {
        double share = 0;     // fraction of the GPU; 0: not known
        std::int64_t at = 0;  // when the demand last reached it
    };

    // A stretch in which the GPU's lower work ran at less than its full
    // share: it owes (1 - share) of the time (1 while suspended).
    struct Starved {
        std::int64_t begin;
        std::int64_t end;  // -1: open
        double rate;
    };

    struct Gpu {
        int applied = 0;                        // level passed to the kernel
        bool reapply = false;                   // a new victim arrived
        std::optional<std::int64_t> since;      // starved continuously since
        std::optional<std::int64_t> fed_since;  // not starved since (since kept until a slice)
        Unwatched unwatched;                    // queues not watched (unheld unused)
        std::optional<std::int64_t> run_until;  // forced run slice
        std::deque<Starved> starved;            // in share_window

        // Confinement. since and fed_since are about suspension only: a
        // confined queue runs.
        double share = 0;                            // applied: 0 suspended, else confined
        bool suspended_victims = false;              // suspended, with work below
        std::optional<std::int64_t> confined_since;  // confined continuously since

        CuGeometry geometry{1, 0};         // cu_per_xcc 0: not known
        std::map<int, HeldDemand> demand;  // adaptive levels, by level
    };

    void observe(Queue& q, const QueueSample* s, bool hinted, std::int64_t now);
    void go_busy(Queue& q, std::int64_t at);
    void expire(std::int64_t now);
    void track_demand(std::int64_t now);
    // @wgs work groups as a fraction of @geo (quantized, bounded).
    double demand_share(std::uint64_t wgs, const CuGeometry& geo) const;
    void decide();
    std::map<std::uint32_t, Hold> wanted(std::int64_t now) const;
    double kept_share(std::uint32_t gpu, int level) const;
    void close_over_groups(std::map<std::uint32_t, int>& level,
                           std::map<std::uint32_t, double>& share) const;
    std::set<std::uint32_t> group_closure(std::set<std::uint32_t> gpus) const;
    bool splits_a_group(const std::map<std::uint32_t, int>& rising) const;
    void account(std::int64_t now);
    void in_calls(const std::map<std::uint32_t, int>& rising,
                  const std::function<void(std::span<const std::uint32_t>, int)>& call) const;
    double starved_in_window(const Gpu& g, std::int64_t now) const;
    static bool starving_now(const Gpu& g);  // a stretch is open

    Config cfg_;
    const Clock& clock_;
    Actions& actions_;
    Stats stats_;
    std::map<QueueKey, Queue> queues_;
    std::map<std::int32_t, bool> hinted_;  // pid -> hint open
    std::map<std::uint32_t, Gpu> gpus_;
    std::set<std::int32_t> coop_applied_;
};

}  // namespace amdqp::policy

#endif
