#pragma once
// The collective-algorithm family: a registry keyed by name ("ring", "double_binary_tree",
// ...), filled by register_builtin_collectives(). Each entry says which operations and
// group shapes it serves and builds the Schedule; the cost model (cost.hpp) evaluates
// schedules on a topology and picks the fastest applicable one, as NCCL's tuner picks
// the algorithm of least predicted time (NVIDIA/nccl src/graph/tuning.cc).

#include <cstdint>
#include <functional>
#include <map>
#include <string>
#include <string_view>
#include <vector>

#include "sim/collectives/schedule.hpp"

namespace hcsim {

// What an algorithm may assume about the group, in rank order.
struct GroupShape {
  int ranks = 0;
  int nodes = 1;                // locality nodes (TopologyGraph::node_of) spanned
  int per_node = 0;             // ranks per node when every node has the same number, else 0
  std::vector<int> torus_dims;  // non-empty when rank = x0 + d0 * (x1 + ...) on a device torus
};

struct ScheduleRequest {
  CollectiveOp op = CollectiveOp::all_reduce;
  GroupShape shape;
  std::int64_t elements = 0;
  int chunks = 1;           // pipeline depth of tree and chain
  bool compressed = false;  // see Step::repeat
};

struct CollectiveAlgorithm {
  std::string name;
  std::string help;
  std::string source;
  bool pipelined = false;      // takes ScheduleRequest::chunks
  bool analytic_only = false;  // no rank-level schedule (in-network reduction)
  std::function<bool(CollectiveOp, const GroupShape&)> supports;
  std::function<Schedule(const ScheduleRequest&)> schedule;  // empty when analytic_only
};

const std::map<std::string, CollectiveAlgorithm, std::less<>>& collective_algorithms();
// nullptr when unknown.
const CollectiveAlgorithm* find_collective_algorithm(std::string_view name);
std::vector<std::string> collective_algorithm_names();
// Idempotent.
void register_builtin_collectives();

}  // namespace hcsim
