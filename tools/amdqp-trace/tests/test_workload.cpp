#include <gtest/gtest.h>

#include "test_util.h"

using namespace amdqp;
using amdqp::test::Collect;

TEST(Workload, StandardRun) {
    Collect c;
    test::parse_fixture("dual-model-test3-standard.log", Format::Workload, c);
    ASSERT_EQ(c.workloads.size(), 2u);
    const auto &b = c.workloads[0];
    EXPECT_EQ(b.scenario, "baseline");
    EXPECT_EQ(b.high_model, "ResNet-18");
    EXPECT_EQ(b.low_model, "ResNet-50");
    EXPECT_DOUBLE_EQ(b.high_rate, 9.99);
    EXPECT_DOUBLE_EQ(b.high_p50_ms, 2.25);
    EXPECT_DOUBLE_EQ(b.high_p99_ms, 2.65);
    EXPECT_DOUBLE_EQ(b.low_iter_s, 166.46);
    EXPECT_DOUBLE_EQ(b.low_img_s, 1331.7);
    // The XSched run crashed (miopenStatusUnknownError) although the log says PASS.
    EXPECT_EQ(c.workloads[1].scenario, "xsched (error)");
    EXPECT_DOUBLE_EQ(c.workloads[1].high_p99_ms, 0.0);
}

TEST(Workload, IntensiveRun) {
    Collect c;
    test::parse_fixture("dual-model-test4-intensive.log", Format::Workload, c);
    ASSERT_EQ(c.workloads.size(), 2u);
    const auto &b = c.workloads[0];
    EXPECT_EQ(b.scenario, "baseline");
    EXPECT_DOUBLE_EQ(b.high_rate, 19.98);
    EXPECT_DOUBLE_EQ(b.high_p50_ms, 7.55);
    EXPECT_DOUBLE_EQ(b.high_p99_ms, 19.62);
    EXPECT_EQ(b.low_batch, 1024);
    EXPECT_DOUBLE_EQ(b.low_iter_s, 1.97);
    EXPECT_DOUBLE_EQ(b.low_img_s, 2015.7);
    EXPECT_EQ(c.workloads[1].scenario, "xsched (error)");
}
