// SPDX-License-Identifier: MIT
#include <gtest/gtest.h>

#include <atomic>
#include <memory>
#include <thread>
#include <vector>

#include "doorbell_map.hpp"

namespace {

using amdqp::preload::DoorbellMap;

// Signal handles are addresses of 64-byte aligned signal objects.
std::uint64_t handle(int i) {
    return 0x7f0000000000ull + static_cast<std::uint64_t>(i) * 64;
}

TEST(DoorbellMap, FindsWhatWasInsertedAndNothingElse) {
    auto map = std::make_unique<DoorbellMap>();
    amdqp_act_slot slots[3];
    EXPECT_EQ(map->find(handle(1)), nullptr);
    ASSERT_TRUE(map->insert(handle(1), &slots[0]));
    ASSERT_TRUE(map->insert(handle(2), &slots[1]));
    EXPECT_EQ(map->find(handle(1)), &slots[0]);
    EXPECT_EQ(map->find(handle(2)), &slots[1]);
    EXPECT_EQ(map->find(handle(3)), nullptr);
    EXPECT_EQ(map->find(0), nullptr);
    // Inserting again moves the handle to another slot.
    ASSERT_TRUE(map->insert(handle(1), &slots[2]));
    EXPECT_EQ(map->find(handle(1)), &slots[2]);
}

TEST(DoorbellMap, EraseLeavesOthersReachable) {
    auto map = std::make_unique<DoorbellMap>();
    std::vector<amdqp_act_slot> slots(100);
    for (int i = 0; i < 100; i++)
        ASSERT_TRUE(map->insert(handle(i), &slots[i]));
    for (int i = 0; i < 100; i += 2)
        map->erase(handle(i));
    for (int i = 0; i < 100; i++)
        EXPECT_EQ(map->find(handle(i)), i % 2 ? &slots[i] : nullptr) << i;
}

TEST(DoorbellMap, ChurnDoesNotFillTheTable) {
    // A long-running process creates and destroys queues for hours.
    auto map = std::make_unique<DoorbellMap>();
    amdqp_act_slot slot;
    for (int round = 0; round < 100000; round++) {
        ASSERT_TRUE(map->insert(handle(round), &slot)) << round;
        map->erase(handle(round));
    }
    for (int i = 0; i < 56; i++)
        ASSERT_TRUE(map->insert(handle(1000000 + i), &slot));
    EXPECT_EQ(map->find(handle(1000000 + 55)), &slot);
    // Tombstones everywhere, yet a miss (most signal stores) stays short.
    EXPECT_LT(map->max_probe(), 16u);
}

TEST(DoorbellMap, RefusesWhenFullInsteadOfLooping) {
    auto map = std::make_unique<DoorbellMap>();
    std::vector<amdqp_act_slot> slots(DoorbellMap::capacity);
    for (std::size_t i = 0; i < DoorbellMap::capacity; i++)
        ASSERT_TRUE(map->insert(handle(static_cast<int>(i)), &slots[i]));
    EXPECT_FALSE(map->insert(handle(100000), &slots[0]));
    EXPECT_EQ(map->find(handle(100000)), nullptr);
    for (std::size_t i = 0; i < DoorbellMap::capacity; i++)
        ASSERT_EQ(map->find(handle(static_cast<int>(i))), &slots[i]);
}

TEST(DoorbellMap, ReadersNeverSeeATornEntry) {
    auto map = std::make_unique<DoorbellMap>();
    std::vector<amdqp_act_slot> slots(8);
    std::atomic<bool> stop{false};
    std::atomic<long> bad{0};
    std::thread reader([&] {
        while (!stop.load()) {
            for (int i = 0; i < 8; i++) {
                amdqp_act_slot* s = map->find(handle(i));
                if (s && s != &slots[i])
                    bad++;
            }
        }
    });
    for (int round = 0; round < 20000; round++) {
        int i = round % 8;
        map->insert(handle(i), &slots[i]);
        map->erase(handle((round + 3) % 8));
    }
    stop = true;
    reader.join();
    EXPECT_EQ(bad.load(), 0);
}

}  // namespace
