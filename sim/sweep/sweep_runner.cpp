#include "sweep_runner.hpp"

#include <exception>
#include <filesystem>
#include <optional>

#include <fmt/format.h>

#include "sim/core/error.hpp"
#include "sim/sweep/mpi_context.hpp"
#include "sim/sweep/progress.hpp"
#include "sim/sweep/record.hpp"
#include "sim/sweep/sweep_checks.hpp"
#include "sim/sweep/worker_pool.hpp"

namespace hcsim::sweep {
namespace {

struct Loaded {
  SweepSpec spec;
  std::vector<SweepPoint> points;
};

// Throws InputError when a record of results.jsonl is not a point of this sweep.
void check_record(const Loaded& s, const std::string& path, std::size_t line, const nlohmann::ordered_json& rec) {
  const auto index = rec["index"].get<std::size_t>();
  const auto fail = [&](const std::string& why) {
    throw InputError("", fmt::format("{} line {}: {}; it was written by another sweep: choose another --out or move "
                                     "the file away",
                                     path, line, why));
  };
  if (index >= s.points.size()) fail(fmt::format("point {} but this sweep has {} points", index, s.points.size()));
  if (!rec.contains("params") || rec["params"] != s.points[index].params)
    fail(fmt::format("point {} has parameters {} but this sweep's point {} has {}", index,
                     rec.value("params", nlohmann::ordered_json()).dump(), index, s.points[index].params.dump()));
  if (rec.value("status", "") == "ok") {
    const auto m = rec.value("metrics", nlohmann::ordered_json::object());
    bool same = m.is_object() && m.size() == s.spec.metrics.size();
    for (const auto& c : s.spec.metrics) same = same && m.contains(c.name);
    if (!same) fail("its metrics are not this sweep's metrics");
  }
}

// One point in a worker: the scenario simulated, or the cluster study run, to its record.
std::string run_point(const Loaded& s, std::size_t i) {
  Evaluation ev;
  try {
    const nlohmann::json doc = point_document(s.spec, s.points[i]);
    ev = s.spec.cluster() ? evaluate_cluster(doc, s.spec.base.file, s.spec.cluster_jobs)
                          : evaluate_scenario(doc, s.spec.base.file, needs_per_device(s.spec.metrics));
  } catch (const std::exception& e) {
    ev = {"error", e.what(), {}};
  }
  return make_record(i, s.points[i].params, ev, s.spec.metrics,
                     s.spec.cluster() ? cluster_record_keys() : std::vector<std::string>{});
}

// The master's part: directory, resumed results, the points still to run.
std::vector<std::size_t> prepare(const Loaded& s, const SweepOptions& o, ResultsStore& store, SweepSummary& sum) {
  if (o.shard_count == 0 || o.shard_index >= o.shard_count)
    throw InputError("", fmt::format("shard {}/{}: expected 0 <= i < n", o.shard_index, o.shard_count));
  std::error_code ec;
  std::filesystem::create_directories(o.out_dir, ec);
  if (ec) throw InputError("", fmt::format("cannot create the output directory {}: {}", o.out_dir, ec.message()));
  o.writer(o.out_dir + (s.spec.cluster() ? "/base_cluster.json" : "/base_scenario.json"),
           s.spec.base.doc.dump(2) + "\n");
  sum.resumed = store.open([&](std::size_t line, const nlohmann::ordered_json& rec) {
    check_record(s, store.jsonl_path(), line, rec);
  });
  std::vector<std::size_t> pending;
  for (std::size_t i = o.shard_index; i < s.points.size(); i += o.shard_count) {
    ++sum.selected;
    if (!store.done(i)) pending.push_back(i);
  }
  return pending;
}

}  // namespace

std::pair<std::size_t, std::size_t> parse_shard(const std::string& text) {
  std::size_t i = 0, n = 0;
  int used = 0;
  if (std::sscanf(text.c_str(), "%zu/%zu%n", &i, &n, &used) != 2 || static_cast<std::size_t>(used) != text.size() ||
      n == 0 || i >= n)
    throw InputError("", fmt::format("--shard expects i/n with 0 <= i < n (e.g. 3/16), got \"{}\"", text));
  return {i, n};
}

SweepSummary run_sweep(const SweepOptions& o) {
  std::optional<MpiContext> mpi;
  if (mpi_launched()) mpi.emplace();
  const bool use_mpi = mpi && mpi->size() > 1;
  SweepSummary sum;
  sum.writer_rank = !mpi || mpi->rank() == 0;
  sum.mpi = use_mpi;
  sum.workers = use_mpi ? mpi->size() - 1 : std::max(o.jobs, 1);

  // Every rank reads the sweep; all go on only if all could.
  Loaded s;
  std::vector<Issue> warnings;
  std::exception_ptr err;
  try {
    s.spec = load_sweep(o.file);
    s.points = enumerate_points(s.spec);
    warnings = sweep_warnings(s.spec, s.points);
    if (o.strict && !warnings.empty()) throw InputError(warnings, s.spec.base.file);
  } catch (...) {
    err = std::current_exception();
  }
  if (!(use_mpi ? mpi->all_ok(!err) : !err)) {
    if (!sum.writer_rank) {
      sum.failed = true;  // rank 0 says why
      return sum;
    }
    if (err) std::rethrow_exception(err);
    throw InputError("", "another MPI rank could not read the sweep file " + o.file);
  }
  sum.points = s.points.size();
  if (sum.writer_rank && o.warnings) o.warnings(warnings, s.spec.base.file);

  const JobFn job = [&s](std::size_t i) { return run_point(s, i); };
  if (use_mpi && !sum.writer_rank) {
    mpi->run({}, job, {});
    return sum;
  }
  ResultsStore store(o.out_dir, {s.spec.param_pointers, s.spec.metrics}, o.writer);
  std::vector<std::size_t> pending;
  try {
    pending = prepare(s, o, store, sum);
  } catch (...) {
    err = std::current_exception();  // MPI ranks still need their stop message
  }
  Progress progress("sweep", pending.size(), o.progress);
  const ResultFn done = [&](std::size_t i, std::string line) {
    store.append(i, line);
    const std::string status = nlohmann::json::parse(line).value("status", "");
    ++sum.ran;
    ++(status == "ok" ? sum.ok : status == "infeasible" ? sum.infeasible : sum.errors);
    progress.tick(status == "ok");
  };
  const CrashFn crashed = [&s](std::size_t i, const std::string& why) {
    return make_record(i, s.points[i].params, {"error", why, {}}, s.spec.metrics);
  };
  if (use_mpi) mpi->run(pending, job, done);
  else run_forked(pending, o.jobs, job, done, crashed);
  if (err) std::rethrow_exception(err);
  progress.finish();
  sum.seconds = progress.elapsed_s();
  store.finish();
  return sum;
}

}  // namespace hcsim::sweep
