#pragma once
// An expectations file for `hcsim check`: claims about simulated results that a team keeps
// in CI, so a change that moves them fails the build.
//
//   {
//     "scenarios": {                                   // optional named scenarios
//       "1f1b": "../scenarios/quickstart.json",        // a path (relative to this file)
//       "interleaved": {"base": "1f1b", "set": {"/strategy/schedule": "interleaved-1f1b",
//                                                "/strategy/interleave": 2}}
//     },
//     "expectations": [
//       {"name": "step time", "scenario": "1f1b", "metric": "/step_time_s",
//        "value": 0.5886, "tolerance": "2%"},               // or "abs_tolerance", "at_most", "at_least"
//       {"name": "v=2 helps", "faster": "interleaved", "than": "1f1b", "by_at_least": "3%"},
//       {"name": "energy", "cheaper": "interleaved", "than": "1f1b"},        // /energy/per_token_j
//       {"name": "mfu", "better": "interleaved", "than": "1f1b", "metric": "/mfu",
//        "higher_is_better": true, "by_at_least": "1%"},
//       {"name": "order", "ranking": ["interleaved", "1f1b"], "metric": "/step_time_s"}
//     ]
//   }
//
// A scenario is a name from "scenarios", a file path, an inline scenario object, or
// {"base": <scenario>, "set": {"/pointer": value, ...}} (a variant of another scenario).

#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

namespace hcsim::sweep {

struct CheckScenario {
  std::string label;    // for messages: the name, the path, or "base with /a=1"
  nlohmann::json doc;   // the scenario document to simulate
  std::string file;     // for its error messages
};

struct Expectation {
  enum class Kind { value, better, ranking } kind = Kind::value;
  std::string name;
  std::string path;                   // its JSON pointer in the expectations file
  std::vector<std::size_t> scenarios; // into CheckSpec::scenarios (better: {a, than}; ranking: best first)
  std::vector<std::string> labels;    // how this expectation names each of them
  std::string metric = "/step_time_s";
  // value
  std::optional<double> value, rel_tolerance, abs_tolerance, at_most, at_least;
  // better
  bool lower_is_better = true;
  double by_at_least = 0;             // relative improvement, 0.05 = 5 %
};

struct CheckSpec {
  std::string file;
  std::vector<CheckScenario> scenarios;  // distinct documents, each simulated once
  std::vector<Expectation> expectations;
};

// Throws InputError listing every problem (paths into the expectations file).
CheckSpec load_check(const std::string& file);
CheckSpec parse_check(const nlohmann::json& doc, const std::string& file);

}  // namespace hcsim::sweep
