#include "cli.hpp"

#include <cstdlib>
#include <exception>
#include <iostream>
#include <string>

#include "hcsim/version.hpp"
#include "scenarios/scenario.hpp"
#include "sim/cli/command.hpp"

namespace hcsim {

namespace {

// One line on standard error, whatever the message holds.
std::string one_line(std::string s) {
  for (char& c : s)
    if (c == '\n') c = ' ';
  return s;
}

// An exception escaping a noexcept path (or none at all) ends in std::terminate: reported
// as an internal error, exit code 1, instead of an abort.
[[noreturn]] void on_terminate() {
  std::cerr << "hcsim: " << one_line(terminate_message("std::terminate called")) << std::endl;
  std::_Exit(1);
}

}  // namespace

int cli_main(int argc, char** argv) {
  std::set_terminate(on_terminate);
  CLI::App app{"hcsim: a simulator of heterogeneous deep-learning clusters"};
  app.set_version_flag("--version", std::string("hcsim ") + kVersion);
  app.require_subcommand(1);
  Commands cmds;
  add_run_commands(app, cmds);
  add_list_command(app, cmds);
  add_diff_command(app, cmds);
  add_sweep_command(app, cmds);
  add_search_command(app, cmds);
  add_check_command(app, cmds);
  add_topo_command(app, cmds);
  add_collective_command(app, cmds);
  add_validate_suite_command(app, cmds);
  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    const int rc = app.exit(e);
    return rc == 0 ? 0 : 2;
  }
  try {
    register_builtins();
    for (const auto& c : cmds)
      if (c.app->parsed()) return c.run();
  } catch (const InputError& e) {
    std::cerr << e.render() << "\n";
    return 2;
  } catch (const std::exception& e) {
    // InternalError (HCSIM_ASSERT) says "internal error (a bug, please report): ..." itself.
    std::cerr << "hcsim: " << one_line(e.what()) << "\n";
    return 1;
  }
  return 0;
}

}  // namespace hcsim
