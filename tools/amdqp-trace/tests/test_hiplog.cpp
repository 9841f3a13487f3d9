#include <gtest/gtest.h>

#include <map>

#include "census.h"
#include "error.h"
#include "test_util.h"

using namespace amdqp;
using amdqp::test::Collect;

TEST(HipLog, SixteenStreamsOnFourHardwareQueues) {
    Collect c;
    test::parse_fixture("hip-amd-log-level3-16streams.log", Format::HipLog, c);
    // 16 streams, but the runtime caps hardware queues at 4 per priority.
    int created = 0, deleted = 0;
    for (const auto &q : c.hipqs) {
        EXPECT_EQ(q.pid, 85406); // from the test program's "Process ID:" banner
        if (q.created) {
            ++created;
            EXPECT_EQ(q.size, 16384u);
            EXPECT_EQ(q.priority, 1);
        } else {
            ++deleted;
        }
    }
    EXPECT_EQ(created, 4);
    EXPECT_EQ(deleted, 4);
    EXPECT_EQ(c.hipqs[0].hwq, 0x7f3660c00000u);
    EXPECT_DOUBLE_EQ(c.hipqs[0].ts_us, 6306223714.0);
    // 96 kernels: 16 in the first round + 16 x 5; streams map round-robin: 24 each.
    ASSERT_EQ(c.dispatches.size(), 96u);
    std::map<std::string, int> per_queue;
    for (const auto &d : c.dispatches)
        ++per_queue[d.queue];
    EXPECT_EQ(per_queue, (std::map<std::string, int>{{"0x7f1649800000", 24},
                                                     {"0x7f1654200000", 24},
                                                     {"0x7f1654e00000", 24},
                                                     {"0x7f3660c00000", 24}}));
    EXPECT_EQ(c.kernels[0], "dummy_kernel(int*, int)");
    EXPECT_EQ(c.dispatches[0].gpu, "dev0");
}

TEST(HipLog, SubmissionRatesInAnalysis) {
    Analysis a;
    test::parse_fixture("hip-amd-log-level3-16streams.log", Format::HipLog, a);
    ASSERT_EQ(a.subs.size(), 4u);
    uint64_t total = 0;
    for (const auto &[k, s] : a.subs) {
        total += s.n;
        EXPECT_GT(s.last, s.first);
        EXPECT_LT(s.last - s.first, 3000.0); // all within ~2 ms of log time
    }
    EXPECT_EQ(total, 96u);
}

TEST(HipLog, PidTagAndMalformedLines) {
    Collect c;
    parse_buffer(":3:rocdevice.cpp :3048: 100 us: [pid:4242 tid:0x7f] Created SWq=0x1 to map on "
                 "HWq=0x7f0000001000 with size 1024 with priority 2, cooperative: 0\n",
                 Format::HipLog, c);
    ASSERT_EQ(c.hipqs.size(), 1u);
    EXPECT_EQ(c.hipqs[0].pid, 4242);
    EXPECT_EQ(c.hipqs[0].priority, 2);
    EXPECT_EQ(c.hipqs[0].size, 1024u);
    auto err = [&](const std::string &in) {
        try {
            parse_buffer(in, Format::HipLog, c);
        } catch (const ParseError &e) {
            return std::to_string(e.line()) + ":" + e.message();
        }
        return std::string("no error");
    };
    EXPECT_EQ(err("app output\n:3:rocdev"), "2:malformed HIP log line (no source location)");
    EXPECT_EQ(err(":3:x.cpp :12: 99 ms: hello\n"),
              "1:malformed HIP log line (no 'NNN us:' timestamp)");
    EXPECT_EQ(err(":3:x.cpp :zz: 99 us: hello\n"),
              "1:malformed HIP log line (bad source line number)");
    EXPECT_EQ(err("plain application output only\n"), "no error");
}
