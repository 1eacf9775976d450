#pragma once
// A family, an interface, a registry (style principle 1, after SimGrid's model registries).
//
// Each model family (compute devices, links, topologies, collective algorithms, workload
// models, pipeline schedules, compression codecs) has one Registry keyed by the JSON
// "type" string, filled by an explicit register_builtin_*() call -- never by static
// initialisers, which a static link may drop. An unknown type names the valid ones.
// Presets are named parameter sets for one registered type, each citing its source.

#include <functional>
#include <map>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json.hpp>

#include "error.hpp"
#include "params.hpp"

namespace hcsim {

template <class Product>
class Registry {
 public:
  using Factory = std::function<std::unique_ptr<Product>(const Params&)>;
  struct Entry {
    std::string type;
    std::string help;
    ParamTable params;
    Factory make;
    std::string source;  // paper or datasheet the model follows
  };

  explicit Registry(std::string family) : family_(std::move(family)) {}

  void add(Entry e) {
    HCSIM_ASSERT(!entries_.count(e.type), family_ + " type registered twice: " + e.type);
    std::string key = e.type;
    entries_.emplace(std::move(key), std::move(e));
  }
  [[nodiscard]] const Entry* find(std::string_view type) const {
    auto it = entries_.find(type);
    return it == entries_.end() ? nullptr : &it->second;
  }
  // Throws an InputError at `path` naming the valid types.
  [[nodiscard]] const Entry& get(std::string_view type, const std::string& path) const {
    if (const Entry* e = find(type)) return *e;
    throw InputError(path, "unknown " + family_ + " type \"" + std::string(type) + "\"; " + valid_list(names()));
  }
  [[nodiscard]] std::vector<std::string> names() const {
    std::vector<std::string> out;
    for (const auto& [k, v] : entries_) out.push_back(k);
    return out;
  }
  [[nodiscard]] const std::map<std::string, Entry, std::less<>>& entries() const { return entries_; }
  [[nodiscard]] const std::string& family() const { return family_; }

  // Resolve params for `type` from `given` (keys in `ignore` skipped) and build.
  std::unique_ptr<Product> build(std::string_view type, const nlohmann::json& given, const std::string& path,
                                 Diagnostics& diag, const std::vector<std::string>& ignore = {"type"}) const {
    const Entry* e = find(type);
    if (!e) {
      diag.error(json_child(path, "type"),
                 "unknown " + family_ + " type \"" + std::string(type) + "\"; " + valid_list(names()));
      return nullptr;
    }
    Diagnostics local;
    Params p = resolve_params(e->params, given, path, local, ignore);
    for (const auto& i : local.issues()) diag.error(i.path, i.message);
    if (!local.ok()) return nullptr;
    try {
      return e->make(p);
    } catch (const InputError& err) {
      // A cross-parameter rule checked by the model: its issue paths are relative to `path`.
      for (const auto& i : err.issues()) diag.error(i.path.empty() ? path : json_child(path, i.path), i.message);
      return nullptr;
    }
  }

 private:
  std::string family_;
  std::map<std::string, Entry, std::less<>> entries_;
};

struct Preset {
  std::string name;
  std::string type;      // registered type it parameterises
  nlohmann::json values; // parameter values (units allowed)
  std::string source;    // public source of the numbers
  std::string help;
};

class PresetLibrary {
 public:
  explicit PresetLibrary(std::string family) : family_(std::move(family)) {}
  void add(Preset p) {
    HCSIM_ASSERT(!presets_.count(p.name), family_ + " preset registered twice: " + p.name);
    std::string key = p.name;
    presets_.emplace(std::move(key), std::move(p));
  }
  [[nodiscard]] const Preset* find(std::string_view name) const {
    auto it = presets_.find(name);
    return it == presets_.end() ? nullptr : &it->second;
  }
  [[nodiscard]] std::vector<std::string> names() const {
    std::vector<std::string> out;
    for (const auto& [k, v] : presets_) out.push_back(k);
    return out;
  }
  [[nodiscard]] const std::map<std::string, Preset, std::less<>>& all() const { return presets_; }
  [[nodiscard]] std::string unknown_message(std::string_view name) const {
    return "unknown " + family_ + " preset \"" + std::string(name) + "\"; " + valid_list(names());
  }

 private:
  std::string family_;
  std::map<std::string, Preset, std::less<>> presets_;
};

}  // namespace hcsim
