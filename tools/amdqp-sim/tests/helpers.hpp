// SPDX-License-Identifier: MIT
// Small synthetic timelines and scenarios for the simulator's tests.
#ifndef AMDQP_SIM_TESTS_HELPERS_HPP
#define AMDQP_SIM_TESTS_HELPERS_HPP

#include <vector>

#include "scenario.hpp"

namespace amdqp::sim::test {

inline Request request(std::vector<Kernel> ks) {
    Request r;
    r.kernels = std::move(ks);
    return r;
}

// One request of kernels given as {start, dur} in ns.
inline Timeline timeline(std::vector<Kernel> ks, double period_s = 0.0) {
    Timeline t;
    t.workload = "synthetic";
    t.period_s = period_s;
    t.requests.push_back(request(std::move(ks)));
    return t;
}

inline WorkloadSpec workload(std::string name, int prio, Timeline t, double rate, double occ) {
    WorkloadSpec w;
    w.name = std::move(name);
    w.priority = prio;
    w.ranks = {std::move(t)};
    w.rate_per_s = rate;
    w.occupancy = occ;
    return w;
}

inline DeviceParams hws(DeviceKind kind = DeviceKind::kHws) {
    DeviceParams d;
    d.kind = kind;
    d.hws.corun_rate = 0.5;
    d.hws.unmap = 100 * kUs;
    d.hws.map = 50 * kUs;
    d.hws.cwsr_save_full = 400 * kUs;
    d.hws.cwsr_restore_full = 300 * kUs;
    return d;
}

}  // namespace amdqp::sim::test

#endif
