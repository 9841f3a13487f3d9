// SPDX-License-Identifier: MIT
//
// The layer touches a runtime's table only where its version and size say
// the entry is: these tables imitate the runtimes it must get right, and
// the ones it must leave alone.
#include <gtest/gtest.h>

#include <cstring>
#include <vector>

#include "fake_hsa_runtime.hpp"
#include "hsa_table.hpp"

namespace {

using amdqp::preload::locate_entries;
using amdqp::preload::TableEntries;
using amdqp_test::Runtime;

TEST(HsaTable, Debian523) {
    Runtime rt(1, 1, 1, 48, 37);
    TableEntries e;
    std::string why;
    ASSERT_TRUE(locate_entries(&rt.root, &e, &why)) << why;
    EXPECT_EQ(e.core, &rt.core);
    EXPECT_EQ(e.queue_create, &rt.core.hsa_queue_create_fn);
    EXPECT_EQ(e.queue_destroy, &rt.core.hsa_queue_destroy_fn);
    EXPECT_EQ(e.signal_store_relaxed, &rt.core.hsa_signal_store_relaxed_fn);
    EXPECT_EQ(e.signal_store_screlease, &rt.core.hsa_signal_store_screlease_fn);
    EXPECT_EQ(reinterpret_cast<void**>(e.amd_queue_set_priority), rt.amd_entry(37));
}

TEST(HsaTable, Rocm55to57MovedSetPriority) {
    Runtime rt(1, 1, 1, 67, 39);
    TableEntries e;
    std::string why;
    ASSERT_TRUE(locate_entries(&rt.root, &e, &why)) << why;
    EXPECT_EQ(reinterpret_cast<void**>(e.amd_queue_set_priority), rt.amd_entry(39));
}

TEST(HsaTable, Rocm6And7) {
    for (std::uint32_t root_major : {2u, 3u}) {
        Runtime rt(root_major, 2, 2, 88, 39);
        TableEntries e;
        std::string why;
        ASSERT_TRUE(locate_entries(&rt.root, &e, &why)) << why;
        EXPECT_EQ(e.queue_create, &rt.core.hsa_queue_create_fn);
        EXPECT_EQ(reinterpret_cast<void**>(e.amd_queue_set_priority), rt.amd_entry(39));
    }
}

TEST(HsaTable, UnknownAmdExtLayoutIsSkippedButCoreIsUsed) {
    Runtime rt(1, 1, 1, 52, 38);  // a short-lived development layout
    TableEntries e;
    std::string why;
    ASSERT_TRUE(locate_entries(&rt.root, &e, &why)) << why;
    EXPECT_EQ(e.amd_queue_set_priority, nullptr);
    Runtime newer(3, 2, 3, 90, 39);  // an AMD table major this code does not know
    ASSERT_TRUE(locate_entries(&newer.root, &e, &why)) << why;
    EXPECT_EQ(e.amd_queue_set_priority, nullptr);
}

TEST(HsaTable, ForeignOrShortTablesAreRefused) {
    TableEntries e;
    std::string why;
    EXPECT_FALSE(locate_entries(nullptr, &e, &why));

    Runtime future(4, 2, 2, 88, 39);
    EXPECT_FALSE(locate_entries(&future.root, &e, &why));
    EXPECT_NE(why.find("major 4"), std::string::npos) << why;

    Runtime future_core(3, 3, 2, 88, 39);
    EXPECT_FALSE(locate_entries(&future_core.root, &e, &why));

    Runtime short_core(1, 1, 1, 48, 37);
    short_core.core.version.minor_id = 16 + 8 * 42;  // ends before signal_store_screlease
    EXPECT_FALSE(locate_entries(&short_core.root, &e, &why));
    EXPECT_EQ(e.queue_create, nullptr);

    Runtime short_root(1, 1, 1, 48, 37);
    short_root.root.version.minor_id = 16;  // no room for core_
    EXPECT_FALSE(locate_entries(&short_root.root, &e, &why));

    Runtime empty_entry(1, 1, 1, 48, 37);
    empty_entry.core.hsa_signal_store_relaxed_fn = nullptr;
    EXPECT_FALSE(locate_entries(&empty_entry.root, &e, &why));
}

TEST(HsaTable, RootWithoutAmdExtRoomStillGivesCore) {
    Runtime rt(1, 1, 1, 48, 37);
    rt.root.version.minor_id = 16 + 8;  // core_ only
    TableEntries e;
    std::string why;
    ASSERT_TRUE(locate_entries(&rt.root, &e, &why)) << why;
    EXPECT_EQ(e.amd_queue_set_priority, nullptr);
}

}  // namespace
