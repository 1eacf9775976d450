// Collective cost model against closed forms (formulas.md §6, design.md) on real topologies.
#include "sim/collectives/cost.hpp"

#include <cmath>
#include <limits>
#include <numeric>
#include <tuple>

#include <gtest/gtest.h>

#include "../support/test_topology.hpp"

namespace hcsim {
namespace {

TopologyGraph build(const nlohmann::json& desc, int devices) {
  Diagnostics d;
  TopologyGraph g = build_topology(desc, devices, "/t", d);
  EXPECT_TRUE(d.ok()) << (d.ok() ? "" : d.issues()[0].message);
  return g;
}

std::vector<int> iota(int n, int first = 0) {
  std::vector<int> v(static_cast<std::size_t>(n));
  std::iota(v.begin(), v.end(), first);
  return v;
}

// NVLink3 preset through one NVSwitch: alpha = 2 edges x 0.25 us, B = 300 GB/s x 0.78.
// ib-hdr preset: B_ib = 25 GB/s x 0.92. Both efficiencies are the presets' (NCCL's A100
// NVLink tuning cap, nccl-tests' HDR busbw: models/link/presets.cpp).
// These closed forms are of the network schedule alone: the ideal protocol (no NCCL
// protocol costs; protocol_test.cpp covers LL, LL128 and Simple).
CostOptions ideal() { return {.protocols = ProtocolSet::ideal()}; }

constexpr double kAlpha = 0.5e-6, kB = 300e9 * 0.78, kBIb = 25e9 * 0.92;

TEST(CollectiveCost, RingAllReduceClosedForm) {
  // t = 2(n-1)/n * S/B + 2(n-1) * alpha (Patarasuk & Yuan 2009; formulas.md §6).
  const TopologyGraph g = build({{"type", "nvswitch-cluster"}}, 8);
  CollectiveCostModel m(g, ideal());
  for (double s : {8.0 * 1024, 64.0 * 1048576, 1073741824.0}) {
    const auto e = m.estimate(iota(8), CollectiveOp::all_reduce, Bytes(s), "ring");
    const double want = 2.0 * 7 / 8 * s / kB + 2.0 * 7 * kAlpha;
    EXPECT_NEAR(e.time.value(), want, want * 1e-12) << s;
    EXPECT_EQ(e.steps, 14);
    EXPECT_NEAR(e.latency_term.value(), 14 * kAlpha, 1e-15);
  }
  EXPECT_DOUBLE_EQ(collective_time(g, iota(8), CollectiveOp::all_reduce, Bytes(1 << 20), "ring").value(),
                   CollectiveCostModel(g).estimate(iota(8), CollectiveOp::all_reduce, Bytes(1 << 20), "ring").time.value());
}

TEST(CollectiveCost, LargeRingBusBandwidthIsLinkBandwidthTimesEfficiency) {
  // nccl-tests: busbw of a large all-reduce "should reflect the hardware bottleneck"; here
  // NVLink3 x 0.78. The latency terms (14 x 0.5 us against 61.1 ms of transfer) take
  // 1.15e-4 of the time, so busbw sits within 1.2e-4 below B.
  const TopologyGraph g = build({{"type", "nvswitch-cluster"}}, 8);
  const auto e = CollectiveCostModel(g, ideal()).estimate(iota(8), CollectiveOp::all_reduce, Bytes(8.0 * 1073741824.0), "auto");
  EXPECT_EQ(e.algorithm, "ring");
  EXPECT_NEAR(e.busbw.value(), kB, kB * 1.2e-4);
  EXPECT_LT(e.busbw.value(), kB);
}

TEST(CollectiveCost, RingAllGatherAndReduceScatterClosedForm) {
  // (n-1)/n * S/B + (n-1) alpha, S the gathered (total) size as nccl-tests counts it.
  const TopologyGraph g = build({{"type", "nvswitch-cluster"}}, 8);
  CollectiveCostModel m(g, ideal());
  const double s = 256.0 * 1048576;
  for (CollectiveOp op : {CollectiveOp::all_gather, CollectiveOp::reduce_scatter}) {
    const auto e = m.estimate(iota(8), op, Bytes(s), "ring");
    EXPECT_NEAR(e.time.value(), 7.0 / 8 * s / kB + 7 * kAlpha, 1e-12);
  }
}

TEST(CollectiveCost, BusBandwidthFactorsOfNcclTests) {
  // nccl-tests doc/PERFORMANCE.md (formulas.md §6).
  EXPECT_DOUBLE_EQ(busbw_factor(CollectiveOp::all_reduce, 8), 2.0 * 7 / 8);
  EXPECT_DOUBLE_EQ(busbw_factor(CollectiveOp::reduce_scatter, 8), 7.0 / 8);
  EXPECT_DOUBLE_EQ(busbw_factor(CollectiveOp::all_gather, 16), 15.0 / 16);
  EXPECT_DOUBLE_EQ(busbw_factor(CollectiveOp::all_to_all, 4), 3.0 / 4);
  EXPECT_DOUBLE_EQ(busbw_factor(CollectiveOp::broadcast, 8), 1.0);
  EXPECT_DOUBLE_EQ(busbw_factor(CollectiveOp::reduce, 8), 1.0);
}

TEST(CollectiveCost, TreeLatencyGrowsWithLog2N) {
  // Latency-bound (tiny message, one pipeline chunk): reduce up D levels then broadcast down
  // D levels, D = floor(log2 n): latency 2 D alpha, against the ring's 2(n-1) alpha.
  for (int n : {4, 8, 16, 32, 64}) {
    const TopologyGraph g = build({{"type", "nvswitch-cluster"}, {"gpus_per_node", n}}, n);
    CollectiveCostModel m(g, ideal());
    const auto tree = m.estimate(iota(n), CollectiveOp::all_reduce, Bytes(8), "double_binary_tree");
    EXPECT_EQ(tree.chunks, 1);
    EXPECT_NEAR(tree.latency_term.value(), 2 * std::log2(n) * kAlpha, 1e-15) << n;
    const auto picked = m.estimate(iota(n), CollectiveOp::all_reduce, Bytes(8), "auto");
    EXPECT_EQ(picked.algorithm, "double_binary_tree") << n;  // small: tree, like NCCL
  }
}

TEST(CollectiveCost, PipelineDepthFollowsTheAlgorithmsDepthAndShare) {
  // c = round(sqrt(S (D - 1) / (alpha B))) (cost.hpp), with D and S from the entry: the
  // double binary tree's D = floor(log2 n) on half of an all-reduce each, the chain's
  // D = n - 1 on the whole broadcast. alpha, B: one NVSwitch hop (kAlpha, kB).
  const TopologyGraph g = build({{"type", "nvswitch-cluster"}}, 8);
  CollectiveCostModel m(g, ideal());
  const double s = 64.0 * 1048576;
  const auto chunks = [&](double bytes, int depth) {
    return static_cast<int>(std::round(std::sqrt(bytes * (depth - 1) / (kAlpha * kB))));
  };
  EXPECT_EQ(m.estimate(iota(8), CollectiveOp::all_reduce, Bytes(s), "double_binary_tree").chunks, chunks(s / 2, 3));
  EXPECT_EQ(m.estimate(iota(8), CollectiveOp::broadcast, Bytes(s), "chain").chunks, chunks(s, 7));
}

TEST(CollectiveCost, TorusDimensionOrderedRingsClosedForm) {
  // t = sum_k 2(d_k - 1)(alpha + S / (B prod_{i<=k} d_i)), one link of 50 GB/s, 1 us per hop.
  const TopologyGraph g = build({{"type", "torus"},
                                 {"dims", {4, 4, 8}},
                                 {"link", {{"type", "electrical"}, {"bandwidth", "50 GB/s"}, {"latency", "1 us"}}}},
                                128);
  CollectiveCostModel m(g, ideal());
  const double s = 128.0 * 65536, b = 50e9, a = 1e-6;
  const double want = 2 * 3 * (a + s / (b * 4)) + 2 * 3 * (a + s / (b * 16)) + 2 * 7 * (a + s / (b * 128));
  const auto e = m.estimate(iota(128), CollectiveOp::all_reduce, Bytes(s), "torus");
  EXPECT_NEAR(e.time.value(), want, want * 1e-12);
  // Rings on all dimensions at once beat it (below).
  EXPECT_EQ(m.estimate(iota(128), CollectiveOp::all_reduce, Bytes(s), "auto").algorithm, "torus_all_dims");
}

TEST(CollectiveCost, TorusAllDimensionsAtOnceClosedForm) {
  // Multi-dimensional all-reduce (Sack & Gropp 2012) on a 4x4x4 torus, one 50 GB/s link a
  // neighbour and direction, 1 us a hop: 2d = 6 parts of S/6, part q reduce-scatters along
  // the dimensions in its own rotation and direction, so in phase k every directed link
  // carries one part's chunk S/(6 * 4^k) per step:
  //   t = 2 * sum_{k=1..3} 3 (alpha + S / (6 B 4^k)),
  // a sixth of the dimension-ordered rings' bandwidth term. Torus rings are not NCCL: the
  // model's default options leave them without protocol costs ("direct").
  const TopologyGraph g = build({{"type", "torus"},
                                 {"dims", {4, 4, 4}},
                                 {"link", {{"type", "electrical"}, {"bandwidth", "50 GB/s"}, {"latency", "1 us"}}}},
                                64);
  CollectiveCostModel m(g);
  const double s = 384.0 * 65536, b = 50e9, a = 1e-6;
  double want = 0, ordered_bw = 0;
  for (int k = 1; k <= 3; ++k) {
    want += 2 * 3 * (a + s / (6 * b * std::pow(4, k)));
    ordered_bw += 2 * 3 * s / (b * std::pow(4, k));
  }
  const auto e = m.estimate(iota(64), CollectiveOp::all_reduce, Bytes(s), "torus_all_dims");
  EXPECT_NEAR(e.time.value(), want, want * 1e-12);
  EXPECT_EQ(e.protocol, "direct");
  EXPECT_EQ(e.steps, 18);
  const auto ordered = m.estimate(iota(64), CollectiveOp::all_reduce, Bytes(s), "torus");
  EXPECT_NEAR(ordered.bandwidth_term.value(), ordered_bw, ordered_bw * 1e-12);
  EXPECT_NEAR(ordered.bandwidth_term.value() / e.bandwidth_term.value(), 6.0, 1e-9);
  EXPECT_EQ(m.estimate(iota(64), CollectiveOp::all_reduce, Bytes(s), "auto").algorithm, "torus_all_dims");
}

TEST(CollectiveCost, TorusAllDimensionsCompressedMatchesFullOnUnequalDims) {
  // 4x4x8: phases mix rings of 4 and 8, so they are evaluated uncompressed; 2x3x4 mixes 2, 3, 4.
  for (const std::vector<int>& dims : std::vector<std::vector<int>>{{4, 4, 8}, {2, 3, 4}}) {
    const int n = std::accumulate(dims.begin(), dims.end(), 1, std::multiplies<>());
    const TopologyGraph g =
        build({{"type", "torus"}, {"dims", dims}, {"link", {{"type", "electrical"}, {"bandwidth", "50 GB/s"},
                                                            {"latency", "1 us"}}}},
              n);
    CollectiveCostModel m(g, ideal());
    const std::int64_t len = 6L * n * 1000 + 7;
    const auto full = m.schedule_time(torus_all_dims_schedule(CollectiveOp::all_reduce, dims, len, false), iota(n));
    const auto comp = m.schedule_time(torus_all_dims_schedule(CollectiveOp::all_reduce, dims, len, true), iota(n));
    EXPECT_NEAR(comp.time.value(), full.time.value(), full.time.value() * 1e-3);
    EXPECT_EQ(comp.steps, full.steps);
  }
}

TEST(CollectiveCost, InNetworkReductionOnNvswitch) {
  // NVLink SHARP (NVLS): reduce-scatter by multimem loads, all-gather by multimem stores;
  // each GPU link carries S (n + 1)/n each way: t = 2 alpha_edge + S (n + 1)/(n B).
  const TopologyGraph g = build({{"type", "nvswitch-cluster"}, {"nvswitch_reduction", true}}, 8);
  CollectiveCostModel m(g, ideal());
  const double s = 1073741824.0;
  const auto e = m.estimate(iota(8), CollectiveOp::all_reduce, Bytes(s), "in_network");
  EXPECT_NEAR(e.time.value(), 2 * 0.25e-6 + s * 9.0 / 8.0 / kB, 1e-12);
  // Two GPUs: S (3/2) / B against the ring's S / B: the ring wins (busbw 2(n-1)/(n+1) B).
  EXPECT_NE(m.estimate(iota(2), CollectiveOp::all_reduce, Bytes(s), "auto").algorithm, "in_network");
  EXPECT_EQ(m.estimate(iota(8), CollectiveOp::all_reduce, Bytes(s), "auto").algorithm, "in_network");
  // Without the switch feature the algorithm cannot be forced.
  const TopologyGraph plain = build({{"type", "nvswitch-cluster"}}, 8);
  EXPECT_THROW((void)CollectiveCostModel(plain, ideal()).estimate(iota(8), CollectiveOp::all_reduce, Bytes(s), "in_network"),
               InputError);
}

TEST(CollectiveCost, NodeAwareAlgorithmsUseEveryNic) {
  // 4 nodes x 8 GPUs on HDR: a flat ring crosses one NIC per node boundary per step; the
  // hierarchical all-reduce and the NCCL-style parallel rings spread the inter-node bytes
  // over all 8 NICs of a node. One leaf of 64 ports holds all 32 NICs, so no two flows
  // meet on a spine link (with spines, ECMP collisions would add to the link loads).
  const TopologyGraph g = build({{"type", "nvswitch-cluster"}, {"switch_radix", 64}}, 32);
  CollectiveCostModel m(g, ideal());
  const double s = 1073741824.0, b_ib = kBIb;
  const auto h = m.estimate(iota(32), CollectiveOp::all_reduce, Bytes(s), "hierarchical");
  const auto mr = m.estimate(iota(32), CollectiveOp::all_reduce, Bytes(s), "multi_ring");
  const auto r = m.estimate(iota(32), CollectiveOp::all_reduce, Bytes(s), "ring");
  EXPECT_LT(h.time.value(), r.time.value());
  EXPECT_LT(mr.time.value(), r.time.value());
  // Hierarchical: its inter-node phase alone, 2(N-1)/N * (S/8)/B_ib over N = 4 nodes, is a lower bound.
  EXPECT_GT(h.time.value(), 2.0 * 3 / 4 * (s / 8) / b_ib);
  // Parallel rings: 2(n-1) steps; the node-crossing edge of each ring carries one chunk of
  // S/(8 n) per step: bandwidth term 2(n-1) * S/(8n) / B_ib (the NVLink hops are faster).
  EXPECT_NEAR(mr.bandwidth_term.value(), 2.0 * 31 * (s / (8 * 32)) / b_ib, 1e-9);
  const auto pick = m.estimate(iota(32), CollectiveOp::all_reduce, Bytes(s), "auto").algorithm;
  EXPECT_EQ(pick, mr.time < h.time ? "multi_ring" : "hierarchical");
}

TEST(CollectiveCost, GpusSharingANicRingOverNvlink) {
  // Two nodes of 8 GPUs with 4 NICs each: GPUs 0 and 1 share NIC 0, whose PCIe attachment
  // has no latency of its own. Their all-reduce stays on NVLink (routing.hpp's invariant):
  // ring of n = 2, t = 2(n-1)/n * S/B + 2(n-1) * alpha = S/B + 2 alpha, with B = 300 GB/s x
  // 0.8 and alpha = 2 x 0.25 us (GPU -> NVSwitch -> GPU), not the NIC's 25 GB/s.
  const nlohmann::json nvlink = {{"type", "electrical"}, {"bandwidth", "300 GB/s"}, {"latency", "0.25 us"},
                                 {"efficiency", 0.8}};
  const nlohmann::json nic = {{"type", "electrical"}, {"bandwidth", "25 GB/s"}, {"latency", "1 us"}};
  const TopologyGraph g =
      build({{"type", "nvswitch-cluster"}, {"nics_per_node", 4}, {"nvlink", nvlink}, {"nic", nic}}, 16);
  const double s = 1073741824.0;
  const auto e = CollectiveCostModel(g, ideal()).estimate({0, 1}, CollectiveOp::all_reduce, Bytes(s), "ring");
  const double want = s / 240e9 + 2 * 0.5e-6;
  EXPECT_NEAR(e.time.value(), want, want * 1e-12);
}

TEST(CollectiveCost, MultiRingAllGatherAndReduceScatterUseEveryNic) {
  // DGX-A100-like nodes from explicit links (not the calibrated presets): 8 GPUs on NVLink
  // (300 GB/s x 0.8, 0.25 us per edge), 8 NICs of 25 GB/s x 0.8 (20 GB/s), 1 us per NIC
  // edge, every NIC on one leaf of 64 ports (no spine, so no ECMP collision). NCCL runs
  // all-gather and reduce-scatter on as many rings as all-reduce, one per rail: g = 8 rings,
  // ring j on slice j of every rank's chunk. A step moves S/(n g) on each ring edge; the
  // node-crossing edge (GPU -> NIC -> leaf -> NIC -> GPU, alpha = 2 us) is the slowest, the
  // NVLink hops of the 7 rings that stay inside carry 7 S/(n g) at 240 GB/s (faster). So
  //   t = (n-1) * (alpha + S/(n g B_nic)),   busbw = S/t * (n-1)/n  (nccl-tests)
  //     = 1 / (n alpha/S + 1/(g B_nic))  ->  g B_nic = 160 GB/s for large S,
  // the multi-ring all-reduce's per-rail figure (2(n-1) steps of the same S/(n g) chunk:
  // busbw = S/t * 2(n-1)/n, the same expression).
  const nlohmann::json nvlink = {{"type", "electrical"}, {"bandwidth", "300 GB/s"}, {"latency", "0.25 us"},
                                 {"efficiency", 0.8}};
  const nlohmann::json nic = {{"type", "electrical"}, {"bandwidth", "25 GB/s"}, {"latency", "1 us"},
                              {"efficiency", 0.8}};
  const double b_nic = 20e9, alpha = 2e-6, g = 8;
  for (int nodes : {2, 4}) {
    const int n = 8 * nodes;
    const TopologyGraph topo =
        build({{"type", "nvswitch-cluster"}, {"switch_radix", 64}, {"nvlink", nvlink}, {"nic", nic}}, n);
    CollectiveCostModel m(topo, ideal());
    const double s = 1073741824.0;  // 2^30, a multiple of n g: every chunk is exact
    const double t = (n - 1) * (alpha + s / (n * g * b_nic));
    const double busbw = 1 / (n * alpha / s + 1 / (g * b_nic));
    for (CollectiveOp op : {CollectiveOp::all_gather, CollectiveOp::reduce_scatter}) {
      const auto e = m.estimate(iota(n), op, Bytes(s), "auto");
      EXPECT_EQ(e.algorithm, "multi_ring") << nodes;
      EXPECT_EQ(e.steps, n - 1);
      EXPECT_NEAR(e.time.value(), t, t * 1e-12) << nodes << " " << collective_op_name(op);
      EXPECT_NEAR(e.busbw.value(), busbw, busbw * 1e-12) << nodes << " " << collective_op_name(op);
      // The flat ring crosses one NIC per node boundary: busbw 1/(n alpha/S + 1/B_nic).
      const auto flat = m.estimate(iota(n), op, Bytes(s), "ring");
      EXPECT_NEAR(flat.busbw.value(), 1 / (n * alpha / s + 1 / b_nic), b_nic * 1e-12);
    }
    const auto ar = m.estimate(iota(n), CollectiveOp::all_reduce, Bytes(s), "multi_ring");
    EXPECT_NEAR(ar.busbw.value(), busbw, busbw * 1e-12) << nodes;
  }
}

TEST(CollectiveCost, CompressedScheduleMatchesTheFullOne) {
  // The compressed ring phases differ from the full schedule by at most one element per step.
  const TopologyGraph g = build({{"type", "nvswitch-cluster"}}, 32);
  CollectiveCostModel m(g, ideal());
  const std::int64_t elements = 1000003;  // ragged
  const auto full = m.schedule_time(hierarchical_schedule(CollectiveOp::all_reduce, 4, 8, elements, false), iota(32));
  const auto comp = m.schedule_time(hierarchical_schedule(CollectiveOp::all_reduce, 4, 8, elements, true), iota(32));
  EXPECT_EQ(full.steps, comp.steps);
  EXPECT_NEAR(comp.time.value(), full.time.value(), full.steps * 1.0 / (25e9 * 0.92));
}

TEST(CollectiveCost, LinkSharingSlowsAStep) {
  // All-to-all on 2 nodes of 2 GPUs with 1 shared NIC per node: both GPUs of a node send
  // across the one NIC in the same step, so the NIC edge carries twice the block.
  const TopologyGraph g =
      build({{"type", "nvswitch-cluster"}, {"gpus_per_node", 2}, {"nics_per_node", 1}}, 4);
  CollectiveCostModel m(g, ideal());
  Schedule sc{CollectiveOp::all_to_all, 4, 4, {}, 0};
  sc.steps.push_back({{{0, 2, 0, 0, 1000, false}, {1, 3, 0, 0, 1000, false}}});
  const auto e = m.schedule_time(sc, iota(4));
  EXPECT_NEAR(e.bandwidth_term.value(), 2000.0 / kBIb, 1e-15);
}

TEST(CollectiveCost, UnknownAlgorithmNamesValidOnes) {
  const TopologyGraph g = build({{"type", "nvswitch-cluster"}}, 8);
  try {
    (void)CollectiveCostModel(g, ideal()).estimate(iota(8), CollectiveOp::all_reduce, Bytes(1024), "butterfly");
    FAIL();
  } catch (const InputError& e) {
    EXPECT_NE(std::string(e.what()).find("unknown collective algorithm \"butterfly\"; valid ones are: chain,"),
              std::string::npos);
  }
  EXPECT_THROW((void)CollectiveCostModel(g, ideal()).estimate(iota(8), CollectiveOp::all_to_all, Bytes(1024), "ring"),
               InputError);
}

TEST(CollectiveCost, SendRecvAndAllToAll) {
  const TopologyGraph g = build({{"type", "nvswitch-cluster"}}, 16);
  CollectiveCostModel m(g, ideal());
  // One message across nodes: 2 host edges, alpha = 2 x 1.35 us, B = B_ib = 25 GB/s x 0.92.
  const auto p = m.estimate({0, 8}, CollectiveOp::send_recv, Bytes(1e6), "auto");
  EXPECT_EQ(p.algorithm, "direct");
  EXPECT_NEAR(p.time.value(), 2.7e-6 + 1e6 / kBIb, 1e-15);
  // All-to-all inside one node, 8 ranks (2^3): 7 steps, each S/8 per rank over its own NVLink edge.
  const auto a = m.estimate(iota(8), CollectiveOp::all_to_all, Bytes(8e6), "auto");
  EXPECT_EQ(a.algorithm, "pairwise");
  EXPECT_NEAR(a.time.value(), 7 * (kAlpha + 1e6 / kB), 1e-12);
}

TEST(CollectiveCost, HierarchicalAllToAllAcrossTwoNodes) {
  // 16 ranks on two nodes of 8 (8 NICs each), blocks of b bytes (S = 16 b per rank).
  // Hierarchical: 7 NVLink steps, each rank sending its local peer 2 blocks (one per node),
  // 7 (alpha + 2b/B); then 1 step across, each rank sending 8 blocks on its own NIC,
  // 2 x 1.35 us + 8b/B_ib. Flat pairwise: 15 steps (2^4), 7 of them inside the node and
  // 8 across, each one block: 7 (alpha + b/B) + 8 (2.7 us + b/B_ib). The node-crossing
  // bytes are the same; the hierarchical exchange saves 7 network latencies and pays 7b/B
  // more on NVLink, so it wins below b = 2.7 us B (632 kB) and loses above.
  const TopologyGraph g = build({{"type", "nvswitch-cluster"}}, 16);
  CollectiveCostModel m(g, ideal());
  for (double b : {4096.0, 1e6}) {
    const auto h = m.estimate(iota(16), CollectiveOp::all_to_all, Bytes(16 * b), "hierarchical");
    const double th = 7 * (kAlpha + 2 * b / kB) + 2.7e-6 + 8 * b / kBIb;
    EXPECT_NEAR(h.time.value(), th, th * 1e-12);
    EXPECT_EQ(h.steps, 8);
    const auto p = m.estimate(iota(16), CollectiveOp::all_to_all, Bytes(16 * b), "pairwise");
    const double tp = 7 * (kAlpha + b / kB) + 8 * (2.7e-6 + b / kBIb);
    EXPECT_NEAR(p.time.value(), tp, tp * 1e-12);
    EXPECT_EQ(m.estimate(iota(16), CollectiveOp::all_to_all, Bytes(16 * b), "auto").algorithm,
              b < 2.7e-6 * kB ? "hierarchical" : "pairwise")
        << b;
  }
}

}  // namespace
}  // namespace hcsim

namespace hcsim {
namespace {

// Siblings (DeviceGroup::sibling_offsets, cost.hpp): GPU 0 of each of two nodes all-reduce
// while GPUs 1..7 of the same nodes run the same all-reduce with their twins. Two NICs per
// node: GPUs 0-3 share NIC 0, so four flows leave through its port and each gets a quarter
// of B_ib. Ring all-reduce over n = 2: bandwidth term 2(n-1)/n S / B = S / B alone and
// S / (B / 4) with the siblings (closed form of max-min sharing of identical flows).
TEST(CollectiveCost, SiblingsBehindOneNicShareItsBandwidth) {
  const TopologyGraph g = build({{"type", "nvswitch-cluster"}, {"nics_per_node", 2}}, 16);
  CollectiveCostModel m(g, ideal());
  const double s = 256.0 * 1048576;
  const std::vector<int> group{0, 8}, siblings{1, 2, 3, 4, 5, 6, 7};
  const auto alone = m.estimate(group, CollectiveOp::all_reduce, Bytes(s), "ring");
  const auto shared = m.estimate(group, CollectiveOp::all_reduce, Bytes(s), "ring", siblings);
  EXPECT_NEAR(alone.bandwidth_term.value(), s / kBIb, s / kBIb * 1e-12);
  EXPECT_NEAR(shared.bandwidth_term.value(), 4 * s / kBIb, 4 * s / kBIb * 1e-12);
  EXPECT_DOUBLE_EQ(shared.latency_term.value(), alone.latency_term.value());
  // Eight NICs per node: every GPU has its own, and the siblings take nothing from it.
  const TopologyGraph rails = build({{"type", "nvswitch-cluster"}}, 16);
  CollectiveCostModel r(rails, ideal());
  EXPECT_DOUBLE_EQ(r.estimate(group, CollectiveOp::all_reduce, Bytes(s), "ring", siblings).time.value(),
                   r.estimate(group, CollectiveOp::all_reduce, Bytes(s), "ring").time.value());
}

// "auto" with siblings costs the candidates with the siblings' load in order of their time
// alone and stops where that lower bound reaches the best so far; it must still return the
// least time of every candidate with the siblings on the links (a brute force over
// auto_candidates()). Fat-tree leaves of 20 nodes (radix 40) with hashed uplinks, where
// flows collide: the expert group of nodes 16-23 straddles a leaf edge, that of nodes 24-31
// does not; a data-parallel group (stride 8) with its tensor-rank siblings; sizes from
// latency- to bandwidth-bound.
TEST(CollectiveCost, AutoWithSiblingsIsTheLeastCandidateWithThem) {
  const TopologyGraph g = testing::h800_leaves_of_20_nodes("fat-tree", "ecmp-hash");
  std::vector<int> stride8;
  for (int d = 0; d < 256; d += 8) stride8.push_back(d);
  const std::vector<std::tuple<std::vector<int>, CollectiveOp, std::vector<int>>> cases{
      {iota(64, 128), CollectiveOp::all_to_all, {64}},
      {iota(64, 192), CollectiveOp::all_to_all, {-64}},
      {iota(64, 0), CollectiveOp::all_to_all, {64, 128, 192}},
      {stride8, CollectiveOp::all_reduce, {1, 2, 3, 4, 5, 6, 7}},
      {stride8, CollectiveOp::all_gather, {1, 2, 3, 4, 5, 6, 7}}};
  int differs = 0;  // cases where the siblings change the choice (the bound is exercised)
  for (const auto& [group, op, siblings] : cases)
    for (double s : {4096.0, 1048576.0, 268435456.0}) {
      CollectiveCostModel m(g);
      const CollectiveEstimate got = m.estimate(group, op, Bytes(s), "auto", siblings);
      double least = std::numeric_limits<double>::infinity();
      for (const CollectiveAlgorithm* a : auto_candidates()) {
        std::vector<int> ranks;
        if (!a->supports(op, m.shape_of(group, ranks)) ||
            (a->auto_max_ranks > 0 && group.size() > static_cast<std::size_t>(a->auto_max_ranks)))
          continue;
        try {
          least = std::min(least, m.estimate(group, op, Bytes(s), a->name, siblings).time.value());
        } catch (const InputError&) {}
      }
      EXPECT_DOUBLE_EQ(got.time.value(), least) << collective_op_name(op) << " " << s << " from " << group[0];
      differs += got.algorithm != m.estimate(group, op, Bytes(s), "auto").algorithm ? 1 : 0;
    }
  EXPECT_GT(differs, 0);
}

}  // namespace
}  // namespace hcsim
