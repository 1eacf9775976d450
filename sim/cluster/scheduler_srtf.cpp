// srtf: shortest remaining time first (Schrage, "A proof of the optimality of the shortest
// remaining processing time discipline", Operations Research 16(3), 1968; for GPU clusters,
// e.g. Tiresias, Gu et al., NSDI 2019).
//
// The waiting jobs are ordered by their remaining time at their best candidate (remaining
// steps x alone step, plus a pending restart cost; ties arrival order) and started in that
// order, each on its candidates from the shortest time up, where one fits now; a job that
// does not fit is skipped. With `preempt`, a waiting job that does not fit preempts running
// jobs whose time left (restart_left + remaining steps x current step) is longer than its
// own, longest first, on the pool of its best candidate that this makes fit; if none does,
// nothing is preempted for it. A job started in this decision is not preempted in it.

#include <algorithm>

#include "sim/cluster/scheduler_builtins.hpp"

namespace hcsim {
namespace {

struct Waiting {
  const QueuedJob* q = nullptr;
  std::vector<Candidate> by_time;  // the job's candidates, shortest time first
  Seconds best{};
};

class Srtf final : public ClusterScheduler {
 public:
  explicit Srtf(bool preempt) : preempt_(preempt) {}

  Decision decide(const SchedulerView& v) override {
    DecisionBuilder b(v);
    for (const auto& w : ordered(v)) {
      if (try_start(b, w)) continue;
      if (preempt_) try_preempt(b, v, w);
    }
    return b.take();
  }

 private:
  static std::vector<Waiting> ordered(const SchedulerView& v) {
    std::vector<Waiting> out;
    for (const auto& q : v.queue) {
      const JobSpec& job = v.jobs[q.job];
      Waiting w{.q = &q, .by_time = candidates(job, v.layout, v.oracle), .best = {}};
      if (w.by_time.empty()) continue;
      std::stable_sort(w.by_time.begin(), w.by_time.end(),
                       [&](const auto& a, const auto& c) { return time_left(job, q, a) < time_left(job, q, c); });
      w.best = time_left(job, q, w.by_time.front());
      out.push_back(std::move(w));
    }
    std::stable_sort(out.begin(), out.end(), [](const auto& a, const auto& c) { return a.best < c.best; });
    return out;
  }

  static bool try_start(DecisionBuilder& b, const Waiting& w) {
    for (const auto& c : w.by_time)
      if (b.fits(c.pool, c.devices)) {
        b.start(*w.q, c);
        return true;
      }
    return false;
  }

  // Preempts, on the first candidate (shortest time first) it makes fit, the running jobs
  // of that pool with more time left than `w`, longest first, until `w` fits; then starts it.
  static void try_preempt(DecisionBuilder& b, const SchedulerView& v, const Waiting& w) {
    for (const auto& c : w.by_time) {
      const Seconds mine = time_left(v.jobs[w.q->job], *w.q, c);
      std::vector<const RunningJob*> victims;
      for (const auto& r : v.running)
        if (r.placement.pool == c.pool && !b.preempted(r.job) && time_left(r) > mine) victims.push_back(&r);
      std::stable_sort(victims.begin(), victims.end(),
                       [](const auto* a, const auto* d) { return time_left(*a) > time_left(*d); });
      Placer trial = b.placer();
      std::size_t n = 0;
      while (!trial.fits(c.pool, c.devices) && n < victims.size()) trial.release(victims[n++]->placement);
      if (!trial.fits(c.pool, c.devices)) continue;
      for (std::size_t i = 0; i < n; ++i) b.preempt(*victims[i]);
      b.start(*w.q, c);
      return;
    }
  }

  bool preempt_;
};

}  // namespace

void cluster_detail::add_srtf(Registry<ClusterScheduler>& r) {
  r.add({.type = "srtf",
         .help = "shortest remaining time first: waiting jobs by remaining steps x alone step at their best "
                 "pool and size, each started where it fits; with preempt, a shorter waiting job preempts "
                 "longer running ones",
         .params = {{.name = "preempt",
                     .kind = ParamKind::boolean,
                     .def = false,
                     .help = "a waiting job shorter than running jobs preempts them when that makes it fit"}},
         .make = [](const Params& p) { return std::make_unique<Srtf>(p.boolean("preempt")); },
         .source = "Schrage, Operations Research 16(3) 1968; Gu et al., Tiresias, NSDI 2019"});
}

}  // namespace hcsim
