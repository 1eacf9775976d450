// DeepEP dispatch (sim/collectives/deepep.hpp): the deduplication against enumerating every
// expert set, the bytes its schedule puts across nodes and on NVLink, and its cost-model time
// against the closed form of its two pairwise stages.
#include "sim/collectives/deepep.hpp"

#include <algorithm>
#include <numeric>
#include <vector>

#include <gtest/gtest.h>

#include "../support/test_topology.hpp"
#include "sim/collectives/cost.hpp"

namespace hcsim {
namespace {

// Mean distinct nodes over all C(E, k) sets of k distinct experts, expert j on node j / (E/N).
double enumerated_nodes(int experts, int k, int nodes) {
  std::vector<int> pick(static_cast<std::size_t>(k));
  std::iota(pick.begin(), pick.end(), 0);
  const int per = experts / nodes;
  double sum = 0, sets = 0;
  while (true) {
    std::vector<bool> hit(static_cast<std::size_t>(nodes), false);
    for (int e : pick) hit[static_cast<std::size_t>(e / per)] = true;
    sum += static_cast<double>(std::count(hit.begin(), hit.end(), true));
    ++sets;
    // Next k-combination in lexicographic order.
    int i = k - 1;
    while (i >= 0 && pick[static_cast<std::size_t>(i)] == experts - k + i) --i;
    if (i < 0) break;
    ++pick[static_cast<std::size_t>(i)];
    for (int j = i + 1; j < k; ++j) pick[static_cast<std::size_t>(j)] = pick[static_cast<std::size_t>(j - 1)] + 1;
  }
  return sum / sets;
}

TEST(Deepep, ExpectedNodesPerTokenMatchesEnumeratingEveryExpertSet) {
  // N (1 - C(E - E/N, k) / C(E, k)) against the mean over all C(E, k) expert sets.
  int checked = 0;
  for (int experts : {4, 6, 8, 12, 16})
    for (int nodes = 1; nodes <= experts; ++nodes) {
      if (experts % nodes != 0) continue;
      for (int k = 1; k <= std::min(experts, 5); ++k) {
        const double want = enumerated_nodes(experts, k, nodes);
        EXPECT_NEAR(expected_token_nodes({experts, k, 0}, nodes), want, 1e-12)
            << "E=" << experts << " k=" << k << " N=" << nodes;
        ++checked;
      }
    }
  EXPECT_GT(checked, 60);
  // k = 1: one node; k = E: every node; one node: itself.
  EXPECT_DOUBLE_EQ(expected_token_nodes({64, 1, 0}, 8), 1.0);
  EXPECT_DOUBLE_EQ(expected_token_nodes({16, 16, 0}, 4), 4.0);
  EXPECT_DOUBLE_EQ(expected_token_nodes({16, 4, 0}, 1), 1.0);
}

TEST(Deepep, NodeLimitedRoutingCapsTheNodes) {
  // DeepSeek-V3 (report §2.1.2): 256 experts, top-8, on 8 nodes: 8 (1 - C(224, 8)/C(256, 8))
  // = 5.2947 nodes per token unlimited, capped at M = 4; on 4 nodes 3.6142, under the cap.
  double none = 1;
  for (int i = 0; i < 8; ++i) none *= (224.0 - i) / (256.0 - i);
  EXPECT_NEAR(expected_token_nodes({256, 8, 0}, 8), 8 * (1 - none), 1e-12);
  EXPECT_NEAR(expected_token_nodes({256, 8, 0}, 8), 5.2947, 1e-4);
  EXPECT_DOUBLE_EQ(expected_token_nodes({256, 8, 4}, 8), 4.0);
  EXPECT_NEAR(expected_token_nodes({256, 8, 4}, 4), expected_token_nodes({256, 8, 0}, 4), 1e-15);
  EXPECT_NEAR(expected_token_nodes({256, 8, 4}, 4), 3.6142, 1e-4);
  // The share of the k-copy node-crossing bytes: D / k; 1 without routing or on one node.
  EXPECT_DOUBLE_EQ(deepep_node_share({256, 8, 4}, 8), 0.5);
  EXPECT_DOUBLE_EQ(deepep_node_share({}, 8), 1.0);
  EXPECT_DOUBLE_EQ(deepep_node_share({256, 8, 4}, 1), 1.0);
}

// Elements the schedule moves between nodes and inside them (g ranks per node).
std::pair<double, double> crossing_and_local(const Schedule& sc, int g) {
  double across = 0, inside = 0;
  for (const Step& st : sc.steps)
    for (const Transfer& t : st.transfers) (t.src / g != t.dst / g ? across : inside) += t.count * st.repeat;
  return {across, inside};
}

TEST(Deepep, BytesAcrossNodesAndOnNvlink) {
  // n = N g ranks, each with a send buffer of S = n b (k copies of its tokens). Across nodes
  // each rank sends each other node the tokens bound there once: (N - 1) (S / N)(D / k);
  // inside the node it forwards each local peer the copies of N blocks: (g - 1) S / g.
  // Hierarchical all-to-all: the same NVLink bytes, (N - 1) S / N across.
  struct Case {
    int nodes, g, experts, k;
    double share;  // D / k, from the closed form (comments: its value)
  };
  for (const Case c : {Case{2, 8, 64, 8, 0.2494059022}, Case{4, 4, 16, 4, 0.7280219780}}) {
    const double share = deepep_node_share({c.experts, c.k, 0}, c.nodes);
    EXPECT_NEAR(share, c.share, 1e-9);
    const int n = c.nodes * c.g;
    const std::int64_t b = 1 << 20, s = n * b;
    const auto [across, inside] = crossing_and_local(deepep_all_to_all_schedule(c.nodes, c.g, s, share), c.g);
    const double sent = std::llround(static_cast<double>(c.g * b) * share);  // one message of g blocks' tokens
    EXPECT_DOUBLE_EQ(across, static_cast<double>(n) * (c.nodes - 1) * sent);
    EXPECT_NEAR(across, n * (c.nodes - 1.0) * s / c.nodes * share, n * (c.nodes - 1.0));  // rounding: < 1 per message
    EXPECT_DOUBLE_EQ(inside, static_cast<double>(n) * (c.g - 1) * s / c.g);
    const auto [h_across, h_inside] = crossing_and_local(hierarchical_all_to_all_schedule(c.nodes, c.g, s), c.g);
    EXPECT_DOUBLE_EQ(h_across, static_cast<double>(n) * (c.nodes - 1) * s / c.nodes);
    EXPECT_DOUBLE_EQ(h_inside, inside);
  }
}

std::vector<int> group_of(int n) {
  std::vector<int> v(static_cast<std::size_t>(n));
  std::iota(v.begin(), v.end(), 0);
  return v;
}

TEST(Deepep, CostModelTimeClosedForm) {
  // Nodes of 8 GPUs (nvswitch-cluster defaults, as tests/collectives/cost_test.cpp):
  // NVLink alpha = 0.5 us, B = 300 GB/s x 0.78; one HDR NIC per GPU, B_ib = 25 GB/s x 0.92, a
  // node-crossing route of 2 x 1.35 us. Blocks of b bytes (S = n b), ideal protocol.
  // DeepEP: N - 1 steps across (N = 2^j), each rank sending its rail peer 8 b D/k, then 7
  // NVLink steps of N blocks: (N - 1)(2.7 us + 8 b D/k / B_ib) + 7 (alpha + N b / B).
  constexpr double kAlpha = 0.5e-6, kB = 300e9 * 0.78, kBIb = 25e9 * 0.92;
  const TokenRouting routing{64, 8, 0};
  for (int nodes : {2, 4}) {
    const TopologyGraph g = testing::test_topology({{"type", "nvswitch-cluster"}, {"switch_radix", 64}}, 8 * nodes);
    CollectiveCostModel m(g, {.protocols = ProtocolSet::ideal(), .deepep = routing});
    const double share = deepep_node_share(routing, nodes);
    for (double b : {4096.0, 1e6}) {
      const Bytes s(8 * nodes * b);
      const auto e = m.estimate(group_of(8 * nodes), CollectiveOp::all_to_all, s, "deepep");
      const double want = (nodes - 1) * (2.7e-6 + 8 * b * share / kBIb) + 7 * (kAlpha + nodes * b / kB);
      // The message is rounded to whole elements: within a byte's time per step.
      EXPECT_NEAR(e.time.value(), want, nodes / kBIb) << nodes << " nodes, b = " << b;
      EXPECT_EQ(e.steps, nodes - 1 + 7);
      // Against the hierarchical exchange the node-crossing bytes shrink by D/k.
      const auto h = m.estimate(group_of(8 * nodes), CollectiveOp::all_to_all, s, "hierarchical");
      EXPECT_NEAR(h.time.value() - e.time.value(), (nodes - 1) * 8 * b * (1 - share) / kBIb, nodes / kBIb);
    }
  }
}

TEST(Deepep, OneNodeIsThePairwiseExchange) {
  const TopologyGraph g = testing::test_topology({{"type", "nvswitch-cluster"}}, 8);
  CollectiveCostModel m(g, {.protocols = ProtocolSet::ideal(), .deepep = TokenRouting{64, 8, 0}});
  const auto d = m.estimate(group_of(8), CollectiveOp::all_to_all, Bytes(8e6), "deepep");
  const auto p = m.estimate(group_of(8), CollectiveOp::all_to_all, Bytes(8e6), "pairwise");
  EXPECT_DOUBLE_EQ(d.time.value(), p.time.value());
  EXPECT_NEAR(d.time.value(), 7 * (0.5e-6 + 1e6 / (300e9 * 0.78)), 1e-12);
}

TEST(UnevenRouting, EachRankReceivesItsExpertsShareOfTheTokens) {
  // Zipf exponent 1 over E = 16 experts (expert j takes (1/(j+1)) / H_16 of the routed
  // tokens), 8 ranks of 2 experts: rank r receives (1/(2r+1) + 1/(2r+2)) / H_16, and its
  // block's weight is that over rank 0's 1.5 / H_16.
  const std::vector<double> w = rank_block_weights({16, 2, 0, 1.0, 0.0}, 8);
  ASSERT_EQ(w.size(), 8u);
  for (int r = 0; r < 8; ++r)
    EXPECT_NEAR(w[static_cast<std::size_t>(r)], (1.0 / (2 * r + 1) + 1.0 / (2 * r + 2)) / 1.5, 1e-15);
  // Even routing, or every expert padded to its capacity: every block is the same (none).
  EXPECT_TRUE(rank_block_weights({16, 2, 0, 0.0, 0.0}, 8).empty());
  EXPECT_TRUE(rank_block_weights({16, 2, 0, 1.0, 1.25}, 8).empty());
}

TEST(UnevenRouting, EachScheduleSizesABlockForItsFinalDestination) {
  // 4 nodes of 4 ranks, blocks of b = 1,000 elements, weights w (Zipf 1 over 16 experts, one
  // a rank). What reaches rank j from the other nodes, summed over the schedule:
  //  pairwise: (n - 1) w_j b from every rank, directly;
  //  hierarchical: rank (c, l) receives from its rail peer on each other node that node's
  //    g blocks for it in one message: (N - 1) g w_j b;
  //  DeepEP: the message to (c, i) carries node c's ranks' blocks together, as deduplicated:
  //    (N - 1) round(D/k sum_l w_(c,l) b).
  const int nodes = 4, g = 4, n = nodes * g;
  const std::int64_t b = 1000, s = n * b;
  const std::vector<double> w = rank_block_weights({16, 2, 0, 1.0, 0.0}, n);
  ASSERT_EQ(w.size(), static_cast<std::size_t>(n));
  auto received_across = [&](const Schedule& sc) {
    std::vector<double> in(static_cast<std::size_t>(n), 0.0);
    for (const Step& st : sc.steps)
      for (const Transfer& t : st.transfers)
        if (t.src / g != t.dst / g) in[static_cast<std::size_t>(t.dst)] += static_cast<double>(t.count) * st.repeat;
    return in;
  };
  auto block = [&](int j) {
    return static_cast<double>(std::llround(static_cast<double>(b) * w[static_cast<std::size_t>(j)]));
  };
  const auto pw = received_across(pairwise_all_to_all_schedule(n, s, false, w));
  const auto hi = received_across(hierarchical_all_to_all_schedule(nodes, g, s, false, w));
  const double share = deepep_node_share({16, 2, 0}, nodes);
  const auto dp = received_across(deepep_all_to_all_schedule(nodes, g, s, share, false, w));
  for (int j = 0; j < n; ++j) {
    EXPECT_DOUBLE_EQ(pw[static_cast<std::size_t>(j)], (n - g) * block(j)) << "pairwise, rank " << j;
    EXPECT_DOUBLE_EQ(hi[static_cast<std::size_t>(j)], (nodes - 1) * g * block(j)) << "hierarchical, rank " << j;
    double node = 0;
    for (int l = 0; l < g; ++l) node += block(j / g * g + l);
    EXPECT_DOUBLE_EQ(dp[static_cast<std::size_t>(j)], (nodes - 1) * static_cast<double>(std::llround(node * share)))
        << "deepep, rank " << j;
  }
  // The busiest rank's block is the even one: the buffer is sized for it.
  EXPECT_DOUBLE_EQ(block(0), static_cast<double>(b));
}

TEST(UnevenRouting, TheBusiestNodeSetsADeepepDispatchAcrossNodes) {
  // Two nodes of 8 (one HDR NIC per GPU, as CostModelTimeClosedForm), E = 16 experts top-2,
  // Zipf 1: node 0 holds experts 0-7, most of the tokens. DeepEP's one crossing step carries
  // to (c, i) D/k of node c's blocks together, so it takes 2.7 us + D/k sum_l w_(c,l) b / B_ib
  // for the busiest node c = 0, against 8 b D/k / B_ib with every block at the busiest rank's
  // size (the costing before blocks were uneven); the NVLink steps forward each rank's own
  // block, the busiest one full: 7 (alpha + 2 b / B).
  constexpr double kAlpha = 0.5e-6, kB = 300e9 * 0.78, kBIb = 25e9 * 0.92;
  const TokenRouting routing{16, 2, 0, 1.0, 0.0};
  const TopologyGraph topo = testing::test_topology({{"type", "nvswitch-cluster"}, {"switch_radix", 64}}, 16);
  const double b = 1e6, share = deepep_node_share(routing, 2);
  const std::vector<double> w = rank_block_weights(routing, 16);
  double node0 = 0;
  for (int l = 0; l < 8; ++l) node0 += w[static_cast<std::size_t>(l)];
  CollectiveCostModel uneven(topo, {.protocols = ProtocolSet::ideal(), .deepep = routing, .routing = routing});
  CollectiveCostModel even(topo, {.protocols = ProtocolSet::ideal(), .deepep = routing});
  const auto u = uneven.estimate(group_of(16), CollectiveOp::all_to_all, Bytes(16 * b), "deepep");
  const auto e = even.estimate(group_of(16), CollectiveOp::all_to_all, Bytes(16 * b), "deepep");
  EXPECT_NEAR(u.time.value(), 2.7e-6 + share * node0 * b / kBIb + 7 * (kAlpha + 2 * b / kB), 2 / kBIb);
  EXPECT_NEAR(e.time.value(), 2.7e-6 + share * 8 * b / kBIb + 7 * (kAlpha + 2 * b / kB), 2 / kBIb);
  EXPECT_LT(node0, 8.0);
}

}  // namespace
}  // namespace hcsim
