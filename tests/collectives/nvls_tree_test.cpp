// The NVLS tree all-reduce across nodes (sim/collectives/nvls_tree.cpp, NCCL's NVLS_TREE):
// its sum on real buffers, its time against closed forms from explicit link figures (not the
// calibrated presets), and NCCL's NVLS latency, efficiency and channel limit (tuning.cc).
#include <algorithm>
#include <cmath>
#include <numeric>
#include <random>

#include <gtest/gtest.h>

#include "../support/test_topology.hpp"
#include "sim/collectives/cost.hpp"
#include "sim/collectives/executor.hpp"

namespace hcsim {
namespace {

// N nodes of g GPUs, NVSwitches that reduce. NVLink 300 GB/s x 0.8 = B_nv = 240 GB/s, 1 us an
// edge (GPU -> switch -> GPU: alpha = 2 us); one NIC per GPU, 50 GB/s, 1 us, all on one leaf
// of 64 ports (GPU -> NIC -> leaf -> NIC -> GPU: alpha = 2 us, B_nic = 50 GB/s, no spine).
TopologyGraph cluster(int nodes, int g, bool reduction = true) {
  return testing::test_topology(
      {{"type", "nvswitch-cluster"},
       {"gpus_per_node", g},
       {"nvswitch_reduction", reduction},
       {"switch_radix", 64},
       {"nvlink", {{"type", "electrical"}, {"bandwidth", "300 GB/s"}, {"latency", "1 us"}, {"efficiency", 0.8}}},
       {"nic", {{"type", "electrical"}, {"bandwidth", "50 GB/s"}, {"latency", "1 us"}, {"efficiency", 1.0}}}},
      nodes * g);
}
constexpr double kAlphaNvls = 2e-6, kBnv = 240e9, kBnic = 50e9;

CostOptions with(const NvlsCost& nvls) {
  CostOptions o{.protocols = ProtocolSet::ideal()};
  o.protocols.nvls = nvls;
  return o;
}

// The rails' double binary trees over N nodes (NCCL's trees.cc illustration, in-order trees,
// the second mirrored for even N), written out by hand: (child, parent, depth) per edge.
// N = 2: 1 -> 0 and 0 -> 1. N = 4: 0 <- 2 <- {1, 3} and 3 <- 1 <- {2, 0}; D = 2.
struct Edge {
  int child, parent, depth;
};
std::vector<Edge> rail_trees(int nodes) {
  if (nodes == 2) return {{1, 0, 1}, {0, 1, 1}};
  EXPECT_EQ(nodes, 4);
  return {{2, 0, 1}, {1, 2, 2}, {3, 2, 2}, {1, 3, 1}, {2, 1, 2}, {0, 1, 2}};
}
int height(int nodes) { return nodes == 2 ? 1 : 2; }

// Adds the NICs' loads in halves of a slice, each way, at net step j (0 .. 2D - 1) of one
// piece: reduce steps j < D move the edges at depth D - j up, broadcast steps the edges at
// depth j - D + 1 down; every edge moves one half.
void add_nic_halves(int nodes, int j, std::vector<double>& in, std::vector<double>& out) {
  const int d = height(nodes);
  for (const Edge& e : rail_trees(nodes)) {
    const bool up = j < d;
    if (e.depth != (up ? d - j : j - d + 1)) continue;
    ++out[static_cast<std::size_t>(up ? e.child : e.parent)];
    ++in[static_cast<std::size_t>(up ? e.parent : e.child)];
  }
}

// The closed form of the pipelined schedule (schedule.hpp), step by step: piece k enters at
// step k (reduce-scatter by multimem loads: each GPU's link to the switch carries S/c up, its
// own slice included, and S/(c g) down), runs its 2D tree steps at k+1 .. k+2D (each tree
// edge moves half of the piece's slice, S/(2 c g), over its NICs) and leaves at k + 2D + 1
// (all-gather by multimem stores: S/(c g) up, S/c down). Every step costs alpha + max(NVLink
// load / (share B_nv), NIC load / B_nic) (cost.hpp), so
//   T = sum_{s=0}^{c+2D} alpha + max((R_s + A_s/g, R_s/g + A_s) S/(c share B_nv), H_s S/(2 c g B_nic))
// with R_s, A_s = 1 when a piece is scattered, gathered at step s and H_s the most halves one
// NIC moves one way, summed over the pieces in their tree steps.
double closed_form(int nodes, int g, int c, double s, double share = 1) {
  const int d = height(nodes);
  double t = 0;
  for (int step = 0; step < c + 2 * d + 1; ++step) {
    const double r = step < c ? 1 : 0, a = step >= 2 * d + 1 ? 1 : 0;
    std::vector<double> in(static_cast<std::size_t>(nodes), 0), out = in;
    for (int k = 0; k < c; ++k)
      if (step >= k + 1 && step <= k + 2 * d) add_nic_halves(nodes, step - k - 1, in, out);
    const double halves = std::max(*std::max_element(in.begin(), in.end()), *std::max_element(out.begin(), out.end()));
    const double nv = std::max(r + a / g, r / g + a) * s / (c * share * kBnv);
    t += kAlphaNvls + std::max(nv, halves * s / (2.0 * c * g * kBnic));
  }
  return t;
}

TEST(NvlsTree, ComputesTheSumOnEveryShape) {
  // The reference executor against the directly summed vectors, exact on integers; ragged
  // sizes leave some pieces and slices empty.
  std::mt19937_64 rng(5);
  std::uniform_int_distribution<int> dist(-1000, 1000);
  int checked = 0;
  for (int nodes : {1, 2, 3, 4})
    for (int g : {2, 4, 8})
      for (std::int64_t len : {std::int64_t{1}, std::int64_t{nodes * g} - 1, std::int64_t{101}, std::int64_t{203}})
        for (int c : {1, 3, 5}) {
          const Schedule sc = nvls_tree_schedule(CollectiveOp::all_reduce, nodes, g, len, c);
          const int d = nodes == 1 ? 0 : nodes == 2 ? 1 : 2;  // ceil(log2 N)
          ASSERT_EQ(sc.steps.size(), static_cast<std::size_t>(c + 2 * d + 1));
          std::vector<Eigen::VectorXd> in;
          for (int r = 0; r < nodes * g; ++r) {
            Eigen::VectorXd v(len);
            for (std::int64_t i = 0; i < len; ++i) v[i] = dist(rng);
            in.push_back(std::move(v));
          }
          auto buf = in;
          ASSERT_EQ(execute_schedule(sc, buf), "");
          const auto want = expected_result(CollectiveOp::all_reduce, in);
          for (int r = 0; r < nodes * g; ++r)
            ASSERT_EQ(buf[static_cast<std::size_t>(r)], want[static_cast<std::size_t>(r)])
                << nodes << "x" << g << " elements " << len << " chunks " << c << " rank " << r;
          ++checked;
        }
  EXPECT_EQ(checked, 4 * 3 * 4 * 3);
}

TEST(NvlsTree, OnePieceIsTheSumOfTheNvlinkAndRailTerms) {
  // T = 2(alpha + S/B_nv) + the rails' trees: the reduce-scatter's S up each GPU's NVLink,
  // the all-gather's S down, between them each rail's double binary tree of its S/g slice on
  // its own NICs (the spine and the other rails carry nothing), halves h = S/(2g):
  //   2 nodes, D = 1: up h, down h, each NIC moving one half each way: 2(alpha + h/B_nic);
  //   4 nodes, D = 2: node 2 receives from 1 and 3 (tree 0), node 1 from 2 and 0 (tree 1),
  //   then 2 -> 0 and 1 -> 3, then back: 2(alpha + 2h/B_nic) + 2(alpha + h/B_nic).
  const double s = 1073741824.0;  // 2^30: every slice exact
  for (int nodes : {2, 4}) {
    const TopologyGraph topo = cluster(nodes, 8);
    const CollectiveCostModel m(topo, {.protocols = ProtocolSet::ideal()});
    const auto e = m.schedule_time(nvls_tree_schedule(CollectiveOp::all_reduce, nodes, 8, std::int64_t(s), 1),
                                   testing::first_devices(nodes * 8));
    const double h = s / 16;
    const double tree =
        nodes == 2 ? 2 * (kAlphaNvls + h / kBnic) : 2 * (kAlphaNvls + 2 * h / kBnic) + 2 * (kAlphaNvls + h / kBnic);
    const double want = 2 * (kAlphaNvls + s / kBnv) + tree;
    EXPECT_NEAR(e.time.value(), want, want * 1e-12) << nodes;
    EXPECT_NEAR(e.time.value(), closed_form(nodes, 8, 1, s), want * 1e-12) << nodes;
  }
}

TEST(NvlsTree, PipelinedPiecesOverlapTheStages) {
  // c pieces: the closed form above, step by step; as c grows the time tends to the slowest
  // stage, max((g + 1)/g S/B_nv, H S/(2 g B_nic)) with H the halves of a slice the busiest NIC
  // moves each way per piece (tuning.cc: bw = min(intraBw, interBw)). 2 nodes: H = 2, the
  // NVLink's 9/8 x 2^30/240 GB/s = 5.03 ms binds, the rails' 2^30/(8 x 50 GB/s) = 2.68 ms hide
  // behind it; 4 nodes: H = 4 (an interior rank of one tree and a leaf of the other), the
  // rails' 5.37 ms bind, as NCCL credits NVLS_TREE twice the network bandwidth on 2 nodes only.
  const double s = 1073741824.0;
  for (int nodes : {2, 4})
    for (int c : {2, 7, 64}) {
      const TopologyGraph topo = cluster(nodes, 8);
      const CollectiveCostModel m(topo, {.protocols = ProtocolSet::ideal()});
      const auto e = m.schedule_time(nvls_tree_schedule(CollectiveOp::all_reduce, nodes, 8, std::int64_t(s), c),
                                     testing::first_devices(nodes * 8));
      const double want = closed_form(nodes, 8, c, s);
      EXPECT_NEAR(e.time.value(), want, want * 1e-6) << nodes << " nodes, " << c << " pieces";
    }
  // The model's own depth: the estimate is the schedule's time at the chunks c it reports,
  // c = sqrt(X (2D + 1)/alpha) with X = 2/8 S/B_nic the slowest stage (algorithms.hpp) = 116,
  // which minimises (c + 2D + 1)(alpha + X/c): half or twice as many pieces take longer. The
  // fill and drain and the steps' latency cost about 2 sqrt(5 X alpha) + 5 X/c over X.
  const TopologyGraph topo = cluster(4, 8);
  const CollectiveCostModel m(topo, {.protocols = ProtocolSet::ideal()});
  const auto e = m.estimate(testing::first_devices(32), CollectiveOp::all_reduce, Bytes(s), "nvls_tree");
  const double x = 2.0 / 8 * s / kBnic;
  EXPECT_EQ(e.chunks, static_cast<int>(std::round(std::sqrt(x * 5 / kAlphaNvls))));
  EXPECT_NEAR(e.time.value(), closed_form(4, 8, e.chunks, s), e.time.value() * 1e-6);
  EXPECT_LT(e.time.value(), closed_form(4, 8, e.chunks / 2, s));
  EXPECT_LT(e.time.value(), closed_form(4, 8, e.chunks * 2, s));
  const double uniform = (e.chunks + 5) * (kAlphaNvls + x / e.chunks);  // every step as busy as the steady one
  EXPECT_LT(e.time.value(), uniform);
  EXPECT_GT(e.time.value(), x + e.chunks * kAlphaNvls);
}

TEST(NvlsTree, NcclLatencyShareAndChannelLimit) {
  // tuning.cc: NVLS_TREE latency = baseLat 0 + hwLat[NVLINK][NVLSTree][Simple] 25 us +
  // 2 log2(N) x hwLat[NET][NVLSTree][Simple] 20.9 us, on top of the schedule's link
  // latencies; the switch's traffic gets nvlsEfficiency 0.85 x (16 - 1)/16 channels of the
  // NVLink; busbw at most 16 channels x perChMaxNVLSTreeBw (57.7 GB/s on 2 nodes, 45.5 beyond).
  const NvlsCost nccl = ProtocolSet::nccl().nvls;
  EXPECT_DOUBLE_EQ(nccl.efficiency, 0.85);
  EXPECT_EQ(nccl.channels, 16);
  EXPECT_DOUBLE_EQ(nccl.latency.value(), 25e-6);
  EXPECT_DOUBLE_EQ(nccl.tree_net_latency.value(), 20.9e-6);
  EXPECT_DOUBLE_EQ(nccl.tree_channel_limit(2).value(), 57.7e9);
  EXPECT_DOUBLE_EQ(nccl.tree_channel_limit(4).value(), 45.5e9);
  const double share = 0.85 * 15 / 16, s = 1073741824.0;
  for (int nodes : {2, 4}) {
    const TopologyGraph topo = cluster(nodes, 8);
    const CollectiveCostModel m(topo, with(nccl));
    const auto e = m.estimate(testing::first_devices(8 * nodes), CollectiveOp::all_reduce, Bytes(s), "nvls_tree");
    const double levels = nodes == 2 ? 1 : 2;
    const double want = closed_form(nodes, 8, e.chunks, s, share) + 25e-6 + 2 * levels * 20.9e-6;
    EXPECT_NEAR(e.time.value(), want, want * 1e-6) << nodes;
    EXPECT_EQ(e.protocol, "direct");  // the ideal set's protocol; the NVLS figures are apart
  }
  // A per-channel limit of 1 GB/s binds: t_bw = 2(n-1)/n S / (16 x 1 GB/s) (busbw = 16 GB/s).
  NvlsCost slow = nccl;
  slow.tree_channel_bandwidth_2_nodes = BytesPerSecond(1e9);
  const TopologyGraph two = cluster(2, 8);
  const CollectiveCostModel m(two, with(slow));
  const auto e = m.estimate(testing::first_devices(16), CollectiveOp::all_reduce, Bytes(s), "nvls_tree");
  EXPECT_NEAR(e.bandwidth_term.value(), 2.0 * 15 / 16 * s / 16e9, 1e-9);
  EXPECT_NEAR(e.busbw.value(), 16e9, 16e9 * 3e-3);  // less the latency terms, 0.2 % of 125 ms
}

TEST(NvlsTree, AutoPicksItForLargeBuffersWhereSwitchesReduce) {
  // 2 nodes of 8 at 1 GiB: the stages overlap, ~ max(9/8 S/(share B_nv), S/(8 B_nic)) = 6.3
  // ms, against the hierarchical all-reduce's sum of 2 x 7/8 S/B_nv + S/(8 B_nic) = 10.5 ms
  // and the multi-ring's 2(n-1) steps of 7 rings' S/(n g) on each NVLink, 7.3 ms.
  // Small buffers: its 25 + 2 x 20.9 us latency loses to the trees and rings.
  const TopologyGraph topo = cluster(2, 8), no_reduction = cluster(2, 8, false);
  const CollectiveCostModel m(topo);
  EXPECT_EQ(m.estimate(testing::first_devices(16), CollectiveOp::all_reduce, Bytes(1073741824.0)).algorithm,
            "nvls_tree");
  EXPECT_NE(m.estimate(testing::first_devices(16), CollectiveOp::all_reduce, Bytes(65536)).algorithm, "nvls_tree");
  // Without reducing switches it is not a candidate, and naming it is refused with why.
  const CollectiveCostModel plain(no_reduction);
  EXPECT_NE(plain.estimate(testing::first_devices(16), CollectiveOp::all_reduce, Bytes(1073741824.0)).algorithm,
            "nvls_tree");
  try {
    (void)plain.estimate(testing::first_devices(16), CollectiveOp::all_reduce, Bytes(1073741824.0), "nvls_tree");
    ADD_FAILURE() << "nvls_tree ran without reducing switches";
  } catch (const InputError& err) {
    EXPECT_NE(std::string(err.what()).find("nvswitch_reduction"), std::string::npos) << err.what();
  }
}

TEST(NvlsTree, InNetworkOnOneNodeTakesNcclsNvlsFigures) {
  // NVLS on one node (tuning.cc): latency hwLat[NVLINK][NVLS][Simple] = 25 us (baseLat 0), the
  // switch's traffic at 0.85 x 15/16 of the link: t = 2 alpha + S (n+1)/(n share B) + 25 us,
  // busbw 2(n-1)/(n+1) share B: 0.96 B at 4 GPUs (the ring's B wins), 1.24 B at 8 (NVLS wins).
  const double share = 0.85 * 15 / 16, s = 1073741824.0;
  for (int n : {4, 8}) {
    const TopologyGraph topo = cluster(1, n);
    const CollectiveCostModel m(topo);
    const auto e = m.estimate(testing::first_devices(n), CollectiveOp::all_reduce, Bytes(s), "in_network");
    const double want = kAlphaNvls + s * (n + 1) / (n * share * kBnv) + 25e-6;
    EXPECT_NEAR(e.time.value(), want, want * 1e-9) << n;
    EXPECT_EQ(m.estimate(testing::first_devices(n), CollectiveOp::all_reduce, Bytes(s)).algorithm,
              n == 4 ? "ring" : "in_network");
    // 8 KiB: 25 us loses to LL rings and trees.
    EXPECT_NE(m.estimate(testing::first_devices(n), CollectiveOp::all_reduce, Bytes(8192)).algorithm, "in_network")
        << n;
  }
}

}  // namespace
}  // namespace hcsim
