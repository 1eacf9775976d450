#pragma once
// `hcsim check`: simulates each distinct scenario of an expectations file once (in parallel
// worker processes), then judges every expectation against the JSON reports. Each failure
// says what was expected, what came out and by how much it missed. Exit code: 0 all hold,
// 1 one fails, 2 bad input (the file, or a scenario that cannot be simulated).

#include <string>
#include <vector>

#include "sim/sweep/check_spec.hpp"

namespace hcsim::sweep {

struct CheckOutcome {
  std::string name;
  std::string path;     // of the expectation in its file
  std::string status;   // "pass", "fail", "error"
  std::string message;  // one line: what was checked (pass) or expected vs got (fail, error)
};

struct CheckResult {
  std::string file;
  std::vector<CheckOutcome> outcomes;  // in file order
  std::size_t passed = 0, failed = 0, errors = 0;
  double seconds = 0;
  [[nodiscard]] int exit_code() const { return errors > 0 ? 2 : failed > 0 ? 1 : 0; }
};

CheckResult run_check(const CheckSpec& spec, int jobs);

// Judges one expectation given the reports of the spec's scenarios (null where one could
// not be simulated, with `why` saying so).
CheckOutcome judge(const Expectation& x, const std::vector<nlohmann::json>& reports,
                   const std::vector<std::string>& why);

// JUnit XML (testsuites/testsuite/testcase with failure and error elements and their
// tests/failures/errors/skipped/time counts), as CI systems read it.
std::string junit_xml(const CheckResult& r);
// XML character escaping; in an attribute, tab, newline and carriage return too (a parser
// would otherwise normalise them to spaces). Other control characters are dropped.
std::string xml_escape(const std::string& s, bool attribute = false);

}  // namespace hcsim::sweep
