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

// The reference: each pair's links (its route, src == dst none), counted one by one.
std::map<std::uint32_t, std::int32_t> counted_one_by_one(const MirrorLoad& load, const std::vector<DevicePair>& pairs) {
  std::map<std::uint32_t, std::int32_t> expected;
  for (const auto& p : pairs) {
    std::vector<std::uint32_t> s;
    load.slots(p, s);
    for (std::uint32_t x : s) ++expected[x];
  }
  return expected;
}

TEST(MirrorLoad, CountsEachLinksFlowsAscendingByLink) {
  const TopologyGraph g =
      testing::test_topology({{"type", "nvswitch-cluster"}, {"gpus_per_node", 8}, {"nics_per_node", 1}}, 16);
  const Router router(g);
  MirrorLoad load(g, router);
  const std::vector<DevicePair> pairs{{0, 8}, {1, 9}, {2, 10}, {0, 8}, {3, 3}};
  const MirrorLoad::LinkCounts c = load.counts(pairs);

  const std::map<std::uint32_t, std::int32_t> expected = counted_one_by_one(load, pairs);
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

// A list of more than 4,096 links is sorted by counting, 11 bits a pass (mirror_load.cpp):
// 4,096 GPUs on a rail-optimised fabric of 64-port leaves, every GPU sending to the GPU 2,048
// up (a pipeline hop between two halves), read with repeats. The same reference as above:
// each pair's links counted one by one, ascending.
TEST(MirrorLoad, ALongListOfLinksComesOutAscendingAsCountedOneByOne) {
  const TopologyGraph g = testing::test_topology(
      {{"type", "nvswitch-cluster"}, {"gpus_per_node", 8}, {"fabric", "rail-optimised"}, {"switch_radix", 64}}, 4096);
  const Router router(g);
  MirrorLoad load(g, router);
  std::vector<DevicePair> pairs;
  for (std::uint32_t d = 0; d < 2048; ++d) pairs.emplace_back(d, d + 2048);
  for (std::uint32_t d = 0; d < 2048; d += 3) pairs.emplace_back(d + 2048, d);
  const MirrorLoad::LinkCounts c = load.counts(pairs);
  const std::map<std::uint32_t, std::int32_t> expected = counted_one_by_one(load, pairs);
  ASSERT_GT(expected.size(), 4096U);
  ASSERT_EQ(c.links.size(), expected.size());
  std::size_t i = 0;
  for (const auto& [slot, n] : expected) {
    EXPECT_EQ(c.links[i].first, slot);
    EXPECT_EQ(c.links[i].second, n);
    ++i;
  }
}

}  // namespace
}  // namespace hcsim::engine
