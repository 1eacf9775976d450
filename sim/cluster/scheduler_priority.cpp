// priority: strict priorities with preemption (the checkpoint-and-restart preemption of
// production GPU schedulers, e.g. Kubernetes pod priority and preemption; Jeon et al.,
// "Analysis of large-scale multi-tenant GPU clusters", USENIX ATC 2019, on Philly).
//
// The waiting jobs are taken by priority (higher first), then arrival order; each starts on
// the first of its pools (pool order) where its largest size there fits now. The first job
// that fits nowhere may preempt: on the first of its pools where it can be made to fit, the
// running jobs of strictly lower priority are preempted (lowest priority first, then most
// recently started, then highest job index) until it fits, and it starts; if no pool can be
// made to fit, nothing is preempted. The jobs after it still start where they fit now. A
// preempted job returns to the queue with its remaining steps and pays its
// checkpoint_restart once when it starts again (the loop charges it).

#include <algorithm>

#include "sim/cluster/scheduler_builtins.hpp"

namespace hcsim {
namespace {

class Priority final : public ClusterScheduler {
 public:
  Decision decide(const SchedulerView& v) override {
    DecisionBuilder b(v);
    std::vector<const QueuedJob*> order;
    for (const auto& q : v.queue) order.push_back(&q);
    std::stable_sort(order.begin(), order.end(),
                     [&](const auto* a, const auto* c) { return v.jobs[a->job].priority > v.jobs[c->job].priority; });
    bool preempted_once = false;
    for (const auto* q : order) {
      const auto largest = largest_per_pool(candidates(v.jobs[q->job], v.layout, v.oracle));
      if (start_first_fit(b, *q, largest, [](const Candidate&) { return true; })) continue;
      if (preempted_once) continue;
      preempted_once = true;
      try_preempt(b, v, *q, largest);
    }
    return b.take();
  }

 private:
  static void try_preempt(DecisionBuilder& b, const SchedulerView& v, const QueuedJob& q,
                          const std::vector<Candidate>& largest) {
    const int mine = v.jobs[q.job].priority;
    for (const auto& c : largest) {
      std::vector<const RunningJob*> victims;
      for (const auto& r : v.running)
        if (r.placement.pool == c.pool && v.jobs[r.job].priority < mine && !b.preempted(r.job)) victims.push_back(&r);
      std::sort(victims.begin(), victims.end(), [&](const auto* a, const auto* d) {
        const int pa = v.jobs[a->job].priority, pd = v.jobs[d->job].priority;
        if (pa != pd) return pa < pd;
        if (a->started != d->started) return a->started > d->started;
        return a->job > d->job;
      });
      Placer trial = b.placer();
      std::size_t n = 0;
      while (!trial.fits(c.pool, c.devices) && n < victims.size()) trial.release(victims[n++]->placement);
      if (!trial.fits(c.pool, c.devices)) continue;
      for (std::size_t i = 0; i < n; ++i) b.preempt(*victims[i]);
      b.start(q, c);
      return;
    }
  }
};

}  // namespace

void cluster_detail::add_priority(Registry<ClusterScheduler>& r) {
  r.add({.type = "priority",
         .help = "by priority, then arrival; the first job that fits nowhere preempts running jobs of strictly "
                 "lower priority (lowest first, then most recently started) when that makes it fit; a "
                 "preempted job pays its checkpoint_restart once when it restarts",
         .params = {},
         .make = [](const Params&) { return std::make_unique<Priority>(); },
         .source = "Jeon et al., USENIX ATC 2019 (Philly); Kubernetes pod priority and preemption"});
}

}  // namespace hcsim
