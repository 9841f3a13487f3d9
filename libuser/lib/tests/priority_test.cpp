// SPDX-License-Identifier: MIT
#include <gtest/gtest.h>

#include <amdqp/amdqp.h>
#include <amdqp/amdqp.hpp>

namespace {

TEST(Priority, NamedLevels) {
    EXPECT_EQ(amdqp::parse_priority("high"), 12);
    EXPECT_EQ(amdqp::parse_priority("normal"), 7);
    EXPECT_EQ(amdqp::parse_priority("low"), 2);
    EXPECT_EQ(amdqp::parse_priority("HIGH"), 12);
    EXPECT_EQ(amdqp::parse_priority("Low"), 2);
}

TEST(Priority, Numbers) {
    for (int i = 0; i <= 15; i++)
        EXPECT_EQ(amdqp::parse_priority(std::to_string(i)), i);
    EXPECT_EQ(amdqp::parse_priority("07"), 7);
}

TEST(Priority, RejectsWhatIsNotAPriority) {
    for (const char* bad : {"", "16", "-1", "+3", " 3", "3 ", "1.5", "hi", "highest", "100", "x"})
        EXPECT_FALSE(amdqp::try_parse_priority(bad).has_value()) << "'" << bad << "'";
}

TEST(Priority, ErrorSaysWhatIsAccepted) {
    try {
        amdqp::parse_priority("urgent");
        FAIL() << "no exception";
    } catch (const amdqp::Error& e) {
        EXPECT_EQ(e.code(), amdqp::errc::invalid);
        const std::string msg = e.what();
        EXPECT_NE(msg.find("'urgent'"), std::string::npos) << msg;
        EXPECT_NE(msg.find("high"), std::string::npos) << msg;
        EXPECT_NE(msg.find("0..15"), std::string::npos) << msg;
    }
}

TEST(Priority, Names) {
    EXPECT_EQ(amdqp::priority_name(12), "high");
    EXPECT_EQ(amdqp::priority_name(7), "normal");
    EXPECT_EQ(amdqp::priority_name(2), "low");
    EXPECT_EQ(amdqp::priority_name(9), "9");
    for (int i = 0; i <= 15; i++)
        EXPECT_EQ(amdqp::parse_priority(amdqp::priority_name(i)), i);
}

TEST(Priority, CApi) {
    int p = -1;
    EXPECT_EQ(amdqp_parse_priority("normal", &p), AMDQP_OK);
    EXPECT_EQ(p, AMDQP_PRIO_NORMAL);
    EXPECT_EQ(amdqp_parse_priority("15", &p), AMDQP_OK);
    EXPECT_EQ(p, 15);
    EXPECT_EQ(amdqp_parse_priority("sixteen", &p), AMDQP_ERR_INVALID);
    EXPECT_NE(std::string(amdqp_last_error()).find("'sixteen'"), std::string::npos);
    EXPECT_EQ(amdqp_parse_priority(nullptr, &p), AMDQP_ERR_INVALID);
    EXPECT_STREQ(amdqp_priority_name(12), "high");
    EXPECT_STREQ(amdqp_priority_name(3), "3");
    EXPECT_EQ(amdqp_priority_name(16), nullptr);
    EXPECT_EQ(amdqp_priority_name(-1), nullptr);
}

}  // namespace
