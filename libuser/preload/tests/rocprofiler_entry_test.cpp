// SPDX-License-Identifier: MIT
//
// libamdqp-rocprofiler.so's entry point, driven the way rocprofiler-sdk
// would drive it: this program plays rocprofiler-sdk (it exports
// rocprofiler_at_intercept_table_registration) and a runtime (a fake
// HsaApiTable). rocprofiler-sdk itself is not available here; this checks
// the layer's side of the documented protocol only.
#include <gtest/gtest.h>

#include <dlfcn.h>
#include <unistd.h>

#include <cstdint>
#include <cstdlib>
#include <string>

#include <amdqp/activity.hpp>

#include "../../lib/tests/activity_test_util.hpp"
#include "fake_hsa_runtime.hpp"

namespace {

using TableCallback = void (*)(int, std::uint64_t, std::uint64_t, void**, std::uint64_t, void*);

TableCallback g_callback = nullptr;
int g_libs = 0;
int g_registrations = 0;

struct ClientId {
    const char* name;
    const std::uint32_t handle;
};
using ConfigureFn = void* (*)(std::uint32_t, const char*, std::uint32_t, ClientId*);

}  // namespace

// What rocprofiler-sdk offers tools (rocprofiler-sdk/intercept_table.h).
extern "C" __attribute__((visibility("default"))) int rocprofiler_at_intercept_table_registration(
    TableCallback callback, int libs, void* data) {
    (void)data;
    g_callback = callback;
    g_libs = libs;
    g_registrations++;
    return 0;
}

namespace {

class RocprofilerEntry : public ::testing::Test {
  protected:
    static void SetUpTestSuite() {
        static amdqp_test::TempDir dir;
        pages = &dir;
        ::setenv("AMDQP_RUNTIME_DIR", dir.path().c_str(), 1);
        ::setenv("AMDQP_DEVICE", "/nonexistent/amdqp", 1);
        ::setenv("AMDQP_QUIET", "1", 1);
        ::setenv("AMDQP_PRIORITY", "high", 1);
        handle = dlopen(AMDQP_TEST_ROCPROFILER_LIB, RTLD_NOW | RTLD_LOCAL);
        ASSERT_NE(handle, nullptr) << dlerror();
        configure = reinterpret_cast<ConfigureFn>(dlsym(handle, "rocprofiler_configure"));
        ASSERT_NE(configure, nullptr);
    }

    static inline void* handle = nullptr;
    static inline ConfigureFn configure = nullptr;
    static inline amdqp_test::TempDir* pages = nullptr;
};

TEST_F(RocprofilerEntry, AsksForTheHsaTableAndInstallsOnce) {
    ClientId id{nullptr, 0};
    EXPECT_EQ(configure(10000, "rocprofiler-sdk stand-in", 0, &id), nullptr);
    ASSERT_NE(id.name, nullptr);
    EXPECT_EQ(std::string(id.name), "amdqp");
    EXPECT_EQ(g_registrations, 1);
    EXPECT_EQ(g_libs, 1);  // ROCPROFILER_HSA_TABLE only
    ASSERT_NE(g_callback, nullptr);

    amdqp_test::Runtime rt(3, 2, 2, 88, 39);  // a ROCm 7 layout
    void* tables[] = {&rt.root};
    g_callback(2, 0, 0, tables, 1, nullptr);  // the HIP table: not for us
    EXPECT_EQ(rt.core.hsa_queue_create_fn, &amdqp_test::fake_create);

    g_callback(1, 70000, 0, tables, 1, nullptr);
    auto hooked_create = rt.core.hsa_queue_create_fn;
    EXPECT_NE(hooked_create, &amdqp_test::fake_create);
    EXPECT_NE(rt.core.hsa_signal_store_relaxed_fn, &amdqp_test::fake_store);

    // A second registration of the same runtime does not wrap twice.
    configure(10000, "again", 1, &id);
    g_callback(1, 70000, 0, tables, 1, nullptr);
    EXPECT_EQ(rt.core.hsa_queue_create_fn, hooked_create);

    // Calls through the table reach the runtime and are seen on the way.
    hsa_queue_t* q = nullptr;
    ASSERT_EQ(rt.core.hsa_queue_create_fn(hsa_agent_t{1}, 256, HSA_QUEUE_TYPE_SINGLE, nullptr,
                                          nullptr, 0, 0, &q),
              HSA_STATUS_SUCCESS);
    ASSERT_EQ(q, amdqp_test::g_fake_queue.hsa());
    auto page = amdqp::activity::Page::open(getpid(), amdqp::activity::Page::Access::read);
    auto snap = page.snapshot();
    EXPECT_TRUE(snap.header.flags & AMDQP_ACT_F_PRELOAD);
    ASSERT_EQ(snap.slots.size(), 1u);
    EXPECT_EQ(snap.slots[0].ring_va,
              reinterpret_cast<std::uint64_t>(amdqp_test::g_fake_queue.ring));
    EXPECT_EQ(snap.slots[0].priority, 12u);

    // Packet 9, a dispatch of 10 work groups, published by the doorbell.
    hsa_kernel_dispatch_packet_t& p = amdqp_test::g_fake_queue.ring[9];
    p.grid_size_x = 640;
    p.grid_size_y = p.grid_size_z = 1;
    p.workgroup_size_x = 64;
    p.workgroup_size_y = p.workgroup_size_z = 1;
    p.header = HSA_PACKET_TYPE_KERNEL_DISPATCH << HSA_PACKET_HEADER_TYPE;
    int stores = amdqp_test::g_fake_stores;
    rt.core.hsa_signal_store_relaxed_fn(hsa_signal_t{0xabc0}, 9);
    rt.core.hsa_signal_store_screlease_fn(hsa_signal_t{0xdef0}, 1);  // not a doorbell
    EXPECT_EQ(amdqp_test::g_fake_stores, stores + 2);
    snap = page.snapshot();
    EXPECT_EQ(snap.slots[0].doorbells, 1u);
    EXPECT_EQ(snap.slots[0].write_index, 10u);
    EXPECT_EQ(snap.slots[0].demand_wgs, 10u);

    EXPECT_EQ(rt.core.hsa_queue_destroy_fn(q), HSA_STATUS_SUCCESS);
    EXPECT_EQ(amdqp_test::g_fake_destroys, 1);
    EXPECT_TRUE(page.snapshot().slots.empty());
}

TEST_F(RocprofilerEntry, ForeignTableIsLeftAlone) {
    ClientId id{nullptr, 0};
    configure(10000, "rocprofiler-sdk stand-in", 0, &id);
    ASSERT_NE(g_callback, nullptr);
    amdqp_test::Runtime future(4, 3, 3, 120, 39);  // majors this layer does not know
    void* tables[] = {&future.root};
    g_callback(1, 80000, 0, tables, 1, nullptr);
    EXPECT_EQ(future.core.hsa_queue_create_fn, &amdqp_test::fake_create);
    EXPECT_EQ(future.core.hsa_signal_store_relaxed_fn, &amdqp_test::fake_store);
    EXPECT_EQ(*future.amd_entry(39), reinterpret_cast<void*>(&amdqp_test::fake_set_priority));
}

}  // namespace
