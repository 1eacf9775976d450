#pragma once
// The engine: replays a TaskGraph on a platform built from a TopologyGraph with SimGrid
// 3.32, the only part of hcsim that talks to SimGrid. Devices are hosts, switches are
// routers, topology edges are split-duplex links (bandwidth x efficiency, latency), a
// compute task is an Exec, a send is a host-to-host Comm, and a collective is expanded onto
// point-to-point Comms along its algorithm's ring so that link sharing is real:
//  - "event": per collective, the algorithm's per-edge volume as one flow per ring edge,
//    after an analytical latency term (steps - 1) x alpha (../shared/simgrid.md §9.4);
//  - "flow": every step of the schedule (sim/collectives) as its own flows.
// The task DAG stays in hcsim; an activity is created when its dependencies finish
// (pre-building the DAG inside SimGrid 3.32 is quadratic). SimGrid allows one engine per
// process, so simulate() runs it in a forked child and reads the results back.

#include <cstdint>
#include <string>
#include <vector>

#include "topologies/topology.hpp"
#include "workloads/task_graph.hpp"

namespace hcsim {

struct EngineOptions {
  std::string mode = "event";  // event | flow
  bool isolate = true;         // run SimGrid in a child process
};

struct EngineResult {
  std::vector<double> start, end;  // per task, seconds
  std::vector<double> edge_bytes;  // per topology edge, both directions
  double makespan = 0;
  std::uint64_t activities = 0;    // SimGrid activities created
};

EngineResult simulate(const TopologyGraph& topo, const TaskGraph& graph, const EngineOptions& opt);

}  // namespace hcsim
