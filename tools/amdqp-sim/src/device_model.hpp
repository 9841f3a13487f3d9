// SPDX-License-Identifier: MIT
// The device models' arithmetic, kept free of the event loop so the tests
// can check it on hand-computed cases: how fast each co-resident kernel
// progresses, and what a scheduler update costs.
#ifndef AMDQP_SIM_DEVICE_MODEL_HPP
#define AMDQP_SIM_DEVICE_MODEL_HPP

#include <string>
#include <string_view>
#include <vector>

#include "timeline.hpp"

namespace amdqp::sim {

enum class DeviceKind {
    kTimeslice,  // NVIDIA without MPS: one context at a time
    kHws,        // AMD gfx9.4.x HWS: all queues mapped, a runlist update preempts all
    kMes,        // AMD MES: per-queue remove/add
};

std::string_view to_string(DeviceKind k);
DeviceKind parse_device_kind(std::string_view s);  // throws std::invalid_argument

struct TimesliceParams {
    // Fitted on the H200 dual-model HP P99 (5.98 ms): `amdqp-sim validate
    // --calibrate-on` gave 3011 us (README.md: calibration).
    Ns slice = 3000 * kUs;
    Ns switch_cost = 25 * kUs;   // assumption
    bool yield_when_dry = true;  // a context with nothing queued gives the GPU up
    // How long a context that ran dry keeps the GPU before the scheduler
    // sees it idle and yields it; work submitted meanwhile runs at once.
    Ns dry_hold = 0;
};

struct HwsParams {
    // Speed, relative to running alone, of a kernel that does not fill the
    // device while a kernel of another queue does (the dispatcher
    // interleaves their workgroups; the small one waits for slots).
    // Calibrated on the MI308X dual-model test (2.71 -> 19.38 ms).
    double corun_rate = 0.021;         // `amdqp-sim sweep` refits it unless told
    Ns unmap = 100 * kUs;              // unmap of the runlist / of one queue (assumption)
    Ns map = 50 * kUs;                 // map of the runlist / of one queue (assumption)
    Ns cwsr_save_full = 500 * kUs;     // saving every wave of a full 4-XCC device (assumption:
                                       // ~47 MiB, DESIGN.md, at ~100 GB/s)
    Ns cwsr_restore_full = 500 * kUs;  // restoring them
    double nccl_occupancy = 0.05;      // CUs a collective spinning for its peers holds
};

struct DeviceParams {
    DeviceKind kind = DeviceKind::kHws;
    // Share of a full device's CUs this device has: 1 for SPX, 0.25 for a
    // CPX partition of a 4-XCC MI308X.
    double compute_fraction = 1.0;
    TimesliceParams ts;
    HwsParams hws;
};

// One kernel resident on (or waiting for) a device.
struct Contender {
    double occupancy = 1.0;    // share of a full device's CUs it fills running alone
    double cu_fraction = 1.0;  // its queue's CU mask, as a share of this device (1: none)
    bool progressing = true;   // false: holds CUs without progress (collective
                               // waiting for peers, waves being saved)
};

// Progress rate (isolated-duration ns per ns) of each contender sharing a
// device with @compute_fraction of a full device's CUs:
//  - a kernel needing more CUs than the device (or its mask) has runs at
//    (CUs it has) / (CUs it needs);
//  - masked queues (cu_fraction < 1) are assumed disjoint: no interference;
//  - unmasked ones that fit together run at full speed; when one fills the
//    device, the others run at @corun_rate and the filling ones share the
//    rest; when none fills it alone but together they overflow, all slow
//    down in proportion.
std::vector<double> shared_rates(const std::vector<Contender>& c, double compute_fraction,
                                 double corun_rate);

// Occupancy of a kernel relative to a device of @compute_fraction (<= 1).
double device_share(double occupancy, double compute_fraction);

// A runlist update under HWS: unmap every queue (saving the waves resident
// on the device), map the new runlist (restoring the saved waves of the
// queues in it). Residents are shares of this device's CUs (<= 1 each sum).
struct UpdateCost {
    Ns unmap = 0, save = 0, map = 0, restore = 0;
    Ns total() const { return unmap + save + map + restore; }
};
UpdateCost hws_update_cost(const HwsParams& p, double compute_fraction, double resident_before,
                           double resident_after);
// MES: removing one queue (its own waves saved) or adding it back.
Ns mes_remove_cost(const HwsParams& p, double compute_fraction, double resident);
Ns mes_add_cost(const HwsParams& p, double compute_fraction, double resident);

}  // namespace amdqp::sim

#endif
