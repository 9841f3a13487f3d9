// SPDX-License-Identifier: MIT
// Tensor-parallel jobs as profiled: every rank's timeline recorded at once
// (llm_tp --profile-all-ranks), each collective's duration on a rank
// including its wait for the slower ranks. These make them the timelines
// the simulator replays, one stream per rank, where a collective completes
// only when the last rank reached it (simulator.cpp) and the waits come
// back from the replay itself.
#ifndef AMDQP_SIM_TP_HPP
#define AMDQP_SIM_TP_HPP

#include <string>
#include <vector>

#include "timeline.hpp"

namespace amdqp::sim {

// Peer waits stripped out of @ranks (the present ranks of one job; request
// q of every rank is the same profiled request; collectives aligned by
// their order within it). A collective's own cost is its duration on the
// last-arriving rank: every rank leaves it together, so that is the least
// duration across the ranks. With @complete false (some rank of the job
// was not profiled, and the present ranks may all have waited for it),
// the cost is the least duration of that collective over every present
// rank and every profiled request, still an upper bound. Each collective
// is set to its cost and every later kernel of the request moves earlier
// by the waits removed before it (the host was behind the wait, or its
// launches queued behind it). Throws std::runtime_error when the ranks'
// requests or collective counts differ.
std::vector<Timeline> strip_peer_waits(const std::vector<Timeline>& ranks, bool complete);

// The kernel-wise mean of @ranks (start offsets and durations), the
// stand-in of a rank that was not profiled. Throws when their shapes differ.
Timeline mean_rank(const std::vector<Timeline>& ranks);

struct TpJob {
    std::vector<Timeline> ranks;  // one per rank, 0 .. tp-1
    std::vector<int> missing;     // ranks not profiled (the mean of the present ones)
    double gap_factor = 1.0;      // fit_to_wall's factor of the pacing rank, applied to all
    Ns stripped = 0;              // peer wait removed, summed over ranks and requests
};

// @present: the profiled ranks of one job (Timeline::rank set), @tp its
// degree. Strips the peer waits, fills missing ranks with the mean of the
// present ones and shrinks every rank's idle gaps by the factor that fits
// the rank with the longest median span (the one that paces the group) to
// the job's unprofiled wall time (rank 0's request_wall_us, else another
// present rank's).
TpJob prepare_tp_job(const std::vector<Timeline>& present, int tp);

// "rank 2, 3" for a note.
std::string rank_list(const std::vector<int>& ranks);

}  // namespace amdqp::sim

#endif
