// Router: the transit-table distances (devices that do not forward) give exactly the routes
// of the reference per-destination Dijkstra over the whole graph -- same edges, same ECMP
// choices -- on every topology shape hcsim builds with switches: fat-tree, rail-optimised,
// NICs shared by several GPUs, oversubscribed leaves, a torus of node routers, a CXL pool.
// The same pairs check the shortcuts: a node's NVSwitch domain routed as a star (the
// reference searches the domain) and a leaf's next hops read as its run of spines.
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

// Same reachability, nodes, edges, latency and bottleneck.
void expect_same_route(const Route& x, const Route& y, int a, int b) {
  ASSERT_EQ(x.reachable, y.reachable) << a << " -> " << b;
  ASSERT_TRUE(std::ranges::equal(x.nodes, y.nodes)) << a << " -> " << b;
  ASSERT_TRUE(std::ranges::equal(x.edges, y.edges)) << a << " -> " << b;
  EXPECT_EQ(x.latency.value(), y.latency.value()) << a << " -> " << b;
  EXPECT_EQ(x.bottleneck.value(), y.bottleneck.value()) << a << " -> " << b;
}

// Every ordered pair of nodes among `nodes`.
void expect_same_routes(const TopologyGraph& g, const std::vector<int>& nodes) {
  const Router fast(g), reference(g, true);
  for (int a : nodes)
    for (int b : nodes) expect_same_route(fast.route(a, b), reference.route(a, b), a, b);
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

// A passing route (not cached, its lists in the router's scratch buffers) is the cached
// route: asked first on a fresh router, then after the pair is cached, on a fat-tree and a
// rail-optimised fabric with shared NICs (intra-node pairs: the Dijkstra over the node), a
// torus of node routers (transit tables) and a torus of chips (devices forward: the
// whole-graph search).
TEST(RouterTables, PassingRoutesAreTheCachedRoutes) {
  const std::vector<TopologyGraph> graphs = [] {
    std::vector<TopologyGraph> v;
    v.push_back(build({{"type", "nvswitch-cluster"}}, 96));
    v.push_back(build({{"type", "nvswitch-cluster"}, {"fabric", "rail-optimised"}, {"nics_per_node", 4}}, 64));
    v.push_back(build(
        {{"type", "nvswitch-cluster"}, {"gpus_per_node", 4}, {"fabric", "torus"}, {"fabric_dims", {3, 2, 2}}}, 48));
    v.push_back(build({{"type", "torus"},
                       {"dims", {4, 2, 2}},
                       {"link", {{"type", "electrical"}, {"bandwidth", "50 GB/s"}, {"latency", "1 us"}}}},
                      16));
    return v;
  }();
  for (const TopologyGraph& g : graphs) {
    const Router passing(g), cached(g);
    const int n = static_cast<int>(g.device_count());
    for (int a = 0; a < n; ++a)
      for (int b = 0; b < n; ++b) {
        for (int round = 0; round < 2; ++round) {  // not cached yet, then cached
          expect_same_route(passing.passing_device_route(a, b), cached.device_route(a, b), a, b);
          if (round == 0) (void)passing.device_route(a, b);
        }
      }
  }
}

// for_link_slots() reads a pair inside one NVSwitch node from the two star edges without the
// route; every pair's links are those of the route, in order (the reference router's: a
// whole-graph search, no stars), on fabrics with one, two and eight NICs a node, a torus of
// node routers and a single node (its domain is the whole graph: no star shortcut).
TEST(RouterTables, StarPairsGiveTheRoutesLinks) {
  std::vector<TopologyGraph> graphs;
  graphs.push_back(build({{"type", "nvswitch-cluster"}}, 32));
  graphs.push_back(build({{"type", "nvswitch-cluster"}, {"fabric", "rail-optimised"}, {"nics_per_node", 2}}, 32));
  graphs.push_back(build({{"type", "nvswitch-cluster"}, {"nics_per_node", 1}}, 32));
  graphs.push_back(
      build({{"type", "nvswitch-cluster"}, {"gpus_per_node", 4}, {"fabric", "torus"}, {"fabric_dims", {3, 2, 2}}}, 48));
  graphs.push_back(build({{"type", "nvswitch-cluster"}}, 8));
  int stars = 0;
  for (const TopologyGraph& g : graphs) {
    const Router router(g), reference(g, true);
    const int n = g.device_count();
    for (int a = 0; a < n; ++a)
      for (int b = 0; b < n; ++b) {
        if (a == b) continue;
        std::vector<std::size_t> got, want;
        router.for_link_slots(a, b, [&](std::size_t s) { got.push_back(s); });
        const Route& r = reference.device_route(a, b);
        for (std::size_t i = 0; i < r.edges.size(); ++i) want.push_back(reference.link_slot(r, i));
        EXPECT_EQ(got, want) << a << " -> " << b;
      }
    for (int a = 0; a < n; ++a) stars += router.device_star(a) >= 0 ? 1 : 0;
    if (n == 8) {
      EXPECT_EQ(router.device_star(0), -1);  // one node: the domain is the whole graph
    }
    EXPECT_EQ(reference.device_star(0), -1);  // the reference has no stars
  }
  EXPECT_EQ(stars, 32 * 3 + 48);
}

int node_named(const TopologyGraph& g, const std::string& name) {
  for (std::size_t i = 0; i < g.nodes().size(); ++i)
    if (g.node_name(static_cast<int>(i)) == name) return static_cast<int>(i);
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
