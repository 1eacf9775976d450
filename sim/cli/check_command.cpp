// `hcsim check EXPECT.json [--junit FILE] [-j N]` (sim/sweep/check_runner.hpp).
#include <iostream>
#include <memory>

#include <fmt/format.h>

#include "output.hpp"
#include "warnings.hpp"
#include "sim/cli/command.hpp"
#include "sim/sweep/check_runner.hpp"
#include "sim/sweep/scenario_source.hpp"

namespace hcsim {
namespace {

struct CheckArgs {
  std::string file, junit;
  int jobs = 1;
  bool strict = false;
};

int run_check_command(const CheckArgs& a) {
  const sweep::CheckSpec spec = sweep::load_check(a.file);
  for (const auto& sc : spec.scenarios)
    report_warnings(sweep::scenario_warnings(sc.doc, sc.file).value_or(std::vector<Issue>{}), sc.file, a.strict);
  const sweep::CheckResult r = sweep::run_check(spec, a.jobs);
  for (const auto& o : r.outcomes) {
    const char* tag = o.status == "pass" ? "PASS " : o.status == "fail" ? "FAIL " : "ERROR";
    std::cout << fmt::format("{} {}\n      {}\n", tag, o.name, o.message);
  }
  std::cout << fmt::format("check: {} expectations, {} passed, {} failed, {} errors ({:.2f} s, {} scenarios)\n",
                           r.outcomes.size(), r.passed, r.failed, r.errors, r.seconds, spec.scenarios.size());
  if (!a.junit.empty()) write_file_atomic(a.junit, sweep::junit_xml(r));
  if (r.errors > 0)
    std::cerr << fmt::format("{}: {} expectations could not be evaluated (bad input)\n", a.file, r.errors);
  return r.exit_code();
}

}  // namespace

void add_check_command(CLI::App& app, Commands& cmds) {
  auto a = std::make_shared<CheckArgs>();
  auto* cmd = app.add_subcommand("check", "judge expectations about simulated results (exit 1 when one fails)");
  cmd->add_option("expectations", a->file, "expectations JSON file (docs/sweeps.md)")->required();
  cmd->add_option("--junit", a->junit, "also write the outcome as JUnit XML to FILE");
  cmd->add_option("-j,--jobs", a->jobs, "worker processes for the scenarios (default 1)")->check(CLI::Range(1, 1024));
  add_strict_flag(*cmd, a->strict);
  cmds.push_back({cmd, [a] { return run_check_command(*a); }});
}

}  // namespace hcsim
