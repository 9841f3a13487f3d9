// kfd hqds dumps: facts checked by hand in the MI308X captures (see
// Documentation/amdqp-trace.rst, "What was verified by hand").
#include <gtest/gtest.h>

#include <map>
#include <set>

#include "census.h"
#include "error.h"
#include "test_util.h"

using namespace amdqp;
using amdqp::test::Collect;

TEST(Hqd, SixteenStreamsDumpLayout) {
    Collect c;
    test::parse_fixture("debugfs-kfd-hqds-16streams.txt", Format::Hqds, c);
    // 8 GPUs x 4 XCCs x (1 HIQ + 4 pipes x 6 queues) = 800 register blocks.
    ASSERT_EQ(c.hqds.size(), 800u);
    std::set<std::string> gpus;
    std::map<std::string, uint32_t> node;
    for (const auto &h : c.hqds) {
        gpus.insert(h.gpu_id);
        node[h.gpu_id] = h.node;
    }
    EXPECT_EQ(gpus, (std::set<std::string>{"f7bc", "f05b", "eb40", "c66d", "f220", "f5c7", "eedc",
                                           "c3f1"}));
    EXPECT_EQ(node["f7bc"], 2u);
    EXPECT_EQ(node["c3f1"], 9u);
    int hiq = 0;
    for (const auto &h : c.hqds)
        if (h.hiq) {
            ++hiq;
            EXPECT_EQ(h.mec, 2u);
            EXPECT_EQ(h.pipe, 0u);
            EXPECT_EQ(h.queue, 0u);
            EXPECT_TRUE(h.regs.active);
        }
    EXPECT_EQ(hiq, 32);
}

TEST(Hqd, SixteenStreamsCensus) {
    Analysis a;
    test::parse_fixture("debugfs-kfd-hqds-16streams.txt", Format::Hqds, a);
    ASSERT_EQ(a.hqds.size(), 1u);
    const auto &snap = a.hqds[0];
    EXPECT_EQ(snap.active_user(), 20u);
    for (const auto &[id, g] : snap.gpus) {
        ASSERT_EQ(g.xcc.size(), 4u) << id;
        for (const auto &[x, cnt] : g.xcc) {
            EXPECT_EQ(cnt.slots, 25u);
            EXPECT_EQ(cnt.active_hiq, 1u);
            EXPECT_EQ(cnt.active_user, id == "f7bc" ? 5u : 0u) << id << " xcc " << x;
        }
    }
}

TEST(Hqd, DecodesActiveQueueRegisters) {
    Collect c;
    test::parse_fixture("debugfs-kfd-hqds-16streams.txt", Format::Hqds, c);
    const HqdRecord *p0q2 = nullptr, *p0q3 = nullptr, *hiq = nullptr;
    for (const auto &h : c.hqds) {
        if (h.gpu_id != "f7bc" || h.xcc != 0)
            continue;
        if (h.hiq)
            hiq = &h;
        else if (h.pipe == 0 && h.queue == 2)
            p0q2 = &h;
        else if (h.pipe == 0 && h.queue == 3)
            p0q3 = &h;
    }
    ASSERT_TRUE(p0q2 && p0q3 && hiq);
    // "0000c914: 017ba000 00000000 00000001 00000303 40005301 00000001 00000007 00000111"
    EXPECT_TRUE(p0q2->regs.active);
    EXPECT_EQ(p0q2->regs.mqd_base, 0x17ba000u);
    EXPECT_EQ(p0q2->regs.vmid, 3u);
    EXPECT_EQ(p0q2->regs.pipe_priority, 1u);
    EXPECT_EQ(p0q2->regs.queue_priority, 7u);
    EXPECT_EQ(p0q2->regs.quantum, 0x111u);
    // CP_HQD_PQ_BASE 0x7f41b52000 holds addr >> 8.
    EXPECT_EQ(p0q2->regs.ring_base, 0x7f41b5200000u);
    // CP_HQD_PQ_CONTROL 0x1401c511: QUEUE_SIZE 0x11 -> 2^18 dwords = 1 MiB
    // (= the HIP runtime's 16384 AQL packets of 64 bytes).
    EXPECT_EQ(p0q2->regs.ring_size, 1u << 20);
    EXPECT_TRUE(p0q2->regs.aql);
    EXPECT_EQ(p0q2->regs.doorbell_offset, 0x1008u);
    EXPECT_TRUE(p0q2->regs.doorbell_enabled);
    EXPECT_EQ(p0q2->regs.ctx_save_base, 0x7f41a4000000u);
    EXPECT_EQ(p0q2->regs.ctx_save_size, 0xba6000u);
    // The small queue: 4 KiB ring, rptr == wptr == 0x10 (drained).
    EXPECT_EQ(p0q3->regs.ring_base, 0x7f61c15a6000u);
    EXPECT_EQ(p0q3->regs.ring_size, 4096u);
    EXPECT_EQ(p0q3->regs.rptr, 0x10u);
    EXPECT_EQ(p0q3->regs.wptr, 0x10u);
    // HIQ: vmid 0, 2 KiB ring at 0xfcc000.
    EXPECT_EQ(hiq->regs.vmid, 0u);
    EXPECT_EQ(hiq->regs.ring_base, 0xfcc000u);
    EXPECT_EQ(hiq->regs.ring_size, 2048u);
}

TEST(Hqd, SameQueueOnEveryXcc) {
    // gfx9.4.3 maps one user queue on all XCCs of the partition: same ring on each.
    Collect c;
    test::parse_fixture("debugfs-kfd-hqds-16streams.txt", Format::Hqds, c);
    std::map<uint64_t, std::set<uint32_t>> xccs_per_ring;
    for (const auto &h : c.hqds)
        if (h.regs.active && !h.hiq)
            xccs_per_ring[h.regs.ring_base].insert(h.xcc);
    ASSERT_EQ(xccs_per_ring.size(), 5u);
    for (const auto &[ring, x] : xccs_per_ring)
        EXPECT_EQ(x.size(), 4u) << std::hex << ring;
}

TEST(Hqd, IdleDumpHasNoUserQueues) {
    Analysis a;
    test::parse_fixture("debugfs-kfd-hqds-idle.txt", Format::Hqds, a);
    ASSERT_EQ(a.hqds.size(), 1u);
    EXPECT_EQ(a.hqds[0].active_user(), 0u);
    EXPECT_EQ(a.hqds[0].gpus.size(), 8u);
    for (const auto &[id, g] : a.hqds[0].gpus)
        for (const auto &[x, cnt] : g.xcc)
            EXPECT_EQ(cnt.active_hiq, 1u);
}

TEST(Hqd, PeakSnapshotIsTheBusyOne) {
    Analysis a;
    InputOptions o;
    parse_paths({test::fixture("debugfs-kfd-hqds-idle.txt"),
                 test::fixture("debugfs-kfd-hqds-16streams.txt")},
                a, o);
    ASSERT_NE(a.peak_hqds(), nullptr);
    EXPECT_NE(a.peak_hqds()->file.find("16streams"), std::string::npos);
}

TEST(Hqd, TruncatedBlockIsAnError) {
    std::string d = test::slurp(test::fixture("debugfs-kfd-hqds-16streams.txt"));
    // Cut inside the register block of the first CP queue (after 3 of 7 lines).
    size_t cut = 0;
    for (int i = 0; i < 13; ++i)
        cut = d.find('\n', cut) + 1;
    Collect c;
    try {
        parse_buffer(std::string_view(d).substr(0, cut), Format::Hqds, c);
        FAIL() << "no error";
    } catch (const ParseError &e) {
        EXPECT_EQ(e.line(), 10u); // the block's header line
        EXPECT_NE(e.message().find("has 24 registers, expected 56"), std::string::npos)
            << e.message();
    }
}

TEST(Hqd, OtherMalformedInput) {
    Collect c;
    auto err = [&](const std::string &in) {
        try {
            parse_buffer(in, Format::Hqds, c);
        } catch (const ParseError &e) {
            return std::to_string(e.line()) + ":" + e.message();
        }
        return std::string("no error");
    };
    EXPECT_EQ(err(" Inst 0,  CP Pipe 0, Queue 2\n"),
              "1:queue header before any 'Node N, gpu_id X:' line");
    EXPECT_EQ(err("Node 2, gpu_id zz:\n"), "1:malformed gpu_id 'zz'");
    EXPECT_EQ(err("Node 2, gpu_id f7bc:\n    0000c914: 00000000\n"),
              "2:register line outside a queue block");
    EXPECT_EQ(err("Node 2, gpu_id f7bc:\n Inst 0,  CP Pipe 0, Queue 2\n    0000c914: 0000zz00\n"),
              "3:malformed register value '0000zz00'");
    EXPECT_EQ(err("Node 2, gpu_id f7bc:\nhello\n"),
              "2:unrecognised line in kfd hqds dump: 'hello'");
}
