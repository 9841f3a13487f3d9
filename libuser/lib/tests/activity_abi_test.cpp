// SPDX-License-Identifier: MIT
//
// The activity page is an ABI between processes built at different times:
// its layout is pinned here, field by field. A change that moves anything
// fails to compile.
#include <gtest/gtest.h>

#include <cstddef>
#include <cstring>

#include <amdqp/activity.h>

namespace {

#define AT(type, field, offset) \
    static_assert(offsetof(type, field) == (offset), #type "." #field " moved")

AT(amdqp_act_slot, state, 0);
AT(amdqp_act_slot, gpu_id, 4);
AT(amdqp_act_slot, priority, 8);
AT(amdqp_act_slot, mechanism, 12);
AT(amdqp_act_slot, ring_va, 16);
AT(amdqp_act_slot, write_index, 24);
AT(amdqp_act_slot, doorbells, 32);
AT(amdqp_act_slot, last_doorbell_ns, 40);
AT(amdqp_act_slot, read_index_va, 48);
AT(amdqp_act_slot, queue_id, 56);
AT(amdqp_act_slot, demand_wgs, 60);
static_assert(sizeof(amdqp_act_slot) == 64);

AT(amdqp_act_header, magic, 0);
AT(amdqp_act_header, version, 4);
AT(amdqp_act_header, version_minor, 8);
AT(amdqp_act_header, size, 12);
AT(amdqp_act_header, slot_size, 16);
AT(amdqp_act_header, max_slots, 20);
AT(amdqp_act_header, pid, 24);
AT(amdqp_act_header, flags, 28);
AT(amdqp_act_header, start_time, 32);
AT(amdqp_act_header, priority, 40);
AT(amdqp_act_header, num_slots, 44);
AT(amdqp_act_header, hint_begin, 48);
AT(amdqp_act_header, hint_end, 56);
AT(amdqp_act_header, hint_last_ns, 64);
AT(amdqp_act_header, coop_seq, 72);
AT(amdqp_act_header, coop_suspend, 76);
AT(amdqp_act_header, coop_state, 80);
AT(amdqp_act_header, coop_ack_seq, 84);
AT(amdqp_act_header, coop_error, 88);
AT(amdqp_act_header, pad, 92);
AT(amdqp_act_header, coop_updates, 96);
AT(amdqp_act_header, group, 104);
AT(amdqp_act_header, coop_lease_ns, 136);  // minor 1: was reserved[0]
AT(amdqp_act_header, coop_expired, 144);   // minor 1: was reserved[1]
AT(amdqp_act_header, ctl_flags, 152);      // minor 2: was reserved[2]
AT(amdqp_act_header, ctl_hold_us, 156);
AT(amdqp_act_header, busy_seq, 160);  // minor 2: was reserved[3]
AT(amdqp_act_header, busy_ack, 164);
AT(amdqp_act_header, holds, 168);          // minor 2: was reserved[4]
AT(amdqp_act_header, hold_timeouts, 176);  // minor 2: was reserved[5]
AT(amdqp_act_header, ctl_alive_ns, 184);   // minor 2: was reserved[6]
AT(amdqp_act_header, untracked, 192);      // minor 3: was reserved[0]
AT(amdqp_act_header, reserved, 200);
static_assert(sizeof(amdqp_act_header) == 512);

AT(amdqp_act_page, hdr, 0);
AT(amdqp_act_page, slots, 512);
static_assert(sizeof(amdqp_act_page) == AMDQP_ACT_PAGE_SIZE);
static_assert(sizeof(amdqp_act_header) + AMDQP_ACT_MAX_SLOTS * sizeof(amdqp_act_slot) ==
              AMDQP_ACT_PAGE_SIZE);

// Every 64-bit field is naturally aligned, so one store writes it whole and
// a futex can wait on the 32-bit sequence numbers.
static_assert(offsetof(amdqp_act_header, start_time) % 8 == 0);
static_assert(offsetof(amdqp_act_header, coop_updates) % 8 == 0);
static_assert(offsetof(amdqp_act_header, coop_lease_ns) % 8 == 0);
static_assert(offsetof(amdqp_act_header, coop_expired) % 8 == 0);
static_assert(offsetof(amdqp_act_header, coop_seq) % 4 == 0);
static_assert(offsetof(amdqp_act_header, busy_ack) % 4 == 0);
static_assert(offsetof(amdqp_act_header, holds) % 8 == 0);
static_assert(alignof(amdqp_act_page) == 8);

#undef AT

TEST(ActivityAbi, ConstantsThatReadersDependOn) {
    // "QTCA" read as little-endian bytes: a hexdump of a page starts with it.
    const unsigned char bytes[4] = {'Q', 'T', 'C', 'A'};
    std::uint32_t magic;
    std::memcpy(&magic, bytes, 4);
    EXPECT_EQ(magic, AMDQP_ACT_MAGIC);
    EXPECT_EQ(AMDQP_ACT_VERSION, 1u);
    EXPECT_EQ(AMDQP_ACT_VERSION_MINOR,
              4u);  // the lease, the wake/hold channel, memfd pages, demand
    EXPECT_STREQ(AMDQP_ACT_MEMFD_NAME, "amdqp-act");
    EXPECT_STREQ(AMDQP_ACT_MEMFD_LINK, "/memfd:amdqp-act (deleted)");
    EXPECT_EQ(AMDQP_ACT_PAGE_SIZE, 65536u);
    EXPECT_EQ(AMDQP_ACT_MAX_SLOTS, 1016u);
    EXPECT_STREQ(AMDQP_DAEMON_DIR, "/run/amdqpd");
    EXPECT_STREQ(AMDQP_DAEMON_SOCKET, "amdqpd.sock");
    EXPECT_EQ(AMDQP_ACT_SLOT_FREE, 0u);  // a zero-filled page has no live slot
    EXPECT_EQ(AMDQP_ACT_COOP_RUNNING, 0u);
    EXPECT_EQ(AMDQP_ACT_MECH_NONE, 0u);
}

TEST(ActivityAbi, DemandHalvesAtEveryEpochBoundary) {
    constexpr std::uint64_t epoch = 1ull << AMDQP_ACT_DEMAND_EPOCH_SHIFT;
    EXPECT_EQ(epoch, 67108864u);  // ~67 ms
    EXPECT_EQ(amdqp_act_demand_at(80, 3 * epoch, 3 * epoch + epoch - 1), 80u);
    // A boundary crossed one ns later halves, however short the gap.
    EXPECT_EQ(amdqp_act_demand_at(80, 4 * epoch - 1, 4 * epoch), 40u);
    EXPECT_EQ(amdqp_act_demand_at(80, 3 * epoch, 6 * epoch), 10u);
    EXPECT_EQ(amdqp_act_demand_at(UINT32_MAX, 0, 31 * epoch), 1u);
    EXPECT_EQ(amdqp_act_demand_at(UINT32_MAX, 0, 32 * epoch), 0u);
    EXPECT_EQ(amdqp_act_demand_at(UINT32_MAX, 0, UINT64_MAX), 0u);
    // A clock behind the record (another reader's, a hostile stamp) keeps it.
    EXPECT_EQ(amdqp_act_demand_at(80, 9 * epoch, epoch), 80u);
}

}  // namespace
