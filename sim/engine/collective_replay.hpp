#pragma once
// Inside the engine only: the replay of collective tasks from their plans
// (collective_plan.hpp). It decides which flows and timers run when; the task replay
// (replay.cpp) turns them into SimGrid activities and reports back when each one ends.
//   event mode: per phase, a timer then the phase's merged flows, phases in order;
//   flow mode:  every transfer of the schedule as a flow, rank r's step-k sends starting
//               once all transfers of earlier steps that r sends or receives are done.

#include <cstdint>
#include <deque>
#include <map>
#include <set>
#include <tuple>
#include <unordered_map>
#include <utility>
#include <vector>

#include "sim/engine/collective_plan.hpp"
#include "sim/engine/mirror_load.hpp"
#include "workloads/task_graph.hpp"

namespace hcsim::engine {

// What the task replay lends the collective replay. `coll` and `item` come back in
// CollectiveReplay::on_activity when the activity ends; coll < 0 finishes task `t` instead.
class ActivityHost {
 public:
  virtual ~ActivityHost() = default;
  // `stretch`: the flow's simulated bytes per real byte (>= 1), for the links it shares
  // with mirrored flows (mirror_load.hpp).
  virtual void launch_comm(std::uint32_t src, std::uint32_t dst, double bytes, TaskId t, int coll,
                           std::uint32_t item, double stretch) = 0;
  virtual void launch_timer(Seconds duration, TaskId t, int coll, std::uint32_t item) = 0;
  virtual void finish(TaskId t) = 0;
  virtual std::vector<double>& edge_bytes() = 0;
};

class CollectiveReplay {
 public:
  CollectiveReplay(const TaskGraph& g, CollectivePlanner& planner, ActivityHost& host);

  // Plans every collective of the graph and adds the device pairs their flows use.
  void plan_all(std::set<std::pair<std::uint32_t, std::uint32_t>>& pairs);
  void start(TaskId t);                            // a collective whose dependencies are done
  void on_activity(int coll, std::uint32_t item);  // one of its activities ended
  // Bytes of `copies` collectives like task `t` over `group`, charged to the links, not simulated.
  void account_mirror(TaskId t, std::uint32_t group, double copies);
  // Stretch of send task `t` for its mirrors' share of its route (mirror_load.hpp).
  double send_stretch(TaskId t);

 private:
  struct Instance {
    TaskId task = 0;
    const CollectiveExpansion* plan = nullptr;
    std::uint32_t pending = 0;  // activities in flight (event mode)
    std::size_t phase = 0;      // event mode: current phase
    bool in_timer = false;      // event mode: the phase's timer is running
    std::size_t remaining = 0;  // flow mode: transfers not yet arrived
    std::vector<std::uint16_t> done;                  // flow mode: [r * steps + s] arrived
    std::vector<std::uint32_t> first_open, next_send; // flow mode: per rank
  };

  const CollectiveExpansion& plan_of(const Task& t);
  void run_phase(int c);
  void launch_flows(int c);
  void start_flows(int c);  // flow mode: the first sends of every rank
  void advance(int c, std::uint32_t rank);
  void transfer_done(int c, std::uint32_t item);
  void finish(int c);
  // Stretch of collective c's flow src -> dst in event-mode phase `phase` (flow mode: npos,
  // all the plan's pairs); 1 when its task has no mirrors or they share none of its links.
  double stretch(int c, std::size_t phase, std::uint32_t src, std::uint32_t dst);
  // The plan of the collective like task `t` over mirror group `group` (its algorithm).
  const CollectiveExpansion& mirror_plan(const Task& t, std::uint32_t group);
  using Stretches = std::unordered_map<std::uint64_t, double>;  // by MirrorLoad::key

  const TaskGraph& g_;
  CollectivePlanner& planner_;
  ActivityHost& host_;
  std::deque<Instance> colls_;  // stable references while tasks finish and start others
  std::map<std::tuple<std::uint32_t, int, double>, const CollectiveExpansion*> plans_;  // (group, op, bytes)
  std::unordered_map<TaskId, std::uint32_t> mirror_set_;  // a task's mirror set, where it has one
  MirrorLoad load_;
  std::map<std::tuple<const CollectiveExpansion*, std::uint32_t, std::size_t>, Stretches> stretches_;  // (plan, set, phase)
  std::map<std::pair<std::uint32_t, std::uint64_t>, double> send_stretches_;  // (set, pair)
};

}  // namespace hcsim::engine
