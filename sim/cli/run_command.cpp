// `hcsim run`, `hcsim validate`, `hcsim schema`.

#include <iostream>
#include <memory>

#include <fmt/format.h>

#include "output.hpp"
#include "run_progress.hpp"
#include "warnings.hpp"
#include "scenarios/scenario.hpp"
#include "scenarios/sections.hpp"
#include "sim/cli/command.hpp"
#include "sim/driver/run.hpp"
#include "sim/report/report.hpp"

namespace hcsim {
namespace {

struct RunArgs {
  std::string scenario;
  std::string out_dir;
  std::string format;
  std::vector<std::string> sets;
  long long max_tasks = 0;
  std::string trace;  // Chrome/Perfetto trace file (default: the scenario's outputs.trace)
  std::string csv;    // per-rank CSV file
  std::string html;   // self-contained HTML report
  bool strict = false;
  bool progress = false;  // the progress line also off a terminal, from the start
};

int run(const RunArgs& a) {
  RunProgress progress(a.progress);
  std::vector<std::string> sets = a.sets;
  if (a.max_tasks > 0) sets.push_back("/simulation/max_tasks=" + std::to_string(a.max_tasks));
  Scenario sc = load_reported(a.scenario, sets, a.strict);
  const std::string format = a.format.empty() ? sc.outputs.format : a.format;
  RunOutput out;
  try {
    out = run_scenario(sc);
  } catch (const InputError& e) {
    throw e.with_file(a.scenario);
  }
  // The JSON report only where it is written (per device, it is most of a 16k-GPU run's
  // report time), and its per-device list streamed into the file or standard output, never
  // held whole (write_report_json).
  const bool json_out = format == "json";
  nlohmann::json rep;
  if (!a.out_dir.empty() || json_out || !a.html.empty()) rep = report_json(sc, out, false);
  if (!a.out_dir.empty()) {
    ensure_dir(a.out_dir);
    write_file_atomic(a.out_dir + "/resolved_scenario.json", sc.resolved.dump(2) + "\n");
    write_stream_atomic(a.out_dir + "/report.json", [&](std::ostream& os) {
      write_report_json(os, sc, out, rep);
      os << "\n";
    });
  }
  if (!a.out_dir.empty() || !a.html.empty()) {
    const std::string page = report_html(sc, out, rep);
    if (!a.out_dir.empty()) write_file_atomic(a.out_dir + "/report.html", page);
    if (!a.html.empty()) write_file_atomic(a.html, page);
  }
  const std::string trace = a.trace.empty() ? sc.outputs.trace : a.trace;
  if (!trace.empty()) write_file_atomic(trace, chrome_trace(sc, out));
  if (!a.csv.empty()) write_file_atomic(a.csv, report_csv(sc, out));
  progress.stop();  // before the report: on a terminal its line is erased
  if (json_out) {
    write_report_json(std::cout, sc, out, rep);
    std::cout << "\n";
  } else {
    std::cout << report_table(sc, out);
  }
  return 0;
}

// The checks of a run that need no simulation: the scenario's rules and the memory check.
int validate(const RunArgs& a) {
  Scenario sc = load_reported(a.scenario, a.sets, a.strict);
  try {
    check_scenario_memory(sc);
  } catch (const InputError& e) {
    throw e.with_file(a.scenario);
  }
  std::cout << fmt::format("{}: valid ({} devices, dp {} · tp {} · pp {}, {} layers)\n", a.scenario,
                           sc.device_count(), sc.strategy.dp, sc.strategy.tp, sc.strategy.pp, sc.model.layers);
  return 0;
}

}  // namespace

void add_run_commands(CLI::App& app, Commands& cmds) {
  auto ra = std::make_shared<RunArgs>();
  auto* run_cmd = app.add_subcommand("run", "simulate one scenario and print its report");
  run_cmd->add_option("scenario", ra->scenario, "scenario JSON file")->required();
  run_cmd->add_option("--out", ra->out_dir, "write report.json, report.html and resolved_scenario.json to DIR");
  run_cmd->add_option("--format", ra->format, "table or json")->check(CLI::IsMember({"table", "json"}));
  run_cmd->add_option("--set", ra->sets, "override a field: /json/pointer=value (repeatable)");
  run_cmd->add_option("--trace", ra->trace, "write a Chrome/Perfetto trace (ui.perfetto.dev) to FILE");
  run_cmd->add_option("--csv", ra->csv, "write one CSV row per rank to FILE");
  run_cmd->add_option("--html", ra->html, "write a self-contained HTML report (tables, SVG plots) to FILE");
  run_cmd->add_option("--max-tasks", ra->max_tasks, "refuse scenarios whose estimated task count is larger")
      ->check(CLI::PositiveNumber);
  add_strict_flag(*run_cmd, ra->strict);
  run_cmd->add_flag("--progress", ra->progress,
                    "a progress line on standard error from the start, also when it is not a terminal "
                    "(on a terminal it appears by itself after 2 s)");
  cmds.push_back({run_cmd, [ra] { return run(*ra); }});

  auto va = std::make_shared<RunArgs>();
  auto* val = app.add_subcommand("validate", "check a scenario and report every problem");
  val->add_option("scenario", va->scenario, "scenario JSON file")->required();
  val->add_option("--set", va->sets, "override a field: /json/pointer=value (repeatable)");
  add_strict_flag(*val, va->strict);
  cmds.push_back({val, [va] { return validate(*va); }});

  auto* schema = app.add_subcommand("schema", "print the scenario JSON Schema");
  cmds.push_back({schema, [] {
                    std::cout << sections::scenario_schema().dump(2) << "\n";
                    return 0;
                  }});
}

}  // namespace hcsim
