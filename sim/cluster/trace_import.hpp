#pragma once
// Reader of Alibaba PAI's public GPU-cluster trace, cluster-trace-gpu-v2020
// (github.com/alibaba/clusterdata, folder cluster-trace-gpu-v2020; characterised in Weng et
// al., "MLaaS in the Wild: Workload Analysis and Scheduling in Large-Scale Heterogeneous GPU
// Clusters", NSDI 2022). docs/cluster-traces.md describes what is kept and why.
//
// Two of the trace's tables are read, as comma-separated files without a header row (the
// column names ship apart, in `*.header` files; a first row equal to them is skipped):
//   pai_job_table.csv:  job_name, inst_id, user, status, start_time, end_time
//   pai_task_table.csv: job_name, task_name, inst_num, status, start_time, end_time,
//                       plan_cpu, plan_mem, plan_gpu, gpu_type
// The job table's start_time is the submission; a task's start_time and end_time are when
// its instances ran. Times are seconds from an undisclosed origin; an empty or 0 time is
// "not recorded". plan_gpu is the GPUs per instance in percent (100 = one whole GPU); empty
// means none. A job's GPU count is the sum over its tasks of inst_num x plan_gpu / 100.
//
// Kept: jobs whose status is `Terminated` (the trace's only successful end) and which
// held whole GPUs (every GPU task's plan_gpu a multiple of 100), at least one, with a
// recorded, non-empty run. Everything else is dropped and counted by reason.

#include <cstddef>
#include <cstdint>
#include <map>
#include <string>
#include <string_view>
#include <vector>

#include "sim/core/units.hpp"

namespace hcsim {

// One job of a GPU-cluster trace, as the synthetic draw (trace_synth.hpp) reads it.
struct TraceJob {
  std::string id;          // the trace's job_name
  Seconds submit{};        // submission
  Seconds start{}, end{};  // first GPU task start, last GPU task end
  std::uint32_t gpus = 0;  // whole GPUs held at once
  std::string status;      // the trace's status (always "Terminated" once kept)
  std::string gpu_type;    // of the job's largest GPU task, e.g. "V100", "T4", "MISC"
};

struct TraceImport {
  std::vector<TraceJob> jobs;                  // kept, by submit time, then id
  std::map<std::string, std::size_t> dropped;  // why a job was dropped -> how many jobs
  std::size_t job_rows = 0;                    // rows read from the job table
  std::size_t task_rows = 0;                   // rows read from the task table
  std::size_t unmatched_task_rows = 0;         // task rows whose job_name the job table lacks
  [[nodiscard]] std::size_t dropped_jobs() const;
};

// Parses the two tables' text. Every malformed row is reported at once as an InputError
// whose issue paths name the file, line and column, e.g. "pai_task_table.csv:12:plan_gpu"
// (a missing column names the first one missing; a row-wide problem names no column).
TraceImport parse_pai_trace(std::string_view job_table, std::string_view task_table,
                            const std::string& job_file = "pai_job_table.csv",
                            const std::string& task_file = "pai_task_table.csv");

// Reads `dir`/pai_job_table.csv and `dir`/pai_task_table.csv; an unreadable file is an
// InputError naming it.
TraceImport read_pai_trace(const std::string& dir);

}  // namespace hcsim
