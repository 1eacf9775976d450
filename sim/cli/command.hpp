#pragma once
// Subcommands register themselves here: each family adds its CLI11 subcommand and the
// function that runs it, returning the exit code (0 ok, 1 a failed check, 2 bad input via
// InputError, thrown and turned into 2 by cli_main).

#include <functional>
#include <string>
#include <vector>

#include <CLI/CLI.hpp>

namespace hcsim {

struct Command {
  CLI::App* app = nullptr;
  std::function<int()> run;
};
using Commands = std::vector<Command>;

// One adder per command family (sim/cli/*_command.cpp), called from cli_main in order.
void add_run_commands(CLI::App& app, Commands& cmds);   // run, validate, schema
void add_list_command(CLI::App& app, Commands& cmds);   // list
void add_diff_command(CLI::App& app, Commands& cmds);   // diff
void add_sweep_command(CLI::App& app, Commands& cmds);  // sweep
void add_search_command(CLI::App& app, Commands& cmds); // search
void add_check_command(CLI::App& app, Commands& cmds);  // check
void add_topo_command(CLI::App& app, Commands& cmds);        // topo
void add_collective_command(CLI::App& app, Commands& cmds);  // collective
void add_validate_suite_command(CLI::App& app, Commands& cmds);  // validate-suite
void add_cluster_command(CLI::App& app, Commands& cmds);         // cluster run, cluster jobs

}  // namespace hcsim
