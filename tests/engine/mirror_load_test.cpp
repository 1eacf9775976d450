// MirrorLoad::counts (sim/engine/mirror_load.hpp): the flows each directed link carries over
// the routes of a list of device pairs. Expected values by counting: two nodes of eight GPUs
// with one NIC per node, three GPUs of node 0 sending to node 1 -- node 0's NIC uplink
// carries all three flows, each GPU's own link to its NVSwitch one.
#include <map>

#include <nlohmann/json.hpp>

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

// By translation class (MirrorLoad::class_counts): on fabrics routed by destination, whose
// routes move with the devices by whole periods (the six fabrics of NvswitchCluster.
// TranslationBandsMoveRoutesOntoTheMovedPairsRoutes, with whole periods of devices), every directed link of the cluster
// reads the count of counting each pair's route one by one: pipeline hops one and a half periods up, some of them
// missing and one twice; hops down; GPU pairs inside a node (through its NVSwitch); a pair to itself. The counts are
// kept by class, not by link.
TEST(MirrorLoad, ByClassEveryLinkReadsItsCountAsCountedOneByOne) {
  const std::vector<std::pair<nlohmann::json, int>> cases{
      {{{"switch_radix", 8}}, 56},
      {{{"fabric", "rail-optimised"}, {"switch_radix", 8}}, 192},
      {{{"nics_per_node", 2}, {"switch_radix", 6}}, 96},
      {{{"fabric", "rail-optimised"}, {"nics_per_node", 2}, {"switch_radix", 8}}, 192},
      {{{"switch_radix", 8}, {"oversubscription", 3}}, 96},
      {{{"fabric", "rail-optimised"}, {"switch_radix", 10}, {"oversubscription", 1.5}}, 144},
  };
  for (auto [desc, devices] : cases) {
    desc["type"] = "nvswitch-cluster";
    const TopologyGraph g = testing::test_topology(desc, devices);
    const Router router(g);
    MirrorLoad load(g, router);
    const auto period = static_cast<std::uint32_t>(g.translation_period), n = static_cast<std::uint32_t>(devices);
    ASSERT_GT(period, 0U) << desc.dump();
    const std::uint32_t up = period + period / 2;
    std::vector<DevicePair> pairs;
    for (std::uint32_t d = 0; d + up < n; ++d)
      if (d % 7 != 3) pairs.emplace_back(d, d + up);
    pairs.emplace_back(5, 5 + up);
    for (std::uint32_t d = up; d < n; d += 5) pairs.emplace_back(d, d - up);
    for (std::uint32_t d = 0; d + 1 < n; d += 8) pairs.emplace_back(d + 1, d);
    pairs.emplace_back(2, 2);
    const MirrorLoad::LinkCounts c = load.class_counts(pairs);
    ASSERT_EQ(n % period, 0U) << desc.dump();
    ASSERT_TRUE(c.by_class()) << desc.dump();
    EXPECT_TRUE(c.links.empty());
    const std::map<std::uint32_t, std::int32_t> expected = counted_one_by_one(load, pairs);
    for (std::uint32_t s = 0; s < load.slot_count(); ++s) {
      const auto e = expected.find(s);
      ASSERT_EQ(c.at(s), e == expected.end() ? 0 : e->second) << desc.dump() << " link " << s;
    }
  }
}

// Hundreds of base pairs (more than class_counts' first table of base pairs holds at half
// load, 128, so that it grows twice): every pair from the first period to the devices past
// it, and each one period up where that stays inside the cluster. Every link reads the count
// of counting the pairs one by one, and each base pair keeps its own periods.
TEST(MirrorLoad, ByClassManyBasePairsReadTheirCountsAsCountedOneByOne) {
  const TopologyGraph g = testing::test_topology({{"type", "nvswitch-cluster"}, {"switch_radix", 8}}, 56);
  const Router router(g);
  MirrorLoad load(g, router);
  const auto period = static_cast<std::uint32_t>(g.translation_period), n = 56U;
  ASSERT_GT(period, 0U);
  std::vector<DevicePair> pairs;
  std::uint32_t ups = 0;
  for (std::uint32_t a = 0; a < period; ++a)
    for (std::uint32_t b = period; b < n; ++b) {
      pairs.emplace_back(a, b);
      if (b + period < n) {
        pairs.emplace_back(a + period, b + period);
        ++ups;
      }
    }
  const MirrorLoad::LinkCounts c = load.class_counts(pairs);
  ASSERT_TRUE(c.by_class());
  ASSERT_EQ(c.first.size() - 1, period * (n - period));  // one base pair per pair of the first period
  EXPECT_GT(c.first.size() - 1, 256U);
  EXPECT_EQ(c.periods.size(), pairs.size());
  std::uint32_t moved = 0;
  for (std::uint32_t b = 0; b + 1 < c.first.size(); ++b)
    for (std::uint32_t m : c.periods_of(b)) moved += m;
  EXPECT_EQ(moved, ups);  // each translate one period up, of its own base pair
  const std::map<std::uint32_t, std::int32_t> expected = counted_one_by_one(load, pairs);
  for (std::uint32_t s = 0; s < load.slot_count(); ++s) {
    const auto e = expected.find(s);
    ASSERT_EQ(c.at(s), e == expected.end() ? 0 : e->second) << "link " << s;
  }
}

// Whether a class's members land on a window (LinkCounts::lands), for every window of every
// class, as in_class counts them: base pairs moved by periods with a gap (0 and 2), by every
// period of a range, some twice (0, 1, 1, 2: read as the range), and by one period.
TEST(MirrorLoad, ByClassLandsWhereInClassCountsAPair) {
  const TopologyGraph g = testing::test_topology({{"type", "nvswitch-cluster"}, {"switch_radix", 8}}, 56);
  const Router router(g);
  MirrorLoad load(g, router);
  const auto period = static_cast<std::uint32_t>(g.translation_period);
  const std::int64_t windows = router.translation_periods();
  ASSERT_GT(period, 0U);
  ASSERT_GE(windows, 4);
  std::vector<DevicePair> pairs;
  const auto moved = [&](std::uint32_t a, std::uint32_t b, std::initializer_list<std::uint32_t> ms) {
    for (std::uint32_t m : ms) pairs.emplace_back(a + m * period, b + m * period);
  };
  moved(0, period + 1, {0, 2});
  moved(1, period + 3, {0, 1, 1, 2});
  moved(period - 1, 2 * period - 2, {1});
  moved(period + 2, 2, {0, 2});  // a hop down
  const MirrorLoad::LinkCounts c = load.class_counts(pairs);
  ASSERT_TRUE(c.by_class());
  EXPECT_EQ(c.gapless, (std::vector<char>{0, 1, 1, 0}));
  std::size_t landings = 0, misses = 0;
  for (std::size_t i = 0, j = 0; i < c.members.size(); i = j) {
    while (j < c.members.size() && c.members[j].canon == c.members[i].canon) ++j;
    const std::span<const MirrorLoad::LinkCounts::Member> of{c.members.data() + i, j - i};
    for (std::int64_t w = 0; w < windows; ++w) {
      const bool lands = c.in_class(of, w) > 0;
      EXPECT_EQ(c.lands(of, w), lands) << "class " << of.front().canon << " window " << w;
      (lands ? landings : misses) += 1;
    }
  }
  EXPECT_GT(landings, 0U);
  EXPECT_GT(misses, 0U);
}

// Without translation bands (hash routing) the counts are kept link by link.
TEST(MirrorLoad, WithoutTranslationBandsClassCountsAreTheLinksCounts) {
  const TopologyGraph g =
      testing::test_topology({{"type", "nvswitch-cluster"}, {"switch_radix", 8}, {"fabric_routing", "ecmp-hash"}}, 64);
  const Router router(g);
  MirrorLoad load(g, router);
  const std::vector<DevicePair> pairs{{0, 40}, {8, 48}, {1, 2}};
  const MirrorLoad::LinkCounts c = load.class_counts(pairs);
  EXPECT_FALSE(c.by_class());
  EXPECT_EQ(c.links, load.counts(pairs).links);
}

}  // namespace
}  // namespace hcsim::engine
