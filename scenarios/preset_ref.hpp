#pragma once
// Inside scenario parsing only (scenario_parse.cpp): a {"preset": P, "type": T?,
// "overrides": {...}} reference built against one registry and preset library, its
// problems reported at their JSON paths.
#include <memory>
#include <string>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "sim/core/error.hpp"
#include "sim/core/nearest.hpp"
#include "sim/core/params.hpp"
#include "sim/core/plausible.hpp"
#include "sim/core/registry.hpp"

namespace hcsim::scenario_detail {

// {"preset": P, "type": T?, "overrides": {...}} against one registry and preset library.
template <class Product>
std::unique_ptr<Product> build_ref(const Params& ref, const std::string& path, const Registry<Product>& reg,
                                   const PresetLibrary& presets, Diagnostics& diag, std::string& type_out,
                                   std::string& preset_out, nlohmann::json& resolved_out) {
  nlohmann::json values = nlohmann::json::object();
  std::string type = ref.has("type") ? ref.string("type") : "";
  if (ref.has("preset")) {
    preset_out = ref.string("preset");
    const Preset* p = presets.find(preset_out);
    if (!p) {
      diag.error(json_child(path, "preset"), presets.unknown_message(preset_out));
      return nullptr;
    }
    if (!type.empty() && type != p->type) {
      diag.error(json_child(path, "type"),
                 fmt::format("preset \"{}\" is of type \"{}\", not \"{}\"", preset_out, p->type, type));
      return nullptr;
    }
    type = p->type;
    values = p->values;
  } else if (type.empty()) {
    diag.error(path, "give a \"preset\" or a \"type\"");
    return nullptr;
  }
  for (const auto& [k, v] : ref.raw("overrides").items()) values[k] = v;
  const auto* entry = reg.find(type);
  if (!entry) {
    diag.error(json_child(path, "type"),
               "unknown " + reg.family() + " type \"" + type + "\"; " + suggest(type, reg.names()));
    return nullptr;
  }
  Diagnostics local;
  Params p = resolve_params(entry->params, values, json_child(path, "overrides"), local);
  diag.merge(local);
  if (!local.ok()) return nullptr;
  type_out = type;
  resolved_out = p.json();
  warn_implausible(entry->params, presets, type, type + " " + reg.family(), ref.raw("overrides"),
                   json_child(path, "overrides"), diag);
  try {
    return entry->make(p);
  } catch (const InputError& err) {
    // A cross-parameter rule checked by the model: its paths are relative to the overrides.
    for (const auto& i : err.issues())
      diag.error(json_child(path, "overrides") + (i.path.empty() ? "" : "/" + i.path), i.message);
    return nullptr;
  }
}

}  // namespace hcsim::scenario_detail
