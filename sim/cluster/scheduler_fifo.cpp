// fifo: first come, first served, with no overtaking. The jobs start in arrival order; the
// head starts on the first of its pools (pool order) where its largest size there fits now;
// when it cannot start, nothing behind it starts.

#include "sim/cluster/scheduler_builtins.hpp"

namespace hcsim {
namespace {

class Fifo final : public ClusterScheduler {
 public:
  Decision decide(const SchedulerView& v) override {
    DecisionBuilder b(v);
    for (const auto& q : v.queue) {
      const auto largest = largest_per_pool(candidates(v.jobs[q.job], v.layout, v.oracle));
      if (!start_first_fit(b, q, largest, [](const Candidate&) { return true; })) break;
    }
    return b.take();
  }
};

}  // namespace

void cluster_detail::add_fifo(Registry<ClusterScheduler>& r) {
  r.add({.type = "fifo",
         .help = "first come, first served: the head of the queue starts on the first of its pools where its "
                 "largest size fits; nothing overtakes it",
         .params = {},
         .make = [](const Params&) { return std::make_unique<Fifo>(); },
         .source = "the baseline of every batch scheduler; e.g. Feitelson et al., Parallel Job Scheduling, "
                   "JSSPP 1997"});
}

}  // namespace hcsim
