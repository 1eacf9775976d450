#pragma once
// The command line: `hcsim run | validate | list` (and the later subcommands). Only here do
// errors become exit codes: 0 success, 1 a failed check, 2 bad input.

#include <map>
#include <string>

namespace hcsim {
int cli_main(int argc, char** argv);
// The example lines that end each subcommand's --help, by subcommand name.
const std::map<std::string, std::string>& command_examples();
}
