#include "models/link/link.hpp"

#include "models/link/cxl.hpp"
#include "models/link/electrical.hpp"
#include "models/link/photonic.hpp"
#include "models/link/presets.hpp"
#include "sim/core/plausible.hpp"

namespace hcsim {

Registry<LinkModel>& link_models() {
  static Registry<LinkModel> r("link");
  return r;
}

PresetLibrary& link_presets() {
  static PresetLibrary lib("link");
  return lib;
}

void register_builtin_links() {
  static bool done = false;
  if (done) return;
  done = true;
  register_electrical_link(link_models());
  register_photonic_link(link_models());
  register_cxl_link(link_models());
  register_builtin_link_presets(link_presets());
}

namespace {

const std::vector<std::string> kDescKeys{"type", "preset", "name"};

std::string joined(const std::vector<std::string>& names) {
  std::string out;
  for (const auto& n : names) out += (out.empty() ? "" : ", ") + n;
  return out;
}

std::string how_to_describe() {
  return "a link is {\"preset\": NAME, ...overrides} or {\"type\": TYPE, ...params}; presets: " +
         joined(link_presets().names()) + "; types: " + joined(link_models().names());
}

// The preset's values with the description's overrides on top; "" type when invalid.
std::string merge_preset(const nlohmann::json& desc, const std::string& path, Diagnostics& diag,
                         nlohmann::json& merged, std::string& label) {
  const auto& pv = desc.at("preset");
  if (!pv.is_string()) {
    diag.error(json_child(path, "preset"), "expected a preset name, got " + pv.dump());
    return {};
  }
  const Preset* p = link_presets().find(pv.get<std::string>());
  if (!p) {
    diag.error(json_child(path, "preset"), link_presets().unknown_message(pv.get<std::string>()));
    return {};
  }
  if (auto t = desc.find("type"); t != desc.end() && (!t->is_string() || t->get<std::string>() != p->type)) {
    diag.error(json_child(path, "type"), "preset \"" + p->name + "\" is of type \"" + p->type + "\", got " + t->dump());
    return {};
  }
  merged = p->values;
  for (const auto& [k, v] : desc.items())
    if (k != "preset" && k != "type" && k != "name") merged[k] = v;
  label = p->name;
  return p->type;
}

}  // namespace

LinkSpec resolve_link(const nlohmann::json& desc, const std::string& path, Diagnostics& diag,
                      nlohmann::json* resolved) {
  register_builtin_links();
  if (!desc.is_object()) {
    diag.error(path, "expected an object; " + how_to_describe());
    return {};
  }
  nlohmann::json params = desc;
  std::string type, label;
  if (desc.contains("preset")) {
    type = merge_preset(desc, path, diag, params, label);
    if (type.empty()) return {};
  } else if (auto t = desc.find("type"); t != desc.end()) {
    if (!t->is_string()) {
      diag.error(json_child(path, "type"), "expected a link type name, got " + t->dump());
      return {};
    }
    type = label = t->get<std::string>();
  } else {
    diag.error(path, "missing \"preset\" or \"type\"; " + how_to_describe());
    return {};
  }
  if (auto n = desc.find("name"); n != desc.end()) {
    if (!n->is_string()) {
      diag.error(json_child(path, "name"), "expected a string, got " + n->dump());
      return {};
    }
    label = n->get<std::string>();
  }
  auto model = link_models().build(type, params, path, diag, kDescKeys, resolved);
  if (!model) return {};
  nlohmann::json given = desc;  // what the description itself sets, over its preset
  for (const auto& k : kDescKeys) given.erase(k);
  warn_implausible(link_models().find(type)->params, link_presets(), type, type + " link", given, path, diag);
  if (resolved) {
    (*resolved)["type"] = type;
    for (const char* k : {"preset", "name"})
      if (desc.contains(k)) (*resolved)[k] = desc.at(k);
  }
  LinkSpec spec = model->spec();
  spec.name = label;
  return spec;
}

}  // namespace hcsim
