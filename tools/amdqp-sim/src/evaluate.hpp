// SPDX-License-Identifier: MIT
// A scenario run contended and each workload alone, and the two-workload
// (high + low priority) scenarios of the dual-model test in the layouts
// AMD users choose between: one shared device, CU masks, CPX partitions.
#ifndef AMDQP_SIM_EVALUATE_HPP
#define AMDQP_SIM_EVALUATE_HPP

#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "scenario.hpp"

namespace amdqp::sim {

struct WorkloadEval {
    std::string name;
    int priority = 0;
    bool open_loop = false;
    LatencyStats alone, contended;          // open loop
    double it_alone = 0, it_contended = 0;  // back to back
    double ratio() const { return alone.p99 > 0 ? contended.p99 / alone.p99 : 0.0; }
    double loss_pct() const { return it_alone > 0 ? 100.0 * (1.0 - it_contended / it_alone) : 0.0; }
};

struct Evaluation {
    std::vector<WorkloadEval> workloads;
    RunResult contended;
};

// Runs every workload alone (daemon off), then all together.
Evaluation evaluate(const Scenario& sc);
nlohmann::json to_json(const Evaluation& e);
std::string to_text(const Evaluation& e);

enum class Layout {
    kShared,  // one device, every queue mapped (SPX)
    kCuMask,  // one device, HP's queue masked to hp_cu_fraction, LP to the rest
    kCpx,     // XCC-sized partitions: HP alone on one, LP on lp_partitions others
};
std::string_view to_string(Layout l);
Layout parse_layout(std::string_view s);

struct DualModel {
    Timeline hp, lp;
    double hp_rate = 20.0;
    double hp_occupancy = 0.1;  // assumption: ResNet-18 bs1 kernels fill few CUs
    double lp_occupancy = 1.0;  // ResNet-50 bs1024 kernels fill the device
    Ns hp_host_overhead = 0;
    Ns hp_first_arrival = 10 * kMs;
    DeviceParams device;
    DaemonParams daemon;  // daemon.enabled: amdqpd runs in the contended phase
    Layout layout = Layout::kShared;
    double hp_cu_fraction = 0.25;
    int partitions = 4;     // CPX: partitions of the device (compute 1/partitions each)
    int lp_partitions = 1;  // CPX: partitions the LP job runs on (data parallel)
    Ns duration = 30 * kSec;
    Ns warmup = 1 * kSec;
};

Scenario build(const DualModel& m);

// Sum of the LP workloads' it/s (CPX runs one LP job per partition).
double lp_throughput(const RunResult& r);
const WorkloadResult& hp_result(const RunResult& r);

}  // namespace amdqp::sim

#endif
