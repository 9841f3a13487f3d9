// SPDX-License-Identifier: MIT
#include "timeline.hpp"

#include <algorithm>
#include <cmath>

namespace amdqp::sim {

Ns Request::span() const {
    if (kernels.empty())
        return 0;
    Ns end = 0;
    for (const auto& k : kernels)
        end = std::max(end, k.start + k.dur);
    return end - kernels.front().start;
}

Ns Request::busy() const {
    Ns sum = 0;
    for (const auto& k : kernels)
        sum += k.dur;
    return sum;
}

Timeline scale_durations(const Timeline& t, double factor) {
    // Start offsets stay: they are submission times in the simulator's
    // model, and a kernel queued behind a stretched predecessor starts when
    // it ends anyway.
    Timeline out = t;
    for (auto& r : out.requests) {
        for (auto& k : r.kernels)
            k.dur = static_cast<Ns>(std::llround(static_cast<double>(k.dur) * factor));
    }
    return out;
}

Timeline fit_to_wall(const Timeline& t) {
    if (t.request_wall_us.empty() || t.requests.empty())
        return t;
    std::vector<double> wall = t.request_wall_us;
    std::vector<double> idle;
    for (const auto& r : t.requests)
        idle.push_back(static_cast<double>(r.span() - r.busy()));
    const auto median = [](std::vector<double> v) {
        std::nth_element(v.begin(), v.begin() + static_cast<std::ptrdiff_t>(v.size() / 2), v.end());
        return v[v.size() / 2];
    };
    double busy_sum = 0;
    for (const auto& r : t.requests)
        busy_sum += static_cast<double>(r.busy());
    const double busy = busy_sum / static_cast<double>(t.requests.size());
    const double want_idle = median(wall) * static_cast<double>(kUs) - busy;
    const double have_idle = median(idle);
    // Only ever shrink: the profiler adds host time, it never removes any.
    if (want_idle <= 0 || have_idle <= 0 || want_idle >= have_idle)
        return t;
    const double f = want_idle / have_idle;
    Timeline out = t;
    for (auto& r : out.requests) {
        // Each gap between a kernel's end and the next submission shrinks
        // by f; kernels keep their durations and their order.
        Ns end = 0, shift = 0;
        for (std::size_t i = 0; i < r.kernels.size(); ++i) {
            auto& k = r.kernels[i];
            const Ns orig =
                t.requests[static_cast<std::size_t>(&r - out.requests.data())].kernels[i].start;
            if (i > 0 && orig > end) {
                const Ns gap = orig - end;
                shift += gap - static_cast<Ns>(std::llround(static_cast<double>(gap) * f));
            }
            end = std::max(end, orig + k.dur);
            k.start = orig - shift;
        }
    }
    return out;
}

}  // namespace amdqp::sim
