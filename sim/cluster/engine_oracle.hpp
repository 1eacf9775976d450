#pragma once
// The step oracle of `hcsim cluster` (docs/cluster.md): a job's step time alone is its
// scenario run as `hcsim run` runs it (its workload and strategy on a cluster of its size
// made of its pool's devices and the shared cluster's topology, dp set by the size); the
// step times of the running jobs together come from one engine run of all their steps on
// the shared cluster's topology, each job's task graph placed on its devices
// (workloads/task_graph_merge.hpp), so their flows share the links their routes share.
//
// Jobs that cannot meet on a link are not simulated together: a job inside one node keeps
// its traffic inside the node (the routing invariant, topologies/routing.hpp), and a job
// across nodes shares with another only where the links its own step loads (its footprint,
// from one engine run of it alone at its placement) meet. The running jobs fall into
// groups that share links; a group of one runs at its step alone at its placement, a
// larger group is simulated together. Every result is cached: alone by (workload, pool,
// size), at a placement by (workload, pool, devices), a group by its members' placements.
//
// One step of each job is simulated together: a job whose step is much shorter than
// another's meets it only over its own step, and the longer one runs alone for the rest
// (docs/cluster.md, "What is not modelled").

#include <map>
#include <memory>
#include <optional>
#include <string>
#include <tuple>
#include <vector>

#include "sim/cluster/cluster_file.hpp"
#include "sim/cluster/cluster_types.hpp"
#include "sim/engine/collective_plan.hpp"
#include "workloads/task_graph.hpp"

namespace hcsim {

class EngineOracle : public StepOracle {
 public:
  EngineOracle(const ClusterSpec& cluster, const JobList& jobs);

  std::optional<Seconds> alone(const JobSpec& job, std::uint32_t pool, std::uint32_t devices) override;
  std::vector<Seconds> together(std::span<const JobSpec* const> jobs,
                                std::span<const JobPlacement> placements) override;
  Joules step_energy(const JobSpec& job, std::uint32_t pool, std::uint32_t devices) override;

  // Why the job cannot run at that size on that pool: "" when it can.
  const std::string& refusal(const JobSpec& job, std::uint32_t pool, std::uint32_t devices);
  // Whether that refusal is the input's fault (its workload or strategy cannot be built at
  // that size), not memory.
  bool refused_by_input(const JobSpec& job, std::uint32_t pool, std::uint32_t devices);
  double tokens_per_step(const JobSpec& job, std::uint32_t pool, std::uint32_t devices);
  // The strategy the job runs at that size on that pool: its workload's only one, or the
  // fastest of its "strategies" (the scheduler's choice from the space).
  const nlohmann::json& strategy(const JobSpec& job, std::uint32_t pool, std::uint32_t devices);
  [[nodiscard]] std::uint64_t simulations() const { return simulations_; }
  // Engine runs by kind: jobs alone (their own scenario), alone at a placement on the shared
  // topology (a footprint), and groups of jobs together.
  struct Runs {
    std::uint64_t alone = 0, placed = 0, together = 0, members = 0;
    double placed_s = 0, together_s = 0;  // wall seconds (diagnostics only, never reported)
  };
  [[nodiscard]] const Runs& runs() const { return runs_; }

 private:
  struct Alone {
    bool ok = false, input_error = false;
    std::size_t strategy = 0;  // which of the workload's strategies (the fastest that runs)
    std::string why;
    Seconds step{};
    Joules energy{};
    double tokens = 0;
    Seconds makespan{};  // of its task graph in the engine
    std::shared_ptr<const TaskGraph> graph;
    std::optional<TokenRouting> deepep;  // its MoE dispatch as DeepEP's (EngineOptions::deepep)
  };
  struct Placed {
    Seconds step{};
    std::vector<std::uint32_t> edges;  // topology edges its step loads, ascending
  };
  using AloneKey = std::tuple<std::uint32_t, std::uint32_t, std::uint32_t>;
  using PlacedKey = std::tuple<std::uint32_t, std::uint32_t, std::vector<std::uint32_t>>;

  const Alone& entry(const JobSpec& job, std::uint32_t pool, std::uint32_t devices);
  Alone run_alone(const ClusterWorkload& w, std::size_t strategy, std::uint32_t pool, std::uint32_t devices);
  const Placed& placed(const JobSpec& job, const JobPlacement& p);
  // One engine run of the given jobs at their placements: each one's end of step.
  std::vector<Seconds> run_together(const std::vector<const Alone*>& parts, const std::vector<const JobPlacement*>& at,
                                    std::vector<double>* edge_bytes);
  bool single_node(const JobPlacement& p) const;

  const ClusterSpec& cluster_;
  const JobList& jobs_;
  std::shared_ptr<CollectivePlanner> planner_;
  std::map<AloneKey, Alone> alone_;
  std::map<PlacedKey, Placed> placed_;
  std::map<std::vector<PlacedKey>, std::vector<Seconds>> groups_;
  std::uint64_t simulations_ = 0;
  Runs runs_;
};

// Turns each job's work into steps (tokens through its tokens per step, a duration through
// its step alone on the named pool at its largest size there), and refuses a job no pool
// and size can build (an InputError at /jobs/i naming the first reason); a job that fits
// nowhere for memory only is legal and left to the loop, with a warning.
std::vector<Issue> resolve_work(JobList& jobs, EngineOracle& oracle, const ClusterSpec& cluster);

}  // namespace hcsim
