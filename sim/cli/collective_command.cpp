// `hcsim collective SCENARIO`: an nccl-tests-like sweep of one collective on the scenario's
// cluster. Sizes double from --min to --max; each size is one collective task of a task
// graph in which each waits for the previous one, replayed once by the engine. Per size it
// prints the simulated time, nccl-tests' algbw = S / t and busbw = algbw x factor
// (all-reduce 2(n-1)/n; reduce-scatter, all-gather, all-to-all (n-1)/n; broadcast, reduce,
// send/recv 1; nccl-tests doc/PERFORMANCE.md, formulas.md §6), the collective cost model's
// estimate beside it, and the dynamic network energy of the bytes the collective moves.
#include <chrono>
#include <cmath>
#include <iostream>
#include <memory>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "scenarios/scenario.hpp"
#include "sim/cli/command.hpp"
#include "sim/cli/warnings.hpp"
#include "sim/engine/engine.hpp"

namespace hcsim {
namespace {

struct CollectiveArgs {
  std::string scenario, op = "all_reduce", algorithm = "auto", group = "all", min = "8 B", max = "8 GiB",
                        mode = "event", flow_schedule, format = "table";
  double step_factor = 2;
  std::vector<std::string> sets;
  bool strict = false;
};

struct Row {
  double size = 0, time = 0, algbw = 0, busbw = 0, model_time = 0, model_busbw = 0, energy = 0;
  std::string algorithm, protocol;
  int chunks = 1, channels = 1;
};

// nccl-tests counts elements of the benchmarked type; hcsim's buffers are float32.
constexpr double kElementBytes = 4;

// Sizes as hcsim quantities ("8 B", "1 GiB") or as nccl-tests writes them: a byte count
// with an optional binary suffix K, M or G ("8", "128M", "8G").
double parse_size(const std::string& text, const char* option) {
  std::string t = text;
  if (!t.empty() && (t.back() == 'K' || t.back() == 'M' || t.back() == 'G') &&
      t.find_first_not_of("0123456789.") == t.size() - 1)
    t = t.substr(0, t.size() - 1) + " " + t.back() + "iB";
  const QuantityParse q = parse_quantity(std::string_view(t), Dim::data);
  if (!q.value || *q.value < 1)
    throw InputError(option, fmt::format("expected a size of at least one byte such as \"8 B\" or \"1 GiB\", got \"{}\"",
                                         text));
  return *q.value;
}

std::vector<std::uint32_t> group_devices(const TopologyGraph& g, const std::string& spec) {
  std::vector<std::uint32_t> out;
  const int n = g.device_count();
  if (spec == "all" || spec == "node") {
    for (int d = 0; d < n; ++d)
      if (spec == "all" || g.node_of(d) == g.node_of(0)) out.push_back(static_cast<std::uint32_t>(d));
  } else {
    std::size_t used = 0;
    int k = 0;
    try {
      k = std::stoi(spec, &used);
    } catch (const std::exception&) {
      used = 0;
    }
    if (used != spec.size() || k < 2 || k > n)
      throw InputError("--group", fmt::format("expected all, node or a device count from 2 to {}, got \"{}\"", n, spec));
    for (int d = 0; d < k; ++d) out.push_back(static_cast<std::uint32_t>(d));
  }
  if (out.size() < 2) throw InputError("--group", "the group has fewer than two devices");
  return out;
}

// Dynamic energy of the bytes a plan puts on the links (bytes x energy per byte).
double network_energy(const TopologyGraph& g, const CollectivePlanner& planner, const CollectiveExpansion& p) {
  std::vector<double> bytes(g.edges().size(), 0.0);
  planner.add_edge_bytes(p, bytes);
  double j = 0;
  for (std::size_t e = 0; e < bytes.size(); ++e) j += (Bytes(bytes[e]) * g.edges()[e].link().energy_per_byte).value();
  return j;
}

// The engine runs a named algorithm where it applies and "auto" elsewhere; a benchmark of
// one algorithm refuses instead, with the cost model's reason.
void check_algorithm(const CollectiveCostModel& model, const std::vector<std::uint32_t>& group, CollectiveOp op,
                     double size, const std::string& name) {
  if (!find_collective_algorithm(name))
    throw InputError("--algorithm", "unknown collective algorithm \"" + name + "\"; " +
                                        valid_list(collective_algorithm_choices()));
  try {
    (void)model.estimate({group.begin(), group.end()}, op, Bytes(size), name);
  } catch (const InputError& e) {
    throw InputError("--algorithm", e.issues().empty() ? e.what() : e.issues()[0].message);
  }
}

// `phases`: flow mode by phases (--flow-schedule or the scenario's simulation.flow_schedule).
nlohmann::json rows_json(const Scenario& sc, const CollectiveArgs& a, bool phases, std::size_t n,
                         const std::vector<Row>& rows, const EngineResult& r, double wall) {
  nlohmann::json out = {{"scenario", sc.name}, {"topology", sc.topology.description}, {"op", a.op},
                        {"algorithm", a.algorithm}, {"group", a.group}, {"ranks", n}, {"mode", a.mode},
                        {"activities", r.activities}, {"wall_seconds", wall}};
  if (a.mode == "flow") out["flow_schedule"] = phases ? "phases" : "steps";
  out["units"] = {{"size", "B"}, {"time", "s"}, {"bandwidth", "B/s"}, {"energy", "J"}};
  out["rows"] = nlohmann::json::array();
  for (const Row& w : rows)
    out["rows"].push_back({{"size", w.size}, {"count", std::floor(w.size / kElementBytes)}, {"algorithm", w.algorithm},
                           {"protocol", w.protocol}, {"channels", w.channels}, {"chunks", w.chunks}, {"time", w.time},
                           {"algbw", w.algbw}, {"busbw", w.busbw}, {"model_time", w.model_time},
                           {"model_busbw", w.model_busbw}, {"network_energy", w.energy}});
  return out;
}

std::string rows_table(const Scenario& sc, const CollectiveArgs& a, bool phases, std::size_t n,
                       const std::vector<Row>& rows, const EngineResult& r, double wall) {
  std::string out = fmt::format("# hcsim collective: {} on {} ranks (group {}) of {}\n", a.op, n, a.group,
                                sc.topology.description);
  out += fmt::format("# algorithm {}, {} mode; busbw factor as nccl-tests; model = collective cost model\n#\n",
                     a.algorithm, a.mode != "flow" ? a.mode : phases ? "flow (by phases)" : "flow (by steps)");
  out += fmt::format("# {:>13} {:>12} {:>20} {:>6} {:>3} {:>12} {:>9} {:>9} {:>12} {:>9} {:>11}\n", "size", "count",
                     "algorithm", "proto", "ch", "time", "algbw", "busbw", "model time", "busbw", "net energy");
  out += fmt::format("# {:>13} {:>12} {:>20} {:>6} {:>3} {:>12} {:>9} {:>9} {:>12} {:>9} {:>11}\n", "(B)",
                     "(elements)", "", "", "", "(us)", "(GB/s)", "(GB/s)", "(us)", "(GB/s)", "(J)");
  double sum = 0;
  for (const Row& w : rows) {
    out += fmt::format("  {:>13.0f} {:>12.0f} {:>20} {:>6} {:>3} {:>12.2f} {:>9.2f} {:>9.2f} {:>12.2f} {:>9.2f} {:>11.4g}\n",
                       w.size, std::floor(w.size / kElementBytes), w.algorithm, w.protocol, w.channels, w.time * 1e6,
                       w.algbw / 1e9, w.busbw / 1e9, w.model_time * 1e6, w.model_busbw / 1e9, w.energy);
    sum += w.busbw;
  }
  out += fmt::format("# Avg bus bandwidth    : {:.3f} GB/s\n", rows.empty() ? 0.0 : sum / rows.size() / 1e9);
  out += fmt::format("# simulated in {:.3f} s ({} engine activities)\n", wall, r.activities);
  return out;
}

int run_collective(const CollectiveArgs& a) {
  const auto t0 = std::chrono::steady_clock::now();
  const Scenario sc = load_reported(a.scenario, a.sets, a.strict);
  CollectiveOp op{};
  if (!parse_collective_op(a.op, op))
    throw InputError("--op", "unknown collective \"" + a.op + "\"; valid ones are: all_reduce, reduce_scatter, "
                             "all_gather, broadcast, reduce, all_to_all, send_recv");
  const double lo = parse_size(a.min, "--min"), hi = parse_size(a.max, "--max");
  if (hi < lo) throw InputError("--max", "--max is smaller than --min");
  const std::vector<std::uint32_t> group = group_devices(sc.topology, a.group);
  if (op == CollectiveOp::send_recv && group.size() != 2)
    throw InputError("--op", fmt::format("send_recv is between two devices and --group \"{}\" has {}; use --group 2 "
                                         "(devices 0 and 1)",
                                         a.group, group.size()));
  // Flow mode by steps or by phases: --flow-schedule, else the scenario's simulation.flow_schedule.
  const std::string schedule = a.flow_schedule.empty() ? sc.simulation.flow_schedule : a.flow_schedule;
  const bool phases = a.mode == "flow" && schedule == "phases";
  auto planner = std::make_shared<CollectivePlanner>(sc.topology, a.algorithm, a.mode == "flow", CostOptions{}, phases);
  TaskGraph g;
  g.devices = static_cast<std::uint32_t>(sc.device_count());
  const std::uint32_t gid = g.add_group(group);
  std::vector<Row> rows;
  if (!(a.step_factor > 1)) throw InputError("--step-factor", fmt::format("expected a factor above 1, got {}", a.step_factor));
  for (double s = lo; s <= hi * (1 + 1e-12); s = std::round(s * a.step_factor)) {
    Row w;
    w.size = s;
    if (a.algorithm != "auto") check_algorithm(planner->model(), group, op, s, a.algorithm);
    const CollectiveExpansion& p = planner->plan(group, op, s);
    w.algorithm = p.algorithm;
    w.chunks = p.estimate.chunks;
    w.protocol = p.estimate.protocol;
    w.channels = p.estimate.channels;
    w.model_time = p.estimate.time.value();
    w.model_busbw = p.estimate.busbw.value();
    w.energy = network_energy(sc.topology, *planner, p);
    Task t;
    t.kind = TaskKind::collective;
    t.op = op;
    t.group = gid;
    t.bytes = Bytes(s);
    if (g.size() == 0) g.add(t, {});
    else g.add(t, {static_cast<TaskId>(g.size() - 1)});
    rows.push_back(w);
  }
  EngineOptions opt;
  opt.mode = a.mode;
  opt.flow_phases = phases;
  opt.algorithm = a.algorithm;
  opt.planner = planner;
  const EngineResult r = simulate(sc.topology, g, opt);
  const double factor = busbw_factor(op, static_cast<int>(group.size()));
  for (std::size_t i = 0; i < rows.size(); ++i) {
    rows[i].time = r.end[i] - r.start[i];
    rows[i].algbw = rows[i].time > 0 ? rows[i].size / rows[i].time : 0;
    rows[i].busbw = rows[i].algbw * factor;
  }
  const double wall = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  if (a.format == "json")
    std::cout << rows_json(sc, a, phases, group.size(), rows, r, wall).dump(2) << "\n";
  else
    std::cout << rows_table(sc, a, phases, group.size(), rows, r, wall);
  return 0;
}

}  // namespace

void add_collective_command(CLI::App& app, Commands& cmds) {
  auto a = std::make_shared<CollectiveArgs>();
  auto* cmd = app.add_subcommand("collective", "nccl-tests-like sweep of one collective on a scenario's cluster");
  cmd->add_option("scenario", a->scenario, "scenario JSON file")->required();
  cmd->add_option("--op", a->op, "all_reduce, reduce_scatter, all_gather, broadcast, reduce, all_to_all, send_recv");
  cmd->add_option("--algorithm", a->algorithm, "auto or a collective algorithm (docs/network.md)");
  cmd->add_option("--group", a->group, "all, node (the devices of device 0's node) or N (devices 0..N-1)");
  cmd->add_option("--min,--min-bytes,-b", a->min, "smallest size, e.g. \"8 B\" or 8 (default 8 B)");
  cmd->add_option("--max,--max-bytes,-e", a->max, "largest size, e.g. \"8 GiB\" or 8G (default 8 GiB)");
  cmd->add_option("--step-factor,-f", a->step_factor, "each size is the previous one times this (default 2)");
  cmd->add_option("--mode", a->mode, "event or flow")->check(CLI::IsMember({"event", "flow"}));
  cmd->add_option("--flow-schedule", a->flow_schedule,
                  "flow mode: steps or phases (docs/network.md; default: the scenario's simulation.flow_schedule)")
      ->check(CLI::IsMember({"steps", "phases"}));
  cmd->add_option("--format", a->format, "table or json")->check(CLI::IsMember({"table", "json"}));
  cmd->add_option("--set", a->sets, "override a scenario field: /json/pointer=value (repeatable)");
  add_strict_flag(*cmd, a->strict);
  cmds.push_back({cmd, [a] { return run_collective(*a); }});
}

}  // namespace hcsim
