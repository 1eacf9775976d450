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
#include "nearest.hpp"
#include "params.hpp"

namespace hcsim {

// The entries of one family keyed by name, in name order: the order of `hcsim list` and of
// every "valid ones are" message. `key` is the entry's member that holds its name. Every
// Registry<Product> is one; a family whose entries are recipes rather than products built
// from parameters (collective algorithms, sim/collectives/algorithms.hpp) keeps its entries
// in one directly. Each entry type has at least a name, `help`, `params` and `source`.
template <class Entry>
class EntryTable {
 public:
  using Map = std::map<std::string, Entry, std::less<>>;

  EntryTable(std::string family, std::string Entry::*key) : family_(std::move(family)), key_(key) {}

  void add(Entry e) {
    std::string name = e.*key_;
    HCSIM_ASSERT(!entries_.count(name), family_ + " registered twice: " + name);
    entries_.emplace(std::move(name), std::move(e));
  }
  [[nodiscard]] const Entry* find(std::string_view name) const {
    auto it = entries_.find(name);
    return it == entries_.end() ? nullptr : &it->second;
  }
  [[nodiscard]] std::vector<std::string> names() const {
    std::vector<std::string> out;
    for (const auto& [k, v] : entries_) out.push_back(k);
    return out;
  }
  [[nodiscard]] const Map& entries() const { return entries_; }
  [[nodiscard]] typename Map::const_iterator begin() const { return entries_.begin(); }
  [[nodiscard]] typename Map::const_iterator end() const { return entries_.end(); }
  [[nodiscard]] const std::string& family() const { return family_; }

 private:
  std::string family_;
  std::string Entry::*key_;
  Map entries_;
};

template <class Product>
struct RegistryEntry {
  using Factory = std::function<std::unique_ptr<Product>(const Params&)>;
  std::string type;
  std::string help;
  ParamTable params;
  Factory make;
  std::string source;  // paper or datasheet the model follows
};

// A family of products built from a parameter object whose "type" names the entry.
template <class Product>
class Registry : public EntryTable<RegistryEntry<Product>> {
 public:
  using Entry = RegistryEntry<Product>;
  using Factory = typename Entry::Factory;

  explicit Registry(std::string family) : EntryTable<Entry>(std::move(family), &Entry::type) {}

  // Throws an InputError at `path` naming the valid types.
  [[nodiscard]] const Entry& get(std::string_view type, const std::string& path) const {
    if (const Entry* e = this->find(type)) return *e;
    throw InputError(path, unknown(type));
  }

  // Resolve params for `type` from `given` (keys in `ignore` skipped) and build; with
  // `resolved`, the resolved parameters (defaults filled, SI) are stored there.
  std::unique_ptr<Product> build(std::string_view type, const nlohmann::json& given, const std::string& path,
                                 Diagnostics& diag, const std::vector<std::string>& ignore = {"type"},
                                 nlohmann::json* resolved = nullptr) const {
    const Entry* e = this->find(type);
    if (!e) {
      diag.error(json_child(path, "type"), unknown(type));
      return nullptr;
    }
    Diagnostics local;
    Params p = resolve_params(e->params, given, path, local, ignore);
    diag.merge(local);
    if (!local.ok()) return nullptr;
    if (resolved) *resolved = p.json();
    try {
      return e->make(p);
    } catch (const InputError& err) {
      // A cross-parameter rule checked by the model: its issue paths are relative to `path`.
      for (const auto& i : err.issues()) diag.error(i.path.empty() ? path : json_child(path, i.path), i.message);
      return nullptr;
    }
  }

 private:
  [[nodiscard]] std::string unknown(std::string_view type) const {
    return "unknown " + this->family() + " type \"" + std::string(type) + "\"; " + suggest(std::string(type), this->names());
  }
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
    return "unknown " + family_ + " preset \"" + std::string(name) + "\"; " + suggest(std::string(name), names());
  }

 private:
  std::string family_;
  std::map<std::string, Preset, std::less<>> presets_;
};

}  // namespace hcsim
