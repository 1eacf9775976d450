// Mixture of experts through the whole run: the shipped Mixtral 8x7B scenario in event, flow
// and analytical mode within 2 % of each other (the step plan read three ways); an expert
// group across two nodes with symmetry against the full simulation; the dispatch and
// combine traffic in the report; a skewed routing costing what its busiest rank
// computes; and expert tensor parallelism in the three modes.
#include <gtest/gtest.h>

#include "../support/paths.hpp"
#include "../support/small_moe_doc.hpp"
#include "scenarios/scenario.hpp"
#include "sim/collectives/cost.hpp"
#include "sim/driver/collective_times.hpp"
#include "sim/driver/run.hpp"
#include "sim/report/report.hpp"

namespace hcsim {
namespace {

Metrics run(nlohmann::json doc, const char* mode, bool symmetry = true) {
  doc["simulation"] = {{"mode", mode}, {"symmetry", symmetry}};
  return run_scenario(parse_scenario(doc, "test.json")).metrics;
}

constexpr auto kEp = static_cast<std::size_t>(CommClass::ep);
constexpr auto kDp = static_cast<std::size_t>(CommClass::dp);

TEST(MoeRun, MixtralOn64H100AgreesInEventFlowAndAnalyticalMode) {
  const nlohmann::json doc = read_json_file(kSource + "/scenarios/mixtral-8x7b-h100-64.json");
  const Metrics event = run(doc, "event");
  const Metrics flow = run(doc, "flow");
  const Metrics analytical = run(doc, "analytical");
  EXPECT_NEAR(flow.step_time.value() / event.step_time.value(), 1.0, 0.02);
  EXPECT_NEAR(analytical.step_time.value() / event.step_time.value(), 1.0, 0.02);
  // The all-to-alls are on the critical path in every mode.
  for (const Metrics* m : {&event, &flow, &analytical}) EXPECT_GT(m->devices[0].exposed_comm[kEp].value(), 0.0);
  EXPECT_NEAR(analytical.devices[0].exposed_comm[kEp].value() / event.devices[0].exposed_comm[kEp].value(), 1.0, 0.02);
}

// The shipped DeepSeek-V3 scenario (2,048 H800, EP 64 over 8 nodes, PP 16, DualPipe with its
// pairs overlapped, their collectives one after another on one stream, DeepEP and FP8
// dispatch). The analytical mode does not see links shared between collectives that run at
// once: the pipeline sends and ZeRO-1's collectives beside the other micro-batches'
// all-to-alls (docs/validation.md). Flow mode (~9 min) is scripts/bench/run.sh --only deepseek.
TEST(MoeRun, DeepSeekV3On2048H800AgreesInEventAndAnalyticalMode) {
  const nlohmann::json doc = read_json_file(kSource + "/scenarios/deepseek-v3-h800-2048.json");
  const Metrics event = run(doc, "event");
  const Metrics analytical = run(doc, "analytical");
  // Issue #18's bound for the three modes: 2 %. Measured: analytical 0.27 % below event (29.71
  // against 29.79 s); flow (scripts/bench/run.sh --only deepseek, 9 minutes) 0.004 % above it.
  EXPECT_NEAR(analytical.step_time.value() / event.step_time.value(), 1.0, 0.02);
}

// DeepSeek-V3's shape cut to 4 layers (the first dense) on 256 H800, pp 2 x dp 128, ep 64:
// each stage has two expert groups of 8 nodes, and on rail-optimised leaves of 20 nodes
// (radix 40) stage 1's first group (nodes 16-23) straddles a leaf edge while its sibling
// (nodes 24-31) does not. "auto" chooses one algorithm for both (collective_algorithms_test.cpp),
// so the symmetric modes, which cost the first group with its sibling's traffic, agree with
// the full simulation, in which each group runs its own. (Chosen group by group, the first
// ran the flat exchange, and the symmetric modes, charging the sibling as its translate,
// were 27-64 % slower than the full simulation.) Measured: event 1.160 s, flow 1.159 s,
// analytical 1.150 s against the full simulation's 1.156 s.
TEST(MoeRun, ExpertGroupsAcrossALeafEdgeAgreeWithAndWithoutSymmetry) {
  nlohmann::json doc = read_json_file(kSource + "/scenarios/deepseek-v3-h800-2048.json");
  doc["cluster"]["pools"][0]["count"] = 256;
  doc["cluster"]["topology"]["switch_radix"] = 40;
  doc["workload"]["model"]["overrides"] = {{"layers", 4}, {"moe_first_dense", 1}};
  doc["workload"]["global_batch"] = 512;
  doc["strategy"] = {{"dp", 128},          {"tp", 1}, {"pp", 2}, {"ep", 64}, {"schedule", "1f1b"}, {"zero", 1},
                     {"recompute", "full"}};
  const double full = run(doc, "event", false).step_time.value();
  EXPECT_NEAR(run(doc, "event").step_time.value() / full, 1.0, 0.01);
  EXPECT_NEAR(run(doc, "flow").step_time.value() / full, 1.0, 0.01);
  EXPECT_NEAR(run(doc, "analytical").step_time.value() / full, 1.0, 0.01);
}

// 32 GPUs in four nodes of 8, a 4-layer MoE with 16 experts; ep 16 spans two nodes.
// The shared small MoE (tests/support/small_moe_doc.hpp) on 32 GPUs, dp 16, pp 2.
nlohmann::json small(int ep, double skew) { return testing::small_moe_doc(32, 16, 2, ep, skew); }

TEST(MoeRun, ExpertGroupAcrossNodesWithSymmetryMatchesTheFullSimulation) {
  const nlohmann::json doc = small(16, 0);
  const Metrics sym = run(doc, "event", true), full = run(doc, "event", false);
  EXPECT_NEAR(sym.step_time.value() / full.step_time.value(), 1.0, 5e-4);
  for (std::size_t k = 0; k < sym.comm_bytes.size(); ++k)
    EXPECT_NEAR(sym.comm_bytes[k].value(), full.comm_bytes[k].value(), 1e-9 * full.comm_bytes[k].value())
        << "class " << k;
  EXPECT_GT(full.comm_bytes[kEp].value(), 0.0);
  EXPECT_NEAR(run(doc, "analytical").step_time.value() / full.step_time.value(), 1.0, 0.02);
}

TEST(MoeRun, DeepepDispatchAcrossTwoNodesAgreesInEventAndAnalyticalMode) {
  // ep 16 over two nodes of 8, 16 experts, top-2: a token reaches D = 2 (1 - C(8, 2)/C(16, 2))
  // = 1.533 nodes, so DeepEP's rail messages carry D/k = 0.767 of the all-to-all's
  // node-crossing bytes (sim/collectives/deepep.hpp). Analytical mode charges per stage
  // 2 MoE layers x 4 all-to-alls x 4 micro-batches of the cost model's "deepep" time on
  // n k h bf16 bytes per rank (n = 2,048 tokens, k = 2, h = 2,048); event mode replays the
  // same schedules as flows.
  nlohmann::json doc = small(16, 0);
  doc["strategy"]["moe_dispatch"] = "deepep";
  const Scenario sc = parse_scenario(doc, "test.json");
  ASSERT_TRUE(deepep_routing(sc).has_value());
  const CollectiveCostModel model(sc.topology, {.deepep = deepep_routing(sc)});
  const DeviceGroup group = sc.layout().expert_group(0);
  std::vector<int> devices;
  group.devices(devices);
  const CollectiveEstimate a2a =
      model.estimate(devices, CollectiveOp::all_to_all, Bytes(2048 * 2 * 2048 * 2), "deepep");
  const Metrics analytical = run(doc, "analytical"), event = run(doc, "event"), flow = run(doc, "flow");
  EXPECT_NEAR(analytical.devices[0].exposed_comm[kEp].value(), 2 * 4 * 4 * a2a.time.value(), 1e-12);
  // Measured: analytical 2.1 % above event on the step, 1.1 % below on the all-to-alls (the
  // same scenario with the all-to-all dispatch differs by as much: 0.7 % and 1.8 %); flow
  // 0.15 % above event. The collective alone agrees to 1e-9 (collective_algorithms_test.cpp).
  // Stage 0's gradient buckets, issued as the last backward pass reaches each (the bucket
  // stream of analytical.cpp), are exposed for 1.928 ms against the engine's 1.959 ms (with
  // every bucket but the last taken as hidden: 1.58 ms). The step's remaining difference is
  // the closed form's pipeline sends at m = 4 (stage 0's bubble 17.7 ms against 16.7 ms).
  EXPECT_NEAR(analytical.devices[0].exposed_comm[kDp].value() / event.devices[0].exposed_comm[kDp].value(), 1.0, 0.02);
  EXPECT_NEAR(analytical.step_time.value() / event.step_time.value(), 1.0, 0.025);
  EXPECT_NEAR(analytical.devices[0].exposed_comm[kEp].value() / event.devices[0].exposed_comm[kEp].value(), 1.0, 0.015);
  EXPECT_NEAR(flow.step_time.value() / event.step_time.value(), 1.0, 0.002);
  // Against the all-to-all (the same payload, fewer bytes across nodes): less time in the
  // dispatch and combine.
  const Metrics plain = run(small(16, 0), "event");
  EXPECT_LT(event.devices[0].exposed_comm[kEp].value(), plain.devices[0].exposed_comm[kEp].value());
}

TEST(MoeRun, SkewedRoutingSendsEachRankItsExpertsShareAcrossNodes) {
  // ep 16 over two nodes of 8, 16 experts, Zipf exponent 1, DeepEP dispatch: rank r holds
  // expert r, (1/(r+1)) / H_16 of the tokens; the busiest, rank 0, 16 / H_16 = 4.73 times the
  // even share. Every all-to-all is sized for rank 0's tokens (its grouped GEMMs set the
  // time), and each block is its destination's share of it (rank_block_weights): analytical
  // mode charges per stage 2 MoE layers x 4 all-to-alls x 4 micro-batches of the cost model's
  // "deepep" time with those blocks, less than with every block rank 0's (node 1's ranks
  // receive a fifth as much); event and flow mode replay the same schedules.
  nlohmann::json doc = small(16, 1);
  doc["strategy"]["moe_dispatch"] = "deepep";
  const Scenario sc = parse_scenario(doc, "test.json");
  ASSERT_TRUE(moe_routing(sc).has_value());
  double h16 = 0;
  for (int j = 1; j <= 16; ++j) h16 += 1.0 / j;
  const Bytes busiest(16 / h16 * 2048 * 2 * 2048 * 2);
  const DeviceGroup group = sc.layout().expert_group(0);
  std::vector<int> devices;
  group.devices(devices);
  const CollectiveCostModel uneven(sc.topology, scenario_cost_options(sc)),
      even(sc.topology, {.deepep = deepep_routing(sc)});
  const double a2a = uneven.estimate(devices, CollectiveOp::all_to_all, busiest, "deepep").time.value();
  const Metrics analytical = run(doc, "analytical"), event = run(doc, "event"), flow = run(doc, "flow");
  EXPECT_NEAR(analytical.devices[0].exposed_comm[kEp].value(), 2 * 4 * 4 * a2a, 1e-12);
  EXPECT_LT(a2a, 0.6 * even.estimate(devices, CollectiveOp::all_to_all, busiest, "deepep").time.value());
  // Measured: analytical 0.9 % above event, flow 0.1 % below.
  EXPECT_NEAR(analytical.step_time.value() / event.step_time.value(), 1.0, 0.015);
  EXPECT_NEAR(flow.step_time.value() / event.step_time.value(), 1.0, 0.003);
}

TEST(MoeRun, SkewedRoutingCostsTheBusiestRanksTokens) {
  // Zipf exponent 1 over 16 experts, ep 8: rank 0 holds experts 0 and 1, 1.5 / H_16 of the
  // tokens, load 8 * 1.5 / H_16 = 3.55 times the even share. Its grouped GEMMs and every
  // all-to-all carry that many tokens: per stage 2 MoE layers x (2 forward + 2 backward)
  // all-to-alls x 4 micro-batches, each of load * n k h bf16 bytes per rank (n = 2,048
  // tokens, k = 2, h = 2,048), costed by the collective model over the expert group.
  double h16 = 0;
  for (int j = 1; j <= 16; ++j) h16 += 1.0 / j;
  const double load = 8 * 1.5 / h16;
  const Scenario sc = parse_scenario(small(8, 1), "test.json");
  const CollectiveCostModel model(sc.topology);
  CollectiveTimes times(model, sc.simulation.collective_algorithm);
  const DeviceGroup group = sc.layout().expert_group(0);
  auto expect = [&](double l) {
    return 2 * 4 * 4 * times(group, CollectiveOp::all_to_all, Bytes(l * 2048 * 2 * 2048 * 2)).value();
  };
  const Metrics even = run(small(8, 0), "analytical"), skew = run(small(8, 1), "analytical");
  EXPECT_NEAR(even.devices[0].exposed_comm[kEp].value(), expect(1), 1e-12);
  EXPECT_NEAR(skew.devices[0].exposed_comm[kEp].value(), expect(load), 1e-12);
  EXPECT_GT(skew.step_time.value(), even.step_time.value());
  // Model FLOPs stay the even share: MFU falls by what the imbalance costs.
  EXPECT_NEAR(skew.mfu * skew.step_time.value(), even.mfu * even.step_time.value(), 1e-9);
}

// The imbalance's cost in the report is the step against the same scenario with even
// routing, run in the same mode: here the event-mode step of small(8, 0), run on its own.
TEST(MoeRun, ReportsTheImbalanceCostAgainstEvenRouting) {
  nlohmann::json doc = small(8, 1);
  doc["simulation"] = {{"mode", "event"}, {"symmetry", true}};
  const Scenario sc = parse_scenario(doc, "test.json");
  const RunOutput out = run_scenario(sc);
  const double even = run(small(8, 0), "event").step_time.value();
  ASSERT_NE(out.balanced, nullptr);
  EXPECT_EQ(out.balanced->step_time.value(), even);
  const nlohmann::json moe = report_json(sc, out, false)["strategy"]["moe"];
  EXPECT_EQ(moe["balanced_step_time_s"].get<double>(), even);
  EXPECT_EQ(moe["imbalance_cost_s"].get<double>(), out.metrics.step_time.value() - even);
  EXPECT_GT(moe["imbalance_cost_s"].get<double>(), 0.0);
  EXPECT_NE(report_table(sc, out).find("expert routing: busiest of 8 expert ranks takes 3.55x the even share"),
            std::string::npos);

  // Even routing: nothing is run twice, the cost is 0 and the table has no routing line.
  nlohmann::json flat = small(8, 0);
  flat["simulation"] = {{"mode", "analytical"}};
  const Scenario sf = parse_scenario(flat, "test.json");
  const RunOutput fo = run_scenario(sf);
  EXPECT_EQ(fo.balanced, nullptr);
  EXPECT_EQ(report_json(sf, fo, false)["strategy"]["moe"]["imbalance_cost_s"].get<double>(), 0.0);
  EXPECT_EQ(report_table(sf, fo).find("expert routing"), std::string::npos);

  // A capacity factor of 0.5 pads nothing and drops half the routed tokens: the experts
  // compute half the even share, so the step is shorter than even routing's.
  flat["workload"]["model"]["overrides"]["capacity_factor"] = 0.5;
  const Scenario sh = parse_scenario(flat, "test.json");
  const RunOutput ho = run_scenario(sh);
  ASSERT_NE(ho.balanced, nullptr);
  EXPECT_EQ(ho.balanced->step_time.value(), fo.metrics.step_time.value());
  EXPECT_LT(report_json(sh, ho, false)["strategy"]["moe"]["imbalance_cost_s"].get<double>(), 0.0);
}

// Expert tensor parallelism 2 with ep 4 on the 16 devices of a stage (workloads/layout.hpp):
// the all-to-all groups are 4 devices at stride 2 inside a node, the gather and reduce-
// scatter groups device pairs. In analytical mode the exposed ep time is, per stage, 2 MoE
// layers x 4 micro-batches x 2 passes x (2 all-to-alls of the rank's n k h bf16 bytes, n =
// 2,048 tokens, k = 2, h = 2,048, plus a gather and a reduce-scatter of both ranks' 2 n k h),
// each costed by the collective model over its group; event and flow mode replay the same
// plan on the engine.
TEST(MoeRun, ExpertTensorParallelismAgreesInEventFlowAndAnalyticalMode) {
  nlohmann::json doc = small(4, 0);
  doc["strategy"]["etp"] = 2;
  // The ratios below were measured with these compute efficiencies (the H100 preset's until
  // its refit of 7 December 2026); how the groups' traffic overlaps compute, and so the
  // symmetric run's agreement with the full one (6.3e-4 with the refitted preset), moves
  // with them. Held here so that a refit of the preset does not move this test's case.
  doc["cluster"]["pools"][0]["overrides"] = {{"gemm_efficiency", 0.80}, {"attention_efficiency", 0.65}};
  const Scenario sc = parse_scenario(doc, "test.json");
  const CollectiveCostModel model(sc.topology);
  CollectiveTimes times(model, sc.simulation.collective_algorithm);
  const Bytes a2a(2048.0 * 2 * 2048 * 2), gathered = 2.0 * a2a;
  const DeviceGroup group = sc.layout().expert_group(0), pair = sc.layout().expert_tensor_group(0);
  ASSERT_EQ(group.stride, 2);
  ASSERT_EQ(group.count, 4);
  ASSERT_EQ(pair.count, 2);
  const double expect = 2 * 4 * 2 *
                        (2 * times(group, CollectiveOp::all_to_all, a2a).value() +
                         times(pair, CollectiveOp::all_gather, gathered).value() +
                         times(pair, CollectiveOp::reduce_scatter, gathered).value());
  const Metrics event = run(doc, "event"), flow = run(doc, "flow"), analytical = run(doc, "analytical");
  EXPECT_NEAR(analytical.devices[0].exposed_comm[kEp].value(), expect, 1e-12);
  // Measured: flow / event 1.0006, analytical / event 1.022, the exposed ep time of device 0
  // analytical / event 0.981 (the engine's all-to-alls and pair gathers share the node's
  // links with the other groups' and the gradient traffic; the closed forms cost each alone).
  // Stage 0's exposed gradient buckets: 9.924 ms against the engine's 9.970 ms (8.51 ms with
  // every bucket but the last taken as hidden); the step's remaining difference is the closed
  // form's pipeline sends at m = 4 (stage 0's bubble 16.8 ms against 15.6 ms).
  EXPECT_NEAR(flow.step_time.value() / event.step_time.value(), 1.0, 0.002);
  EXPECT_NEAR(analytical.devices[0].exposed_comm[kDp].value() / event.devices[0].exposed_comm[kDp].value(), 1.0, 0.01);
  EXPECT_NEAR(analytical.step_time.value() / event.step_time.value(), 1.0, 0.025);
  EXPECT_NEAR(analytical.devices[0].exposed_comm[kEp].value() / event.devices[0].exposed_comm[kEp].value(), 1.0, 0.025);
  // Symmetry (the groups without a simulated rank mirror the first's) against every rank:
  // measured 44.39 ms against 44.42 ms, 7.1e-4 optimistic (a representative flow's stretch is
  // set when it starts: docs/validation.md, "Symmetry on the H100 Qwen3-235B rows").
  const Metrics full = run(doc, "event", false);
  EXPECT_NEAR(event.step_time.value() / full.step_time.value(), 1.0, 8e-4);
  // Model FLOPs (MFU x step) are etp 1's at the same ep: each rank computes twice the tokens
  // at half the width, the even share counted once.
  const Metrics one = run(small(4, 0), "analytical");
  EXPECT_NEAR(analytical.mfu * analytical.step_time.value(), one.mfu * one.step_time.value(), 1e-9);
}

// DualPipe's pairs (DeepSeek-V3 report §3.2.1, Figure 4): 16 H100 in two nodes, the 4-layer
// MoE of `small` with ep 8 (one node), pp 2, 8 micro-batches per replica. Each stage runs 16
// passes of one 2-layer chunk, each pass 4 all-to-alls of n k h bf16 bytes per rank (n =
// 2,048 tokens, k = 2, h = 2,048), 64 in all, of which 5 pairs of a forward and a whole
// backward overlap one's computation with the other's all-to-alls. Event and analytical mode
// run the same interleaving (lowering_pass.cpp emit_pair, analytical.hpp pair_end); the pairs
// hide part of the 64 all-to-alls in both. Measured: event 127.6 ms, analytical 1.3e-3 below
// it and flow within 1e-5; exposed all-to-all 2.25 ms (event, flow) and 2.13 ms (analytical)
// of 64 x 72.1 us: the pairs hide 82 % and 86 % of theirs (a collective longer than the other
// pass's piece shows; in the engine the two passes' collectives also share the links).
TEST(MoeRun, DualPipePairsHideAllToAllsBehindTheOtherPassesCompute) {
  nlohmann::json doc = small(8, 0);
  doc["cluster"]["pools"][0]["count"] = 16;
  doc["workload"]["global_batch"] = 128;
  doc["strategy"]["dp"] = 8;
  doc["strategy"]["schedule"] = "dualpipe";
  const Scenario sc = parse_scenario(doc, "test.json");
  const CollectiveCostModel model(sc.topology, {});
  std::vector<int> devices;
  sc.layout().expert_group(0).devices(devices);
  const double a2a = model.estimate(devices, CollectiveOp::all_to_all, Bytes(2048 * 2 * 2048 * 2)).time.value();
  const Metrics event = run(doc, "event"), flow = run(doc, "flow"), analytical = run(doc, "analytical");
  EXPECT_NEAR(analytical.step_time.value() / event.step_time.value(), 1.0, 1.5e-3);
  EXPECT_NEAR(flow.step_time.value() / event.step_time.value(), 1.0, 1e-4);
  for (const Metrics* m : {&event, &flow, &analytical}) {
    const double exposed = m->devices[0].exposed_comm[kEp].value();
    EXPECT_GT(exposed, 0.0);
    // The 6 passes of 16 outside the pairs keep their 24 all-to-alls exposed; the pairs
    // hide more than 80 % of their 40 (measured 82 % and 86 %).
    EXPECT_GT(exposed, 24 * a2a);
    EXPECT_LT(exposed, (24 + 0.2 * 40) * a2a);
  }
  EXPECT_NEAR(analytical.devices[0].exposed_comm[kEp].value() / event.devices[0].exposed_comm[kEp].value(), 1.0, 0.07);
}

}  // namespace
}  // namespace hcsim
