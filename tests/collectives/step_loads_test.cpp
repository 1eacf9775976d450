// Step shapes (sim/collectives/step_loads.hpp): a step's links found once and reused for
// other bytes give exactly the times of routing and charging every transfer afresh.
#include "sim/collectives/step_loads.hpp"

#include <algorithm>
#include <numeric>
#include <string>
#include <tuple>
#include <vector>

#include <gtest/gtest.h>

#include "../support/test_topology.hpp"
#include "sim/collectives/cost.hpp"

namespace hcsim {
namespace {

std::vector<int> consecutive(int n, int first = 0) {
  std::vector<int> v(static_cast<std::size_t>(n));
  std::iota(v.begin(), v.end(), first);
  return v;
}

// Every field the estimate reports, compared exactly: the reuse must not move a bit.
void expect_same(const CollectiveEstimate& got, const CollectiveEstimate& want, const std::string& what) {
  EXPECT_EQ(got.time.value(), want.time.value()) << what;
  EXPECT_EQ(got.latency_term.value(), want.latency_term.value()) << what;
  EXPECT_EQ(got.bandwidth_term.value(), want.bandwidth_term.value()) << what;
  EXPECT_EQ(got.protocol_term.value(), want.protocol_term.value()) << what;
  EXPECT_EQ(got.rank_bytes.value(), want.rank_bytes.value()) << what;
  EXPECT_EQ(got.net_steps, want.net_steps) << what;
  EXPECT_EQ(got.steps, want.steps) << what;
  EXPECT_EQ(got.chunks, want.chunks) << what;
  EXPECT_EQ(got.channels, want.channels) << what;
  EXPECT_EQ(got.algorithm, want.algorithm) << what;
  EXPECT_EQ(got.protocol, want.protocol) << what;
}

// Groups with and without siblings on two fabrics: rail-optimised leaves (one NIC per GPU;
// a group straddling a leaf edge) and two NICs per node (four GPUs and their siblings share
// a port; groups inside a node with siblings in other nodes, in their own, or overlapping). Every algorithm by name and
// "auto", at sizes that divide evenly among the ranks (one step shape, reused) and sizes that do not (unequal bytes:
// routed afresh), each model asked many sizes in turn so that later ones reuse the shapes of earlier ones.
TEST(StepLoads, ReusedShapesGiveTheTimesOfRoutingEveryTransfer) {
  register_builtin_collectives();
  std::vector<int> stride8;
  for (int d = 0; d < 256; d += 8) stride8.push_back(d);
  struct Case {
    TopologyGraph g;
    std::vector<std::tuple<std::vector<int>, CollectiveOp, std::vector<int>>> groups;
  };
  std::vector<Case> cases;
  cases.push_back({testing::h800_rails_of_20_nodes(),
                   {{consecutive(64, 128), CollectiveOp::all_to_all, {64}},
                    {stride8, CollectiveOp::all_reduce, {1, 2, 3, 4, 5, 6, 7}},
                    {stride8, CollectiveOp::all_gather, {1, 2, 3, 4, 5, 6, 7}},
                    {stride8, CollectiveOp::reduce_scatter, {}},
                    {consecutive(16, 32), CollectiveOp::all_reduce, {16, 32}},
                    {{0, 64}, CollectiveOp::send_recv, consecutive(63, 1)}}});
  cases.push_back({testing::test_topology({{"type", "nvswitch-cluster"}, {"nics_per_node", 2}}, 64),
                   {{{0, 8, 16, 24}, CollectiveOp::all_reduce, {1, 2, 3, 4, 5, 6, 7}},
                    {{0, 8, 16, 24}, CollectiveOp::all_gather, {1, 2, 3}},
                    {consecutive(16), CollectiveOp::all_reduce, {16, 32, 48}},
                    // Inside one node, siblings in nodes of their own (their routes are
                    // copies: the own routes alone, StepLoads::disjoint_stars), in the same
                    // node, and overlapping the group (devices 1-3 carry two transfers).
                    {consecutive(8), CollectiveOp::all_reduce, {8, 16, 24, 32, 40, 48, 56}},
                    {consecutive(8, 8), CollectiveOp::all_gather, {-8, 16}},
                    {consecutive(4), CollectiveOp::all_reduce, {4}},
                    {consecutive(4), CollectiveOp::all_reduce, {1}},
                    {consecutive(4), CollectiveOp::all_to_all, {1, 8}}}});
  const std::vector<double> sizes{4096, 4096 * 3 + 1, 1048576, 1048576 + 7, 268435456, 25165824, 1e9 + 3};
  for (const Case& c : cases) {
    std::vector<std::string> names{"auto"};
    for (const CollectiveAlgorithm* a : auto_candidates()) names.push_back(a->name);
    for (const auto& [group, op, siblings] : c.groups)
      for (const std::string& name : names) {
        CollectiveCostModel reuse(c.g), fresh(c.g, CostOptions{.reuse_step_shapes = false});
        std::vector<int> ranks;
        const CollectiveAlgorithm* a = find_collective_algorithm(name);
        if (a && !a->supports(op, reuse.shape_of(group, ranks))) continue;
        for (double s : sizes) {
          const std::string what = name + " " + std::string(collective_op_name(op)) + " from " +
                                   std::to_string(group[0]) + ", " + std::to_string(s) + " B";
          CollectiveEstimate want;
          try {
            want = fresh.estimate(group, op, Bytes(s), name, siblings);
          } catch (const InputError&) {
            EXPECT_THROW((void)reuse.estimate(group, op, Bytes(s), name, siblings), InputError) << what;
            continue;
          }
          expect_same(reuse.estimate(group, op, Bytes(s), name, siblings), want, what);
        }
        EXPECT_EQ(fresh.step_shapes(), 0U);
      }
  }
  // The shapes are used at all: a ring over 4 nodes with siblings is one shape per phase.
  CollectiveCostModel m(cases[1].g);
  (void)m.estimate({0, 8, 16, 24}, CollectiveOp::all_reduce, Bytes(1048576), "ring", {1, 2, 3});
  EXPECT_GT(m.step_shapes(), 0U);
}

// A fabric that repeats (TopologyGraph::translation_period) costs a group shifted by a
// multiple of its period as the group itself: the model asks the shifted group's estimate
// of the group moved back and routes nothing new (no step shape added), and every field
// equals what routing the shifted group's own transfers gives (a copy of the graph that
// declares no period). Fabrics: rails of 4 nodes a leaf (period 32 devices, the last leaf
// part-filled), two NICs per node on leaves of 3 ports (period 24), one NIC per GPU on
// leaves of half a node (period 8), the same with NVLink SHARP and SHARP in the fabric
// (in-network reductions, rooted at any reducing switch); groups of a data-parallel kind
// (one GPU per node, the node's other GPUs as siblings), within nodes, across leaves, and
// pipeline sends.
TEST(StepLoads, ShiftedGroupsCostWhatTheirOriginalsCost) {
  register_builtin_collectives();
  struct Case {
    TopologyGraph g;
    int windows;
  };
  std::vector<Case> cases;
  cases.push_back({testing::test_topology({{"type", "nvswitch-cluster"},
                                           {"fabric", "rail-optimised"},
                                           {"nic", {{"preset", "ib-ndr"}}},
                                           {"switch_radix", 8}},
                                          176),
                   5});
  cases.push_back(
      {testing::test_topology({{"type", "nvswitch-cluster"}, {"nics_per_node", 2}, {"switch_radix", 6}}, 96), 4});
  cases.push_back({testing::test_topology({{"type", "nvswitch-cluster"}, {"switch_radix", 8}}, 64), 8});
  cases.push_back({testing::test_topology({{"type", "nvswitch-cluster"},
                                           {"nvlink", {{"preset", "nvlink4"}}},
                                           {"nvswitch_reduction", true},
                                           {"fabric_reduction", true},
                                           {"switch_radix", 8}},
                                          64),
                   8});
  const std::vector<int> siblings7 = consecutive(7, 1);
  const std::vector<double> sizes{1048576, 1048576 + 7, 25165824};
  std::vector<std::string> names{"auto"};
  for (const CollectiveAlgorithm* a : auto_candidates()) names.push_back(a->name);
  for (Case& c : cases) {
    const int period = c.g.translation_period;
    ASSERT_GT(period, 0);
    TopologyGraph plain = c.g;
    plain.translation_period = 0;
    std::vector<int> stride;  // one GPU in each of the first nodes, a window and a half
    for (int d = 0; d < period + period / 2 && d < c.g.device_count() / 2; d += 8) stride.push_back(d);
    if (stride.size() < 2) stride = {0, 8};
    const std::vector<std::tuple<std::vector<int>, CollectiveOp, std::vector<int>>> groups{
        {stride, CollectiveOp::all_reduce, siblings7},      {stride, CollectiveOp::all_gather, siblings7},
        {stride, CollectiveOp::reduce_scatter, {}},         {consecutive(8), CollectiveOp::all_reduce, {}},
        {consecutive(16, 4), CollectiveOp::all_to_all, {}}, {{0, 8}, CollectiveOp::send_recv, siblings7}};
    for (const auto& [group, op, siblings] : groups)
      for (const std::string& name : names) {
        CollectiveCostModel shifting(c.g), routing(plain);
        std::vector<int> ranks;
        const CollectiveAlgorithm* a = find_collective_algorithm(name);
        if (a && !a->supports(op, routing.shape_of(group, ranks))) continue;
        for (double s : sizes) {
          CollectiveEstimate original;
          try {
            original = shifting.estimate(group, op, Bytes(s), name, siblings);
          } catch (const InputError&) {
            continue;  // the algorithm refuses this group: nothing to shift
          }
          const std::size_t shapes = shifting.step_shapes();
          for (int k = 1; k <= c.windows; ++k) {
            std::vector<int> moved(group);
            for (int& d : moved) d += k * period;
            if (*std::max_element(moved.begin(), moved.end()) + 7 >= c.g.device_count()) break;
            const std::string what = name + " " + std::string(collective_op_name(op)) + " from " +
                                     std::to_string(moved[0]) + ", " + std::to_string(s) + " B";
            const CollectiveEstimate got = shifting.estimate(moved, op, Bytes(s), name, siblings);
            expect_same(got, routing.estimate(moved, op, Bytes(s), name, siblings), what);
            expect_same(got, original, what);
            EXPECT_EQ(shifting.step_shapes(), shapes) << what;
          }
        }
      }
  }
}

// One step: ring 0 -> 8 -> 16 -> 24 -> 0 over two NICs per node, siblings 1-3 behind the
// same NIC (GPUs 0-3 share NIC 0). Each NIC port carries its transfer and the three
// siblings': M = 4 on the IB links, so with b bytes each the term is 4 b / B_ib (the NVLink
// hops to the NIC carry one transfer each, 1 x b / B_nv, less). With one transfer at b + 1
// only the links at M can hold the maximum: those of 24 -> 0, 4 (b + 1) / B_ib.
TEST(StepLoads, BandwidthIsTheBusiestLinkPerCapacity) {
  const TopologyGraph g = testing::test_topology({{"type", "nvswitch-cluster"}, {"nics_per_node", 2}}, 32);
  const Router router(g);
  StepLoads loads(g, router);
  const std::vector<int> siblings{1, 2, 3};
  const int id = loads.siblings_id(siblings);
  EXPECT_EQ(loads.siblings_id(siblings), id);
  EXPECT_EQ(loads.siblings_id({}), 0);
  const std::vector<int> key{id, 0, 8, 8, 8, 16, 16, 16, 24, 24, 24, 0, 0};
  const double b = 1 << 20, ib = 25e9 * 0.92;  // the ib-hdr preset: 25 GB/s x 0.92
  StepLoads::StepTime t;
  ASSERT_TRUE(loads.time(key, &siblings, {b, b, b, b}, t));
  EXPECT_EQ(t.between, 4);
  EXPECT_DOUBLE_EQ(t.bandwidth.value(), 4 * b / ib);
  EXPECT_DOUBLE_EQ(t.latency.value(), router.device_route(0, 8).latency.value());
  // Unequal bytes are taken from the shape the second time they meet it (the first, the cost
  // model routes the step itself); a shape they meet first is not built for them.
  EXPECT_FALSE(loads.time(key, &siblings, {b, b, b, b + 1}, t));
  ASSERT_TRUE(loads.time(key, &siblings, {b, b, b, b + 1}, t));
  EXPECT_DOUBLE_EQ(t.bandwidth.value(), 4 * (b + 1) / ib);
  // Declined: a fractional byte count, sums reaching 2^53, bytes too far apart for the links
  // at M alone to decide ((hi - lo) M >= hi).
  EXPECT_FALSE(loads.time(key, &siblings, {0.5, 0.5, 0.5, 0.5}, t));
  const double big = 9007199254740992.0 / 4;
  EXPECT_FALSE(loads.time(key, &siblings, {big, big, big, big}, t));
  EXPECT_TRUE(loads.time(key, &siblings, {big - 1, big - 1, big - 1, big - 1}, t));
  EXPECT_FALSE(loads.time(key, &siblings, {b, b, b, 2 * b}, t));
  EXPECT_EQ(loads.size(), 1U);
  const std::vector<int> other{id, 0, 8, 8};
  EXPECT_FALSE(loads.time(other, &siblings, {b, b + 1}, t));
  EXPECT_FALSE(loads.time(other, &siblings, {b, b + 1}, t));
  EXPECT_EQ(loads.size(), 1U);
}

// A ring over GPUs 0-3 of node 0, each hop GPU -> NVSwitch -> GPU: every NVLink edge
// carries one transfer each way, so with b bytes the term is b / B_nv (B_nv: the route's
// bottleneck). Siblings in nodes 1-3, or on GPUs 4-7 of node 0, load copies of those links
// (each GPU's own edge to the NVSwitch) and leave it so; a sibling offset by one GPU (1-4)
// overlaps the ring, and GPUs 1-3's links then carry two transfers each way: 2 b / B_nv.
TEST(StepLoads, SiblingsInNodesOfTheirOwnLeaveTheTermAsAlone) {
  const TopologyGraph g = testing::test_topology({{"type", "nvswitch-cluster"}, {"nics_per_node", 2}}, 32);
  const Router router(g);
  StepLoads loads(g, router);
  std::vector<int> ring{0};
  for (int d = 0; d < 4; ++d) ring.insert(ring.end(), {d, (d + 1) % 4, (d + 1) % 4});
  const double b = 1 << 20, nv = router.device_route(0, 1).bottleneck.value();
  const std::vector<int> nodes{8, 16, 24}, shifted{1}, same_node{4};
  const std::vector<double> bytes(4, b);
  StepLoads::StepTime alone, apart, beside, overlapping;
  ASSERT_TRUE(loads.time(ring, nullptr, bytes, alone));
  std::vector<int> key = ring;
  key[0] = loads.siblings_id(nodes);
  ASSERT_TRUE(loads.time(key, &nodes, bytes, apart));
  key[0] = loads.siblings_id(same_node);
  ASSERT_TRUE(loads.time(key, &same_node, bytes, beside));
  EXPECT_EQ(beside.bandwidth.value(), alone.bandwidth.value());
  EXPECT_EQ(beside.latency.value(), alone.latency.value());
  key[0] = loads.siblings_id(shifted);
  ASSERT_TRUE(loads.time(key, &shifted, bytes, overlapping));
  EXPECT_DOUBLE_EQ(alone.bandwidth.value(), b / nv);
  EXPECT_EQ(apart.bandwidth.value(), alone.bandwidth.value());
  EXPECT_EQ(apart.latency.value(), alone.latency.value());
  EXPECT_EQ(apart.between, 0);
  EXPECT_DOUBLE_EQ(overlapping.bandwidth.value(), 2 * b / nv);
}

// CollectiveCostModel::star_group: a group inside one node's NVSwitch whose siblings land on
// devices of their own in stars, and nothing else; and two cost models of clusters that
// differ in size give such groups the same estimate, whatever the siblings (the premise of
// sharing their times, sim/driver/collective_times.hpp StarTimes).
TEST(CollectiveCostModel, StarGroupsCostTheSameInEveryCluster) {
  register_builtin_collectives();
  const TopologyGraph small = testing::test_topology({{"type", "nvswitch-cluster"}, {"nics_per_node", 2}}, 32);
  const TopologyGraph large = testing::test_topology({{"type", "nvswitch-cluster"}, {"nics_per_node", 2}}, 64);
  const TopologyGraph reducing =
      testing::test_topology({{"type", "nvswitch-cluster"}, {"nics_per_node", 2}, {"fabric_reduction", true}}, 32);
  const CollectiveCostModel a(small), b(large), r(reducing);
  const auto k = a.star_group(consecutive(4), {});
  ASSERT_TRUE(k.has_value());
  EXPECT_EQ(k->count, 4);
  const Route& hop = a.router().device_route(0, 1);
  EXPECT_EQ(k->bandwidth, hop.bottleneck.value());
  EXPECT_DOUBLE_EQ(2 * k->latency, hop.latency.value());
  EXPECT_EQ(a.star_group(consecutive(4), {4}), k);       // GPUs 4-7: the same NVSwitch, links of their own
  EXPECT_EQ(a.star_group(consecutive(4), {8, 16}), k);   // other nodes
  EXPECT_EQ(b.star_group(consecutive(4, 40), {-8}), k);  // another cluster, another node
  EXPECT_FALSE(a.star_group(consecutive(4), {1}));       // overlaps the group
  EXPECT_FALSE(a.star_group(consecutive(4), {4, 6}));    // the siblings overlap each other
  EXPECT_FALSE(a.star_group(consecutive(4), {6}));       // a sibling straddles two nodes
  EXPECT_FALSE(a.star_group(consecutive(4, 6), {}));     // the group straddles two nodes
  EXPECT_FALSE(a.star_group(consecutive(32), {}));       // the whole graph
  EXPECT_FALSE(r.star_group(consecutive(4), {}));        // the fabric reduces too
  for (const CollectiveOp op : {CollectiveOp::all_reduce, CollectiveOp::all_gather, CollectiveOp::reduce_scatter})
    for (const double s : {4096.0, 1048576.0 + 7, 268435456.0}) {
      const std::string what = std::string(collective_op_name(op)) + " " + std::to_string(s) + " B";
      const CollectiveEstimate alone = a.estimate(consecutive(4), op, Bytes(s));
      expect_same(a.estimate(consecutive(4, 8), op, Bytes(s), "auto", {4, 16}), alone, what);
      expect_same(b.estimate(consecutive(4, 40), op, Bytes(s), "auto", {-40, -8, 4}), alone, what);
    }
}

}  // namespace
}  // namespace hcsim
