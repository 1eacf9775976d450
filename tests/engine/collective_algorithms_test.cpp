// Every collective algorithm replayed by the engine (sim/engine/collective_plan.hpp), in
// event mode, flow mode and flow mode by phases, against closed forms and against the
// collective cost model.
#include <cmath>
#include <optional>
#include <vector>

#include <gtest/gtest.h>

#include "../support/test_topology.hpp"
#include "sim/engine/engine.hpp"
#include "topologies/routing.hpp"

namespace hcsim {
namespace {

TopologyGraph build(const nlohmann::json& desc, int devices) { return testing::test_topology(desc, devices); }

// One NVSwitch node: every GPU-to-GPU route is GPU -> switch -> GPU, alpha = 2 x latency,
// B = bandwidth x 0.8.
TopologyGraph node(int gpus, const char* lat = "1 us", bool reduction = false) {
  return build({{"type", "nvswitch-cluster"},
                {"gpus_per_node", gpus},
                {"nvswitch_reduction", reduction},
                {"nvlink", {{"type", "electrical"}, {"bandwidth", "300 GB/s"}, {"latency", lat}, {"efficiency", 0.8}}}},
               gpus);
}

// 4 nodes x 4 GPUs; the 16 HDR NICs on one leaf of 64 ports, so no route crosses a spine.
TopologyGraph nodes4x4() { return build({{"type", "nvswitch-cluster"}, {"gpus_per_node", 4}, {"switch_radix", 64}}, 16); }

std::vector<std::uint32_t> first(int n) {
  std::vector<std::uint32_t> v;
  for (int i = 0; i < n; ++i) v.push_back(static_cast<std::uint32_t>(i));
  return v;
}

TaskGraph collectives(const std::vector<std::uint32_t>& devs, CollectiveOp op, double bytes, int copies = 1,
                      std::uint32_t devices = 0) {
  TaskGraph g;
  g.devices = devices ? devices : static_cast<std::uint32_t>(devs.size());
  const auto grp = g.add_group(devs);
  for (int c = 0; c < copies; ++c) {
    Task t;
    t.kind = TaskKind::collective;
    t.op = op;
    t.group = grp;
    t.bytes = Bytes(bytes);
    g.add(t, {});
  }
  return g;
}

// The closed forms below are of the network schedule alone: the ideal protocol
// (tests/collectives/protocol_test.cpp covers NCCL's).
EngineResult run_all(const TopologyGraph& topo, const TaskGraph& g, const char* mode, const char* algorithm) {
  // `mode`: "event", "flow" or "flow_phases" (flow mode by phases).
  EngineOptions opt;
  const bool flow = std::string(mode) != "event";
  opt.mode = flow ? "flow" : "event";
  opt.flow_phases = std::string(mode) == "flow_phases";
  opt.algorithm = algorithm;
  opt.planner = std::make_shared<CollectivePlanner>(topo, algorithm, flow,
                                                    CostOptions{.protocols = ProtocolSet::ideal()}, opt.flow_phases);
  return simulate(topo, g, opt);
}

double run(const TopologyGraph& topo, const TaskGraph& g, const char* mode, const char* algorithm) {
  return run_all(topo, g, mode, algorithm).makespan;
}

struct Case {
  const char* algorithm;
  CollectiveOp op;
  int topology;  // 0: one node of 8 GPUs, 1: 4 nodes x 4 GPUs, 2: 4x4x4 torus
  double bytes;
};

class EveryAlgorithm : public ::testing::TestWithParam<std::tuple<Case, const char*>> {};

TEST_P(EveryAlgorithm, TakesTheCostModelsTimeOnAnIdleNetwork) {
  // The engine replays the very schedule the cost model (sim/collectives/cost.hpp, checked
  // against closed forms in tests/collectives/cost_test.cpp) evaluates step by step. On an
  // idle network where every route of a step has the same latency, the event mode's timer +
  // merged flows and the flow mode's per-rank replay both take exactly the model's time
  // (flows of S bytes on a path of latency L and bottleneck B take L + S/B in CM02).
  const auto [c, mode] = GetParam();
  const TopologyGraph topo =
      c.topology == 0 ? node(8)
      : c.topology == 1
          ? nodes4x4()
          : build({{"type", "torus"}, {"dims", {4, 4, 4}}, {"link", {{"type", "electrical"}, {"bandwidth", "50 GB/s"},
                                                                       {"latency", "1 us"}}}},
                  64);
  // "flow_phases": flow mode by phases (simulation.flow_schedule "phases"), event mode's phases
  // with every flow in the network model.
  const int n = c.op == CollectiveOp::send_recv ? 2 : topo.device_count();
  const bool flow = std::string(mode) != "event";
  CollectivePlanner planner(topo, c.algorithm, flow);
  const auto& plan = planner.plan(first(n), c.op, c.bytes);
  ASSERT_EQ(plan.algorithm, c.algorithm);
  const double model = plan.estimate.time.value();
  // NCCL's protocols (the default): the engine runs the protocol's share as a timer.
  EngineOptions opt;
  opt.mode = flow ? "flow" : "event";
  opt.flow_phases = std::string(mode) == "flow_phases";
  opt.algorithm = c.algorithm;
  const double engine =
      simulate(topo, collectives(first(n), c.op, c.bytes, 1, static_cast<std::uint32_t>(topo.device_count())), opt)
          .makespan;
  EXPECT_NEAR(engine / model, 1.0, 1e-3) << c.algorithm << " " << collective_op_name(c.op) << " " << mode;
}

INSTANTIATE_TEST_SUITE_P(
    Algorithms, EveryAlgorithm,
    ::testing::Combine(::testing::Values(Case{"ring", CollectiveOp::all_reduce, 0, 64e6},
                                         Case{"ring", CollectiveOp::all_gather, 0, 64e6},
                                         Case{"ring", CollectiveOp::reduce_scatter, 0, 64e6},
                                         Case{"double_binary_tree", CollectiveOp::all_reduce, 0, 64e6},
                                         Case{"double_binary_tree", CollectiveOp::broadcast, 0, 64e6},
                                         Case{"halving_doubling", CollectiveOp::all_reduce, 0, 64e6},
                                         Case{"halving_doubling", CollectiveOp::all_gather, 0, 64e6},
                                         Case{"chain", CollectiveOp::reduce, 0, 64e6},
                                         Case{"pairwise", CollectiveOp::all_to_all, 0, 64e6},
                                         Case{"direct", CollectiveOp::send_recv, 0, 64e6},
                                         Case{"hierarchical", CollectiveOp::all_reduce, 1, 64e6},
                                         Case{"hierarchical", CollectiveOp::all_to_all, 1, 64e6},
                                         Case{"deepep", CollectiveOp::all_to_all, 1, 64e6},
                                         Case{"multi_ring", CollectiveOp::all_reduce, 1, 64e6},
                                         Case{"multi_ring", CollectiveOp::all_gather, 1, 64e6},
                                         Case{"multi_ring", CollectiveOp::reduce_scatter, 1, 64e6},
                                         Case{"torus", CollectiveOp::all_reduce, 2, 64e6}),
                       ::testing::Values("event", "flow", "flow_phases")),
    [](const auto& info) {
      const Case& c = std::get<0>(info.param);
      return std::string(c.algorithm) + "_" + std::string(collective_op_name(c.op)) + "_" + std::get<1>(info.param);
    });

TEST(CollectiveAlgorithms, DeepepDispatchTakesTheCostModelsTimeAndSendsTheDeduplicatedBytes) {
  // An MoE all-to-all under strategy.moe_dispatch = "deepep" (CostOptions::deepep): 16 experts,
  // top-4, on 4 nodes of 4 GPUs. Each token reaches D = 4 (1 - C(12, 4)/C(16, 4)) = 2.912 nodes,
  // so the rail messages carry D/k = 0.728 of the hierarchical exchange's (deepep.hpp). Event
  // and flow mode replay the schedule the cost model times, and the links carry its bytes.
  const TopologyGraph topo = nodes4x4();
  const TokenRouting routing{16, 4, 0};
  const double bytes = 64e6;
  for (const char* mode : {"event", "flow", "flow_phases"}) {
    const bool flow = std::string(mode) == "flow";
    EngineOptions opt;
    opt.mode = mode;
    opt.deepep = routing;
    opt.planner = std::make_shared<CollectivePlanner>(
        topo, "auto", flow, CostOptions{.protocols = ProtocolSet::ideal(), .deepep = routing});
    const CollectiveExpansion& plan = opt.planner->plan(first(16), CollectiveOp::all_to_all, bytes);
    ASSERT_EQ(plan.algorithm, "deepep");
    const EngineResult r = simulate(topo, collectives(first(16), CollectiveOp::all_to_all, bytes), opt);
    EXPECT_NEAR(r.makespan / plan.estimate.time.value(), 1.0, 1e-9) << mode;
    // Bytes between nodes: 16 ranks x 3 other nodes x (S/4)(D/k), S = 64 MB.
    double across = 0;
    for (const PlannedFlow& f : plan.pair_bytes) across += f.src / 4 != f.dst / 4 ? f.bytes : 0.0;
    EXPECT_NEAR(across, 16 * 3 * bytes / 4 * (4 * (1 - 495.0 / 1820) / 4), 16 * 3);
  }
}

TEST(CollectiveAlgorithms, FlowModeByPhasesRunsOneFlowPerRingEdgeInsteadOfEveryStep) {
  // A ring all-reduce over n = 8 GPUs is 2(n - 1) = 14 steps of n transfers of S/n each.
  // Flow mode by steps replays all 14 n = 112 transfers; by phases it is the event mode's one
  // phase: per rank a timer of (2(n - 1) - 1) alpha (0 bytes), then one flow per ring edge of
  // 2(n - 1)/n S -- 2 steps, 2n = 16 entries (docs/network.md, "Flow mode by phases").
  const TopologyGraph topo = node(8);
  const double S = 64e6;
  CollectivePlanner steps(topo, "ring", true, CostOptions{.protocols = ProtocolSet::ideal()});
  CollectivePlanner phases(topo, "ring", true, CostOptions{.protocols = ProtocolSet::ideal()}, true);
  const auto& a = steps.plan(first(8), CollectiveOp::all_reduce, S);
  const auto& b = phases.plan(first(8), CollectiveOp::all_reduce, S);
  ASSERT_TRUE(a.flow && b.flow);
  EXPECT_EQ(a.flow->steps, 14u);
  EXPECT_EQ(a.flow->transfers.size(), 112u);
  EXPECT_EQ(b.flow->steps, 2u);
  ASSERT_EQ(b.flow->transfers.size(), 16u);
  const double alpha = 2e-6;  // GPU -> switch -> GPU, 1 us each
  for (const auto& x : b.flow->transfers) {
    if (x.step == 0) {
      EXPECT_EQ(x.src, x.dst);
      EXPECT_EQ(x.bytes, 0.0);
      EXPECT_NEAR(x.timer, 13 * alpha, 1e-12);
    } else {
      EXPECT_EQ(x.dst, (x.src + 1) % 8);
      EXPECT_EQ(x.bytes, 2.0 * 7 / 8 * S);
      EXPECT_EQ(x.timer, 0.0);
    }
  }
  EXPECT_TRUE(b.phases.empty());
}

TEST(CollectiveAlgorithms, HalvingDoublingMatchesRabenseifnersClosedForm) {
  // Recursive halving then doubling on n = 2^k ranks: 2 log2(n) steps of alpha, and
  // (n-1)/n S each way: t = 2 log2(n) alpha + 2 (n-1)/n S/B (Thakur, Rabenseifner & Gropp,
  // IJHPCA 2005, §4.4). alpha = 2 x 1 us (GPU -> NVSwitch -> GPU), B = 300 GB/s x 0.8.
  const TopologyGraph topo = node(8);
  const double S = 64e6, alpha = 2e-6, B = 240e9;
  const double want = 2 * 3 * alpha + 2.0 * 7 / 8 * S / B;
  for (const char* mode : {"event", "flow"})
    EXPECT_NEAR(run(topo, collectives(first(8), CollectiveOp::all_reduce, S), mode, "halving_doubling") / want, 1.0,
                1e-3)
        << mode;
}

TEST(CollectiveAlgorithms, TreeLatencyGrowsWithLog2N) {
  // An 8-byte all-reduce on the double binary tree is latency-bound: reduce up D levels,
  // broadcast down D levels, D = log2(n) for n = 2^k: t = 2 log2(n) alpha, where the ring
  // would need 2(n-1) alpha (cost_test.cpp; Sanders, Speck & Traeff 2009). Bandwidth adds
  // at most 8 bytes per link per step (each tree carries 4 bytes; a rank is interior, with
  // two children, in one tree only) at 240 GB/s.
  const double alpha = 2e-6, B = 240e9;
  for (const char* mode : {"event", "flow", "flow_phases"}) {
    for (int n : {4, 8, 16, 32, 64}) {
      const TopologyGraph topo = node(n);
      const double t = run(topo, collectives(first(n), CollectiveOp::all_reduce, 8), mode, "double_binary_tree");
      const double steps = 2 * std::log2(n);
      EXPECT_GE(t, steps * alpha * (1 - 1e-12)) << mode << " n=" << n;
      EXPECT_LE(t, steps * (alpha + 8 / B)) << mode << " n=" << n;
    }
  }
}

TEST(CollectiveAlgorithms, TwoCollectivesSharingLinksTakeTwiceAsLong) {
  // Without latency, a collective's time is its bandwidth term; two identical ones at once
  // share every link they use (max-min fair sharing halves each flow's rate), so together
  // they take twice as long -- in flow mode for the step-by-step schedules, and in event
  // mode and flow mode by phases for merged flows (the ring's one phase, the torus's one
  // per dimension).
  const TopologyGraph nvs = node(8, "0 us");
  const TopologyGraph torus = build(
      {{"type", "torus"}, {"dims", {4, 4, 4}}, {"link", {{"type", "electrical"}, {"bandwidth", "50 GB/s"}, {"latency", "0 us"}}}},
      64);
  struct Run {
    const TopologyGraph* topo;
    const char* algorithm;
    const char* mode;
  };
  for (const Run& r : {Run{&nvs, "halving_doubling", "flow"}, Run{&nvs, "double_binary_tree", "flow"},
                       Run{&nvs, "ring", "flow_phases"}, Run{&torus, "torus", "flow"}, Run{&torus, "torus", "event"},
                       Run{&torus, "torus", "flow_phases"}}) {
    const int n = r.topo->device_count();
    const double one = run(*r.topo, collectives(first(n), CollectiveOp::all_reduce, 64e6, 1), r.mode, r.algorithm);
    const double two = run(*r.topo, collectives(first(n), CollectiveOp::all_reduce, 64e6, 2), r.mode, r.algorithm);
    EXPECT_NEAR(two / one, 2.0, 1e-3) << r.algorithm << " " << r.mode;
  }
}

TEST(CollectiveAlgorithms, TorusMatchesDimensionOrderedRingsClosedForm) {
  // t = sum_k 2(d_k - 1)(alpha + S / (B prod_{i<=k} d_i)), one 50 GB/s link of 1 us per hop
  // (Ying et al. 2018; the same closed form as the cost model's test).
  const TopologyGraph topo = build(
      {{"type", "torus"}, {"dims", {4, 4, 4}}, {"link", {{"type", "electrical"}, {"bandwidth", "50 GB/s"}, {"latency", "1 us"}}}},
      64);
  const double S = 64.0 * 1048576, a = 1e-6, b = 50e9;
  const double want = 2 * 3 * (a + S / (b * 4)) + 2 * 3 * (a + S / (b * 16)) + 2 * 3 * (a + S / (b * 64));
  for (const char* mode : {"event", "flow"})
    EXPECT_NEAR(run(topo, collectives(first(64), CollectiveOp::all_reduce, S), mode, "torus") / want, 1.0, 1e-3)
        << mode;
}

TEST(CollectiveAlgorithms, AutoChoosesPerSizeBucketAsTheCostModel) {
  // On one NVSwitch node the cost model picks the tree for latency-bound sizes and the ring
  // for large ones (cost_test.cpp); the engine follows, once per power-of-two size bucket.
  const TopologyGraph topo = node(8);
  CollectivePlanner planner(topo, "auto", false, CostOptions{.protocols = ProtocolSet::ideal()});
  EXPECT_EQ(planner.choose(first(8), CollectiveOp::all_reduce, 8), "double_binary_tree");
  EXPECT_EQ(planner.choose(first(8), CollectiveOp::all_reduce, 1073741824.0), "ring");
  EXPECT_EQ(collective_size_bucket(15), 3);
  EXPECT_EQ(collective_size_bucket(16), 4);
  const double tree = planner.model().estimate({0, 1, 2, 3, 4, 5, 6, 7}, CollectiveOp::all_reduce, Bytes(8),
                                               "double_binary_tree").time.value();
  EXPECT_NEAR(run(topo, collectives(first(8), CollectiveOp::all_reduce, 8), "event", "auto") / tree, 1.0, 1e-3);
}

TEST(CollectiveAlgorithms, AutoChoosesOncePerFamilyWithTheSiblingsOnTheLinks) {
  // 32 nodes of 8 H800 on fat-tree leaves of 20 nodes (radix 40) with hashed uplinks: the
  // 64-GPU expert group of nodes 16-23 straddles a leaf edge, its sibling (nodes 24-31) does
  // not. Alone, the first is fastest with the hierarchical exchange and the second with the
  // flat pairwise one (the cost model); a family runs one algorithm: every member asks its
  // first member's question, with the other's traffic on the spines, and both run the
  // hierarchical exchange.
  const TopologyGraph topo = testing::h800_leaves_of_20_nodes("fat-tree", "ecmp-hash");
  CollectivePlanner planner(topo, "auto", false);
  std::vector<std::uint32_t> a, b;
  for (std::uint32_t d = 128; d < 192; ++d) a.push_back(d);
  for (std::uint32_t d = 192; d < 256; ++d) b.push_back(d);
  const double S = 469762048.0;  // one micro-batch's dispatch of DeepSeek-V3 (4,096 x 8 x 7,168 x 2 B)
  EXPECT_EQ(planner.choose(a, CollectiveOp::all_to_all, S), "hierarchical");
  EXPECT_EQ(planner.choose(b, CollectiveOp::all_to_all, S), "pairwise");
  const std::vector<int> sibling{64};
  EXPECT_EQ(planner.choose(a, CollectiveOp::all_to_all, S, {0, &sibling}), "hierarchical");
  EXPECT_EQ(planner.choose(b, CollectiveOp::all_to_all, S, {-64, &sibling}), "hierarchical");
}

TEST(CollectiveAlgorithms, NamedAlgorithmFallsBackToAutoWhereItDoesNotApply) {
  // "torus" cannot run an all-gather on an NVSwitch node; the engine runs the cost model's
  // choice, the ring: (n-1)/n S/B + (n-1) alpha (cost_test.cpp, formulas.md §6).
  const TopologyGraph topo = node(8);
  const double S = 64e6, want = 7.0 / 8 * S / 240e9 + 7 * 2e-6;
  EXPECT_NEAR(run(topo, collectives(first(8), CollectiveOp::all_gather, S), "event", "torus") / want, 1.0, 1e-3);
  EXPECT_THROW((void)resolve_collective_algorithm(CollectiveCostModel(topo), {0, 1}, CollectiveOp::all_reduce,
                                                  Bytes(8), "butterfly"),
               InputError);
}

TEST(CollectiveAlgorithms, InNetworkReductionIsATimerWithItsBytesOnTheLinks) {
  // NVLink SHARP: t = 2 alpha_edge + S (n + 1)/(n B) (cost_test.cpp); every GPU's edge
  // carries S (n + 1)/n up and as much down.
  const TopologyGraph topo = node(8, "1 us", true);
  const double S = 1073741824.0;
  for (const char* mode : {"event", "flow", "flow_phases"}) {
    const EngineResult r = run_all(topo, collectives(first(8), CollectiveOp::all_reduce, S), mode, "in_network");
    EXPECT_NEAR(r.makespan / (2e-6 + S * 9.0 / 8.0 / 240e9), 1.0, 1e-9) << mode;
    double total = 0;
    for (double b : r.edge_bytes) total += b;
    EXPECT_DOUBLE_EQ(total, 8 * 2 * S * 9.0 / 8.0) << mode;
  }
}

TEST(CollectiveAlgorithms, NvlsTreeRunsItsRailsAsFlowsAndItsSwitchWorkAsTimers) {
  // 2 nodes x 4 GPUs whose NVSwitches reduce; NVLink and NIC routes both of alpha = 2 us, so
  // every step's latency is the same whichever transfers it holds and both modes take the cost
  // model's time (checked against its closed form in tests/collectives/nvls_tree_test.cpp).
  // Bytes: each GPU's NVLink carries S + S/g up and S/g + S down (multimem loads, then stores),
  // each rail's ring sends S/g per GPU over 2 NIC edges: n S (2(g + 1)/g + 2/g) = 24 S in all.
  const TopologyGraph topo = build(
      {{"type", "nvswitch-cluster"},
       {"gpus_per_node", 4},
       {"nvswitch_reduction", true},
       {"switch_radix", 64},
       {"nvlink", {{"type", "electrical"}, {"bandwidth", "300 GB/s"}, {"latency", "1 us"}, {"efficiency", 0.8}}},
       {"nic", {{"type", "electrical"}, {"bandwidth", "50 GB/s"}, {"latency", "1 us"}}}},
      8);
  const double S = 67108864.0;
  const double model = CollectiveCostModel(topo, {.protocols = ProtocolSet::ideal()})
                           .estimate({0, 1, 2, 3, 4, 5, 6, 7}, CollectiveOp::all_reduce, Bytes(S), "nvls_tree")
                           .time.value();
  for (const char* mode : {"event", "flow", "flow_phases"}) {
    const EngineResult r = run_all(topo, collectives(first(8), CollectiveOp::all_reduce, S), mode, "nvls_tree");
    EXPECT_NEAR(r.makespan / model, 1.0, 1e-6) << mode;
    double total = 0;
    for (double b : r.edge_bytes) total += b;
    EXPECT_NEAR(total / S, 24.0, 1e-9) << mode;
  }
}

TEST(CollectiveAlgorithms, PxnKeepsTheMultiRingsOffTheSpines) {
  // 4 nodes x 8 GPUs on a rail-optimised fabric: multi_ring relays each node-crossing hop
  // through the GPU on the destination's rail (PXN, tests/collectives/pxn_test.cpp), so the
  // engine's flows leave every spine edge without a byte. Its two legs are flows of their own
  // latency each, while the model charges a relayed step both: the engine is at most one
  // NVLink route's latency (2 x 0.25 us) a step faster, 2(n - 1) steps of it.
  const TopologyGraph topo = build(
      {{"type", "nvswitch-cluster"},
       {"fabric", "rail-optimised"},
       {"nvlink", {{"type", "electrical"}, {"bandwidth", "300 GB/s"}, {"latency", "0.25 us"}, {"efficiency", 0.8}}},
       {"nic", {{"type", "electrical"}, {"bandwidth", "25 GB/s"}, {"latency", "1 us"}, {"efficiency", 0.8}}}},
      32);
  const double S = 67108864.0;
  const double model = CollectiveCostModel(topo, {.protocols = ProtocolSet::ideal()})
                           .estimate(testing::first_devices(32), CollectiveOp::all_reduce, Bytes(S), "multi_ring")
                           .time.value();
  for (const char* mode : {"event", "flow", "flow_phases"}) {
    const EngineResult r = run_all(topo, collectives(first(32), CollectiveOp::all_reduce, S), mode, "multi_ring");
    EXPECT_LE(r.makespan, model * (1 + 1e-9)) << mode;
    EXPECT_GE(r.makespan, model - 2 * 31 * 0.5e-6) << mode;
    double spines = 0, total = 0;
    for (std::size_t e = 0; e < r.edge_bytes.size(); ++e) {
      const auto& ed = topo.edges()[e];
      total += r.edge_bytes[e];
      for (int end : {ed.a, ed.b})
        if (topo.node_name(end).find("spine") != std::string::npos) spines += r.edge_bytes[e];
    }
    EXPECT_GT(total, 0) << mode;
    EXPECT_EQ(spines, 0) << mode;
  }
}

TEST(CollectiveAlgorithms, MirroredCollectiveChargesTheSameBytes) {
  // Symmetry: a collective over node 0 standing also for the same one over node 1 puts the
  // same bytes on node 1's links without being simulated.
  const TopologyGraph topo = nodes4x4();
  for (const char* mode : {"event", "flow", "flow_phases"}) {
    TaskGraph g = collectives(first(4), CollectiveOp::all_reduce, 64e6, 1, 16);
    g.add_mirror(0, g.add_group_mirror_set({g.add_group({4, 5, 6, 7})}));
    EngineOptions opt;
    opt.mode = mode;
    const EngineResult r = simulate(topo, g, opt);
    const EngineResult single = simulate(topo, collectives(first(4), CollectiveOp::all_reduce, 64e6, 1, 16), opt);
    double total = 0, one = 0;
    for (std::size_t e = 0; e < r.edge_bytes.size(); ++e) {
      total += r.edge_bytes[e];
      one += single.edge_bytes[e];
    }
    EXPECT_GT(one, 0);
    EXPECT_DOUBLE_EQ(total, 2 * one) << mode;
    EXPECT_DOUBLE_EQ(r.makespan, single.makespan) << mode;
  }
}

// A mirror's plan taken from its collective's plan (CollectivePlanner::shifted) is, flow for
// flow, the plan built for the mirror's group, wherever shifted() gives one, and the base's
// bytes charged per edge at shift()'s offset are that plan's; it gives none
// for a pipelined algorithm, a group that is not one offset from the base, or one the cost
// model shapes otherwise (a node boundary inside it). Rail-optimised H800 nodes (PXN shapes)
// and an ECMP fat-tree; every algorithm of "auto" by name.
TEST(CollectiveAlgorithms, AShiftedPlanIsThePlanBuiltForTheShiftedGroup) {
  register_builtin_collectives();
  const auto range = [](std::uint32_t from, std::uint32_t n, std::uint32_t stride = 1) {
    std::vector<std::uint32_t> v;
    for (std::uint32_t i = 0; i < n; ++i) v.push_back(from + i * stride);
    return v;
  };
  struct Shift {
    std::vector<std::uint32_t> base, group;
    bool applies;  // a shift that shapes alike
  };
  const std::vector<Shift> shifts{{range(0, 16, 8), range(1, 16, 8), true}, {range(0, 16, 8), range(8, 16, 8), true},
                                  {range(0, 16), range(48, 16), true},      {range(0, 4), range(4, 4), true},
                                  {range(0, 4), range(6, 4), false},          // nodes 0 and 1
                                  {range(0, 4), {5, 4, 6, 7}, false},         // not one offset
                                  {range(0, 64, 2), range(1, 64, 2), true}};  // four ranks a node
  int taken = 0;
  for (const TopologyGraph& topo :
       {testing::h800_rails_of_20_nodes(), testing::h800_leaves_of_20_nodes("fat-tree", "ecmp-hash")})
    for (CollectiveOp op :
         {CollectiveOp::all_reduce, CollectiveOp::all_gather, CollectiveOp::reduce_scatter, CollectiveOp::all_to_all})
      for (const CollectiveAlgorithm* a : auto_candidates())
        for (const Shift& sh : shifts) {
          if (a->analytic_only || a->node_switch_reduction) continue;  // no reducing switches here
          CollectivePlanner planner(topo, "auto", false), fresh(topo, "auto", false);
          std::vector<int> ranks;
          if (!a->supports(op, planner.model().shape_of({sh.base.begin(), sh.base.end()}, ranks))) continue;
          const CollectiveExpansion& base = planner.plan(sh.base, op, 64e6, a->name);
          const auto p = planner.shifted(base, sh.base, sh.group);
          const std::string what =
              a->name + " " + std::string(collective_op_name(op)) + " to " + std::to_string(sh.group[0]);
          if (!sh.applies || a->pipelined) {
            EXPECT_EQ(p, nullptr) << what;
            continue;
          }
          ASSERT_NE(p, nullptr) << what;
          ++taken;
          const CollectiveExpansion& want = fresh.plan(sh.group, op, 64e6, a->name);
          EXPECT_EQ(p->algorithm, want.algorithm) << what;
          EXPECT_EQ(p->rank_devices, want.rank_devices) << what;
          const auto same = [&](const std::vector<PlannedFlow>& x, const std::vector<PlannedFlow>& y) {
            ASSERT_EQ(x.size(), y.size()) << what;
            for (std::size_t i = 0; i < x.size(); ++i) {
              EXPECT_EQ(x[i].src, y[i].src) << what;
              EXPECT_EQ(x[i].dst, y[i].dst) << what;
              EXPECT_EQ(x[i].bytes, y[i].bytes) << what;
            }
          };
          same(p->pair_bytes, want.pair_bytes);
          ASSERT_EQ(p->phases.size(), want.phases.size()) << what;
          for (std::size_t k = 0; k < p->phases.size(); ++k) same(p->phases[k].flows, want.phases[k].flows);
          // Without the copy: the base's bytes charged at the offset are the group's plan's.
          const std::optional<std::int64_t> o = planner.shift(base, sh.base, sh.group);
          ASSERT_TRUE(o.has_value()) << what;
          EXPECT_EQ(*o, std::int64_t{sh.group[0]} - std::int64_t{sh.base[0]}) << what;
          std::vector<double> at_offset(topo.edges().size(), 0.0), own(topo.edges().size(), 0.0);
          planner.add_edge_bytes(base, at_offset, 1, *o);
          fresh.add_edge_bytes(want, own);
          EXPECT_EQ(at_offset, own) << what;
        }
  EXPECT_GT(taken, 40);
  // Flow mode plans flows of its own: no shifted plans.
  const TopologyGraph topo = testing::h800_rails_of_20_nodes();
  CollectivePlanner flow(topo, "ring", true);
  EXPECT_EQ(flow.shifted(flow.plan(range(0, 16, 8), CollectiveOp::all_reduce, 64e6), range(0, 16, 8), range(1, 16, 8)),
            nullptr);
  EXPECT_FALSE(flow.shift(flow.plan(range(0, 16, 8), CollectiveOp::all_reduce, 64e6), range(0, 16, 8), range(1, 16, 8))
                   .has_value());
}

}  // namespace
}  // namespace hcsim
