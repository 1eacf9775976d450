#include "warnings.hpp"

#include <iostream>
#include <sstream>

namespace hcsim {

void add_strict_flag(CLI::App& cmd, bool& strict) {
  cmd.add_flag("--strict", strict,
               "treat warnings (implausible values, bit/byte look-alike units) as errors: exit 2, nothing written");
}

void report_warnings(const std::vector<Issue>& warnings, const std::string& file, bool strict) {
  if (warnings.empty()) return;
  const InputError as_errors(warnings, file);
  if (strict) throw as_errors;
  std::istringstream lines(as_errors.render());
  for (std::string line; std::getline(lines, line);) std::cerr << "warning: " << line << "\n";
}

Scenario load_reported(const std::string& file, const std::vector<std::string>& sets, bool strict) {
  Scenario sc;
  try {
    sc = load_scenario(file, sets);
  } catch (const InputError& e) {
    // A scenario with errors has its warnings printed too: before the errors, or with
    // --strict as errors after them.
    if (e.warnings().empty()) throw;
    if (!strict) {
      report_warnings(e.warnings(), file, false);
      throw InputError(e.issues(), e.file());
    }
    std::vector<Issue> all = e.issues();
    all.insert(all.end(), e.warnings().begin(), e.warnings().end());
    throw InputError(all, e.file());
  }
  report_warnings(sc.warnings, file, strict);
  return sc;
}

}  // namespace hcsim
