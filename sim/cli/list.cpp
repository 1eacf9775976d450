#include "list.hpp"

#include <iostream>
#include <memory>

#include <fmt/format.h>

#include "models/link/link.hpp"
#include "scenarios/scenario.hpp"
#include "scenarios/sections.hpp"
#include "sim/cli/command.hpp"

namespace hcsim {
namespace {

template <class P>
std::string types(const Registry<P>& reg) {
  std::string out;
  for (const auto& [name, e] : reg.entries()) {
    out += fmt::format("  {} — {}\n", name, e.help);
    if (!e.source.empty()) out += fmt::format("    source: {}\n", e.source);
    out += describe_params(e.params, "    ");
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

}  // namespace

std::string list_registries(const std::string& what) {
  register_builtins();
  const std::vector<std::string> valid{"all", "scenario", "devices", "links", "topologies", "models", "schedules"};
  if (std::find(valid.begin(), valid.end(), what) == valid.end())
    throw InputError("", "unknown list \"" + what + "\"; " + valid_list(valid));
  std::string out;
  auto want = [&](const char* w) { return what == "all" || what == w; };
  if (want("scenario")) {
    out += "scenario sections\n";
    const std::pair<const char*, const ParamTable*> secs[] = {
        {"(top level)", &sections::top()},       {"/cluster", &sections::cluster()},
        {"/cluster/pools/N", &sections::pool()}, {"/workload", &sections::workload()},
        {"/workload/model", &sections::model_ref()}, {"/strategy", &sections::strategy()},
        {"/simulation", &sections::simulation()}, {"/outputs", &sections::outputs()}};
    for (const auto& [name, table] : secs) out += fmt::format("  {}\n", name) + describe_params(*table, "    ");
    out += "\n";
  }
  if (want("devices")) out += "compute device types\n" + types(compute_devices()) + "\ndevice presets\n" + presets(compute_presets()) + "\n";
  if (want("links")) out += "link types\n" + types(link_models()) + "\nlink presets\n" + presets(link_presets()) + "\n";
  if (want("topologies")) out += "topology types\n" + types(topologies()) + "\n";
  if (want("models")) out += "model types\n" + types(transformer_models()) + "\nmodel presets\n" + presets(transformer_presets()) + "\n";
  if (want("schedules")) out += "pipeline schedules\n" + types(pipeline_schedules()) + "\n";
  return out;
}

void add_list_command(CLI::App& app, Commands& cmds) {
  auto what = std::make_shared<std::string>("all");
  auto* list = app.add_subcommand("list", "print the registries: types, parameters, presets and sources");
  list->add_option("what", *what, "devices, links, topologies, models, schedules or all");
  cmds.push_back({list, [what] {
                    std::cout << list_registries(*what);
                    return 0;
                  }});
}

}  // namespace hcsim
