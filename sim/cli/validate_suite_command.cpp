// `hcsim validate-suite DIR`: runs every scenario of a validation suite and compares one
// metric of each with its published value (docs/validation.md).
//
// DIR holds scenario files and expected.json, keyed by scenario file name:
//   {"drift_tolerance_pp": 1.0,
//    "cases": {"meg-t1-01.json": {"case": "MEG-T1-01", "metric": "/step_time_s", "value": 3.53,
//                                  "source": "...", "tf_per_gpu": 137, "recorded_error_pct": -0.4}}}
// metric is a JSON pointer into the run's JSON report (sim/report/report.hpp). The error of
// a case is (predicted - published) / published. recorded_error_pct is the error the
// calibrated presets gave when the suite was recorded; a case fails when its error drifts
// more than drift_tolerance_pp percentage points away from it (a regression guard, not a
// target), or when it cannot run (e.g. its layout no longer fits in memory). Exit 0 when
// every case passes, 1 otherwise, 2 for a malformed suite.
// tf_per_gpu (optional): the published achieved rate X. The published time is F / (n X)
// with the same FLOP count F, so the predicted rate is X · T_published / T_predicted.
// collective (optional): the case is one size of an nccl-tests-like sweep on the scenario's
// cluster (sim/cli/collective_sweep.hpp) instead of a training step,
//   "collective": {"op": "all_reduce", "group": "8", "size": "8 GiB", "algorithm": "auto", "mode": "event"}
// (group, algorithm and mode as `hcsim collective` takes them; defaults all, auto, event), and
// metric points into its row as `hcsim collective --format json` writes it ("/busbw", B/s).
#include <algorithm>
#include <chrono>
#include <cmath>
#include <filesystem>
#include <iostream>
#include <memory>
#include <optional>

#include <fmt/format.h>

#include "output.hpp"
#include "scenarios/scenario.hpp"
#include "sim/cli/collective_sweep.hpp"
#include "sim/cli/command.hpp"
#include "sim/cli/warnings.hpp"
#include "sim/driver/run.hpp"
#include "sim/report/report.hpp"

namespace hcsim {
namespace {

namespace fs = std::filesystem;
using nlohmann::json;

constexpr const char* kExpectedFile = "expected.json";

struct SuiteArgs {
  std::string dir;
  std::string format = "table";
  std::vector<std::string> sets;
  std::vector<std::string> only;  // --case: run these cases only
  bool record = false;
  bool strict = false;
};

struct Expected {
  std::string file;  // scenario file name inside the suite directory
  std::string name;  // case id
  std::string metric;
  double value = 0;
  std::string source;
  double tf_per_gpu = 0;  // 0: not given
  double recorded_error_pct = 0;
  bool has_recorded = false;
  std::optional<CollectiveRequest> collective;  // a collective case
};

struct Outcome {
  Expected exp;
  bool ran = false;
  std::string message;
  double predicted = 0;
  double error_pct = 0;
  double tf_per_gpu = 0;
  double peak_bytes = 0, capacity_bytes = 0;
  double wall_s = 0;
  bool pass = false;
};

double number_at(const json& j, const std::string& path, const char* key, std::vector<Issue>& issues) {
  if (!j.contains(key) || !j.at(key).is_number()) {
    issues.push_back({json_child(path, key), "expected a number"});
    return 0;
  }
  return j.at(key).get<double>();
}

// A collective case's request: op, group, size, algorithm and mode, strings each (the size
// is both ends of the sweep); errors name their JSON path.
CollectiveRequest parse_collective(const std::string& path, const json& c, std::vector<Issue>& issues) {
  CollectiveRequest r;
  if (!c.is_object()) {
    issues.push_back({path, "expected an object with op, group, size, algorithm and mode"});
    return r;
  }
  static const std::vector<std::string> known = {"op", "group", "size", "algorithm", "mode"};
  for (const auto& [k, v] : c.items()) {
    if (std::find(known.begin(), known.end(), k) == known.end()) {
      issues.push_back({json_child(path, k), "unknown key (known: op, group, size, algorithm, mode)"});
    } else if (!v.is_string()) {
      issues.push_back({json_child(path, k), "expected a string"});
    }
  }
  const auto text = [&](const char* k, std::string def) {
    return c.contains(k) && c.at(k).is_string() ? c.at(k).get<std::string>() : def;
  };
  if (!c.contains("size")) issues.push_back({json_child(path, "size"), "the size of the collective is required"});
  r.op = text("op", r.op);
  r.group = text("group", r.group);
  r.algorithm = text("algorithm", r.algorithm);
  r.mode = text("mode", r.mode);
  if (r.mode != "event" && r.mode != "flow") issues.push_back({json_child(path, "mode"), "expected event or flow"});
  r.min = r.max = text("size", "1 GiB");
  CollectiveOp op{};
  if (!parse_collective_op(r.op, op)) issues.push_back({json_child(path, "op"), "unknown collective \"" + r.op + "\""});
  try {
    (void)parse_collective_size(r.min, json_child(path, "size"));
  } catch (const InputError& err) {
    for (const Issue& i : err.issues()) issues.push_back(i);
  }
  r.where = [path](std::string_view field) {
    return json_child(path, field == "min" || field == "max" ? "size" : std::string(field));
  };
  return r;
}

Expected parse_case(const std::string& file, const json& c, std::vector<Issue>& issues) {
  const std::string path = json_child("/cases", file);
  Expected e;
  e.file = file;
  if (!c.is_object()) {
    issues.push_back({path, "expected an object"});
    return e;
  }
  static const std::vector<std::string> known = {
      "case", "metric", "value", "source", "tf_per_gpu", "recorded_error_pct", "notes", "collective"};
  for (const auto& [k, v] : c.items())
    if (std::find(known.begin(), known.end(), k) == known.end())
      issues.push_back({json_child(path, k),
                        "unknown key (known: case, metric, value, source, tf_per_gpu, "
                        "recorded_error_pct, notes, collective)"});
  e.name = c.value("case", file);
  if (c.contains("collective"))
    e.collective = parse_collective(json_child(path, "collective"), c.at("collective"), issues);
  e.metric = c.value("metric", std::string(e.collective ? "/busbw" : "/step_time_s"));
  e.source = c.value("source", std::string());
  e.value = number_at(c, path, "value", issues);
  if (e.value == 0) issues.push_back({json_child(path, "value"), "the published value must be non-zero"});
  if (c.contains("tf_per_gpu")) e.tf_per_gpu = number_at(c, path, "tf_per_gpu", issues);
  if (c.contains("recorded_error_pct")) {
    e.recorded_error_pct = number_at(c, path, "recorded_error_pct", issues);
    e.has_recorded = true;
  }
  if (e.source.empty()) issues.push_back({json_child(path, "source"), "every published value states its source"});
  return e;
}

// The suite: expected.json, and every scenario file of DIR listed in it.
std::vector<Expected> load_suite(const std::string& dir, json& doc, double& drift_pp) {
  const std::string file = (fs::path(dir) / kExpectedFile).string();
  doc = read_json_file(file);
  std::vector<Issue> issues;
  if (!doc.is_object() || !doc.contains("cases") || !doc.at("cases").is_object())
    throw InputError("/cases", "expected an object keyed by scenario file name", file);
  drift_pp = doc.value("drift_tolerance_pp", 1.0);
  std::vector<Expected> out;
  for (const auto& [name, c] : doc.at("cases").items()) out.push_back(parse_case(name, c, issues));
  // Every scenario in the directory must be a case: a file without an expected value
  // would otherwise pass unnoticed.
  std::vector<std::string> files;
  for (const auto& entry : fs::directory_iterator(dir))
    if (entry.path().extension() == ".json" && entry.path().filename() != kExpectedFile)
      files.push_back(entry.path().filename().string());
  std::sort(files.begin(), files.end());
  for (const auto& f : files)
    if (!doc.at("cases").contains(f)) issues.push_back({"/cases", "no expected value for scenario " + f});
  for (const auto& e : out)
    if (std::find(files.begin(), files.end(), e.file) == files.end())
      issues.push_back({json_child("/cases", e.file), "no such scenario file in " + dir});
  if (!issues.empty()) throw InputError(issues, file);
  std::sort(out.begin(), out.end(), [](const Expected& a, const Expected& b) { return a.file < b.file; });
  return out;
}

Outcome run_case(const std::string& dir, const Expected& e, const std::vector<std::string>& sets, double drift_pp,
                 bool strict) {
  Outcome o;
  o.exp = e;
  const std::string file = (fs::path(dir) / e.file).string();
  const Scenario sc = load_reported(file, sets, strict);  // a malformed scenario is bad input (exit 2)
  const auto t0 = std::chrono::steady_clock::now();
  // A collective case that cannot run (its group, algorithm or operation) is a malformed
  // suite: its InputError, naming the case's JSON path, leaves with exit code 2.
  json collective_row;
  if (e.collective) collective_row = collective_row_json(run_collective_sweep(sc, *e.collective).rows.at(0));
  try {
    const json rep = e.collective ? collective_row : report_json(sc, run_scenario(sc));
    const json::json_pointer ptr(e.metric);
    if (!rep.contains(ptr) || !rep.at(ptr).is_number()) {
      o.message = "the report has no number at " + e.metric;
    } else {
      o.ran = true;
      o.predicted = rep.at(ptr).get<double>();
      o.error_pct = (o.predicted - e.value) / e.value * 100.0;
      if (e.tf_per_gpu > 0 && o.predicted > 0) o.tf_per_gpu = e.tf_per_gpu * e.value / o.predicted;
      if (!e.collective) {
        o.peak_bytes = rep.at("/memory/peak_bytes"_json_pointer).get<double>();
        o.capacity_bytes = rep.at("/memory/capacity_bytes"_json_pointer).get<double>();
      }
    }
  } catch (const InputError& err) {
    o.message = err.with_file(file).render();  // e.g. the layout no longer fits in memory
  } catch (const json::exception& err) {
    throw InputError("/cases/" + e.file + "/metric", std::string("bad JSON pointer: ") + err.what());
  }
  o.wall_s = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  if (o.ran) {
    o.pass = !e.has_recorded || std::abs(o.error_pct - e.recorded_error_pct) <= drift_pp + 1e-9;
    if (!o.pass)
      o.message = fmt::format("error {:+.2f} % drifted more than {} pp from the recorded {:+.2f} %", o.error_pct,
                              drift_pp, e.recorded_error_pct);
  }
  return o;
}

struct Summary {
  double mean_abs = 0, max_abs = 0;
  std::string max_case;
  int passed = 0, ran = 0;
  double wall_s = 0;
};

Summary summarise(const std::vector<Outcome>& outs) {
  Summary s;
  for (const auto& o : outs) {
    s.wall_s += o.wall_s;
    if (o.pass) ++s.passed;
    if (!o.ran) continue;
    ++s.ran;
    s.mean_abs += std::abs(o.error_pct);
    if (std::abs(o.error_pct) >= s.max_abs) {
      s.max_abs = std::abs(o.error_pct);
      s.max_case = o.exp.name;
    }
  }
  if (s.ran > 0) s.mean_abs /= s.ran;
  return s;
}

std::string suite_table(const std::string& dir, const std::vector<Outcome>& outs, const Summary& s, double drift_pp) {
  constexpr double GiB = 1024.0 * 1024.0 * 1024.0;
  std::string t = fmt::format("validation suite {} ({} cases)\n", dir, outs.size());
  std::size_t w = 11;  // the case column fits the longest id
  for (const auto& o : outs) w = std::max(w, o.exp.name.size());
  t += fmt::format("{:<{}} {:<15} {:>10} {:>10} {:>8} {:>9} {:>7} {:>7} {:>13} {:>7}  {}\n", "case", w, "metric",
                   "published", "predicted", "error", "recorded", "TF pub", "TF sim", "memory GiB", "run s", "status");
  for (const auto& o : outs) {
    const std::string rec = o.exp.has_recorded ? fmt::format("{:+.2f}%", o.exp.recorded_error_pct) : "-";
    const std::string status = o.pass ? "ok" : "FAIL";
    if (!o.ran) {
      t += fmt::format("{:<{}} {:<15} {:>10.4g} {:>10} {:>8} {:>9} {:>7} {:>7} {:>13} {:>7.2f}  {}\n", o.exp.name, w,
                       o.exp.metric, o.exp.value, "-", "-", rec, "-", "-", "-", o.wall_s, status);
      t += "    " + o.message + "\n";
      continue;
    }
    const std::string tf_pub = o.exp.tf_per_gpu > 0 ? fmt::format("{:.0f}", o.exp.tf_per_gpu) : "-";
    const std::string tf_sim = o.tf_per_gpu > 0 ? fmt::format("{:.1f}", o.tf_per_gpu) : "-";
    const std::string mem =
        o.exp.collective ? "-" : fmt::format("{:.1f}/{:.1f}", o.peak_bytes / GiB, o.capacity_bytes / GiB);
    t +=
        fmt::format("{:<{}} {:<15} {:>10.4g} {:>10.4g} {:>+7.2f}% {:>9} {:>7} {:>7} {:>13} {:>7.2f}  {}\n", o.exp.name,
                    w, o.exp.metric, o.exp.value, o.predicted, o.error_pct, rec, tf_pub, tf_sim, mem, o.wall_s, status);
    if (!o.pass) t += "    " + o.message + "\n";
  }
  t += fmt::format("mean |error| {:.2f} % over {} cases\n", s.mean_abs, s.ran);
  t += fmt::format("max  |error| {:.2f} % ({})\n", s.max_abs, s.max_case);
  t += fmt::format("{} of {} cases within {} pp of their recorded errors ({:.2f} s simulated wall time)\n", s.passed,
                   outs.size(), drift_pp, s.wall_s);
  return t;
}

json to_json(const std::string& dir, const std::vector<Outcome>& outs, const Summary& s, double drift_pp) {
  json cases = json::array();
  for (const auto& o : outs) {
    json c = {{"case", o.exp.name},      {"scenario", o.exp.file}, {"metric", o.exp.metric},
              {"published", o.exp.value}, {"source", o.exp.source}, {"ran", o.ran},
              {"pass", o.pass},           {"wall_s", o.wall_s}};
    if (o.exp.has_recorded) c["recorded_error_pct"] = o.exp.recorded_error_pct;
    if (!o.message.empty()) c["message"] = o.message;
    if (o.ran) {
      c["predicted"] = o.predicted;
      c["error_pct"] = o.error_pct;
      if (!o.exp.collective) c["memory"] = {{"peak_bytes", o.peak_bytes}, {"capacity_bytes", o.capacity_bytes}};
      if (o.tf_per_gpu > 0) c["tf_per_gpu"] = {{"published", o.exp.tf_per_gpu}, {"predicted", o.tf_per_gpu}};
    }
    cases.push_back(std::move(c));
  }
  return {{"suite", dir},
          {"drift_tolerance_pp", drift_pp},
          {"cases", std::move(cases)},
          {"mean_abs_error_pct", s.mean_abs},
          {"max_abs_error_pct", s.max_abs},
          {"max_abs_error_case", s.max_case},
          {"passed", s.passed},
          {"failed", static_cast<int>(outs.size()) - s.passed},
          {"wall_s", s.wall_s}};
}

// --record: the current errors become the recorded ones (after a deliberate recalibration).
void record(const std::string& dir, json doc, const std::vector<Outcome>& outs) {
  for (const auto& o : outs) {
    if (!o.ran) throw InputError(json_child("/cases", o.exp.file), "cannot record a case that did not run: " + o.message);
    doc["cases"][o.exp.file]["recorded_error_pct"] = std::round(o.error_pct * 100.0) / 100.0;
  }
  write_file_atomic((fs::path(dir) / kExpectedFile).string(), doc.dump(2) + "\n");
}

std::vector<Expected> select(std::vector<Expected> all, const std::vector<std::string>& only) {
  if (only.empty()) return all;
  std::vector<Expected> out;
  std::vector<Issue> issues;
  for (const auto& name : only) {
    auto it = std::find_if(all.begin(), all.end(), [&](const Expected& e) { return e.name == name || e.file == name; });
    if (it == all.end()) issues.push_back({"", "--case: no case named " + name + " in the suite"});
    else out.push_back(*it);
  }
  if (!issues.empty()) throw InputError(issues);
  return out;
}

int run_suite(const SuiteArgs& a) {
  if (!fs::is_directory(a.dir)) throw InputError("", "not a directory: " + a.dir);
  json doc;
  double drift_pp = 1.0;
  const std::vector<Expected> cases = select(load_suite(a.dir, doc, drift_pp), a.only);
  if (a.record && !a.only.empty()) throw InputError("", "--record stores every case: do not combine it with --case");
  std::vector<Outcome> outs;
  for (const auto& e : cases) outs.push_back(run_case(a.dir, e, a.sets, drift_pp, a.strict));
  const Summary s = summarise(outs);
  if (a.format == "json") std::cout << to_json(a.dir, outs, s, drift_pp).dump(2) << "\n";
  else std::cout << suite_table(a.dir, outs, s, drift_pp);
  if (a.record) {
    record(a.dir, doc, outs);
    std::cerr << fmt::format("recorded the errors of {} cases in {}\n", outs.size(),
                             (fs::path(a.dir) / kExpectedFile).string());
    return 0;
  }
  return s.passed == static_cast<int>(outs.size()) ? 0 : 1;
}

}  // namespace

void add_validate_suite_command(CLI::App& app, Commands& cmds) {
  auto a = std::make_shared<SuiteArgs>();
  auto* cmd = app.add_subcommand("validate-suite",
                                 "run every scenario of DIR against its published value in DIR/expected.json "
                                 "(exit 1 when a case drifts from its recorded error)");
  cmd->add_option("dir", a->dir, "suite directory: scenarios and expected.json")->required();
  cmd->add_option("--format", a->format, "table or json")->check(CLI::IsMember({"table", "json"}));
  cmd->add_option("--set", a->sets, "override a field of every scenario: /json/pointer=value (repeatable)");
  cmd->add_option("--case", a->only, "run only this case (its id or scenario file name; repeatable)");
  cmd->add_flag("--record", a->record, "store the current errors as the recorded ones in expected.json");
  add_strict_flag(*cmd, a->strict);
  cmds.push_back({cmd, [a] { return run_suite(*a); }});
}

}  // namespace hcsim
