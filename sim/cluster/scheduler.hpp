#pragma once
// The cluster schedulers (docs/cluster.md): one interface, one registry keyed by the
// job-list "scheduler" "type" (style principle 1), filled by an explicit
// register_builtin_cluster_schedulers() call.
//
// At every event (an arrival, a completion, the end of a restart period) the scheduler loop
// (cluster_loop.hpp) shows the scheduler the waiting and running jobs and asks it once what
// to preempt and what to start. A job's candidates are its (pool, size) pairs: its pools
// (JobSpec::pools, or every pool) in pool order, its sizes (multiples of `quantum` in
// [min_devices, max_devices], ascending) that the pool can hold as whole nodes or part of
// one node and that the oracle can run alone (StepOracle::alone not nullopt). A job with no
// candidate never reaches a scheduler: the loop reports it and drops it.
//
// The built-in schedulers, one file each: fifo (scheduler_fifo.cpp), backfill
// (scheduler_backfill.cpp), srtf (scheduler_srtf.cpp), priority (scheduler_priority.cpp),
// heterogeneity-aware (scheduler_hetero.cpp).

#include <cstdint>
#include <span>
#include <vector>

#include "sim/cluster/cluster_types.hpp"
#include "sim/cluster/placement.hpp"
#include "sim/core/registry.hpp"

namespace hcsim {

// A job waiting to start (again).
struct QueuedJob {
  std::uint32_t job = 0;  // index in the job list
  double remaining_steps = 0;
  bool restarting_cost_pending = false;  // preempted: pays checkpoint_restart when it starts
};

// A job holding devices.
struct RunningJob {
  std::uint32_t job = 0;
  JobPlacement placement;
  double remaining_steps = 0;
  Seconds step{};          // current contended step time
  Seconds restart_left{};  // restart cost still to pay before it steps again
  Seconds started{};       // when it took its devices (this time)
};

// What a scheduler sees at one event.
struct SchedulerView {
  Seconds now{};
  std::span<const JobSpec> jobs;  // the whole job list
  const ClusterLayout& layout;
  std::vector<QueuedJob> queue;     // arrival order, ties job index
  std::vector<RunningJob> running;  // job index order
  const Placer& placer;             // the devices held now
  StepOracle& oracle;
};

struct Start {
  std::uint32_t job = 0, pool = 0, devices = 0;
};

// Applied by the loop: first every preemption (the job returns to the queue with its
// remaining steps), then every start in order; each start must fit at that point.
struct Decision {
  std::vector<std::uint32_t> preempt;
  std::vector<Start> start;
};

class ClusterScheduler {
 public:
  virtual ~ClusterScheduler() = default;
  virtual Decision decide(const SchedulerView& view) = 0;
};

Registry<ClusterScheduler>& cluster_schedulers();
// Idempotent.
void register_builtin_cluster_schedulers();

// ---- Helpers the schedulers share ----

// One (pool, size) a job can run at, with its step time alone there.
struct Candidate {
  std::uint32_t pool = 0, devices = 0;
  Seconds step{};
};

// JobSpec::pools, or every pool of `layout` when it is empty.
std::vector<std::uint32_t> job_pools(const JobSpec& job, const ClusterLayout& layout);
// Every candidate of `job`: pool order, then size ascending.
std::vector<Candidate> candidates(const JobSpec& job, const ClusterLayout& layout, StepOracle& oracle);
// The largest candidate size of each pool, pool order.
std::vector<Candidate> largest_per_pool(const std::vector<Candidate>& all);
// Time a waiting job needs at `c` alone: its pending restart cost plus remaining steps x step.
Seconds time_left(const JobSpec& job, const QueuedJob& q, const Candidate& c);
// Time a running job still needs at its current rate: restart_left + remaining steps x step.
Seconds time_left(const RunningJob& r);

// A decision under construction: a copy of the Placer that the scheduler places on
// tentatively, so that each start it records fits after the ones before it.
class DecisionBuilder {
 public:
  explicit DecisionBuilder(const SchedulerView& view);

  [[nodiscard]] bool fits(std::uint32_t pool, std::uint32_t devices) const { return placer_.fits(pool, devices); }
  // Records a start of `q` at `c` (asserts it fits).
  void start(const QueuedJob& q, const Candidate& c);
  // Records a preemption of `r` (its devices become free for the starts that follow).
  void preempt(const RunningJob& r);
  [[nodiscard]] bool preempted(std::uint32_t job) const;
  [[nodiscard]] const Placer& placer() const { return placer_; }

  // A job that will hold devices after this decision, with its estimated end.
  struct Holder {
    std::uint32_t pool = 0, devices = 0;
    Seconds end{};
  };
  // The view's running jobs not preempted (end: now + time_left) and the jobs started so far
  // (end: now + time_left alone at their candidate).
  [[nodiscard]] std::vector<Holder> holders() const;
  [[nodiscard]] Decision take() { return std::move(decision_); }

 private:
  const SchedulerView* view_;
  Placer placer_;
  Decision decision_;
  std::vector<Holder> started_;
};

// The first of `q`'s pools (pool order) where its largest size there fits now and `accept`
// says yes; recorded in `b`. False when there is none.
template <class Accept>
bool start_first_fit(DecisionBuilder& b, const QueuedJob& q, const std::vector<Candidate>& largest, Accept accept) {
  for (const auto& c : largest)
    if (b.fits(c.pool, c.devices) && accept(c)) {
      b.start(q, c);
      return true;
    }
  return false;
}

}  // namespace hcsim
