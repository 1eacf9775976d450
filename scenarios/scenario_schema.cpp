// The JSON Schema of a scenario (`hcsim schema`), built from the sections' declarations and
// the registries: preset names and types as enums, each device, model, link, topology and
// codec type's parameters (with their kinds, unit patterns and bounds) for the objects that
// hold them, unknown keys refused where the parser refuses them. What needs more than one
// field at a time (dp*tp*pp = devices, a preset's type against an explicit type, memory)
// is left to `hcsim validate` (docs/robustness.md).
#include <set>

#include "models/compression/codec.hpp"
#include "models/energy/node_power.hpp"
#include "models/link/link.hpp"
#include "scenario.hpp"
#include "sections.hpp"

namespace hcsim::sections {
namespace {

using json = nlohmann::json;

json required_of(const ParamTable& t) {
  json r = json::array();
  for (const auto& s : t)
    if (!s.def) r.push_back(s.name);
  return r;
}

// The parameters of every entry of a family together, for editors' completion: a name that
// every entry declaring it declares alike keeps its schema; one declared differently
// accepts any value here (each entry's own branch checks it).
template <class Reg>
json union_properties(const Reg& reg) {
  json props = json::object();
  std::set<std::string> mixed;
  for (const auto& [name, e] : reg)
    for (const auto& s : e.params) {
      json p = param_schema(s);
      p.erase("default");
      const std::string help = p.value("description", "");
      p.erase("description");
      if (!props.contains(s.name)) {
        props[s.name] = p;
        props[s.name]["description"] = help;
      } else {
        json q = props[s.name];
        q.erase("description");
        if (q != p) mixed.insert(s.name);
      }
    }
  for (const auto& m : mixed) props[m] = {{"description", props[m].value("description", "")}};
  return props;
}

std::vector<std::string> presets_of(const PresetLibrary& lib, const std::string& type) {
  std::vector<std::string> out;
  for (const auto& [name, p] : lib.all())
    if (p.type == type) out.push_back(name);
  return out;
}

// The two ways to name an entry of `reg`: its "type" (then every required parameter is
// given, in `where` when that is "overrides") or one of its presets.
template <class Reg>
json named_by(const std::string& type, const Reg& reg, const PresetLibrary& lib, const std::string& where) {
  json by_type = {{"required", json::array({"type"})}, {"properties", {{"type", {{"const", type}}}}}};
  const json req = required_of(reg.find(type)->params);
  if (!req.empty() && where.empty()) {
    for (const auto& r : req) by_type["required"].push_back(r);
  } else if (!req.empty()) {
    by_type["required"].push_back(where);
    by_type["properties"][where] = {{"required", req}};
  }
  json alts = json::array({by_type});
  if (auto ps = presets_of(lib, type); !ps.empty())
    alts.push_back({{"required", json::array({"preset"})}, {"properties", {{"preset", {{"enum", ps}}}}}});
  return alts;
}

// {"preset" | "type", "overrides": {...}}: a pool's device, the workload's model.
template <class Reg>
json reference(const ParamTable& keys, const Reg& reg, const PresetLibrary& lib) {
  json s = params_schema(keys);
  auto& p = s["properties"];
  p["preset"]["enum"] = lib.names();
  p["type"]["enum"] = reg.names();
  for (const char* k : {"preset", "type"}) {
    p[k].erase("type");
    p[k].erase("maxLength");
    p[k]["enum"].push_back(nullptr);
  }
  p["overrides"]["additionalProperties"] = false;
  p["overrides"]["properties"] = union_properties(reg);
  json branches = json::array();
  for (const auto& [name, e] : reg)
    branches.push_back({{"anyOf", named_by(name, reg, lib, "overrides")},
                        {"properties",
                         {{"overrides", {{"properties", params_schema(e.params)["properties"]},
                                         {"additionalProperties", false}}}}}});
  s["anyOf"] = branches;
  return s;
}

// An object with a "type" naming an entry of `reg` and that entry's parameters beside it,
// plus the keys in `extra` (a link's "preset" and "name", a codec's "on_incompatible").
template <class Reg>
json typed(const Reg& reg, const json& extra, const PresetLibrary* lib) {
  json props = union_properties(reg);
  props["type"] = {{"enum", reg.names()}, {"description", reg.family() + " type"}};
  for (const auto& [k, v] : extra.items()) props[k] = v;
  json branches = json::array();
  for (const auto& [name, e] : reg) {
    json own = params_schema(e.params)["properties"];
    own["type"] = json::object();
    for (const auto& [k, v] : extra.items()) own[k] = json::object();
    json b = {{"properties", own}, {"additionalProperties", false}};
    if (lib) {
      b["anyOf"] = named_by(name, reg, *lib, "");
    } else {
      b["required"] = json::array({"type"});
      for (const auto& r : required_of(e.params)) b["required"].push_back(r);
      b["properties"]["type"] = {{"const", name}};
    }
    branches.push_back(std::move(b));
  }
  json s = {{"type", "object"}, {"properties", props}, {"additionalProperties", false}, {"anyOf", branches}};
  if (!lib) s["required"] = json::array({"type"});
  return s;
}

json nullable_object(json s) {
  s["type"] = json::array({"object", "null"});
  return s;
}

}  // namespace

json scenario_schema() {
  register_builtins();
  register_builtin_codecs();
  json s = params_schema(top());
  s["$schema"] = "https://json-schema.org/draft/2020-12/schema";
  s["title"] = "hcsim scenario";
  s["$defs"]["link"] = typed(link_models(), {{"preset", {{"enum", link_presets().names()}}}, {"name", {{"type", "string"}}}},
                             &link_presets());
  s["$defs"]["link"]["description"] = "a link: {\"preset\": NAME, ...overrides} or {\"type\": TYPE, ...parameters}";
  s["$defs"]["codec"] = typed(codecs(), {{"on_incompatible", param_schema(on_incompatible_param())}}, nullptr);
  auto& p = s["properties"];
  p["cluster"] = params_schema(cluster());
  auto& c = p["cluster"]["properties"];
  c["pools"] = {{"type", "array"},
                {"minItems", 1},
                {"items", reference(pool(), compute_devices(), compute_presets())},
                {"description", c["pools"]["description"]}};
  c["topology"] = typed(topologies(), json::object(), nullptr);
  json np = params_schema(node_power_params());
  np["anyOf"] = json::array({json{{"required", json::array({"preset"})}}, json{{"required", json::array({"idle", "max"})}}});
  c["node_power"] = nullable_object(np);
  p["workload"] = params_schema(workload());
  p["workload"]["properties"]["model"] = reference(model_ref(), transformer_models(), transformer_presets());
  p["strategy"] = params_schema(strategy());
  auto& st = p["strategy"]["properties"];
  st["fsdp"] = nullable_object(params_schema(fsdp()));
  st["compression"] = nullable_object({{"properties", {{"dp", {{"$ref", "#/$defs/codec"}}}, {"pp", {{"$ref", "#/$defs/codec"}}}}},
                                       {"additionalProperties", false}});
  st["layers_per_stage"]["items"] = {{"type", "integer"}, {"minimum", 1}, {"maximum", 100000}};
  st["stage_pools"]["items"] = {{"type", "string"}};
  p["simulation"] = params_schema(simulation());
  p["outputs"] = params_schema(outputs());
  return s;
}

}  // namespace hcsim::sections
