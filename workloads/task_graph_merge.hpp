#pragma once
// Several jobs' task graphs as one, on one cluster's device numbering: the step of every
// running job of a shared cluster simulated together in one engine run, so their flows
// share the links their routes have in common (sim/cluster/engine_oracle.hpp).
//
// Each graph is lowered on its own numbering (devices 0..n-1 of a cluster of its size);
// `devices[d]` is where its device d sits in the shared cluster. Tasks, dependencies,
// groups and symmetry mirrors are renumbered; a group's family (its translates d + o, which
// "auto" plans together) is kept when the map is one translation of the whole graph, and
// dropped otherwise (each collective then plans alone: the same flows, its own choice).

#include <cstdint>
#include <span>
#include <vector>

#include "workloads/task_graph.hpp"

namespace hcsim {

struct PlacedGraph {
  const TaskGraph* graph = nullptr;
  std::span<const std::uint32_t> devices;  // cluster device of each of the graph's devices
};

struct MergedGraph {
  TaskGraph graph;
  std::vector<TaskId> first_task;  // per input graph, then one past the last task
};

// `cluster_devices`: the shared cluster's device count. A graph with memory endpoints
// (offload to a memory pool) cannot be placed: an InternalError, the caller refuses them.
MergedGraph merge_task_graphs(std::span<const PlacedGraph> parts, std::uint32_t cluster_devices);

}  // namespace hcsim
