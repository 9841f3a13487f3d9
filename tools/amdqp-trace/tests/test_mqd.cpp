#include <gtest/gtest.h>

#include <map>

#include "census.h"
#include "error.h"
#include "test_util.h"

using namespace amdqp;
using amdqp::test::Collect;

TEST(Mqd, SixteenStreamsProcess) {
    Collect c;
    test::parse_fixture("debugfs-kfd-mqds-16streams.txt", Format::Mqds, c);
    // One process, 5 compute queues on f7bc, each dumped as 4 MQDs (one per XCC).
    ASSERT_EQ(c.mqds.size(), 20u);
    std::map<uint32_t, int> per_queue;
    for (const auto &m : c.mqds) {
        EXPECT_EQ(m.pid, 94314);
        EXPECT_EQ(m.pasid, 94314u);
        EXPECT_EQ(m.gpu_id, "f7bc");
        EXPECT_EQ(m.kind, "Compute");
        EXPECT_TRUE(m.has_regs);
        EXPECT_TRUE(m.regs.active);
        EXPECT_EQ(m.regs.queue_priority, 7u);
        ++per_queue[m.queue_ordinal];
    }
    EXPECT_EQ(per_queue.size(), 5u);
    for (const auto &[q, n] : per_queue)
        EXPECT_EQ(n, 4) << q;
    // MQD dword 128 (offset 0x200) of queue 0 / XCC 0 is the HQD's CP_MQD_BASE_ADDR.
    EXPECT_EQ(c.mqds[0].regs.mqd_base, 0x17ba000u);
    EXPECT_EQ(c.mqds[0].regs.ring_base, 0x7f41b5200000u);
    EXPECT_EQ(c.mqds[0].regs.ring_size, 1u << 20);
}

TEST(Mqd, JoinsWithHqdsByMqdAddress) {
    Collect m, h;
    test::parse_fixture("debugfs-kfd-mqds-16streams.txt", Format::Mqds, m);
    test::parse_fixture("debugfs-kfd-hqds-16streams.txt", Format::Hqds, h);
    // Every MQD of the process is loaded in exactly one active HQD of f7bc, on
    // the XCC whose ordinal matches, at the same ring address.
    for (const auto &q : m.mqds) {
        int found = 0;
        for (const auto &hq : h.hqds)
            if (hq.regs.active && hq.regs.mqd_base == q.regs.mqd_base) {
                ++found;
                EXPECT_EQ(hq.gpu_id, "f7bc");
                EXPECT_EQ(hq.xcc, q.xcc_ordinal);
                EXPECT_EQ(hq.regs.ring_base, q.regs.ring_base);
            }
        EXPECT_EQ(found, 1) << std::hex << q.regs.mqd_base;
    }
}

TEST(Mqd, CensusCountsQueuesNotMqds) {
    Analysis a;
    test::parse_fixture("debugfs-kfd-mqds-16streams.txt", Format::Mqds, a);
    ASSERT_EQ(a.mqds.size(), 1u);
    const auto &procs = a.mqds[0].procs;
    ASSERT_EQ(procs.size(), 1u);
    const auto &p = procs.begin()->second;
    EXPECT_EQ(procs.begin()->first.first, 94314);
    EXPECT_EQ(p.queues.size(), 5u);
    for (const auto &[o, q] : p.queues) {
        EXPECT_EQ(q.mqds, 4u);
        EXPECT_EQ(q.active_mqds, 4u);
    }
}

TEST(Mqd, MalformedInput) {
    Collect c;
    auto err = [&](const std::string &in) {
        try {
            parse_buffer(in, Format::Mqds, c);
        } catch (const ParseError &e) {
            return std::to_string(e.line()) + ":" + e.message();
        }
        return std::string("no error");
    };
    EXPECT_EQ(err("  Compute queue on device f7bc\n"),
              "1:queue line before any 'Process N PASID M:' line");
    EXPECT_EQ(err("Process x PASID 1:\n"),
              "1:malformed process header, expected 'Process N PASID M:'");
    EXPECT_EQ(err("Process 1 PASID 0x10:\n    00000000: 00000000\n"),
              "2:MQD dump line outside a queue");
    EXPECT_EQ(err("Process 1 PASID 1:\n  Compute queue on device f7bc\n    00000020: 00000000\n"),
              "3:MQD dump offset 0x20 out of sequence (expected 0x0)");
    EXPECT_EQ(err("Process 1 PASID 1:\n  Compute queue on device f7bc\n    00000000: 0000000g\n"),
              "3:malformed MQD word '0000000g'");
    // A truncated MQD (registers not reached) still counts the queue, without registers.
    Collect ok;
    parse_buffer("Process 1 PASID 0x1:\n  Compute queue on device f7bc\n    00000000: 00000000\n",
                 Format::Mqds, ok);
    ASSERT_EQ(ok.mqds.size(), 1u);
    EXPECT_FALSE(ok.mqds[0].has_regs);
    EXPECT_EQ(ok.mqds[0].pasid, 1u);
}
