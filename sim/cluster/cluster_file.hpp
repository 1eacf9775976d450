#pragma once
// The inputs of `hcsim cluster` (docs/cluster.md): the cluster file (pools and topology as
// in a scenario's `cluster`, the scheduler, the simulation settings) and the job list (the
// workloads jobs run, and the jobs: arrival, size, work, priority, pools, preemption cost).
// Checked as a scenario is: unknown keys, units and ranges, cross-field rules, every
// problem reported at once with its JSON path (InputError).

#include <cstdint>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "scenarios/scenario.hpp"
#include "sim/cluster/cluster_types.hpp"

namespace hcsim {

struct ClusterSpec {
  std::string file, name, description;
  nlohmann::json cluster;                 // the cluster section as given
  Scenario shared;                        // its pools and topology, parsed (parse_cluster_section)
  std::vector<std::uint32_t> pool_index;  // per ClusterLayout pool: its index in shared.pools
  ClusterLayout layout;
  nlohmann::json scheduler;    // {"type": ..., parameters}, resolved against its registry entry
  std::string mode = "event";  // how each job's step is simulated: event | flow | analytical
  Seconds horizon{};           // the scheduler loop stops there
  bool contention = true;      // simulate the running jobs together on the shared fabric
  std::vector<Issue> warnings;
};

// A workload of the job list: a scenario's workload and strategy without the cluster
// (and without dp, which the job's size sets).
// `strategies` holds one strategy, or with "strategies" in the job list the space the
// scheduler may choose from: at each pool and size the one whose step alone is shortest.
struct ClusterWorkload {
  std::string name;
  nlohmann::json workload;
  std::vector<nlohmann::json> strategies;
  std::vector<std::uint32_t> model_parallel;  // per strategy: devices of one replica, tp x pp x cp
  std::uint32_t quantum = 1;                  // the sizes' step: gcd of model_parallel
};

// A job's amount of work as given; steps once the oracle has costed it (resolve_work).
struct JobWork {
  enum class Kind : std::uint8_t { steps, tokens, duration } kind = Kind::steps;
  double amount = 0;       // steps or tokens
  Seconds duration{};      // kind duration: this long alone ...
  std::uint32_t pool = 0;  // ... on this pool (ClusterLayout index), at the job's largest size
};

struct JobList {
  std::string file;
  std::vector<ClusterWorkload> workloads;
  std::vector<JobSpec> jobs;
  std::vector<JobWork> work;        // per job
  std::vector<std::size_t> source;  // per job: its index in the file's jobs (for /jobs/i paths)
};

ClusterSpec parse_cluster_file(const nlohmann::json& doc, const std::string& file = "");
ClusterSpec load_cluster_file(const std::string& file, const std::vector<std::string>& overrides = {});
JobList parse_job_list(const nlohmann::json& doc, const ClusterSpec& cluster, const std::string& file = "");
JobList load_job_list(const std::string& file, const ClusterSpec& cluster);

// The parameter tables of the cluster file and the job list, one line a parameter (for
// `hcsim list cluster`).
std::string describe_cluster_inputs();

// The scenario one job's step runs as alone: the workload under strategy `strategy` on
// `devices` devices of pool `pool` (ClusterLayout index), with the cluster's topology,
// dp = devices / that strategy's model_parallel.
nlohmann::json job_scenario_json(const ClusterSpec& cluster, const ClusterWorkload& w, std::size_t strategy,
                                 std::uint32_t pool, std::uint32_t devices);

}  // namespace hcsim
