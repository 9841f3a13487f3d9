// SPDX-License-Identifier: MIT
// The event loop with the real policy on hand-computed cases.
#include <gtest/gtest.h>

#include "helpers.hpp"
#include "simulator.hpp"

namespace amdqp::sim {
namespace {

using test::hws;
using test::timeline;
using test::workload;

// One LP kernel of 100 ms fills the device from t = 0; one HP request of
// one 1 ms kernel arrives at 10 ms.
Scenario one_lp_kernel(DeviceKind kind, policy::SuspendOrder order, bool daemon) {
    Scenario sc;
    sc.devices[0] = hws(kind);
    sc.duration = 60 * kMs;
    sc.warmup = 0;
    auto hp = workload("hp", 12, timeline({{0, 1 * kMs}}), 1.0, 0.1);
    hp.first_arrival = 10 * kMs;
    sc.workloads = {hp, workload("lp", 2, timeline({{0, 100 * kMs}}), 0.0, 1.0)};
    sc.daemon.enabled = daemon;
    sc.daemon.policy.order = order;
    sc.daemon.wake_latency = 50 * kUs;
    return sc;
}

const KernelRecord& hp_kernel(const Simulator& s) {
    for (const auto& k : s.kernels()) {
        if (k.workload == 0)
            return k;
    }
    throw std::runtime_error("no HP kernel");
}

TEST(Hws, BeforeDoorbellStartsHpAfterOneUnmapAndTheLpSave) {
    Simulator s(one_lp_kernel(DeviceKind::kHws, policy::SuspendOrder::kBeforeDoorbell, true));
    s.trace(true);
    const auto r = s.run();
    // Doorbell at 10 ms, daemon at +50 us: unmap 100 + save of the full
    // LP 400 + map 50 (HP has no waves yet, LP is left out): 600 us.
    const Ns t = 10 * kMs + 50 * kUs;
    EXPECT_EQ(hp_kernel(s).start, t + 100 * kUs + 400 * kUs + 50 * kUs);
    EXPECT_EQ(hp_kernel(s).end, hp_kernel(s).start + 1 * kMs);
    ASSERT_FALSE(s.updates().empty());
    EXPECT_EQ(s.updates().front().op, UpdateRecord::Op::kSuspend);
    EXPECT_EQ(s.updates().front().issued, t);
    EXPECT_EQ(r.suspend_calls, 1u);
}

TEST(Hws, AfterDoorbellCostsTheHpKernelASaveAndRestore) {
    Simulator s(one_lp_kernel(DeviceKind::kHws, policy::SuspendOrder::kAfterDoorbell, true));
    s.trace(true);
    s.run();
    const auto& k = hp_kernel(s);
    EXPECT_EQ(k.start, 10 * kMs);  // runs at once, next to LP, at the co-run rate 0.5
    // 50 us at 0.5 = 25 us done; update: unmap 100 + save (1.0 + 0.1 capped
    // at 1) 400 + map 50 + restore of HP's 10 % 30 = 580 us; then 975 us alone.
    EXPECT_EQ(k.end, 10 * kMs + 50 * kUs + 580 * kUs + 975 * kUs);
}

TEST(Mes, OnlyTheSuspendedQueuePays) {
    Simulator s(one_lp_kernel(DeviceKind::kMes, policy::SuspendOrder::kAfterDoorbell, true));
    s.trace(true);
    s.run();
    const auto& k = hp_kernel(s);
    EXPECT_EQ(k.start, 10 * kMs);
    // HP keeps running at 0.5 while the LP queue is removed (unmap 100 +
    // its save 400, from 10.05 ms), then alone: 25 + 250 us done by
    // 10.55 ms, 725 us left.
    EXPECT_EQ(k.end, 10 * kMs + 550 * kUs + 725 * kUs);
}

// one_lp_kernel with a 20 ms LP kernel and the high level needing a
// quarter of the device: the LP queue is confined to 0.75 of it.
Scenario confined(DeviceKind kind, double demand) {
    auto sc = one_lp_kernel(kind, policy::SuspendOrder::kBeforeDoorbell, true);
    sc.workloads[1].ranks = {timeline({{0, 20 * kMs}})};
    sc.daemon.policy.cu_demand[12] = demand;
    return sc;
}

const KernelRecord& first_lp_kernel(const Simulator& s) {
    for (const auto& k : s.kernels()) {
        if (k.workload == 1)
            return k;
    }
    throw std::runtime_error("no LP kernel");
}

TEST(Hws, ConfineStartsHpAfterOneUpdateAndKeepsTheLpRunning) {
    Simulator s(confined(DeviceKind::kHws, 0.25));
    s.trace(true);
    const auto r = s.run();
    // Held doorbell at 10 ms, daemon at +50 us: unmap 100 + save of the
    // full LP 400 + map 50 + restore of the LP's 0.75 225 = 775 us; HP then
    // runs alone on its quarter (unmasked, 10 % needed): 1 ms.
    const Ns t = 10 * kMs + 50 * kUs;
    EXPECT_EQ(hp_kernel(s).start, t + 775 * kUs);
    EXPECT_EQ(hp_kernel(s).end, t + 775 * kUs + 1 * kMs);
    ASSERT_FALSE(s.updates().empty());
    EXPECT_EQ(s.updates().front().op, UpdateRecord::Op::kConfine);
    EXPECT_EQ(s.updates().front().done, t + 775 * kUs);
    EXPECT_EQ(r.confine_calls, 1u);
    EXPECT_EQ(r.suspend_calls, 0u);
    // The policy lifts it once the HP work is over.
    EXPECT_EQ(r.unconfine_calls, 1u);
    EXPECT_EQ(s.updates().back().op, UpdateRecord::Op::kUnconfine);
    EXPECT_GT(s.updates().back().issued, hp_kernel(s).end);
}

TEST(Hws, AConfinedLpFinishesSoonerThanASuspendedOne) {
    Simulator c(confined(DeviceKind::kHws, 0.25));
    c.trace(true);
    c.run();
    Simulator sus(confined(DeviceKind::kHws, 0.0));  // 0: suspend, as before
    sus.trace(true);
    const auto r = sus.run();
    EXPECT_EQ(r.confine_calls, 0u);
    EXPECT_EQ(r.suspend_calls, 1u);
    ASSERT_GT(first_lp_kernel(c).end, 0);
    ASSERT_GT(first_lp_kernel(sus).end, 0);
    // Suspended, the LP makes no progress from the update until the resume;
    // confined, it runs at 0.75 meanwhile: it ends earlier by at least a
    // quarter of the HP's millisecond.
    EXPECT_LT(first_lp_kernel(c).end + 250 * kUs, first_lp_kernel(sus).end);
    // The HP request pays the same single update either way, minus the
    // restore the confined LP's waves need.
    EXPECT_EQ(hp_kernel(sus).start - hp_kernel(c).start, -225 * kUs);
}

TEST(Mes, ConfineRemovesAndAddsOnlyTheLpQueue) {
    Simulator s(confined(DeviceKind::kMes, 0.25));
    s.trace(true);
    const auto r = s.run();
    // The LP queue: remove (unmap 100 + save 400) and add (map 50 +
    // restore 225); the held HP waits for the call to return.
    const Ns t = 10 * kMs + 50 * kUs;
    EXPECT_EQ(hp_kernel(s).start, t + 775 * kUs);
    EXPECT_EQ(s.updates().front().op, UpdateRecord::Op::kConfine);
    // Two queue updates per direction would be two per call; only the LP
    // queue changes: one confine and one lift.
    EXPECT_EQ(r.device_updates, 2u);
}

TEST(Hws, ConfineRefusedWhereTheDemandIsTheWholeGpu) {
    // A demand of 1 is the whole GPU: the policy suspends.
    Simulator s(confined(DeviceKind::kHws, 1.0));
    const auto r = s.run();
    EXPECT_EQ(r.confine_calls, 0u);
    EXPECT_EQ(r.suspend_calls, 1u);
}

TEST(Hws, WithoutTheDaemonHpRunsAtTheCorunRate) {
    Simulator s(one_lp_kernel(DeviceKind::kHws, policy::SuspendOrder::kBeforeDoorbell, false));
    s.trace(true);
    const auto r = s.run();
    EXPECT_EQ(hp_kernel(s).start, 10 * kMs);
    EXPECT_EQ(hp_kernel(s).end, 12 * kMs);
    EXPECT_EQ(r.suspend_calls, 0u);
    EXPECT_EQ(r.device_updates, 0u);
}

TEST(Cpx, HpAndLpOnSeparatePartitionsDoNotInterfere) {
    Scenario sc = one_lp_kernel(DeviceKind::kHws, policy::SuspendOrder::kBeforeDoorbell, false);
    sc.devices.clear();
    auto part = hws();
    part.compute_fraction = 0.25;
    sc.devices[0] = part;
    sc.devices[1] = part;
    sc.workloads[1].gpus = {1};
    Simulator s(sc);
    s.trace(true);
    s.run();
    // HP needs 10 % of the device, a partition has 25 %: full speed.
    EXPECT_EQ(hp_kernel(s).start, 10 * kMs);
    EXPECT_EQ(hp_kernel(s).end, 11 * kMs);
    // LP, filling a whole device, runs 4x slower on a quarter of it.
    for (const auto& k : s.kernels()) {
        if (k.workload == 1) {
            EXPECT_EQ(k.end, -1);  // 400 ms > the 60 ms simulated
        }
    }
}

// Time slicing: LP submits a 50 us kernel at 0 and another at 120 us; one
// HP kernel of 10 us is submitted at 60 us, while LP's first one runs.
Scenario dry_gap(Ns dry_hold) {
    Scenario sc;
    DeviceParams d;
    d.kind = DeviceKind::kTimeslice;
    d.ts.slice = 3 * kMs;
    d.ts.switch_cost = 25 * kUs;
    d.ts.dry_hold = dry_hold;
    sc.devices[0] = d;
    sc.duration = 1 * kMs;
    sc.warmup = 0;
    sc.daemon.enabled = false;  // native time slicing
    auto hp = workload("hp", 12, timeline({{0, 10 * kUs}}), 1.0, 0.1);
    hp.first_arrival = 60 * kUs;
    sc.workloads = {hp,
                    workload("lp", 2, timeline({{0, 50 * kUs}, {120 * kUs, 50 * kUs}}), 1.0, 0.1)};
    return sc;
}

const KernelRecord& lp_kernel(const Simulator& s, std::size_t k) {
    for (const auto& r : s.kernels()) {
        if (r.workload == 1 && r.kernel == k)
            return r;
    }
    throw std::runtime_error("no such LP kernel");
}

TEST(Timeslice, ADryContextYieldsAtOnceWithoutAHold) {
    Simulator s(dry_gap(0));
    s.trace(true);
    s.run();
    // The first owner pays a switch too: LP's first kernel runs 25..75 us.
    EXPECT_EQ(lp_kernel(s, 0).start, 25 * kUs);
    // LP runs dry at 75 us and yields at once: HP starts after one switch.
    EXPECT_EQ(hp_kernel(s).start, 75 * kUs + 25 * kUs);
    EXPECT_EQ(hp_kernel(s).end, 110 * kUs);
    // HP is dry at 110 us; LP's kernel submitted at 120 us pays the switch.
    EXPECT_EQ(lp_kernel(s, 1).start, 145 * kUs);
    EXPECT_EQ(lp_kernel(s, 1).end, 195 * kUs);
}

TEST(Timeslice, ADryContextKeepsTheGpuForTheHold) {
    Simulator s(dry_gap(100 * kUs));
    s.trace(true);
    s.run();
    // LP's first kernel runs 25..75 us; its gap to the next submission
    // (75..120 us) is shorter than the hold: it keeps the GPU and its
    // second kernel runs at once; it is seen idle only 100 us after that
    // one ended (270 us), then HP pays the switch.
    EXPECT_EQ(lp_kernel(s, 1).start, 120 * kUs);
    EXPECT_EQ(lp_kernel(s, 1).end, 170 * kUs);
    EXPECT_EQ(hp_kernel(s).start, 170 * kUs + 100 * kUs + 25 * kUs);
    EXPECT_EQ(hp_kernel(s).end, 305 * kUs);
}

TEST(OpenLoop, LatencyCountsFromTheScheduledArrival) {
    // 2 ms requests every 1 ms: request n waits for n-1; the latency grows
    // by 1 ms per request.
    Scenario sc;
    sc.devices[0] = hws();
    sc.duration = 10 * kMs + 1;
    sc.warmup = 0;
    sc.workloads = {workload("hp", 12, timeline({{0, 2 * kMs}}), 1000.0, 0.1)};
    sc.daemon.enabled = false;
    const auto r = simulate(sc);
    const auto& lat = r.workloads.front().latencies_ms;
    ASSERT_GE(lat.size(), 4u);
    for (std::size_t i = 0; i < 4; ++i)
        EXPECT_DOUBLE_EQ(lat[i], 2.0 + static_cast<double>(i));
}

TEST(Submission, KernelWaitsForItsRecordedOffsetAndItsPredecessor) {
    // Kernel 1 is submitted at +1 ms but kernel 0 lasts 3 ms.
    Scenario sc;
    sc.devices[0] = hws();
    sc.duration = 20 * kMs;
    sc.warmup = 0;
    sc.workloads = {workload(
        "hp", 12, timeline({{0, 3 * kMs}, {1 * kMs, 1 * kMs}, {6 * kMs, 1 * kMs}}), 10.0, 0.1)};
    sc.daemon.enabled = false;
    Simulator s(sc);
    s.trace(true);
    s.run();
    const auto& k = s.kernels();
    ASSERT_GE(k.size(), 3u);
    EXPECT_EQ(k[1].submit, 1 * kMs);
    EXPECT_EQ(k[1].start, 3 * kMs);
    EXPECT_EQ(k[2].submit, 6 * kMs);
    EXPECT_EQ(k[2].start, 6 * kMs);
}

// An LP job that is always busy next to an HP job with requests every 50 ms.
Scenario busy_pair(bool daemon) {
    Scenario sc;
    sc.devices[0] = hws();
    sc.devices[0].hws.corun_rate = 0.05;  // HP kernels 20x slower next to LP
    sc.duration = 1 * kSec;
    sc.warmup = 0;
    std::vector<Kernel> hp;
    for (int i = 0; i < 20; ++i)
        hp.push_back({i * 100 * kUs, 20 * kUs});
    auto h = workload("hp", 12, timeline(hp), 20.0, 0.1);
    h.first_arrival = 5 * kMs;
    sc.workloads = {h, workload("lp", 2, timeline({{0, 5 * kMs}, {0, 5 * kMs}}), 0.0, 1.0)};
    sc.daemon.enabled = daemon;
    return sc;
}

TEST(Policy, IsReallyDrivenByTheSimulatedQueues) {
    const auto on = simulate(busy_pair(true));
    const auto off = simulate(busy_pair(false));
    // One suspension per request (20 requests in 1 s), each resumed.
    EXPECT_GE(on.suspend_calls, 18u);
    EXPECT_LE(on.suspend_calls, 21u);
    EXPECT_GE(on.resume_calls, on.suspend_calls - 1);
    EXPECT_EQ(on.device_updates, on.suspend_calls + on.resume_calls);
    EXPECT_EQ(off.suspend_calls, 0u);
    EXPECT_EQ(off.device_updates, 0u);
    // And it helps the HP request and costs LP throughput.
    EXPECT_LT(on.find("hp")->latency.p99, off.find("hp")->latency.p99);
    EXPECT_LT(on.find("lp")->it_per_s, off.find("lp")->it_per_s);
}

// Tensor parallelism: two ranks, a collective at the end of each request.
Scenario tp_pair(bool split) {
    Scenario sc;
    sc.devices[0] = hws();
    sc.devices[1] = hws();
    sc.duration = 30 * kMs;
    sc.warmup = 0;
    WorkloadSpec w;
    w.name = "tp";
    w.priority = 12;
    // Rank 1 computes 2 ms longer before the collective.
    w.ranks = {timeline({{0, 1 * kMs}, {1 * kMs, 100 * kUs, KernelClass::kNccl}}),
               timeline({{0, 3 * kMs}, {1 * kMs, 100 * kUs, KernelClass::kNccl}})};
    w.gpus = {0, 1};
    w.rate_per_s = 1.0;
    w.occupancy = 0.1;
    auto lp = workload("lp", 2, timeline({{0, 50 * kMs}}), 0.0, 1.0);
    lp.gpus = {0, 1};
    lp.first_arrival = 0;
    w.first_arrival = 10 * kMs;
    sc.workloads = {w, lp};
    sc.daemon.enabled = true;
    sc.daemon.split_calls = split;
    return sc;
}

TEST(TensorParallel, CollectiveWaitsForTheSlowestRank) {
    auto sc = tp_pair(false);
    sc.workloads.pop_back();  // no LP
    sc.daemon.enabled = false;
    Simulator s(sc);
    s.trace(true);
    s.run();
    for (const auto& k : s.kernels()) {
        if (k.kernel == 1) {  // both ranks' collective: slowest rank at 3 ms, + 100 us
            EXPECT_EQ(k.end, 10 * kMs + 3 * kMs + 100 * kUs) << "rank " << k.rank;
        }
    }
}

TEST(TensorParallel, OneCallForNGpusIsOneUpdatePerDeviceInParallel) {
    Simulator one(tp_pair(false));
    one.run();
    Simulator split(tp_pair(true));
    split.run();
    auto first_two = [](const Simulator& s) {
        std::vector<UpdateRecord> v(s.updates().begin(), s.updates().begin() + 2);
        return v;
    };
    ASSERT_GE(one.updates().size(), 2u);
    ASSERT_GE(split.updates().size(), 2u);
    const auto a = first_two(one), b = first_two(split);
    // One SUSPEND_BELOW covering both GPUs: one update on each, issued together.
    EXPECT_NE(a[0].gpu, a[1].gpu);
    EXPECT_EQ(a[0].issued, a[1].issued);
    EXPECT_EQ(a[0].done, a[1].done);
    // One call per GPU: the second GPU's update starts when the first returned.
    EXPECT_EQ(b[1].issued, b[0].done);
}

// One HP request of two 100 us kernels (the second recorded 50 us after the
// first ends) next to an LP kernel filling an HWS device for 100 ms: the HP
// kernels run at the co-run rate 0.5, i.e. take 200 us each. No daemon.
Scenario sync_case(bool sync) {
    Scenario sc;
    sc.devices[0] = hws(DeviceKind::kHws);
    sc.duration = 10 * kMs;
    sc.warmup = 0;
    auto t = timeline({{0, 100 * kUs}, {150 * kUs, 100 * kUs}});
    if (sync)
        t.requests.front().syncs = {0};
    t.requests.front().first_token = 0;
    auto hp = workload("hp", 12, t, 1.0, 0.1);
    hp.first_arrival = 0;
    hp.tokens_after_first = 2;
    sc.workloads = {hp, workload("lp", 2, timeline({{0, 100 * kMs}}), 0.0, 1.0)};
    sc.daemon.enabled = false;
    return sc;
}

std::vector<KernelRecord> hp_kernels(const Simulator& s) {
    std::vector<KernelRecord> v;
    for (const auto& k : s.kernels()) {
        if (k.workload == 0)
            v.push_back(k);
    }
    return v;
}

TEST(HostSync, WithoutASyncTheNextKernelIsSubmittedAtItsRecordedOffset) {
    Simulator s(sync_case(false));
    s.trace(true);
    const auto r = s.run();
    const auto k = hp_kernels(s);
    ASSERT_EQ(k.size(), 2u);
    EXPECT_EQ(k[0].end, 200 * kUs);
    EXPECT_EQ(k[1].submit, 150 * kUs);  // queued behind the slowed first kernel
    EXPECT_EQ(k[1].start, 200 * kUs);
    EXPECT_EQ(k[1].end, 400 * kUs);
    ASSERT_EQ(r.workloads.front().latencies_ms.size(), 1u);
    EXPECT_DOUBLE_EQ(r.workloads.front().latencies_ms.front(), 0.4);
}

TEST(HostSync, TheHostWaitsForTheKernelThenKeepsItsRecordedGap) {
    Simulator s(sync_case(true));
    s.trace(true);
    const auto r = s.run();
    const auto k = hp_kernels(s);
    ASSERT_EQ(k.size(), 2u);
    EXPECT_EQ(k[0].end, 200 * kUs);
    EXPECT_EQ(k[1].submit, 250 * kUs);  // 200 us + the recorded 50 us gap
    EXPECT_EQ(k[1].end, 450 * kUs);
    const auto& w = r.workloads.front();
    EXPECT_DOUBLE_EQ(w.latencies_ms.front(), 0.45);
    // First token at the first kernel's end; TPOT over the 2 later tokens.
    ASSERT_EQ(w.ttft_ms.size(), 1u);
    EXPECT_DOUBLE_EQ(w.ttft_ms.front(), 0.2);
    EXPECT_DOUBLE_EQ(w.tpot_ms.front(), 0.125);
}

TEST(Arrivals, AnExplicitScheduleQueuesAndStopsAtItsEnd) {
    Scenario sc;
    sc.devices[0] = hws(DeviceKind::kHws);
    sc.duration = 10 * kMs;
    sc.warmup = 0;
    auto hp = workload("hp", 12, timeline({{0, 100 * kUs}}), 0.0, 0.1);
    hp.arrivals = {1 * kMs, 1 * kMs + 50 * kUs};
    sc.workloads = {hp};
    sc.daemon.enabled = false;
    auto r = simulate(sc);
    // The second arrives while the first runs: it waits 50 us. No third.
    EXPECT_EQ(r.workloads.front().latencies_ms, (std::vector<double>{0.1, 0.15}));
    sc.measure_end = 1 * kMs + 20 * kUs;  // only the first is measured
    r = simulate(sc);
    EXPECT_EQ(r.workloads.front().latencies_ms, (std::vector<double>{0.1}));
}

}  // namespace
}  // namespace amdqp::sim
