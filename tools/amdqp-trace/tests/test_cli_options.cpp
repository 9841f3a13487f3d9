// Issue 12 item 10: the command line (CLI11): help per command, --version, hex
// values with 0x, --keep-going warnings capped over all files.
#include <gtest/gtest.h>

#include <string>

#include "test_util.h"

using namespace amdqp::test;

namespace {
int count(const std::string &s, const std::string &what) {
    int n = 0;
    for (size_t p = 0; (p = s.find(what, p)) != std::string::npos; p += what.size())
        ++n;
    return n;
}
} // namespace

TEST(CliOptions, EachCommandHasItsOwnHelp) {
    ShellResult c = shell(bin() + " census --help");
    ShellResult t = shell(bin() + " timeline --help");
    ShellResult r = shell(bin() + " report --help");
    for (const auto *h : {&c, &t, &r})
        EXPECT_EQ(h->rc, 0) << h->out;
    EXPECT_NE(c.out.find("--json"), std::string::npos) << c.out;
    EXPECT_EQ(c.out.find("--perfetto"), std::string::npos) << c.out;
    EXPECT_NE(t.out.find("--perfetto"), std::string::npos) << t.out;
    EXPECT_NE(t.out.find("--max-size"), std::string::npos);
    EXPECT_EQ(t.out.find("--json"), std::string::npos);
    EXPECT_NE(r.out.find("runlist updates"), std::string::npos) << r.out;
    EXPECT_NE(c.out, r.out);
}

TEST(CliOptions, Version) {
    std::string version = slurp(std::string(AMDQP_TRACE_SOURCE_DIR) + "/../../VERSION");
    version = version.substr(0, version.find('\n'));
    ASSERT_FALSE(version.empty());
    ShellResult v = shell(bin() + " --version");
    EXPECT_EQ(v.rc, 0);
    EXPECT_EQ(v.out, "amdqp-trace " + version + "\n");
}

TEST(CliOptions, HexValuesHave0x) {
    // P0Q3 of f7bc: rptr == wptr == 0x10 dwords (drained 4 KiB ring).
    ShellResult r = shell(bin() + " report " + fixture("debugfs-kfd-hqds-16streams.txt"));
    ASSERT_EQ(r.rc, 0) << r.out;
    EXPECT_NE(r.out.find("       0x10       0x10"), std::string::npos) << r.out;
    for (const auto &l : lines_of(r.out))
        if (l.rfind("  f7bc ", 0) == 0) {
            // rptr, wptr, doorbell: the last three columns
            auto cols = lines_of(replace_all(l, " ", "\n"));
            std::vector<std::string> v;
            for (auto &c : cols)
                if (!c.empty())
                    v.push_back(c);
            if (v.size() != 12)
                continue; // not a row of the decoded HQD table
            for (size_t i = v.size() - 3; i < v.size(); ++i)
                EXPECT_EQ(v[i].rfind("0x", 0), 0u) << l;
        }
}

TEST(CliOptions, KeepGoingWarningsAreCappedInTotal) {
    TempDir d;
    std::string bad = "# tracer: nop\n";
    for (int i = 0; i < 8; ++i)
        bad += "not a trace line " + std::to_string(i) + "\n";
    bad += "  bash-1 [001] ..... 1.000001: amdqp_error: gpu_id=63420 what=x error=-5\n";
    std::string a = d.write("a.txt", bad), b = d.write("b.txt", bad);
    ShellResult r = shell(bin() + " report --keep-going " + a + " " + b);
    ASSERT_EQ(r.rc, 0) << r.out;
    EXPECT_EQ(count(r.out, "warning: " + d.path("")), 10) << r.out;
    EXPECT_NE(r.out.find("6 more malformed lines skipped, not shown"), std::string::npos) << r.out;
    // The report still counts all of them.
    EXPECT_EQ(count(r.out, "(8 bad lines skipped)"), 2) << r.out;
}
