// SPDX-License-Identifier: MIT
#pragma once

#include <cstdint>
#include <map>

namespace amdqp::daemon {

// Each user's share of the control loop's time (issue 25). A tenant's
// pages cost the loop what their slots take to read, and a tenant fills
// its pages as it likes: 32 pages of 1,016 live slots, each woken every
// millisecond, kept an emulated CPU busy. A uid past its share has its
// pages left unread until the time that passes pays for them again; the
// other users' pages are read at every step. Root is not metered: it
// can stop amdqpd anyway, and the demo's processes run as root.
//
// A token bucket per uid, filled at share_pct % of the time that passes
// (up to a burst) and drained by the measured cost. Pure: fed times, no
// clock of its own. Not thread safe (the control loop's thread only).
class LoopBudget {
  public:
    // @share_pct 1..100 (100: nobody is metered); @burst_ns the most a
    // uid may have saved up.
    LoopBudget(int share_pct, std::int64_t burst_ns) noexcept;

    // Whether @uid's pages may be read at @now. A uid seen for the first
    // time starts with the whole burst. Counts a skip when not.
    bool allows(std::uint32_t uid, std::int64_t now);
    // @uid's pages took @cost_ns of the loop.
    void charge(std::uint32_t uid, std::int64_t cost_ns);
    // Forgets the uids for which @has_pages is false.
    template <class Pred>
    void keep_if(Pred has_pages) {
        std::erase_if(buckets_, [&has_pages](const auto& kv) { return !has_pages(kv.first); });
    }

    // Steps in which a uid's pages were left unread, all uids together.
    std::uint64_t skips() const noexcept { return skips_; }
    // Those of one uid since it was first metered (0 if unknown).
    std::uint64_t skips(std::uint32_t uid) const;

  private:
    struct Bucket {
        std::int64_t tokens_ns = 0;
        std::int64_t at_ns = 0;
        std::uint64_t skips = 0;
    };
    bool metered(std::uint32_t uid) const noexcept { return uid != 0 && share_pct_ < 100; }

    int share_pct_;
    std::int64_t burst_ns_;
    std::map<std::uint32_t, Bucket> buckets_;
    std::uint64_t skips_ = 0;
};

}  // namespace amdqp::daemon
