// Parsing an expectations file (strict: unknown keys rejected, every problem with its path).
#include "check_spec.hpp"

#include <algorithm>
#include <map>

#include <fmt/format.h>

#include "scenarios/scenario.hpp"
#include "sim/core/nearest.hpp"
#include "sim/core/quantity.hpp"
#include "sim/sweep/scenario_source.hpp"
#include "sim/sweep/sweep_checks.hpp"

namespace hcsim::sweep {
namespace {

class CheckParser {
 public:
  CheckParser(const nlohmann::json& doc, std::string file) : doc_(doc), file_(std::move(file)) {}
  CheckSpec parse();

 private:
  const nlohmann::json& doc_;
  std::string file_;
  Diagnostics d_;
  CheckSpec spec_;
  std::map<std::string, std::size_t> by_doc_;  // dumped document -> index in spec_.scenarios

  std::optional<CheckScenario> resolve(const nlohmann::json& ref, const std::string& path, int depth);
  // Adds the scenario `ref` to x (deduplicated in spec_.scenarios); false when it cannot be resolved.
  bool scenario(Expectation& x, const nlohmann::json& ref, const std::string& path);
  std::optional<double> ratio(const nlohmann::json& e, const char* key, const std::string& path);
  std::optional<double> number(const nlohmann::json& e, const char* key, const std::string& path);
  void keys(const nlohmann::json& obj, const std::vector<std::string>& allowed, const std::string& path);
  void parse_value(const nlohmann::json& e, Expectation& x);
  void parse_better(const nlohmann::json& e, Expectation& x);
  void parse_ranking(const nlohmann::json& e, Expectation& x);
  void parse_expectation(const nlohmann::json& e, const std::string& path);
};

void CheckParser::keys(const nlohmann::json& obj, const std::vector<std::string>& allowed, const std::string& path) {
  for (const auto& [k, v] : obj.items())
    if (std::find(allowed.begin(), allowed.end(), k) == allowed.end())
      d_.error(json_child(path, k), "unknown key \"" + k + "\"; " + suggest(k, allowed));
}

std::optional<CheckScenario> CheckParser::resolve(const nlohmann::json& ref, const std::string& path, int depth) {
  if (depth > 16) {
    d_.error(path, "scenario variants nested more than 16 deep (a cycle?)");
    return std::nullopt;
  }
  const auto named = doc_.value("scenarios", nlohmann::json::object());
  if (ref.is_string() && named.is_object() && named.contains(ref.get<std::string>())) {
    const std::string name = ref.get<std::string>();
    auto s = resolve(named[name], json_child("/scenarios", name), depth + 1);
    if (s) s->label = name;
    return s;
  }
  if (ref.is_object() && ref.contains("base")) {
    keys(ref, {"base", "set"}, path);
    auto s = resolve(ref["base"], json_child(path, "base"), depth + 1);
    const auto set = ref.value("set", nlohmann::json::object());
    if (!set.is_object()) d_.error(json_child(path, "set"), "expected {\"/pointer\": value, ...}");
    if (!s || !set.is_object()) return std::nullopt;
    std::string with;
    for (const auto& [k, v] : set.items()) {
      // A misspelt pointer would make a variant that fails to parse, or (in an open object)
      // one that runs as its base: refused before anything runs, as a sweep axis is.
      if (const std::string why = unknown_pointer(s->doc, k, v); !why.empty()) {
        const std::string at = json_child(json_child(path, "set"), k);
        const auto& seen = d_.issues();  // a named variant is resolved once per expectation using it
        if (std::none_of(seen.begin(), seen.end(), [&](const Issue& i) { return i.path == at && i.message == why; }))
          d_.error(at, why);
        continue;
      }
      try {
        s->doc[nlohmann::json::json_pointer(k)] = v;
        with += (with.empty() ? "" : ", ") + k + "=" + (v.is_string() ? v.get<std::string>() : v.dump());
      } catch (const nlohmann::json::exception& e) {
        d_.error(json_child(json_child(path, "set"), k), std::string("cannot set: ") + e.what());
      }
    }
    if (!with.empty()) s->label += " with " + with;
    return s;
  }
  try {
    ScenarioSource src = resolve_scenario(ref, file_, path);
    return CheckScenario{ref.is_string() ? ref.get<std::string>() : path, std::move(src.doc), src.file};
  } catch (const InputError& e) {
    d_.merge(e);
    return std::nullopt;
  }
}

bool CheckParser::scenario(Expectation& x, const nlohmann::json& ref, const std::string& path) {
  auto s = resolve(ref, path, 0);
  if (!s) return false;
  x.labels.push_back(s->label);
  const std::string key = s->doc.dump();
  auto it = by_doc_.find(key);
  if (it == by_doc_.end()) {
    spec_.scenarios.push_back(std::move(*s));
    it = by_doc_.emplace(key, spec_.scenarios.size() - 1).first;
  }
  x.scenarios.push_back(it->second);
  return true;
}

std::optional<double> CheckParser::ratio(const nlohmann::json& e, const char* key, const std::string& path) {
  if (!e.contains(key)) return std::nullopt;
  const QuantityParse q = parse_quantity(e[key], Dim::ratio);
  if (!q.value || *q.value < 0) {
    d_.error(json_child(path, key), "expected a non-negative fraction such as 0.05 or \"5 %\"");
    return std::nullopt;
  }
  return q.value;
}

std::optional<double> CheckParser::number(const nlohmann::json& e, const char* key, const std::string& path) {
  if (!e.contains(key)) return std::nullopt;
  if (!e[key].is_number()) {
    d_.error(json_child(path, key), "expected a number (SI units, as in the JSON report)");
    return std::nullopt;
  }
  return e[key].get<double>();
}

void CheckParser::parse_value(const nlohmann::json& e, Expectation& x) {
  keys(e, {"name", "scenario", "metric", "value", "tolerance", "abs_tolerance", "at_most", "at_least"}, x.path);
  scenario(x, e["scenario"], json_child(x.path, "scenario"));
  x.value = number(e, "value", x.path);
  x.rel_tolerance = ratio(e, "tolerance", x.path);
  x.abs_tolerance = number(e, "abs_tolerance", x.path);
  x.at_most = number(e, "at_most", x.path);
  x.at_least = number(e, "at_least", x.path);
  if (!x.value && !x.at_most && !x.at_least) d_.error(x.path, "give \"value\" (with a tolerance), \"at_most\" or \"at_least\"");
  if (x.value && !x.rel_tolerance && !x.abs_tolerance)
    d_.error(x.path, "\"value\" needs \"tolerance\" (relative, e.g. \"2 %\") or \"abs_tolerance\"");
  if (!x.value && (x.rel_tolerance || x.abs_tolerance)) d_.error(x.path, "a tolerance needs \"value\"");
}

void CheckParser::parse_better(const nlohmann::json& e, Expectation& x) {
  keys(e, {"name", "faster", "cheaper", "better", "than", "metric", "higher_is_better", "by_at_least"}, x.path);
  const char* which = e.contains("faster") ? "faster" : e.contains("cheaper") ? "cheaper" : "better";
  if (std::string(which) == "faster") x.metric = "/step_time_s";
  if (std::string(which) == "cheaper") x.metric = "/energy/per_token_j";
  if (std::string(which) == "better" && !e.contains("metric")) d_.error(x.path, "\"better\" needs \"metric\"");
  if (std::string(which) != "better" && (e.contains("metric") || e.contains("higher_is_better")))
    d_.error(x.path, fmt::format("\"{}\" fixes the metric; use \"better\" with \"metric\" for another one", which));
  if (!e.contains("than")) d_.error(x.path, fmt::format("\"{}\" needs \"than\": the scenario to beat", which));
  if (e.contains("higher_is_better") && !e["higher_is_better"].is_boolean())
    d_.error(json_child(x.path, "higher_is_better"), "expected true or false");
  else x.lower_is_better = !e.value("higher_is_better", false);
  const bool a = scenario(x, e[which], json_child(x.path, which));
  if (a && e.contains("than")) scenario(x, e["than"], json_child(x.path, "than"));
  x.by_at_least = ratio(e, "by_at_least", x.path).value_or(0.0);
}

void CheckParser::parse_ranking(const nlohmann::json& e, Expectation& x) {
  keys(e, {"name", "ranking", "metric", "higher_is_better"}, x.path);
  const auto& r = e["ranking"];
  if (!r.is_array() || r.size() < 2) d_.error(json_child(x.path, "ranking"), "expected a list of two or more scenarios, best first");
  else
    for (std::size_t i = 0; i < r.size(); ++i)
      scenario(x, r[i], json_child(json_child(x.path, "ranking"), i));
  if (e.contains("higher_is_better") && !e["higher_is_better"].is_boolean())
    d_.error(json_child(x.path, "higher_is_better"), "expected true or false");
  else x.lower_is_better = !e.value("higher_is_better", false);
}

void CheckParser::parse_expectation(const nlohmann::json& e, const std::string& path) {
  Expectation x;
  x.path = path;
  if (!e.is_object()) {
    d_.error(path, "expected an expectation object");
    return;
  }
  x.name = fmt::format("expectation {}", spec_.expectations.size() + 1);
  if (e.contains("name") && (!e["name"].is_string() || e["name"].get<std::string>().empty()))
    d_.error(json_child(path, "name"), "expected a non-empty string");
  else if (e.contains("name")) x.name = e["name"].get<std::string>();
  if (e.contains("metric")) {
    if (!e["metric"].is_string() || e["metric"].get<std::string>().empty() || e["metric"].get<std::string>()[0] != '/')
      d_.error(json_child(path, "metric"), "expected a JSON pointer into the report such as \"/step_time_s\"");
    else x.metric = e["metric"].get<std::string>();
  }
  if (e.contains("scenario")) parse_value(e, x);
  else if (e.contains("faster") || e.contains("cheaper") || e.contains("better")) {
    x.kind = Expectation::Kind::better;
    parse_better(e, x);
  } else if (e.contains("ranking")) {
    x.kind = Expectation::Kind::ranking;
    parse_ranking(e, x);
  } else {
    d_.error(path, "expected one of \"scenario\" (a metric's value), \"faster\"/\"cheaper\"/\"better\" with \"than\", "
                   "or \"ranking\"");
  }
  spec_.expectations.push_back(std::move(x));
}

CheckSpec CheckParser::parse() {
  spec_.file = file_;
  if (!doc_.is_object()) throw InputError("", "an expectations file is a JSON object with \"expectations\"", file_);
  keys(doc_, {"description", "scenarios", "expectations"}, "");
  if (doc_.contains("scenarios") && !doc_["scenarios"].is_object())
    d_.error("/scenarios", "expected {\"name\": scenario, ...}");
  const auto ex = doc_.value("expectations", nlohmann::json());
  if (!ex.is_array() || ex.empty()) d_.error("/expectations", "expected a non-empty list of expectations");
  else
    for (std::size_t i = 0; i < ex.size(); ++i) parse_expectation(ex[i], json_child("/expectations", i));
  if (!d_.ok()) throw InputError(d_.issues(), file_);
  return std::move(spec_);
}

}  // namespace

CheckSpec parse_check(const nlohmann::json& doc, const std::string& file) { return CheckParser(doc, file).parse(); }

CheckSpec load_check(const std::string& file) { return parse_check(read_json_file(file), file); }

}  // namespace hcsim::sweep
