#pragma once
// The warnings channel of every command that reads a scenario (docs/robustness.md):
// legal but implausible input is reported once on standard error, one line each,
// "warning: FILE:/json/pointer: message", and never changes standard output or a file
// written; with --strict the warnings are errors (exit 2, before anything is written).

#include <string>
#include <vector>

#include <CLI/CLI.hpp>

#include "scenarios/scenario.hpp"

namespace hcsim {

void add_strict_flag(CLI::App& cmd, bool& strict);

// Prints `warnings` of `file`, or with `strict` throws them as an InputError.
void report_warnings(const std::vector<Issue>& warnings, const std::string& file, bool strict);

// load_scenario, then report_warnings.
Scenario load_reported(const std::string& file, const std::vector<std::string>& sets, bool strict);

}  // namespace hcsim
