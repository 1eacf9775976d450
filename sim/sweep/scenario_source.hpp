#pragma once
// Where a sweep, search or check file finds a scenario: a path (relative to the file that
// names it) or an inline scenario object. Also the one function that evaluates a scenario
// document to its JSON report, used by every point of every sweep.

#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "sim/core/error.hpp"

namespace hcsim::sweep {

struct ScenarioSource {
  nlohmann::json doc;  // the scenario document as written (before parsing)
  std::string file;    // the file it came from; for an inline object "<spec file>#<pointer>"
};

// `ref` at JSON pointer `path` of `spec_file`: a string path or an inline object.
// Throws InputError (with spec_file and path) when it is neither or cannot be read; `what`
// names the kind of document in that message ("scenario", "cluster").
ScenarioSource resolve_scenario(const nlohmann::json& ref, const std::string& spec_file, const std::string& path,
                                const std::string& what = "scenario");

// `name` resolved against the directory of `spec_file` unless it is absolute.
std::string relative_to(const std::string& spec_file, const std::string& name);

// Sets each "/pointer" of `assignments` in `doc` (intermediate objects are created).
void apply_assignments(nlohmann::json& doc, const nlohmann::ordered_json& assignments);

// The outcome of simulating one scenario document.
struct Evaluation {
  std::string status;     // "ok", "infeasible" (an InputError: invalid layout, does not fit), "error"
  std::string reason;     // why, when not ok
  nlohmann::json report;  // report_json(), when ok
};

// Parses `doc` (labelled `file` in messages) and simulates it; never throws. `per_device`:
// whether the report keeps its "per_device" section (report_json); `power_curve`: whether
// peak power and the power curve are computed (RunOptions; zero and empty otherwise).
Evaluation evaluate_scenario(const nlohmann::json& doc, const std::string& file, bool per_device = true,
                             bool power_curve = true);

// Runs the cluster study of `doc` (a cluster file, labelled `file`) on the job list
// `jobs_file` as `hcsim cluster run` does (run_cluster_study); never throws. The report is
// cluster_study_json's; an InputError (a cluster or job list the parser refuses) is
// "infeasible" with its paths.
Evaluation evaluate_cluster(const nlohmann::json& doc, const std::string& file, const std::string& jobs_file);

// The warnings of parsing the cluster file `doc` (ClusterSpec::warnings); nullopt when it
// does not parse. The job list's warnings need every job costed, so they are not gathered.
std::optional<std::vector<Issue>> cluster_warnings(const nlohmann::json& doc, const std::string& file);

// The warnings of parsing `doc` (Scenario::warnings); nullopt when it does not parse (the
// point that runs it reports why).
std::optional<std::vector<Issue>> scenario_warnings(const nlohmann::json& doc, const std::string& file);

// "path: message; path: message" of an InputError, without the file name.
std::string issues_text(const std::exception& e);

}  // namespace hcsim::sweep
