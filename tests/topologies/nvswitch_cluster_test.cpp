// nvswitch-cluster: node structure, NIC attachment, fat-tree and rail-optimised fabrics, errors.
#include "topologies/nvswitch_cluster.hpp"

#include <algorithm>
#include <map>
#include <optional>
#include <set>
#include <string>

#include <gtest/gtest.h>

#include "topologies/routing.hpp"

namespace hcsim {
namespace {

TopologyGraph build_nvswitch(nlohmann::json desc, int devices) {
  Diagnostics d;
  desc["type"] = "nvswitch-cluster";
  TopologyGraph g = build_topology(desc, devices, "/cluster/topology", d);
  EXPECT_TRUE(d.ok()) << (d.ok() ? "" : d.issues()[0].path + ": " + d.issues()[0].message);
  return g;
}

int count_class(const TopologyGraph& g, const std::string& cls) {
  return static_cast<int>(
      std::count_if(g.edges().begin(), g.edges().end(), [&](const TopoEdge& e) { return e.link_class() == cls; }));
}

int count_kind(const TopologyGraph& g, TopoNode::Kind k) {
  return static_cast<int>(
      std::count_if(g.nodes().begin(), g.nodes().end(), [&](const TopoNode& n) { return n.kind == k; }));
}

TEST(NvswitchCluster, SingleNodeHasNoScaleOutFabric) {
  TopologyGraph g = build_nvswitch(nlohmann::json::object(), 8);
  EXPECT_EQ(g.device_count(), 8);
  EXPECT_EQ(count_kind(g, TopoNode::Kind::switch_node), 1);  // the NVSwitch only
  EXPECT_EQ(static_cast<int>(g.edges().size()), 8);          // one NVLink edge per GPU
  EXPECT_EQ(count_class(g, "infiniband"), 0);
  // Default NVLink3: 300 GB/s per direction per GPU (A100, hardware.md §1).
  EXPECT_DOUBLE_EQ(g.edges()[0].bandwidth().value(), 300e9);
  EXPECT_EQ(g.edges()[0].link_class(), "nvlink");
  EXPECT_EQ(g.locality_nodes(), 1);
  EXPECT_EQ(g.description, "1 node x 8 GPUs, NVSwitch (nvlink3) inside");
}

TEST(NvswitchCluster, PartialNodeBelowGpusPerNode) {
  TopologyGraph g = build_nvswitch(nlohmann::json::object(), 4);
  EXPECT_EQ(g.device_count(), 4);
  EXPECT_EQ(static_cast<int>(g.edges().size()), 4);
}

TEST(NvswitchCluster, FatTreeWithOneNicPerGpu) {
  // 16 nodes x 8 GPUs, 8 HDR NICs each = 128 NIC ports; radix 40 at 1:1 -> 20 down, 20 up;
  // ceil(128/20) = 7 leaves, 20 spines, each leaf linked once to every spine.
  TopologyGraph g = build_nvswitch(nlohmann::json::object(), 128);
  EXPECT_EQ(g.locality_nodes(), 16);
  EXPECT_EQ(g.node_of(127), 15);
  EXPECT_EQ(g.node_of(8), 1);
  EXPECT_EQ(count_class(g, "nvlink"), 128);
  EXPECT_EQ(count_class(g, "infiniband"), 128 + 7 * 20);
  EXPECT_EQ(count_kind(g, TopoNode::Kind::switch_node), 16 + 7 + 20);
  EXPECT_EQ(g.description,
            "16 nodes x 8 GPUs, NVSwitch (nvlink3) inside, 8 x ib-hdr per node, fat-tree (7 leaves, 20 spines, 1:1)");
}

// Without switch_radix the leaves and spines are the InfiniBand switches of the NIC's rate
// (datasheets: SB7800 EDR 36 ports, QM8700 HDR 40, QM9700 NDR 64, Quantum-X800 Q3400 XDR
// 144). 128 NIC ports at 1:1: HDR 20 down -> 7 leaves x 20 spines; NDR 32 down -> 4 leaves
// x 32 spines; XDR 72 down -> 2 leaves x 72 spines; 100 Gb/s 18 down -> 8 leaves x 18.
TEST(NvswitchCluster, DefaultSwitchRadixIsTheSwitchOfTheNicRate) {
  struct Case {
    nlohmann::json nic;
    int leaves, spines;
  };
  const Case cases[] = {{{{"preset", "ib-hdr"}}, 7, 20},
                        {{{"preset", "ib-ndr"}}, 4, 32},
                        {{{"preset", "roce-400g"}}, 4, 32},
                        {{{"preset", "ib-xdr"}}, 2, 72},
                        {{{"preset", "roce-400g"}, {"bandwidth", "100 Gb/s"}}, 8, 18}};
  for (const Case& c : cases) {
    TopologyGraph g = build_nvswitch({{"nic", c.nic}}, 128);
    EXPECT_EQ(count_kind(g, TopoNode::Kind::switch_node), 16 + c.leaves + c.spines) << c.nic.dump();
  }
  EXPECT_EQ(default_switch_radix(BytesPerSecond(25e9)), 40);    // 200 Gb/s
  EXPECT_EQ(default_switch_radix(BytesPerSecond(25.1e9)), 64);  // just above 200 Gb/s
  // A radix the scenario states wins: NDR NICs on 40-port switches, as before.
  TopologyGraph g = build_nvswitch({{"nic", {{"preset", "ib-ndr"}}}, {"switch_radix", 40}}, 128);
  EXPECT_EQ(count_kind(g, TopoNode::Kind::switch_node), 16 + 7 + 20);
}

// The builder reserves the graph's arrays for what it adds (TopologyGraph::reserve): with a
// Clos fabric (or none) they are full, never regrown, for any NIC count and fabric.
TEST(NvswitchCluster, BuildsTheGraphInTheRoomItReserves) {
  const std::vector<std::pair<nlohmann::json, int>> shapes{{nlohmann::json::object(), 4},
                                                           {nlohmann::json::object(), 8},
                                                           {nlohmann::json::object(), 128},
                                                           {{{"fabric", "rail-optimised"}}, 128},
                                                           {{{"fabric", "rail-optimised"}, {"nics_per_node", 2}}, 64},
                                                           {{{"nics_per_node", 4}, {"oversubscription", 3.0}}, 256},
                                                           {{{"nics_per_node", 1}, {"switch_radix", 8}}, 96}};
  for (const auto& [desc, devices] : shapes) {
    const TopologyGraph g = build_nvswitch(desc, devices);
    EXPECT_EQ(g.nodes().capacity(), g.nodes().size()) << desc.dump() << " x " << devices;
    EXPECT_EQ(g.edges().capacity(), g.edges().size()) << desc.dump() << " x " << devices;
  }
}

TEST(NvswitchCluster, RailOptimisedGivesEachRailItsLeaves) {
  // 32 nodes, rail k holds NIC k of each node: 32 ports per rail / 20 down = 2 leaves per rail, 16 in all.
  TopologyGraph g = build_nvswitch({{"fabric", "rail-optimised"}}, 256);
  EXPECT_EQ(count_kind(g, TopoNode::Kind::switch_node), 32 + 16 + 20);
  // GPU 3 of node 5 is on a rail-3 leaf.
  const int gpu = g.device_node(5 * 8 + 3);
  int found = 0;
  for (const auto& e : g.edges()) {
    if (e.a == gpu && e.link_class() == "infiniband") {
      EXPECT_EQ(g.node_name(e.b), "rail3/leaf0");
      ++found;
    }
  }
  EXPECT_EQ(found, 1);
}

TEST(NvswitchCluster, OversubscriptionShrinksUplinks) {
  // 1:3 at radix 40 -> 30 down, 10 up: 64 NIC ports -> 3 leaves x 10 spines.
  TopologyGraph g = build_nvswitch({{"oversubscription", 3}}, 64);
  EXPECT_EQ(count_class(g, "infiniband"), 64 + 3 * 10);
}

TEST(NvswitchCluster, SharedNicsUsePcieAttachment) {
  // DGX-2-like: 16 GPUs, 8 x 100 Gb/s NICs (ZeRO cluster, hardware.md §9) -> 2 GPUs per NIC node.
  TopologyGraph g = build_nvswitch({{"gpus_per_node", 16}, {"nics_per_node", 8},
                              {"nic", {{"preset", "ib-hdr"}, {"bandwidth", "100 Gb/s"}}}},
                             32);
  EXPECT_EQ(count_class(g, "pcie"), 32);
  EXPECT_EQ(count_kind(g, TopoNode::Kind::switch_node), 2 /*nvswitch*/ + 16 /*nics*/ + 1 /*leaf*/);
  for (const auto& e : g.edges()) {
    if (e.link_class() == "pcie") { EXPECT_DOUBLE_EQ(e.link().latency.value(), 0.0); }
  }
}

// Every node is named once, by its place: GPUs, NVSwitches, shared NICs and the routers of a
// torus of nodes by rule (TopologyGraph::add_devices, add_switches), leaves and spines by
// string, each at the node index the builder gave it.
TEST(NvswitchCluster, EveryNodeHasTheNameOfItsPlace) {
  for (const bool torus : {false, true}) {
    nlohmann::json desc = {{"gpus_per_node", 8}, {"nics_per_node", 4}};
    if (torus) desc.update({{"fabric", "torus"}, {"fabric_dims", {2, 2}}});
    const TopologyGraph g = build_nvswitch(desc, 32);
    std::set<std::string> names;
    for (int v = 0; v < static_cast<int>(g.nodes().size()); ++v) {
      const std::string name = g.node_name(v);
      EXPECT_FALSE(name.empty()) << v;
      EXPECT_TRUE(names.insert(name).second) << name << " twice";
    }
    EXPECT_EQ(g.node_name(g.device_node(13)), "node1/gpu5");
    EXPECT_EQ(g.node_name(g.device_node(31)), "node3/gpu7");
    std::map<std::string, int> seen;  // the nodes the edges lead to (their end b), by name
    for (const auto& e : g.edges()) seen.emplace(g.node_name(e.b), e.b);
    // Device 13's NVSwitch is its node's; its NIC (two GPUs each) is node 1's third.
    EXPECT_EQ(g.nodes()[static_cast<std::size_t>(seen.at("node1/nvswitch"))].scale_up_domain, 1);
    int nic_of_13 = -1;
    for (const auto& e : g.edges())
      if (e.a == g.device_node(13) && e.link_class() == "pcie") nic_of_13 = e.b;
    EXPECT_EQ(g.node_name(nic_of_13), "node1/nic2");
    EXPECT_EQ(seen.count("node3/router"), torus ? 1u : 0u);
    EXPECT_EQ(seen.count("leaf0"), torus ? 0u : 1u);
  }
}

TEST(NvswitchCluster, SwitchesCarryInNetworkReductionFlags) {
  TopologyGraph g = build_nvswitch({{"nvswitch_reduction", true}, {"gpus_per_node", 4}}, 8);
  int with = 0;
  for (const auto& n : g.nodes()) with += n.in_switch_reduction ? 1 : 0;
  EXPECT_EQ(with, 2);  // two NVSwitches; the leaf has no SHARP unless fabric_reduction
}

TEST(NvswitchCluster, LeafSpineEdgesUseSwitchLatency) {
  TopologyGraph g = build_nvswitch({{"switch_latency", "200 ns"}}, 64);
  int checked = 0;
  for (const auto& e : g.edges()) {
    if (g.node_name(e.a).rfind("leaf", 0) == 0) {
      EXPECT_DOUBLE_EQ(e.link().latency.value(), 200e-9);
      ++checked;
    }
  }
  EXPECT_EQ(checked, 4 * 20);  // 64 ports -> 4 leaves x 20 spines
}

TEST(NvswitchCluster, DevicesMustFillWholeNodes) {
  Diagnostics d;
  TopologyGraph g = build_topology({{"type", "nvswitch-cluster"}}, 12, "/cluster/topology", d);
  ASSERT_EQ(d.issues().size(), 1u);
  EXPECT_EQ(d.issues()[0].path, "/cluster/topology/gpus_per_node");
  EXPECT_EQ(d.issues()[0].message, "12 devices do not fill whole nodes of 8 GPUs");
  EXPECT_EQ(g.device_count(), 0);
}

TEST(NvswitchCluster, NicsMustDivideGpus) {
  Diagnostics d;
  build_topology({{"type", "nvswitch-cluster"}, {"nics_per_node", 3}}, 16, "/t", d);
  ASSERT_EQ(d.issues().size(), 1u);
  EXPECT_EQ(d.issues()[0].path, "/t/nics_per_node");
}

TEST(NvswitchCluster, BadLinkReportedUnderItsParam) {
  Diagnostics d;
  build_topology({{"type", "nvswitch-cluster"}, {"nvlink", {{"preset", "nvlink7"}}}}, 16, "/t", d);
  ASSERT_EQ(d.issues().size(), 1u);
  EXPECT_EQ(d.issues()[0].path, "/t/nvlink/preset");
}

TEST(TopologyRegistry, UnknownTypeNamesValidOnes) {
  Diagnostics d;
  build_topology({{"type", "hypercube-9d"}}, 8, "/t", d);
  ASSERT_EQ(d.issues().size(), 1u);
  EXPECT_EQ(d.issues()[0].path, "/t/type");
  EXPECT_NE(d.issues()[0].message.find("valid ones are: "), std::string::npos);
  EXPECT_NE(d.issues()[0].message.find("nvswitch-cluster"), std::string::npos);
}

// Edges point to the graph's distinct kinds (spec, lanes and class: a handful, however many
// edges): equal kinds are one entry, different ones stay apart, and a copy of the graph keeps
// its edges' kinds when the original is gone.
TEST(NvswitchCluster, EdgesShareTheirDistinctKindsAndSurviveACopy) {
  std::optional<TopologyGraph> original = build_nvswitch({{"type", "nvswitch-cluster"}, {"gpus_per_node", 8}}, 64);
  const TopologyGraph copy = *original;
  std::set<const EdgeKind*> kinds;
  std::set<std::string> classes;
  for (const auto& e : original->edges()) {
    kinds.insert(e.kind);
    classes.insert(e.link_class());
  }
  // NVLink GPU-NVSwitch, InfiniBand NIC-leaf and leaf-spine: three kinds, two classes.
  EXPECT_EQ(kinds.size(), 3u);
  EXPECT_EQ(original->edge_kinds().size(), 3u);
  for (const EdgeKind* k : kinds) EXPECT_EQ(&original->edge_kinds()[static_cast<std::size_t>(k->index)], k);
  EXPECT_EQ(classes.size(), 2u);
  const std::string nvlink_name = original->edges()[0].link().name;
  original.reset();
  EXPECT_EQ(copy.edges()[0].link().name, nvlink_name);
  EXPECT_EQ(copy.edges()[0].link_class(), "nvlink");
  EXPECT_EQ(count_class(copy, "infiniband"), 64 + 4 * 20);  // 64 NICs; 4 leaves x 20 spines
}

// A kind taken once (TopologyGraph::edge_kind, as the builders take it for a run of edges) is
// the one add_edge finds for the same link, lanes and class; another class or lane count is
// a kind of its own; a kind of another graph is refused.
TEST(TopologyGraph, AKindTakenOnceIsTheKindEdgesOfThatLinkFind) {
  TopologyGraph g;
  const int a = g.add_switch("a"), b = g.add_switch("b"), c = g.add_switch("c");
  LinkSpec link;
  link.name = "x";
  link.bandwidth = BytesPerSecond{25e9};
  const EdgeKind& k = g.edge_kind(link, 1, "nvlink");
  EXPECT_EQ(&g.edge_kind(link, 1, "nvlink"), &k);
  g.add_edge(a, b, k);
  const int e = g.add_edge(b, c, link, 1, "nvlink");
  EXPECT_EQ(g.edges()[static_cast<std::size_t>(e)].kind, &k);
  EXPECT_NE(&g.edge_kind(link, 1, "pcie"), &k);
  EXPECT_NE(&g.edge_kind(link, 2, "nvlink"), &k);
  EXPECT_EQ(g.edge_kinds().size(), 3u);
  link.name = "y";
  EXPECT_NE(&g.edge_kind(link, 1, "nvlink"), &k);
  TopologyGraph other;
  other.add_switch("p");
  other.add_switch("q");
  EXPECT_THROW(other.add_edge(0, 1, k), InternalError);
  EXPECT_EQ(other.edges().size(), 0u);
}

// Whether shifting every device by `shift` maps each route between two devices onto the
// route between their shifts by one map of nodes and one of edges, each one-to-one, every
// edge onto one of the same lanes, bandwidth, efficiency and latency: what
// TopologyGraph::translation_period promises, checked on every pair that stays inside the
// cluster. `why` names the first pair that breaks it.
bool routes_repeat_after(const TopologyGraph& g, int shift, std::string& why) {
  const Router router(g);
  std::map<int, int> node_to, node_from, edge_to, edge_from;
  const auto bind = [](std::map<int, int>& to, std::map<int, int>& from, int x, int y) {
    const auto [i, fresh] = to.try_emplace(x, y);
    const auto [j, fresh_back] = from.try_emplace(y, x);
    return i->second == y && j->second == x;
  };
  const int n = g.device_count();
  for (int a = 0; a + shift < n; ++a)
    for (int b = 0; b + shift < n; ++b) {
      if (a == b) continue;
      const Route& r = router.device_route(a, b);
      const Route& t = router.device_route(a + shift, b + shift);
      bool same = r.hops() == t.hops() && r.latency == t.latency && r.bottleneck == t.bottleneck;
      for (std::size_t i = 0; same && i < r.edges.size(); ++i) {
        const TopoEdge& e = g.edges()[static_cast<std::size_t>(r.edges[i])];
        const TopoEdge& f = g.edges()[static_cast<std::size_t>(t.edges[i])];
        same = e.lanes() == f.lanes() && e.effective_bandwidth() == f.effective_bandwidth() &&
               e.link().latency == f.link().latency && bind(edge_to, edge_from, r.edges[i], t.edges[i]) &&
               bind(node_to, node_from, r.nodes[i], t.nodes[i]) &&
               bind(node_to, node_from, r.nodes[i + 1], t.nodes[i + 1]);
      }
      if (!same) {
        why = "route " + std::to_string(a) + " -> " + std::to_string(b);
        return false;
      }
    }
  return true;
}

// Fat-tree and rail-optimised fabrics routed by destination repeat after a whole number of
// nodes that fills whole leaves: shifting devices by it moves each leaf's hosts to another
// leaf's and turns D-mod-k's spine choice (host index mod spines) by the same amount for
// every route, a relabelling of spines that are all alike. The cases: one NIC per GPU and
// leaves of half a node (period one node), rails of 4 nodes a leaf (period 4 nodes), two
// NICs per node on leaves of 3 ports (period 3 nodes), the same NICs on rails (period 4
// nodes), a 3:1 oversubscribed leaf of 6 ports (period 3 nodes), rails of 6 nodes a leaf
// under 4 spines (period 6 nodes, D-mod-k's choice turned by 2); node counts leave the last
// leaf part-filled. A shift of one node is not a period where leaves hold more: the check
// can fail.
TEST(NvswitchCluster, DestinationRoutedFabricsRepeatAfterTheirTranslationPeriod) {
  struct Case {
    nlohmann::json desc;
    int devices, period;
  };
  const std::vector<Case> cases{
      {{{"switch_radix", 8}}, 56, 8},
      {{{"fabric", "rail-optimised"}, {"switch_radix", 8}}, 176, 32},
      {{{"nics_per_node", 2}, {"switch_radix", 6}}, 88, 24},
      {{{"fabric", "rail-optimised"}, {"nics_per_node", 2}, {"switch_radix", 8}}, 176, 32},
      {{{"switch_radix", 8}, {"oversubscription", 3}}, 88, 24},
      {{{"fabric", "rail-optimised"}, {"switch_radix", 10}, {"oversubscription", 1.5}}, 128, 48},
  };
  for (const Case& c : cases) {
    const TopologyGraph g = build_nvswitch(c.desc, c.devices);
    EXPECT_EQ(g.translation_period, c.period) << c.desc.dump();
    std::string why;
    EXPECT_TRUE(routes_repeat_after(g, c.period, why)) << c.desc.dump() << ": " << why;
    EXPECT_TRUE(routes_repeat_after(g, 2 * c.period, why)) << c.desc.dump() << ": " << why;
    if (c.period > 8) { EXPECT_FALSE(routes_repeat_after(g, 8, why)) << c.desc.dump(); }
  }
}

// No period where the routing or the wiring does not repeat: ECMP hashes (source,
// destination), a torus of nodes, one node (no fabric).
TEST(NvswitchCluster, DeclaresNoPeriodWhereRoutesDoNotRepeat) {
  EXPECT_EQ(build_nvswitch({{"switch_radix", 8}, {"fabric_routing", "ecmp-hash"}}, 64).translation_period, 0);
  EXPECT_EQ(build_nvswitch({{"fabric", "torus"}, {"fabric_dims", {2, 2, 2}}}, 64).translation_period, 0);
  EXPECT_EQ(build_nvswitch(nlohmann::json::object(), 8).translation_period, 0);
  std::string why;
  EXPECT_FALSE(routes_repeat_after(build_nvswitch({{"switch_radix", 8}, {"fabric_routing", "ecmp-hash"}}, 64), 8, why));
}

// Whether every route between two devices reads, through Router::for_link_slots, as the
// links of the route the router finds for it: the pairs a period or more up are read from
// their translate down, moved by the graph's translation bands, and its latency
// (Router::device_latency) the route's. `why` names the first pair that differs.
bool translated_routes_read_true(const TopologyGraph& g, std::string& why) {
  const Router moved(g), plain(g);
  const int n = g.device_count();
  for (int a = 0; a < n; ++a)
    for (int b = 0; b < n; ++b) {
      if (a == b) continue;
      std::vector<std::size_t> got, want;
      moved.for_link_slots(a, b, [&](std::size_t s) { got.push_back(s); });
      const Route& r = plain.device_route(a, b);
      for (std::size_t i = 0; i < r.edges.size(); ++i) want.push_back(plain.link_slot(r, i));
      if (got != want) {
        why = "route " + std::to_string(a) + " -> " + std::to_string(b);
        return false;
      }
      // Its latency summed over the links read, in route order: the route's, to the bit.
      if (moved.device_latency(a, b).value() != r.latency.value()) {
        why = "latency " + std::to_string(a) + " -> " + std::to_string(b);
        return false;
      }
    }
  return true;
}

// The fabrics routed by destination of the test above (description, devices), the last a
// rail fabric whose period turns D-mod-k's spine choice: 6 hosts a leaf, 4 spines, so the
// spines turn by 2 a period.
std::vector<std::pair<nlohmann::json, int>> banded_fabrics() {
  return {
      {{{"switch_radix", 8}}, 56},
      {{{"fabric", "rail-optimised"}, {"switch_radix", 8}}, 176},
      {{{"nics_per_node", 2}, {"switch_radix", 6}}, 88},
      {{{"fabric", "rail-optimised"}, {"nics_per_node", 2}, {"switch_radix", 8}}, 176},
      {{{"switch_radix", 8}, {"oversubscription", 3}}, 88},
      {{{"fabric", "rail-optimised"}, {"switch_radix", 10}, {"oversubscription", 1.5}}, 128},
  };
}

// The translation bands of the fabrics routed by destination (the cases above, and a rail
// fabric whose period turns D-mod-k's spine choice: 6 hosts a leaf, 4 spines, so the spines
// turn by 2 a period) move every route onto the route of the moved pair; a band that turns
// the spines by one more does not.
TEST(NvswitchCluster, TranslationBandsMoveRoutesOntoTheMovedPairsRoutes) {
  const std::vector<std::pair<nlohmann::json, int>> cases = banded_fabrics();
  for (const auto& [desc, devices] : cases) {
    const TopologyGraph g = build_nvswitch(desc, devices);
    ASSERT_GT(g.translation_period, 0) << desc.dump();
    ASSERT_FALSE(g.translation_bands.empty()) << desc.dump();
    std::string why;
    EXPECT_TRUE(translated_routes_read_true(g, why)) << desc.dump() << ": " << why;
  }
  TopologyGraph g = build_nvswitch(cases.back().first, cases.back().second);
  EXPECT_EQ(g.translation_period, 48);                // 8 GPUs x 6 hosts a leaf
  EXPECT_EQ(g.translation_bands.back().size, 4);      // the spines
  EXPECT_EQ(g.translation_bands.back().step, 6 % 4);  // host indices a period adds, mod spines
  g.translation_bands.back().step += 1;
  // The edge bands still turn the spines by 2: the router refuses the graph when it is built
  // (Router::check_edge_bands); without edge bands the routes it reads are wrong.
  EXPECT_THROW(Router{g}, InternalError);
  g.edge_bands.clear();
  std::string why;
  EXPECT_FALSE(translated_routes_read_true(g, why));
}

// Every edge of a fabric routed by destination lies in one of its edge bands, and a band
// moves it, periods up or down, onto the one edge between its moved nodes, node a onto node
// a (the same direction), wherever the moved nodes are joined (where the period does not
// divide the devices, a move that wraps past the last period may join none); with each band's
// turns kept across calls, the same. An edge band that moves the leaves of a spine's row one
// place too far is refused by the router.
TEST(NvswitchCluster, EdgeBandsMoveEachEdgeOntoTheEdgeBetweenItsMovedNodes) {
  const std::vector<std::pair<nlohmann::json, int>> cases = banded_fabrics();
  for (const auto& [desc, devices] : cases) {
    const TopologyGraph g = build_nvswitch(desc, devices);
    ASSERT_FALSE(g.edge_bands.empty()) << desc.dump();
    std::map<std::pair<int, int>, std::vector<int>> between;  // (a, b) -> its edges
    for (std::size_t e = 0; e < g.edges().size(); ++e)
      between[{g.edges()[e].a, g.edges()[e].b}].push_back(static_cast<int>(e));
    std::size_t covered = 0, moved_all = 0;  // edges in bands; of them, joined at every move
    for (std::size_t e = 0; e < g.edges().size(); ++e) {
      if (g.translate_edge(static_cast<int>(e), 0) < 0) continue;
      ++covered;
      EXPECT_EQ(g.translate_edge(static_cast<int>(e), 0), static_cast<int>(e));
      const TopoEdge& ed = g.edges()[e];
      int joined = 0;
      for (const std::int64_t periods : {1, 2, 3, 7, -1, -5}) {
        const int a = g.translate_node(ed.a, periods), b = g.translate_node(ed.b, periods);
        const auto it = between.find({a, b});
        if (it == between.end()) continue;
        ++joined;
        ASSERT_EQ(it->second.size(), 1U) << desc.dump() << ": edge " << e;
        EXPECT_EQ(g.translate_edge(static_cast<int>(e), periods), it->second.front())
            << desc.dump() << ": edge " << e << ", " << periods << " periods";
      }
      EXPECT_GE(joined, 1) << desc.dump() << ": edge " << e;
      moved_all += joined == 6 ? 1 : 0;
    }
    EXPECT_GT(2 * moved_all, covered) << desc.dump();
    EXPECT_EQ(covered, g.edges().size()) << desc.dump();
    // Each edge's place found once and each band's turns kept while the periods stay the
    // same (the router moving a kept route's links), taken again when they change: every
    // edge moves as above.
    std::vector<TopologyGraph::EdgePlace> places;
    for (std::size_t e = 0; e < g.edges().size(); ++e) places.push_back(g.edge_place(static_cast<int>(e)));
    std::vector<TopologyGraph::EdgeTurns> turns(g.edge_bands.size());
    std::size_t differ = 0, retaken = 0;
    for (const std::int64_t periods : {1, 1, -5, 3, 3})
      for (std::size_t e = 0; e < g.edges().size(); ++e) {
        const TopologyGraph::EdgePlace& p = places[e];
        ASSERT_GE(p.band, 0) << desc.dump() << ": edge " << e;  // every edge lies in a band (covered)
        TopologyGraph::EdgeTurns& t = turns[static_cast<std::size_t>(p.band)];
        if (t.periods != periods) {
          t = g.edge_turns(p.band, periods);
          ++retaken;
        }
        differ += g.moved_edge(p, t) != g.translate_edge(static_cast<int>(e), periods);
      }
    EXPECT_EQ(differ, 0U) << desc.dump();
    EXPECT_EQ(retaken, 3 * g.edge_bands.size()) << desc.dump();  // three changes of the periods
    EXPECT_NO_THROW(Router{g}) << desc.dump();
  }
  TopologyGraph g = build_nvswitch(cases.back().first, cases.back().second);
  ASSERT_GT(g.edge_bands.back().rows, 1);  // the spines' rows
  g.edge_bands.back().step += 1;
  EXPECT_THROW(Router{g}, InternalError);
}

// Without a period nothing is moved: every pair is routed.
TEST(NvswitchCluster, NoTranslationBandsWithoutAPeriod) {
  EXPECT_TRUE(build_nvswitch({{"switch_radix", 8}, {"fabric_routing", "ecmp-hash"}}, 64).translation_bands.empty());
  EXPECT_TRUE(build_nvswitch({{"fabric", "torus"}, {"fabric_dims", {2, 2, 2}}}, 64).translation_bands.empty());
  EXPECT_TRUE(build_nvswitch({{"switch_radix", 8}, {"fabric_routing", "ecmp-hash"}}, 64).edge_bands.empty());
}

}  // namespace
}  // namespace hcsim
