// The routing invariant (topologies/routing.hpp): traffic between two devices of one node
// stays on the node's scale-up fabric -- NVLink through the node's NVSwitch, a torus's
// chip-to-chip links -- for every topology builder and NIC count, checked over every
// intra-node device pair of small clusters; and the Router refuses a route that leaves a
// scale-up domain.
#include <fmt/format.h>
#include <gtest/gtest.h>

#include "topologies/routing.hpp"

namespace hcsim {
namespace {

TopologyGraph build_scale_up(const nlohmann::json& desc, int devices) {
  Diagnostics d;
  TopologyGraph g = build_topology(desc, devices, "/t", d);
  EXPECT_TRUE(d.ok()) << desc.dump() << ": " << (d.ok() ? "" : d.issues()[0].message);
  return g;
}

// Every ordered pair of distinct devices of one locality node: both in one scale-up domain,
// and the route through that domain's nodes only. Returns the pairs checked.
int check_intra_node_pairs(const TopologyGraph& g, const Router& r) {
  int pairs = 0;
  for (int a = 0; a < g.device_count(); ++a)
    for (int b = 0; b < g.device_count(); ++b) {
      if (a == b || g.node_of(a) != g.node_of(b)) continue;
      ++pairs;
      const int domain = g.nodes()[static_cast<std::size_t>(g.device_node(a))].scale_up_domain;
      EXPECT_GE(domain, 0) << a;
      EXPECT_EQ(g.nodes()[static_cast<std::size_t>(g.device_node(b))].scale_up_domain, domain) << a << " " << b;
      const Route& rt = r.device_route(a, b);
      EXPECT_TRUE(rt.reachable) << a << " " << b;
      for (int v : rt.nodes)
        EXPECT_EQ(g.nodes()[static_cast<std::size_t>(v)].scale_up_domain, domain)
            << a << " -> " << b << " passes " << g.node_name(v);
    }
  return pairs;
}

TEST(ScaleUpRouting, NvswitchClusterIntraNodePairsUseTheirNvswitchForEveryNicCountAndFabric) {
  // 4 nodes x 8 GPUs; 1, 2, 4 or 8 NICs per node on each fabric. Where GPUs share a NIC, the
  // GPU -> NIC attachment -> GPU path has zero latency (the attachment's costs are counted
  // on the NIC's port edge), shorter than NVLink's 2 x 0.25 us: the case the invariant
  // exists for (issue 17: 21.75 GB/s and 0 J for a 2-GPU all-reduce at 4 NICs per node).
  for (const char* fabric : {"fat-tree", "rail-optimised", "torus"})
    for (int nics : {1, 2, 4, 8}) {
      nlohmann::json desc = {{"type", "nvswitch-cluster"}, {"nics_per_node", nics}, {"fabric", fabric}};
      if (std::string(fabric) == "torus") desc["fabric_dims"] = {2, 2};
      const TopologyGraph g = build_scale_up(desc, 32);
      const Router r(g);
      EXPECT_EQ(check_intra_node_pairs(g, r), 4 * 8 * 7) << fabric << " " << nics;
      for (int a = 0; a < 32; ++a)
        for (int b = a / 8 * 8; b < a / 8 * 8 + 8; ++b) {
          if (a == b) continue;
          // GPU -> NVSwitch -> GPU: two NVLink edges, nvlink3's latency 0.25 us each.
          const Route& rt = r.device_route(a, b);
          ASSERT_EQ(rt.hops(), 2) << fabric << " " << nics << ": " << a << " -> " << b;
          EXPECT_EQ(g.node_name(rt.nodes[1]), fmt::format("node{}/nvswitch", a / 8));
          for (int e : rt.edges) EXPECT_EQ(g.edges()[static_cast<std::size_t>(e)].link_class(), "nvlink");
          EXPECT_NEAR(rt.latency.value(), 0.5e-6, 1e-15);
        }
    }
}

TEST(ScaleUpRouting, NvswitchClusterPartialNodeStaysOnNvlink) {
  // One partial node of 3 GPUs sharing one NIC: no scale-out fabric is built, NVLink only.
  const TopologyGraph g = build_scale_up({{"type", "nvswitch-cluster"}, {"gpus_per_node", 4}, {"nics_per_node", 1}}, 3);
  const Router r(g);
  EXPECT_EQ(check_intra_node_pairs(g, r), 3 * 2);
}

TEST(ScaleUpRouting, TorusHostPairsTakeShortestChipPaths) {
  // 4x4 torus, hosts of 4 chips (one row each) and of 8 (two rows). The torus's links are
  // the scale-up fabric of all its chips; a pair's route is a shortest torus path: the
  // Lee distance, sum over dimensions of min(|dx|, d - |dx|) (Dally & Towles 2004, §3).
  for (int per_host : {4, 8}) {
    const TopologyGraph g = build_scale_up({{"type", "torus"},
                                      {"dims", {4, 4}},
                                      {"devices_per_host", per_host},
                                      {"link", {{"type", "electrical"}, {"bandwidth", "50 GB/s"}, {"latency", "1 us"}}}},
                                     16);
    const Router r(g);
    EXPECT_EQ(check_intra_node_pairs(g, r), 16 / per_host * per_host * (per_host - 1));
    for (int a = 0; a < 16; ++a)
      for (int b = 0; b < 16; ++b) {
        if (a == b || g.node_of(a) != g.node_of(b)) continue;
        const int dx = std::abs(a % 4 - b % 4), dy = std::abs(a / 4 - b / 4);
        EXPECT_EQ(r.device_route(a, b).hops(), std::min(dx, 4 - dx) + std::min(dy, 4 - dy)) << a << " " << b;
      }
  }
}

TEST(ScaleUpRouting, CxlPoolHostsAreNodesOfTheirOwn) {
  // Each host is its own locality node: the pool has no intra-node device pair to route.
  const TopologyGraph g = build_scale_up({{"type", "cxl-pool"}, {"memory_devices", 2}}, 4);
  for (int d = 0; d < 4; ++d) EXPECT_EQ(g.node_of(d), d);
  const Router r(g);
  EXPECT_EQ(check_intra_node_pairs(g, r), 0);
}

TEST(ScaleUpRouting, RouterRefusesARouteLeavingItsDomain) {
  // Two devices declared one scale-up domain but joined only through a switch outside it:
  // the only route breaks the invariant, so the Router stops with an internal error.
  TopologyGraph g;
  LinkSpec link;
  link.bandwidth = BytesPerSecond(25e9);
  link.latency = Seconds(1e-6);
  const int a = g.add_device("gpu0", 0), b = g.add_device("gpu1", 1);
  const int nic = g.add_switch("nic0");
  g.set_scale_up_domain(a, 0);
  g.set_scale_up_domain(b, 0);
  g.add_edge(a, nic, link, 1, "pcie");
  g.add_edge(b, nic, link, 1, "pcie");
  const Router r(g);
  try {
    (void)r.device_route(0, 1);
    ADD_FAILURE() << "no internal error";
  } catch (const InternalError& e) {
    const std::string what = e.what();
    EXPECT_EQ(what.rfind("internal error (a bug, please report): ", 0), 0u) << what;
    EXPECT_NE(what.find("scale-up domain 0 does not connect gpu0 and gpu1"), std::string::npos) << what;
  }
}

TEST(ScaleUpRouting, DomainRouteWinsOverAShorterPathThroughASharedNic) {
  // The bug's shape in miniature: GPU -> NIC -> GPU has zero latency, GPU -> NVSwitch -> GPU
  // 2 x 1 us. The least-latency path leaves the domain; the domain's route is taken.
  TopologyGraph g;
  LinkSpec fast, slow;
  fast.bandwidth = slow.bandwidth = BytesPerSecond(25e9);
  fast.latency = Seconds(0);
  slow.latency = Seconds(1e-6);
  const int a = g.add_device("gpu0", 0), b = g.add_device("gpu1", 1);
  const int sw = g.add_switch("nvswitch"), nic = g.add_switch("nic0");
  for (int v : {a, b, sw}) g.set_scale_up_domain(v, 0);
  g.add_edge(a, sw, slow, 1, "nvlink");
  g.add_edge(b, sw, slow, 1, "nvlink");
  g.add_edge(a, nic, fast, 1, "pcie");
  g.add_edge(b, nic, fast, 1, "pcie");
  const Router r(g);
  const Route& rt = r.device_route(0, 1);  // the domain's route, though the NIC is shorter
  ASSERT_EQ(rt.hops(), 2);
  EXPECT_EQ(rt.nodes[1], sw);
  EXPECT_NEAR(rt.latency.value(), 2e-6, 1e-18);
}

}  // namespace
}  // namespace hcsim
