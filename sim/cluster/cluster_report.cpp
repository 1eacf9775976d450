#include "sim/cluster/cluster_report.hpp"

#include <algorithm>
#include <cmath>

#include <fmt/format.h>

#include "sim/report/html_page.hpp"
#include "sim/report/html_svg.hpp"

namespace hcsim {

namespace {

double hours(Seconds s) { return s.value() / 3600.0; }

std::string pool_name(const ClusterReportInput& in, std::uint32_t p) {
  return p < in.cluster.layout.pools.size() ? in.cluster.layout.pools[p].name : "";
}

nlohmann::json job_json(const ClusterReportInput& in, std::size_t i) {
  const JobOutcome& o = in.result.jobs[i];
  const JobSpec& j = in.jobs.jobs[i];
  nlohmann::json v{{"name", o.name},
                   {"workload", in.jobs.workloads[j.workload].name},
                   {"arrival", o.arrival.value()},
                   {"steps", j.steps},
                   {"completed", o.completed},
                   {"preemptions", o.preemptions}};
  if (o.completed || o.run > Seconds{}) {
    v["pool"] = pool_name(in, o.pool);
    v["devices"] = o.devices;
    v["start"] = o.first_start.value();
    v["wait"] = o.wait.value();
    v["run"] = o.run.value();
    v["alone_step"] = o.alone_step.value();
    v["slowdown"] = o.slowdown;
    v["energy"] = o.energy.value();
    if (in.strategies && i < in.strategies->size() && !(*in.strategies)[i].is_null())
      v["strategy"] = (*in.strategies)[i];
  }
  if (o.completed) {
    v["end"] = o.end.value();
    v["completion"] = (o.end - o.arrival).value();
  } else {
    v["reason"] = o.reason;
  }
  return v;
}

}  // namespace

nlohmann::json cluster_report_json(const ClusterReportInput& in) {
  const ClusterResult& r = in.result;
  nlohmann::json pools = nlohmann::json::array();
  for (std::size_t p = 0; p < in.cluster.layout.pools.size(); ++p) {
    const auto& info = in.cluster.layout.pools[p];
    pools.push_back({{"name", info.name},
                     {"device", info.device},
                     {"devices", info.devices},
                     {"utilisation", p < r.utilisation.size() ? r.utilisation[p] : 0.0}});
  }
  nlohmann::json jobs = nlohmann::json::array();
  std::size_t completed = 0;
  for (std::size_t i = 0; i < r.jobs.size(); ++i) {
    jobs.push_back(job_json(in, i));
    completed += r.jobs[i].completed ? 1 : 0;
  }
  nlohmann::json timeline = nlohmann::json::array();
  for (const PoolSample& s : r.timeline)
    timeline.push_back({{"time", s.time.value()},
                        {"allocated", s.allocated},
                        {"busy", s.busy},
                        {"fragmented", s.fragmented},
                        {"queued", s.queued}});
  const double per_job = completed ? r.job_energy.value() / static_cast<double>(completed) : 0.0;
  return {{"name", in.cluster.name},
          {"scheduler", r.scheduler},
          {"mode", in.cluster.mode},
          {"contention", in.cluster.contention},
          {"totals",
           {{"jobs", r.jobs.size()},
            {"completed", completed},
            {"makespan", r.makespan.value()},
            {"mean_completion", r.mean_completion.value()},
            {"p99_completion", r.p99_completion.value()},
            {"device_hours", r.device_hours},
            {"job_energy", r.job_energy.value()},
            {"idle_energy", r.idle_energy.value()},
            {"energy_per_job", per_job},
            {"events", r.events},
            {"simulations", r.oracle_simulations}}},
          {"pools", pools},
          {"jobs", jobs},
          {"timeline", timeline}};
}

std::string cluster_report_table(const ClusterReportInput& in) {
  const ClusterResult& r = in.result;
  std::size_t completed = 0, waited = 0;
  double slow = 0;
  for (const JobOutcome& o : r.jobs) {
    if (!o.completed) continue;
    ++completed;
    slow += o.slowdown;
    waited += o.wait > Seconds{} ? 1 : 0;
  }
  std::string out = fmt::format("{}: {} jobs on {} devices, scheduler {}, {} mode{}\n", in.cluster.name, r.jobs.size(),
                                in.cluster.layout.devices(), r.scheduler, in.cluster.mode,
                                in.cluster.contention ? ", jobs simulated together on the shared fabric" : "");
  out += fmt::format("completed        {} of {} ({} waited)\n", completed, r.jobs.size(), waited);
  out += fmt::format("makespan         {:.2f} h\n", hours(r.makespan));
  out +=
      fmt::format("completion time  mean {:.2f} h   p99 {:.2f} h\n", hours(r.mean_completion), hours(r.p99_completion));
  const bool shared = in.cluster.contention && in.cluster.mode != "analytical";
  out += fmt::format("slowdown         mean {:.4f} ({})\n", completed ? slow / static_cast<double>(completed) : 1.0,
                     shared ? "contention on the fabric, placement" : "each job alone: no contention simulated");
  out += fmt::format("device-hours     {:.1f}\n", r.device_hours);
  for (std::size_t p = 0; p < in.cluster.layout.pools.size(); ++p)
    out += fmt::format("pool {:<11} {} x {}, utilisation {:.1f} %\n", in.cluster.layout.pools[p].name,
                       in.cluster.layout.pools[p].devices, in.cluster.layout.pools[p].device,
                       100 * (p < r.utilisation.size() ? r.utilisation[p] : 0.0));
  out += fmt::format("energy           jobs {:.4g} GJ   idle devices {:.4g} GJ   per job {:.4g} MJ\n",
                     r.job_energy.value() / 1e9, r.idle_energy.value() / 1e9,
                     completed ? r.job_energy.value() / 1e6 / static_cast<double>(completed) : 0.0);
  out += fmt::format("simulated        {} scheduler events, {} engine runs\n", r.events, r.oracle_simulations);
  return out;
}

std::string cluster_jobs_csv(const ClusterReportInput& in) {
  std::string out =
      "name,workload,arrival_s,pool,devices,start_s,end_s,wait_s,run_s,completion_s,alone_step_s,slowdown,energy_j,"
      "preemptions,completed\n";
  for (std::size_t i = 0; i < in.result.jobs.size(); ++i) {
    const JobOutcome& o = in.result.jobs[i];
    out += fmt::format("{},{},{:.6g},{},{},{:.6g},{:.6g},{:.6g},{:.6g},{:.6g},{:.6g},{:.6g},{:.6g},{},{}\n", o.name,
                       in.jobs.workloads[in.jobs.jobs[i].workload].name, o.arrival.value(), pool_name(in, o.pool),
                       o.devices, o.first_start.value(), o.end.value(), o.wait.value(), o.run.value(),
                       o.completed ? (o.end - o.arrival).value() : 0.0, o.alone_step.value(), o.slowdown,
                       o.energy.value(), o.preemptions, o.completed ? 1 : 0);
  }
  return out;
}

std::string cluster_pools_csv(const ClusterReportInput& in) {
  std::string out = "time_s,queued";
  for (const auto& p : in.cluster.layout.pools) out += fmt::format(",{0}_allocated,{0}_busy,{0}_fragmented", p.name);
  out += "\n";
  for (const PoolSample& s : in.result.timeline) {
    out += fmt::format("{:.6g},{}", s.time.value(), s.queued);
    for (std::size_t p = 0; p < s.allocated.size(); ++p)
      out += fmt::format(",{},{},{}", s.allocated[p], p < s.busy.size() ? s.busy[p] : 0,
                         p < s.fragmented.size() ? s.fragmented[p] : 0);
    out += "\n";
  }
  return out;
}

std::vector<std::vector<double>> utilisation_bins(const ClusterResult& r, const ClusterLayout& layout,
                                                  std::size_t bins) {
  std::vector<std::vector<double>> out(layout.pools.size(), std::vector<double>(bins, 0.0));
  const double span = r.makespan.value();
  if (!(span > 0) || bins == 0) return out;
  const double w = span / static_cast<double>(bins);
  for (std::size_t k = 0; k < r.timeline.size(); ++k) {
    const double a = r.timeline[k].time.value();
    const double b = k + 1 < r.timeline.size() ? r.timeline[k + 1].time.value() : span;
    for (std::size_t p = 0; p < layout.pools.size() && p < r.timeline[k].allocated.size(); ++p) {
      const double share = static_cast<double>(r.timeline[k].allocated[p]) / layout.pools[p].devices;
      // Spread [a, b) over the bins it covers.
      for (auto i = static_cast<std::size_t>(std::max(0.0, std::floor(a / w))); i < bins; ++i) {
        const double lo = std::max(a, w * static_cast<double>(i)), hi = std::min(b, w * static_cast<double>(i + 1));
        if (hi <= lo) break;
        out[p][i] += share * (hi - lo) / w;
      }
    }
  }
  return out;
}

namespace {

// Days on the axis past two days, else hours.
html::TimeAxis time_axis(Seconds span, double row_height) {
  if (span.value() > 2 * 86400) return {"days", 1.0 / 86400, row_height};
  return {"hours", 1.0 / 3600, row_height};
}

std::string gantt(const ClusterReportInput& in) {
  const ClusterResult& r = in.result;
  std::vector<html::TimelineRow> rows(r.jobs.size());
  for (std::size_t i = 0; i < r.jobs.size(); ++i) {
    rows[i].label = r.jobs[i].name;
    const Seconds start = r.jobs[i].completed || r.jobs[i].run > Seconds{} ? r.jobs[i].first_start : r.makespan;
    if (start > r.jobs[i].arrival) rows[i].spans.push_back({r.jobs[i].arrival.value(), start.value(), "waiting", 1});
  }
  for (const JobSegment& s : r.segments) {
    const double alone = r.jobs[s.job].alone_step.value();
    const std::string_view what = s.step <= Seconds{}                   ? "restarting"
                                  : s.step.value() > alone * (1 + 1e-6) ? "contended"
                                                                        : "running";
    rows[s.job].spans.push_back({s.begin.value(), s.end.value(), what, 1});
  }
  const double row_h = rows.size() <= 60 ? 14 : std::max(1.0, 1200.0 / static_cast<double>(rows.size()));
  return html::timeline("gantt", "Jobs over time: waiting, running alone, slowed by contention, restarting",
                        r.makespan.value(), rows, time_axis(r.makespan, row_h));
}

}  // namespace

std::string cluster_report_html(const ClusterReportInput& in) {
  const ClusterResult& r = in.result;
  const nlohmann::json totals = cluster_report_json(in)["totals"];
  std::vector<std::pair<std::string, std::string>> figs{
      {"jobs completed", fmt::format("{} of {}", totals["completed"].get<std::size_t>(), r.jobs.size())},
      {"makespan", fmt::format("{:.1f} h", hours(r.makespan))},
      {"mean completion", fmt::format("{:.2f} h", hours(r.mean_completion))},
      {"p99 completion", fmt::format("{:.2f} h", hours(r.p99_completion))},
      {"idle energy", fmt::format("{:.3g} GJ", r.idle_energy.value() / 1e9)}};
  std::vector<std::string> sections{html::section("summary", "Summary", html::figures(figs))};
  std::string curves;
  const auto bins = utilisation_bins(r, in.cluster.layout, 240);
  for (std::size_t p = 0; p < bins.size(); ++p)
    curves += html::step_curve("utilisation-" + in.cluster.layout.pools[p].name,
                               "Pool " + in.cluster.layout.pools[p].name + ": share of devices allocated", "",
                               r.makespan.value(), bins[p], time_axis(r.makespan, 14));
  sections.push_back(html::section("utilisation", "Utilisation per pool", curves));
  sections.push_back(html::section("gantt-chart", "Gantt chart", gantt(in)));
  std::vector<std::vector<std::string>> rows;
  for (std::size_t i = 0; i < r.jobs.size(); ++i) {
    const JobOutcome& o = r.jobs[i];
    rows.push_back({o.name, in.jobs.workloads[in.jobs.jobs[i].workload].name, pool_name(in, o.pool),
                    fmt::format("{}", o.devices), fmt::format("{:.2f}", hours(o.wait)),
                    o.completed ? fmt::format("{:.2f}", hours(o.end - o.arrival)) : o.reason,
                    fmt::format("{:.4f}", o.slowdown)});
  }
  sections.push_back(html::section(
      "jobs", "Jobs", html::table({"job", "workload", "pool", "devices", "wait h", "completion h", "slowdown"}, rows)));
  return html::page(in.cluster.name, fmt::format("scheduler {} · {} mode", r.scheduler, in.cluster.mode), sections,
                    "hcsim cluster");
}

}  // namespace hcsim
