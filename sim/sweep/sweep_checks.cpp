#include "sweep_checks.hpp"

#include <algorithm>
#include <functional>
#include <optional>

#include <fmt/format.h>

#include "scenarios/scenario.hpp"
#include "scenarios/sections.hpp"
#include "sim/cluster/cluster_study.hpp"
#include "sim/core/nearest.hpp"

namespace hcsim::sweep {
namespace {

// Where the schema stands on `tokens`: known, open (an object whose keys the schema does
// not list), or unknown at `depth` (the names valid there in `valid`).
enum class Walk { known, open, unknown };
Walk walk_schema(const nlohmann::json& schema, const std::vector<std::string>& tokens, std::size_t& depth,
                 std::vector<std::string>& valid) {
  const nlohmann::json* node = &schema;
  for (depth = 0; depth < tokens.size(); ++depth) {
    if (node->contains("properties")) {
      const auto& props = (*node)["properties"];
      if (props.contains(tokens[depth])) {
        node = &props[tokens[depth]];
        continue;
      }
      if (node->value("additionalProperties", true)) return Walk::open;
      for (const auto& [k, v] : props.items()) valid.push_back(k);
      return Walk::unknown;
    }
    if (node->contains("items")) {
      node = &(*node)["items"];
      continue;
    }
    const auto type = node->value("type", nlohmann::json());
    if (type == "object" || type == "array" || type.is_null()) return Walk::open;
    return Walk::unknown;  // below a number, a string, a choice
  }
  return Walk::known;
}

std::string join_tokens(const std::vector<std::string>& tokens, std::size_t n) {
  std::string out;
  for (std::size_t i = 0; i < n; ++i) out = json_child(out, tokens[i]);
  return out;
}

// The unknown-key problem `parse` finds in `doc` (a base with a point's values set) at or
// above `ptr`, if any: the names it lists as valid go to `valid`, the pointer of their
// object to `parent`, what follows the unknown key in `ptr` to `rest`.
bool parser_rejects(const nlohmann::json& doc, const std::string& ptr,
                    const std::function<void(const nlohmann::json&)>& parse, std::vector<std::string>& valid,
                    std::string& parent, std::string& rest) {
  try {
    parse(doc);
  } catch (const InputError& e) {
    for (const auto& i : e.issues()) {
      if (!i.message.starts_with("unknown key") || !(ptr == i.path || ptr.starts_with(i.path + "/"))) continue;
      parent = i.path.substr(0, i.path.find_last_of('/'));
      rest = ptr.substr(i.path.size());
      // The parser names the one key meant, or lists the valid ones.
      if (const auto mean = i.message.find("did you mean \""); mean != std::string::npos) {
        const auto from = mean + 14;
        valid.push_back(i.message.substr(from, i.message.find('"', from) - from));
        return true;
      }
      const auto list = i.message.find("valid ones are: ");
      for (std::size_t at = list == std::string::npos ? std::string::npos : list + 16; at != std::string::npos;) {
        const auto comma = i.message.find(", ", at);
        valid.push_back(i.message.substr(at, comma == std::string::npos ? std::string::npos : comma - at));
        at = comma == std::string::npos ? comma : comma + 2;
      }
      return true;
    }
  } catch (const nlohmann::json::exception&) {
    return false;  // reported where the point is built
  }
  return false;
}

// The message for an unknown `ptr`, with the nearest of the valid keys (the misspelt key
// corrected, what follows it kept) and the base's own leaves when one is close.
std::string unknown_message(const nlohmann::json& base, const std::string& ptr, const std::vector<std::string>& valid,
                            const std::string& parent, const std::string& rest, const std::string& where) {
  std::vector<std::string> candidates;
  for (const auto& v : valid) candidates.push_back(json_child(parent, v) + rest);
  const nlohmann::json leaves = base.flatten();
  for (const auto& [k, v] : leaves.items()) candidates.push_back(k);
  std::string msg = fmt::format("pointer \"{}\" is neither {}", ptr, where);
  if (auto n = nearest_name(ptr, candidates, std::max<std::size_t>(3, ptr.size() / 4)))
    msg += fmt::format("; did you mean \"{}\"?", *n);
  return msg;
}

// A cluster file parsed as `hcsim cluster run` does before it reads the jobs: the file,
// then its scheduler's parameters.
void parse_cluster_doc(const nlohmann::json& doc) { (void)resolve_cluster_scheduler(parse_cluster_file(doc)); }

}  // namespace

std::string unknown_pointer(const nlohmann::json& base, const std::string& ptr, const nlohmann::json& value) {
  nlohmann::json::json_pointer jp;
  try {
    jp = nlohmann::json::json_pointer(ptr);
    if (base.contains(jp)) return {};
  } catch (const nlohmann::json::exception&) {
    return {};  // not a pointer: the sweep file's own check says so
  }
  std::vector<std::string> tokens;
  for (auto p = jp; !p.empty(); p = p.parent_pointer()) tokens.insert(tokens.begin(), p.back());
  std::size_t depth = 0;
  std::vector<std::string> valid;
  std::string parent, rest;
  const Walk w = walk_schema(sections::scenario_schema(), tokens, depth, valid);
  if (w == Walk::known) return {};
  if (w == Walk::unknown) {
    parent = join_tokens(tokens, depth);
    rest = ptr.substr(std::min(ptr.size(), join_tokens(tokens, depth + 1).size()));
  } else {
    nlohmann::json doc = base;
    try {
      doc[jp] = value;
    } catch (const nlohmann::json::exception&) {
      return {};  // reported where the point is built
    }
    if (!parser_rejects(
            doc, ptr, [](const nlohmann::json& d) { (void)parse_scenario(d); }, valid, parent, rest))
      return {};
  }
  return unknown_message(base, ptr, valid, parent, rest, "in the base scenario nor in the scenario schema");
}

std::string unknown_cluster_pointer(const nlohmann::json& base, const std::string& ptr,
                                    const nlohmann::ordered_json& choice) {
  nlohmann::json doc = base;
  try {
    if (base.contains(nlohmann::json::json_pointer(ptr))) return {};
    apply_assignments(doc, choice);
  } catch (const nlohmann::json::exception&) {
    return {};  // not a pointer, or not settable: reported where the point is built
  }
  std::vector<std::string> valid;
  std::string parent, rest;
  if (!parser_rejects(doc, ptr, parse_cluster_doc, valid, parent, rest)) return {};
  return unknown_message(base, ptr, valid, parent, rest, "in the base cluster file nor a field of a cluster file");
}

void check_sweep_pointers(const SweepSpec& spec, Diagnostics& d) {
  for (std::size_t a = 0; a < spec.axes.size(); ++a) {
    std::vector<std::string> seen;  // each pointer once, with its first value
    for (const auto& choice : spec.axes[a].choices)
      for (const auto& [ptr, value] : choice.items()) {
        if (std::find(seen.begin(), seen.end(), ptr) != seen.end()) continue;
        seen.push_back(ptr);
        const std::string why = spec.cluster() ? unknown_cluster_pointer(spec.base.doc, ptr, choice)
                                               : unknown_pointer(spec.base.doc, ptr, nlohmann::json(value));
        if (!why.empty()) d.error(json_child("/axes", a), why);
      }
  }
  for (const auto& dv : spec.derived) {
    const std::string why = spec.cluster() ? unknown_cluster_pointer(spec.base.doc, dv.pointer, {{dv.pointer, 1}})
                                           : unknown_pointer(spec.base.doc, dv.pointer, 1);
    if (!why.empty()) d.error(dv.path, why);
  }
}

std::vector<Issue> sweep_warnings(const SweepSpec& spec, const std::vector<SweepPoint>& points) {
  // Each choice of every axis is seen in the first point that takes it and parses (a point
  // the parser rejects has no warnings, and its row says why). Bounded so that a sweep
  // whose points mostly fail is not parsed point by point.
  constexpr std::size_t kMaxScanned = 4096, kMaxParsed = 256;
  std::vector<std::vector<bool>> seen;
  std::size_t left = 0;
  for (const auto& axis : spec.axes) {
    seen.emplace_back(axis.choices.size(), false);
    left += axis.choices.size();
  }
  auto takes = [](const SweepPoint& pt, const nlohmann::ordered_json& choice) {
    for (const auto& [k, v] : choice.items())
      if (!pt.params.contains(k) || pt.params[k] != v) return false;
    return true;
  };
  Diagnostics w;
  std::size_t parsed = 0;
  for (std::size_t i = 0; i < points.size() && i < kMaxScanned && left > 0 && parsed < kMaxParsed; ++i) {
    std::vector<std::pair<std::size_t, std::size_t>> fresh;  // (axis, choice) first met here
    for (std::size_t a = 0; a < spec.axes.size(); ++a)
      for (std::size_t c = 0; c < spec.axes[a].choices.size(); ++c)
        if (!seen[a][c] && takes(points[i], spec.axes[a].choices[c])) fresh.emplace_back(a, c);
    if (fresh.empty()) continue;
    ++parsed;
    std::optional<std::vector<Issue>> found;
    try {
      const nlohmann::json doc = point_document(spec, points[i]);
      found = spec.cluster() ? cluster_warnings(doc, spec.base.file) : scenario_warnings(doc, spec.base.file);
    } catch (const nlohmann::json::exception&) {
      continue;  // the point reports it
    }
    if (!found) continue;
    for (const auto& issue : *found) w.warn(issue.path, issue.message);
    for (const auto& [a, c] : fresh) seen[a][c] = true;
    left -= fresh.size();
  }
  return w.warnings();
}

}  // namespace hcsim::sweep
