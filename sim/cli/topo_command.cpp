// `hcsim topo SCENARIO [--set /ptr=value] [--format table|json]`: the scenario's network as a
// graph (topologies/analysis.hpp): device, switch and link counts (links by class), diameter,
// bisection bandwidth and the hop histogram over ordered device pairs.
#include <iostream>
#include <map>
#include <memory>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "scenarios/scenario.hpp"
#include "sim/cli/command.hpp"
#include "sim/cli/warnings.hpp"
#include "topologies/analysis.hpp"

namespace hcsim {
namespace {

struct TopoArgs {
  std::string scenario, format = "table";
  std::vector<std::string> sets;
  bool strict = false;
};

struct LinkClass {
  int links = 0, lanes = 0;
  double min_bw = 0, max_bw = 0;  // per lane, per direction, raw
  double energy_per_byte = 0;     // of the last link seen (a class is usually one technology)
};

std::map<std::string, LinkClass> link_classes(const TopologyGraph& g) {
  std::map<std::string, LinkClass> out;
  for (const TopoEdge& e : g.edges()) {
    LinkClass& c = out[e.link_class()];
    const double bw = e.link().bandwidth.value();
    c.min_bw = c.links == 0 ? bw : std::min(c.min_bw, bw);
    c.max_bw = std::max(c.max_bw, bw);
    c.links += 1;
    c.lanes += e.lanes();
    c.energy_per_byte = e.link().energy_per_byte.value();
  }
  return out;
}

nlohmann::json topo_json(const Scenario& sc, const TopologyAnalysis& a) {
  nlohmann::json classes = nlohmann::json::array();
  for (const auto& [name, c] : link_classes(sc.topology))
    classes.push_back({{"class", name}, {"links", c.links}, {"lanes", c.lanes},
                       {"lane_bandwidth_min", c.min_bw}, {"lane_bandwidth_max", c.max_bw},
                       {"energy_per_byte", c.energy_per_byte}});
  nlohmann::json hist = nlohmann::json::array();
  for (std::size_t h = 1; h < a.hop_histogram.size(); ++h)
    if (a.hop_histogram[h] > 0) hist.push_back({{"hops", h}, {"pairs", a.hop_histogram[h]}});
  return {{"scenario", sc.name},
          {"topology", sc.topology_type},
          {"description", sc.topology.description},
          {"devices", a.devices},
          {"switches", a.switches},
          {"memories", a.memories},
          {"links", a.links},
          {"lanes", a.lanes},
          {"link_classes", classes},
          {"diameter", a.diameter},
          {"mean_hops", a.mean_hops},
          {"hop_histogram", hist},
          {"pairs_counted", a.pairs_counted},
          {"unreachable_pairs", a.unreachable_pairs},
          {"sampled", a.sampled},
          {"bisection_bandwidth", a.bisection_bandwidth.value()},
          {"bisection_cuts_tried", a.bisection_cuts_tried},
          {"bisection_method", a.bisection_method},
          {"units", {{"bandwidth", "B/s per direction"}, {"energy_per_byte", "J/B"}}}};
}

std::string topo_table(const Scenario& sc, const TopologyAnalysis& a) {
  std::string out = fmt::format("{}: {}\n", sc.name, sc.topology.description);
  out += fmt::format("devices {}   switches {}   memory pools {}\n", a.devices, a.switches, a.memories);
  out += fmt::format("links   {} full-duplex ({} lanes)\n", a.links, a.lanes);
  out += fmt::format("  {:<14} {:>7} {:>7}  {:>22}  {:>12}\n", "class", "links", "lanes", "bandwidth/lane/dir",
                     "energy");
  for (const auto& [name, c] : link_classes(sc.topology)) {
    std::string bw = format_quantity(c.min_bw, Dim::bandwidth);
    if (c.max_bw != c.min_bw) bw += " .. " + format_quantity(c.max_bw, Dim::bandwidth);
    out += fmt::format("  {:<14} {:>7} {:>7}  {:>22}  {:>9.3g} pJ/bit\n", name, c.links, c.lanes, bw,
                       c.energy_per_byte * 1e12 / 8);
  }
  out += fmt::format("diameter {} hops   mean {:.3f} hops over {} ordered device pairs{}\n", a.diameter, a.mean_hops,
                     a.pairs_counted, a.sampled ? " (sampled sources: diameter is a lower bound)" : "");
  if (a.unreachable_pairs > 0) out += fmt::format("unreachable pairs {}\n", a.unreachable_pairs);
  out += fmt::format("bisection bandwidth {} per direction ({} cuts tried: {})\n",
                     format_quantity(a.bisection_bandwidth.value(), Dim::bandwidth), a.bisection_cuts_tried,
                     a.bisection_method);
  out += "hop histogram\n";
  for (std::size_t h = 1; h < a.hop_histogram.size(); ++h) {
    if (a.hop_histogram[h] == 0) continue;
    const double share = a.pairs_counted > 0 ? static_cast<double>(a.hop_histogram[h]) / a.pairs_counted : 0;
    out += fmt::format("  {:>3} hops {:>12} pairs {:>6.2f} %\n", h, a.hop_histogram[h], 100 * share);
  }
  return out;
}

int run_topo(const TopoArgs& a) {
  const Scenario sc = load_reported(a.scenario, a.sets, a.strict);
  const TopologyAnalysis an = analyse_topology(sc.topology);
  if (a.format == "json") std::cout << topo_json(sc, an).dump(2) << "\n";
  else std::cout << topo_table(sc, an);
  return 0;
}

}  // namespace

void add_topo_command(CLI::App& app, Commands& cmds) {
  auto a = std::make_shared<TopoArgs>();
  auto* cmd = app.add_subcommand("topo", "analyse a scenario's network: links, diameter, bisection, hop histogram");
  cmd->add_option("scenario", a->scenario, "scenario JSON file")->required();
  cmd->add_option("--set", a->sets, "override a field: /json/pointer=value (repeatable)");
  cmd->add_option("--format", a->format, "table or json")->check(CLI::IsMember({"table", "json"}));
  add_strict_flag(*cmd, a->strict);
  cmds.push_back({cmd, [a] { return run_topo(*a); }});
}

}  // namespace hcsim
