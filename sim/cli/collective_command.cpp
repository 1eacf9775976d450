// `hcsim collective SCENARIO`: an nccl-tests-like sweep of one collective on the scenario's
// cluster (sim/cli/collective_sweep.hpp), printed as nccl-tests prints it or as JSON.
#include <chrono>
#include <cmath>
#include <iostream>
#include <memory>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "scenarios/scenario.hpp"
#include "sim/cli/collective_sweep.hpp"
#include "sim/cli/command.hpp"
#include "sim/cli/warnings.hpp"

namespace hcsim {
namespace {

struct CollectiveArgs {
  std::string scenario, format = "table";
  CollectiveRequest req;
  std::vector<std::string> sets;
  bool strict = false;
};

nlohmann::json rows_json(const Scenario& sc, const CollectiveRequest& a, const CollectiveSweep& sw, double wall) {
  nlohmann::json out = {{"scenario", sc.name}, {"topology", sc.topology.description},
                        {"op", a.op},          {"algorithm", a.algorithm},
                        {"group", a.group},    {"ranks", sw.ranks},
                        {"mode", a.mode},      {"activities", sw.result.activities},
                        {"wall_seconds", wall}};
  if (a.mode == "flow") out["flow_schedule"] = sw.phases ? "phases" : "steps";
  out["units"] = {{"size", "B"}, {"time", "s"}, {"bandwidth", "B/s"}, {"energy", "J"}};
  out["rows"] = nlohmann::json::array();
  for (const CollectiveRow& w : sw.rows) out["rows"].push_back(collective_row_json(w));
  return out;
}

std::string rows_table(const Scenario& sc, const CollectiveRequest& a, const CollectiveSweep& sw, double wall) {
  std::string out = fmt::format("# hcsim collective: {} on {} ranks (group {}) of {}\n", a.op, sw.ranks, a.group,
                                sc.topology.description);
  out += fmt::format("# algorithm {}, {} mode; busbw factor as nccl-tests; model = collective cost model\n#\n",
                     a.algorithm,
                     a.mode != "flow" ? a.mode
                     : sw.phases      ? "flow (by phases)"
                                      : "flow (by steps)");
  out += fmt::format("# {:>13} {:>12} {:>20} {:>6} {:>3} {:>12} {:>9} {:>9} {:>12} {:>9} {:>11}\n", "size", "count",
                     "algorithm", "proto", "ch", "time", "algbw", "busbw", "model time", "busbw", "net energy");
  out += fmt::format("# {:>13} {:>12} {:>20} {:>6} {:>3} {:>12} {:>9} {:>9} {:>12} {:>9} {:>11}\n", "(B)",
                     "(elements)", "", "", "", "(us)", "(GB/s)", "(GB/s)", "(us)", "(GB/s)", "(J)");
  double sum = 0;
  for (const CollectiveRow& w : sw.rows) {
    out += fmt::format(
        "  {:>13.0f} {:>12.0f} {:>20} {:>6} {:>3} {:>12.2f} {:>9.2f} {:>9.2f} {:>12.2f} {:>9.2f} {:>11.4g}\n", w.size,
        std::floor(w.size / kCollectiveElementBytes), w.algorithm, w.protocol, w.channels, w.time * 1e6, w.algbw / 1e9,
        w.busbw / 1e9, w.model_time * 1e6, w.model_busbw / 1e9, w.energy);
    sum += w.busbw;
  }
  out += fmt::format("# Avg bus bandwidth    : {:.3f} GB/s\n", sw.rows.empty() ? 0.0 : sum / sw.rows.size() / 1e9);
  out += fmt::format("# simulated in {:.3f} s ({} engine activities)\n", wall, sw.result.activities);
  return out;
}

int run_collective(const CollectiveArgs& a) {
  const auto t0 = std::chrono::steady_clock::now();
  const Scenario sc = load_reported(a.scenario, a.sets, a.strict);
  const CollectiveSweep sw = run_collective_sweep(sc, a.req);
  const double wall = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  if (a.format == "json")
    std::cout << rows_json(sc, a.req, sw, wall).dump(2) << "\n";
  else
    std::cout << rows_table(sc, a.req, sw, wall);
  return 0;
}

}  // namespace

void add_collective_command(CLI::App& app, Commands& cmds) {
  auto a = std::make_shared<CollectiveArgs>();
  auto* cmd = app.add_subcommand("collective", "nccl-tests-like sweep of one collective on a scenario's cluster");
  cmd->add_option("scenario", a->scenario, "scenario JSON file")->required();
  cmd->add_option("--op", a->req.op,
                  "all_reduce, reduce_scatter, all_gather, broadcast, reduce, all_to_all, send_recv");
  cmd->add_option("--algorithm", a->req.algorithm, "auto or a collective algorithm (docs/network.md)");
  cmd->add_option("--group", a->req.group, "all, node (the devices of device 0's node) or N (devices 0..N-1)");
  cmd->add_option("--min,--min-bytes,-b", a->req.min, "smallest size, e.g. \"8 B\" or 8 (default 8 B)");
  cmd->add_option("--max,--max-bytes,-e", a->req.max, "largest size, e.g. \"8 GiB\" or 8G (default 8 GiB)");
  cmd->add_option("--step-factor,-f", a->req.step_factor, "each size is the previous one times this (default 2)");
  cmd->add_option("--mode", a->req.mode, "event or flow")->check(CLI::IsMember({"event", "flow"}));
  cmd->add_option("--flow-schedule", a->req.flow_schedule,
                  "flow mode: steps or phases (docs/network.md; default: the scenario's simulation.flow_schedule)")
      ->check(CLI::IsMember({"steps", "phases"}));
  cmd->add_option("--format", a->format, "table or json")->check(CLI::IsMember({"table", "json"}));
  cmd->add_option("--set", a->sets, "override a scenario field: /json/pointer=value (repeatable)");
  add_strict_flag(*cmd, a->strict);
  cmds.push_back({cmd, [a] { return run_collective(*a); }});
}

}  // namespace hcsim
