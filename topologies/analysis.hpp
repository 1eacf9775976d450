#pragma once
// Graph analysis of a TopologyGraph with Boost.Graph, used by `hcsim topo` and reports.
//
// - hops: breadth-first search from each device (Boost breadth_first_search on a
//   filtered graph in which non-forwarding devices are endpoints only); diameter is the
//   largest device-to-device hop count, the histogram counts ordered device pairs by hops.
//   Above `max_exact_devices` devices, `sample_sources` evenly spaced sources are used
//   (deterministic); the diameter is then a lower bound, exact for vertex-transitive
//   shapes such as a torus.
// - bisection bandwidth: the minimum, over a family of balanced device bisections, of the
//   max-flow (= min-cut, Ford-Fulkerson) between the two halves, with each link's raw
//   per-direction bandwidth (lanes x bandwidth) as capacity (Boost push_relabel_max_flow).
//   The family holds, for every b with n divisible by 2b, the split {i : floor(i/b) even}:
//   b = n/2 is the contiguous halving (across nodes, racks or the slowest torus
//   dimension), and b = stride x d_k / 2 halves torus dimension k. For a torus this finds
//   the known cut 2N/d_max links (Dally & Towles §3); for a non-blocking fat-tree it finds
//   N/2 NIC links. In general it is an upper bound on the true minimum bisection.

#include <cstdint>
#include <string>
#include <vector>

#include "topologies/topology.hpp"

namespace hcsim {

struct AnalysisOptions {
  int max_exact_devices = 4096;  // all-pairs hops up to this many devices
  int sample_sources = 256;      // BFS sources above it
  int max_bisection_cuts = 16;   // candidate bisections tried (contiguous halving first)
};

struct TopologyAnalysis {
  int devices = 0, switches = 0, memories = 0;
  int links = 0;                 // full-duplex edges
  int lanes = 0;                 // sum of edge lanes
  int diameter = 0;              // hops, over device pairs
  double mean_hops = 0;          // over reachable ordered device pairs counted
  std::vector<std::int64_t> hop_histogram;  // [h] = ordered device pairs h hops apart (h >= 1)
  std::int64_t pairs_counted = 0;
  std::int64_t unreachable_pairs = 0;
  bool sampled = false;
  BytesPerSecond bisection_bandwidth{};  // per direction, raw
  int bisection_cuts_tried = 0;
  std::string bisection_method;
};

TopologyAnalysis analyse_topology(const TopologyGraph& g, const AnalysisOptions& opt = {});

// Max-flow between two disjoint device sets (per direction, raw bandwidth): the
// bandwidth that can cross from `a` to `b`.
BytesPerSecond cut_bandwidth(const TopologyGraph& g, const std::vector<int>& a, const std::vector<int>& b);

}  // namespace hcsim
