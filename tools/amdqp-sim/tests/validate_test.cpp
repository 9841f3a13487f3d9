// SPDX-License-Identifier: MIT
// Validation on the measured H200 dual-model numbers (data/): the
// timeslice model is calibrated on the HP P99 and the LP throughput, which
// was not fitted, is predicted.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdio>
#include <filesystem>
#include <fstream>

#include "pyrandom.hpp"
#include "timeline_json.hpp"
#include "validate.hpp"

namespace amdqp::sim {
namespace {

const std::string kData = AMDQP_SIM_DATA;

TEST(Timeline, LoadsTheContractFormat) {
    const auto t = load_timeline_json(kData + "/h200/resnet18_bs1.json");
    EXPECT_EQ(t.batch, 1);
    EXPECT_DOUBLE_EQ(t.period_s, 0.05);
    ASSERT_EQ(t.requests.size(), 30u);
    EXPECT_EQ(t.requests.front().kernels.size(), 114u);
    EXPECT_EQ(t.requests.front().kernels.front().start, 0);
    EXPECT_EQ(t.requests.front().kernels.front().dur, 30020);
}

TEST(Timeline, ReadsTheKernelClass) {
    const auto t = parse_timeline_json(
        nlohmann::json::parse(R"({"requests": [[[5, 1], [7, 2, "nccl"]]]})"), "inline");
    EXPECT_EQ(t.requests[0].kernels[0].start, 0);  // relative to the first kernel
    EXPECT_EQ(t.requests[0].kernels[1].cls, KernelClass::kNccl);
    EXPECT_THROW(
        parse_timeline_json(nlohmann::json::parse(R"({"requests": [[[0, 1, "x"]]]})"), "inline"),
        std::runtime_error);
}

TEST(Validate, CalibratesOnTheHpP99AndPredictsAnotherNumber) {
    const auto c = load_case(kData + "/h200_dual_r18_r50bs1024.json", kData + "/h200");
    EXPECT_EQ(c.hp.batch, 1);
    EXPECT_EQ(c.lp.batch, 1024);
    CaseSetup s;
    s.device.kind = DeviceKind::kTimeslice;
    s.duration = 20 * kSec;
    const double slice = calibrate(c, s, Knob::kSliceUs);
    EXPECT_GT(slice, 100.0);
    EXPECT_LT(slice, 20000.0);
    auto p = predict(c, s);
    // The fit reproduces the measured P99...
    EXPECT_LT(p.error_pct, 10.0);
    // ...and the LP throughput, not fitted, is predicted and its error printed.
    ASSERT_TRUE(p.lp_error_pct.has_value());
    EXPECT_NEAR(*p.measured_lp, 7.37, 1e-9);
    EXPECT_GT(*p.predicted_lp, 0.0);
    p.calibration = true;
    const auto text = format_prediction(p);
    EXPECT_NE(text.find("LP throughput measured 7.37, predicted "), std::string::npos) << text;
    EXPECT_NE(text.find("calibration case"), std::string::npos) << text;
}

TEST(Validate, SecondCaseGetsItsOwnHpP99Error) {
    // A second measured case with a different contended P99 (written here
    // in the contract format): its error is computed against the model
    // calibrated on the first.
    const auto dir = std::filesystem::temp_directory_path() / "amdqp-sim-validate-test";
    std::filesystem::create_directories(dir);
    auto j = nlohmann::json::parse(std::ifstream(kData + "/h200_dual_r18_r50bs1024.json"));
    j["summary"]["hp_p99_contended_ms"] = 8.0;
    const auto file = (dir / "other.json").string();
    std::ofstream(file) << j.dump();
    const auto cal = load_case(kData + "/h200_dual_r18_r50bs1024.json", kData + "/h200");
    const auto other = load_case(file, kData + "/h200");
    CaseSetup s;
    s.device.kind = DeviceKind::kTimeslice;
    s.duration = 20 * kSec;
    calibrate(cal, s, Knob::kSliceUs);
    const auto p = predict(other, s);
    EXPECT_EQ(p.name, "other");
    // Same workloads, so the same prediction, compared with 8 ms.
    EXPECT_NEAR(p.error_pct, 100.0 * std::abs(p.predicted_p99 - 8.0) / 8.0, 1e-9);
    EXPECT_GT(p.error_pct, 15.0);
    EXPECT_NE(format_prediction(p).find("this run alone: "), std::string::npos);
    std::filesystem::remove_all(dir);
}

TEST(Validate, PercentilesOfPooledSamples) {
    // Three requests stand for one each, one value for three.
    const std::vector<Samples> s{{{1, 2, 3}, 1.0}, {{10}, 3.0}};
    EXPECT_DOUBLE_EQ(weighted_percentile(s, 50), 3.0);  // half of 6 reached at 3
    EXPECT_DOUBLE_EQ(weighted_percentile(s, 51), 10.0);
    EXPECT_DOUBLE_EQ(weighted_percentile(s, 99), 10.0);
    EXPECT_DOUBLE_EQ(linear_percentile({4, 1, 3, 2}, 50), 2.5);
    EXPECT_DOUBLE_EQ(linear_percentile({1, 2, 3, 4, 5}, 99), 4.96);
}

TEST(Validate, RunsOfOneTestArePooledAndTheCalibrationRunLeftOut) {
    std::vector<Case> cases(3);
    std::vector<Prediction> preds(3);
    for (int i = 0; i < 3; ++i) {
        cases[i].name = "run" + std::to_string(i);
        cases[i].group = i < 2 ? "test on gpu" : "calibration on gpu";
        preds[i].name = cases[i].name;
    }
    // Two runs of 4 and 2 requests; each prediction is one value per
    // measured request.
    cases[0].hp_contended_ms = {1, 2, 3, 10};
    cases[1].hp_contended_ms = {4, 20};
    preds[0].measured_p99 = 9.79;
    preds[0].predicted_p99 = 8;
    preds[0].samples = {{1, 2, 3, 8}, 1.0};
    preds[1].measured_p99 = 19.84;
    preds[1].predicted_p99 = 30;
    preds[1].samples = {{5, 30}, 1.0};
    preds[2].calibration = true;
    preds[2].measured_p99 = preds[2].predicted_p99 = 5;
    const auto g = pool(cases, preds, true);  // no host probe here: count them anyway
    ASSERT_EQ(g.size(), 2u);
    EXPECT_EQ(g[0].runs, (std::vector<std::string>{"run0", "run1"}));
    EXPECT_FALSE(g[0].calibration);
    EXPECT_EQ(g[0].measured_requests, 6u);
    // Pooled {1, 2, 3, 4, 10, 20}: P99 linear between 10 and 20 at 0.95.
    EXPECT_DOUBLE_EQ(g[0].measured_p99, 19.5);
    EXPECT_DOUBLE_EQ(g[0].predicted_p99, 30.0);  // the top of {1, 2, 3, 5, 8, 30}
    EXPECT_NEAR(g[0].error_pct, 100.0 * 10.5 / 19.5, 1e-9);
    EXPECT_DOUBLE_EQ(g[0].measured_min, 9.79);
    EXPECT_DOUBLE_EQ(g[0].measured_max, 19.84);
    EXPECT_DOUBLE_EQ(g[0].predicted_min, 8.0);
    EXPECT_DOUBLE_EQ(g[0].predicted_max, 30.0);
    EXPECT_TRUE(g[1].calibration);
    EXPECT_NE(format_group(g[0]).find("validation error: "), std::string::npos);
    EXPECT_EQ(format_group(g[0], true).find("validation error"), std::string::npos);
    EXPECT_NE(format_group(g[0], true).find("what-if error: "), std::string::npos);
    EXPECT_NE(format_group(g[1]).find("calibration case"), std::string::npos);
}

// A small llm_tp result in the driver's format, with its two timelines.
std::string write_llm_case(const std::filesystem::path& dir) {
    std::filesystem::create_directories(dir / "tl");
    nlohmann::json hp{
        {"workload", "llm_tp hp tiny"}, {"rank", 0}, {"tp", 1}, {"batch", 1}, {"period_s", 1.0}};
    // Prefill: one gemm; two decode steps of gemm + other, 200 us apart.
    hp["requests"] = {{{0, 100, "gemm"},
                       {300, 50, "gemm"},
                       {400, 50, "other"},
                       {650, 50, "gemm"},
                       {750, 50, "other"}}};
    nlohmann::json lp{{"workload", "llm_tp lp tiny generate batch 4"},
                      {"rank", 0},
                      {"tp", 1},
                      {"batch", 4},
                      {"period_s", 0.0}};
    lp["requests"] = {{{0, 50, "gemm"}, {500, 50, "other"}}};
    std::ofstream(dir / "tl" / "hp.json") << hp.dump();
    std::ofstream(dir / "tl" / "lp.json") << lp.dump();
    nlohmann::json task{
        {"ttfts_ms", {1.0, 1.0}}, {"tpots_ms", {0.4, 0.4}}, {"ttft_ms", {{"p50", 1.0}}}};
    nlohmann::json r{
        {"experiment", "llm_tp"},
        {"preset", "tiny-tp1-generate"},
        {"device", "GPU"},
        {"config",
         {{"seed", 1},
          {"rate", 1.0},
          {"arrival", "poisson"},
          {"warmup", 5.0},
          {"duration", 30.0},
          {"new_tokens", 2},
          {"lp_batch", 4},
          {"phases", {"hp_alone", "lp_alone", "contended"}},
          {"profile_dir", "/x"}}},
        {"phases",
         {{"hp_alone", {{"tasks", {{"hp", task}}}}}, {"contended", {{"tasks", {{"hp", task}}}}}}},
        {"summary",
         {{"ttft_p99_alone_ms", 1.0},
          {"ttft_p99_contended_ms", 1.2},
          {"tpot_p99_alone_ms", 0.4},
          {"tpot_p99_contended_ms", 0.5},
          {"lp_tokens_per_s_alone", 100.0},
          {"lp_tokens_per_s_contended", 90.0}}}};
    const auto file = (dir / "llm_tp-tiny.json").string();
    std::ofstream(file) << r.dump();
    return file;
}

// write_llm_case() in a fresh folder, its JSON open for edits; load()
// writes the edits back and loads the case.
struct LlmCaseFile {
    std::filesystem::path dir;
    std::string file;
    nlohmann::json doc;
    explicit LlmCaseFile(const char* name) : dir(std::filesystem::temp_directory_path() / name) {
        std::filesystem::remove_all(dir);
        file = write_llm_case(dir);
        std::ifstream(file) >> doc;
    }
    ~LlmCaseFile() { std::filesystem::remove_all(dir); }
    LlmCaseFile(const LlmCaseFile&) = delete;
    LlmCaseFile& operator=(const LlmCaseFile&) = delete;
    Case load() const {
        std::ofstream(file) << doc.dump();
        return load_case(file, (dir / "tl").string());
    }
    // Probe medians (us): the HP job alone and contended, the LP job's
    // the same in both phases (a ratio of 1).
    void set_probe(double hp_alone, double hp_contended, double lp) {
        auto& ph = doc["phases"];
        ph["hp_alone"]["tasks"]["hp"]["host_probe"] = {{"median_us", hp_alone}};
        ph["contended"]["tasks"]["hp"]["host_probe"] = {{"median_us", hp_contended}};
        ph["lp_alone"]["tasks"]["lp"]["host_probe"] = {{"median_us", lp}};
        ph["contended"]["tasks"]["lp"] = {{"host_probe", {{"median_us", lp}}}};
    }
};

TEST(Validate, LoadsAnLlmRunWithTheDriversArrivalsAndItsFirstToken) {
    const auto dir = std::filesystem::temp_directory_path() / "amdqp-sim-llm-test";
    std::filesystem::remove_all(dir);
    const auto file = write_llm_case(dir);
    const auto c = load_case(file, (dir / "tl").string());
    EXPECT_EQ(c.experiment, Experiment::kLlmTp);
    EXPECT_EQ(c.metric(), "TTFT P99");
    EXPECT_EQ(c.group, "llm_tp tiny-tp1-generate, default intra-op threads on GPU");
    // hp_alone is the HP job's command 0, the profile 1, contended 2.
    EXPECT_EQ(c.hp_arrivals_alone, arrival_schedule(1.0, 35.0, true, 7919));
    EXPECT_EQ(c.hp_arrivals_contended, arrival_schedule(1.0, 35.0, true, 7921));
    EXPECT_EQ(c.hp.requests.front().first_token, 0u);
    EXPECT_EQ(c.hp.requests.front().syncs, (std::vector<std::size_t>{0, 2}));
    EXPECT_DOUBLE_EQ(c.hp_p99_contended, 1.2);
    ASSERT_TRUE(c.tpot_p99_contended);
    CaseSetup s;
    s.device.kind = DeviceKind::kTimeslice;
    const auto p = predict(c, s);
    EXPECT_EQ(p.metric, "TTFT P99");
    ASSERT_TRUE(p.tpot_error_pct);
    ASSERT_TRUE(p.lp_error_pct);
    EXPECT_TRUE(p.host_from_requests);
    // Launches 3x slower in the contended phase: the decode steps, 300 us
    // of launches each, take longer (the prefill is one kernel at 0).
    CaseSetup slow = s;
    slow.launch_stretch = 3.0;
    const auto ps = predict(c, slow);
    ASSERT_TRUE(p.predicted_tpot && ps.predicted_tpot);
    EXPECT_GT(*ps.predicted_tpot, *p.predicted_tpot + 0.3);
    std::filesystem::remove_all(dir);
}

TEST(Validate, GroupsLlmRunsByThreadsAndPinning) {
    LlmCaseFile f("amdqp-sim-llm-group-test");
    f.doc["config"]["intra_op_threads"] = 1;
    f.doc["config"]["cpu_sets"] = {{"hp", {{0}}}, {"lp", {{1}}}};
    EXPECT_EQ(f.load().group,
              "llm_tp tiny-tp1-generate, 1 intra-op thread(s), pinned cores on GPU");
}

TEST(Validate, HostProbeRatiosStretchEachJobAndOnlyProbedRunsValidate) {
    LlmCaseFile f("amdqp-sim-llm-probe-test");
    const auto plain = f.load();
    EXPECT_FALSE(plain.has_host_probe());
    f.set_probe(10.0, 30.0, 8.0);
    const auto c = f.load();
    ASSERT_TRUE(c.has_host_probe());
    EXPECT_DOUBLE_EQ(*c.hp_host_ratio, 3.0);
    EXPECT_DOUBLE_EQ(*c.lp_host_ratio, 1.0);
    EXPECT_EQ(c.group, "llm_tp tiny-tp1-generate, default intra-op threads, host probe on GPU");

    CaseSetup s;
    s.device.kind = DeviceKind::kTimeslice;
    const auto probed = predict(c, s);
    CaseSetup off = s;
    off.host_probe = false;
    const auto gpu_only = predict(c, off);
    CaseSetup uniform = s;
    uniform.launch_stretch = 3.0;
    const auto what_if = predict(c, uniform);
    ASSERT_TRUE(probed.predicted_tpot && gpu_only.predicted_tpot && what_if.predicted_tpot);
    // The HP's launches 3x slower: its 300 us decode steps grow by ~600 us.
    EXPECT_GT(*probed.predicted_tpot, *gpu_only.predicted_tpot + 0.3);
    EXPECT_NEAR(*probed.predicted_tpot, *what_if.predicted_tpot, 0.05);
    EXPECT_DOUBLE_EQ(*probed.hp_host_ratio, 3.0);
    EXPECT_FALSE(gpu_only.hp_host_ratio);
    EXPECT_EQ(gpu_only.predicted_tpot, predict(plain, s).predicted_tpot);

    // Only the probed run's group counts, unless every run is to.
    const std::vector<Case> cases{c, plain};
    const std::vector<Prediction> preds{probed, predict(plain, s)};
    const auto g = pool(cases, preds);
    ASSERT_EQ(g.size(), 2u);
    EXPECT_TRUE(g[0].host_probe && g[0].validated);
    EXPECT_FALSE(g[1].host_probe || g[1].validated);
    EXPECT_NE(format_group(g[1]).find("GPU-only error: "), std::string::npos);
    EXPECT_EQ(format_group(g[1]).find("validation error"), std::string::npos);
    EXPECT_TRUE(pool(cases, preds, true)[1].validated);
}

TEST(Validate, RunsTheModelWasChosenOnAreListedNotCounted) {
    LlmCaseFile f("amdqp-sim-llm-design-test");
    f.set_probe(10.0, 30.0, 8.0);
    auto c = f.load();
    c.design = true;
    CaseSetup s;
    s.device.kind = DeviceKind::kTimeslice;
    const auto g = pool({c}, {predict(c, s)});
    ASSERT_EQ(g.size(), 1u);
    EXPECT_TRUE(g[0].host_probe && g[0].design);
    EXPECT_FALSE(g[0].validated);
    EXPECT_NE(format_group(g[0]).find("the model was chosen on these runs; not counted"),
              std::string::npos);
    EXPECT_EQ(format_group(g[0]).find("validation error"), std::string::npos);
    EXPECT_TRUE(pool({c}, {predict(c, s)}, true)[0].validated);
}

TEST(Validate, QueueNoiseReplaysEveryContendedRequestWithEveryAloneResidual) {
    LlmCaseFile f("amdqp-sim-llm-queue-noise-test");
    f.set_probe(10.0, 30.0, 8.0);
    // Every measured request of both phases (arrivals after the 5 s warm-up).
    const auto first = f.load();
    const auto measured = [](const std::vector<double>& at) {
        return static_cast<std::size_t>(
            std::count_if(at.begin(), at.end(), [](double a) { return a >= 5.0; }));
    };
    for (const auto& [phase, n] : {std::pair{"hp_alone", measured(first.hp_arrivals_alone)},
                                   std::pair{"contended", measured(first.hp_arrivals_contended)}}) {
        auto& hp = f.doc["phases"][phase]["tasks"]["hp"];
        hp["ttfts_ms"] = std::vector<double>(n, 1.0);
        hp["tpots_ms"] = std::vector<double>(n, 0.4);
    }
    const auto c = f.load();
    ASSERT_GT(c.hp_alone_ms.size(), 10u);
    CaseSetup s;
    s.device.kind = DeviceKind::kTimeslice;
    CaseSetup q = s;
    q.queue_noise = true;
    const auto p = predict(c, q);
    EXPECT_EQ(p.samples.values.size(), c.hp_contended_ms.size() * c.hp_alone_ms.size());
    EXPECT_DOUBLE_EQ(p.samples.weight * static_cast<double>(p.samples.values.size()),
                     static_cast<double>(c.hp_contended_ms.size()));
    // TPOT keeps its composition.
    EXPECT_EQ(p.predicted_tpot, predict(c, s).predicted_tpot);
}

TEST(Validate, OverlappedHostResidualsAreAbsorbedByTheGpuExcess) {
    // Alone 5 ms; contended 6 (1 ms GPU excess) and 9 (4 ms); residuals
    // -1, 0.5 and 3 ms.
    const auto s = compose_overlapped({6, 9}, {-1, 0.5, 3}, 5, 12);
    EXPECT_EQ(s.values, (std::vector<double>{5, 6, 8, 8, 9, 9}));
    EXPECT_DOUBLE_EQ(s.weight, 2.0);
}

TEST(Validate, HostFactorsAreTheMedianOfTheNearestProbeSamples) {
    const std::vector<double> t{0, 1, 2, 3, 4, 5, 6, 7, 8, 9};
    const std::vector<double> us{10, 10, 10, 10, 10, 20, 20, 20, 20, 20};
    // At 4.6 s the five nearest are 5, 4, 6, 3, 7 s: 20, 10, 20, 10, 20.
    EXPECT_EQ(host_factors(t, us, {0.0, 9.0, 4.6, -3.0}, 10.0),
              (std::vector<double>{1.0, 2.0, 2.0, 1.0}));
    EXPECT_EQ(host_factors(t, us, {4.6}, 10.0, 1), (std::vector<double>{2.0}));
    EXPECT_TRUE(host_factors({}, {}, {1.0}, 10.0).empty());
}

TEST(Validate, TimedProbeSamplesGiveEachRequestItsOwnHostFactor) {
    LlmCaseFile f("amdqp-sim-llm-timed-test");
    // Host 3x slower for the first 15 s of the window, normal after: the
    // median is 3.0 (six of eleven samples), the late requests' factor 1.
    f.set_probe(10.0, 30.0, 8.0);
    auto& hp = f.doc["phases"]["contended"]["tasks"]["hp"];
    hp["host_probe_t_s"] = {0, 3, 6, 9, 12, 15, 18, 21, 24, 27, 29};
    hp["host_probe_us"] = {30, 30, 30, 30, 30, 30, 10, 10, 10, 10, 10};
    const auto c = f.load();
    ASSERT_EQ(c.hp_host_factors.size(), c.hp_arrivals_contended.size());
    for (std::size_t i = 0; i < c.hp_arrivals_contended.size(); ++i) {
        const double at = c.hp_arrivals_contended[i] - c.warmup_s;
        if (at < 10) {
            EXPECT_DOUBLE_EQ(c.hp_host_factors[i], 3.0) << at;
        } else if (at > 22) {
            EXPECT_DOUBLE_EQ(c.hp_host_factors[i], 1.0) << at;
        }
    }
    CaseSetup s;
    s.device.kind = DeviceKind::kTimeslice;
    const auto timed = predict(c, s);
    ASSERT_TRUE(timed.hp_host_min && timed.hp_host_max);
    EXPECT_DOUBLE_EQ(*timed.hp_host_min, 1.0);
    EXPECT_DOUBLE_EQ(*timed.hp_host_max, 3.0);
    auto flat = c;
    flat.hp_host_factors.clear();  // the median, 3.0, for every request
    const auto p_flat = predict(flat, s);
    ASSERT_TRUE(timed.predicted_tpot && p_flat.predicted_tpot);
    EXPECT_LT(weighted_percentile({timed.tpot_samples}, 50),
              weighted_percentile({p_flat.tpot_samples}, 50));
}

}  // namespace
}  // namespace amdqp::sim
