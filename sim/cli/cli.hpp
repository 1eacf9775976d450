#pragma once
// The command line: `hcsim run | validate | list` (and the later subcommands). Only here do
// errors become exit codes: 0 success, 1 a failed check, 2 bad input.

namespace hcsim {
int cli_main(int argc, char** argv);
}
