#include "sim/cluster/cluster_loop.hpp"

#include <algorithm>
#include <cmath>
#include <numeric>

#include "sim/core/error.hpp"

namespace hcsim {
namespace {

constexpr double kInf = std::numeric_limits<double>::infinity();

// A job holding devices, with the times its events fall at and its open segment.
struct Active {
  RunningJob r;
  Seconds end_at{};       // completion at the current rate
  Seconds restart_end{};  // end of its restart period (meaningful while restart_left > 0)
  Joules step_energy{};   // one step alone at its placement
  Seconds seg_begin{}, seg_step{};
  bool seg_restarting = false;
};

// What the loop tracks of each job besides its outcome.
struct JobState {
  double remaining = 0;
  bool restart_pending = false;
  bool started = false;
  Seconds queued_since{};
  Seconds restart_time{};     // restart periods paid
  double device_seconds = 0;  // devices x time held
};

class Loop {
 public:
  Loop(const ClusterLayout& layout, std::span<const JobSpec> jobs, ClusterScheduler& scheduler, StepOracle& oracle,
       const ClusterLoopOptions& options)
      : layout_(layout),
        jobs_(jobs),
        scheduler_(scheduler),
        oracle_(oracle),
        options_(options),
        placer_(layout),
        state_(jobs.size()) {
    result_.jobs.resize(jobs.size());
    for (std::uint32_t j = 0; j < jobs.size(); ++j) {
      result_.jobs[j].name = jobs[j].name;
      result_.jobs[j].arrival = jobs[j].arrival;
      state_[j].remaining = jobs[j].steps;
      arrivals_.push_back(j);
    }
    std::stable_sort(arrivals_.begin(), arrivals_.end(),
                     [&](auto a, auto b) { return jobs_[a].arrival < jobs_[b].arrival; });
  }

  ClusterResult run() {
    for (;;) {
      const Seconds t = next_event();
      if (t.value() == kInf) break;
      if (t > options_.horizon) {
        advance(options_.horizon);
        horizon_hit_ = true;
        break;
      }
      step_event(t);
    }
    return finish_run();
  }

 private:
  [[nodiscard]] Seconds next_event() const {
    Seconds t(kInf);
    if (next_arrival_ < arrivals_.size()) t = jobs_[arrivals_[next_arrival_]].arrival;
    for (const auto& a : active_) {
      t = min(t, a.end_at);
      if (a.r.restart_left > Seconds{}) t = min(t, a.restart_end);
    }
    return t;
  }

  void step_event(Seconds t) {
    advance(t);
    bool changed = complete();
    arrive();
    changed = apply(scheduler_.decide(view())) || changed;
    ++result_.events;
    if (changed) retime();
    update_segments();
    sample();
  }

  // Progress of every running job from now_ to t: its restart period first, then steps.
  void advance(Seconds t) {
    const Seconds dt = t - now_;
    for (auto& a : active_) {
      JobState& s = state_[a.r.job];
      JobOutcome& o = result_.jobs[a.r.job];
      const auto devices = static_cast<double>(a.r.placement.devices.size());
      Seconds restart = min(dt, a.r.restart_left);
      if (t >= a.restart_end) restart = a.r.restart_left;  // exact at the restart event
      a.r.restart_left = a.r.restart_left > restart ? a.r.restart_left - restart : Seconds{};
      s.restart_time += restart;
      o.energy += layout_.pools[a.r.placement.pool].idle_power * restart * devices;
      double steps = a.r.remaining_steps;
      if (t < a.end_at) steps = std::clamp((dt - restart) / a.r.step, 0.0, a.r.remaining_steps);
      a.r.remaining_steps -= steps;
      o.energy += a.step_energy * steps;
      o.run += dt;
      s.device_seconds += devices * dt.value();
    }
    now_ = t;
  }

  // Finishes the jobs whose completion time has come; true when any did.
  bool complete() {
    bool any = false;
    for (std::size_t i = 0; i < active_.size();) {
      Active& a = active_[i];
      if (now_ < a.end_at) {
        ++i;
        continue;
      }
      close_segment(a);
      placer_.release(a.r.placement);
      JobOutcome& o = result_.jobs[a.r.job];
      o.completed = true;
      o.end = now_;
      state_[a.r.job].remaining = 0;
      active_.erase(active_.begin() + static_cast<std::ptrdiff_t>(i));
      any = true;
    }
    return any;
  }

  void arrive() {
    while (next_arrival_ < arrivals_.size() && jobs_[arrivals_[next_arrival_]].arrival <= now_) {
      const std::uint32_t j = arrivals_[next_arrival_++];
      if (candidates(jobs_[j], layout_, oracle_).empty()) {
        result_.jobs[j].reason = fits_no_pool(jobs_[j]);
        continue;
      }
      state_[j].queued_since = now_;
      enqueue(j);
    }
  }

  [[nodiscard]] std::string fits_no_pool(const JobSpec& job) const {
    std::string pools;
    for (auto p : job_pools(job, layout_))
      pools += (pools.empty() ? "" : ", ") + (p < layout_.pools.size() ? layout_.pools[p].name : std::to_string(p));
    return "fits no pool: none of its pools (" + pools + ") holds a size of " + std::to_string(job.min_devices) +
           " to " + std::to_string(job.max_devices) + " devices (quantum " + std::to_string(job.quantum) +
           ") that it can run at";
  }

  // Keeps the queue in arrival order, ties job index.
  void enqueue(std::uint32_t j) {
    auto it = std::find_if(queue_.begin(), queue_.end(), [&](const QueuedJob& q) {
      return jobs_[q.job].arrival > jobs_[j].arrival || (jobs_[q.job].arrival == jobs_[j].arrival && q.job > j);
    });
    queue_.insert(it, QueuedJob{.job = j,
                                .remaining_steps = state_[j].remaining,
                                .restarting_cost_pending = state_[j].restart_pending});
  }

  [[nodiscard]] SchedulerView view() const {
    std::vector<RunningJob> running;
    for (const auto& a : active_) running.push_back(a.r);
    return SchedulerView{.now = now_,
                         .jobs = jobs_,
                         .layout = layout_,
                         .queue = queue_,
                         .running = std::move(running),
                         .placer = placer_,
                         .oracle = oracle_};
  }

  // Preemptions, then starts; true when the set of jobs holding devices changed.
  bool apply(const Decision& d) {
    for (auto j : d.preempt) preempt(j);
    for (const auto& s : d.start) start(s);
    return !d.preempt.empty() || !d.start.empty();
  }

  void preempt(std::uint32_t j) {
    auto it = std::find_if(active_.begin(), active_.end(), [&](const Active& a) { return a.r.job == j; });
    HCSIM_ASSERT(it != active_.end(), "the scheduler preempted a job that is not running: " + jobs_[j].name);
    close_segment(*it);
    placer_.release(it->r.placement);
    JobState& s = state_[j];
    s.remaining = it->r.remaining_steps;
    s.restart_pending = true;
    s.queued_since = now_;
    ++result_.jobs[j].preemptions;
    active_.erase(it);
    enqueue(j);
  }

  void start(const Start& st) {
    auto it = std::find_if(queue_.begin(), queue_.end(), [&](const QueuedJob& q) { return q.job == st.job; });
    HCSIM_ASSERT(it != queue_.end(), "the scheduler started a job that is not waiting: " + jobs_[st.job].name);
    HCSIM_ASSERT(placer_.fits(st.pool, st.devices),
                 "the scheduler started a job that does not fit: " + jobs_[st.job].name);
    const JobSpec& job = jobs_[st.job];
    const auto alone = oracle_.alone(job, st.pool, st.devices);
    HCSIM_ASSERT(alone.has_value(), "the scheduler started a job where it cannot run: " + job.name);
    JobState& s = state_[st.job];
    JobOutcome& o = result_.jobs[st.job];
    Active a;
    a.r = RunningJob{.job = st.job,
                     .placement = placer_.place(st.pool, st.devices),
                     .remaining_steps = s.remaining,
                     .step = *alone,
                     .restart_left = s.restart_pending ? job.checkpoint_restart : Seconds{},
                     .started = now_};
    a.restart_end = now_ + a.r.restart_left;
    a.step_energy = oracle_.step_energy(job, st.pool, st.devices);
    a.seg_begin = now_;
    a.seg_restarting = a.r.restart_left > Seconds{};
    s.restart_pending = false;
    o.wait += now_ - s.queued_since;
    if (!s.started) o.first_start = now_;
    s.started = true;
    o.pool = st.pool;
    o.devices = st.devices;
    o.alone_step = *alone;
    queue_.erase(it);
    auto pos = std::find_if(active_.begin(), active_.end(), [&](const Active& x) { return x.r.job > st.job; });
    active_.insert(pos, std::move(a));
  }

  // Every running job's step time together, and its completion time at that rate.
  void retime() {
    if (active_.empty()) return;
    std::vector<const JobSpec*> js;
    std::vector<JobPlacement> ps;
    for (const auto& a : active_) {
      js.push_back(&jobs_[a.r.job]);
      ps.push_back(a.r.placement);
    }
    const auto steps = oracle_.together(js, ps);
    HCSIM_ASSERT(steps.size() == active_.size(), "the oracle gave a step time per job");
    for (std::size_t i = 0; i < active_.size(); ++i) {
      Active& a = active_[i];
      HCSIM_ASSERT(steps[i] > Seconds{} && std::isfinite(steps[i].value()), "a step takes a positive finite time");
      a.r.step = steps[i];
      a.end_at = now_ + a.r.restart_left + a.r.step * a.r.remaining_steps;
    }
  }

  void close_segment(const Active& a) {
    if (now_ <= a.seg_begin) return;
    result_.segments.push_back({.job = a.r.job,
                                .pool = a.r.placement.pool,
                                .first_device = a.r.placement.devices.front(),
                                .devices = static_cast<std::uint32_t>(a.r.placement.devices.size()),
                                .begin = a.seg_begin,
                                .end = now_,
                                .step = a.seg_restarting ? Seconds{} : a.seg_step});
  }

  // Closes and reopens the segments whose rate changed (or whose restart period ended).
  void update_segments() {
    for (auto& a : active_) {
      const bool restarting = a.r.restart_left > Seconds{};
      const Seconds step = restarting ? Seconds{} : a.r.step;
      if (a.seg_begin == now_) {
        a.seg_step = step;
        a.seg_restarting = restarting;
        continue;
      }
      if (restarting == a.seg_restarting && step == a.seg_step) continue;
      close_segment(a);
      a.seg_begin = now_;
      a.seg_step = step;
      a.seg_restarting = restarting;
    }
  }

  void sample() {
    PoolSample s{.time = now_,
                 .allocated = {},
                 .busy = {},
                 .fragmented = {},
                 .queued = static_cast<std::uint32_t>(queue_.size())};
    for (std::uint32_t p = 0; p < layout_.pools.size(); ++p) {
      s.allocated.push_back(layout_.pools[p].devices - placer_.free(p));
      s.fragmented.push_back(placer_.fragmented(p));
    }
    // Busy: held by a job that is stepping, not restarting from a checkpoint.
    s.busy.assign(layout_.pools.size(), 0);
    for (const auto& a : active_)
      if (a.r.restart_left <= Seconds{})
        s.busy[a.r.placement.pool] += static_cast<std::uint32_t>(a.r.placement.devices.size());
    result_.timeline.push_back(std::move(s));
  }

  ClusterResult finish_run();
  void report_unfinished();
  void totals();

  const ClusterLayout& layout_;
  std::span<const JobSpec> jobs_;
  ClusterScheduler& scheduler_;
  StepOracle& oracle_;
  ClusterLoopOptions options_;
  Placer placer_;
  std::vector<JobState> state_;
  std::vector<std::uint32_t> arrivals_;  // by arrival, ties job index
  std::size_t next_arrival_ = 0;
  std::vector<QueuedJob> queue_;
  std::vector<Active> active_;  // job index order
  Seconds now_{};
  bool horizon_hit_ = false;
  ClusterResult result_;
};

ClusterResult Loop::finish_run() {
  for (auto& a : active_) close_segment(a);
  report_unfinished();
  totals();
  std::stable_sort(result_.segments.begin(), result_.segments.end(),
                   [](const auto& a, const auto& b) { return a.begin != b.begin ? a.begin < b.begin : a.job < b.job; });
  return std::move(result_);
}

void Loop::report_unfinished() {
  for (const auto& a : active_) {
    state_[a.r.job].remaining = a.r.remaining_steps;
    result_.jobs[a.r.job].reason =
        "still running at the horizon (" + std::to_string(a.r.remaining_steps) + " steps left)";
  }
  for (const auto& q : queue_)
    result_.jobs[q.job].reason = horizon_hit_ ? "still waiting at the horizon"
                                              : "never started: nothing running, no arrival left, and the "
                                                "scheduler started nothing";
  for (std::size_t i = next_arrival_; i < arrivals_.size(); ++i)
    result_.jobs[arrivals_[i]].reason = "arrives after the horizon";
  for (std::uint32_t j = 0; j < jobs_.size(); ++j) {
    JobOutcome& o = result_.jobs[j];
    const JobState& s = state_[j];
    if (!s.started) continue;
    const double done = jobs_[j].steps - s.remaining;
    const Seconds ideal = o.alone_step * done;
    o.slowdown = ideal > Seconds{} ? (o.run - s.restart_time) / ideal : 1.0;
  }
}

// Makespan, completion statistics, utilisation, device-hours and energies.
void Loop::totals() {
  ClusterResult& r = result_;
  std::vector<double> completion;
  Seconds last{};
  for (std::uint32_t j = 0; j < jobs_.size(); ++j) {
    const JobOutcome& o = r.jobs[j];
    r.device_hours += state_[j].device_seconds / 3600.0;
    r.job_energy += o.energy;
    if (!o.completed) continue;
    completion.push_back((o.end - o.arrival).value());
    last = max(last, o.end);
  }
  r.makespan = horizon_hit_ ? options_.horizon : last;
  if (!completion.empty()) {
    r.mean_completion =
        Seconds(std::accumulate(completion.begin(), completion.end(), 0.0) / static_cast<double>(completion.size()));
    std::sort(completion.begin(), completion.end());
    // Nearest rank: the ceil(0.99 n)-th smallest.
    const auto rank = static_cast<std::size_t>(std::ceil(0.99 * static_cast<double>(completion.size())));
    r.p99_completion = Seconds(completion[std::max<std::size_t>(rank, 1) - 1]);
  }
  // The pools' allocation is constant from one sample to the next; all idle before the first.
  std::vector<double> held(layout_.pools.size(), 0.0);
  for (std::size_t i = 0; i < r.timeline.size(); ++i) {
    const Seconds from = min(r.timeline[i].time, r.makespan);
    const Seconds to = min(i + 1 < r.timeline.size() ? r.timeline[i + 1].time : r.makespan, r.makespan);
    for (std::size_t p = 0; p < layout_.pools.size(); ++p) held[p] += r.timeline[i].allocated[p] * (to - from).value();
  }
  r.utilisation.assign(layout_.pools.size(), 0.0);
  for (std::size_t p = 0; p < layout_.pools.size(); ++p) {
    const ClusterPoolInfo& pool = layout_.pools[p];
    const double capacity = pool.devices * r.makespan.value();
    r.utilisation[p] = capacity > 0 ? held[p] / capacity : 0.0;
    r.idle_energy += pool.idle_power * Seconds(capacity - held[p]);
  }
}

}  // namespace

ClusterResult simulate_cluster(const ClusterLayout& layout, std::span<const JobSpec> jobs, ClusterScheduler& scheduler,
                               std::string scheduler_name, StepOracle& oracle, const ClusterLoopOptions& options) {
  Loop loop(layout, jobs, scheduler, oracle, options);
  ClusterResult r = loop.run();
  r.scheduler = std::move(scheduler_name);
  return r;
}

}  // namespace hcsim
