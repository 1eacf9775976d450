// `hcsim sweep SWEEP.json [-j N] [--out DIR] [--shard i/n]` (sim/sweep/sweep_runner.hpp).
#include <iostream>
#include <memory>

#include <fmt/format.h>

#include "interrupt.hpp"
#include "output.hpp"
#include "warnings.hpp"
#include "sim/cli/command.hpp"
#include "sim/sweep/sweep_runner.hpp"

namespace hcsim {
namespace {

struct SweepArgs {
  std::string file, out, shard;
  int jobs = 1;
  bool quiet = false;
  bool strict = false;
};

std::string default_out(const std::string& file) {
  std::string stem = file.substr(file.find_last_of('/') == std::string::npos ? 0 : file.find_last_of('/') + 1);
  if (stem.size() > 5 && stem.ends_with(".json")) stem.resize(stem.size() - 5);
  return stem + "-results";
}

int run_sweep_command(const SweepArgs& a) {
  sweep::SweepOptions o;
  o.file = a.file;
  o.out_dir = a.out.empty() ? default_out(a.file) : a.out;
  o.jobs = a.jobs;
  // The finished points are in results.jsonl, which a rerun reads back (results_store.hpp).
  std::string resume = program_name() + " sweep " + shell_word(a.file) + " --out " + shell_word(o.out_dir);
  if (a.jobs != 1) resume += " -j " + std::to_string(a.jobs);
  if (!a.shard.empty()) resume += " --shard " + shell_word(a.shard);
  if (a.quiet) resume += " -q";
  if (a.strict) resume += " --strict";
  set_interrupt_message("hcsim: interrupted; the points that finished are kept in " + o.out_dir +
                        "/results.jsonl — resume with: " + resume);
  if (!a.shard.empty()) std::tie(o.shard_index, o.shard_count) = sweep::parse_shard(a.shard);
  o.progress = !a.quiet;
  o.writer = write_file_atomic;
  o.strict = a.strict;
  o.warnings = [](const std::vector<Issue>& w, const std::string& file) { report_warnings(w, file, false); };
  const sweep::SweepSummary s = sweep::run_sweep(o);
  if (s.failed) return 2;
  if (!s.writer_rank) return 0;
  const double rate = s.seconds > 0 ? static_cast<double>(s.ran) / s.seconds : 0;
  std::cout << fmt::format(
      "sweep: {} points{}, {} already done, {} run ({} ok, {} infeasible, {} errors) in {:.2f} s, {:.1f} points/s on "
      "{} {}\nresults: {}/results.jsonl, {}/results.csv\n",
      s.points, o.shard_count > 1 ? fmt::format(" ({} in shard {}/{})", s.selected, o.shard_index, o.shard_count) : "",
      s.resumed, s.ran, s.ok, s.infeasible, s.errors, s.seconds, rate, s.workers,
      s.mpi ? "MPI worker ranks" : (s.workers == 1 ? "worker" : "workers"), o.out_dir, o.out_dir);
  if (s.errors > 0) {
    std::cerr << fmt::format("sweep: {} points failed inside the simulator (status \"error\"; see their reason)\n",
                             s.errors);
    return 1;
  }
  return 0;
}

}  // namespace

void add_sweep_command(CLI::App& app, Commands& cmds) {
  auto a = std::make_shared<SweepArgs>();
  auto* cmd = app.add_subcommand("sweep", "run every point of a sweep file; resumable, parallel, MPI-aware");
  cmd->add_option("sweep", a->file, "sweep JSON file (docs/sweeps.md)")->required();
  cmd->add_option("-j,--jobs", a->jobs, "worker processes (default 1; under mpirun the ranks are the workers)")
      ->check(CLI::Range(1, 1024));
  cmd->add_option("--out", a->out, "directory for results.jsonl and results.csv (default <sweep>-results)");
  cmd->add_option("--shard", a->shard, "run only points with index % n == i (e.g. $SLURM_ARRAY_TASK_ID/16)");
  cmd->add_flag("-q,--quiet", a->quiet, "no progress on standard error");
  add_strict_flag(*cmd, a->strict);
  cmds.push_back({cmd, [a] { return run_sweep_command(*a); }});
}

}  // namespace hcsim
