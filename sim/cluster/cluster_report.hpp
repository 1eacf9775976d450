#pragma once
// The reports of `hcsim cluster` (docs/cluster.md): per job (wait, run, completion,
// slowdown from contention, energy), per pool over time (allocated devices, devices free on
// partly held nodes), cluster totals (makespan, mean and p99 completion, utilisation, idle
// energy, energy per job); as a table, JSON, two CSV files and one HTML page with a Gantt
// chart and the pools' utilisation over time. Same result, same bytes.

#include <string>

#include <nlohmann/json.hpp>

#include "sim/cluster/cluster_file.hpp"
#include "sim/cluster/cluster_types.hpp"

namespace hcsim {

struct ClusterReportInput {
  const ClusterSpec& cluster;
  const JobList& jobs;
  const ClusterResult& result;
  const std::vector<nlohmann::json>* strategies = nullptr;  // per job: the strategy it ran, if known
};

nlohmann::json cluster_report_json(const ClusterReportInput& in);
std::string cluster_report_table(const ClusterReportInput& in);
std::string cluster_jobs_csv(const ClusterReportInput& in);
std::string cluster_pools_csv(const ClusterReportInput& in);
std::string cluster_report_html(const ClusterReportInput& in);

// The allocated share of each pool in `bins` equal intervals of [0, makespan]
// (time-weighted mean over each interval), per pool.
std::vector<std::vector<double>> utilisation_bins(const ClusterResult& r, const ClusterLayout& layout,
                                                  std::size_t bins);

}  // namespace hcsim
