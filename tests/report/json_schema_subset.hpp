#pragma once
// A validator for the subset of JSON Schema (draft 2020-12) that docs/report.schema.json and
// the scenario schema (`hcsim schema`) use: type (one name or a list), properties, required,
// additionalProperties (boolean or schema), items, minItems, minimum, exclusiveMinimum,
// maximum, maxLength (in bytes: the scenario's strings are checked so), pattern (ECMAScript,
// std::regex), const, enum, anyOf, and local $ref to #/$defs/NAME. Annotation keywords
// ($schema, $id, $defs, title, description, default, x-unit) are skipped. Any other keyword
// is reported as an error, so the schema cannot silently use what this does not check.

#include <algorithm>
#include <cmath>
#include <map>
#include <regex>
#include <set>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

namespace hcsim::testing {

class SchemaSubset {
 public:
  explicit SchemaSubset(nlohmann::json root) : root_(std::move(root)) {}

  // Every problem, as "pointer: message"; empty when `doc` is valid.
  std::vector<std::string> validate(const nlohmann::json& doc) const {
    std::vector<std::string> errors;
    check(root_, doc, "", errors);
    return errors;
  }

 private:
  static bool has_type(const nlohmann::json& v, const std::string& t) {
    if (t == "object") return v.is_object();
    if (t == "array") return v.is_array();
    if (t == "string") return v.is_string();
    if (t == "boolean") return v.is_boolean();
    if (t == "null") return v.is_null();
    if (t == "number") return v.is_number();
    if (t == "integer")
      return v.is_number_integer() || (v.is_number_float() && std::trunc(v.get<double>()) == v.get<double>());
    return false;
  }

  const nlohmann::json& resolve(const std::string& ref, const std::string& at, std::vector<std::string>& errors) const {
    static const nlohmann::json empty = nlohmann::json::object();
    const std::string prefix = "#/$defs/";
    if (ref.rfind(prefix, 0) != 0 || !root_.contains("$defs") || !root_["$defs"].contains(ref.substr(prefix.size()))) {
      errors.push_back(at + ": unresolvable $ref " + ref);
      return empty;
    }
    return root_["$defs"][ref.substr(prefix.size())];
  }

  void check_type(const nlohmann::json& s, const nlohmann::json& v, const std::string& at,
                  std::vector<std::string>& errors) const {
    const nlohmann::json types = s["type"].is_array() ? s["type"] : nlohmann::json::array({s["type"]});
    for (const auto& t : types)
      if (has_type(v, t.get<std::string>())) return;
    errors.push_back(at + ": expected type " + s["type"].dump() + ", got " + v.dump().substr(0, 60));
  }

  void check_object(const nlohmann::json& s, const nlohmann::json& v, const std::string& at,
                    std::vector<std::string>& errors) const {
    if (!v.is_object()) return;
    if (s.contains("required"))
      for (const auto& k : s["required"])
        if (!v.contains(k.get<std::string>())) errors.push_back(at + ": missing required key " + k.dump());
    for (const auto& [k, x] : v.items()) {
      const std::string child = at + "/" + k;
      if (s.contains("properties") && s["properties"].contains(k)) {
        check(s["properties"][k], x, child, errors);
      } else if (s.contains("additionalProperties")) {
        const auto& ap = s["additionalProperties"];
        if (ap.is_boolean() && !ap.get<bool>()) errors.push_back(child + ": key not in the schema");
        else if (ap.is_object()) check(ap, x, child, errors);
      }
    }
  }

  void check(const nlohmann::json& s, const nlohmann::json& v, const std::string& at,
             std::vector<std::string>& errors) const {
    static const std::set<std::string> known = {"$schema", "$id", "$defs", "title", "description", "type",
                                                "properties", "required", "additionalProperties", "items",
                                                "minimum", "maximum", "const", "enum", "$ref", "default",
                                                "x-unit", "minItems", "maxLength", "pattern", "anyOf",
                                                "exclusiveMinimum"};
    for (const auto& [k, x] : s.items())
      if (!known.count(k)) errors.push_back(at + ": schema keyword \"" + k + "\" is outside the checked subset");
    if (s.contains("$ref")) check(resolve(s["$ref"].get<std::string>(), at, errors), v, at, errors);
    if (s.contains("type")) check_type(s, v, at, errors);
    if (s.contains("const") && v != s["const"]) errors.push_back(at + ": expected " + s["const"].dump());
    if (s.contains("enum") && std::find(s["enum"].begin(), s["enum"].end(), v) == s["enum"].end())
      errors.push_back(at + ": " + v.dump() + " not in " + s["enum"].dump());
    if (v.is_number() && s.contains("minimum") && v.get<double>() < s["minimum"].get<double>())
      errors.push_back(at + ": " + v.dump() + " below minimum " + s["minimum"].dump());
    if (v.is_number() && s.contains("maximum") && v.get<double>() > s["maximum"].get<double>())
      errors.push_back(at + ": " + v.dump() + " above maximum " + s["maximum"].dump());
    if (v.is_number() && s.contains("exclusiveMinimum") &&
        !(v.get<double>() > s["exclusiveMinimum"].get<double>()))
      errors.push_back(at + ": " + v.dump() + " not above " + s["exclusiveMinimum"].dump());
    if (v.is_string() && s.contains("maxLength") &&
        v.get_ref<const std::string&>().size() > s["maxLength"].get<std::size_t>())
      errors.push_back(at + ": string longer than " + s["maxLength"].dump());
    if (v.is_string() && s.contains("pattern") && !std::regex_search(v.get<std::string>(), regex(s["pattern"])))
      errors.push_back(at + ": " + v.dump() + " does not match " + s["pattern"].dump());
    if (v.is_array() && s.contains("minItems") && v.size() < s["minItems"].get<std::size_t>())
      errors.push_back(at + ": fewer than " + s["minItems"].dump() + " items");
    if (s.contains("anyOf")) {
      bool any = false;
      for (const auto& alt : s["anyOf"]) {
        std::vector<std::string> e;
        check(alt, v, at, e);
        if (e.empty()) { any = true; break; }
      }
      if (!any) errors.push_back(at + ": matches none of the anyOf alternatives");
    }
    check_object(s, v, at, errors);
    if (v.is_array() && s.contains("items"))
      for (std::size_t i = 0; i < v.size(); ++i) check(s["items"], v[i], at + "/" + std::to_string(i), errors);
  }

  const std::regex& regex(const nlohmann::json& pattern) const {
    const std::string p = pattern.get<std::string>();
    auto it = regexes_.find(p);
    if (it == regexes_.end()) it = regexes_.emplace(p, std::regex(p, std::regex::ECMAScript)).first;
    return it->second;
  }

  nlohmann::json root_;
  mutable std::map<std::string, std::regex> regexes_;
};

}  // namespace hcsim::testing
