// NCCL's PXN in the multi-ring schedules (schedule.hpp, multi_ring_schedule): on a
// rail-optimised fabric, whose rails meet only at the spines, a ring's node-crossing hop
// goes over NVLink to the GPU of the destination's rail, which sends it on its own NIC.
// Closed forms from explicit link figures (not the calibrated presets).
#include <cmath>
#include <numeric>
#include <string>

#include <gtest/gtest.h>

#include "../support/test_topology.hpp"
#include "sim/collectives/cost.hpp"
#include "sim/collectives/executor.hpp"

namespace hcsim {
namespace {


// N nodes of 8 GPUs. NVLink 300 GB/s x 0.8 = 240 GB/s, 0.25 us an edge (alpha_nv = 0.5 us);
// NICs 25 GB/s x 0.8 = B_nic = 20 GB/s, 1 us an edge: on one rail GPU -> leaf -> GPU, alpha =
// 2 us; between rails the route climbs leaf -> spine -> leaf.
TopologyGraph cluster(const char* fabric, int nodes) {
  return testing::test_topology(
      {{"type", "nvswitch-cluster"},
       {"fabric", fabric},
       {"nvlink", {{"type", "electrical"}, {"bandwidth", "300 GB/s"}, {"latency", "0.25 us"}, {"efficiency", 0.8}}},
       {"nic", {{"type", "electrical"}, {"bandwidth", "25 GB/s"}, {"latency", "1 us"}, {"efficiency", 0.8}}}},
      8 * nodes);
}

// Bytes a schedule's transfers put on the links that touch a spine, each leg by its route.
double spine_bytes(const TopologyGraph& g, const Router& router, const Schedule& sc) {
  double out = 0;
  auto add = [&](int a, int b, double bytes) {
    for (int e : router.device_route(a, b).edges) {
      const auto& ed = g.edges()[static_cast<std::size_t>(e)];
      for (int end : {ed.a, ed.b})
        if (g.node_name(end).find("spine") != std::string::npos) out += bytes;
    }
  };
  for (const Step& st : sc.steps)
    for (const Transfer& t : st.transfers) {
      const double bytes = static_cast<double>(t.count) * st.repeat;
      if (t.via < 0) add(t.src, t.dst, bytes);
      else {
        add(t.src, t.via, bytes);
        add(t.via, t.dst, bytes);
      }
    }
  return out;
}

TEST(Pxn, RailOptimisedFabricRelaysTheNodeCrossingHops) {
  // The shape says so where a hop between rails is longer than one on a rail; a fat-tree
  // whose NICs share the leaves has no rails.
  const TopologyGraph rails = cluster("rail-optimised", 4), tree = cluster("fat-tree", 4);
  std::vector<int> order;
  EXPECT_TRUE(CollectiveCostModel(rails).shape_of(testing::first_devices(32), order).pxn);
  EXPECT_FALSE(CollectiveCostModel(tree).shape_of(testing::first_devices(32), order).pxn);
  // The relay changes no result: the executor runs the relayed schedule to the exact sum.
  for (CollectiveOp op : {CollectiveOp::all_reduce, CollectiveOp::reduce_scatter, CollectiveOp::all_gather}) {
    const Schedule sc = multi_ring_schedule(op, 3, 4, 203, false, true);
    std::vector<Eigen::VectorXd> in;
    for (int r = 0; r < 12; ++r) {  // integers: every order of summation is exact
      Eigen::VectorXd v(203);
      for (int i = 0; i < 203; ++i) v[i] = (7 * r + 13 * i) % 101 - 50;
      in.push_back(std::move(v));
    }
    auto buf = in;
    ASSERT_EQ(execute_schedule(sc, buf), "");
    const auto want = expected_result(op, in);
    for (int r = 0; r < 12; ++r)
      for (int i = 0; i < 203; ++i) {
        const double w = want[static_cast<std::size_t>(r)][i];
        if (!std::isnan(w)) {
          ASSERT_EQ(buf[static_cast<std::size_t>(r)][i], w) << r << " " << i;
        }
      }
  }
}

TEST(Pxn, SpinesCarryNothingAndTheTimeIsTheRailsClosedForm) {
  // 4 nodes x 8 GPUs, rail-optimised. Without PXN ring j leaves node k from local j - 1 on
  // rail j - 1 and enters node k + 1 at local j on rail j: every crossing climbs to a spine.
  // With PXN it goes GPU j-1 -> NVSwitch -> GPU j -> rail j's leaf -> GPU j: the spines carry
  // no byte. All-gather: each step every GPU sends its 8 rings' S/(n g) chunks to its NVLink
  // neighbour (the relayed one too), S/n at 240 GB/s, and every NIC S/(n g) at B_nic, so
  //   t = (n - 1)(alpha_nv + alpha_rail + max(S/(n B_nv), S/(n g B_nic)))
  //     = 31 (2.5 us + 2^30/(32 x 8 x 20 GB/s)): the NIC binds, busbw -> g B_nic = 160 GB/s.
  const TopologyGraph g = cluster("rail-optimised", 4);
  const CollectiveCostModel m(g, {.protocols = ProtocolSet::ideal()});
  const double s = 1073741824.0, n = 32;
  const auto e = m.estimate(testing::first_devices(32), CollectiveOp::all_gather, Bytes(s), "multi_ring");
  const double want = (n - 1) * (0.5e-6 + 2e-6 + std::max(s / (n * 240e9), s / (n * 8 * 20e9)));
  EXPECT_NEAR(e.time.value(), want, want * 1e-9);
  const auto plain = multi_ring_schedule(CollectiveOp::all_reduce, 4, 8, std::int64_t(s), true, false);
  const auto pxn = multi_ring_schedule(CollectiveOp::all_reduce, 4, 8, std::int64_t(s), true, true);
  EXPECT_GT(spine_bytes(g, m.router(), plain), 0);
  EXPECT_EQ(spine_bytes(g, m.router(), pxn), 0);
  // Every crossing hop is relayed through the source node's GPU on the destination's rail.
  int relayed = 0;
  for (const Step& st : pxn.steps)
    for (const Transfer& t : st.transfers)
      if (t.src / 8 != t.dst / 8) {
        EXPECT_EQ(t.via, t.src / 8 * 8 + t.dst % 8);
        ++relayed;
      } else {
        EXPECT_EQ(t.via, -1);
      }
  EXPECT_EQ(relayed, 2 * 8 * 4);  // compressed: 2 phases x 8 rings x 4 crossings
}

}  // namespace
}  // namespace hcsim
