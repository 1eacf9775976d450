#pragma once
// The engine: replays a TaskGraph on a platform built from a TopologyGraph with SimGrid
// 3.32, the only part of hcsim that talks to SimGrid. Devices are hosts, switches are
// routers, topology edges are split-duplex links (bandwidth x efficiency, latency), a
// compute task is an Exec (or, on a device whose compute tasks form a chain, a kernel
// timer of its duration: the same time, without a SimGrid activity; replay.cpp), a send is
// a host-to-host Comm, and a collective is expanded onto
// point-to-point Comms of its algorithm (collective_plan.hpp) so that link sharing is real:
//  - "event": per phase of the algorithm's schedule, an analytical timer then one flow per
//    device pair with the phase's bytes (a ring: (2(n-1) - 1) x alpha, then one flow per
//    ring edge of 2(n-1)/n S);
//  - "flow": every transfer of the schedule (sim/collectives) as its own flow, each rank
//    running its steps in order.
// The algorithm is EngineOptions::algorithm where it applies, else the cost model's
// choice per (group, op, size bucket), as NCCL's tuner chooses. In event mode a collective
// that has its links to itself (no other traffic crosses them while it runs) is one timer
// of the time its flows would take (collective_replay.hpp, "Solo collectives").
// The task DAG stays in hcsim; an activity is created when its dependencies finish
// (pre-building the DAG inside SimGrid 3.32 is quadratic). SimGrid allows one engine per
// process, so simulate() runs it in a forked child and reads the results back.

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "sim/engine/collective_plan.hpp"
#include "topologies/topology.hpp"
#include "workloads/task_graph.hpp"

namespace hcsim {

struct EngineOptions {
  std::string mode = "event";       // event | flow
  std::string algorithm = "auto";   // collective algorithm: "auto" or a registered name
  // Flow mode: each phase of a collective's schedule as one flow per pair after a timer of
  // its latency (collective_plan.hpp, "Flow mode by phases") instead of every step's flows.
  bool flow_phases = false;
  bool isolate = true;              // run SimGrid in a child process
  // Chained compute as kernel timers (the fast path); false makes every compute task an
  // Exec, the reference the timers are checked against.
  bool compute_timers = true;
  // Event mode: a collective that runs alone on its links as one timer of the time its flows
  // would take (collective_replay.hpp, "Solo collectives"); false runs its flows, the
  // reference the timers are checked against.
  bool solo_collectives = true;
  // Symmetric runs: the flows of a built rank's collective that no built device sends or
  // receives run as representative flows (event mode, and flow mode by phases;
  // collective_replay.hpp); false runs every one of them.
  bool representative_flows = true;
  // Optional: plans (algorithm choices, schedules) kept across simulate() calls on the same
  // topology; made with the same algorithm and mode. The child process inherits its caches.
  std::shared_ptr<CollectivePlanner> planner;
  // An MoE model's routing when its dispatch and combine run as DeepEP's (CostOptions::deepep).
  std::optional<TokenRouting> deepep{};
  // SM contention (docs/models.md, "SM contention"): per device, the cores a collective's
  // channels take from its compute (a GPU's SMs; 0: none), or empty: collectives leave
  // compute alone. While collectives run on a device, its compute runs at
  // 1 - min(their channels, cores - 1) / cores of its rate (CollectiveReplay::channels).
  std::vector<int> comm_cores;
  // With comm_cores: the SMs a tensor- or sequence-parallel collective holds when the
  // overlap runs it with kernels of its own (tp_overlap_sms, workloads/strategy.hpp); none:
  // NCCL's channels.
  std::optional<int> tp_overlap_sms;
  // An MoE model's uneven routing, which sizes its all-to-alls' blocks (CostOptions::routing).
  std::optional<TokenRouting> routing{};
};

struct EngineResult {
  // Per task, seconds. The engine records ends; simulate() derives each start: the latest
  // end among the task's dependencies (0 without), the clock at which the replay starts it.
  std::vector<double> start, end;
  std::vector<double> edge_bytes;  // per topology edge, both directions
  double makespan = 0;
  std::uint64_t activities = 0;    // SimGrid activities and kernel timers started
};

EngineResult simulate(const TopologyGraph& topo, const TaskGraph& graph, const EngineOptions& opt);

// "3.32.0": the SimGrid library loaded (and the headers built against, when they differ).
std::string simgrid_version();

}  // namespace hcsim
