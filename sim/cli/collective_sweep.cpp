#include "sim/cli/collective_sweep.hpp"

#include <cmath>

#include <fmt/format.h>

namespace hcsim {
namespace {

std::vector<std::uint32_t> group_devices(const TopologyGraph& g, const std::string& spec, const std::string& where) {
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
    } catch (const std::exception&) { used = 0; }
    if (used != spec.size() || k < 2 || k > n)
      throw InputError(where, fmt::format("expected all, node or a device count from 2 to {}, got \"{}\"", n, spec));
    for (int d = 0; d < k; ++d) out.push_back(static_cast<std::uint32_t>(d));
  }
  if (out.size() < 2) throw InputError(where, "the group has fewer than two devices");
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
                     double size, const std::string& name, const std::string& where) {
  if (!find_collective_algorithm(name))
    throw InputError(where,
                     "unknown collective algorithm \"" + name + "\"; " + valid_list(collective_algorithm_choices()));
  try {
    (void)model.estimate({group.begin(), group.end()}, op, Bytes(size), name);
  } catch (const InputError& e) { throw InputError(where, e.issues().empty() ? e.what() : e.issues()[0].message); }
}

}  // namespace

double parse_collective_size(const std::string& text, const std::string& where) {
  std::string t = text;
  if (!t.empty() && (t.back() == 'K' || t.back() == 'M' || t.back() == 'G') &&
      t.find_first_not_of("0123456789.") == t.size() - 1)
    t = t.substr(0, t.size() - 1) + " " + t.back() + "iB";
  const QuantityParse q = parse_quantity(std::string_view(t), Dim::data);
  if (!q.value || *q.value < 1)
    throw InputError(
        where, fmt::format("expected a size of at least one byte such as \"8 B\" or \"1 GiB\", got \"{}\"", text));
  return *q.value;
}

CollectiveSweep run_collective_sweep(const Scenario& sc, const CollectiveRequest& req) {
  CollectiveOp op{};
  if (!parse_collective_op(req.op, op))
    throw InputError(req.where("op"), "unknown collective \"" + req.op +
                                          "\"; valid ones are: all_reduce, reduce_scatter, all_gather, broadcast, "
                                          "reduce, all_to_all, send_recv");
  const double lo = parse_collective_size(req.min, req.where("min")),
               hi = parse_collective_size(req.max, req.where("max"));
  if (hi < lo) throw InputError(req.where("max"), "--max is smaller than --min");
  const std::vector<std::uint32_t> group = group_devices(sc.topology, req.group, req.where("group"));
  if (op == CollectiveOp::send_recv && group.size() != 2)
    throw InputError(req.where("op"), fmt::format("send_recv is between two devices and --group \"{}\" has {}; use "
                                                  "--group 2 (devices 0 and 1)",
                                                  req.group, group.size()));
  if (!(req.step_factor > 1))
    throw InputError(req.where("step-factor"), fmt::format("expected a factor above 1, got {}", req.step_factor));
  CollectiveSweep out;
  out.ranks = group.size();
  // Flow mode by steps or by phases: the request, else the scenario's simulation.flow_schedule.
  const std::string schedule = req.flow_schedule.empty() ? sc.simulation.flow_schedule : req.flow_schedule;
  out.phases = req.mode == "flow" && schedule == "phases";
  auto planner =
      std::make_shared<CollectivePlanner>(sc.topology, req.algorithm, req.mode == "flow", CostOptions{}, out.phases);
  TaskGraph g;
  g.devices = static_cast<std::uint32_t>(sc.device_count());
  const std::uint32_t gid = g.add_group(group);
  for (double s = lo; s <= hi * (1 + 1e-12); s = std::round(s * req.step_factor)) {
    CollectiveRow w;
    w.size = s;
    if (req.algorithm != "auto") check_algorithm(planner->model(), group, op, s, req.algorithm, req.where("algorithm"));
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
    if (g.size() == 0)
      g.add(t, {});
    else
      g.add(t, {static_cast<TaskId>(g.size() - 1)});
    out.rows.push_back(w);
  }
  EngineOptions opt;
  opt.mode = req.mode;
  opt.flow_phases = out.phases;
  opt.algorithm = req.algorithm;
  opt.planner = planner;
  out.result = simulate(sc.topology, g, opt);
  const double factor = busbw_factor(op, static_cast<int>(group.size()));
  for (std::size_t i = 0; i < out.rows.size(); ++i) {
    CollectiveRow& w = out.rows[i];
    w.time = out.result.end[i] - out.result.start[i];
    w.algbw = w.time > 0 ? w.size / w.time : 0;
    w.busbw = w.algbw * factor;
  }
  return out;
}

nlohmann::json collective_row_json(const CollectiveRow& w) {
  return {{"size", w.size},
          {"count", std::floor(w.size / kCollectiveElementBytes)},
          {"algorithm", w.algorithm},
          {"protocol", w.protocol},
          {"channels", w.channels},
          {"chunks", w.chunks},
          {"time", w.time},
          {"algbw", w.algbw},
          {"busbw", w.busbw},
          {"model_time", w.model_time},
          {"model_busbw", w.model_busbw},
          {"network_energy", w.energy}};
}

}  // namespace hcsim
