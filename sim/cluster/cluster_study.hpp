#pragma once
// One cluster study from its inputs to its result: the cluster file (parsed, overrides
// applied), the scheduler built from its registry entry, the job list, the work of each job
// costed by the step oracle, the scheduler loop. `hcsim cluster run` and the sweep's cluster
// points (sim/sweep) run it the same way.

#include <memory>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "sim/cluster/cluster_file.hpp"
#include "sim/cluster/cluster_types.hpp"
#include "sim/cluster/engine_oracle.hpp"

namespace hcsim {

struct ClusterStudy {
  ClusterSpec cluster;
  JobList jobs;
  nlohmann::json scheduler;         // resolved: type and every parameter
  std::vector<Issue> job_warnings;  // legal but implausible jobs (a job that fits no pool)
  ClusterResult result;
  std::vector<nlohmann::json> strategies;  // per job: the strategy it ran (last run), null if it never ran
  EngineOracle::Runs runs;
};

// `cluster_doc` is the cluster file's JSON (overrides applied), `file` its name for messages.
// InputError (with the file it concerns) for bad input.
std::unique_ptr<ClusterStudy> run_cluster_study(const nlohmann::json& cluster_doc, const std::string& file,
                                                const std::string& jobs_file);

// The scheduler of a parsed cluster file, resolved against its registry entry (type and
// every parameter), without running anything: how a sweep checks a cluster point's
// scheduler pointers. InputError (with c.file) when the type or a parameter is refused.
nlohmann::json resolve_cluster_scheduler(const ClusterSpec& c);

// The study's report (cluster_report_json) with the resolved scheduler.
nlohmann::json cluster_study_json(const ClusterStudy& s);

}  // namespace hcsim
