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

namespace {
// @t with one field of every kernel multiplied by @factor.
Timeline scale_kernels(const Timeline& t, Ns Kernel::*field, double factor) {
    Timeline out = t;
    for (auto& r : out.requests) {
        for (auto& k : r.kernels)
            k.*field = static_cast<Ns>(std::llround(static_cast<double>(k.*field) * factor));
    }
    return out;
}
}  // namespace

Timeline stretch_launches(const Timeline& t, double factor) {
    return scale_kernels(t, &Kernel::start, factor);
}

Timeline scale_durations(const Timeline& t, double factor) {
    // Start offsets stay: they are submission times in the simulator's
    // model, and a kernel queued behind a stretched predecessor starts when
    // it ends anyway.
    return scale_kernels(t, &Kernel::dur, factor);
}

double wall_fit_factor(const Timeline& t) {
    if (t.request_wall_us.empty() || t.requests.empty())
        return 1.0;
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
        return 1.0;
    return want_idle / have_idle;
}

Timeline shrink_gaps(const Timeline& t, double f) {
    if (f == 1.0)
        return t;
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

Timeline fit_to_wall(const Timeline& t) {
    return shrink_gaps(t, wall_fit_factor(t));
}

namespace {
Ns median_of(std::vector<Ns> v) {
    std::nth_element(v.begin(), v.begin() + static_cast<std::ptrdiff_t>(v.size() / 2), v.end());
    return v[v.size() / 2];
}
}  // namespace

Timeline typical_request(const Timeline& t) {
    if (t.requests.size() < 2)
        return t;
    const std::size_t n = t.requests.front().kernels.size();
    for (const auto& r : t.requests) {
        if (r.kernels.size() != n)
            return t;
    }
    Timeline out = t;
    Request typ = t.requests.front();
    std::vector<Ns> step(t.requests.size()), dur(t.requests.size());
    Ns start = 0;
    for (std::size_t i = 0; i < n; ++i) {
        for (std::size_t r = 0; r < t.requests.size(); ++r) {
            const auto& k = t.requests[r].kernels;
            step[r] = i == 0 ? 0 : k[i].start - k[i - 1].start;
            dur[r] = k[i].dur;
        }
        start += median_of(step);
        typ.kernels[i].start = start;
        typ.kernels[i].dur = median_of(dur);
    }
    out.requests = {typ};
    return out;
}

bool mark_decode_steps(Timeline& t, int steps) {
    if (steps < 1)
        return false;
    const auto n = static_cast<std::size_t>(steps);
    std::vector<std::size_t> period(t.requests.size(), 0);
    for (std::size_t r = 0; r < t.requests.size(); ++r) {
        const auto& k = t.requests[r].kernels;
        const std::size_t total = k.size();
        for (std::size_t d = total / n; d >= 1 && period[r] == 0; --d) {
            if (n * d >= total)
                continue;  // nothing left for the prefill
            bool same = true;
            for (std::size_t i = total - n * d; same && i + d < total; ++i)
                same = k[i].cls == k[i + d].cls;
            if (same)
                period[r] = d;
        }
        if (period[r] == 0)
            return false;
    }
    for (std::size_t r = 0; r < t.requests.size(); ++r) {
        auto& req = t.requests[r];
        const std::size_t total = req.kernels.size(), d = period[r];
        req.first_token = total - n * d - 1;
        req.syncs.clear();
        for (std::size_t s = 0; s < n; ++s)
            req.syncs.push_back(req.first_token + s * d);
    }
    return true;
}

}  // namespace amdqp::sim
