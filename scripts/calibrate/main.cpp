// hcsim-calibrate: least-squares fit of a few physical efficiency parameters to the
// published step times of a validation suite (docs/validation.md).
//
//   hcsim-calibrate --hcsim build/hcsim --params scripts/calibrate/parameters.json [--out fit.json]
//                   [--start NAME=VALUE]... [--fix NAME]... [--evaluate] [--max-iterations N] [-j N]
//
// Residual of case i: r_i = (T_predicted,i - T_published,i) / T_published,i, so the fit
// minimises the sum of squared relative errors of step time over all cases, with one set
// of values for every case. Each evaluation runs `hcsim validate-suite DIR --format json`
// with one --set per parameter pointer (values in SI: "scale" converts the parameter's
// display unit, e.g. 1e-6 for microseconds). A parameter may carry "tied" pointers, each
// set to its value times a stated factor (a ratio measured elsewhere), so that a quantity
// the suite cannot separate moves with the one it fits.
#include <ctime>
#include <fstream>
#include <iostream>
#include <map>
#include <mutex>
#include <stdexcept>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "levenberg_marquardt.hpp"
#include "suite_runner.hpp"

namespace hcsim::calibrate {
namespace {

using nlohmann::json;

struct Parameter {
  std::string name, unit;
  std::vector<std::string> pointers;
  // Values that move with this one (parameters file: "tied", each {"set", "factor"}): the
  // pointer is set to value x scale x factor, e.g. a chip's bf16 GEMM ceiling held at a
  // measured ratio to its fitted fp8 ceiling. They add no freedom to the fit.
  std::vector<std::pair<std::string, double>> tied;
  double scale = 1, start = 0, lo = 0, hi = 1;
  bool fixed = false;
};

struct Args {
  std::string hcsim = "build/hcsim", params = "scripts/calibrate/parameters.json", suite, out;
  std::map<std::string, double> start;
  std::vector<std::string> fix;
  bool evaluate = false;
  int max_iterations = 20;
  int jobs = 1;
};

Args parse_args(int argc, char** argv) {
  Args a;
  auto next = [&](int& i) -> std::string {
    if (i + 1 >= argc) throw std::runtime_error(std::string(argv[i]) + " needs a value");
    return argv[++i];
  };
  for (int i = 1; i < argc; ++i) {
    const std::string s = argv[i];
    if (s == "--hcsim") a.hcsim = next(i);
    else if (s == "--params") a.params = next(i);
    else if (s == "--suite") a.suite = next(i);
    else if (s == "--out") a.out = next(i);
    else if (s == "--fix") a.fix.push_back(next(i));
    else if (s == "--evaluate") a.evaluate = true;
    else if (s == "--max-iterations") a.max_iterations = std::stoi(next(i));
    else if (s == "-j" || s == "--jobs") a.jobs = std::stoi(next(i));
    else if (s == "--start") {
      const std::string kv = next(i);
      const auto eq = kv.find('=');
      if (eq == std::string::npos) throw std::runtime_error("--start expects NAME=VALUE, got " + kv);
      a.start[kv.substr(0, eq)] = std::stod(kv.substr(eq + 1));
    } else {
      throw std::runtime_error("unknown argument " + s + " (see the header of scripts/calibrate/main.cpp)");
    }
  }
  return a;
}

std::vector<Parameter> load_parameters(const json& doc, const Args& a) {
  std::vector<Parameter> ps;
  for (const auto& p : doc.at("parameters")) {
    Parameter q;
    q.name = p.at("name").get<std::string>();
    q.unit = p.value("unit", std::string());
    const json& set = p.at("set");
    if (set.is_array()) q.pointers = set.get<std::vector<std::string>>();
    else q.pointers = {set.get<std::string>()};
    q.scale = p.value("scale", 1.0);
    for (const auto& t : p.value("tied", json::array()))
      q.tied.emplace_back(t.at("set").get<std::string>(), t.at("factor").get<double>());
    q.start = a.start.count(q.name) ? a.start.at(q.name) : p.at("start").get<double>();
    q.lo = p.at("min").get<double>();
    q.hi = p.at("max").get<double>();
    q.fixed = p.value("fixed", false) || std::find(a.fix.begin(), a.fix.end(), q.name) != a.fix.end();
    ps.push_back(std::move(q));
  }
  for (const auto& [k, v] : a.start) {
    bool found = false;
    for (const auto& p : ps) found = found || p.name == k;
    if (!found) throw std::runtime_error("--start: no parameter named " + k);
  }
  return ps;
}

std::vector<std::string> sets_for(const std::vector<Parameter>& ps) {
  std::vector<std::string> sets;
  for (const auto& p : ps) {
    for (const auto& ptr : p.pointers) sets.push_back(fmt::format("{}={:.9g}", ptr, p.start * p.scale));
    for (const auto& [ptr, factor] : p.tied) sets.push_back(fmt::format("{}={:.9g}", ptr, p.start * p.scale * factor));
  }
  return sets;
}

std::string values_line(const std::vector<Parameter>& ps) {
  std::string s;
  for (const auto& p : ps) {
    s += fmt::format("{}{} = {:.4g}{}{}", s.empty() ? "" : ", ", p.name, p.start, p.unit.empty() ? "" : " ", p.unit);
    for (const auto& [ptr, factor] : p.tied) s += fmt::format(" ({} = {:.4g})", ptr, p.start * factor);
  }
  return s;
}

void print_cases(const SuiteResult& r) {
  std::cout << fmt::format("{:<11} {:>10} {:>10} {:>8} {:>12}\n", "case", "published", "predicted", "error",
                           "memory GiB");
  for (const auto& c : r.cases) {
    if (!c.ran) {
      std::cout << fmt::format("{:<11} {:>10.4g} {:>10} {:>8}  {}\n", c.name, c.published, "-", "-", c.message);
      continue;
    }
    std::cout << fmt::format("{:<11} {:>10.4g} {:>10.4g} {:>+7.2f}% {:>6.1f}/{:.1f}\n", c.name, c.published,
                             c.predicted, c.error_pct, c.peak_bytes / (1 << 30), c.capacity_bytes / (1 << 30));
  }
  std::cout << fmt::format("mean |error| {:.2f} %, max |error| {:.2f} %\n", r.mean_abs_error_pct,
                           r.max_abs_error_pct);
}

json result_json(const std::vector<Parameter>& ps, const SuiteResult& r, const std::string& cmd,
                 const FitResult* fit) {
  json j;
  char date[32];
  const std::time_t now = std::time(nullptr);
  std::strftime(date, sizeof date, "%Y-%m-%d", std::gmtime(&now));
  j["date"] = date;
  for (const auto& p : ps) {
    j["parameters"][p.name] = {{"value", p.start}, {"unit", p.unit}, {"fixed", p.fixed},
                               {"at_bound", p.start <= p.lo || p.start >= p.hi}};
    for (const auto& [ptr, factor] : p.tied) j["parameters"][p.name]["tied"][ptr] = p.start * factor;
  }
  for (const auto& c : r.cases)
    j["cases"][c.name] = {{"published", c.published}, {"predicted", c.predicted}, {"error_pct", c.error_pct},
                          {"ran", c.ran}};
  j["mean_abs_error_pct"] = r.mean_abs_error_pct;
  j["max_abs_error_pct"] = r.max_abs_error_pct;
  j["command"] = cmd;
  if (fit)
    j["fit"] = {{"iterations", fit->iterations}, {"evaluations", fit->evaluations}, {"cost", fit->cost},
                {"stop", fit->stop_reason}};
  return j;
}

int run(const Args& a) {
  std::ifstream in(a.params);
  if (!in) throw std::runtime_error("cannot read " + a.params);
  const json doc = json::parse(in);
  const std::string suite = a.suite.empty() ? doc.at("suite").get<std::string>() : a.suite;
  std::vector<Parameter> ps = load_parameters(doc, a);
  std::vector<int> free;
  for (int i = 0; i < static_cast<int>(ps.size()); ++i)
    if (!ps[i].fixed) free.push_back(i);

  auto with = [&](std::vector<Parameter> q, const Eigen::VectorXd& x) {
    for (std::size_t k = 0; k < free.size(); ++k) q[free[k]].start = x[static_cast<Eigen::Index>(k)];
    return q;
  };
  std::mutex log_mutex;
  int evals = 0;
  auto residuals = [&](const Eigen::VectorXd& x) {
    const std::vector<Parameter> q = with(ps, x);
    const SuiteResult r = run_suite(a.hcsim, suite, sets_for(q));
    Eigen::VectorXd res(static_cast<Eigen::Index>(r.cases.size()));
    for (std::size_t i = 0; i < r.cases.size(); ++i)  // a case that cannot run counts as a 100 % error
      res[static_cast<Eigen::Index>(i)] = r.cases[i].ran ? r.cases[i].error_pct / 100.0 : 1.0;
    const std::lock_guard<std::mutex> lock(log_mutex);
    std::cerr << fmt::format("[{:3}] {} -> mean {:.2f} %, max {:.2f} %{}\n", ++evals, values_line(q),
                             r.mean_abs_error_pct, r.max_abs_error_pct, r.all_ran() ? "" : " (a case did not run)");
    return res;
  };

  const auto n = static_cast<Eigen::Index>(free.size());
  Eigen::VectorXd x0(n), lo(n), hi(n);
  for (Eigen::Index k = 0; k < n; ++k) {
    x0[k] = ps[free[k]].start;
    lo[k] = ps[free[k]].lo;
    hi[k] = ps[free[k]].hi;
  }
  FitResult fit;
  const bool do_fit = !a.evaluate && n > 0;
  if (do_fit) {
    FitOptions opt;
    opt.max_iterations = a.max_iterations;
    opt.jobs = a.jobs;
    fit = levenberg_marquardt(residuals, x0, lo, hi, opt);
    ps = with(ps, fit.x);
    std::cout << fmt::format("fit: {} after {} iterations, {} suite evaluations\n", fit.stop_reason,
                             fit.iterations, fit.evaluations);
  }
  const SuiteResult r = run_suite(a.hcsim, suite, sets_for(ps));
  const std::string cmd = suite_command(a.hcsim, suite, sets_for(ps));
  std::cout << "values: " << values_line(ps) << "\n";
  for (const auto& p : ps)
    if (!p.fixed && (p.start <= p.lo || p.start >= p.hi))
      std::cout << fmt::format("note: {} sits at a bound of [{}, {}]\n", p.name, p.lo, p.hi);
  print_cases(r);
  std::cout << "reproduce: " << cmd << "\n";
  if (!a.out.empty()) std::ofstream(a.out) << result_json(ps, r, cmd, do_fit ? &fit : nullptr).dump(2) << "\n";
  return 0;
}

}  // namespace
}  // namespace hcsim::calibrate

int main(int argc, char** argv) {
  try {
    return hcsim::calibrate::run(hcsim::calibrate::parse_args(argc, argv));
  } catch (const std::exception& e) {
    std::cerr << "hcsim-calibrate: " << e.what() << "\n";
    return 2;
  }
}
