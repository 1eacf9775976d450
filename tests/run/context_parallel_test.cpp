// Context parallelism end to end: symmetry (CP ranks simulated once) matches the full
// simulation within 0.1 %, the analytical mode matches the event mode within 2 %, the
// layout and sequence rules are input errors naming /strategy/cp, and the shipped long-
// context scenario fits with cp = 8 where cp = 1 does not (Llama 3 trains 128K contexts
// with CP, Dubey et al. 2024 §3.3.4).
#include <gtest/gtest.h>

#include "scenarios/scenario.hpp"
#include "sim/driver/run.hpp"

namespace hcsim {
namespace {

// A small GPT (4 layers, h = 1024, s = 2048) on one 8-GPU A100 NVSwitch node.
nlohmann::json doc(int dp, int cp, int tp, int pp, int batch) {
  return {{"cluster",
           {{"pools", {{{"preset", "nvidia-a100-80gb-sxm"}, {"count", dp * cp * tp * pp}}}},
            {"topology", {{"type", "nvswitch-cluster"}, {"gpus_per_node", 8}}}}},
          {"workload",
           {{"model",
             {{"type", "gpt"},
              {"overrides", {{"layers", 4}, {"hidden", 1024}, {"heads", 16}, {"vocab", 1024}, {"seq_len", 2048}}}}},
            {"global_batch", batch},
            {"micro_batch", 1}}},
          {"strategy", {{"dp", dp}, {"cp", cp}, {"tp", tp}, {"pp", pp}}}};
}

Metrics run(nlohmann::json d, const char* mode, bool symmetry) {
  d["simulation"] = {{"mode", mode}, {"symmetry", symmetry}};
  return run_scenario(parse_scenario(d, "test.json")).metrics;
}

TEST(ContextParallelRun, SymmetryMatchesFullSimulation) {
  // Symmetry builds the whole context-parallel ring of the first data-parallel rank (a ring
  // across a node edge is not symmetric) and mirrors the other data-parallel ranks.
  for (const auto& d : {doc(2, 2, 2, 1, 8), doc(2, 4, 1, 2, 8)}) {
    const Metrics full = run(d, "event", false), sym = run(d, "event", true);
    EXPECT_LT(sym.simulated_devices, full.simulated_devices);
    EXPECT_NEAR(sym.step_time.value() / full.step_time.value(), 1.0, 1e-9) << d["strategy"].dump();
    EXPECT_NEAR(sym.model_flops / full.model_flops, 1.0, 1e-9);
  }
}

TEST(ContextParallelRun, AnalyticalMatchesEvent) {
  // Uniform layers; NVLink slowed to 25 GB/s so a ring send outlasts an attention block
  // (exposed). Gradients reduced after the last backward: nothing shares a link with the
  // ring, and the closed form t/cp + (cp-1) max(tau, t/cp) per ring is the event timeline's.
  nlohmann::json d = doc(1, 8, 1, 1, 8);
  d["cluster"]["topology"]["nvlink"] = {{"preset", "nvlink3"}, {"bandwidth", "25 GB/s"}};
  d["strategy"]["overlap_dp"] = false;
  const Metrics event = run(d, "event", true);
  EXPECT_GT(event.devices[0].exposed_comm[static_cast<std::size_t>(CommClass::cp)].value(), 0);
  EXPECT_NEAR(run(d, "analytical", true).step_time.value() / event.step_time.value(), 1.0, 1e-6);
  // With tensor and pipeline parallelism and overlapped gradient buckets (which the event
  // mode lets contend with the ring): within 2 %, as the other layouts (tests/run/modes_test).
  const auto d2 = doc(1, 2, 2, 2, 8);
  EXPECT_NEAR(run(d2, "analytical", true).step_time.value() / run(d2, "event", true).step_time.value(), 1.0, 0.02);
}

TEST(ContextParallelRun, RingSendsAreReportedAsCpTraffic) {
  const Metrics m = run(doc(1, 8, 1, 1, 2), "event", true);
  EXPECT_GT(m.comm_bytes[static_cast<std::size_t>(CommClass::cp)].value(), 0);
  // Same model FLOPs per step as without CP (the tokens are split, not repeated).
  const Metrics one = run(doc(8, 1, 1, 1, 8), "event", true);
  EXPECT_NEAR(m.model_flops * 4 / one.model_flops, 1.0, 1e-9);  // a quarter of the batch
}

std::string first_path(const nlohmann::json& d) {
  try {
    parse_scenario(d, "test.json");
  } catch (const InputError& e) {
    return e.issues().front().path;
  }
  return "";
}

TEST(ContextParallelRun, LayoutAndSequenceRulesNameTheCpPath) {
  nlohmann::json d = doc(1, 8, 1, 1, 8);
  d["strategy"]["cp"] = 4;  // 4 devices of the layout on a cluster of 8
  EXPECT_EQ(first_path(d), "/strategy/cp");
  d = doc(1, 8, 1, 1, 8);
  d["workload"]["model"]["overrides"]["seq_len"] = 2044;  // not divisible by 8
  EXPECT_EQ(first_path(d), "/strategy/cp");
  d["workload"]["model"]["overrides"]["seq_len"] = 2056;  // 257 tokens per rank: no two causal chunks
  EXPECT_EQ(first_path(d), "/strategy/cp");
  d["workload"]["model"]["overrides"]["seq_len"] = 2064;  // 258 per rank
  EXPECT_EQ(first_path(d), "");
}

const std::string kLongContext = std::string(HCSIM_SOURCE_DIR) + "/scenarios/llama3-8b-long-context-cp.json";

TEST(ContextParallelRun, LongContextFitsOnlyWithCp) {
  register_builtins();
  const RunOutput cp8 = run_scenario(load_scenario(kLongContext));
  EXPECT_TRUE(cp8.metrics.memory_fits);
  EXPECT_GT(cp8.metrics.step_time.value(), 0);
  try {
    run_scenario(load_scenario(kLongContext, {"/strategy/cp=1", "/strategy/dp=8"}));
    ADD_FAILURE() << "cp = 1 at a 128K context should not fit in 80 GB";
  } catch (const InputError& e) {
    EXPECT_EQ(e.issues().front().path, "/strategy");
    EXPECT_NE(e.issues().front().message.find("does not fit in memory"), std::string::npos);
  }
}

}  // namespace
}  // namespace hcsim
