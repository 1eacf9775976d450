// Parsing a sweep file (strict: unknown keys rejected, every problem reported with its path).
#include "sweep_spec.hpp"
#include "sweep_checks.hpp"

#include <cmath>

#include <fmt/format.h>

#include "scenarios/scenario.hpp"
#include "sim/core/nearest.hpp"
#include "sim/core/params.hpp"

namespace hcsim::sweep {
namespace {

constexpr std::size_t kMaxAxisValues = 100'000;

bool valid_pointer(const nlohmann::json& p) {
  if (!p.is_string()) return false;
  const std::string s = p.get<std::string>();
  if (s.size() < 2 || s[0] != '/') return false;
  try {
    nlohmann::json::json_pointer jp(s);
    return true;
  } catch (const nlohmann::json::exception&) {
    return false;
  }
}

nlohmann::json range_value(double v, bool integral) {
  if (integral) return static_cast<std::int64_t>(std::llround(v));
  return v;
}

// {"from": a, "to": b, "step": s} or {"from": a, "to": b, "factor": f}, both ends included.
std::vector<nlohmann::json> expand_range(const nlohmann::json& r, const std::string& path, Diagnostics& d) {
  std::vector<nlohmann::json> out;
  if (!r.is_object()) {
    d.error(path, "expected {\"from\", \"to\", \"step\"} or {\"from\", \"to\", \"factor\"}");
    return out;
  }
  check_known_keys(r, {"from", "to", "step", "factor"}, path, d);
  const bool has_step = r.contains("step"), has_factor = r.contains("factor");
  bool ok = true;
  for (const char* k : {"from", "to"})
    if (!r.contains(k) || !r[k].is_number()) {
      d.error(json_child(path, k), "expected a number");
      ok = false;
    }
  if (has_step == has_factor) {
    d.error(path, "give exactly one of \"step\" and \"factor\"");
    ok = false;
  }
  if (!ok) return out;
  const double from = r["from"].get<double>(), to = r["to"].get<double>();
  const char* key = has_step ? "step" : "factor";
  if (!r[key].is_number()) {
    d.error(json_child(path, key), "expected a number");
    return out;
  }
  const double by = r[key].get<double>();
  if ((has_step && by <= 0) || (has_factor && by <= 1) || to < from || (has_factor && from <= 0)) {
    d.error(path, fmt::format("{} must be {} and from ({}) <= to ({}){}", key, has_step ? "> 0" : "> 1", from, to,
                              has_factor ? " with from > 0" : ""));
    return out;
  }
  const bool integral = r["from"].is_number_integer() && r[key].is_number_integer();
  const double slack = 1e-9 * std::max(1.0, std::fabs(to));
  for (std::size_t k = 0;; ++k) {
    const double v = has_step ? from + static_cast<double>(k) * by : from * std::pow(by, static_cast<double>(k));
    if (v > to + slack) break;
    if (out.size() >= kMaxAxisValues) {
      d.error(path, fmt::format("more than {} values", kMaxAxisValues));
      break;
    }
    out.push_back(range_value(v, integral));
  }
  return out;
}

// One {"path", "values" | "range"} member: its list of values.
std::vector<nlohmann::json> member_values(const nlohmann::json& m, const std::string& path, Diagnostics& d) {
  check_known_keys(m, {"path", "values", "range"}, path, d);
  if (!m.contains("path") || !valid_pointer(m["path"]))
    d.error(json_child(path, "path"), "expected a JSON pointer such as \"/strategy/tp\"");
  if (m.contains("values") == m.contains("range")) {
    d.error(path, "give exactly one of \"values\" (a list) and \"range\"");
    return {};
  }
  if (m.contains("range")) return expand_range(m["range"], json_child(path, "range"), d);
  const auto& v = m["values"];
  if (!v.is_array() || v.empty()) {
    d.error(json_child(path, "values"), "expected a non-empty list of values");
    return {};
  }
  return {v.begin(), v.end()};
}

Axis parse_zip(const nlohmann::json& zip, const std::string& path, Diagnostics& d) {
  Axis axis;
  if (!zip.is_array() || zip.empty()) {
    d.error(path, "expected a non-empty list of {\"path\", \"values\"} members");
    return axis;
  }
  std::vector<std::pair<std::string, std::vector<nlohmann::json>>> members;
  const std::size_t issues_before = d.issues().size();
  const auto clean = [&] { return d.issues().size() == issues_before; };
  for (std::size_t i = 0; i < zip.size(); ++i) {
    const std::string mp = json_child(path, i);
    if (!zip[i].is_object()) {
      d.error(mp, "expected {\"path\", \"values\"}");
      continue;
    }
    auto vals = member_values(zip[i], mp, d);
    if (zip[i].contains("path") && zip[i]["path"].is_string()) members.emplace_back(zip[i]["path"].get<std::string>(), std::move(vals));
  }
  if (!clean()) return axis;
  for (std::size_t i = 1; i < members.size(); ++i)
    if (members[i].second.size() != members[0].second.size())
      d.error(json_child(path, i), fmt::format("zip members need lists of the same length: {} has {}, {} has {}",
                                               members[0].first, members[0].second.size(), members[i].first,
                                               members[i].second.size()));
  if (!clean()) return axis;
  for (std::size_t k = 0; k < members[0].second.size(); ++k) {
    nlohmann::ordered_json c = nlohmann::ordered_json::object();
    for (const auto& [p, vals] : members) c[p] = vals[k];
    axis.choices.push_back(std::move(c));
  }
  return axis;
}

Axis parse_points(const nlohmann::json& pts, const std::string& path, Diagnostics& d) {
  Axis axis;
  if (!pts.is_array() || pts.empty()) {
    d.error(path, "expected a non-empty list of {\"/pointer\": value, ...} objects");
    return axis;
  }
  for (std::size_t i = 0; i < pts.size(); ++i) {
    const std::string pp = json_child(path, i);
    if (!pts[i].is_object() || pts[i].empty()) {
      d.error(pp, "expected a non-empty {\"/pointer\": value, ...} object");
      continue;
    }
    nlohmann::ordered_json c = nlohmann::ordered_json::object();
    for (const auto& [k, v] : pts[i].items()) {
      if (!valid_pointer(k)) d.error(json_child(pp, k), "keys must be JSON pointers such as \"/strategy/tp\"");
      c[k] = v;
    }
    axis.choices.push_back(std::move(c));
  }
  return axis;
}

Axis parse_axis(const nlohmann::json& a, const std::string& path, Diagnostics& d) {
  if (!a.is_object()) {
    d.error(path, "expected an axis: {\"path\", \"values\"}, {\"zip\": [...]} or {\"points\": [...]}");
    return {};
  }
  if (a.contains("zip")) {
    check_known_keys(a, {"zip"}, path, d);
    return parse_zip(a["zip"], json_child(path, "zip"), d);
  }
  if (a.contains("points")) {
    check_known_keys(a, {"points"}, path, d);
    return parse_points(a["points"], json_child(path, "points"), d);
  }
  Axis axis;
  auto vals = member_values(a, path, d);
  if (!a.contains("path") || !a["path"].is_string()) return axis;
  for (auto& v : vals) axis.choices.push_back(nlohmann::ordered_json{{a["path"].get<std::string>(), v}});
  return axis;
}

Expression parse_expression(const nlohmann::json& v, const std::string& path, Diagnostics& d) {
  if (!v.is_string()) {
    d.error(path, "expected an expression string such as \"/strategy/tp * /strategy/pp <= 16\"");
    return {};
  }
  try {
    return Expression::parse(v.get<std::string>());
  } catch (const ExprError& e) {
    d.error(path, e.what());
    return {};
  }
}

std::vector<Derived> parse_derived(const nlohmann::json& v, const std::string& path, Diagnostics& d) {
  std::vector<Derived> out;
  auto add = [&](const nlohmann::json& ptr, const nlohmann::json& expr, const std::string& p) {
    if (!valid_pointer(ptr)) d.error(p, "expected a JSON pointer such as \"/strategy/dp\" to set");
    Expression e = parse_expression(expr, p, d);
    if (ptr.is_string()) out.push_back({ptr.get<std::string>(), std::move(e), p});
  };
  if (v.is_object()) {
    for (const auto& [k, e] : v.items()) add(k, e, json_child(path, k));
  } else if (v.is_array()) {
    for (std::size_t i = 0; i < v.size(); ++i) {
      const std::string p = json_child(path, i);
      if (!v[i].is_object()) {
        d.error(p, "expected {\"path\": \"/pointer\", \"expr\": \"...\"}");
        continue;
      }
      check_known_keys(v[i], {"path", "expr"}, p, d);
      add(v[i].value("path", nlohmann::json()), v[i].value("expr", nlohmann::json()), p);
    }
  } else {
    d.error(path, "expected {\"/pointer\": \"expression\"} or a list of {\"path\", \"expr\"}");
  }
  return out;
}

// A cluster sweep's job list: a file name relative to the sweep file, checked readable.
void parse_jobs(const nlohmann::json& doc, const std::string& file, SweepSpec& s, Diagnostics& d) {
  const auto jobs = doc.value("jobs", nlohmann::json());
  if (!jobs.is_string() || jobs.get<std::string>().empty()) {
    d.error("/jobs", "expected the job list file of the cluster study (relative to this file)");
    return;
  }
  s.cluster_jobs = relative_to(file, jobs.get<std::string>());
  try {
    (void)read_json_file(s.cluster_jobs);
  } catch (const InputError& e) {
    d.error("/jobs", "job list " + s.cluster_jobs + ": " + (e.issues().empty() ? "" : e.issues().front().message));
  }
}

// "base" (a scenario) or "cluster_base" with "jobs" (a cluster study): exactly one of them.
void parse_base(const nlohmann::json& doc, const std::string& file, SweepSpec& s, Diagnostics& d) {
  const bool scenario = doc.contains("base"), cluster = doc.contains("cluster_base");
  if (scenario && cluster) {
    d.error("/cluster_base", "give either \"base\" (a scenario) or \"cluster_base\" (a cluster file, with \"jobs\")");
    return;
  }
  if (!scenario && !cluster) {
    d.error("/base",
            "missing: a scenario file name or an inline scenario (or \"cluster_base\" and \"jobs\" for a "
            "cluster study)");
    return;
  }
  if (scenario && doc.contains("jobs")) d.error("/jobs", "a job list goes with \"cluster_base\", not \"base\"");
  const std::string key = scenario ? "base" : "cluster_base";
  try {
    s.base = resolve_scenario(doc[key], file, "/" + key, scenario ? "scenario" : "cluster");
  } catch (const InputError& e) { d.merge(e); }
  if (cluster) parse_jobs(doc, file, s, d);
}

void collect_columns(SweepSpec& s) {
  auto add = [&](const std::string& p) {
    if (std::find(s.param_pointers.begin(), s.param_pointers.end(), p) == s.param_pointers.end())
      s.param_pointers.push_back(p);
  };
  for (const auto& a : s.axes)
    for (const auto& c : a.choices)
      for (const auto& [p, v] : c.items()) add(p);
  for (const auto& dv : s.derived) add(dv.pointer);
}

}  // namespace

std::string column_name(const std::string& pointer) {
  std::string out = pointer.size() > 1 && pointer[0] == '/' ? pointer.substr(1) : pointer;
  std::replace(out.begin(), out.end(), '/', '.');
  return out;
}

std::vector<MetricColumn> default_metrics() {
  std::vector<MetricColumn> out;
  for (const char* p : {"/step_time_s", "/tokens_per_s", "/mfu", "/bubble_fraction", "/energy/it_j",
                        "/energy/per_token_j", "/energy/average_power_w", "/devices"})
    out.push_back({column_name(p), p});
  return out;
}

std::vector<MetricColumn> default_cluster_metrics() {
  std::vector<MetricColumn> out;
  for (const char* p : {"/totals/completed", "/totals/makespan", "/totals/mean_completion", "/totals/p99_completion",
                        "/totals/device_hours", "/totals/energy_per_job"})
    out.push_back({column_name(p), p});
  return out;
}

std::vector<MetricColumn> parse_metrics(const nlohmann::json& v, const std::string& path, const std::string& file) {
  Diagnostics d;
  std::vector<MetricColumn> out;
  if (!v.is_array() || v.empty()) d.error(path, "expected a non-empty list of report pointers such as \"/step_time_s\"");
  for (std::size_t i = 0; d.ok() && i < v.size(); ++i) {
    const std::string p = json_child(path, i);
    if (v[i].is_object()) {
      check_known_keys(v[i], {"name", "pointer"}, p, d);
      const auto ptr = v[i].value("pointer", nlohmann::json());
      const auto name = v[i].value("name", nlohmann::json());
      if (!valid_pointer(ptr)) d.error(json_child(p, "pointer"), "expected a JSON pointer into the report");
      if (!name.is_string() || name.get<std::string>().empty()) d.error(json_child(p, "name"), "expected a name");
      if (d.ok()) out.push_back({name.get<std::string>(), ptr.get<std::string>()});
    } else if (valid_pointer(v[i])) {
      out.push_back({column_name(v[i].get<std::string>()), v[i].get<std::string>()});
    } else {
      d.error(p, "expected a JSON pointer into the report such as \"/step_time_s\", or {\"name\", \"pointer\"}");
    }
  }
  if (!d.ok()) throw InputError(d.issues(), file);
  return out;
}

SweepSpec parse_sweep(const nlohmann::json& doc, const std::string& file) {
  Diagnostics d;
  SweepSpec s;
  s.file = file;
  if (!doc.is_object()) throw InputError("", "a sweep file is a JSON object with \"base\" and \"axes\"", file);
  check_known_keys(doc, {"base", "cluster_base", "jobs", "axes", "derived", "constraints", "metrics", "description"},
                   "", d);
  parse_base(doc, file, s, d);
  const auto axes = doc.value("axes", nlohmann::json());
  if (!axes.is_array() || axes.empty()) d.error("/axes", "expected a non-empty list of axes");
  else
    for (std::size_t i = 0; i < axes.size(); ++i) s.axes.push_back(parse_axis(axes[i], json_child("/axes", i), d));
  if (doc.contains("derived")) s.derived = parse_derived(doc["derived"], "/derived", d);
  if (doc.contains("constraints")) {
    const auto& c = doc["constraints"];
    if (!c.is_array()) d.error("/constraints", "expected a list of expressions");
    else
      for (std::size_t i = 0; i < c.size(); ++i)
        s.constraints.push_back({parse_expression(c[i], json_child("/constraints", i), d), json_child("/constraints", i)});
  }
  try {
    s.metrics = doc.contains("metrics") ? parse_metrics(doc["metrics"], "/metrics", file)
                : s.cluster()           ? default_cluster_metrics()
                                        : default_metrics();
  } catch (const InputError& e) {
    d.merge(e);
  }
  if (d.ok()) check_sweep_pointers(s, d);
  if (!d.ok()) throw InputError(d.issues(), file);
  collect_columns(s);
  return s;
}

SweepSpec load_sweep(const std::string& file) { return parse_sweep(read_json_file(file), file); }

}  // namespace hcsim::sweep
