#include "scenario_source.hpp"

#include "scenarios/scenario.hpp"
#include "sim/cluster/cluster_study.hpp"
#include "sim/driver/run.hpp"
#include "sim/report/report.hpp"

namespace hcsim::sweep {

std::string relative_to(const std::string& spec_file, const std::string& name) {
  if (name.empty() || name[0] == '/') return name;
  const auto slash = spec_file.find_last_of('/');
  if (slash == std::string::npos) return name;
  return spec_file.substr(0, slash + 1) + name;
}

ScenarioSource resolve_scenario(const nlohmann::json& ref, const std::string& spec_file, const std::string& path,
                                const std::string& what) {
  if (ref.is_object()) return {ref, spec_file + "#" + path};
  if (!ref.is_string() || ref.get<std::string>().empty())
    throw InputError(path, "expected a " + what + " file name (relative to this file) or an inline " + what + " object",
                     spec_file);
  const std::string file = relative_to(spec_file, ref.get<std::string>());
  try {
    return {read_json_file(file), file};
  } catch (const InputError& e) {
    if (!e.file().empty() && e.file() != file) throw;
    const std::string msg = e.issues().empty() ? "" : e.issues().front().message;
    throw InputError(path, what + " " + file + ": " + msg, spec_file);
  }
}

void apply_assignments(nlohmann::json& doc, const nlohmann::ordered_json& assignments) {
  for (const auto& [ptr, value] : assignments.items()) doc[nlohmann::json::json_pointer(ptr)] = nlohmann::json(value);
}

std::string issues_text(const std::exception& e) {
  const auto* ie = dynamic_cast<const InputError*>(&e);
  if (!ie) return e.what();
  std::string out;
  for (const auto& i : ie->issues()) {
    if (!out.empty()) out += "; ";
    out += i.path.empty() ? i.message : i.path + ": " + i.message;
  }
  return out;
}

std::optional<std::vector<Issue>> scenario_warnings(const nlohmann::json& doc, const std::string& file) {
  try {
    return parse_scenario(doc, file).warnings;
  } catch (const InputError&) {
    return std::nullopt;
  }
}

std::optional<std::vector<Issue>> cluster_warnings(const nlohmann::json& doc, const std::string& file) {
  try {
    return parse_cluster_file(doc, file).warnings;
  } catch (const InputError&) { return std::nullopt; }
}

namespace {

// `report()` evaluated: ok with its report, infeasible for bad input (an InputError), error
// for anything else; never throws.
template <class Report>
Evaluation evaluate(Report report) {
  Evaluation ev;
  try {
    ev.report = report();
    ev.status = "ok";
  } catch (const InputError& e) {
    ev.status = "infeasible";
    ev.reason = issues_text(e);
  } catch (const std::exception& e) {
    ev.status = "error";
    ev.reason = e.what();
  }
  return ev;
}

}  // namespace

Evaluation evaluate_cluster(const nlohmann::json& doc, const std::string& file, const std::string& jobs_file) {
  return evaluate([&] { return cluster_study_json(*run_cluster_study(doc, file, jobs_file)); });
}

Evaluation evaluate_scenario(const nlohmann::json& doc, const std::string& file, bool per_device, bool power_curve) {
  return evaluate([&] {
    const Scenario sc = parse_scenario(doc, file);
    const RunOutput out = run_scenario(sc, {.power_curve = power_curve});
    return report_json(sc, out, per_device);
  });
}

}  // namespace hcsim::sweep
