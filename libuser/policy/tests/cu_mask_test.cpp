// SPDX-License-Identifier: MIT
#include "amdqp/policy/cu_mask.hpp"

#include <gtest/gtest.h>

namespace amdqp::policy {
namespace {

using W = std::vector<std::uint32_t>;

// Documentation/ioctl.rst's example: an MI308X partition, 4 XCCs of 20
// CUs, the lower queues on CUs 4-19 of each.
TEST(CuMask, Mi308xPartition) {
    const CuGeometry mi308x{4, 20};
    EXPECT_EQ(kept_cus(0.8, mi308x), 16u);
    EXPECT_EQ(confine_mask(0.8, mi308x), (W{0xffff0, 0xffff0, 0xffff0, 0xffff0}));
    EXPECT_EQ(confine_mask(0.75, mi308x), W(4, 0xfffe0));  // CUs 5-19
}

// An MI300X in SPX mode, 8 XCCs of 38 CUs: two words per XCC.
TEST(CuMask, TwoWordsPerXcc) {
    const auto m = confine_mask(0.5, CuGeometry{8, 38});
    ASSERT_EQ(m.size(), 16u);
    for (std::size_t x = 0; x < 8; ++x) {
        EXPECT_EQ(m[2 * x], 0xfff80000u) << x;  // CUs 19-31
        EXPECT_EQ(m[2 * x + 1], 0x3fu) << x;    // CUs 32-37
    }
}

TEST(CuMask, RoundsDownForTheHighWork) {
    EXPECT_EQ(kept_cus(0.75, CuGeometry{1, 10}), 7u);
    EXPECT_EQ(kept_cus(0.7, CuGeometry{1, 10}), 7u);  // 0.7 x 10 is not 6.99...
}

TEST(CuMask, EveryXccKeepsACuForEachSide) {
    const CuGeometry g{4, 20};
    EXPECT_EQ(kept_cus(0.01, g), 1u);
    EXPECT_EQ(confine_mask(0.01, g), W(4, 0x80000));  // CU 19
    EXPECT_EQ(kept_cus(0.0, g), 1u);
    EXPECT_EQ(kept_cus(0.99, g), 19u);
    EXPECT_EQ(kept_cus(1.0, g), 19u);
    EXPECT_EQ(confine_mask(0.99, g), W(4, 0xffffe));
}

TEST(CuMask, GeometryThatCannotBeConfined) {
    EXPECT_TRUE(confine_mask(0.5, CuGeometry{4, 0}).empty());  // INFO's cu_per_xcc 0
    EXPECT_TRUE(confine_mask(0.5, CuGeometry{4, 1}).empty());
    EXPECT_TRUE(confine_mask(0.5, CuGeometry{0, 20}).empty());
    EXPECT_EQ(kept_cus(0.5, CuGeometry{2, 1}), 0u);
}

}  // namespace
}  // namespace amdqp::policy
