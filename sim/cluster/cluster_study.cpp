#include "sim/cluster/cluster_study.hpp"

#include "sim/cluster/cluster_loop.hpp"
#include "sim/cluster/cluster_report.hpp"
#include "sim/cluster/scheduler.hpp"

namespace hcsim {

namespace {

std::unique_ptr<ClusterScheduler> make_scheduler(const ClusterSpec& c, nlohmann::json& resolved) {
  register_builtin_cluster_schedulers();
  Diagnostics diag;
  auto s = cluster_schedulers().build(c.scheduler["type"].get<std::string>(), c.scheduler, "/scheduler", diag, {"type"},
                                      &resolved);
  if (!s) throw InputError(diag.issues(), c.file);
  resolved["type"] = c.scheduler["type"];
  return s;
}

}  // namespace

nlohmann::json resolve_cluster_scheduler(const ClusterSpec& c) {
  nlohmann::json resolved;
  (void)make_scheduler(c, resolved);
  return resolved;
}

std::unique_ptr<ClusterStudy> run_cluster_study(const nlohmann::json& cluster_doc, const std::string& file,
                                                const std::string& jobs_file) {
  auto s = std::make_unique<ClusterStudy>();
  try {
    s->cluster = parse_cluster_file(cluster_doc, file);
  } catch (const InputError& e) { throw e.with_file(file); }
  auto scheduler = make_scheduler(s->cluster, s->scheduler);
  s->jobs = load_job_list(jobs_file, s->cluster);
  EngineOracle oracle(s->cluster, s->jobs);
  try {
    s->job_warnings = resolve_work(s->jobs, oracle, s->cluster);
  } catch (const InputError& e) { throw e.file().empty() ? e.with_file(jobs_file) : e; }
  s->result = simulate_cluster(s->cluster.layout, s->jobs.jobs, *scheduler, s->scheduler["type"].get<std::string>(),
                               oracle, {s->cluster.horizon});
  s->result.oracle_simulations = oracle.simulations();
  for (std::size_t i = 0; i < s->jobs.jobs.size(); ++i) {
    const JobOutcome& o = s->result.jobs[i];
    s->strategies.push_back(o.devices > 0 ? oracle.strategy(s->jobs.jobs[i], o.pool, o.devices) : nlohmann::json());
  }
  s->runs = oracle.runs();
  return s;
}

nlohmann::json cluster_study_json(const ClusterStudy& s) {
  nlohmann::json rep = cluster_report_json({s.cluster, s.jobs, s.result, &s.strategies});
  rep["scheduler_resolved"] = s.scheduler;
  return rep;
}

}  // namespace hcsim
