// backfill: EASY backfilling (Lifka, "The ANL/IBM SP scheduling system", JSSPP 1995; Mu'alem
// and Feitelson, "Utilization, predictability, workloads, and user runtime estimates in
// scheduling the IBM SP2 with backfilling", IEEE TPDS 12(6), 2001).
//
// As fifo while the head starts. When the head cannot start, it gets a reservation: on each
// of its pools, the earliest time at which enough devices of that pool are free for its
// largest size there, from the estimated ends of the jobs holding devices (now +
// restart_left + remaining steps x step; a job started in this decision: its alone step);
// the earliest pool wins (ties lowest pool). The jobs behind it then start, in arrival order,
// where they fit now (fifo's pool rule) if they either end before the reservation (estimated
// with their alone step at that size) or use another pool, or only devices of the reserved
// pool that are spare at the reservation (free then beyond what the head needs). The
// reservation counts devices, not nodes: node packing can still delay the head past it.

#include <algorithm>
#include <limits>

#include "sim/cluster/scheduler_builtins.hpp"

namespace hcsim {
namespace {

struct Reservation {
  std::uint32_t pool = 0;
  Seconds time{};
  std::uint32_t spare = 0;  // devices of `pool` free at `time` beyond the head's need
};

// The earliest time `need` devices of `pool` are free, from the free devices now and the
// holders' ends; the spare devices then.
Reservation reserve_on(const DecisionBuilder& b, Seconds now, std::uint32_t pool, std::uint32_t need) {
  auto holders = b.holders();
  std::stable_sort(holders.begin(), holders.end(), [](const auto& x, const auto& y) { return x.end < y.end; });
  std::uint32_t avail = b.placer().free(pool);
  Seconds t = now;
  for (std::size_t i = 0; i < holders.size() && avail < need;) {
    t = holders[i].end;  // every holder ending at that time frees its devices then
    for (; i < holders.size() && holders[i].end == t; ++i)
      if (holders[i].pool == pool) avail += holders[i].devices;
  }
  if (avail < need) return {.pool = pool, .time = Seconds(std::numeric_limits<double>::infinity()), .spare = 0};
  return {.pool = pool, .time = t, .spare = avail - need};
}

class Backfill final : public ClusterScheduler {
 public:
  Decision decide(const SchedulerView& v) override {
    DecisionBuilder b(v);
    std::size_t i = 0;
    for (; i < v.queue.size(); ++i) {
      const auto largest = largest_per_pool(candidates(v.jobs[v.queue[i].job], v.layout, v.oracle));
      if (!start_first_fit(b, v.queue[i], largest, [](const Candidate&) { return true; })) break;
    }
    if (i == v.queue.size()) return b.take();
    Reservation r = head_reservation(b, v, v.queue[i]);
    for (std::size_t k = i + 1; k < v.queue.size(); ++k) {
      const auto& q = v.queue[k];
      const auto largest = largest_per_pool(candidates(v.jobs[q.job], v.layout, v.oracle));
      start_first_fit(b, q, largest, [&](const Candidate& c) {
        if (c.pool != r.pool || v.now + time_left(v.jobs[q.job], q, c) <= r.time) return true;
        if (c.devices > r.spare) return false;
        r.spare -= c.devices;
        return true;
      });
    }
    return b.take();
  }

 private:
  static Reservation head_reservation(const DecisionBuilder& b, const SchedulerView& v, const QueuedJob& head) {
    Reservation best{.pool = 0, .time = Seconds(std::numeric_limits<double>::infinity()), .spare = 0};
    bool any = false;
    for (const auto& c : largest_per_pool(candidates(v.jobs[head.job], v.layout, v.oracle))) {
      Reservation r = reserve_on(b, v.now, c.pool, c.devices);
      if (!any || r.time < best.time) best = r;
      any = true;
    }
    return best;
  }
};

}  // namespace

void cluster_detail::add_backfill(Registry<ClusterScheduler>& r) {
  r.add({.type = "backfill",
         .help = "EASY backfilling: fifo, but when the head cannot start it reserves the earliest time enough "
                 "devices of one of its pools free up (counted in devices, not nodes); later jobs start now "
                 "if they end before it or use only devices spare at it",
         .params = {},
         .make = [](const Params&) { return std::make_unique<Backfill>(); },
         .source = "Lifka, JSSPP 1995; Mu'alem and Feitelson, IEEE TPDS 12(6) 2001"});
}

}  // namespace hcsim
