// Representative flows (sim/engine/collective_replay.hpp): under symmetry, a collective's
// flows between devices that run nothing are not SimGrid activities; the flows a built
// device sends or receives, plus the phase's slowest, stand for them, and the others load
// the links as mirrors do. What must hold:
//   - the step equals the full simulation (every device built, every flow an activity):
//     measured to the last bit with ZeRO-1 and with ZeRO-3's per-unit gathers, bound 1e-9
//     (when the stand-ins came they were +9.1e-5 and -1.1e-3 off, and symmetry with every
//     flow of the built ranks' collectives replayed +1.8e-3 and +3.0e-3); so is the run
//     with every such flow (simulation.representative_flows false), which has 1.2 and 3.1
//     times the activities (2,497 against 2,105; 12,986 against 4,250);
//   - the bytes on every class of link and of every communication class are exactly the
//     full run's (the stand-ins' bytes are counted on their routes);
//   - the engine's activities do not grow with the data-parallel degree.
// The case: 2 pipeline stages x TP 8 on H100 nodes of 8 behind a rail-optimised RoCE
// fabric: every hop of a data-parallel ring crosses the fabric (a uniform phase, where
// stand-ins apply), and the two stages' rings share the spines with each other and with
// the pipeline sends (the sharing that only the dynamic stretch of rest flows keeps).
#include <gtest/gtest.h>

#include <string>

#include "scenarios/scenario.hpp"
#include "sim/driver/run.hpp"

namespace hcsim {
namespace {

nlohmann::json layout(int dp, int zero) {
  return {{"cluster",
           {{"pools", {{{"preset", "nvidia-h100-sxm5"}, {"count", dp * 8 * 2}}}},
            {"topology",
             {{"type", "nvswitch-cluster"},
              {"gpus_per_node", 8},
              {"nvlink", {{"preset", "nvlink4"}}},
              {"nic", {{"preset", "roce-400g"}}},
              {"fabric", "rail-optimised"},
              {"switch_radix", 16}}}}},
          {"workload", {{"model", {{"preset", "gpt3-1.3b"}}}, {"global_batch", dp * 8}, {"micro_batch", 1}}},
          {"strategy", {{"dp", dp}, {"tp", 8}, {"pp", 2}, {"schedule", "1f1b"}, {"zero", zero}}}};
}

RunOutput run(nlohmann::json doc, bool symmetry, bool representatives = true) {
  doc["simulation"] = {{"mode", "event"}, {"symmetry", symmetry}, {"representative_flows", representatives}};
  return run_scenario(parse_scenario(doc, "representative.json"));
}

// Flow mode by phases; `representatives` false runs every flow of the built ranks' collectives.
RunOutput run_flow(nlohmann::json doc, bool symmetry, bool representatives = true,
                   const std::string& algorithm = "auto") {
  doc["simulation"] = {{"mode", "flow"},
                       {"flow_schedule", "phases"},
                       {"symmetry", symmetry},
                       {"representative_flows", representatives},
                       {"collective_algorithm", algorithm}};
  return run_scenario(parse_scenario(doc, "representative.json"));
}

void expect_same_traffic(const Metrics& sym, const Metrics& full) {
  for (std::size_t k = 0; k < sym.comm_bytes.size(); ++k)
    EXPECT_NEAR(sym.comm_bytes[k].value(), full.comm_bytes[k].value(), 1e-9 * full.comm_bytes[k].value()) << "class " << k;
  ASSERT_EQ(sym.links.size(), full.links.size());
  for (std::size_t k = 0; k < sym.links.size(); ++k)
    EXPECT_NEAR(sym.links[k].bytes.value(), full.links[k].bytes.value(), 1e-9 * full.links[k].bytes.value())
        << sym.links[k].link_class;
}

TEST(RepresentativeFlows, SymmetricStepMatchesEveryFlowSimulatedWithZero1) {
  const auto doc = layout(16, 1);
  const RunOutput sym = run(doc, true), full = run(doc, false), every = run(doc, true, false);
  EXPECT_NEAR(sym.metrics.step_time.value() / full.metrics.step_time.value(), 1.0, 1e-9);
  EXPECT_NEAR(every.metrics.step_time.value() / full.metrics.step_time.value(), 1.0, 1e-9);
  expect_same_traffic(sym.metrics, full.metrics);
  expect_same_traffic(every.metrics, full.metrics);
  EXPECT_GT(every.engine.activities, sym.engine.activities);
}

TEST(RepresentativeFlows, SymmetricStepMatchesEveryFlowSimulatedWithPerUnitZero3) {
  const auto doc = layout(16, 3);
  const RunOutput sym = run(doc, true), full = run(doc, false), every = run(doc, true, false);
  EXPECT_NEAR(sym.metrics.step_time.value() / full.metrics.step_time.value(), 1.0, 1e-9);
  EXPECT_NEAR(every.metrics.step_time.value() / full.metrics.step_time.value(), 1.0, 1e-9);
  expect_same_traffic(sym.metrics, full.metrics);
  expect_same_traffic(every.metrics, full.metrics);
  EXPECT_GT(every.engine.activities, 2 * sym.engine.activities);
}

TEST(RepresentativeFlows, EngineActivitiesDoNotGrowWithDataParallelRanks) {
  for (int zero : {1, 3}) {
    const RunOutput at8 = run(layout(8, zero), true), at16 = run(layout(16, zero), true);
    EXPECT_EQ(at8.engine.activities, at16.engine.activities) << "zero " << zero;
    // With every flow simulated the run has 69-75 times as many activities at dp 16.
    EXPECT_GT(run(layout(16, zero), false).engine.activities, 50 * at16.engine.activities) << "zero " << zero;
  }
}

// Tensor parallelism of 16 over two nodes of 8: the multi-ring's phases mix NVLink hops and
// network hops (two classes of flows), and symmetry builds one tensor rank per stage. The
// built rank's flows meet both classes, so the other ranks' flows are stand-ins too. What
// holds: the step equals the full simulation's (measured: equal to the last bit at dp 1 and
// 2; bound 1e-9), the same bytes per link, and the full run has more than 5 times the
// activities (measured 8.5 and 16.9 times: 12,106 and 12,166 against 102,328 and 205,808;
// with every flow of the tensor collectives replayed, 66,538 at dp 1: 1.5 times).
nlohmann::json wide_tensor_layout(int dp) {
  nlohmann::json doc = layout(dp, 1);
  doc["cluster"]["pools"][0]["count"] = dp * 16 * 2;
  doc["workload"]["global_batch"] = dp * 8;
  doc["strategy"]["tp"] = 16;
  doc["strategy"]["sequence_parallel"] = true;
  return doc;
}

TEST(RepresentativeFlows, TensorRingsAcrossANodeEdgeStandForTheirTwins) {
  for (int dp : {1, 2}) {
    const auto doc = wide_tensor_layout(dp);
    const RunOutput sym = run(doc, true), full = run(doc, false);
    EXPECT_NEAR(sym.metrics.step_time.value() / full.metrics.step_time.value(), 1.0, 1e-9) << "dp " << dp;
    expect_same_traffic(sym.metrics, full.metrics);
    EXPECT_GT(full.engine.activities, 5 * sym.engine.activities) << "dp " << dp;
  }
}

// Flow mode by phases (docs/network.md) takes the same stand-ins: a rank's timer runs where
// it sends or receives a flow that runs, and the transfers that do not run arrive with the
// last of their step's that do. On these layouts the step equals both references to the
// last bit (measured: 0.10112362983088811 s with ZeRO-1, 0.12842996403406481 s with ZeRO-3,
// 0.1478599599427099 s with TP 16 across two nodes at dp 2; bound 1e-9): every device built, and symmetry with every
// flow of the built ranks' collectives in the network model (`representative_flows`
// false, what flow mode by phases ran before). The activities stay put from dp 8 to 16
// (measured 6,071 and 10,002), where the two references have 2.5-3.5 and 58-62 times as
// many (TP 16: 19,947 against 268,176 with every device built).
TEST(RepresentativeFlows, FlowModeByPhasesMatchesEveryFlowSimulated) {
  for (int zero : {1, 3}) {
    const auto doc = layout(16, zero);
    const RunOutput rep = run_flow(doc, true), every = run_flow(doc, true, false), full = run_flow(doc, false);
    EXPECT_NEAR(rep.metrics.step_time.value() / full.metrics.step_time.value(), 1.0, 1e-9) << "zero " << zero;
    EXPECT_NEAR(rep.metrics.step_time.value() / every.metrics.step_time.value(), 1.0, 1e-9) << "zero " << zero;
    expect_same_traffic(rep.metrics, full.metrics);
    expect_same_traffic(every.metrics, full.metrics);
    EXPECT_EQ(run_flow(layout(8, zero), true).engine.activities, rep.engine.activities) << "zero " << zero;
    EXPECT_GT(every.engine.activities, 2 * rep.engine.activities) << "zero " << zero;
    EXPECT_GT(full.engine.activities, 50 * rep.engine.activities) << "zero " << zero;
  }
  const auto doc = wide_tensor_layout(2);
  const RunOutput rep = run_flow(doc, true), full = run_flow(doc, false);
  EXPECT_NEAR(rep.metrics.step_time.value() / full.metrics.step_time.value(), 1.0, 1e-9);
  expect_same_traffic(rep.metrics, full.metrics);
  EXPECT_GT(full.engine.activities, 10 * rep.engine.activities);
}

// Stand-ins in flow mode only where every rank of a flow step sends as many flows and
// receives as many (flow_collectives.cpp). A double binary tree's ranks have different
// roles and drift apart: with stand-ins its data-parallel reductions made the step 4.1 %
// fast (0.10208 s against 0.10646 s); they now run every flow, and the step is the full
// simulation's. Halving-doubling's pairwise exchanges keep the stand-ins (measured: the
// full simulation's step to the last bit, with 11,587 activities against 41,091 with
// every flow). Bound 1e-9.
TEST(RepresentativeFlows, FlowModeStandInsOnlyWhereRanksKeepInStep) {
  const auto doc = layout(16, 1);
  for (const char* algorithm : {"double_binary_tree", "halving_doubling"}) {
    const RunOutput rep = run_flow(doc, true, true, algorithm), full = run_flow(doc, false, true, algorithm);
    EXPECT_NEAR(rep.metrics.step_time.value() / full.metrics.step_time.value(), 1.0, 1e-9) << algorithm;
    expect_same_traffic(rep.metrics, full.metrics);
  }
  const RunOutput every = run_flow(doc, true, false, "halving_doubling"),
                  rep = run_flow(doc, true, true, "halving_doubling");
  EXPECT_GT(every.engine.activities, 3 * rep.engine.activities);
}

}  // namespace
}  // namespace hcsim
