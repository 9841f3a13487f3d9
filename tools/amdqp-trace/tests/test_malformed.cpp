// Inputs that are not captures at all: every parser must refuse them with a
// message, never crash or hang.
#include <gtest/gtest.h>

#include <random>

#include "census.h"
#include "error.h"
#include "parser.h"
#include "test_util.h"

using namespace amdqp;

namespace {
const Format kAll[] = {Format::Ftrace, Format::Hqds,    Format::Mqds,
                       Format::HipLog, Format::Rocprof, Format::Workload};
}

TEST(Detect, FixturesByContent) {
    std::string why;
    auto det = [&](const char *f) {
        return detect_format(test::slurp(test::fixture(f)).substr(0, 65536), why);
    };
    EXPECT_EQ(det("debugfs-kfd-hqds-16streams.txt"), Format::Hqds);
    EXPECT_EQ(det("debugfs-kfd-hqds-idle.txt"), Format::Hqds);
    EXPECT_EQ(det("debugfs-kfd-mqds-16streams.txt"), Format::Mqds);
    EXPECT_EQ(det("hip-amd-log-level3-16streams.log"), Format::HipLog);
    EXPECT_EQ(det("rocprof-trace.json"), Format::Rocprof);
    EXPECT_EQ(det("dual-model-test3-standard.log"), Format::Workload);
    EXPECT_EQ(det("dual-model-test4-intensive.log"), Format::Workload);
    EXPECT_EQ(detect_format(" bash-1 [001] ..... 1.000001: amdqp_error: gpu_id=1\n", why),
              Format::Ftrace);
}

TEST(Detect, RejectsNonCaptures) {
    std::string why;
    EXPECT_EQ(detect_format("", why), Format::Unknown);
    EXPECT_EQ(why, "empty file");
    EXPECT_EQ(detect_format(std::string("\x7f"
                                        "ELF\0\0\1",
                                        7),
                            why),
              Format::Unknown);
    EXPECT_EQ(why, "binary data (NUL bytes), not a text capture");
    EXPECT_EQ(detect_format("hello world\nthis is a README\n", why), Format::Unknown);
    EXPECT_NE(why.find("not a recognised format"), std::string::npos);
}

TEST(Malformed, RandomGarbageNeverCrashes) {
    std::mt19937 rng(1234);
    int errors = 0;
    for (Format f : kAll)
        for (int i = 0; i < 200; ++i) {
            std::string g(1 + rng() % 600, '\0');
            for (auto &ch : g)
                ch = static_cast<char>(rng() % 7 == 0 ? '\n' : rng() % 256);
            Analysis a;
            try {
                parse_buffer(g, f, a);
            } catch (const ParseError &e) {
                EXPECT_FALSE(e.message().empty());
                ++errors;
            }
        }
    // Structured formats reject random bytes; the log formats skip foreign lines.
    EXPECT_GT(errors, 600);
}

TEST(Malformed, TruncatedFixturesEveryFewBytes) {
    // Cutting a real capture anywhere gives either a clean parse or a ParseError.
    for (auto [file, fmt] : {std::pair{"debugfs-kfd-mqds-16streams.txt", Format::Mqds},
                             std::pair{"debugfs-kfd-hqds-idle.txt", Format::Hqds},
                             std::pair{"rocprof-trace.json", Format::Rocprof},
                             std::pair{"hip-amd-log-level3-16streams.log", Format::HipLog}}) {
        std::string d = test::slurp(test::fixture(file)).substr(0, 40000);
        int ok = 0, bad = 0;
        for (size_t cut = 1; cut < d.size(); cut += 997) {
            Analysis a;
            try {
                parse_buffer(std::string_view(d).substr(0, cut), fmt, a);
                ++ok;
            } catch (const ParseError &) {
                ++bad;
            }
        }
        EXPECT_GT(ok + bad, 30) << file;
        if (fmt == Format::Rocprof) {
            EXPECT_EQ(ok, 0) << "a cut JSON document must never parse";
        }
    }
}

TEST(Malformed, HugeLineIsRefused) {
    std::string huge = "\n" + std::string(2u << 20, 'a') + "\n";
    for (Format f : {Format::Ftrace, Format::Hqds, Format::Mqds, Format::HipLog}) {
        test::Collect c;
        try {
            parse_buffer(huge, f, c);
            FAIL() << format_name(f);
        } catch (const ParseError &e) {
            EXPECT_EQ(e.line(), 2u);
            EXPECT_EQ(e.message(), "line longer than 1 MiB (not a text capture?)");
        }
    }
}

TEST(Malformed, EmptyInputs) {
    // Empty dumps are valid (no processes had queues); empty JSON is not.
    for (Format f : {Format::Ftrace, Format::Hqds, Format::Mqds, Format::HipLog}) {
        Analysis a;
        EXPECT_NO_THROW(parse_buffer("", f, a)) << format_name(f);
    }
    Analysis a;
    EXPECT_THROW(parse_buffer("  \n", Format::Rocprof, a), ParseError);
}
