// Router: the transit-table distances (devices that do not forward) give exactly the routes
// of the reference per-destination Dijkstra over the whole graph -- same edges, same ECMP
// choices -- on every topology shape hcsim builds with switches: fat-tree, rail-optimised,
// NICs shared by several GPUs, oversubscribed leaves, a torus of node routers, a CXL pool.
#include <algorithm>

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
      ASSERT_TRUE(std::ranges::equal(x.nodes, y.nodes)) << a << " -> " << b;
      ASSERT_TRUE(std::ranges::equal(x.edges, y.edges)) << a << " -> " << b;
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

int node_named(const TopologyGraph& g, const std::string& name) {
  for (std::size_t i = 0; i < g.nodes().size(); ++i)
    if (g.nodes()[i].name == name) return static_cast<int>(i);
  ADD_FAILURE() << "no node " << name;
  return -1;
}

// A two-tier Clos's switches (every leaf joined to every spine by links of one latency) have
// their distances in closed form (0, w or 2w); the routes above are the reference's, so the
// closed form and the hops it restricts a spine to are checked there. Here: it is used.
TEST(RouterTables, TwoTierClosDistancesAreInClosedForm) {
  const TopologyGraph fat = build({{"type", "nvswitch-cluster"}}, 96);
  const TopologyGraph rails =
      build({{"type", "nvswitch-cluster"}, {"fabric", "rail-optimised"}, {"switch_radix", 8}}, 64);
  EXPECT_TRUE(Router(fat).closed_form(node_named(fat, "leaf0")));
  EXPECT_TRUE(Router(fat).closed_form(node_named(fat, "spine3")));
  EXPECT_TRUE(Router(rails).closed_form(node_named(rails, "rail2/leaf1")));
  EXPECT_FALSE(Router(fat, true).closed_form(node_named(fat, "leaf0")));  // the reference searches
}

// A leaf/spine core that is bipartite but not complete (one leaf misses one of its three
// spines), or whose links differ in latency, keeps its Dijkstra tables, and still routes as
// the reference.
TEST(RouterTables, IncompleteOrUnevenCoresKeepTheirTables) {
  LinkSpec fast_link, slow_link;
  fast_link.bandwidth = BytesPerSecond{50e9};
  fast_link.latency = Seconds{1e-6};
  slow_link = fast_link;
  slow_link.latency = Seconds{3e-6};
  for (const bool uneven : {false, true}) {
    TopologyGraph g;
    std::vector<int> leaves, spines;
    for (int l = 0; l < 3; ++l) leaves.push_back(g.add_switch("leaf" + std::to_string(l)));
    for (int s = 0; s < 3; ++s) spines.push_back(g.add_switch("spine" + std::to_string(s)));
    for (int l = 0; l < 3; ++l)
      for (int s = 0; s < 3; ++s) {
        if (!uneven && l == 2 && s == 2) continue;  // leaf 2 misses spine 2
        g.add_edge(leaves[static_cast<std::size_t>(l)], spines[static_cast<std::size_t>(s)],
                   uneven && l == 0 && s == 0 ? slow_link : fast_link, 1, "scale-out");
      }
    for (int d = 0; d < 6; ++d) {
      const int dev = g.add_device("gpu" + std::to_string(d), d);
      g.add_edge(dev, leaves[static_cast<std::size_t>(d / 2)], fast_link, 1, "scale-out");
    }
    const Router r(g);
    EXPECT_FALSE(r.closed_form(leaves[0])) << (uneven ? "uneven" : "incomplete");
    expect_same_routes(g, all_nodes(g));
  }
}

}  // namespace
}  // namespace hcsim
