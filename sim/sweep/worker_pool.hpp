#pragma once
// Runs independent jobs (sweep points, candidate layouts, expectation scenarios) over
// forked worker processes on one machine. The parent hands out one job index at a time
// through a pipe (dynamic load balancing: a slow point never holds back the others) and
// reads each result back as a byte string. A worker that dies in the middle of a job (an
// internal assertion, a signal) costs only that job: it is reported through `crashed` and
// a fresh worker takes its place. Each job runs in its own process image copy, so the
// engine's one-SimGrid-per-process rule holds for every worker.

#include <cstddef>
#include <functional>
#include <string>
#include <vector>

namespace hcsim::sweep {

using JobFn = std::function<std::string(std::size_t index)>;             // runs in a worker
using ResultFn = std::function<void(std::size_t index, std::string result)>;  // runs in the parent
using CrashFn = std::function<std::string(std::size_t index, const std::string& why)>;

// Runs every index of `jobs` on `workers` processes (at least 1, at most jobs.size()),
// calling `done` in the parent as each finishes, in completion order. When a worker
// dies, `done` receives crashed(index, why) instead. Throws std::runtime_error when no
// worker can be started at all.
void run_forked(const std::vector<std::size_t>& jobs, int workers, const JobFn& job, const ResultFn& done,
                const CrashFn& crashed);

}  // namespace hcsim::sweep
