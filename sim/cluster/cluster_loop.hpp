#pragma once
// The scheduler loop (docs/cluster.md): many jobs on one shared cluster, event by event.
//
// Events are the jobs' arrivals (by arrival time, ties job index), their completions at the
// current rates, and the ends of restart periods. At each event time the loop
//   1. advances every running job: first its restart period, then steps at 1 / step;
//   2. finishes the jobs that completed (their devices are freed);
//   3. queues the arrivals; a job with no candidate (scheduler.hpp) on any of its pools is
//      reported as "fits no pool" and dropped, so it never blocks the queue;
//   4. asks the scheduler once, applies its preemptions and then its starts (placed by the
//      Placer, placement.hpp); a preempted job returns to the queue with its remaining steps
//      and pays its checkpoint_restart once, as a restart period, when it starts again;
//   5. when the set of jobs holding devices changed, asks the oracle for every one's step
//      time together (StepOracle::together; a job in its restart period is in the set);
//   6. closes and opens the JobSegments whose rate or placement changed (a restart period is
//      its own segment, step 0), and records a PoolSample.
// It ends when no event is left, or at the horizon: the jobs still queued or running then
// are reported as not completed. A queue that nothing can start any more (nothing running,
// no arrival left) ends the run too, its jobs reported.
//
// Completion times are computed once per rate change (now + restart left + remaining steps
// x step) and compared exactly, so a job completes at the event its time was taken from.

#include <limits>
#include <span>
#include <string>

#include "sim/cluster/cluster_types.hpp"
#include "sim/cluster/scheduler.hpp"

namespace hcsim {

struct ClusterLoopOptions {
  // The run stops there; the jobs not done by then are reported as not completed.
  Seconds horizon{std::numeric_limits<double>::infinity()};
};

// Runs `jobs` on `layout` under `scheduler` (reported as `scheduler_name`), asking `oracle`
// for step times and energies. Every field of the result is filled except
// oracle_simulations, which the oracle knows (the caller copies it in).
ClusterResult simulate_cluster(const ClusterLayout& layout, std::span<const JobSpec> jobs, ClusterScheduler& scheduler,
                               std::string scheduler_name, StepOracle& oracle, const ClusterLoopOptions& options = {});

}  // namespace hcsim
