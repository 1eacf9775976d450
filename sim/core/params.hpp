#pragma once
// One declaration drives default, check and help (style principle 4).
//
// A model declares its parameters once as a ParamTable. resolve_params() checks a JSON
// object against it (unknown keys, types, units, ranges, choices), fills defaults and
// returns SI-normalised values; `hcsim list`, the JSON Schema and docs/ read the same
// table, so defaults are never written twice.

#include <cstdint>
#include <limits>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json.hpp>

#include "error.hpp"
#include "quantity.hpp"
#include "units.hpp"

namespace hcsim {

enum class ParamKind { quantity, number, integer, boolean, string, choice, object, array };

struct ParamSpec {
  std::string name;
  ParamKind kind = ParamKind::number;
  Dim dim = Dim::ratio;                 // for ParamKind::quantity
  std::optional<nlohmann::json> def{};  // nullopt: required
  double min = -std::numeric_limits<double>::infinity();
  double max = std::numeric_limits<double>::infinity();
  bool min_exclusive = false;
  std::vector<std::string> choices{};   // for ParamKind::choice
  std::string help{};
  // For ParamKind::object: the kind of description the object is, a JSON Schema $defs name
  // ("link": a link description, scenarios/scenario_schema.cpp); "" for a free object.
  std::string schema_ref{};
};

using ParamTable = std::vector<ParamSpec>;

// Resolved values: quantities in SI as JSON numbers, every declared key present except
// optional ones whose default is JSON null.
class Params {
 public:
  Params() = default;
  explicit Params(nlohmann::json values) : values_(std::move(values)) {}

  [[nodiscard]] double number(std::string_view name) const;
  [[nodiscard]] std::int64_t integer(std::string_view name) const;
  [[nodiscard]] bool boolean(std::string_view name) const;
  [[nodiscard]] std::string string(std::string_view name) const;
  [[nodiscard]] bool has(std::string_view name) const;
  [[nodiscard]] const nlohmann::json& raw(std::string_view name) const;
  template <class Q>
  [[nodiscard]] Q get(std::string_view name) const { return Q(number(name)); }
  [[nodiscard]] const nlohmann::json& json() const { return values_; }

 private:
  nlohmann::json values_ = nlohmann::json::object();
};

// Checks `given` (must be an object) against `table`; problems go to `diag` with paths
// under `path`. Keys listed in `ignore` are skipped (handled by the caller, e.g. "type").
Params resolve_params(const ParamTable& table, const nlohmann::json& given, const std::string& path,
                      Diagnostics& diag, const std::vector<std::string>& ignore = {});

// Reports each key of the object `obj` (at `path`) that is not in `allowed`, with the
// nearest allowed one when it is a slip (suggest()).
void check_known_keys(const nlohmann::json& obj, const std::vector<std::string>& allowed, const std::string& path,
                      Diagnostics& diag);

// Checks and normalises one value against its spec; returns nullopt after reporting.
std::optional<nlohmann::json> resolve_value(const ParamSpec& spec, const nlohmann::json& v, const std::string& path,
                                            Diagnostics& diag);

// Help text for one table, one line a parameter: "name  unit  default  help".
std::string describe_params(const ParamTable& table, const std::string& indent = "  ");

// A JSON Schema fragment ("properties" + "required") for the table; objects with a
// schema_ref refer to "#/$defs/NAME".
nlohmann::json params_schema(const ParamTable& table);
// The JSON Schema of one parameter's value.
nlohmann::json param_schema(const ParamSpec& spec);

// "did you mean" list: "valid ones are: a, b, c".
std::string valid_list(const std::vector<std::string>& names);

}  // namespace hcsim
