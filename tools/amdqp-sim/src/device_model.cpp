// SPDX-License-Identifier: MIT
#include "device_model.hpp"

#include <algorithm>
#include <cmath>
#include <stdexcept>

namespace amdqp::sim {

std::string_view to_string(DeviceKind k) {
    switch (k) {
        case DeviceKind::kTimeslice:
            return "timeslice";
        case DeviceKind::kHws:
            return "hws";
        case DeviceKind::kMes:
            return "mes";
    }
    return "?";
}

DeviceKind parse_device_kind(std::string_view s) {
    if (s == "timeslice")
        return DeviceKind::kTimeslice;
    if (s == "hws")
        return DeviceKind::kHws;
    if (s == "mes")
        return DeviceKind::kMes;
    throw std::invalid_argument("device model must be timeslice, hws or mes, not '" +
                                std::string(s) + "'");
}

double device_share(double occupancy, double compute_fraction) {
    return std::min(1.0, occupancy / compute_fraction);
}

std::vector<double> shared_rates(const std::vector<Contender>& c, double compute_fraction,
                                 double corun_rate) {
    constexpr double kFull = 0.999;
    std::vector<double> rate(c.size(), 0.0);
    std::vector<double> alone(c.size(), 1.0);
    double demand = 0.0, small_demand = 0.0;
    int big = 0;
    for (std::size_t i = 0; i < c.size(); ++i) {
        const double cus = compute_fraction * std::min(1.0, c[i].cu_fraction);
        alone[i] = std::min(1.0, cus / c[i].occupancy);
        if (c[i].cu_fraction < 1.0)
            continue;
        const double share = device_share(c[i].occupancy, compute_fraction);
        demand += share;
        if (share >= kFull)
            ++big;
        else
            small_demand += share;
    }
    for (std::size_t i = 0; i < c.size(); ++i) {
        if (!c[i].progressing)
            continue;
        if (c[i].cu_fraction < 1.0 || demand <= 1.0) {
            rate[i] = alone[i];
            continue;
        }
        const double share = device_share(c[i].occupancy, compute_fraction);
        if (big == 0)
            rate[i] = alone[i] / demand;
        else if (share < kFull)
            rate[i] = alone[i] * corun_rate;
        else
            rate[i] = alone[i] * std::max(0.0, 1.0 - small_demand * corun_rate) / big;
    }
    return rate;
}

namespace {
Ns scaled(Ns full, double compute_fraction, double resident) {
    const double r = std::clamp(resident, 0.0, 1.0);
    return static_cast<Ns>(std::llround(static_cast<double>(full) * compute_fraction * r));
}
}  // namespace

UpdateCost hws_update_cost(const HwsParams& p, double compute_fraction, double resident_before,
                           double resident_after) {
    UpdateCost c;
    c.unmap = p.unmap;
    c.save = scaled(p.cwsr_save_full, compute_fraction, resident_before);
    c.map = p.map;
    c.restore = scaled(p.cwsr_restore_full, compute_fraction, resident_after);
    return c;
}

Ns mes_remove_cost(const HwsParams& p, double compute_fraction, double resident) {
    return p.unmap + scaled(p.cwsr_save_full, compute_fraction, resident);
}

Ns mes_add_cost(const HwsParams& p, double compute_fraction, double resident) {
    return p.map + scaled(p.cwsr_restore_full, compute_fraction, resident);
}

}  // namespace amdqp::sim
