#include "cli.hpp"

#include <algorithm>
#include <cstdlib>
#include <exception>
#include <iostream>
#include <map>
#include <memory>
#include <optional>
#include <string>

#include "completion.hpp"
#include "interrupt.hpp"
#include "list.hpp"
#include "hcsim/version.hpp"
#include "scenarios/scenario.hpp"
#include "sim/cli/command.hpp"
#include "sim/core/nearest.hpp"
#include "sim/core/params.hpp"
#include "sim/engine/engine.hpp"

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

std::string compiler() {
#if defined(__clang__)
  return std::string("clang ") + __clang_version__;
#elif defined(__GNUC__)
  return std::string("g++ ") + __VERSION__;
#else
  return "unknown";
#endif
}

std::string version_text() {
  return std::string("hcsim ") + kVersion + "\ncommit   " + kGitCommit + "\nSimGrid  " + simgrid_version() +
         "\ncompiler " + compiler();
}

}  // namespace

const std::map<std::string, std::string>& command_examples() {
  static const std::map<std::string, std::string> e{
      {"run",
       "hcsim run scenarios/quickstart.json --format json --out out/\n"
       "  hcsim run scenarios/quickstart.json --set /strategy/tp=8 --set /strategy/dp=1"},
      {"validate", "hcsim validate my.json --strict"},
      {"schema", "hcsim schema > scenario.schema.json"},
      {"list", "hcsim list devices\n  hcsim list codecs"},
      {"diff", "hcsim diff before/report.json after/report.json"},
      {"sweep", "hcsim sweep scenarios/sweeps/quickstart-layouts.json -j 2 --out sweep-out"},
      {"search", "hcsim search scenarios/sweeps/quickstart-search.json -j 2 --out search-out"},
      {"check", "hcsim check tests/expectations/hcsim-guards.json --junit check.xml"},
      {"topo", "hcsim topo scenarios/gpt3-175b-a100-1024.json"},
      {"collective", "hcsim collective scenarios/quickstart.json --op all_reduce --group node"},
      {"validate-suite", "hcsim validate-suite scenarios/validation"},
      {"completion", "source <(hcsim completion bash)"},
      {"cluster",
       "hcsim cluster run scenarios/cluster/small.json scenarios/cluster/small-jobs.json --out cluster-out\n"
       "  hcsim cluster jobs scenarios/cluster/sample-trace scenarios/cluster/trace-mapping.json --draw 1000"},
  };
  return e;
}

namespace {

std::vector<std::string> command_names(const CLI::App& app) {
  std::vector<std::string> out;
  for (const CLI::App* c : app.get_subcommands({})) out.push_back(c->get_name());
  std::sort(out.begin(), out.end());
  return out;
}

// `hcsim runn x.json`: CLI11 would only say that a subcommand is required.
std::optional<std::string> unknown_command(const CLI::App& app, int argc, char** argv) {
  if (argc < 2 || argv[1][0] == '-') return std::nullopt;
  const std::string word = argv[1];
  const std::vector<std::string> names = command_names(app);
  if (std::find(names.begin(), names.end(), word) != names.end()) return std::nullopt;
  std::string msg = "hcsim: unknown command \"" + word + "\"; ";
  if (auto n = nearest_name(word, names, std::max<std::size_t>(1, word.size() / 3)))
    return msg + "did you mean \"" + *n + "\"?";
  return msg + valid_list(names);
}

void add_completion_command(CLI::App& app, Commands& cmds) {
  auto shell = std::make_shared<std::string>();
  auto* cmd = app.add_subcommand("completion", "print a shell completion script (bash)");
  cmd->add_option("shell", *shell, "the shell")->required()->check(CLI::IsMember({"bash"}));
  cmds.push_back({cmd, [&app, shell] {
                    std::cout << bash_completion(app, {{"list", list_families()}, {"completion", {"bash"}}});
                    return 0;
                  }});
}

}  // namespace

int cli_main(int argc, char** argv) {
  std::set_terminate(on_terminate);
  install_interrupt_handlers(argc > 0 ? argv[0] : nullptr);
  CLI::App app{"hcsim: a simulator of heterogeneous deep-learning clusters"};
  app.option_defaults()->always_capture_default();
  app.set_version_flag("--version", version_text());
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
  add_cluster_command(app, cmds);
  add_completion_command(app, cmds);
  for (CLI::App* c : app.get_subcommands({})) {
    if (auto e = command_examples().find(c->get_name()); e != command_examples().end()) c->footer("\nExamples:\n  " + e->second);
    for (CLI::Option* o : c->get_options())
      if (o->get_default_str() == "[]") o->default_str("");  // a repeatable option given no value: no default to show
  }
  if (auto msg = unknown_command(app, argc, argv)) {
    std::cerr << *msg << "\n";
    return 2;
  }
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
