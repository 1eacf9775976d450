#include "check_runner.hpp"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <optional>

#include <fmt/format.h>

#include "sim/sweep/record.hpp"
#include "sim/sweep/scenario_source.hpp"
#include "sim/sweep/worker_pool.hpp"

namespace hcsim::sweep {
namespace {

std::string num_text(double v) { return fmt::format("{:.6g}", v); }
std::string pct(double f) { return fmt::format("{:.2f} %", 100.0 * f); }

// The metric of scenario `i`, or an error message in `err`.
std::optional<double> metric_of(const std::string& label, std::size_t i, const std::string& metric,
                                const std::vector<nlohmann::json>& reports, const std::vector<std::string>& why,
                                std::string& err) {
  if (reports[i].is_null()) {
    err = fmt::format("scenario {} could not be simulated: {}", label, why[i]);
    return std::nullopt;
  }
  const nlohmann::json v = report_value(reports[i], metric);
  if (!v.is_number()) {
    err = fmt::format("the report of {} has no number at {}{}", label, metric,
                      v.is_null() ? "" : " (it holds " + v.dump() + ")");
    return std::nullopt;
  }
  return v.get<double>();
}

CheckOutcome judge_value(const Expectation& x, double got) {
  const std::string& who = x.labels[0];
  CheckOutcome o{x.name, x.path, "pass", ""};
  std::string expected;
  bool ok = true;
  if (x.value) {
    const double tol = std::max(x.rel_tolerance.value_or(0) * std::fabs(*x.value), x.abs_tolerance.value_or(0));
    const double diff = got - *x.value;
    ok = std::fabs(diff) <= tol;
    expected = fmt::format("{} = {} ± {} ({} .. {})", x.metric, num_text(*x.value), num_text(tol),
                           num_text(*x.value - tol), num_text(*x.value + tol));
    if (!ok)
      o.message =
          fmt::format("{}: expected {}; got {}, {} {} ({} {} than allowed)", who, expected, num_text(got),
                      *x.value != 0 ? pct(std::fabs(diff / *x.value)) : num_text(std::fabs(diff)),
                      diff > 0 ? "above" : "below", num_text(std::fabs(diff) - tol), diff > 0 ? "higher" : "lower");
  }
  if (ok && x.at_most && got > *x.at_most) {
    ok = false;
    o.message = fmt::format("{}: expected {} <= {}; got {}, {} above", who, x.metric, num_text(*x.at_most),
                            num_text(got), num_text(got - *x.at_most));
  }
  if (ok && x.at_least && got < *x.at_least) {
    ok = false;
    o.message = fmt::format("{}: expected {} >= {}; got {}, {} below", who, x.metric, num_text(*x.at_least),
                            num_text(got), num_text(*x.at_least - got));
  }
  if (ok) o.message = fmt::format("{}: {} = {}", who, x.metric, num_text(got));
  o.status = ok ? "pass" : "fail";
  return o;
}

CheckOutcome judge_better(const Expectation& x, double a, double b) {
  const std::string& na = x.labels[0];
  const std::string& nb = x.labels[1];
  // Relative improvement of a over b, positive when a is better.
  const double gain = b != 0 ? (x.lower_is_better ? (b - a) : (a - b)) / std::fabs(b) : 0;
  // The slack absorbs the rounding of the ratio, so that "10 %" holds for 0.9 against 1.0.
  const bool ok = x.by_at_least > 0 ? gain >= x.by_at_least - 1e-12 : gain > 0;
  const std::string dir = x.lower_is_better ? "lower is better" : "higher is better";
  const std::string got = fmt::format("{} = {}, {} = {}: {} by {}", na, num_text(a), nb, num_text(b),
                                      gain > 0 ? "better" : gain < 0 ? "worse" : "equal", pct(std::fabs(gain)));
  CheckOutcome o{x.name, x.path, ok ? "pass" : "fail", ""};
  if (ok) o.message = fmt::format("{} ({}): {}", x.metric, dir, got);
  else
    o.message = fmt::format("expected {} to beat {} in {} ({}) by at least {}; got {}, short of it by {:.2f} points",
                            na, nb, x.metric, dir, pct(x.by_at_least), got, 100.0 * (x.by_at_least - gain));
  return o;
}

CheckOutcome judge_ranking(const Expectation& x, const std::vector<double>& v) {
  const char* sep = x.lower_is_better ? " < " : " > ";
  std::string expected, got;
  std::vector<std::size_t> order(v.size());
  for (std::size_t i = 0; i < v.size(); ++i) order[i] = i;
  std::stable_sort(order.begin(), order.end(),
                   [&](std::size_t a, std::size_t b) { return x.lower_is_better ? v[a] < v[b] : v[a] > v[b]; });
  bool ok = true;
  for (std::size_t i = 0; i < v.size(); ++i) {
    const auto& label = x.labels[i];
    expected += (i ? sep : "") + fmt::format("{} ({})", label, num_text(v[i]));
    got += (i ? sep : "") + fmt::format("{} ({})", x.labels[order[i]], num_text(v[order[i]]));
    if (i > 0) ok = ok && (x.lower_is_better ? v[i - 1] < v[i] : v[i - 1] > v[i]);
  }
  CheckOutcome o{x.name, x.path, ok ? "pass" : "fail", ""};
  const std::string by = fmt::format("by {} ({} first)", x.metric, x.lower_is_better ? "lowest" : "highest");
  o.message = ok ? fmt::format("{}: {}", by, expected)
                 : fmt::format("expected {}: {}; got {}", by, expected, got);
  return o;
}

}  // namespace

CheckOutcome judge(const Expectation& x, const std::vector<nlohmann::json>& reports,
                   const std::vector<std::string>& why) {
  std::vector<double> v;
  for (std::size_t k = 0; k < x.scenarios.size(); ++k) {
    std::string err;
    auto m = metric_of(x.labels[k], x.scenarios[k], x.metric, reports, why, err);
    if (!m) return {x.name, x.path, "error", err};
    v.push_back(*m);
  }
  switch (x.kind) {
    case Expectation::Kind::value: return judge_value(x, v[0]);
    case Expectation::Kind::better: return judge_better(x, v[0], v[1]);
    case Expectation::Kind::ranking: return judge_ranking(x, v);
  }
  return {x.name, x.path, "error", "unknown expectation"};
}

CheckResult run_check(const CheckSpec& spec, int jobs) {
  const auto t0 = std::chrono::steady_clock::now();
  const std::size_t n = spec.scenarios.size();
  std::vector<nlohmann::json> reports(n);
  std::vector<std::string> why(n);
  std::vector<std::size_t> all(n);
  for (std::size_t i = 0; i < n; ++i) all[i] = i;
  const JobFn job = [&spec](std::size_t i) {
    const Evaluation ev = evaluate_scenario(spec.scenarios[i].doc, spec.scenarios[i].file);
    return nlohmann::json{{"status", ev.status}, {"reason", ev.reason}, {"report", ev.report}}.dump(
        -1, ' ', false, nlohmann::json::error_handler_t::replace);
  };
  const ResultFn done = [&](std::size_t i, std::string out) {
    const auto r = nlohmann::json::parse(out);
    if (r["status"] == "ok") reports[i] = r["report"];
    else why[i] = r["reason"].get<std::string>();
  };
  const CrashFn crashed = [](std::size_t, const std::string& w) {
    return nlohmann::json{{"status", "error"}, {"reason", w}}.dump();
  };
  run_forked(all, jobs, job, done, crashed);
  CheckResult r;
  r.file = spec.file;
  for (const auto& x : spec.expectations) {
    r.outcomes.push_back(judge(x, reports, why));
    const auto& s = r.outcomes.back().status;
    ++(s == "pass" ? r.passed : s == "fail" ? r.failed : r.errors);
  }
  r.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  return r;
}

}  // namespace hcsim::sweep
