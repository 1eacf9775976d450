#include "params.hpp"

#include <algorithm>
#include <cmath>
#include <limits>

#include <fmt/format.h>

#include "nearest.hpp"

namespace hcsim {

namespace {
const nlohmann::json& lookup(const nlohmann::json& values, std::string_view name) {
  auto it = values.find(std::string(name));
  HCSIM_ASSERT(it != values.end(), "parameter '" + std::string(name) + "' was not declared or resolved");
  return *it;
}

std::string shown(const nlohmann::json& v) {
  std::string s = v.dump();
  if (s.size() > 64) s = s.substr(0, 61) + "...";
  return s;
}

// Physical bounds of a quantity, whatever its parameter: a non-zero rate below `lo` or any
// value above `hi` is no device or link that exists, and would turn durations into
// infinities or overflow the engine's clock (a step of 1e300 s). Loose on purpose.
struct PhysicalRange {
  double lo = 0, hi = std::numeric_limits<double>::infinity();
};
PhysicalRange physical_range(Dim d) {
  switch (d) {
    case Dim::time:
      return {0, 1e9};                        // over 31 years (a shared cluster's job list spans months)
    case Dim::bandwidth: return {1, 1e18};    // 1 B/s .. 1 EB/s
    case Dim::flop_rate: return {1, 1e21};    // 1 flop/s .. 1 zettaflop/s per device
    case Dim::frequency: return {1, 1e15};
    case Dim::data: return {0, 1e21};         // up to 1 ZB
    case Dim::work: return {0, 1e30};
    case Dim::power: return {0, 1e12};
    case Dim::energy: return {0, 1e21};
    case Dim::length: return {0, 1e8};
    default: return {};
  }
}

std::string range_text(const ParamSpec& s) {
  const bool lo = std::isfinite(s.min), hi = std::isfinite(s.max);
  auto num = [&](double x) {
    return s.kind == ParamKind::quantity ? format_quantity(x, s.dim) : fmt::format("{:g}", x);
  };
  if (lo && hi) return fmt::format("between {} and {}", num(s.min), num(s.max));
  if (lo) return fmt::format("{} {}", s.min_exclusive ? "greater than" : "at least", num(s.min));
  if (hi) return fmt::format("at most {}", num(s.max));
  return {};
}
}  // namespace

double Params::number(std::string_view name) const { return lookup(values_, name).get<double>(); }
std::int64_t Params::integer(std::string_view name) const { return lookup(values_, name).get<std::int64_t>(); }
bool Params::boolean(std::string_view name) const { return lookup(values_, name).get<bool>(); }
std::string Params::string(std::string_view name) const { return lookup(values_, name).get<std::string>(); }
bool Params::has(std::string_view name) const {
  auto it = values_.find(std::string(name));
  return it != values_.end() && !it->is_null();
}
const nlohmann::json& Params::raw(std::string_view name) const { return lookup(values_, name); }

std::string valid_list(const std::vector<std::string>& names) {
  std::string out = "valid ones are: ";
  for (std::size_t i = 0; i < names.size(); ++i) out += (i ? ", " : "") + names[i];
  return out;
}

std::optional<nlohmann::json> resolve_value(const ParamSpec& spec, const nlohmann::json& v, const std::string& path,
                                            Diagnostics& diag) {
  // A unit that reads as something else than probably meant ("25 mb"): a warning, or the
  // explanation of a range error it causes.
  const std::string lookalike = spec.kind == ParamKind::quantity && v.is_string()
                                    ? unit_lookalike(v.get_ref<const std::string&>(), spec.dim)
                                    : std::string();
  auto check_range = [&](double x) -> bool {
    bool below = spec.min_exclusive ? !(x > spec.min) : x < spec.min;
    if (below || x > spec.max) {
      diag.error(path, fmt::format("must be {}, got {}{}", range_text(spec),
                                   spec.kind == ParamKind::quantity ? format_quantity(x, spec.dim) : shown(v),
                                   lookalike.empty() ? "" : " (" + lookalike + ")"));
      return false;
    }
    return true;
  };
  switch (spec.kind) {
    case ParamKind::quantity: {
      auto q = parse_quantity(v, spec.dim);
      if (!q.value) { diag.error(path, q.error); return std::nullopt; }
      if (!check_range(*q.value)) return std::nullopt;
      const PhysicalRange r = physical_range(spec.dim);
      const double x = std::fabs(*q.value);
      if ((x > 0 && x < r.lo) || x > r.hi) {
        const std::string_view unit = dim_unit(spec.dim);
        diag.error(path, fmt::format("must be {} to be physical, got {:g} {}",
                                     x > r.hi ? fmt::format("at most {:g} {}", r.hi, unit)
                                              : fmt::format("0 or at least {:g} {}", r.lo, unit),
                                     *q.value, unit));
        return std::nullopt;
      }
      if (!lookalike.empty()) diag.warn(path, lookalike);
      return nlohmann::json(*q.value);
    }
    case ParamKind::number:
      if (!v.is_number()) { diag.error(path, "expected a number, got " + shown(v)); return std::nullopt; }
      if (!std::isfinite(v.get<double>()) || !check_range(v.get<double>())) return std::nullopt;
      return nlohmann::json(v.get<double>());
    case ParamKind::integer: {
      bool integral = v.is_number_integer() ||
                      (v.is_number_float() && std::isfinite(v.get<double>()) &&
                       std::floor(v.get<double>()) == v.get<double>() && std::fabs(v.get<double>()) < 9e15);
      if (!integral) { diag.error(path, "expected an integer, got " + shown(v)); return std::nullopt; }
      if (v.is_number_unsigned() && v.get<std::uint64_t>() > static_cast<std::uint64_t>(INT64_MAX)) {
        diag.error(path, "integer too large: " + shown(v));
        return std::nullopt;
      }
      auto i = v.is_number_float() ? static_cast<std::int64_t>(v.get<double>()) : v.get<std::int64_t>();
      if (!check_range(static_cast<double>(i))) return std::nullopt;
      return nlohmann::json(i);
    }
    case ParamKind::boolean:
      if (!v.is_boolean()) { diag.error(path, "expected true or false, got " + shown(v)); return std::nullopt; }
      return v;
    case ParamKind::string:
      if (!v.is_string()) { diag.error(path, "expected a string, got " + shown(v)); return std::nullopt; }
      if (v.get_ref<const std::string&>().size() > 4096) {
        diag.error(path, "string too long (over 4096 characters)");
        return std::nullopt;
      }
      return v;
    case ParamKind::choice: {
      if (!v.is_string() || std::find(spec.choices.begin(), spec.choices.end(), v.get<std::string>()) ==
                                spec.choices.end()) {
        diag.error(path, "unknown value " + shown(v) + "; " +
                             (v.is_string() ? suggest(v.get<std::string>(), spec.choices) : valid_list(spec.choices)));
        return std::nullopt;
      }
      return v;
    }
    case ParamKind::object:
      if (!v.is_object()) { diag.error(path, "expected an object, got " + shown(v)); return std::nullopt; }
      return v;
    case ParamKind::array:
      if (!v.is_array()) { diag.error(path, "expected an array, got " + shown(v)); return std::nullopt; }
      return v;
  }
  return std::nullopt;
}

void check_known_keys(const nlohmann::json& obj, const std::vector<std::string>& allowed, const std::string& path,
                      Diagnostics& diag) {
  for (const auto& item : obj.items())
    if (std::find(allowed.begin(), allowed.end(), item.key()) == allowed.end())
      diag.error(json_child(path, item.key()), "unknown key \"" + item.key() + "\"; " + suggest(item.key(), allowed));
}

Params resolve_params(const ParamTable& table, const nlohmann::json& given, const std::string& path,
                      Diagnostics& diag, const std::vector<std::string>& ignore) {
  nlohmann::json out = nlohmann::json::object();
  if (!given.is_object()) {
    diag.error(path, "expected an object, got " + shown(given));
    return Params(out);
  }
  for (const auto& item : given.items()) {
    const std::string& key = item.key();  // not a structured binding: clang 14 cannot capture those
    if (std::find(ignore.begin(), ignore.end(), key) != ignore.end()) continue;
    bool known = std::any_of(table.begin(), table.end(), [&](const ParamSpec& s) { return s.name == key; });
    if (!known) {
      std::vector<std::string> names;
      for (const auto& s : table) names.push_back(s.name);
      std::sort(names.begin(), names.end());
      diag.error(json_child(path, key), "unknown key \"" + key + "\"; " + suggest(key, names));
    }
  }
  for (const auto& spec : table) {
    auto it = given.find(spec.name);
    if (it == given.end()) {
      if (!spec.def) {
        diag.error(json_child(path, spec.name), "required key is missing");
        continue;
      }
      if (spec.def->is_null()) { out[spec.name] = nullptr; continue; }
      Diagnostics internal;
      auto v = resolve_value(spec, *spec.def, json_child(path, spec.name), internal);
      HCSIM_ASSERT(v.has_value(), "default of '" + spec.name + "' does not satisfy its own declaration");
      out[spec.name] = *v;
      continue;
    }
    if (it->is_null() && spec.def && spec.def->is_null()) { out[spec.name] = nullptr; continue; }
    if (auto v = resolve_value(spec, *it, json_child(path, spec.name), diag)) out[spec.name] = *v;
  }
  return Params(out);
}

std::string describe_params(const ParamTable& table, const std::string& indent) {
  std::string out;
  for (const auto& s : table) {
    std::string kind;
    switch (s.kind) {
      case ParamKind::quantity: kind = std::string(dim_unit(s.dim)); if (kind.empty()) kind = "ratio"; break;
      case ParamKind::number: kind = "number"; break;
      case ParamKind::integer: kind = "integer"; break;
      case ParamKind::boolean: kind = "bool"; break;
      case ParamKind::string: kind = "string"; break;
      case ParamKind::choice: kind = "one of"; for (auto& c : s.choices) kind += " " + c; break;
      case ParamKind::object: kind = "object"; break;
      case ParamKind::array: kind = "array"; break;
    }
    std::string def = !s.def ? "required" : s.def->is_null() ? "optional" : "default " + s.def->dump();
    out += fmt::format("{}{:<24} {:<14} {:<22} {}\n", indent, s.name, kind, def, s.help);
  }
  return out;
}

nlohmann::json param_schema(const ParamSpec& s) {
  nlohmann::json p;
  switch (s.kind) {
    case ParamKind::quantity:
      // A number (SI units) or a string with a unit of the parameter's dimension.
      p["type"] = nlohmann::json::array({"number", "string"});
      p["pattern"] = quantity_pattern(s.dim);
      p["x-unit"] = std::string(dim_unit(s.dim));
      break;
    case ParamKind::number: p["type"] = "number"; break;
    case ParamKind::integer: p["type"] = "integer"; break;
    case ParamKind::boolean: p["type"] = "boolean"; break;
    case ParamKind::string: p["type"] = "string"; p["maxLength"] = 4096; break;
    case ParamKind::choice: p["enum"] = s.choices; break;
    case ParamKind::object:
      if (!s.schema_ref.empty()) p["$ref"] = "#/$defs/" + s.schema_ref;
      else p["type"] = "object";
      break;
    case ParamKind::array: p["type"] = "array"; break;
  }
  // Bounds of a number; for a quantity they apply to a plain number (SI), not to a string.
  if (s.kind == ParamKind::number || s.kind == ParamKind::integer || s.kind == ParamKind::quantity) {
    if (std::isfinite(s.min)) p[s.min_exclusive ? "exclusiveMinimum" : "minimum"] = s.min;
    if (std::isfinite(s.max)) p["maximum"] = s.max;
  }
  if (s.def && s.def->is_null()) {  // optional: an explicit null is read as absent (resolve_params)
    if (p.contains("$ref")) p = {{"anyOf", {p, {{"type", "null"}}}}};
    else if (p.contains("enum")) p["enum"].push_back(nullptr);
    else if (p["type"].is_array()) p["type"].push_back("null");
    else p["type"] = nlohmann::json::array({p["type"], "null"});
  }
  p["description"] = s.help;
  if (s.def && !s.def->is_null()) p["default"] = *s.def;
  return p;
}

nlohmann::json params_schema(const ParamTable& table) {
  nlohmann::json props = nlohmann::json::object();
  nlohmann::json required = nlohmann::json::array();
  for (const auto& s : table) {
    props[s.name] = param_schema(s);
    if (!s.def) required.push_back(s.name);
  }
  return {{"type", "object"}, {"additionalProperties", false}, {"properties", props}, {"required", required}};
}

}  // namespace hcsim
