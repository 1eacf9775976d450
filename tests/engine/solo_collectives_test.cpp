// Solo collectives (sim/engine/collective_replay.hpp): a collective whose flows are the
// only traffic on their links, run one after another, is one timer of the time its flows
// take alone. Checked against its flows (EngineOptions::solo_collectives = false): the same
// end, the same link bytes, and one activity where the flows took several; and not taken
// where another collective or a send may share its links at the same time.
#include <string_view>

#include <gtest/gtest.h>

#include "../support/test_topology.hpp"
#include "sim/engine/engine.hpp"
#include "topologies/routing.hpp"
#include "workloads/formulas.hpp"

namespace hcsim {
namespace {

TopologyGraph two_nodes() {
  return testing::test_topology(
      {{"type", "nvswitch-cluster"},
       {"gpus_per_node", 8},
       {"nvlink", {{"type", "electrical"}, {"bandwidth", "300 GB/s"}, {"latency", "1 us"}, {"efficiency", 0.8}}}},
      16);
}

// All-reduces of `bytes` over devices 0-7 (one node); each after the one before when
// `ordered`.
TaskGraph all_reduces(int count, double bytes, bool ordered) {
  TaskGraph g;
  g.devices = 16;
  const auto grp = g.add_group({0, 1, 2, 3, 4, 5, 6, 7});
  TaskId last = 0;
  for (int c = 0; c < count; ++c) {
    Task t;
    t.kind = TaskKind::collective;
    t.op = CollectiveOp::all_reduce;
    t.group = grp;
    t.bytes = Bytes(bytes);
    last = ordered && c > 0 ? g.add(t, {last}) : g.add(t, {});
  }
  return g;
}

struct Both {
  EngineResult solo, flows;
};

Both simulate_both(const TopologyGraph& topo, const TaskGraph& g) {
  EngineOptions opt;
  Both b;
  b.solo = simulate(topo, g, opt);
  opt.solo_collectives = false;
  b.flows = simulate(topo, g, opt);
  return b;
}

// SimGrid ends a flow whose end lies within its timing precision (1e-9 s) of the current
// event at that event; the timer ends at the exact sum.
constexpr double kPrecision = 1e-9;

void expect_same_bytes(const Both& b) {
  ASSERT_EQ(b.solo.edge_bytes.size(), b.flows.edge_bytes.size());
  for (std::size_t e = 0; e < b.solo.edge_bytes.size(); ++e)
    EXPECT_DOUBLE_EQ(b.solo.edge_bytes[e], b.flows.edge_bytes[e]) << "edge " << e;
}

TEST(SoloCollectives, AnAllReduceAloneIsOneTimerOfItsRing) {
  const TopologyGraph topo = two_nodes();
  const Both b = simulate_both(topo, all_reduces(1, 256e6, true));
  EXPECT_EQ(b.solo.activities, 1u);
  EXPECT_GT(b.flows.activities, 1u);  // a timer, then one flow per ring edge
  EXPECT_NEAR(b.solo.makespan, b.flows.makespan, kPrecision);
  // NCCL's ring, 2(n-1)/n S/B + 2(n-1) alpha, plus the Simple protocol's latency (8.4 us, and
  // 2.8 us per step on NVLink: tests/engine/collective_test.cpp, RingAllReduce).
  const Router router(topo);
  const double alpha = router.device_route(0, 1).latency.value(), B = router.device_route(0, 1).bottleneck.value();
  const double expect =
      formulas::ring_allreduce_time(8, Bytes(256e6), BytesPerSecond(B), Seconds(alpha)).value() + 8.4e-6 + 14 * 2.8e-6;
  EXPECT_NEAR(b.solo.makespan / expect, 1.0, 1e-9);
  expect_same_bytes(b);
}

TEST(SoloCollectives, AllReducesInOrderAreOneTimerEach) {
  const Both b = simulate_both(two_nodes(), all_reduces(3, 64e6, true));
  EXPECT_EQ(b.solo.activities, 3u);
  for (std::size_t t = 0; t < 3; ++t) {
    EXPECT_NEAR(b.solo.start[t], b.flows.start[t], 3 * kPrecision) << "task " << t;
    EXPECT_NEAR(b.solo.end[t], b.flows.end[t], 3 * kPrecision) << "task " << t;
  }
  EXPECT_NEAR(b.solo.end[2], 3 * b.solo.end[0], 3 * kPrecision);
  expect_same_bytes(b);
}

TEST(SoloCollectives, EveryAlgorithmOverTwoNodesTakesTheTimeOfItsFlows) {
  // Every schedule-based algorithm over 16 GPUs of two nodes: whether a phase's
  // flows share a link (then they run as flows) or not, the same end and link bytes.
  const TopologyGraph topo = two_nodes();
  for (const char* algorithm : {"auto", "ring", "multi_ring", "double_binary_tree", "hierarchical", "chain", "direct",
                                "halving_doubling", "pairwise"}) {
    TaskGraph g;
    g.devices = 16;
    std::vector<std::uint32_t> all(16);
    for (std::uint32_t d = 0; d < 16; ++d) all[d] = d;
    Task t;
    t.kind = TaskKind::collective;
    t.op = CollectiveOp::all_reduce;
    t.group = g.add_group(all);
    t.bytes = Bytes(256e6);
    g.add(t, {});
    EngineOptions opt;
    opt.algorithm = algorithm;
    const EngineResult solo = simulate(topo, g, opt);
    opt.solo_collectives = false;
    const EngineResult flows = simulate(topo, g, opt);
    EXPECT_NEAR(solo.makespan, flows.makespan, kPrecision) << algorithm;
    EXPECT_LE(solo.activities, flows.activities) << algorithm;
    for (std::size_t e = 0; e < solo.edge_bytes.size(); ++e)
      EXPECT_DOUBLE_EQ(solo.edge_bytes[e], flows.edge_bytes[e]) << algorithm << " edge " << e;
    RecordProperty(std::string(algorithm) + "_activities", std::to_string(solo.activities));
  }
}

TEST(SoloCollectives, AllReducesThatMayOverlapShareTheirLinks) {
  // No dependency between them: they run at once and share the ring's links (max-min halves
  // each one's bandwidth), which only their flows show.
  const Both b = simulate_both(two_nodes(), all_reduces(2, 64e6, false));
  EXPECT_EQ(b.solo.activities, b.flows.activities);
  EXPECT_EQ(b.solo.makespan, b.flows.makespan);
  const EngineResult one = simulate(two_nodes(), all_reduces(1, 64e6, true), EngineOptions{});
  EXPECT_GT(b.solo.makespan, 1.5 * one.makespan);
}

// Four all-reduces over GPUs 0-7 in a chain, and an all-reduce over GPUs 0 and 1 (its flows
// cross the ring's edge 0 -> 1) after the second; with `joined` the third waits for it too.
TaskGraph chain_with_pair(bool joined) {
  TaskGraph g;
  g.devices = 16;
  const auto ring = g.add_group({0, 1, 2, 3, 4, 5, 6, 7});
  const auto pair = g.add_group({0, 1});
  Task t;
  t.kind = TaskKind::collective;
  t.op = CollectiveOp::all_reduce;
  t.bytes = Bytes(64e6);
  t.group = ring;
  const TaskId t0 = g.add(t, {});
  const TaskId t1 = g.add(t, {t0});
  t.group = pair;
  const TaskId p = g.add(t, {t1});
  t.group = ring;
  const TaskId t2 = joined ? g.add(t, {t1, p}) : g.add(t, {t1});
  g.add(t, {t2});
  return g;
}

TEST(SoloCollectives, OnlyThoseThatMayRunBesideAnotherUserRunTheirFlows) {
  // Alone the ring's all-reduce is a timer and its flows (n1 activities without solo
  // collectives). The pair's all-reduce follows the second and nothing waits for it: the
  // first two come before it and are one timer each; the last two may run beside it, and
  // they and it run their flows.
  const TopologyGraph topo = two_nodes();
  EngineOptions flows;
  flows.solo_collectives = false;
  const std::uint64_t n1 = simulate(topo, all_reduces(1, 64e6, true), flows).activities;
  const Both b = simulate_both(topo, chain_with_pair(false));
  EXPECT_EQ(b.solo.activities, b.flows.activities - 2 * (n1 - 1));
  for (std::size_t t = 0; t < b.solo.end.size(); ++t) {
    EXPECT_NEAR(b.solo.start[t], b.flows.start[t], kPrecision) << "task " << t;
    EXPECT_NEAR(b.solo.end[t], b.flows.end[t], kPrecision) << "task " << t;
  }
  expect_same_bytes(b);
  // The third waits for the pair's: every collective is ordered with every other, one timer each.
  const Both j = simulate_both(topo, chain_with_pair(true));
  EXPECT_EQ(j.solo.activities, 5u);
  for (std::size_t t = 0; t < j.solo.end.size(); ++t) EXPECT_NEAR(j.solo.end[t], j.flows.end[t], kPrecision) << t;
  expect_same_bytes(j);
}

TEST(SoloCollectives, NotWhereASendCrossesTheirLinks) {
  // A send 0 -> 1 beside the all-reduce: it shares the ring edge 0 -> 1 (GPU 0's uplink and
  // GPU 1's downlink), so the collective runs its flows; 8 -> 9 on the other node does not.
  for (const auto& [peer_src, peer_dst, shared] : {std::tuple{0u, 1u, true}, std::tuple{8u, 9u, false}}) {
    TaskGraph g = all_reduces(1, 256e6, true);
    Task s;
    s.kind = TaskKind::send;
    s.device = peer_src;
    s.peer = peer_dst;
    s.bytes = Bytes(128e6);
    g.add(s, {});
    const Both b = simulate_both(two_nodes(), g);
    if (shared) {
      EXPECT_EQ(b.solo.activities, b.flows.activities);
      EXPECT_EQ(b.solo.makespan, b.flows.makespan);
    } else {
      EXPECT_EQ(b.solo.activities, 2u);  // the timer and the send's flow
      EXPECT_NEAR(b.solo.makespan, b.flows.makespan, kPrecision);
    }
    expect_same_bytes(b);
  }
}

// The mirrors of a send count too: where a send's mirror pairs take the ring's own hops
// (16 -> 24 and 24 -> 0's translate 24 -> 32), the collective shares its links and runs its
// flows, as with the send itself above; without them it is a timer. So do the mirrors of
// another collective (an all-reduce over 1 and 9 mirrored by 16 and 24). The ring spans four
// nodes of a fabric routed by destination, whose mirror counts are kept by translation class
// (MirrorLoad::class_counts), and by hash, where they are kept link by link; devices 0 and 8
// alone compute, so the ring's other hops are representatives' rest flows.
TEST(SoloCollectives, NotWhereMirrorsCrossTheirLinks) {
  for (const char* routing : {"d-mod-k", "ecmp-hash"}) {
    const TopologyGraph topo =
        testing::test_topology({{"type", "nvswitch-cluster"}, {"switch_radix", 8}, {"fabric_routing", routing}}, 56);
    for (const auto& [other_collective, mirrored] :
         {std::pair{false, true}, std::pair{false, false}, std::pair{true, true}, std::pair{true, false}}) {
      // Hashed, the other all-reduce's flows may take the ring's uplinks: destination routing only.
      if (other_collective && std::string_view(routing) != "d-mod-k") continue;
      TaskGraph g;
      g.devices = 56;
      Task c;
      c.kind = TaskKind::compute;
      c.duration = Seconds(1e-6);
      for (const std::uint32_t d : {0u, 8u}) {
        c.device = d;
        g.add(c, {});
      }
      const auto grp = g.add_group({0, 8, 16, 24});
      TaskId last = 0;
      for (int k = 0; k < 3; ++k) {
        Task t;
        t.kind = TaskKind::collective;
        t.op = CollectiveOp::all_reduce;
        t.group = grp;
        t.bytes = Bytes(64e6);
        last = k > 0 ? g.add(t, {last}) : g.add(t, {});
      }
      if (other_collective) {  // an all-reduce over 1 and 9, mirrored by 16 and 24
        Task o;
        o.kind = TaskKind::collective;
        o.op = CollectiveOp::all_reduce;
        o.group = g.add_group({1, 9});
        o.bytes = Bytes(128e6);
        const TaskId other = g.add(o, {});
        if (mirrored) g.add_mirror(other, g.add_group_mirror_set({g.add_group({16, 24})}));
      } else {
        Task s;
        s.kind = TaskKind::send;
        s.device = 1;
        s.peer = 9;
        s.bytes = Bytes(128e6);
        const TaskId send = g.add(s, {});
        if (mirrored) g.add_mirror(send, g.add_mirror_set({{17, 25}, {16, 24}, {24, 32}}));
      }
      const Both b = simulate_both(topo, g);
      // The all-reduce over 1 and 9, alone on its links on the fabric routed by destination, is
      // one timer for its two flows.
      const std::uint64_t other_alone = other_collective ? 1 : 0;
      if (mirrored)
        EXPECT_EQ(b.solo.activities, b.flows.activities - other_alone) << routing << other_collective;
      else
        EXPECT_LT(b.solo.activities, b.flows.activities - other_alone) << routing << other_collective;
      EXPECT_NEAR(b.solo.makespan, b.flows.makespan, kPrecision) << routing << other_collective << mirrored;
    }
  }
}

}  // namespace
}  // namespace hcsim
