// SPDX-License-Identifier: MIT
// Tensor-parallel jobs (tp.hpp) and the overload bound, on hand-computed
// cases: peer waits stripped from collectives, missing ranks, the
// collective that ends when the last rank arrives, ring steps taken only
// while a rank runs, a server that queues and gives up, gzip-compressed
// timelines.
#include <gtest/gtest.h>
#include <zlib.h>

#include <filesystem>
#include <string>

#include "helpers.hpp"
#include "simulator.hpp"
#include "timeline_json.hpp"
#include "tp.hpp"
#include "validate.hpp"

namespace amdqp::sim {
namespace {

using test::timeline;

constexpr auto kN = KernelClass::kNccl;
constexpr auto kO = KernelClass::kOther;

Timeline rank_tl(int rank, std::vector<std::vector<Kernel>> requests) {
    Timeline t;
    t.workload = "llm_tp hp test";
    t.rank = rank;
    t.tp = 2;
    for (auto& ks : requests)
        t.requests.push_back(test::request(std::move(ks)));
    return t;
}

// Rank 0 reaches the collective at 20 us and waits for rank 1, which
// arrives at 90 us; both leave it at 120 us.
std::vector<Timeline> waiting_pair() {
    return {rank_tl(0, {{{0, 10 * kUs, kO}, {20 * kUs, 100 * kUs, kN}, {125 * kUs, 5 * kUs, kO}}}),
            rank_tl(1, {{{0, 80 * kUs, kO}, {90 * kUs, 30 * kUs, kN}, {125 * kUs, 5 * kUs, kO}}})};
}

TEST(StripPeerWaits, CostIsTheLastArrivingRanksDurationAndLaterKernelsMoveUp) {
    const auto out = strip_peer_waits(waiting_pair(), true);
    ASSERT_EQ(out.size(), 2u);
    const auto& r0 = out[0].requests[0].kernels;
    const auto& r1 = out[1].requests[0].kernels;
    // Rank 1 arrived last: its 30 us is the collective's own cost.
    EXPECT_EQ(r0[1].dur, 30 * kUs);
    EXPECT_EQ(r1[1].dur, 30 * kUs);
    // Rank 0 lost 70 us of wait: its next kernel moves up by as much.
    EXPECT_EQ(r0[1].start, 20 * kUs);
    EXPECT_EQ(r0[2].start, 55 * kUs);
    // Rank 1 waited for nobody: unchanged.
    EXPECT_EQ(r1[2].start, 125 * kUs);
    EXPECT_EQ(r0[0].dur, 10 * kUs);
    EXPECT_EQ(r1[0].dur, 80 * kUs);
}

TEST(StripPeerWaits, WithARankMissingTheCostIsTheLeastOverEveryRequest) {
    // Only rank 0: request 0 waited 100 us in its collective, request 1
    // 40 us; the cost of that collective is 40 us in both.
    const auto out = strip_peer_waits(
        {rank_tl(0, {{{0, 10 * kUs, kO}, {10 * kUs, 100 * kUs, kN}, {110 * kUs, 5 * kUs, kO}},
                     {{0, 10 * kUs, kO}, {10 * kUs, 40 * kUs, kN}, {50 * kUs, 5 * kUs, kO}}})},
        false);
    EXPECT_EQ(out[0].requests[0].kernels[1].dur, 40 * kUs);
    EXPECT_EQ(out[0].requests[0].kernels[2].start, 50 * kUs);
    EXPECT_EQ(out[0].requests[1].kernels[1].dur, 40 * kUs);
    EXPECT_EQ(out[0].requests[1].kernels[2].start, 50 * kUs);
    // With every rank there (complete), each instance keeps its own.
    const auto own = strip_peer_waits({rank_tl(0, {{{0, 10 * kUs, kO}, {10 * kUs, 100 * kUs, kN}},
                                                   {{0, 10 * kUs, kO}, {10 * kUs, 40 * kUs, kN}}})},
                                      true);
    EXPECT_EQ(own[0].requests[0].kernels[1].dur, 100 * kUs);
}

TEST(StripPeerWaits, RanksWithDifferentCollectivesAreRefused) {
    auto ranks = waiting_pair();
    ranks[1].requests[0].kernels[1].cls = kO;
    EXPECT_THROW(strip_peer_waits(ranks, true), std::runtime_error);
}

TEST(MeanRank, IsTheKernelWiseMean) {
    const auto m = mean_rank({rank_tl(0, {{{0, 10 * kUs, kO}, {20 * kUs, 30 * kUs, kN}}}),
                              rank_tl(2, {{{0, 20 * kUs, kO}, {40 * kUs, 10 * kUs, kN}}})});
    const auto& k = m.requests[0].kernels;
    EXPECT_EQ(k[0].dur, 15 * kUs);
    EXPECT_EQ(k[1].start, 30 * kUs);
    EXPECT_EQ(k[1].dur, 20 * kUs);
    EXPECT_EQ(k[1].cls, kN);
}

TEST(PrepareTpJob, AMissingRankIsTheMeanOfThePresentOnesAndNamed) {
    auto a = rank_tl(0, {{{0, 10 * kUs, kO}, {20 * kUs, 50 * kUs, kN}}});
    auto b = rank_tl(2, {{{0, 30 * kUs, kO}, {40 * kUs, 30 * kUs, kN}}});
    const auto job = prepare_tp_job({b, a}, 3);
    EXPECT_EQ(job.missing, (std::vector<int>{1}));
    ASSERT_EQ(job.ranks.size(), 3u);
    EXPECT_EQ(job.ranks[1].rank, 1);
    // Stripped first (cost 30 us, the least), then averaged.
    EXPECT_EQ(job.ranks[1].requests[0].kernels[0].dur, 20 * kUs);
    EXPECT_EQ(job.ranks[1].requests[0].kernels[1].dur, 30 * kUs);
    EXPECT_EQ(job.ranks[1].requests[0].kernels[1].start, 30 * kUs);
    EXPECT_EQ(job.stripped, 20 * kUs);
    EXPECT_EQ(rank_list(job.missing), "rank 1");
    EXPECT_THROW(prepare_tp_job({a, a}, 2), std::runtime_error);
    EXPECT_THROW(prepare_tp_job({b}, 2), std::runtime_error);  // rank 2 of TP 2
}

TEST(PrepareTpJob, EveryRankTakesThePacingRanksGapFactor) {
    // Rank 1 paces the group (the longer span): its 40-us gap of a 100-us
    // span with 60 us busy must shrink to fit rank 0's 80-us wall time,
    // f = 0.5; rank 0's 10-us gap takes the same factor.
    auto a = rank_tl(0, {{{0, 10 * kUs, kO}, {20 * kUs, 10 * kUs, kO}}});
    auto b = rank_tl(1, {{{0, 10 * kUs, kO}, {50 * kUs, 50 * kUs, kO}}});
    a.request_wall_us = {80};
    const auto job = prepare_tp_job({a, b}, 2);
    EXPECT_DOUBLE_EQ(job.gap_factor, 0.5);
    EXPECT_EQ(job.ranks[1].requests[0].kernels[1].start, 30 * kUs);
    EXPECT_EQ(job.ranks[0].requests[0].kernels[1].start, 15 * kUs);
}

TEST(TensorParallel, StrippedRanksReplayTheirRecordedCollective) {
    // The stripped pair on two GPUs: rank 0's collective starts at 20 us,
    // progresses only once rank 1 arrives at 90 us and ends 30 us later
    // on both; rank 0's next kernel, submitted at 55 us, runs after it.
    Scenario sc;
    sc.devices[0] = test::hws();
    sc.devices[1] = test::hws();
    sc.duration = 10 * kMs;
    sc.warmup = 0;
    sc.daemon.enabled = false;
    WorkloadSpec w;
    w.name = "hp";
    w.priority = 12;
    w.ranks = strip_peer_waits(waiting_pair(), true);
    w.gpus = {0, 1};
    w.arrivals = {0};
    sc.workloads = {w};
    Simulator s(sc);
    s.trace(true);
    const auto r = s.run();
    for (const auto& k : s.kernels()) {
        if (k.kernel == 1) {
            EXPECT_EQ(k.end, 120 * kUs) << "rank " << k.rank;
        }
        if (k.kernel == 2 && k.rank == 0) {
            EXPECT_EQ(k.start, 120 * kUs);
            EXPECT_EQ(k.end, 125 * kUs);
        }
    }
    EXPECT_EQ(r.workloads.front().latencies_ms, (std::vector<double>{0.13}));
}

// Two time-sliced GPUs (1-ms slices, free switches). TP job X: rank 0
// reaches its 10-us collective at once on GPU 0, rank 1 computes 3.5 ms on
// GPU 1 first. Y keeps a 20-ms kernel on GPU 0 from 0.1 ms, so GPU 0
// alternates X (spinning) and Y by whole slices: X 0-1, Y 1-2, X 2-3,
// Y 3-4, X from 4 ms.
Scenario turns(Collectives coll) {
    Scenario sc;
    for (std::uint32_t g : {0u, 1u}) {
        sc.devices[g].kind = DeviceKind::kTimeslice;
        sc.devices[g].ts.slice = 1 * kMs;
        sc.devices[g].ts.switch_cost = 0;
    }
    sc.duration = 10 * kMs;
    sc.warmup = 0;
    sc.daemon.enabled = false;
    WorkloadSpec x;
    x.name = "x";
    x.ranks = {timeline({{0, 10 * kUs, kN}}),
               timeline({{0, 3500 * kUs, kO}, {3500 * kUs, 10 * kUs, kN}})};
    x.gpus = {0, 1};
    x.arrivals = {0};
    x.collectives = coll;
    auto y = test::workload("y", 2, timeline({{0, 20 * kMs}}), 0.0, 1.0);
    y.first_arrival = 100 * kUs;
    sc.workloads = {x, y};
    return sc;
}

Ns collective_end(const Simulator& s, int rank) {
    for (const auto& k : s.kernels()) {
        if (k.workload == 0 && k.rank == rank && k.kernel == (rank == 0 ? 0u : 1u))
            return k.end;
    }
    return -1;
}

TEST(TensorParallel, RingRanksThatTakeTurnsWaitForEachOthersTurn) {
    // Rank 1 arrives at 3.5 ms while Y has GPU 0: it finishes step 1 with
    // rank 0's data (sent at 0) but step 2 needs what rank 0 sends only
    // when it runs again, at 4 ms; both then end 10 us later.
    Simulator ring(turns(Collectives::kRing));
    ring.trace(true);
    ring.run();
    EXPECT_EQ(collective_end(ring, 0), 4 * kMs + 10 * kUs);
    EXPECT_EQ(collective_end(ring, 1), 4 * kMs + 10 * kUs);
    // Counting arrivals only, rank 1 would have left at once.
    Simulator arrival(turns(Collectives::kArrival));
    arrival.trace(true);
    arrival.run();
    EXPECT_EQ(collective_end(arrival, 0), 4 * kMs + 10 * kUs);
    EXPECT_EQ(collective_end(arrival, 1), 3500 * kUs + 10 * kUs);
}

TEST(TensorParallel, ARingOfResidentRanksEndsWithItsLastArrival) {
    // Four ranks on four HWS GPUs (all resident): the six steps cascade at
    // once when rank 3 arrives at 4 ms; each then spends its 100 us.
    Scenario sc;
    WorkloadSpec w;
    w.name = "tp4";
    w.gpus.clear();
    for (int r = 0; r < 4; ++r) {
        sc.devices[static_cast<std::uint32_t>(r)] = test::hws();
        const Ns compute = (r + 1) * kMs;
        w.ranks.push_back(timeline({{0, compute, kO}, {compute, 100 * kUs, kN}}));
        w.gpus.push_back(static_cast<std::uint32_t>(r));
    }
    w.arrivals = {0};
    sc.workloads = {w};
    sc.duration = 10 * kMs;
    sc.warmup = 0;
    sc.daemon.enabled = false;
    Simulator s(sc);
    s.trace(true);
    s.run();
    int seen = 0;
    for (const auto& k : s.kernels()) {
        if (k.kernel == 1) {
            EXPECT_EQ(k.end, 4 * kMs + 100 * kUs) << "rank " << k.rank;
            ++seen;
        }
    }
    EXPECT_EQ(seen, 4);
}

Scenario server(std::vector<Ns> arrivals, Ns give_up) {
    // One 15-ms request at a time; arrivals every 10 ms.
    Scenario sc;
    sc.devices[0] = test::hws();
    sc.duration = 200 * kMs;
    sc.warmup = 0;
    sc.daemon.enabled = false;
    auto hp = test::workload("hp", 12, timeline({{0, 15 * kMs}}), 0.0, 0.1);
    hp.arrivals = std::move(arrivals);
    hp.give_up = give_up;
    sc.workloads = {hp};
    return sc;
}

TEST(Overload, ArrivalsKeepTheirTimesAndTheQueueGrows) {
    // Service 15 ms > gap 10 ms: request n starts at 15 n ms, ends at
    // 15 (n + 1), arrived at 10 n: latency 15 + 5 n ms.
    const auto r = simulate(server({0, 10 * kMs, 20 * kMs, 30 * kMs}, 0));
    EXPECT_EQ(r.workloads.front().latencies_ms, (std::vector<double>{15, 20, 25, 30}));
    EXPECT_EQ(r.workloads.front().dropped, 0u);
}

TEST(Overload, PastTheBoundTheRestOfTheScheduleIsDropped) {
    // Give up at 25 ms: the second request starts at 15 ms (before the
    // bound) and ends at 30; then the server is past it: the two left are
    // dropped, as the llm_tp driver drops them.
    const auto r = simulate(server({0, 10 * kMs, 20 * kMs, 30 * kMs}, 25 * kMs));
    EXPECT_EQ(r.workloads.front().latencies_ms, (std::vector<double>{15, 20}));
    EXPECT_EQ(r.workloads.front().dropped, 2u);
    // Arrivals outside the measured window are not counted as dropped.
    auto sc = server({0, 10 * kMs, 20 * kMs, 30 * kMs}, 25 * kMs);
    sc.measure_end = 25 * kMs;
    EXPECT_EQ(simulate(sc).workloads.front().dropped, 1u);
}

TEST(Overload, ARequestThatWaitedPastTheDelayBoundIsDropped) {
    // Bound 12 ms: request 1 (arrived 10) starts at 15 after 5 ms, ends at
    // 30; request 2 (arrived 20) has waited 10 ms at 30: served, ends at
    // 45; request 3 (arrived 30) has waited 15 ms at 45: dropped.
    auto sc = server({0, 10 * kMs, 20 * kMs, 30 * kMs}, 0);
    sc.workloads.front().max_queue_delay = 12 * kMs;
    const auto r = simulate(sc);
    EXPECT_EQ(r.workloads.front().latencies_ms, (std::vector<double>{15, 20, 25}));
    EXPECT_EQ(r.workloads.front().dropped, 1u);
}

TEST(TimelineJson, ReadsGzipCompressedTimelines) {
    const auto dir =
        std::filesystem::temp_directory_path() /
        ("amdqp-sim-gz-" + std::to_string(::testing::UnitTest::GetInstance()->random_seed()));
    std::filesystem::create_directories(dir);
    const auto path = (dir / "t.json.gz").string();
    const std::string text = R"({"workload": "w", "rank": 1, "tp": 2,
        "requests": [[[5, 2, "other"], [10, 3, "nccl"]]]})";
    gzFile f = gzopen(path.c_str(), "wb");
    ASSERT_NE(f, nullptr);
    ASSERT_EQ(gzwrite(f, text.data(), static_cast<unsigned>(text.size())),
              static_cast<int>(text.size()));
    gzclose(f);
    const auto t = load_timeline_json(path);
    EXPECT_EQ(t.rank, 1);
    EXPECT_EQ(t.tp, 2);
    ASSERT_EQ(t.requests.front().kernels.size(), 2u);
    EXPECT_EQ(t.requests.front().kernels[1].start, 5 * kUs);
    EXPECT_EQ(t.requests.front().kernels[1].cls, kN);
    EXPECT_TRUE(is_timeline_file(path));
    EXPECT_TRUE(is_timeline_file("a.json"));
    EXPECT_FALSE(is_timeline_file("a.md"));
    std::filesystem::remove_all(dir);
}

TEST(ErrorByTp, TheLargestCountedErrorOfEachDegree) {
    std::vector<GroupPrediction> g(4);
    g[0].tp = 1, g[0].validated = true, g[0].error_pct = 7;
    g[1].tp = 2, g[1].validated = true, g[1].error_pct = 12;
    g[2].tp = 2, g[2].validated = true, g[2].error_pct = 30;
    g[3].tp = 4, g[3].validated = false, g[3].design = true, g[3].error_pct = 5;
    const auto e = error_by_tp(g);
    ASSERT_EQ(e.size(), 3u);
    EXPECT_EQ(e[0].first, 1);
    EXPECT_DOUBLE_EQ(*e[0].second, 7);
    EXPECT_DOUBLE_EQ(*e[1].second, 30);
    EXPECT_EQ(e[2].first, 4);
    EXPECT_FALSE(e[2].second.has_value());  // design runs only: nothing counts
}

}  // namespace
}  // namespace amdqp::sim
