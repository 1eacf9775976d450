#include "cli.hpp"

#include <sys/stat.h>

#include <cstdio>
#include <iostream>

#include <CLI/CLI.hpp>
#include <fmt/format.h>

#include "hcsim/version.hpp"
#include "output.hpp"
#include "scenarios/scenario.hpp"
#include "sim/cli/list.hpp"
#include "sim/report/report.hpp"

namespace hcsim {
namespace {

struct RunArgs {
  std::string scenario;
  std::string out_dir;
  std::string format;
  std::string trace;
  std::vector<std::string> sets;
};

void ensure_dir(const std::string& dir) {
  if (::mkdir(dir.c_str(), 0755) != 0 && errno != EEXIST)
    throw InputError("", "cannot create output directory " + dir);
}

int cmd_run(const RunArgs& a) {
  Scenario sc = load_scenario(a.scenario, a.sets);
  const std::string format = a.format.empty() ? sc.outputs.format : a.format;
  RunOutput run;
  try {
    run = run_scenario(sc);
  } catch (const InputError& e) {
    throw e.with_file(a.scenario);
  }
  nlohmann::json rep = report_json(sc, run);
  if (!a.out_dir.empty()) {
    ensure_dir(a.out_dir);
    write_file_atomic(a.out_dir + "/resolved_scenario.json", sc.resolved.dump(2) + "\n");
    write_file_atomic(a.out_dir + "/report.json", rep.dump(2) + "\n");
  }
  if (format == "json") std::cout << rep.dump(2) << "\n";
  else std::cout << report_table(sc, run);
  return 0;
}

int cmd_validate(const RunArgs& a) {
  Scenario sc = load_scenario(a.scenario, a.sets);
  std::cout << fmt::format("{}: valid ({} devices, dp {} · tp {} · pp {}, {} layers)\n", a.scenario,
                           sc.device_count(), sc.strategy.dp, sc.strategy.tp, sc.strategy.pp, sc.model.layers);
  return 0;
}

}  // namespace

int cli_main(int argc, char** argv) {
  CLI::App app{"hcsim: a simulator of heterogeneous deep-learning clusters"};
  app.set_version_flag("--version", std::string("hcsim ") + kVersion);
  app.require_subcommand(1);
  RunArgs ra;
  auto* run = app.add_subcommand("run", "simulate one scenario and print its report");
  run->add_option("scenario", ra.scenario, "scenario JSON file")->required();
  run->add_option("--out", ra.out_dir, "write report.json and resolved_scenario.json to DIR");
  run->add_option("--format", ra.format, "table or json")->check(CLI::IsMember({"table", "json"}));
  run->add_option("--set", ra.sets, "override a field: /json/pointer=value (repeatable)");
  auto* val = app.add_subcommand("validate", "check a scenario and report every problem");
  val->add_option("scenario", ra.scenario, "scenario JSON file")->required();
  val->add_option("--set", ra.sets, "override a field: /json/pointer=value (repeatable)");
  std::string what = "all";
  auto* list = app.add_subcommand("list", "print the registries: types, parameters, presets and sources");
  list->add_option("what", what, "devices, links, topologies, models, schedules or all");

  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    int rc = app.exit(e);
    return rc == 0 ? 0 : 2;
  }
  try {
    register_builtins();
    if (*run) return cmd_run(ra);
    if (*val) return cmd_validate(ra);
    if (*list) {
      std::cout << list_registries(what);
      return 0;
    }
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
