// How a fat-tree's leaves pick among their equal uplinks (nvswitch-cluster
// `fabric_routing`, topologies/routing.hpp): by destination (InfiniBand subnet managers'
// fat-tree routing, D-mod-k; Zahavi et al., Hot Interconnects 2010) or by a hash of source
// and destination (Ethernet ECMP).
#include <gtest/gtest.h>

#include <set>
#include <string>

#include "../support/test_topology.hpp"
#include "sim/collectives/cost.hpp"
#include "topologies/routing.hpp"

namespace hcsim {
namespace {

// Four DGX-A100-like nodes of 8 GPUs with 8 HDR NICs each on a fat-tree of 40-port
// switches: 20 NICs per leaf (NICs 0-19 on leaf 0, 20-31 on leaf 1), 20 spines.
TopologyGraph four_nodes(const char* routing, int nodes = 4) {
  return testing::test_topology(
      {{"type", "nvswitch-cluster"}, {"gpus_per_node", 8}, {"fabric", "fat-tree"}, {"fabric_routing", routing}},
      8 * nodes);
}

// The spines that node 3's GPU r -> node 0's GPU r (r = 0..7: the eight rails' ring hops
// from leaf 1 back to leaf 0) pass through.
std::set<std::string> rail_spines(const TopologyGraph& g) {
  const Router router(g);
  std::set<std::string> spines;
  for (int r = 0; r < 8; ++r)
    for (int v : router.device_route(24 + r, r).nodes)
      if (g.node_name(v).find("spine") != std::string::npos) spines.insert(g.node_name(v));
  return spines;
}

TEST(FabricRouting, DestinationRoutingGivesEachRailsRingHopItsOwnSpine) {
  // D-mod-k: the destination GPUs 0..7 are distinct mod 20, so the eight hops take eight
  // spines; the hash puts two of them on one spine (rails 2 and 7: the collision that
  // halves those hops' bandwidth).
  EXPECT_EQ(rail_spines(four_nodes("d-mod-k")).size(), 8u);
  EXPECT_LT(rail_spines(four_nodes("ecmp-hash")).size(), 8u);
}

double allreduce_busbw(const TopologyGraph& g, int devices) {
  std::vector<int> group;
  for (int i = 0; i < devices; ++i) group.push_back(i);
  return CollectiveCostModel(g).estimate(group, CollectiveOp::all_reduce, Bytes(1073741824.0)).busbw.value();
}

TEST(FabricRouting, FourNodeAllReduceKeepsTheTwoNodeBusBandwidthUnderDestinationRouting) {
  // A 1 GiB all-reduce on eight rings (one per NIC rail) is bound by the NICs, whose bus
  // bandwidth does not depend on the node count (nccl-tests PERFORMANCE.md): two nodes (one
  // leaf, no spine) and four (two leaves) give the same busbw up to the protocol's and
  // links' latency terms, which grow with the ring's 2(n-1) steps (62 against 30; measured:
  // 1.8 % less busbw at four nodes).
  const double two = allreduce_busbw(four_nodes("d-mod-k", 2), 16);
  EXPECT_NEAR(allreduce_busbw(four_nodes("d-mod-k"), 32) / two, 1.0, 0.02);
  // With hashed uplinks two rails share a spine: their hops run at half speed and set the
  // ring's pace.
  EXPECT_LT(allreduce_busbw(four_nodes("ecmp-hash"), 32) / two, 0.6);
}

// 64 nodes of 8 H800, one NDR NIC per GPU, each rail its own leaves of 64-port switches
// (32 nodes down, 32 spines up): rail r's leaf 0 holds nodes 0-31, leaf 1 nodes 32-63.
TopologyGraph rails_of_32_nodes(const char* routing) {
  return testing::test_topology({{"type", "nvswitch-cluster"},
                                 {"nvlink", {{"preset", "nvlink4-h800"}}},
                                 {"nic", {{"preset", "ib-ndr"}}},
                                 {"fabric", "rail-optimised"},
                                 {"fabric_routing", routing},
                                 {"switch_radix", 64}},
                                512);
}

TEST(FabricRouting, DestinationRoutingNumbersARailsHostsByNode) {
  // A subnet manager numbers a rail's hosts leaf by leaf in port order (OpenSM ftree), so
  // node n's NIC on rail r is host n of that rail, whatever r: the 32 transfers from leaf 0 to
  // leaf 1 on one rail (node n -> node 32 + n, GPU r) reach hosts 32..63, one per uplink,
  // and take the 32 spines one each. Numbered by GPU (8 n + r) they took 4 of them.
  const TopologyGraph g = rails_of_32_nodes("d-mod-k");
  const Router router(g);
  for (int r : {0, 5}) {
    std::set<std::string> spines;
    for (int n = 0; n < 32; ++n)
      for (int v : router.device_route(8 * n + r, 8 * (32 + n) + r).nodes)
        if (g.node_name(v).find("spine") != std::string::npos) spines.insert(g.node_name(v));
    EXPECT_EQ(spines.size(), 32u) << "rail " << r;
  }
}

TEST(FabricRouting, ALeafToLeafPermutationOnARailRunsAtTheNicsRate) {
  // Every GPU of nodes 0-31 exchanges 1 GiB with its rail peer on nodes 32-63 (a DualPipe
  // copy's gradient all-reduce, a pipeline send between leaves): with the leaf's 32 hosts on
  // its 32 uplinks (1:1) no link carries two transfers, so the pair's time with its 255
  // siblings (the other nodes' and rails' pairs) equals its time alone. Hashed uplinks make
  // some collide.
  const std::vector<int> pair{0, 256};
  std::vector<int> siblings;
  for (int d = 1; d < 256; ++d) siblings.push_back(d);
  auto time = [&](const char* routing, const std::vector<int>& sib) {
    return CollectiveCostModel(rails_of_32_nodes(routing))
        .estimate(pair, CollectiveOp::all_reduce, Bytes(1073741824.0), "auto", sib)
        .time.value();
  };
  EXPECT_DOUBLE_EQ(time("d-mod-k", siblings), time("d-mod-k", {}));
  EXPECT_GT(time("ecmp-hash", siblings), 1.5 * time("ecmp-hash", {}));
}

TEST(FabricRouting, GpusBehindASharedNicAreRoutedByItsHostIndex) {
  // Four NICs for eight GPUs: GPUs 2k and 2k+1 of a node are reached through NIC k, one
  // InfiniBand port (one LID), so D-mod-k gives them that port's index: node n's NIC k is
  // host 4 n + k of the fat-tree.
  const TopologyGraph g = testing::test_topology(
      {{"type", "nvswitch-cluster"}, {"gpus_per_node", 8}, {"nics_per_node", 4}, {"fabric", "fat-tree"}}, 64);
  for (int d = 0; d < 64; ++d) EXPECT_EQ(g.host_index(g.device_node(d)), d / 2) << "GPU " << d;
}

}  // namespace
}  // namespace hcsim
