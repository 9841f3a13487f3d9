// SPDX-License-Identifier: MIT
//
// The demand of a doorbell: how many work groups the kernel-dispatch
// packets it published ask for, read from the queue's AQL ring in the
// doorbell hook (no syscall, no allocation, a few loads per packet). The
// activity page keeps a decaying maximum of it per queue (demand_wgs,
// amdqp/activity.h), from which amdqpd sizes a confinement (issue 27).
//
// The ring is the application's memory, written by its threads and
// consumed by the packet processor while the hook reads it: a packet may
// already have been taken (its header set INVALID) or be rewritten after a
// wrap. Every value read is therefore only a hint, bounded here (work
// groups saturate at UINT32_MAX, a zero work-group size counts nothing)
// and by the readers (amdqpd caps a level at the whole GPU).
#ifndef AMDQP_PRELOAD_AQL_DEMAND_HPP
#define AMDQP_PRELOAD_AQL_DEMAND_HPP

#include <hsa/hsa.h>

#include <algorithm>
#include <atomic>
#include <bit>
#include <cstdint>

#include <amdqp/activity.h>

namespace amdqp::preload {

// A queue's AQL ring as one word, so that a lock-free lookup can never pair
// one queue's base with another queue's size: the base (AQL packets are 64
// bytes and rings aligned to them) or'ed with log2 of its size in packets.
class AqlRing {
  public:
    AqlRing() = default;

    // The ring at @base of @packets packets; empty unless @base is 64-byte
    // aligned and not null and @packets a power of two up to 2^31 (an
    // hsa_queue_t size is 32 bits).
    static AqlRing of(std::uint64_t base, std::uint64_t packets) noexcept {
        if (base == 0 || (base & kLowBits) != 0 || packets == 0 || !std::has_single_bit(packets) ||
            packets > (std::uint64_t{1} << 31))
            return {};
        return AqlRing(base | static_cast<std::uint64_t>(std::countr_zero(packets)));
    }
    static AqlRing from_word(std::uint64_t word) noexcept { return AqlRing(word); }

    std::uint64_t word() const noexcept { return word_; }
    bool empty() const noexcept { return word_ == 0; }
    std::uint64_t packets() const noexcept { return std::uint64_t{1} << (word_ & kLowBits); }
    // The packet that AQL index @index occupies.
    hsa_kernel_dispatch_packet_t* packet(std::uint64_t index) const noexcept {
        auto* base = reinterpret_cast<hsa_kernel_dispatch_packet_t*>(word_ & ~kLowBits);
        return base + (index & (packets() - 1));
    }

  private:
    static constexpr std::uint64_t kLowBits = 63;
    static_assert(sizeof(hsa_kernel_dispatch_packet_t) == 64);
    explicit AqlRing(std::uint64_t word) : word_(word) {}
    std::uint64_t word_ = 0;
};

// ceil(@grid / @wg) for @wg > 0, without a division for the usual
// power-of-two sizes. Tested with a mask: std::has_single_bit is a call
// to __popcountdi2 on baseline x86-64 (no popcnt), +10 ns a submission.
inline std::uint64_t groups_along(std::uint32_t grid, std::uint32_t wg) noexcept {
    if ((wg & (wg - 1)) == 0) {
        const int shift = std::countr_zero(wg);
        return (std::uint64_t{grid} + wg - 1) >> shift;
    }
    return grid / wg + (grid % wg != 0);
}

// Work groups of a dispatch of @grid work items in groups of @wg, saturated
// at UINT32_MAX; 0 when a work-group size is 0 (a malformed packet, which
// the packet processor would refuse).
inline std::uint32_t workgroups(const std::uint32_t (&grid)[3],
                                const std::uint16_t (&wg)[3]) noexcept {
    if (wg[0] == 0 || wg[1] == 0 || wg[2] == 0)
        return 0;
    constexpr std::uint64_t most = UINT32_MAX;
    // Each factor is below 2^32, so each product of two fits in 64 bits.
    std::uint64_t n = groups_along(grid[0], wg[0]) * groups_along(grid[1], wg[1]);
    n = std::min(n, most) * groups_along(grid[2], wg[2]);
    return static_cast<std::uint32_t>(std::min(n, most));
}

// The work groups of the one packet at @p: its header is loaded first and
// only a kernel dispatch counts (barriers, agent dispatches, invalid or
// vendor packets count 0).
inline std::uint32_t packet_workgroups(hsa_kernel_dispatch_packet_t* p) noexcept {
    const std::uint16_t header =
        std::atomic_ref<std::uint16_t>(p->header).load(std::memory_order_acquire);
    if (((header >> HSA_PACKET_HEADER_TYPE) & ((1u << HSA_PACKET_HEADER_WIDTH_TYPE) - 1)) !=
        HSA_PACKET_TYPE_KERNEL_DISPATCH)
        return 0;
    auto load32 = [](std::uint32_t& v) {
        return std::atomic_ref<std::uint32_t>(v).load(std::memory_order_relaxed);
    };
    auto load16 = [](std::uint16_t& v) {
        return std::atomic_ref<std::uint16_t>(v).load(std::memory_order_relaxed);
    };
    const std::uint32_t grid[3] = {load32(p->grid_size_x), load32(p->grid_size_y),
                                   load32(p->grid_size_z)};
    const std::uint16_t wg[3] = {load16(p->workgroup_size_x), load16(p->workgroup_size_y),
                                 load16(p->workgroup_size_z)};
    return workgroups(grid, wg);
}

// The largest work-group count among the packets a doorbell published:
// AQL indexes [@from, @last], of which only the last
// AMDQP_ACT_DEMAND_MAX_PACKETS (and at most a ring's worth) are read. A
// @from beyond @last (threads ringing one queue out of order) reads @last
// alone.
inline std::uint32_t doorbell_workgroups(AqlRing ring, std::uint64_t from,
                                         std::uint64_t last) noexcept {
    if (ring.empty())
        return 0;
    const std::uint64_t published = from <= last ? last - from + 1 : 1;
    const std::uint64_t n =
        std::min({published, std::uint64_t{AMDQP_ACT_DEMAND_MAX_PACKETS}, ring.packets()});
    std::uint32_t most = 0;
    for (std::uint64_t i = 0; i < n; i++)
        most = std::max(most, packet_workgroups(ring.packet(last - i)));
    return most;
}

}  // namespace amdqp::preload

#endif  // AMDQP_PRELOAD_AQL_DEMAND_HPP
