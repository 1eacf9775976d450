#pragma once
// Two-tier folded-Clos (leaf/spine) fabric, as used between GPU nodes: a fat-tree (every
// NIC on the shared leaves, in order) or a rail-optimised fabric (NIC k of every node on
// rail k's own leaves, as in NVIDIA DGX SuperPOD reference designs), with spines shared.
//
// Sizing: a leaf of `radix` ports with down:up oversubscription r gives
//   down = floor(radix * r / (1 + r)) ports to endpoints, up = radix - down to spines,
// so leaf uplink bandwidth is down/r endpoint links (Leiserson, "Fat-trees", IEEE TC 1985;
// Al-Fares et al., SIGCOMM 2008). There are `up` spines and each leaf has one link to each.
// When more leaves exist than a spine has ports, the spines stand for multi-chassis
// (three-tier) spines of the same bisection: `logical_spines` is set in the summary.
// Each endpoint's host index (TopologyGraph::host_index, what D-mod-k routing reads) is its
// position among the fabric's endpoints, leaf by leaf in port order (rail by rail on a
// rail-optimised fabric), as a subnet manager numbers them: the hosts of one leaf are
// consecutive, so the 32 hosts of a 64-port leaf take its 32 uplinks one each.

#include <string>
#include <vector>

#include "topologies/topology.hpp"

namespace hcsim {

struct ClosEndpoint {
  int node = -1;   // graph node that owns the NIC port (a device or a NIC switch)
  int group = 0;   // rail index for rail-optimised fabrics; 0 for a plain fat-tree
};

struct ClosOptions {
  int radix = 40;
  double oversubscription = 1.0;  // leaf down:up
  LinkSpec endpoint_link;         // endpoint -> leaf
  LinkSpec switch_link;           // leaf -> spine
  bool in_switch_reduction = false;
  std::string prefix;             // node-name prefix, e.g. "ib/"
};

struct ClosSummary {
  int leaves = 0, spines = 0, down = 0, up = 0;
  bool logical_spines = false;
};

// A leaf's ports to endpoints: floor(radix r / (1 + r)), at least 1 and at most radix - 1.
int clos_down_ports(int radix, double oversubscription);

// The leaves and spines add_two_tier_clos() builds for groups (rails) of these sizes, in
// group order; its edges: one per endpoint, plus leaves x spines.
ClosSummary clos_shape(const std::vector<int>& group_sizes, const ClosOptions& o);

ClosSummary add_two_tier_clos(TopologyGraph& g, const std::vector<ClosEndpoint>& endpoints, const ClosOptions& o);

}  // namespace hcsim
