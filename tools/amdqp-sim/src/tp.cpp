// SPDX-License-Identifier: MIT
#include "tp.hpp"

#include <algorithm>
#include <cmath>
#include <stdexcept>

namespace amdqp::sim {
namespace {

std::vector<std::size_t> collectives(const Request& r) {
    std::vector<std::size_t> out;
    for (std::size_t i = 0; i < r.kernels.size(); ++i) {
        if (r.kernels[i].cls == KernelClass::kNccl)
            out.push_back(i);
    }
    return out;
}

Ns median_span(const Timeline& t) {
    std::vector<Ns> v;
    for (const auto& r : t.requests)
        v.push_back(r.span());
    std::nth_element(v.begin(), v.begin() + static_cast<std::ptrdiff_t>(v.size() / 2), v.end());
    return v[v.size() / 2];
}

}  // namespace

std::vector<Timeline> strip_peer_waits(const std::vector<Timeline>& ranks, bool complete) {
    if (ranks.empty())
        return {};
    const std::size_t nreq = ranks.front().requests.size();
    for (const auto& t : ranks) {
        if (t.requests.size() != nreq)
            throw std::runtime_error("rank " + std::to_string(t.rank) + " of '" + t.workload +
                                     "' has " + std::to_string(t.requests.size()) +
                                     " requests, rank " + std::to_string(ranks.front().rank) + " " +
                                     std::to_string(nreq));
    }
    // idx[r][q]: the collectives of request q on rank r, in order.
    std::vector<std::vector<std::vector<std::size_t>>> idx(ranks.size());
    for (std::size_t r = 0; r < ranks.size(); ++r) {
        for (std::size_t q = 0; q < nreq; ++q) {
            idx[r].push_back(collectives(ranks[r].requests[q]));
            if (idx[r][q].size() != idx[0][q].size())
                throw std::runtime_error(
                    "request " + std::to_string(q) + " of '" + ranks[r].workload + "': rank " +
                    std::to_string(ranks[r].rank) + " has " + std::to_string(idx[r][q].size()) +
                    " collectives, rank " + std::to_string(ranks[0].rank) + " " +
                    std::to_string(idx[0][q].size()));
        }
    }
    // cost[q][i]: collective i of request q.
    std::vector<std::vector<Ns>> cost(nreq);
    for (std::size_t q = 0; q < nreq; ++q) {
        for (std::size_t i = 0; i < idx[0][q].size(); ++i) {
            Ns c = ranks[0].requests[q].kernels[idx[0][q][i]].dur;
            for (std::size_t r = 1; r < ranks.size(); ++r)
                c = std::min(c, ranks[r].requests[q].kernels[idx[r][q][i]].dur);
            cost[q].push_back(c);
        }
    }
    const bool same_count = std::all_of(
        cost.begin(), cost.end(), [&](const auto& c) { return c.size() == cost.front().size(); });
    if (!complete && same_count) {
        for (std::size_t i = 0; i < cost.front().size(); ++i) {
            Ns c = cost[0][i];
            for (std::size_t q = 1; q < nreq; ++q)
                c = std::min(c, cost[q][i]);
            for (std::size_t q = 0; q < nreq; ++q)
                cost[q][i] = c;
        }
    }
    std::vector<Timeline> out = ranks;
    for (std::size_t r = 0; r < out.size(); ++r) {
        for (std::size_t q = 0; q < nreq; ++q) {
            auto& ks = out[r].requests[q].kernels;
            Ns removed = 0;
            std::size_t next = 0;  // the next collective's position in idx[r][q]
            for (std::size_t k = 0; k < ks.size(); ++k) {
                ks[k].start -= removed;
                if (next < idx[r][q].size() && idx[r][q][next] == k) {
                    const Ns c = std::min(ks[k].dur, cost[q][next]);
                    removed += ks[k].dur - c;
                    ks[k].dur = c;
                    ++next;
                }
            }
        }
    }
    return out;
}

Timeline mean_rank(const std::vector<Timeline>& ranks) {
    if (ranks.empty())
        throw std::runtime_error("mean_rank: no rank");
    Timeline out = ranks.front();
    const auto n = static_cast<double>(ranks.size());
    for (std::size_t q = 0; q < out.requests.size(); ++q) {
        auto& ks = out.requests[q].kernels;
        for (const auto& t : ranks) {
            if (t.requests.size() != out.requests.size() ||
                t.requests[q].kernels.size() != ks.size())
                throw std::runtime_error(
                    "'" + t.workload + "': ranks " + std::to_string(ranks.front().rank) + " and " +
                    std::to_string(t.rank) + " differ in requests or kernels; no mean rank");
        }
        for (std::size_t k = 0; k < ks.size(); ++k) {
            double start = 0, dur = 0;
            for (const auto& t : ranks) {
                start += static_cast<double>(t.requests[q].kernels[k].start);
                dur += static_cast<double>(t.requests[q].kernels[k].dur);
            }
            ks[k].start = static_cast<Ns>(std::llround(start / n));
            ks[k].dur = static_cast<Ns>(std::llround(dur / n));
        }
        // Rounding must not reorder submissions.
        for (std::size_t k = 1; k < ks.size(); ++k)
            ks[k].start = std::max(ks[k].start, ks[k - 1].start);
    }
    return out;
}

TpJob prepare_tp_job(const std::vector<Timeline>& present, int tp) {
    if (present.empty() || tp < 1)
        throw std::runtime_error("prepare_tp_job: no rank");
    std::vector<Timeline> sorted = present;
    std::sort(sorted.begin(), sorted.end(),
              [](const Timeline& a, const Timeline& b) { return a.rank < b.rank; });
    TpJob job;
    std::vector<int> have;
    for (const auto& t : sorted) {
        if (t.rank < 0 || t.rank >= tp)
            throw std::runtime_error("'" + t.workload + "': rank " + std::to_string(t.rank) +
                                     " outside TP " + std::to_string(tp));
        if (std::find(have.begin(), have.end(), t.rank) != have.end())
            throw std::runtime_error("'" + t.workload + "': rank " + std::to_string(t.rank) +
                                     " twice");
        have.push_back(t.rank);
    }
    for (int r = 0; r < tp; ++r) {
        if (std::find(have.begin(), have.end(), r) == have.end())
            job.missing.push_back(r);
    }
    auto stripped = strip_peer_waits(sorted, job.missing.empty());
    for (std::size_t i = 0; i < sorted.size(); ++i) {
        for (std::size_t q = 0; q < sorted[i].requests.size(); ++q)
            job.stripped += sorted[i].requests[q].busy() - stripped[i].requests[q].busy();
    }
    const Timeline mean = job.missing.empty() ? Timeline{} : mean_rank(stripped);
    job.ranks.resize(static_cast<std::size_t>(tp));
    for (auto& t : stripped)
        job.ranks[static_cast<std::size_t>(t.rank)] = t;
    for (int r : job.missing) {
        auto& t = job.ranks[static_cast<std::size_t>(r)];
        t = mean;
        t.rank = r;
    }
    // The job's unprofiled wall times: the server's (rank 0), else any.
    std::vector<double> wall;
    for (const auto& t : sorted) {
        if (!t.request_wall_us.empty() && (wall.empty() || t.rank == 0))
            wall = t.request_wall_us;
    }
    std::size_t pacer = 0;
    for (std::size_t r = 1; r < job.ranks.size(); ++r) {
        if (median_span(job.ranks[r]) > median_span(job.ranks[pacer]))
            pacer = r;
    }
    Timeline p = job.ranks[pacer];
    p.request_wall_us = wall;
    job.gap_factor = wall_fit_factor(p);
    for (auto& t : job.ranks)
        t = shrink_gaps(t, job.gap_factor);
    return job;
}

std::string rank_list(const std::vector<int>& ranks) {
    std::string s = ranks.size() == 1 ? "rank " : "ranks ";
    for (std::size_t i = 0; i < ranks.size(); ++i)
        s += (i ? ", " : "") + std::to_string(ranks[i]);
    return s;
}

}  // namespace amdqp::sim
