// The fast analytical path (sim/driver/fast_analytical) against run_scenario in
// "analytical" mode on the scenario of each layout: same validity, same step time, MFU,
// throughput, energy and peak memory to 1e-9 relative (the two differ only in summation
// order), including layouts on part of the base cluster, and the expert parallelism of an
// MoE model.
#include "sim/driver/fast_analytical.hpp"

#include <gtest/gtest.h>

#include "sim/driver/collective_times.hpp"
#include "sim/driver/run.hpp"

namespace hcsim {
namespace {

nlohmann::json doc(int devices, const FastLayout& l) {
  return {{"cluster",
           {{"pools", {{{"preset", "nvidia-a100-80gb-sxm"}, {"count", devices}}}},
            {"topology", {{"type", "nvswitch-cluster"}, {"gpus_per_node", 8}}}}},
          {"workload", {{"model", {{"preset", "megatron-1.7b"}}}, {"global_batch", 64}, {"micro_batch", l.micro_batch}}},
          {"strategy",
           {{"dp", l.dp}, {"tp", l.tp}, {"pp", l.pp}, {"schedule", std::string(l.schedule)}, {"interleave", l.interleave},
            {"recompute", std::string(recompute_name(l.recompute))}, {"zero", l.zero},
            {"sequence_parallel", l.sequence_parallel}}},
          {"simulation", {{"mode", "analytical"}}}};
}

void expect_rel(double fast, double reference, const char* what) {
  EXPECT_NEAR(fast, reference, 1e-9 * std::abs(reference)) << what;
}

class FastAnalyticalTest : public ::testing::Test {
 protected:
  // Base: 64 A100 (8 nodes, fat-tree); its own layout is any valid one.
  Scenario base = parse_scenario(doc(64, {8, 1, 8, 1}), "base.json");
  FastAnalytical fast{base};
};

TEST_F(FastAnalyticalTest, MatchesRunScenarioOnEveryLayout) {
  const std::vector<FastLayout> layouts = {
      {8, 1, 8, 2, "1f1b", 1, Recompute::none, 0, false},
      {4, 4, 4, 1, "interleaved-1f1b", 2, Recompute::selective, 1, true},
      {2, 8, 4, 1, "gpipe", 1, Recompute::full, 0, false},
      {1, 2, 32, 1, "1f1b", 1, Recompute::none, 2, false},
      {4, 2, 8, 1, "interleaved-1f1b", 3, Recompute::selective, 3, true},
      {2, 3, 8, 1, "1f1b", 1, Recompute::none, 1, true},     // 48 of the 64 devices
      {8, 2, 2, 1, "1f1b", 1, Recompute::selective, 0, true},  // 32 of the 64 devices
  };
  for (const FastLayout& l : layouts) {
    SCOPED_TRACE(testing::Message() << "tp " << l.tp << " pp " << l.pp << " dp " << l.dp << " " << l.schedule);
    const int n = l.tp * l.pp * l.dp;
    const RunOutput ref = run_scenario(parse_scenario(doc(n, l), "layout.json"));
    const FastResult r = fast.evaluate(l);
    ASSERT_TRUE(r.valid()) << layout_issue_text(r.issue);
    EXPECT_TRUE(r.fits);
    EXPECT_EQ(r.devices, n);
    expect_rel(r.step_time.value(), ref.metrics.step_time.value(), "step time");
    expect_rel(r.mfu, ref.metrics.mfu, "MFU");
    expect_rel(r.hfu, ref.metrics.hfu, "HFU");
    expect_rel(r.tokens_per_s, ref.metrics.tokens_per_s, "tokens/s");
    expect_rel(r.energy_per_token.value(), ref.metrics.energy_per_token.value(), "J/token");
    expect_rel(r.average_power.value(), ref.metrics.average_power.value(), "power");
    expect_rel(r.it_energy.value(), ref.metrics.it_energy.value(), "IT energy");
    expect_rel(r.bubble_fraction, ref.metrics.bubble_fraction, "bubble fraction");
    EXPECT_EQ(r.collective_schedule, estimate_collective_schedule(parse_scenario(doc(n, l), "layout.json")));
    double peak = 0;
    for (const auto& d : ref.metrics.devices) peak = std::max(peak, d.memory.total().value());
    expect_rel(r.peak_memory.value(), peak, "peak memory");
    // Asked again: the cached collectives give the same figures.
    EXPECT_EQ(fast.evaluate(l).step_time.value(), r.step_time.value());
  }
  EXPECT_GT(fast.cached_collectives(), 0u);
}

TEST_F(FastAnalyticalTest, ResizedClusterHoldsLargerLayouts) {
  // The base's 64 devices grown to a budget of 128: a layout of all 128 equals the
  // scenario written for 128 devices.
  const Scenario grown = resized_cluster(base, 128);
  EXPECT_EQ(grown.device_count(), 128);
  FastAnalytical f(grown);
  const FastLayout l{8, 2, 8, 1, "1f1b", 1, Recompute::selective, 1, true};
  const FastResult r = f.evaluate(l);
  ASSERT_TRUE(r.valid());
  expect_rel(r.step_time.value(), run_scenario(parse_scenario(doc(128, l), "l.json")).metrics.step_time.value(), "step time");
  EXPECT_EQ(fast.evaluate(l).issue, LayoutIssue::too_many_devices);
  EXPECT_THROW(resized_cluster(base, 68), InputError);  // 68 GPUs do not fill nodes of 8
}

// Clusters that differ in their device count alone share the times of collectives inside
// one node (StarTimes, sim/driver/collective_times.hpp): each layout's figures equal those
// of a FastAnalytical of its own (bit for bit), and the tensor-parallel groups of the later
// clusters are found in the table the first one filled.
TEST_F(FastAnalyticalTest, SharedStarTimesGiveTheFiguresOfAClusterAlone) {
  const std::vector<FastLayout> layouts = {
      {8, 2, 2, 1, "1f1b", 1, Recompute::selective, 0, true},
      {4, 2, 4, 2, "interleaved-1f1b", 2, Recompute::none, 1, false},
      {2, 4, 4, 1, "1f1b", 1, Recompute::full, 1, true},
      {4, 1, 8, 1, "1f1b", 1, Recompute::none, 1, true},
  };
  StarTimes shared;
  std::size_t found_before = 0;
  for (const int n : {32, 64, 128}) {
    const Scenario cluster = resized_cluster(base, n);
    FastAnalytical with(cluster, &shared), alone(cluster);
    for (FastLayout l : layouts) {
      l.dp = n / (l.tp * l.pp);
      SCOPED_TRACE(testing::Message() << n << " devices: tp " << l.tp << " pp " << l.pp << " dp " << l.dp);
      const FastResult a = with.evaluate(l), b = alone.evaluate(l);
      ASSERT_TRUE(a.valid()) << layout_issue_text(a.issue);
      EXPECT_EQ(a.step_time.value(), b.step_time.value());
      EXPECT_EQ(a.bubble_fraction, b.bubble_fraction);
      EXPECT_EQ(a.it_energy.value(), b.it_energy.value());
    }
    if (n == 32) found_before = shared.size();
  }
  EXPECT_GT(found_before, 0u);
  EXPECT_EQ(shared.size(), found_before);  // the larger clusters' node groups were all known
}

// A search refuses a layout that does not fit without reading its step time: Timed::
// fitting_only leaves it untimed, and times one that fits as every_layout does.
TEST_F(FastAnalyticalTest, FittingOnlyTimesTheLayoutsThatFit) {
  // 64 sequences of 2,048 tokens at once through 24 unsharded layers without recomputation:
  // hundreds of GB of activations on an 80 GB A100.
  const FastLayout unfit{1, 1, 1, 64, "1f1b", 1, Recompute::none, 0, false};
  const FastResult u = fast.evaluate(unfit, FastAnalytical::Timed::fitting_only), v = fast.evaluate(unfit);
  ASSERT_TRUE(u.valid()) << layout_issue_text(u.issue);
  EXPECT_FALSE(u.fits);
  EXPECT_EQ(u.peak_memory.value(), v.peak_memory.value());
  EXPECT_EQ(u.step_time.value(), 0.0);
  EXPECT_GT(v.step_time.value(), 0.0);
  const FastLayout fits{8, 2, 4, 1, "1f1b", 1, Recompute::selective, 1, true};
  const FastResult a = fast.evaluate(fits, FastAnalytical::Timed::fitting_only), b = fast.evaluate(fits);
  ASSERT_TRUE(a.fits);
  EXPECT_EQ(a.step_time.value(), b.step_time.value());
  EXPECT_EQ(a.energy_per_token.value(), b.energy_per_token.value());
}

TEST_F(FastAnalyticalTest, RejectsWhatTheParserRejects) {
  const std::vector<std::pair<FastLayout, LayoutIssue>> bad = {
      {{16, 1, 4, 1}, LayoutIssue::heads},                                    // 24 heads
      {{8, 1, 16, 1}, LayoutIssue::too_many_devices},                         // 128 > 64
      {{2, 1, 32, 4}, LayoutIssue::batch},                                    // 64 % (4 * 32)
      {{2, 5, 4, 1}, LayoutIssue::uneven_layers},                             // 24 layers over 5 stages
      {{2, 4, 8, 4, "interleaved-1f1b", 2}, LayoutIssue::interleaved_batch},  // 2 micro-batches, pp 4
      {{2, 4, 8, 1, "1f1b", 2}, LayoutIssue::interleave},
      {{2, 4, 8, 1, "zigzag"}, LayoutIssue::schedule},
      {{2, 4, 8, 1, "1f1b", 1, Recompute::none, 0, false, 1, 0, 2}, LayoutIssue::experts},  // ep 2 of a dense model
  };
  for (const auto& [l, issue] : bad) {
    EXPECT_EQ(fast.evaluate(l).issue, issue) << layout_issue_text(issue);
    if (issue == LayoutIssue::too_many_devices) continue;  // the parser sees a bigger cluster instead
    auto d = doc(l.tp * l.pp * l.dp, l);
    d["strategy"]["ep"] = l.ep;
    EXPECT_THROW(parse_scenario(d, "bad.json"), InputError) << layout_issue_text(issue);
  }
}

// The tiny MoE (scenarios/sweeps/tiny-moe.json: 8 experts, 16 H100 in two nodes) with the
// layout `l` on its first tp * pp * dp devices.
nlohmann::json moe_doc(const FastLayout& l) {
  nlohmann::json d = read_json_file(std::string(HCSIM_SOURCE_DIR) + "/scenarios/sweeps/tiny-moe.json");
  d["cluster"]["pools"][0]["count"] = l.tp * l.pp * l.dp;
  d["workload"]["micro_batch"] = l.micro_batch;
  d["strategy"] = {{"dp", l.dp},
                   {"tp", l.tp},
                   {"pp", l.pp},
                   {"ep", l.ep},
                   {"etp", l.etp},
                   {"schedule", std::string(l.schedule)},
                   {"interleave", l.interleave},
                   {"recompute", std::string(recompute_name(l.recompute))},
                   {"zero", l.zero},
                   {"sequence_parallel", l.sequence_parallel}};
  d["simulation"] = {{"mode", "analytical"}};
  return d;
}

// Each layout's own ep: the experts' memory sharded over ep, the all-to-all over the expert
// group, the experts' gradients over the expert replica group (workloads/layout.hpp). The
// base's own ep (8) is not the candidates'.
TEST(FastAnalyticalMoe, MatchesRunScenarioForEveryExpertParallelism) {
  const Scenario base =
      parse_scenario(moe_doc({1, 2, 8, 1, "1f1b", 1, Recompute::none, 1, false, 1, 0, 8}), "moe.json");
  FastAnalytical fast(base);
  const std::vector<FastLayout> layouts = {
      {1, 1, 16, 1, "1f1b", 1, Recompute::none, 1, false, 1, 0, 1},
      {1, 1, 16, 1, "1f1b", 1, Recompute::none, 1, false, 1, 0, 8},  // ep 8 inside a node
      {1, 1, 16, 2, "1f1b", 1, Recompute::selective, 2, false, 1, 0, 4},
      {2, 2, 4, 1, "1f1b", 1, Recompute::selective, 1, true, 1, 0, 8},         // tp 2: expert rank fastest over dp*tp
      {2, 2, 2, 1, "interleaved-1f1b", 2, Recompute::full, 0, true, 1, 0, 2},  // 8 of the 16 devices
      {1, 4, 4, 1, "gpipe", 1, Recompute::none, 0, false, 1, 0, 4},
      {1, 2, 8, 1, "1f1b", 1, Recompute::none, 1, false, 1, 0, 8},
      {1, 1, 16, 1, "1f1b", 1, Recompute::none, 1, false, 1, 0, 4, 2},             // etp 2: all-to-alls at stride 2
      {2, 2, 4, 1, "1f1b", 1, Recompute::selective, 1, true, 1, 0, 2, 4},          // etp 4 over dp*tp = 8
      {1, 2, 8, 1, "interleaved-1f1b", 2, Recompute::full, 0, false, 1, 0, 1, 2},  // etp without ep
  };
  double lightest = 0, heaviest = 0;  // peak memory at ep 1 and ep 8 of the dp 16 layouts
  for (const FastLayout& l : layouts) {
    SCOPED_TRACE(testing::Message() << "tp " << l.tp << " pp " << l.pp << " dp " << l.dp << " ep " << l.ep << " etp "
                                    << l.etp);
    const Scenario sc = parse_scenario(moe_doc(l), "layout.json");
    const RunOutput ref = run_scenario(sc);
    const FastResult r = fast.evaluate(l);
    ASSERT_TRUE(r.valid()) << layout_issue_text(r.issue);
    EXPECT_TRUE(r.fits);
    EXPECT_EQ(r.devices, l.tp * l.pp * l.dp);
    expect_rel(r.step_time.value(), ref.metrics.step_time.value(), "step time");
    expect_rel(r.mfu, ref.metrics.mfu, "MFU");
    expect_rel(r.tokens_per_s, ref.metrics.tokens_per_s, "tokens/s");
    expect_rel(r.energy_per_token.value(), ref.metrics.energy_per_token.value(), "J/token");
    expect_rel(r.bubble_fraction, ref.metrics.bubble_fraction, "bubble fraction");
    EXPECT_EQ(r.collective_schedule, estimate_collective_schedule(sc));
    double peak = 0;
    for (const auto& d : ref.metrics.devices) peak = std::max(peak, d.memory.total().value());
    expect_rel(r.peak_memory.value(), peak, "peak memory");
    if (l.pp == 1 && l.ep == 1) heaviest = peak;
    if (l.pp == 1 && l.ep == 8) lightest = peak;
    if (l.pp == 1 && l.ep == 4 && l.etp == 2) {
      EXPECT_LT(peak, heaviest);  // half of each of 2 experts
    }
  }
  // The experts' weights, gradients and optimizer state are sharded over ep: at ep 8 each
  // device holds one of the 8 experts instead of all 8.
  EXPECT_LT(lightest, heaviest);
  // The layout rules of expert parallelism, as the parser's (workloads/layout.hpp).
  for (const FastLayout& l : std::vector<FastLayout>{
           {1, 1, 16, 1, "1f1b", 1, Recompute::none, 0, false, 1, 0, 3},     // 8 experts % 3
           {1, 1, 4, 1, "1f1b", 1, Recompute::none, 0, false, 1, 0, 8},      // a stage of 4 devices % 8
           {2, 1, 8, 1, "1f1b", 1, Recompute::none, 0, false, 1, 0, 2},      // tp 2 without sequence parallelism
           {1, 1, 16, 1, "1f1b", 1, Recompute::none, 3, false, 1, 0, 2},     // ZeRO-3 of experts
           {1, 1, 16, 1, "1f1b", 1, Recompute::none, 0, false, 1, 0, 8, 4},  // ep * etp = 32 > 16 devices
           {1, 1, 16, 1, "1f1b", 1, Recompute::none, 0, false, 1, 0, 1, 3},  // the experts' 1,792 % 3
       }) {
    EXPECT_EQ(fast.evaluate(l).issue, LayoutIssue::experts) << "tp " << l.tp << " dp " << l.dp << " ep " << l.ep;
    EXPECT_THROW(parse_scenario(moe_doc(l), "bad.json"), InputError) << "ep " << l.ep;
  }
}

TEST_F(FastAnalyticalTest, MemoryBeyondTheDeviceIsReported) {
  // GPT-3 175B on 64 A100 without ZeRO: 2 + 2 + 12 bytes per parameter over tp * pp = 8
  // devices is ~350 GB per device (ZeRO paper accounting), far beyond 80 GB.
  auto big_doc = [](const FastLayout& l, bool check) {
    auto d = doc(64, l);
    d["workload"]["model"]["preset"] = "gpt3-175b";
    d["simulation"]["check_memory"] = check;
    return d;
  };
  const Scenario big = parse_scenario(big_doc({8, 8, 1, 1}, false), "big.json");
  FastAnalytical f(big);
  const FastResult r = f.evaluate({8, 1, 8, 1});
  ASSERT_TRUE(r.valid());
  EXPECT_FALSE(r.fits);
  EXPECT_GT(r.peak_memory.value(), 16.0 * 175e9 / 8 * 0.9);
  // The same issues, stage by stage, as the memory check of run_scenario.
  try {
    run_scenario(parse_scenario(big_doc({8, 1, 8, 1}, true), "big.json"));
    FAIL() << "no memory error";
  } catch (const InputError& e) {
    const std::vector<Issue> issues = f.memory_issues({8, 1, 8, 1});
    ASSERT_EQ(issues.size(), e.issues().size());
    for (std::size_t i = 0; i < e.issues().size(); ++i) {
      EXPECT_EQ(issues[i].path, e.issues()[i].path);
      EXPECT_EQ(issues[i].message, e.issues()[i].message);
    }
  }
}

}  // namespace
}  // namespace hcsim
