#include "cli.hpp"

#include <iostream>

#include "hcsim/version.hpp"
#include "scenarios/scenario.hpp"
#include "sim/cli/command.hpp"

namespace hcsim {

int cli_main(int argc, char** argv) {
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
    std::cerr << "hcsim: " << e.what() << "\n";
    return 1;
  }
  return 0;
}

}  // namespace hcsim
