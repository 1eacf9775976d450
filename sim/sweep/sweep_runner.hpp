#pragma once
// `hcsim sweep`: runs the points of a sweep file (sim/sweep/sweep_spec.hpp) in parallel
// worker processes, or over MPI ranks when started by mpirun, streaming each finished point
// to DIR/results.jsonl and DIR/results.csv (sim/sweep/results_store.hpp). A killed sweep
// started again with the same --out resumes where it stopped; the final files are in
// sweep order and byte-identical whatever the number of workers, ranks or interruptions.
// The base scenario is written beside them (DIR/base_scenario.json), so any row reruns as
// `hcsim run DIR/base_scenario.json --set <pointer>=<value> ...`; a cluster sweep's base
// is DIR/base_cluster.json, rerun as `hcsim cluster run DIR/base_cluster.json JOBS --set ...`.

#include <cstddef>
#include <functional>
#include <string>

#include "sim/core/error.hpp"
#include "sim/sweep/results_store.hpp"

namespace hcsim::sweep {

struct SweepOptions {
  std::string file;
  std::string out_dir = "sweep-out";
  int jobs = 1;
  std::size_t shard_index = 0, shard_count = 1;  // --shard i/n: points with index % n == i
  bool progress = true;
  AtomicWriter writer;  // write_file_atomic
  // The scenarios' warnings (sweep_checks.hpp), given once to `warnings` on the writer rank
  // before any point runs; with `strict`, an InputError instead and nothing is written.
  bool strict = false;
  std::function<void(const std::vector<Issue>&, const std::string& file)> warnings;
};

struct SweepSummary {
  bool writer_rank = true;  // false on MPI ranks other than 0 (they write nothing)
  bool failed = false;      // an MPI rank other than 0 that could not read the sweep (rank 0 says why)
  std::size_t points = 0;   // in the whole sweep
  std::size_t selected = 0; // in this shard
  std::size_t resumed = 0;  // already in results.jsonl
  std::size_t ran = 0, ok = 0, infeasible = 0, errors = 0;  // this run
  int workers = 1;
  bool mpi = false;
  double seconds = 0;
};

// "i/n" -> {i, n}; throws InputError unless 0 <= i < n.
std::pair<std::size_t, std::size_t> parse_shard(const std::string& text);

// Throws InputError on a bad sweep file, a bad --shard, or results in DIR from another sweep.
SweepSummary run_sweep(const SweepOptions& opt);

}  // namespace hcsim::sweep
