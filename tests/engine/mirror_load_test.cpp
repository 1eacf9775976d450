// MirrorLoad::counts (sim/engine/mirror_load.hpp): the flows each directed link carries over
// the routes of a list of device pairs. Expected values by counting: two nodes of eight GPUs
// with one NIC per node, three GPUs of node 0 sending to node 1 -- node 0's NIC uplink
// carries all three flows, each GPU's own link to its NVSwitch one.
#include <map>

#include <gtest/gtest.h>

#include "../support/test_topology.hpp"
#include "sim/engine/mirror_load.hpp"
#include "topologies/routing.hpp"

namespace hcsim::engine {
namespace {

TEST(MirrorLoad, CountsEachLinksFlowsAscendingByLink) {
  const TopologyGraph g =
      testing::test_topology({{"type", "nvswitch-cluster"}, {"gpus_per_node", 8}, {"nics_per_node", 1}}, 16);
  const Router router(g);
  MirrorLoad load(g, router);
  const std::vector<DevicePair> pairs{{0, 8}, {1, 9}, {2, 10}, {0, 8}, {3, 3}};
  const MirrorLoad::LinkCounts c = load.counts(pairs);

  // The reference: each pair's links (its route, src == dst none), counted one by one.
  std::map<std::uint32_t, std::int32_t> expected;
  for (const auto& p : pairs) {
    std::vector<std::uint32_t> s;
    load.slots(p, s);
    for (std::uint32_t x : s) ++expected[x];
  }
  ASSERT_EQ(c.links.size(), expected.size());
  std::size_t i = 0;
  for (const auto& [slot, n] : expected) {
    EXPECT_EQ(c.links[i].first, slot);
    EXPECT_EQ(c.links[i].second, n);
    EXPECT_EQ(c.at(slot), n);
    ++i;
  }
  // The first pair twice: its own links carry 2 flows; the shared NIC uplink 4 (0->8 twice,
  // 1->9, 2->10), the largest count.
  std::int32_t most = 0;
  for (const auto& [slot, n] : c.links) most = std::max(most, n);
  EXPECT_EQ(most, 4);
  std::vector<std::uint32_t> first;
  load.slots({0, 8}, first);
  EXPECT_GE(c.at(first.front()), 2);
  // A link no route crosses: 0.
  std::uint32_t absent = 0;
  while (expected.count(absent)) ++absent;
  EXPECT_EQ(c.at(absent), 0);
  // The scratch array is left clear: the same pairs count the same again.
  EXPECT_EQ(load.counts(pairs).links, c.links);
}

}  // namespace
}  // namespace hcsim::engine
