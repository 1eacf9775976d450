// heterogeneity-aware: each job on the pool where it runs best (Gavel: Narayanan et al.,
// "Heterogeneity-Aware Cluster Scheduling Policies for Deep Learning Workloads", OSDI 2020),
// simplified from Gavel's optimised time shares to greedy placement.
//
// The waiting jobs are taken in arrival order, without reservations (a job that does not
// fit waits and the ones behind it may start: a large job can wait long behind small ones).
// Each ranks its candidates (pool, size) by simulated throughput per device, 1 / (alone step
// x devices), with `objective` "throughput", or by steps per joule, 1 / step energy alone,
// with "energy"; ties: lower pool, then the larger size. It starts on the best ranked
// candidate that fits now; if none fits it waits.

#include <algorithm>
#include <string>

#include "sim/cluster/scheduler_builtins.hpp"

namespace hcsim {
namespace {

class Hetero final : public ClusterScheduler {
 public:
  explicit Hetero(bool energy) : energy_(energy) {}

  Decision decide(const SchedulerView& v) override {
    DecisionBuilder b(v);
    for (const auto& q : v.queue)
      for (const auto& c : ranked(v, v.jobs[q.job]))
        if (b.fits(c.pool, c.devices)) {
          b.start(q, c);
          break;
        }
    return b.take();
  }

 private:
  // The job's candidates, best first.
  [[nodiscard]] std::vector<Candidate> ranked(const SchedulerView& v, const JobSpec& job) const {
    struct Scored {
      Candidate c;
      double cost = 0;  // smaller is better: device-seconds or joules per step
    };
    std::vector<Scored> s;
    for (const auto& c : candidates(job, v.layout, v.oracle)) {
      const double cost = energy_ ? v.oracle.step_energy(job, c.pool, c.devices).value() : c.step.value() * c.devices;
      s.push_back({.c = c, .cost = cost});
    }
    std::stable_sort(s.begin(), s.end(), [](const auto& a, const auto& d) {
      if (a.cost != d.cost) return a.cost < d.cost;
      if (a.c.pool != d.c.pool) return a.c.pool < d.c.pool;
      return a.c.devices > d.c.devices;
    });
    std::vector<Candidate> out;
    for (const auto& x : s) out.push_back(x.c);
    return out;
  }

  bool energy_;
};

}  // namespace

void cluster_detail::add_hetero(Registry<ClusterScheduler>& r) {
  r.add({.type = "heterogeneity-aware",
         .help = "each waiting job (arrival order, no reservations) on the pool and size with the best simulated "
                 "throughput per device (or steps per joule), else the next best that fits; if none fits it "
                 "waits",
         .params = {{.name = "objective",
                     .kind = ParamKind::choice,
                     .def = "throughput",
                     .choices = {"throughput", "energy"},
                     .help = "throughput: 1 / (alone step x devices); energy: 1 / step energy alone"}},
         .make = [](const Params& p) { return std::make_unique<Hetero>(p.string("objective") == "energy"); },
         .source = "Narayanan et al., Gavel, OSDI 2020 (simplified to greedy placement)"});
}

}  // namespace hcsim
