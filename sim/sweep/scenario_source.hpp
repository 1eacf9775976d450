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
// Throws InputError (with spec_file and path) when it is neither or cannot be read.
ScenarioSource resolve_scenario(const nlohmann::json& ref, const std::string& spec_file, const std::string& path);

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
// whether the report keeps its "per_device" section (report_json).
Evaluation evaluate_scenario(const nlohmann::json& doc, const std::string& file, bool per_device = true);

// The warnings of parsing `doc` (Scenario::warnings); nullopt when it does not parse (the
// point that runs it reports why).
std::optional<std::vector<Issue>> scenario_warnings(const nlohmann::json& doc, const std::string& file);

// "path: message; path: message" of an InputError, without the file name.
std::string issues_text(const std::exception& e);

}  // namespace hcsim::sweep
