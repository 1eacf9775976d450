// Router: minimum-latency paths, NVLink preferred inside a node, ECMP spread, torus hops.
#include "topologies/routing.hpp"

#include <set>

#include <algorithm>

#include <gtest/gtest.h>

namespace hcsim {
namespace {

TopologyGraph cluster(int devices, nlohmann::json extra = nlohmann::json::object()) {
  Diagnostics d;
  nlohmann::json desc = {{"type", "nvswitch-cluster"}};
  desc.update(extra);
  TopologyGraph g = build_topology(desc, devices, "/t", d);
  EXPECT_TRUE(d.ok());
  return g;
}

TEST(Router, IntraNodeTrafficStaysOnNvlink) {
  TopologyGraph g = cluster(64);
  Router r(g);
  const Route& rt = r.device_route(0, 5);
  ASSERT_EQ(rt.hops(), 2);
  for (int e : rt.edges) EXPECT_EQ(g.edges()[static_cast<std::size_t>(e)].link_class(), "nvlink");
  // Two NVLink3 edges of 0.25 us; bottleneck 300 GB/s x 0.78 (nvlink3 efficiency calibrated
  // to Megatron-LM SC21 Table 1, docs/validation.md).
  EXPECT_NEAR(rt.latency.value(), 0.5e-6, 1e-15);
  EXPECT_DOUBLE_EQ(rt.bottleneck.value(), 300e9 * 0.78);
}

TEST(Router, InterNodeTrafficCrossesTheFabric) {
  // 64 GPUs = 64 NIC ports -> 4 leaves of 20; GPU 0 (leaf 0) to GPU 63 (leaf 3): gpu-leaf-spine-leaf-gpu.
  TopologyGraph g = cluster(64);
  Router r(g);
  const Route& rt = r.device_route(0, 63);
  ASSERT_EQ(rt.hops(), 4);
  // 2 x 1.35 us host edges + 2 x 130 ns switch edges.
  EXPECT_NEAR(rt.latency.value(), 2 * 1.35e-6 + 2 * 130e-9, 1e-15);
  // Bottleneck: ib-hdr 25 GB/s x 0.92 (efficiency of the preset: nccl-tests'
  // ~23 GB/s per HDR HCA, models/link/presets.cpp).
  EXPECT_DOUBLE_EQ(rt.bottleneck.value(), 25e9 * 0.92);
  EXPECT_EQ(&rt, &r.device_route(0, 63));  // cached
}

TEST(Router, EcmpSpreadsPairsOverSpinesDeterministically) {
  TopologyGraph g = cluster(128);
  Router r(g);
  std::set<int> spines;
  for (int dst = 100; dst < 128; ++dst) spines.insert(r.device_route(0, dst).nodes[2]);
  EXPECT_GT(spines.size(), 5u);  // 28 pairs over 20 spines
  Router again(g);
  EXPECT_TRUE(std::ranges::equal(again.device_route(0, 120).nodes, r.device_route(0, 120).nodes));
}

TEST(Router, TorusRoutesThroughChips) {
  Diagnostics d;
  TopologyGraph g = build_topology({{"type", "torus"},
                                    {"dims", {8, 8}},
                                    {"link", {{"type", "electrical"}, {"bandwidth", "50 GB/s"}, {"latency", "1 us"}}}},
                                   64, "/t", d);
  ASSERT_TRUE(d.ok());
  Router r(g);
  // (0,0) -> (4,3): 4 + 3 hops, each 1 us.
  const Route& rt = r.device_route(0, 4 + 8 * 3);
  EXPECT_EQ(rt.hops(), 7);
  EXPECT_NEAR(rt.latency.value(), 7e-6, 1e-15);
  // Wrap-around: (0,0) -> (7,0) is one hop.
  EXPECT_EQ(r.device_route(0, 7).hops(), 1);
}

TEST(Router, DevicesDoNotForwardInASwitchedCluster) {
  // Without the NVSwitch edges a GPU would be a dead end: check no route passes through another GPU.
  TopologyGraph g = cluster(32, {{"fabric", "rail-optimised"}});
  Router r(g);
  for (int dst = 8; dst < 32; ++dst) {
    const Route& rt = r.device_route(0, dst);
    for (std::size_t i = 1; i + 1 < rt.nodes.size(); ++i)
      EXPECT_NE(g.nodes()[static_cast<std::size_t>(rt.nodes[i])].kind, TopoNode::Kind::device);
  }
}

}  // namespace
}  // namespace hcsim
