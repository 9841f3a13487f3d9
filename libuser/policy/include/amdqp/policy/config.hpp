// SPDX-License-Identifier: MIT
// The policy's knobs, their defaults and their validation. Every knob is
// described in Documentation/policy.rst.
#ifndef AMDQP_POLICY_CONFIG_HPP
#define AMDQP_POLICY_CONFIG_HPP

#include <array>
#include <chrono>
#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "amdqp/policy/types.hpp"

namespace amdqp::policy {

using namespace std::chrono_literals;

// When the suspension happens relative to the high-priority doorbell that
// made a GPU busy. The tagging layer and the daemon implement it; the
// policy only carries the choice (DESIGN.md: under HWS "after" costs the
// high-priority work a CWSR save/restore, "before" delays it by one unmap).
enum class SuspendOrder {
    kBeforeDoorbell,  // the tagging layer holds the first doorbell until
                      // the suspension returned (or a deadline passed)
    kAfterDoorbell,   // the doorbell goes through; the policy reacts to it
};

std::string_view to_string(SuspendOrder order);

// The most work groups a CU is assumed to run at once (32 waves of a
// CDNA CU, 64 waves of an RDNA WGP, in groups of one wave, rounded up).
inline constexpr std::uint32_t kMaxWorkgroupsPerCu = 64;

struct Config {
    // Idle hysteresis: how long a queue whose work ran out still counts as
    // busy (see gap_estimator.hpp for the estimator).
    std::chrono::nanoseconds hysteresis_min = 3ms;  // covers eager launch gaps (~2.9 ms seen)
    std::chrono::nanoseconds hysteresis_max = 20ms;
    std::chrono::nanoseconds hysteresis_initial = 3ms;  // before anything was learned
    double hysteresis_factor = 1.5;      // estimate = factor x quantile of recent gaps
    double hysteresis_quantile = 1.0;    // over the recent bursts' largest gaps; 1 = max
    std::size_t hysteresis_window = 32;  // bursts remembered
    // A doorbell within relapse_factor x hysteresis after the hysteresis ran
    // out counts as a gap inside the burst the policy misjudged.
    double relapse_factor = 4.0;

    // Starvation bound for lower-priority work.
    std::chrono::nanoseconds max_continuous_suspend = 500ms;
    double min_low_share = 0.10;  // of share_window; 0 turns the share check off
    std::chrono::nanoseconds share_window = 1s;
    std::chrono::nanoseconds min_run_slice = 20ms;  // forced run after a bound was hit

    // The kernel watchdog (amdqp.ko's max_suspend_ms), which must never be
    // the one to resume: max_continuous_suspend + guard_margin must stay below.
    std::chrono::nanoseconds watchdog_max_suspend = 5000ms;
    std::chrono::nanoseconds guard_margin = 100ms;  // the daemon's worst wake-up lateness

    SuspendOrder order = SuspendOrder::kBeforeDoorbell;

    // Shrink instead of stop (issue 27): the fraction of a GPU's compute
    // units that active work of each priority needs. While a GPU's level
    // is p and cu_demand[p] lies in (0, 1), the queues below p are
    // confined to the other 1 - cu_demand[p] of the CUs instead of being
    // suspended. 0 (the default: not known) and 1 (the whole GPU) suspend,
    // so with every entry 0 the policy never confines.
    std::array<double, kPriorityMax + 1> cu_demand{};
    // Adaptive demand: a level set here (its cu_demand left 0) needs what
    // its active queues' recent dispatches ask for on each GPU
    // (QueueSample::demand_wgs, from the tagging layer), turned into CUs
    // by cu_demand_auto and the GPU's geometry (Policy::set_geometry).
    std::array<bool, kPriorityMax + 1> cu_demand_is_auto{};
    struct AutoDemand {
        // The occupancy assumption: work groups one CU runs at once. 1
        // gives every work group of the largest recent dispatch a CU of
        // its own, which never slows the high work down; real CUs often
        // hold several (up to 32 waves: 8 groups of 256 work items).
        std::uint32_t workgroups_per_cu = 1;
        // Bounds of a known demand (a fraction of the GPU). At 1 (the
        // ceiling's default) work that needs the whole GPU suspends the
        // lower queues; below 1 they always keep 1 - max of it.
        double min = 0.0;
        double max = 1.0;
        // A lower demand takes effect once the higher one was not seen
        // for this long; a higher one at once. Keeps the mask from
        // following every request.
        std::chrono::nanoseconds hold = 1000ms;
    };
    AutoDemand cu_demand_auto;
    // The kernel's confinement watchdog (amdqp.ko's max_confine_ms) and the
    // policy's bound below it: a GPU confined this long runs everything for
    // min_run_slice, so the watchdog (and its cooldown) never lifts first.
    std::chrono::nanoseconds max_continuous_confine = 30000ms;
    std::chrono::nanoseconds watchdog_max_confine = 60000ms;

    // Whether some level confines (or, with an adaptive demand, may
    // confine) instead of suspending.
    bool confines() const;
    // Whether some level's demand is measured (cu_demand_is_auto).
    bool adaptive() const;

    // Every problem, one sentence each; empty when the config is usable.
    std::vector<std::string> validate() const;
};

}  // namespace amdqp::policy

#endif
