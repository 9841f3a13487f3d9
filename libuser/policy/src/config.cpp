// SPDX-License-Identifier: MIT
#include "amdqp/policy/config.hpp"

#include <algorithm>
#include <chrono>
#include <sstream>

namespace amdqp::policy {

std::string_view to_string(SuspendOrder order) {
    switch (order) {
        case SuspendOrder::kBeforeDoorbell:
            return "before-doorbell";
        case SuspendOrder::kAfterDoorbell:
            return "after-doorbell";
    }
    return "?";
}

namespace {

// "12.5 ms": Debian 12's GCC has no <format>.
std::string ms(std::chrono::nanoseconds d) {
    std::ostringstream os;
    os << std::chrono::duration<double, std::milli>(d).count() << " ms";
    return os.str();
}

}  // namespace

std::vector<std::string> Config::validate() const {
    std::vector<std::string> err;
    if (hysteresis_min <= 0ns)
        err.push_back("hysteresis_min must be > 0");
    if (hysteresis_max < hysteresis_min)
        err.push_back("hysteresis_max (" + ms(hysteresis_max) + ") must be >= hysteresis_min (" +
                      ms(hysteresis_min) + ")");
    if (hysteresis_initial < hysteresis_min || hysteresis_initial > hysteresis_max)
        err.push_back("hysteresis_initial (" + ms(hysteresis_initial) +
                      ") must lie in [hysteresis_min, hysteresis_max]");
    if (!(hysteresis_factor >= 1.0))
        err.push_back("hysteresis_factor must be >= 1 (the hysteresis must exceed the gaps)");
    if (!(hysteresis_quantile > 0.0 && hysteresis_quantile <= 1.0))
        err.push_back("hysteresis_quantile must lie in (0, 1]");
    if (hysteresis_window == 0)
        err.push_back("hysteresis_window must be >= 1 burst");
    if (!(relapse_factor >= 1.0))
        err.push_back("relapse_factor must be >= 1");
    if (max_continuous_suspend <= 0ns)
        err.push_back("max_continuous_suspend must be > 0");
    if (!(min_low_share >= 0.0 && min_low_share < 1.0))
        err.push_back("min_low_share must lie in [0, 1)");
    if (share_window <= 0ns)
        err.push_back("share_window must be > 0");
    if (min_run_slice <= 0ns)
        err.push_back("min_run_slice must be > 0");
    if (guard_margin < 0ns)
        err.push_back("guard_margin must be >= 0");
    if (max_continuous_suspend + guard_margin >= watchdog_max_suspend)
        err.push_back("max_continuous_suspend (" + ms(max_continuous_suspend) +
                      ") + guard_margin (" + ms(guard_margin) +
                      ") must stay below the kernel watchdog's max_suspend_ms (" +
                      ms(watchdog_max_suspend) + "), or the watchdog resumes first");
    if (hysteresis_max >= max_continuous_suspend)
        err.push_back("hysteresis_max (" + ms(hysteresis_max) +
                      ") must be below max_continuous_suspend (" + ms(max_continuous_suspend) +
                      ")");
    for (std::size_t p = 0; p < cu_demand.size(); ++p) {
        if (!(cu_demand[p] >= 0.0 && cu_demand[p] <= 1.0))
            err.push_back("cu_demand[" + std::to_string(p) +
                          "] must lie in [0, 1] (0: not known, 1: the whole GPU; both suspend)");
        else if (cu_demand_is_auto[p] && cu_demand[p] != 0.0)
            err.push_back("cu_demand[" + std::to_string(p) +
                          "] is both a fraction and adaptive (auto): choose one");
    }
    if (adaptive()) {
        const AutoDemand& a = cu_demand_auto;
        if (a.workgroups_per_cu < 1 || a.workgroups_per_cu > kMaxWorkgroupsPerCu)
            err.push_back("cu_demand_auto.workgroups_per_cu must lie in [1, " +
                          std::to_string(kMaxWorkgroupsPerCu) + "]");
        if (!(a.min >= 0.0 && a.min < 1.0))
            err.push_back("cu_demand_auto.min must lie in [0, 1)");
        if (!(a.max > 0.0 && a.max <= 1.0))
            err.push_back("cu_demand_auto.max must lie in (0, 1]");
        else if (a.max < a.min)
            err.push_back("cu_demand_auto.max must be >= cu_demand_auto.min");
        if (a.hold < 0ns)
            err.push_back("cu_demand_auto.hold must be >= 0");
    }
    if (confines()) {
        if (max_continuous_confine <= 0ns)
            err.push_back("max_continuous_confine must be > 0");
        if (max_continuous_confine + guard_margin >= watchdog_max_confine)
            err.push_back(
                "max_continuous_confine (" + ms(max_continuous_confine) + ") + guard_margin (" +
                ms(guard_margin) + ") must stay below the kernel watchdog's max_confine_ms (" +
                ms(watchdog_max_confine) + "), or the watchdog lifts the confinement first");
    }
    return err;
}

bool Config::confines() const {
    return std::any_of(cu_demand.begin(), cu_demand.end(),
                       [](double d) { return d > 0.0 && d < 1.0; }) ||
           adaptive();
}

bool Config::adaptive() const {
    return std::any_of(cu_demand_is_auto.begin(), cu_demand_is_auto.end(),
                       [](bool a) { return a; });
}

}  // namespace amdqp::policy
