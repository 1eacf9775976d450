#pragma once
// Closed-form time of transfers that all start at once between graph nodes, each on its
// route (topologies/routing), sharing the links they cross, as the engine's flows do:
//   T = max over transfers f of ( latency_f + max over resources r on f's path of load_r / capacity_r )
// where a resource is one direction of a topology edge (capacity lanes x bandwidth x
// efficiency; load: the bytes of every transfer crossing it that way) or the media of a
// memory node an endpoint sits on (capacity MemoryMedia::bandwidth, shared by reads and
// writes; none when that is zero), and latency_f is the route's latency plus the media
// latency of a memory endpoint. Exact under max-min fair sharing when the transfers that
// share a bottleneck are alike (a uniform cluster streaming to its pool); with mixed
// transfers a bottleneck's share is not equal, and this is the time of the most loaded one.

#include <vector>

#include "topologies/routing.hpp"

namespace hcsim {

struct NodeTransfer {
  int src = -1, dst = -1;  // graph node indices
  Bytes bytes{};
};

// The graph's memory nodes (TopoNode::Kind::memory) in node order: memory endpoint k of a
// task graph is the k-th of them.
std::vector<int> memory_nodes(const TopologyGraph& g);

Seconds concurrent_transfer_time(const Router& router, const std::vector<NodeTransfer>& transfers);

}  // namespace hcsim
