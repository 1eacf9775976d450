#include "list.hpp"

#include <functional>
#include <iostream>
#include <memory>

#include <fmt/format.h>

#include "models/compression/codec.hpp"
#include "models/link/link.hpp"
#include "scenarios/scenario.hpp"
#include "scenarios/sections.hpp"
#include "sim/cli/command.hpp"
#include "sim/cluster/cluster_file.hpp"
#include "sim/cluster/scheduler.hpp"
#include "sim/collectives/algorithms.hpp"
#include "sim/core/nearest.hpp"

namespace hcsim {
namespace {

// What `hcsim list` adds to an entry's help, source and parameters (collective algorithms).
template <class E>
std::string facts(const E&) {
  return {};
}

std::string facts(const CollectiveAlgorithm& a) {
  std::string out = a.analytic_only ? "closed form, no rank-level schedule" : a.pipelined ? "pipelined" : "";
  if (!out.empty()) out += "; ";
  if (!a.auto_priority) return "    " + out + "used only when named\n";
  out += fmt::format("\"auto\" tries it (priority {})", *a.auto_priority);
  if (a.auto_max_ranks > 0) out += fmt::format(" on groups of at most {} ranks", a.auto_max_ranks);
  return "    " + out + "\n";
}

template <class E>
std::string types(const EntryTable<E>& reg) {
  std::string out;
  for (const auto& [name, e] : reg) {
    out += fmt::format("  {} — {}\n", name, e.help);
    if (!e.source.empty()) out += fmt::format("    source: {}\n", e.source);
    out += facts(e);
    out += e.params.empty() ? "    no parameters\n" : describe_params(e.params, "    ");
  }
  return out;
}

std::string presets(const PresetLibrary& lib) {
  std::string out;
  for (const auto& [name, p] : lib.all()) {
    out += fmt::format("  {} (type {})\n", name, p.type);
    if (!p.help.empty()) out += fmt::format("    {}\n", p.help);
    out += fmt::format("    source: {}\n", p.source);
    for (const auto& [k, v] : p.values.items()) out += fmt::format("    {:<24} {}\n", k, v.dump());
  }
  return out;
}

std::string scenario_sections() {
  std::string out = "scenario sections\n";
  const std::pair<const char*, const ParamTable*> secs[] = {
      {"(top level)", &sections::top()},       {"/cluster", &sections::cluster()},
      {"/cluster/pools/N", &sections::pool()}, {"/workload", &sections::workload()},
      {"/workload/model", &sections::model_ref()}, {"/strategy", &sections::strategy()},
      {"/strategy/fsdp", &sections::fsdp()}, {"/simulation", &sections::simulation()}, {"/outputs", &sections::outputs()}};
  for (const auto& [name, table] : secs) out += fmt::format("  {}\n", name) + describe_params(*table, "    ");
  return out;
}

struct Family {
  const char* name;
  std::function<std::string()> text;
};

// Every registry, in the order `hcsim list` prints them; the names `hcsim list WHAT` takes.
const std::vector<Family>& families() {
  static const std::vector<Family> f{
      {"scenario", scenario_sections},
      {"devices",
       [] {
         return "compute device types\n" + types(compute_devices()) + "\ndevice presets\n" + presets(compute_presets());
       }},
      {"links", [] { return "link types\n" + types(link_models()) + "\nlink presets\n" + presets(link_presets()); }},
      {"topologies", [] { return "topology types\n" + types(topologies()); }},
      {"models",
       [] {
         return "model types\n" + types(transformer_models()) + "\nmodel presets\n" + presets(transformer_presets());
       }},
      {"schedules", [] { return "pipeline schedules\n" + types(pipeline_schedules()); }},
      {"codecs", [] { return "compression codecs\n" + types(codecs()); }},
      {"algorithms",
       [] {
         return "collective algorithms (and \"auto\": the least predicted time)\n" + types(collective_algorithms());
       }},
      {"cluster",
       [] {
         return "hcsim cluster inputs\n" + describe_cluster_inputs() + "\ncluster schedulers\n" +
                types(cluster_schedulers());
       }},
  };
  return f;
}

}  // namespace

std::vector<std::string> list_families() {
  std::vector<std::string> out{"all"};
  for (const auto& f : families()) out.emplace_back(f.name);
  return out;
}

std::string list_registries(const std::string& what) {
  register_builtins();
  register_builtin_codecs();
  register_builtin_collectives();
  register_builtin_cluster_schedulers();
  const std::vector<std::string> valid = list_families();
  if (std::find(valid.begin(), valid.end(), what) == valid.end()) {
    const auto near = nearest_name(what, valid, std::max<std::size_t>(1, what.size() / 3));
    throw InputError("", "unknown list \"" + what + "\"; " + (near ? "did you mean \"" + *near + "\"? " : "") +
                             valid_list(valid));
  }
  std::string out;
  for (const auto& f : families())
    if (what == "all" || what == f.name) out += f.text() + "\n";
  return out;
}

void add_list_command(CLI::App& app, Commands& cmds) {
  auto what = std::make_shared<std::string>("all");
  auto* list = app.add_subcommand("list", "print the registries: types, parameters, presets and sources");
  std::string families_help;
  for (const auto& f : list_families()) families_help += (families_help.empty() ? "" : ", ") + f;
  list->add_option("what", *what, families_help);
  cmds.push_back({list, [what] {
                    std::cout << list_registries(*what);
                    return 0;
                  }});
}

}  // namespace hcsim
