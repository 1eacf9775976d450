#include "trace_synth.hpp"

#include <algorithm>
#include <charconv>
#include <cmath>
#include <limits>
#include <random>

#include "sim/core/error.hpp"

namespace hcsim {
namespace {

constexpr double kDay = 86400;

// Uniform index in [0, n) from raw 64-bit draws, by rejection: no modulo bias, and the
// same sequence on every standard library (std::uniform_int_distribution's is not).
std::size_t draw_index(std::mt19937_64& rng, std::size_t n) {
  constexpr auto kMax = std::numeric_limits<std::uint64_t>::max();
  const std::uint64_t range = n;
  const std::uint64_t limit = kMax - kMax % range;  // a multiple of range
  for (;;) {
    const std::uint64_t x = rng();
    if (x < limit) return static_cast<std::size_t>(x % range);
  }
}

std::string names_of(const nlohmann::json& workloads) {
  std::string out;
  for (const auto& [name, spec] : workloads.items()) out += (out.empty() ? "" : ", ") + name;
  return out.empty() ? "(none)" : out;
}

void check_trace(const std::vector<TraceJob>& trace, Diagnostics& d) {
  if (trace.empty()) d.error("/trace", "the trace has no jobs to draw from (none was kept)");
  for (std::size_t i = 0; i < trace.size(); ++i) {
    if (trace[i].gpus == 0) d.error(json_child("/trace", i), "job " + trace[i].id + " holds no GPU");
    if (!(trace[i].end > trace[i].start))
      d.error(json_child("/trace", i), "job " + trace[i].id + " has no run time (end is not after start)");
  }
}

void check_rules(const std::vector<TraceJob>& trace, const TraceJobListParams& p, Diagnostics& d) {
  if (!p.workloads.is_object()) {
    d.error("/workloads", "expected an object of workloads by name");
    return;
  }
  if (p.rules.empty()) d.error("/rules", "no workload rule: every job needs one");
  for (std::size_t i = 0; i < p.rules.size(); ++i)
    if (!p.workloads.contains(p.rules[i].workload))
      d.error(
          json_child(json_child("/rules", i), "workload"),
          "unknown workload \"" + p.rules[i].workload + "\"; the job list's workloads are: " + names_of(p.workloads));
  if (p.gpus_per_node == 0 || p.rules.empty()) return;
  std::uint32_t uncovered = 0;  // the largest size no rule covers
  for (const auto& job : trace) {
    const auto devices = round_to_nodes(job.gpus * p.size_scale, p.gpus_per_node);
    if (workload_for(p.rules, devices).empty()) uncovered = std::max(uncovered, devices);
  }
  if (uncovered > 0)
    d.error("/rules", "no rule covers the trace's jobs of " + std::to_string(uncovered) +
                          " GPUs (after rounding to whole nodes); add a rule with max_gpus " +
                          std::to_string(uncovered) + " or more");
}

void check_params(const std::vector<TraceJob>& trace, const TraceJobListParams& p, Diagnostics& d) {
  check_trace(trace, d);
  if (p.gpus_per_node == 0) d.error("/gpus_per_node", "expected 1 or more GPUs per node, got 0");
  if (p.pool.empty()) d.error("/pool", "no pool named for the jobs' work");
  if (p.size_scale == 0) d.error("/size_scale", "expected 1 or more, got 0");
  if (!(p.duration_scale > 0)) d.error("/duration_scale", "expected more than 0");
  for (const auto& [type, pool] : p.pool_by_gpu_type)
    if (pool.empty()) d.error(json_child("/pool_by_gpu_type", type), "empty pool name");
  check_rules(trace, p, d);
}

std::string job_name(std::size_t i, std::size_t n) {
  const auto digits = std::max<std::size_t>(4, std::to_string(n).size());
  auto s = std::to_string(i + 1);
  return "j" + std::string(digits - s.size(), '0') + s;
}

nlohmann::json job_entry(const std::string& name, double arrival, const TraceJob& job, const TraceJobListParams& p) {
  const auto devices = round_to_nodes(job.gpus * p.size_scale, p.gpus_per_node);
  const auto typed = p.pool_by_gpu_type.find(job.gpu_type);
  const auto& pool = typed == p.pool_by_gpu_type.end() ? p.pool : typed->second;
  nlohmann::json work = {{"duration", seconds_text((job.end - job.start).value() * p.duration_scale)}, {"pool", pool}};
  return {{"name", name},       {"arrival", seconds_text(arrival)}, {"workload", workload_for(p.rules, devices)},
          {"devices", devices}, {"work", std::move(work)},          {"priority", 0}};
}

// Gaps between consecutive submissions, in submission order.
std::vector<double> submit_gaps(const std::vector<TraceJob>& trace) {
  std::vector<double> submits;
  submits.reserve(trace.size());
  for (const auto& job : trace) submits.push_back(job.submit.value());
  std::sort(submits.begin(), submits.end());
  std::vector<double> gaps;
  for (std::size_t i = 1; i < submits.size(); ++i) gaps.push_back(submits[i] - submits[i - 1]);
  return gaps;
}

// Arrival times: drawn gaps summed, scaled so the last is at `span`, floored to the
// millisecond the job list writes (so none passes `span`).
std::vector<double> scale_arrivals(std::vector<double> arrival, double span) {
  if (arrival.back() <= 0) return arrival;
  const double k = span / arrival.back();
  for (auto& a : arrival) a = std::floor(std::min(a * k, span) * 1000) / 1000;
  return arrival;
}

}  // namespace

std::uint32_t round_to_nodes(std::uint32_t gpus, std::uint32_t gpus_per_node) {
  if (gpus_per_node == 0 || gpus <= gpus_per_node) return gpus;
  return (gpus + gpus_per_node - 1) / gpus_per_node * gpus_per_node;
}

std::string workload_for(const std::vector<TraceWorkloadRule>& rules, std::uint32_t gpus) {
  for (const auto& rule : rules)
    if (rule.max_gpus >= gpus) return rule.workload;
  return {};
}

std::string seconds_text(double seconds) {
  if (seconds == 0) seconds = 0;  // no "-0"
  char buf[512];
  const auto [end, ec] = std::to_chars(buf, buf + sizeof buf, seconds, std::chars_format::fixed, 3);
  HCSIM_ASSERT(ec == std::errc(), "a time too large to write");
  std::string s(buf, end);
  while (s.back() == '0') s.pop_back();
  if (s.back() == '.') s.pop_back();
  return s + " s";
}

nlohmann::json synth_job_list(const std::vector<TraceJob>& trace, const TraceSynthParams& synth,
                              const TraceJobListParams& params) {
  Diagnostics d;
  if (synth.jobs == 0) d.error("/jobs", "expected 1 or more jobs, got 0");
  if (!(synth.days > 0) || !std::isfinite(synth.days))
    d.error("/days", "expected a number of days above 0, got " + std::to_string(synth.days));
  check_params(trace, params, d);
  d.throw_if_any();

  const auto gaps = submit_gaps(trace);
  std::mt19937_64 rng(synth.seed);
  std::vector<const TraceJob*> picks;
  std::vector<double> arrival(synth.jobs, 0.0);
  picks.reserve(synth.jobs);
  for (std::size_t i = 0; i < synth.jobs; ++i) {
    picks.push_back(&trace[draw_index(rng, trace.size())]);
    if (i > 0 && !gaps.empty()) arrival[i] = arrival[i - 1] + gaps[draw_index(rng, gaps.size())];
  }
  arrival = scale_arrivals(std::move(arrival), synth.days * kDay);

  nlohmann::json jobs = nlohmann::json::array();
  for (std::size_t i = 0; i < synth.jobs; ++i)
    jobs.push_back(job_entry(job_name(i, synth.jobs), arrival[i], *picks[i], params));
  return {{"workloads", params.workloads}, {"jobs", std::move(jobs)}};
}

nlohmann::json trace_job_list(const std::vector<TraceJob>& trace, const TraceJobListParams& params) {
  Diagnostics d;
  check_params(trace, params, d);
  d.throw_if_any();
  Seconds first = trace.front().submit;
  for (const auto& job : trace) first = min(first, job.submit);
  nlohmann::json jobs = nlohmann::json::array();
  for (const auto& job : trace) jobs.push_back(job_entry(job.id, (job.submit - first).value(), job, params));
  return {{"workloads", params.workloads}, {"jobs", std::move(jobs)}};
}

}  // namespace hcsim
