#include "sim/cluster/scheduler.hpp"

#include <algorithm>

#include "sim/cluster/scheduler_builtins.hpp"
#include "sim/core/error.hpp"

namespace hcsim {

Registry<ClusterScheduler>& cluster_schedulers() {
  static Registry<ClusterScheduler> r("cluster scheduler");
  return r;
}

void register_builtin_cluster_schedulers() {
  static bool done = false;
  if (done) return;
  done = true;
  auto& r = cluster_schedulers();
  cluster_detail::add_fifo(r);
  cluster_detail::add_backfill(r);
  cluster_detail::add_srtf(r);
  cluster_detail::add_priority(r);
  cluster_detail::add_hetero(r);
}

std::vector<std::uint32_t> job_pools(const JobSpec& job, const ClusterLayout& layout) {
  if (!job.pools.empty()) return job.pools;
  std::vector<std::uint32_t> out(layout.pools.size());
  for (std::uint32_t p = 0; p < out.size(); ++p) out[p] = p;
  return out;
}

std::vector<Candidate> candidates(const JobSpec& job, const ClusterLayout& layout, StepOracle& oracle) {
  std::vector<Candidate> out;
  const std::uint32_t q = std::max<std::uint32_t>(job.quantum, 1);
  const std::uint32_t g = layout.gpus_per_node;
  const std::uint32_t first = (std::max<std::uint32_t>(job.min_devices, 1) + q - 1) / q * q;
  for (auto pool : job_pools(job, layout)) {
    if (pool >= layout.pools.size()) continue;
    for (std::uint32_t n = first; n <= job.max_devices; n += q) {
      // The placement's shapes: part of one node, or whole nodes of the pool.
      if (n > layout.pools[pool].devices || (n >= g && n % g != 0)) continue;
      if (auto step = oracle.alone(job, pool, n)) out.push_back({.pool = pool, .devices = n, .step = *step});
    }
  }
  return out;
}

std::vector<Candidate> largest_per_pool(const std::vector<Candidate>& all) {
  std::vector<Candidate> out;
  for (const auto& c : all) {
    if (!out.empty() && out.back().pool == c.pool)
      out.back() = c;  // sizes ascend within a pool
    else
      out.push_back(c);
  }
  return out;
}

Seconds time_left(const JobSpec& job, const QueuedJob& q, const Candidate& c) {
  return (q.restarting_cost_pending ? job.checkpoint_restart : Seconds{}) + c.step * q.remaining_steps;
}

Seconds time_left(const RunningJob& r) { return r.restart_left + r.step * r.remaining_steps; }

DecisionBuilder::DecisionBuilder(const SchedulerView& view) : view_(&view), placer_(view.placer) {}

void DecisionBuilder::start(const QueuedJob& q, const Candidate& c) {
  placer_.place(c.pool, c.devices);  // asserts it fits
  decision_.start.push_back({.job = q.job, .pool = c.pool, .devices = c.devices});
  started_.push_back({.pool = c.pool, .devices = c.devices, .end = view_->now + time_left(view_->jobs[q.job], q, c)});
}

void DecisionBuilder::preempt(const RunningJob& r) {
  HCSIM_ASSERT(!preempted(r.job), "job preempted twice in one decision");
  placer_.release(r.placement);
  decision_.preempt.push_back(r.job);
}

bool DecisionBuilder::preempted(std::uint32_t job) const {
  return std::find(decision_.preempt.begin(), decision_.preempt.end(), job) != decision_.preempt.end();
}

std::vector<DecisionBuilder::Holder> DecisionBuilder::holders() const {
  std::vector<Holder> out;
  for (const auto& r : view_->running)
    if (!preempted(r.job))
      out.push_back({.pool = r.placement.pool,
                     .devices = static_cast<std::uint32_t>(r.placement.devices.size()),
                     .end = view_->now + time_left(r)});
  out.insert(out.end(), started_.begin(), started_.end());
  return out;
}

}  // namespace hcsim
