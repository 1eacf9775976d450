#pragma once
// Deterministic shortest-path routing on a TopologyGraph, shared by the collective cost
// model and the engine's flow mode.
//
// A route is a minimum-latency path (Dijkstra; each edge weighs its latency in whole
// picoseconds plus one, so that among equal latencies fewer hops win and a node's NVLink
// switch is preferred over its InfiniBand leaf). Where several next hops are equally good
// (the spines of a fat-tree, the two ways round an even torus ring), one is chosen by a
// hash of (source, destination), like ECMP in Ethernet/InfiniBand fabrics, so different
// pairs spread over the spines while one pair always takes the same path. Devices carry
// transit traffic only when the graph says so (TopologyGraph::devices_forward, e.g. a
// torus); otherwise routes pass through switches only.
//   latency    = sum of edge latencies along the path
//   bottleneck = min over edges of lanes x bandwidth x efficiency

#include <cstdint>
#include <map>
#include <utility>
#include <vector>

#include "topologies/topology.hpp"

namespace hcsim {

struct Route {
  bool reachable = false;
  std::vector<int> edges;       // edge indices from source to destination
  std::vector<int> nodes;       // node indices, source first, destination last
  Seconds latency{};
  BytesPerSecond bottleneck{};  // effective (efficiency applied); zero for an empty route

  [[nodiscard]] int hops() const { return static_cast<int>(edges.size()); }
};

class Router {
 public:
  explicit Router(const TopologyGraph& g);
  // Route between graph nodes. Cached; the Router is not thread-safe.
  [[nodiscard]] const Route& route(int src_node, int dst_node) const;
  // Route between global device indices.
  [[nodiscard]] const Route& device_route(int src_device, int dst_device) const;
  [[nodiscard]] const TopologyGraph& graph() const { return g_; }

 private:
  // Dijkstra from one destination, run only as far as the sources asked about need
  // (resumable); searches are kept up to ~128 MB (at least 64), oldest dropped first.
  struct Search {
    std::vector<std::int64_t> dist;  // -1: not reached
    std::vector<char> settled;
    std::vector<std::pair<std::int64_t, int>> heap;  // min-heap on (dist, node)
  };
  std::size_t max_searches_ = 64;
  const Search& settle(int dst, int src) const;

  const TopologyGraph& g_;
  std::vector<std::vector<std::pair<int, int>>> adj_;  // node -> (neighbour, edge), sorted
  std::vector<std::int64_t> weight_;                   // per edge
  mutable std::map<int, Search> searches_;
  mutable std::vector<int> search_order_;
  mutable std::map<std::pair<int, int>, Route> routes_;
};

}  // namespace hcsim
