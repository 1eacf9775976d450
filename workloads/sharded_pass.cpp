// ZeRO-3 / FSDP: one pass over its units (analytical.hpp: sharded_pass_time), the closed form
// of the emitter's per-unit gathers and reductions (lowering_sharding.hpp).
#include <algorithm>
#include <deque>
#include <limits>

#include "analytical.hpp"

namespace hcsim {
namespace {

// The most of a device's SMs collectives hold together (the engine leaves its compute at
// least one SM: min(held, SMs - 1) / SMs; here without the SM count, 0.99).
constexpr double kMostHeld = 0.99;

// The gathers' stream and the reduce-scatter stream over the same shard group, run as
// fluids: a job starts when it is issued and its stream's previous job is done, spends its
// fixed time (latency) and then moves its bandwidth time at rate 1, or 1/2 while the other
// stream's job moves bandwidth too (both rings on the same links, each getting half of them,
// as the engine's flows share a link).
class SharedStreams {
 public:
  struct Job {
    Seconds ready{}, fixed{}, work{}, done{};
    double share = 0;  // of the SMs, while it runs (SM contention)
  };
  // Adds a job of `time` of which `work` is bandwidth time to stream k (0 gathers, 1
  // reduce-scatters), issued at `ready` (not before the time reached), holding `share` of
  // the SMs while it runs; its index there.
  std::size_t push(int k, Seconds ready, Seconds time, Seconds work, double share = 0) {
    work = min(max(work, Seconds{}), time);
    jobs_[k].push_back({ready, time - work, work, Seconds(-1), share});
    return jobs_[k].size() - 1;
  }
  // Runs until job i of stream k is done; its end.
  Seconds finish(int k, std::size_t i) {
    while (jobs_[k][i].done < Seconds{}) step();
    return jobs_[k][i].done;
  }
  // Runs until every job is done; the last end over both streams.
  Seconds drain() {
    Seconds last{};
    for (int k = 0; k < 2; ++k)
      if (!jobs_[k].empty()) last = max(last, finish(k, jobs_[k].size() - 1));
    return last;
  }
  Seconds done(int k, std::size_t i) const { return jobs_[k][i].done; }
  // SM contention: compute of `work` seconds at the full rate from `from` (not before the
  // time reached), running at 1 - (the shares of the streams' running jobs); its end. The
  // streams advance with it, up to that end.
  Seconds compute(Seconds from, Seconds work) {
    while (now_ < from) step(from);
    for (;;) {
      double held = 0;
      for (int k = 0; k < 2; ++k)
        if (head_[k] < jobs_[k].size() && jobs_[k][head_[k]].ready <= now_) held += jobs_[k][head_[k]].share;
      const double rate = 1 - std::min(held, kMostHeld);
      const Seconds t = now_, end = now_ + work / rate;
      step(end);
      if (now_ >= end) return end;
      work = max(Seconds{}, work - (now_ - t) * rate);
    }
  }

 private:
  // One event: the next job start, end of a fixed part or end, whichever comes first, or
  // `cap` if that comes first (the running jobs move on to it).
  void step(Seconds cap = Seconds(std::numeric_limits<double>::infinity())) {
    bool active[2], moving[2];
    for (int k = 0; k < 2; ++k) {
      active[k] = head_[k] < jobs_[k].size() && jobs_[k][head_[k]].ready <= now_;
      if (active[k] && !started_[k]) {
        started_[k] = true;
        fixed_[k] = jobs_[k][head_[k]].fixed;
        left_[k] = jobs_[k][head_[k]].work;
      }
      moving[k] = active[k] && fixed_[k] <= Seconds{};
    }
    const double rate = moving[0] && moving[1] ? 0.5 : 1.0;
    Seconds next(std::numeric_limits<double>::infinity());
    for (int k = 0; k < 2; ++k) {
      if (!active[k]) {
        if (head_[k] < jobs_[k].size()) next = min(next, jobs_[k][head_[k]].ready);
      } else {
        next = min(next, now_ + (moving[k] ? left_[k] / rate : fixed_[k]));
      }
    }
    next = min(next, cap);
    for (int k = 0; k < 2; ++k) {
      if (!active[k]) continue;
      if (!moving[k]) {
        fixed_[k] = next >= now_ + fixed_[k] ? Seconds{} : fixed_[k] - (next - now_);
        if (fixed_[k] > Seconds{} || left_[k] > Seconds{}) continue;
      } else {
        left_[k] = next >= now_ + left_[k] / rate ? Seconds{} : left_[k] - (next - now_) * rate;
        if (left_[k] > Seconds{}) continue;
      }
      jobs_[k][head_[k]].done = next;
      ++head_[k];
      started_[k] = false;
      if (head_[k] < jobs_[k].size()) jobs_[k][head_[k]].ready = max(jobs_[k][head_[k]].ready, next);
    }
    now_ = next;
  }

  std::deque<Job> jobs_[2];
  std::size_t head_[2] = {0, 0};
  bool started_[2] = {false, false};
  Seconds fixed_[2], left_[2];  // the head's fixed and bandwidth time left once it started
  Seconds now_{};
};

// The backward with its reductions on streams of their own (ShardPlan::reduce_stream).
Seconds backward_with_reduce_streams(const std::vector<UnitCost>& units, int prefetch, bool contended) {
  const std::size_t n = units.size();
  SharedStreams streams;
  std::vector<std::ptrdiff_t> gather(n, -1);
  std::vector<std::size_t> scatter(n);
  Seconds end{};
  std::size_t issued = 0;
  for (std::size_t u = 0; u < n; ++u) {
    if (u > 0)
      scatter[u - 1] = streams.push(1, end, units[u - 1].reduce, units[u - 1].reduce_bw, units[u - 1].reduce_share);
    for (const std::size_t last = std::min(n - 1, u + static_cast<std::size_t>(prefetch)); issued <= last; ++issued)
      if (units[issued].gather > Seconds{})
        gather[issued] = static_cast<std::ptrdiff_t>(
            streams.push(0, end, units[issued].gather, units[issued].gather_bw, units[issued].gather_share));
    const Seconds ready = gather[u] < 0 ? Seconds{} : streams.finish(0, static_cast<std::size_t>(gather[u]));
    end = contended ? streams.compute(max(end, ready), units[u].busy) : max(end, ready) + units[u].busy;
  }
  scatter[n - 1] = streams.push(1, end, units[n - 1].reduce, units[n - 1].reduce_bw, units[n - 1].reduce_share);
  const Seconds last = streams.drain();
  // Hybrid sharding's all-reduces, on their own stream and links: each after its unit's
  // reduce-scatter and the one before.
  Seconds all{};
  for (std::size_t u = 0; u < n; ++u)
    if (units[u].all_reduce > Seconds{}) all = max(all, streams.done(1, scatter[u])) + units[u].all_reduce;
  return max(max(end, last), all);
}

// SM contention on one communication stream: the closed form below as a stream of jobs
// (each its whole time, none sharing links), the units' compute slowed while one runs.
Seconds pass_with_contention(const std::vector<UnitCost>& units, int prefetch, bool backward) {
  const std::size_t n = units.size();
  SharedStreams stream;
  std::vector<std::ptrdiff_t> gather(n, -1);
  Seconds end{};
  std::size_t issued = 0;
  auto reduce = [&](const UnitCost& c) {
    stream.push(0, end, c.reduce, Seconds{}, c.reduce_share);
    if (c.all_reduce > Seconds{}) stream.push(0, end, c.all_reduce, Seconds{}, c.all_reduce_share);
  };
  for (std::size_t u = 0; u < n; ++u) {
    if (backward && u > 0) reduce(units[u - 1]);
    for (const std::size_t last = std::min(n - 1, u + static_cast<std::size_t>(prefetch)); issued <= last; ++issued)
      if (units[issued].gather > Seconds{})
        gather[issued] = static_cast<std::ptrdiff_t>(
            stream.push(0, end, units[issued].gather, Seconds{}, units[issued].gather_share));
    const Seconds ready = gather[u] < 0 ? Seconds{} : stream.finish(0, static_cast<std::size_t>(gather[u]));
    end = stream.compute(max(end, ready), units[u].busy);
  }
  if (backward) reduce(units[n - 1]);
  return max(end, stream.drain());
}

}  // namespace

Seconds sharded_pass_time(const std::vector<UnitCost>& units, int prefetch, bool backward, bool reduce_streams) {
  const std::size_t n = units.size();
  if (n == 0) return Seconds{};
  const bool contended = std::any_of(units.begin(), units.end(), [](const UnitCost& c) {
    return c.gather_share > 0 || c.reduce_share > 0 || c.all_reduce_share > 0;
  });
  if (backward && reduce_streams) return backward_with_reduce_streams(units, prefetch, contended);
  if (contended) return pass_with_contention(units, prefetch, backward);
  std::vector<Seconds> gathered(n);
  Seconds comm{}, end{};  // communication stream free; end of the last unit's compute
  std::size_t issued = 0;
  for (std::size_t u = 0; u < n; ++u) {
    if (backward && u > 0) comm = max(comm, end) + units[u - 1].reduce + units[u - 1].all_reduce;
    for (const std::size_t last = std::min(n - 1, u + static_cast<std::size_t>(prefetch)); issued <= last; ++issued) {
      if (units[issued].gather <= Seconds{}) continue;
      comm = max(comm, end) + units[issued].gather;
      gathered[issued] = comm;
    }
    end = max(end, gathered[u]) + units[u].busy;
  }
  if (backward) comm = max(comm, end) + units[n - 1].reduce + units[n - 1].all_reduce;
  return max(end, comm);
}

}  // namespace hcsim
