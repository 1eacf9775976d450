// torus topology: edges, wrap-around, dims check, OCS time, phases and ports, node torus fabric.
#include "topologies/torus.hpp"

#include <gtest/gtest.h>

#include "topologies/analysis.hpp"

namespace hcsim {
namespace {

const nlohmann::json kIci = {{"type", "electrical"}, {"bandwidth", "50 GB/s"}, {"latency", "1 us"}};

TopologyGraph torus(nlohmann::json dims, int devices, nlohmann::json extra = nlohmann::json::object()) {
  Diagnostics d;
  nlohmann::json desc = {{"type", "torus"}, {"dims", std::move(dims)}, {"link", kIci}};
  desc.update(extra);
  TopologyGraph g = build_topology(desc, devices, "/t", d);
  EXPECT_TRUE(d.ok()) << (d.ok() ? "" : d.issues()[0].path + ": " + d.issues()[0].message);
  return g;
}

TEST(Torus, TpuV4SliceHasThreeLinksPerChip) {
  // 4x4x8 (a TPU v4 slice shape, hardware.md §2): every chip has 6 neighbours, 3 edges each.
  TopologyGraph g = torus({4, 4, 8}, 128);
  EXPECT_EQ(g.device_count(), 128);
  EXPECT_EQ(static_cast<int>(g.edges().size()), 3 * 128);
  EXPECT_TRUE(g.devices_forward);
  EXPECT_EQ(g.edges()[0].link_class(), "ici");
  EXPECT_EQ(g.description, "4x4x8 torus of 128 devices, electrical links");
}

TEST(Torus, MeshHasNoWrapLinks) {
  // 4x4 mesh: 2 dims x 4 rows x 3 links = 24.
  TopologyGraph g = torus({4, 4}, 16, {{"wrap", false}});
  EXPECT_EQ(static_cast<int>(g.edges().size()), 24);
}

TEST(Torus, RingOfTwoDoublesTheLink) {
  // 2x4: dimension of size 2 has one edge per pair with 2 lanes (4 edges), the ring of 4 has 8.
  TopologyGraph g = torus({2, 4}, 8);
  ASSERT_EQ(static_cast<int>(g.edges().size()), 12);
  EXPECT_EQ(g.edges()[0].lanes(), 2);
  EXPECT_EQ(g.edges()[4].lanes(), 1);
}

TEST(Torus, NeighboursFollowIndexOrder) {
  // Device index = x + 4 y: device 3 (x=3) wraps to device 0 in dimension 0.
  TopologyGraph g = torus({4, 4}, 16);
  bool wrap_found = false;
  for (const auto& e : g.edges())
    if ((e.a == g.device_node(3) && e.b == g.device_node(0)) || (e.a == g.device_node(0) && e.b == g.device_node(3)))
      wrap_found = true;
  EXPECT_TRUE(wrap_found);
  EXPECT_EQ(g.node_name(g.device_node(6)), "chip(2,1)");
}

TEST(Torus, DimsMustMultiplyToDevices) {
  Diagnostics d;
  build_topology({{"type", "torus"}, {"dims", {4, 4}}, {"link", kIci}}, 32, "/cluster/topology", d);
  ASSERT_EQ(d.issues().size(), 1u);
  EXPECT_EQ(d.issues()[0].path, "/cluster/topology/dims");
  EXPECT_EQ(d.issues()[0].message, "dimensions multiply to 16, but there are 32 devices");
  Diagnostics d2;
  build_topology({{"type", "torus"}, {"dims", {4, 0}}, {"link", kIci}}, 32, "/t", d2);
  ASSERT_EQ(d2.issues().size(), 1u);
  EXPECT_EQ(d2.issues()[0].path, "/t/dims/1");
}

TEST(Torus, LinkIsRequired) {
  Diagnostics d;
  build_topology({{"type", "torus"}, {"dims", {4}}}, 4, "/t", d);
  ASSERT_EQ(d.issues().size(), 1u);
  EXPECT_EQ(d.issues()[0].path, "/t/link");
  EXPECT_EQ(d.issues()[0].message, "required key is missing");
}

TEST(Torus, OpticalCircuitSwitchReconfigurationTime) {
  // TPU v4 OCS reconfiguration ~10 s (hardware.md §2).
  TopologyGraph g = torus({4, 4, 4}, 64, {{"ocs_reconfiguration_time", "10 s"}, {"devices_per_host", 4}});
  EXPECT_DOUBLE_EQ(g.reconfiguration_time.value(), 10.0);
  EXPECT_EQ(g.locality_nodes(), 16);
  EXPECT_EQ(g.node_of(5), 1);
}

TEST(Torus, OcsPortsAreTheWrapAroundLinkEnds) {
  // 2 N/d per dimension: a TPU v4 4x4x4 cube needs 3 x 32 = 96, its 6 faces x 16 optical
  // links (Jouppi et al., ISCA 2023, §2); 2x4x8: 64 + 32 + 16 = 112.
  EXPECT_EQ(torus_ocs_ports({4, 4, 4}), 96);
  EXPECT_EQ(torus_ocs_ports({2, 4, 8}), 112);
  EXPECT_EQ(torus_ocs_ports({1, 8}), 2);
}

TEST(Torus, OcsPhasesAreRead) {
  TopologyGraph g = torus({4, 4, 4}, 64,
                          {{"ocs_reconfiguration_time", "10 s"},
                           {"ocs_ports", 112},
                           {"ocs_phases",
                            {{{"from_step", 0}, {"dims", {4, 4, 4}}}, {{"from_step", 50}, {"dims", {2, 4, 8}}}}}});
  ASSERT_EQ(g.ocs_phases.size(), 2u);
  EXPECT_EQ(g.ocs_phases[1].from_step, 50);
  EXPECT_EQ(g.ocs_phases[1].dims, (std::vector<int>{2, 4, 8}));
  EXPECT_EQ(g.torus_dims, (std::vector<int>{4, 4, 4}));
  const nlohmann::json one = torus_rewired({{"type", "torus"}, {"dims", {4, 4, 4}}, {"ocs_phases", 1}}, {2, 4, 8});
  EXPECT_EQ(one, nlohmann::json({{"type", "torus"}, {"dims", {2, 4, 8}}}));
}

std::vector<Issue> ocs_issues(const nlohmann::json& extra) {
  Diagnostics d;
  nlohmann::json desc = {{"type", "torus"}, {"dims", {4, 4, 4}}, {"link", kIci}, {"ocs_reconfiguration_time", "10 s"}};
  desc.update(extra);
  build_topology(desc, 64, "/cluster/topology", d);
  return d.issues();
}

TEST(Torus, OcsPhasesAreChecked) {
  auto bad =
      ocs_issues({{"ocs_phases", {{{"from_step", 0}, {"dims", {4, 4, 4}}}, {{"from_step", 5}, {"dims", {4, 8}}}}}});
  ASSERT_EQ(bad.size(), 1u);
  EXPECT_EQ(bad[0].path, "/cluster/topology/ocs_phases/1/dims");
  EXPECT_EQ(bad[0].message, "dimensions multiply to 32, but there are 64 devices");
  bad = ocs_issues(
      {{"ocs_phases", {{{"from_step", 9}, {"dims", {4, 4, 4}}}, {{"from_step", 9}, {"dims", {2, 4, 8}}}}}});
  ASSERT_EQ(bad.size(), 1u);
  EXPECT_EQ(bad[0].path, "/cluster/topology/ocs_phases/1/from_step");
  bad = ocs_issues({{"ocs_ports", 96}, {"ocs_phases", {{{"from_step", 9}, {"dims", {2, 4, 8}}}}}});
  ASSERT_EQ(bad.size(), 1u);  // 4x4x4 fits in 96 ports, 2x4x8 needs 112
  EXPECT_EQ(bad[0].path, "/cluster/topology/ocs_phases/0/dims");
  bad = ocs_issues({{"ocs_reconfiguration_time", "0 s"}, {"ocs_phases", {{{"from_step", 9}, {"dims", {2, 4, 8}}}}}});
  ASSERT_EQ(bad.size(), 1u);
  EXPECT_EQ(bad[0].path, "/cluster/topology/ocs_reconfiguration_time");
  bad = ocs_issues({{"ocs_phases", {{{"step", 9}, {"dims", {2, 4, 8}}}}}});
  ASSERT_EQ(bad.size(), 2u);  // unknown key, from_step missing
  EXPECT_EQ(bad[0].path, "/cluster/topology/ocs_phases/0/step");
  EXPECT_EQ(bad[1].path, "/cluster/topology/ocs_phases/0/from_step");
}

TEST(Torus, PhotonicLinksNeedNoChangeInTheShape) {
  Diagnostics d;
  TopologyGraph g = build_topology({{"type", "torus"}, {"dims", {4, 4}}, {"link", {{"preset", "optical-io-teraphy"}}}},
                                   16, "/t", d);
  ASSERT_TRUE(d.ok());
  EXPECT_EQ(g.edges()[0].link_class(), "optical");
}

TEST(NvswitchClusterTorusFabric, NodesFormATorusOfRouters) {
  // 16 nodes of 8 GPUs on a 4x4 node torus: 16 NVSwitches + 16 routers; edges: 128 NVLink,
  // 128 NIC ports, 2 x 16 router links.
  Diagnostics d;
  TopologyGraph g = build_topology(
      {{"type", "nvswitch-cluster"}, {"fabric", "torus"}, {"fabric_dims", {4, 4}}}, 128, "/t", d);
  ASSERT_TRUE(d.ok()) << d.issues()[0].message;
  EXPECT_EQ(static_cast<int>(g.edges().size()), 128 + 128 + 32);
  const auto a = analyse_topology(g);
  // GPU -> router -> (up to 2 + 2 router hops) -> router -> GPU: diameter 2 + 4.
  EXPECT_EQ(a.diameter, 6);
  Diagnostics d2;
  build_topology({{"type", "nvswitch-cluster"}, {"fabric", "torus"}}, 128, "/t", d2);
  ASSERT_EQ(d2.issues().size(), 1u);
  EXPECT_EQ(d2.issues()[0].path, "/t/fabric_dims");
}

}  // namespace
}  // namespace hcsim
