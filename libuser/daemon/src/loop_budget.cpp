// SPDX-License-Identifier: MIT
#include "loop_budget.hpp"

#include <algorithm>

namespace amdqp::daemon {

LoopBudget::LoopBudget(int share_pct, std::int64_t burst_ns) noexcept
    : share_pct_(std::clamp(share_pct, 1, 100)), burst_ns_(std::max<std::int64_t>(burst_ns, 0)) {}

bool LoopBudget::allows(std::uint32_t uid, std::int64_t now) {
    if (!metered(uid))
        return true;
    auto [it, fresh] = buckets_.try_emplace(uid, Bucket{burst_ns_, now, 0});
    Bucket& b = it->second;
    if (!fresh && now > b.at_ns) {
        // (now - at) * pct / 100 without overflow for any gap: a uid may
        // come back after hours.
        const std::int64_t gap = now - b.at_ns;
        const std::int64_t earned = gap / 100 * share_pct_ + gap % 100 * share_pct_ / 100;
        b.tokens_ns = std::min(burst_ns_, b.tokens_ns + std::min(earned, burst_ns_));
    }
    b.at_ns = std::max(b.at_ns, now);
    if (b.tokens_ns > 0)
        return true;
    b.skips++;
    skips_++;
    return false;
}

void LoopBudget::charge(std::uint32_t uid, std::int64_t cost_ns) {
    if (!metered(uid) || cost_ns <= 0)
        return;
    auto it = buckets_.find(uid);
    if (it == buckets_.end())
        return;
    // Bounded below so that one huge step is paid off in bounded time.
    it->second.tokens_ns = std::max(it->second.tokens_ns - cost_ns, -burst_ns_);
}

std::uint64_t LoopBudget::skips(std::uint32_t uid) const {
    auto it = buckets_.find(uid);
    return it == buckets_.end() ? 0 : it->second.skips;
}

}  // namespace amdqp::daemon
