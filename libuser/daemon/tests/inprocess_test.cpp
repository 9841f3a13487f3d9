// SPDX-License-Identifier: MIT
// The in-process controller's C API: start, refuse a second start and bad
// configurations with a message, stop releases. (Its control loop is the
// one ControllerTest covers.)
#include <amdqp/controller.h>
#include <gtest/gtest.h>
#include <sys/stat.h>

#include <fstream>
#include <string>

#include "activity_test_util.hpp"

namespace {

TEST(InProcess, StartsStopsAndRefusesTwice) {
    amdqp_test::TempDir dir;
    const std::string cfg = dir.path() + "/c.toml";
    std::ofstream(cfg) << "[daemon]\nruntime_dir = \"" << dir.path()
                       << "\"\ndevice = \"/nonexistent/amdqp\"\nmetrics = \"\"\n";
    char err[256] = "";
    ASSERT_EQ(amdqp_controller_start(cfg.c_str(), err, sizeof(err)), 0) << err;
    // Its socket is there: processes can register.
    struct stat st;
    EXPECT_EQ(::stat((dir.path() + "/amdqpd.sock").c_str(), &st), 0);
    EXPECT_TRUE(S_ISSOCK(st.st_mode));
    EXPECT_EQ(amdqp_controller_start(cfg.c_str(), err, sizeof(err)), -1);
    EXPECT_NE(std::string(err).find("already runs"), std::string::npos) << err;
    EXPECT_EQ(amdqp_controller_stop(), 0);
    EXPECT_EQ(amdqp_controller_stop(), -1);
}

TEST(InProcess, BadConfigurationIsAMessageNotACrash) {
    amdqp_test::TempDir dir;
    const std::string cfg = dir.path() + "/bad.toml";
    std::ofstream(cfg) << "[policy]\norder = \"never\"\n";
    char err[256] = "";
    EXPECT_EQ(amdqp_controller_start(cfg.c_str(), err, sizeof(err)), -1);
    EXPECT_NE(std::string(err).find("bad.toml:2: order must be"), std::string::npos) << err;
    EXPECT_EQ(amdqp_controller_start((dir.path() + "/none.toml").c_str(), nullptr, 0), -1);
}

}  // namespace
