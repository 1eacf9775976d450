#pragma once
// Job lists from a GPU-cluster trace (trace_import.hpp): the trace's own jobs as they came,
// or N synthetic jobs over D days drawn from its empirical distributions (docs/cluster-traces.md).
//
// The draw, with a seeded std::mt19937_64 (same seed, same bytes out, on any platform: the
// indices are drawn by rejection from the generator's raw output, not by a library
// distribution whose algorithm the standard leaves open):
//   - each job's (GPU count, run duration, GPU type) is one whole trace job's, drawn
//     uniformly: the joint distribution of size and length is kept (large jobs run longer);
//   - the gaps between arrivals are drawn from the trace's gaps between consecutive
//     submissions, then all scaled by one factor so the last of the N jobs arrives at D days
//     (the shape of the arrival process is the trace's, its rate is the one asked for).
// A GPU count above the node size is rounded up to whole nodes; its workload is the first
// rule's whose max_gpus covers it. The job list (the format the job-list parser reads):
//   { "workloads": { name: { "workload": ..., "strategy": ... } },
//     "jobs": [ { "name", "arrival": "<t> s", "workload", "devices",
//                 "work": { "duration": "<t> s", "pool" }, "priority": 0 } ] }
// where work is what the job does in `duration` alone on `pool` at its size (the trace's
// measured run time).

#include <cstddef>
#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "sim/cluster/trace_import.hpp"

namespace hcsim {

// Jobs of up to `max_gpus` GPUs run `workload` (a key of the job list's "workloads").
struct TraceWorkloadRule {
  std::uint32_t max_gpus = 0;
  std::string workload;
};

// How trace jobs become job-list entries (both functions below).
struct TraceJobListParams {
  nlohmann::json workloads = nlohmann::json::object();  // name -> {workload, strategy}, copied as is
  std::vector<TraceWorkloadRule> rules;                 // first match wins
  std::uint32_t gpus_per_node = 8;
  std::string pool;                                     // work.pool of every job ...
  std::map<std::string, std::string> pool_by_gpu_type;  // ... unless its trace gpu_type is here
  // Load knobs, for a cluster larger or busier than the trace's: every job's GPU count is
  // multiplied by size_scale (before the rounding to nodes), its duration by duration_scale.
  std::uint32_t size_scale = 1;
  double duration_scale = 1;
};

struct TraceSynthParams {
  std::size_t jobs = 0;
  double days = 0;
  std::uint64_t seed = 0;
};

// `gpus` rounded up to a multiple of `gpus_per_node` when above it; unchanged otherwise.
std::uint32_t round_to_nodes(std::uint32_t gpus, std::uint32_t gpus_per_node);

// The workload of the first rule with max_gpus >= gpus; empty when none covers it.
std::string workload_for(const std::vector<TraceWorkloadRule>& rules, std::uint32_t gpus);

// "12.5 s": fixed notation, at most 3 decimals, no trailing zeros (the job list's times).
std::string seconds_text(double seconds);

// N jobs over D days drawn from `trace` (see above). InputError (paths "/jobs", "/days",
// "/gpus_per_node", "/pool", "/rules/<i>/workload", "/trace") when the parameters or the
// trace cannot give a job list: no trace jobs, a rule naming no workload, a trace size no
// rule covers, ...
nlohmann::json synth_job_list(const std::vector<TraceJob>& trace, const TraceSynthParams& synth,
                              const TraceJobListParams& params);

// The trace's own jobs, in its order, named by their trace id: arrival = submit - first
// submit, duration = end - start. Same checks as synth_job_list.
nlohmann::json trace_job_list(const std::vector<TraceJob>& trace, const TraceJobListParams& params);

}  // namespace hcsim
