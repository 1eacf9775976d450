// The shared cluster's layout (sim/cluster/cluster_file.hpp): the placement's leaves are the
// fat tree's, sized as the topology sizes them (docs/cluster.md, "Placement").
#include <gtest/gtest.h>

#include "sim/cluster/cluster_file.hpp"

namespace hcsim {
namespace {

// Eight 8-GPU A100 nodes; `topology` adds to the nvswitch-cluster's keys.
std::uint32_t leaf_nodes(const nlohmann::json& topology) {
  nlohmann::json doc = nlohmann::json::parse(R"({
    "cluster": {
      "pools": [ { "name": "a100", "preset": "nvidia-a100-80gb-sxm", "count": 64 } ],
      "topology": { "type": "nvswitch-cluster", "gpus_per_node": 8, "nvlink": { "preset": "nvlink3" } } },
    "simulation": { "mode": "event" } })");
  for (const auto& [k, v] : topology.items()) doc["cluster"]["topology"][k] = v;
  return parse_cluster_file(doc).layout.nodes_per_leaf;
}

TEST(ClusterFile, PlacementLeavesAreTheFabricLeaves) {
  // Leaf down ports floor(k r / (1 + r)) (topologies/clos.hpp), divided by the node's NICs.
  // Radix 4 at 3:1, one NIC a node: 3 down ports, 3 nodes; the fabric is a fat tree by default.
  EXPECT_EQ(leaf_nodes({{"nics_per_node", 1}, {"switch_radix", 4}, {"oversubscription", 3}}), 3u);
  // No radix: the switch of the NIC's rate (docs/network.md): HDR (the default NIC) 40 ports,
  // 20 down, 2 nodes of 8 NICs; NDR 64 ports, 32 down, 4 nodes; at 2:1 NDR has 42 down, 5 nodes.
  EXPECT_EQ(leaf_nodes(nlohmann::json::object()), 2u);
  EXPECT_EQ(leaf_nodes({{"nic", {{"preset", "ib-ndr"}}}}), 4u);
  EXPECT_EQ(leaf_nodes({{"nic", {{"preset", "ib-ndr"}}}, {"oversubscription", 2}}), 5u);
  // A rail-optimised fabric has a leaf per rail, not per group of nodes: no hint.
  EXPECT_EQ(leaf_nodes({{"nic", {{"preset", "ib-ndr"}}}, {"fabric", "rail-optimised"}}), 0u);
}

}  // namespace
}  // namespace hcsim
