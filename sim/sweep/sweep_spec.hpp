#pragma once
// A sweep file: a base scenario and the points to run from it.
//
//   {
//     "base": "../quickstart.json",                  // or an inline scenario object
//     "axes": [
//       {"path": "/strategy/tp", "values": [1, 2, 4, 8]},                  // grid axis
//       {"path": "/workload/micro_batch", "range": {"from": 1, "to": 8, "factor": 2}},
//       {"zip": [{"path": "/a", "values": [1, 2]}, {"path": "/b", "values": [3, 4]}]},
//       {"points": [{"/strategy/schedule": "1f1b"}, {"/strategy/schedule": "gpipe"}]}
//     ],
//     "derived": {"/strategy/dp": "16 / (/strategy/tp * /strategy/pp)"},  // or [{"path", "expr"}]
//     "constraints": ["/strategy/dp >= 1", "/strategy/dp == floor(/strategy/dp)"],
//     "metrics": ["/step_time_s", {"name": "j_per_token", "pointer": "/energy/per_token_j"}]
//   }
//
// The points are the cartesian product of the axes (the first axis varies slowest); each
// axis offers a list of choices, a choice being one or more pointer assignments (a grid
// axis one, a zip axis one per member, a points axis whatever each point sets). Derived
// values are computed in order after the axes are applied, then the constraints filter.
// Points that survive are numbered 0, 1, ... in that order: the sweep order.
//
// A cluster sweep has "cluster_base" (a cluster file of `hcsim cluster run`, by name or
// inline) and "jobs" (its job list file) instead of "base": the axes then set pointers
// of the cluster file ("/scheduler/type", "/cluster/pools/1/count"), each point runs the
// cluster study (run_cluster_study) and the metrics point into its report
// (cluster_study_json: "/totals/mean_completion", "/pools/0/utilisation").

#include <cstddef>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "sim/sweep/expression.hpp"
#include "sim/sweep/scenario_source.hpp"

namespace hcsim::sweep {

struct Axis {
  std::vector<nlohmann::ordered_json> choices;  // each: {"/pointer": value, ...}
};

struct Derived {
  std::string pointer;
  Expression expr;
  std::string path;  // where it is written in the sweep file
};

struct Constraint {
  Expression expr;
  std::string path;
};

struct MetricColumn {
  std::string name;     // CSV column and key under "metrics"
  std::string pointer;  // into the report JSON
};

struct SweepSpec {
  std::string file;
  ScenarioSource base;       // the scenario, or the cluster file of a cluster sweep
  std::string cluster_jobs;  // a cluster sweep's job list file (resolved); empty for a scenario sweep
  std::vector<Axis> axes;
  std::vector<Derived> derived;
  std::vector<Constraint> constraints;
  std::vector<MetricColumn> metrics;
  std::vector<std::string> param_pointers;  // every pointer a point may set, in column order

  [[nodiscard]] bool cluster() const { return !cluster_jobs.empty(); }
};

struct SweepPoint {
  std::size_t index = 0;          // position in sweep order
  nlohmann::ordered_json params;  // axis then derived assignments, in column order
};

// Reads and checks a sweep file; throws InputError listing every problem.
SweepSpec load_sweep(const std::string& file);
SweepSpec parse_sweep(const nlohmann::json& doc, const std::string& file);

// The points in sweep order (constraints applied). Throws InputError when a constraint or
// derived value cannot be evaluated (a pointer neither in the base nor set by an axis).
std::vector<SweepPoint> enumerate_points(const SweepSpec& spec);

// The scenario (or cluster file) document of one point: the base with its parameters applied.
nlohmann::json point_document(const SweepSpec& spec, const SweepPoint& point);

// Metric columns from strings ("/step_time_s") or {"name", "pointer"} objects at `path`.
std::vector<MetricColumn> parse_metrics(const nlohmann::json& v, const std::string& path, const std::string& file);
// Step time, throughput, MFU, bubble, energy and memory fit: when a file names none.
std::vector<MetricColumn> default_metrics();
// A cluster sweep's when it names none: jobs completed, makespan, mean and p99 completion,
// device hours, energy per job (the report's totals).
std::vector<MetricColumn> default_cluster_metrics();
// "/energy/per_token_j" -> "energy.per_token_j".
std::string column_name(const std::string& pointer);

}  // namespace hcsim::sweep
