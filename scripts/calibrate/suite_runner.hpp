#pragma once
// One evaluation of a validation suite for candidate parameter values: runs
//   HCSIM validate-suite DIR --format json --set POINTER=VALUE ...
// and reads back each case's published and predicted value. The exit status of
// validate-suite (1 when a case drifts from its recorded error) is expected while fitting
// and ignored; a case that did not run (e.g. its layout no longer fits in memory) is an
// error of the candidate, reported by `ran`.
#include <string>
#include <vector>

namespace hcsim::calibrate {

struct CaseResult {
  std::string name;
  bool ran = false;
  double published = 0, predicted = 0;
  double error_pct = 0;
  double peak_bytes = 0, capacity_bytes = 0;
  double wall_s = 0;
  std::string message;
};

struct SuiteResult {
  std::vector<CaseResult> cases;
  double mean_abs_error_pct = 0, max_abs_error_pct = 0;
  double wall_s = 0;
  [[nodiscard]] bool all_ran() const;
};

// Throws std::runtime_error when hcsim cannot be run or its output is not the expected JSON.
SuiteResult run_suite(const std::string& hcsim, const std::string& dir, const std::vector<std::string>& sets);

// The command line run_suite executes (for logs and for reproducing one evaluation).
std::string suite_command(const std::string& hcsim, const std::string& dir, const std::vector<std::string>& sets);

}  // namespace hcsim::calibrate
