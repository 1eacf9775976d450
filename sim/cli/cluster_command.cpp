// `hcsim cluster run CLUSTER JOBS`: many jobs on one shared cluster (docs/cluster.md): the
// job list placed by a scheduler, the running jobs' steps simulated together on the shared
// fabric, the reports per job, per pool over time and for the cluster.
// `hcsim cluster jobs TRACE_DIR MAPPING`: a job list from a public GPU-cluster trace (Alibaba
// PAI cluster-trace-gpu-v2020), the trace's own jobs or N jobs drawn from it.
#include <cstdlib>
#include <iostream>
#include <memory>

#include <fmt/format.h>

#include "output.hpp"
#include "sim/cli/command.hpp"
#include "sim/cluster/cluster_file.hpp"
#include "sim/cluster/cluster_report.hpp"
#include "sim/cluster/cluster_study.hpp"
#include "sim/cluster/trace_params.hpp"
#include "warnings.hpp"

namespace hcsim {
namespace {

struct ClusterArgs {
  std::string cluster, jobs, scheduler, format = "table", out_dir, html;
  std::vector<std::string> sets;
  bool strict = false;
};

struct JobsArgs {
  std::string trace, mapping, out;
  std::size_t draw = 0;
  double days = 30;
  std::uint64_t seed = 1;
};

int run_cluster(const ClusterArgs& a) {
  // --scheduler first, so that --set /scheduler/PARAM applies to the scheduler it names.
  std::vector<std::string> sets;
  if (!a.scheduler.empty()) sets.push_back(fmt::format("/scheduler={{\"type\": \"{}\"}}", a.scheduler));
  sets.insert(sets.end(), a.sets.begin(), a.sets.end());
  nlohmann::json doc = read_json_file(a.cluster);
  try {
    for (const auto& o : sets) apply_override(doc, o);
  } catch (const InputError& e) { throw e.with_file(a.cluster); }
  auto study = run_cluster_study(doc, a.cluster, a.jobs);
  report_warnings(study->cluster.warnings, a.cluster, a.strict);
  report_warnings(study->job_warnings, a.jobs, a.strict);
  if (std::getenv("HCSIM_CLUSTER_STATS")) {
    const auto& r = study->runs;
    std::cerr << fmt::format("engine runs: {} alone, {} at a placement ({:.2f} s), {} together ({:.2f} s, {} jobs)\n",
                             r.alone, r.placed, r.placed_s, r.together, r.together_s, r.members);
  }
  const ClusterReportInput in{study->cluster, study->jobs, study->result, &study->strategies};
  nlohmann::json rep;
  if (!a.out_dir.empty() || a.format == "json") rep = cluster_study_json(*study);
  if (!a.out_dir.empty()) {
    ensure_dir(a.out_dir);
    write_file_atomic(a.out_dir + "/report.json", rep.dump(2) + "\n");
    write_file_atomic(a.out_dir + "/jobs.csv", cluster_jobs_csv(in));
    write_file_atomic(a.out_dir + "/pools.csv", cluster_pools_csv(in));
  }
  if (!a.out_dir.empty() || !a.html.empty()) {
    const std::string page = cluster_report_html(in);
    if (!a.out_dir.empty()) write_file_atomic(a.out_dir + "/report.html", page);
    if (!a.html.empty()) write_file_atomic(a.html, page);
  }
  if (a.format == "json")
    std::cout << rep.dump(2) << "\n";
  else
    std::cout << cluster_report_table(in);
  return 0;
}

int run_jobs(const JobsArgs& a) {
  TraceJobListParams params;
  try {
    params = parse_trace_mapping(read_json_file(a.mapping));
  } catch (const InputError& e) { throw e.file().empty() ? e.with_file(a.mapping) : e; }
  const TraceImport trace = read_pai_trace(a.trace);
  nlohmann::json list;
  try {
    list =
        a.draw > 0 ? synth_job_list(trace.jobs, {a.draw, a.days, a.seed}, params) : trace_job_list(trace.jobs, params);
  } catch (const InputError& e) { throw e.file().empty() ? e.with_file(a.mapping) : e; }
  const std::string text = list.dump(1) + "\n";
  std::cerr << fmt::format("{}: {} jobs kept, {} dropped; job list of {} jobs\n", a.trace, trace.jobs.size(),
                           trace.dropped_jobs(), list["jobs"].size());
  if (a.out.empty())
    std::cout << text;
  else
    write_file_atomic(a.out, text);
  return 0;
}

}  // namespace

void add_cluster_command(CLI::App& app, Commands& cmds) {
  auto* cluster = app.add_subcommand("cluster", "many jobs on one shared cluster: schedule, place, simulate together");
  cluster->require_subcommand(1);
  auto ca = std::make_shared<ClusterArgs>();
  auto* run = cluster->add_subcommand("run", "run a job list on a cluster under a scheduler and report");
  run->add_option("cluster", ca->cluster, "cluster file: pools, topology, scheduler, simulation")->required();
  run->add_option("jobs", ca->jobs, "job list: workloads and jobs")->required();
  run->add_option("--scheduler", ca->scheduler, "scheduler type over the cluster file's (its default parameters)");
  run->add_option("--set", ca->sets, "override a field of the cluster file: /json/pointer=value (repeatable)");
  run->add_option("--format", ca->format, "table or json")->check(CLI::IsMember({"table", "json"}));
  run->add_option("--out", ca->out_dir, "write report.json, jobs.csv, pools.csv and report.html to DIR");
  run->add_option("--html", ca->html, "write the HTML report (Gantt chart, utilisation) to FILE");
  add_strict_flag(*run, ca->strict);
  cmds.push_back({run, [ca] { return run_cluster(*ca); }});

  auto ja = std::make_shared<JobsArgs>();
  auto* jobs = cluster->add_subcommand("jobs", "a job list from an Alibaba PAI GPU trace (cluster-trace-gpu-v2020)");
  jobs->add_option("trace", ja->trace, "directory with pai_job_table.csv and pai_task_table.csv")->required();
  jobs->add_option("mapping", ja->mapping, "mapping file: workloads, size rules, pools")->required();
  jobs->add_option("--draw", ja->draw, "draw N jobs from the trace's distributions (default: the trace's own jobs)");
  jobs->add_option("--days", ja->days, "with --draw: the days the arrivals span")->check(CLI::PositiveNumber);
  jobs->add_option("--seed", ja->seed, "with --draw: the random seed");
  jobs->add_option("--out", ja->out, "write the job list to FILE (default: standard output)");
  cmds.push_back({jobs, [ja] { return run_jobs(*ja); }});
}

}  // namespace hcsim
