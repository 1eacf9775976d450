// Router: the transit-table distances (devices that do not forward) give exactly the routes
// of the reference per-destination Dijkstra over the whole graph -- same edges, same ECMP
// choices -- on every topology shape hcsim builds with switches: fat-tree, rail-optimised,
// NICs shared by several GPUs, oversubscribed leaves, a torus of node routers, a CXL pool.
#include <gtest/gtest.h>

#include "topologies/routing.hpp"

namespace hcsim {
namespace {

TopologyGraph build(const nlohmann::json& desc, int devices) {
  Diagnostics d;
  TopologyGraph g = build_topology(desc, devices, "/t", d);
  EXPECT_TRUE(d.ok());
  return g;
}

// Every ordered pair of nodes among `nodes`: same reachability, nodes and edges.
void expect_same_routes(const TopologyGraph& g, const std::vector<int>& nodes) {
  const Router fast(g), reference(g, true);
  for (int a : nodes)
    for (int b : nodes) {
      const Route& x = fast.route(a, b);
      const Route& y = reference.route(a, b);
      ASSERT_EQ(x.reachable, y.reachable) << a << " -> " << b;
      ASSERT_EQ(x.nodes, y.nodes) << a << " -> " << b;
      ASSERT_EQ(x.edges, y.edges) << a << " -> " << b;
      EXPECT_EQ(x.latency.value(), y.latency.value());
      EXPECT_EQ(x.bottleneck.value(), y.bottleneck.value());
    }
}

std::vector<int> all_nodes(const TopologyGraph& g) {
  std::vector<int> v(g.nodes().size());
  for (std::size_t i = 0; i < v.size(); ++i) v[i] = static_cast<int>(i);
  return v;
}

TEST(RouterTables, FatTreeMatchesWholeGraphSearch) {
  // 96 GPUs = 96 NIC ports on 5 leaves of 20, 20 spines: routes inside a node, inside a
  // leaf, across spines (ECMP), and to and from switches.
  const TopologyGraph g = build({{"type", "nvswitch-cluster"}}, 96);
  expect_same_routes(g, all_nodes(g));
}

TEST(RouterTables, RailOptimisedSharedNicsAndOversubscriptionMatch) {
  const TopologyGraph rails = build({{"type", "nvswitch-cluster"}, {"fabric", "rail-optimised"}, {"switch_radix", 8}}, 64);
  expect_same_routes(rails, all_nodes(rails));
  const TopologyGraph shared =
      build({{"type", "nvswitch-cluster"}, {"nics_per_node", 2}, {"switch_radix", 6}, {"oversubscription", 2}}, 64);
  expect_same_routes(shared, all_nodes(shared));
}

TEST(RouterTables, NodeTorusAndCxlPoolMatch) {
  const TopologyGraph torus = build(
      {{"type", "nvswitch-cluster"}, {"gpus_per_node", 4}, {"fabric", "torus"}, {"fabric_dims", {3, 2, 2}}}, 48);
  expect_same_routes(torus, all_nodes(torus));
  const TopologyGraph cxl = build({{"type", "cxl-pool"}, {"memory_devices", 3}}, 6);
  expect_same_routes(cxl, all_nodes(cxl));
}

}  // namespace
}  // namespace hcsim
