// SPDX-License-Identifier: MIT
//
// The doorbell's demand (issue 27): the work groups of the kernel-dispatch
// packets a doorbell store publishes, read from the queue's ring, and the
// decaying maximum the activity slot keeps of them.
#include <gtest/gtest.h>

#include <hsa/hsa.h>

#include <array>
#include <cstdint>
#include <cstring>
#include <memory>

#include "activity_page.hpp"
#include "aql_demand.hpp"
#include "doorbell_map.hpp"
#include "hsa_hooks.hpp"

namespace {

using amdqp::preload::AqlRing;
using amdqp::preload::doorbell_workgroups;
using amdqp::preload::record_doorbell_at;
using amdqp::preload::workgroups;

constexpr std::uint64_t kEpoch = std::uint64_t{1} << AMDQP_ACT_DEMAND_EPOCH_SHIFT;

std::uint16_t header(hsa_packet_type_t type) {
    return static_cast<std::uint16_t>((type << HSA_PACKET_HEADER_TYPE) |
                                      (1 << HSA_PACKET_HEADER_BARRIER));
}

// A ring of @N packets, aligned as the runtime aligns one.
template <std::size_t N>
struct Ring {
    alignas(64) std::array<hsa_kernel_dispatch_packet_t, N> packets{};

    AqlRing aql() const { return AqlRing::of(reinterpret_cast<std::uint64_t>(packets.data()), N); }
    // A kernel dispatch at AQL index @index (wrapped as the runtime does).
    void dispatch(std::uint64_t index, std::uint32_t gx, std::uint16_t wx, std::uint32_t gy = 1,
                  std::uint16_t wy = 1, std::uint32_t gz = 1, std::uint16_t wz = 1) {
        hsa_kernel_dispatch_packet_t& p = packets[index % N];
        p = hsa_kernel_dispatch_packet_t{};
        p.setup = 3;
        p.grid_size_x = gx;
        p.grid_size_y = gy;
        p.grid_size_z = gz;
        p.workgroup_size_x = wx;
        p.workgroup_size_y = wy;
        p.workgroup_size_z = wz;
        p.header = header(HSA_PACKET_TYPE_KERNEL_DISPATCH);
    }
    // A barrier-AND packet at @index; its bytes where a dispatch has its
    // sizes are made to look like a huge grid.
    void barrier(std::uint64_t index) {
        hsa_kernel_dispatch_packet_t& p = packets[index % N];
        std::memset(&p, 0xff, sizeof p);
        p.header = header(HSA_PACKET_TYPE_BARRIER_AND);
    }
};

std::uint32_t wg(std::uint32_t gx, std::uint16_t wx, std::uint32_t gy = 1, std::uint16_t wy = 1,
                 std::uint32_t gz = 1, std::uint16_t wz = 1) {
    const std::uint32_t grid[3] = {gx, gy, gz};
    const std::uint16_t size[3] = {wx, wy, wz};
    return workgroups(grid, size);
}

TEST(AqlDemand, WorkGroupsRoundUpInEveryDimension) {
    EXPECT_EQ(wg(1, 1), 1u);
    EXPECT_EQ(wg(256, 256), 1u);
    EXPECT_EQ(wg(257, 256), 2u);
    EXPECT_EQ(wg(1 << 20, 256), 4096u);
    EXPECT_EQ(wg(100, 3), 34u);  // not a power of two: divided
    EXPECT_EQ(wg(1024, 16, 1000, 16), 64u * 63u);
    EXPECT_EQ(wg(64, 8, 64, 8, 10, 4), 8u * 8u * 3u);
    EXPECT_EQ(wg(0, 64), 0u);  // an empty grid dispatches nothing
}

TEST(AqlDemand, HostileSizesSaturateOrCountNothing) {
    EXPECT_EQ(wg(UINT32_MAX, 1), UINT32_MAX);
    EXPECT_EQ(wg(UINT32_MAX, 1, UINT32_MAX, 1, UINT32_MAX, 1), UINT32_MAX);
    EXPECT_EQ(wg(UINT32_MAX, 1, 2, 1), UINT32_MAX);
    EXPECT_EQ(wg(UINT32_MAX, 0xffff, 0x10000, 1), UINT32_MAX);
    EXPECT_EQ(wg(UINT32_MAX, 1024), (std::uint64_t{UINT32_MAX} + 1023) / 1024);
    // A work-group size of 0 is malformed (no division by it).
    EXPECT_EQ(wg(64, 0), 0u);
    EXPECT_EQ(wg(64, 64, 64, 0), 0u);
    EXPECT_EQ(wg(64, 64, 1, 1, 64, 0), 0u);
}

TEST(AqlDemand, RingTakesOnlyAlignedPowerOfTwoRings) {
    Ring<8> r;
    const auto base = reinterpret_cast<std::uint64_t>(r.packets.data());
    EXPECT_FALSE(r.aql().empty());
    EXPECT_EQ(r.aql().packets(), 8u);
    EXPECT_EQ(AqlRing::from_word(r.aql().word()).packet(9), &r.packets[1]);
    EXPECT_TRUE(AqlRing::of(0, 8).empty());
    EXPECT_TRUE(AqlRing::of(base + 8, 8).empty());
    EXPECT_TRUE(AqlRing::of(base, 6).empty());
    EXPECT_TRUE(AqlRing::of(base, 0).empty());
    EXPECT_TRUE(AqlRing::of(base, std::uint64_t{1} << 32).empty());
    EXPECT_TRUE(AqlRing{}.empty());
}

TEST(AqlDemand, LargestDispatchOfTheDoorbellBarriersIgnored) {
    Ring<16> r;
    r.dispatch(3, 64 * 10, 64);
    r.barrier(4);
    r.dispatch(5, 64 * 30, 64);
    r.barrier(6);
    EXPECT_EQ(doorbell_workgroups(r.aql(), 3, 6), 30u);
    EXPECT_EQ(doorbell_workgroups(r.aql(), 6, 6), 0u) << "a barrier alone asks for nothing";
    EXPECT_EQ(doorbell_workgroups(r.aql(), 3, 4), 10u);
    EXPECT_EQ(doorbell_workgroups(AqlRing{}, 3, 6), 0u) << "no ring known";
}

TEST(AqlDemand, OtherPacketTypesCountNothing) {
    Ring<4> r;
    r.dispatch(0, 64 * 50, 64);
    for (auto type : {HSA_PACKET_TYPE_VENDOR_SPECIFIC, HSA_PACKET_TYPE_INVALID,
                      HSA_PACKET_TYPE_AGENT_DISPATCH, HSA_PACKET_TYPE_BARRIER_OR}) {
        r.packets[0].header = header(type);
        EXPECT_EQ(doorbell_workgroups(r.aql(), 0, 0), 0u) << type;
    }
}

TEST(AqlDemand, IndexesWrapAroundTheRing) {
    Ring<4> r;
    // AQL indexes grow forever; the ring holds index i at i % 4.
    r.dispatch(1021, 7, 1);
    r.dispatch(1022, 9, 1);
    r.dispatch(1023, 5, 1);
    r.dispatch(1024, 8, 1);  // slot 0
    r.dispatch(1025, 6, 1);  // slot 1, overwrote index 1021
    EXPECT_EQ(doorbell_workgroups(r.aql(), 1023, 1025), 8u);
    EXPECT_EQ(doorbell_workgroups(r.aql(), 1025, 1025), 6u);
    // More published than the ring holds: each slot read once.
    EXPECT_EQ(doorbell_workgroups(r.aql(), 0, 1025), 9u);
}

TEST(AqlDemand, ReadsOnlyTheLastPacketsOfALongDoorbell) {
    Ring<64> r;
    r.dispatch(0, 1000, 1);  // the big one, too early to be read
    for (std::uint64_t i = 1; i < 40; i++)
        r.dispatch(i, 2, 1);
    r.dispatch(40, 3, 1);
    EXPECT_EQ(doorbell_workgroups(r.aql(), 0, 40), 3u);
    r.dispatch(40 - AMDQP_ACT_DEMAND_MAX_PACKETS + 1, 500, 1);
    EXPECT_EQ(doorbell_workgroups(r.aql(), 0, 40), 500u);
    // Out of order (another thread's doorbell went first): the last only.
    EXPECT_EQ(doorbell_workgroups(r.aql(), 41, 40), 3u);
}

// record_doorbell on a slot of a real page (the header is found by masking
// the slot's address).
class RecordTest : public ::testing::Test {
  protected:
    amdqp_act_slot* slot() {
        amdqp::detail::SlotInit init;
        init.ring_va = reinterpret_cast<std::uint64_t>(ring.packets.data());
        const int i = writer.take_slot(init);
        EXPECT_GE(i, 0);
        return writer.slot(i);
    }
    amdqp::detail::ActivityWriter writer;
    Ring<16> ring;
};

TEST_F(RecordTest, DoorbellRecordsTheDecayingMaximum) {
    amdqp_act_slot* s = slot();
    const std::uint64_t t0 = 100 * kEpoch;
    ring.dispatch(0, 64 * 40, 64);
    record_doorbell_at(s, 0, ring.aql(), t0);
    EXPECT_EQ(s->demand_wgs, 40u);
    EXPECT_EQ(s->write_index, 1u);
    EXPECT_EQ(s->last_doorbell_ns, t0);

    // Smaller kernels in the same epoch leave the maximum.
    ring.dispatch(1, 64 * 3, 64);
    record_doorbell_at(s, 1, ring.aql(), t0 + kEpoch / 2);
    EXPECT_EQ(s->demand_wgs, 40u);
    // One boundary later it halved, and a barrier adds nothing.
    ring.barrier(2);
    record_doorbell_at(s, 2, ring.aql(), t0 + kEpoch);
    EXPECT_EQ(s->demand_wgs, 20u);
    // A bigger kernel raises it at once.
    ring.dispatch(3, 64 * 90, 64);
    record_doorbell_at(s, 3, ring.aql(), t0 + kEpoch + 1);
    EXPECT_EQ(s->demand_wgs, 90u);
    // Long quiet: nothing left of it but this doorbell's kernel.
    ring.dispatch(4, 5, 1);
    record_doorbell_at(s, 4, ring.aql(), t0 + 40 * kEpoch);
    EXPECT_EQ(s->demand_wgs, 5u);
    EXPECT_EQ(s->doorbells, 5u);
}

TEST_F(RecordTest, DoorbellOfSeveralPacketsTakesTheLargest) {
    amdqp_act_slot* s = slot();
    ring.dispatch(0, 4, 1);
    ring.barrier(1);
    ring.dispatch(2, 12, 1);
    ring.dispatch(3, 6, 1);
    record_doorbell_at(s, 3, ring.aql(), kEpoch);
    EXPECT_EQ(s->demand_wgs, 12u);
    EXPECT_EQ(s->write_index, 4u);
}

TEST_F(RecordTest, HostileDoorbellValuesReadNothingOutsideTheRing) {
    amdqp_act_slot* s = slot();
    ring.dispatch(5, 33, 1);
    // A negative value publishes nothing; the write index follows HSA's rule.
    record_doorbell_at(s, -1, ring.aql(), kEpoch);
    EXPECT_EQ(s->demand_wgs, 0u);
    // A huge one is still read through the ring's mask.
    record_doorbell_at(s, (std::int64_t{1} << 62) + 5, ring.aql(), kEpoch);
    EXPECT_EQ(s->demand_wgs, 33u);
    // No ring known: counted, no demand.
    amdqp_act_slot* other = slot();
    record_doorbell_at(other, 5, AqlRing{}, kEpoch);
    EXPECT_EQ(other->demand_wgs, 0u);
    EXPECT_EQ(other->doorbells, 1u);
}

TEST(AqlDemand, DoorbellMapKeepsTheRingWithTheSlot) {
    auto map = std::make_unique<amdqp::preload::DoorbellMap>();
    Ring<8> r;
    amdqp_act_slot slots[2];
    ASSERT_TRUE(map->insert(0x7f0000000040, &slots[0], r.aql()));
    ASSERT_TRUE(map->insert(0x7f0000000080, &slots[1]));
    auto t = map->find_target(0x7f0000000040);
    EXPECT_EQ(t.slot, &slots[0]);
    EXPECT_EQ(t.ring.word(), r.aql().word());
    t = map->find_target(0x7f0000000080);
    EXPECT_EQ(t.slot, &slots[1]);
    EXPECT_TRUE(t.ring.empty());
    EXPECT_EQ(map->find_target(0x7f00000000c0).slot, nullptr);
    // Re-inserting replaces both.
    ASSERT_TRUE(map->insert(0x7f0000000040, &slots[1]));
    t = map->find_target(0x7f0000000040);
    EXPECT_EQ(t.slot, &slots[1]);
    EXPECT_TRUE(t.ring.empty());
}

}  // namespace
