#include "sim/engine/collective_replay.hpp"

#include <algorithm>
#include <cmath>
#include <limits>

#include "sim/core/error.hpp"

namespace hcsim::engine {
CollectiveReplay::CollectiveReplay(const TaskGraph& g, CollectivePlanner& planner, ActivityHost& host,
                                   bool representatives)
    : g_(g),
      planner_(planner),
      host_(host),
      last_plan_(g.groups().size() * kOps),
      load_(planner.router().graph(), planner.router()),
      representatives_(representatives) {
  if (!g.mirrors().empty()) mirror_set_.assign(g.size(), kNoSet);
  for (const auto& m : g.mirrors())
    if (mirror_set_[m.task] == kNoSet) mirror_set_[m.task] = m.set;
  for (const Task& t : g.tasks()) {
    if (t.kind != TaskKind::compute) continue;
    if (t.device >= built_.size()) built_.resize(t.device + 1, 0);
    built_[t.device] = 1;
  }
}

bool CollectiveReplay::built(std::uint32_t device) const {
  return built_.empty() || (device < built_.size() && built_[device] != 0);
}

CollectiveReplay::Split& CollectiveReplay::split_of(const CollectiveExpansion& p) {
  auto [it, added] = split_of_.try_emplace(&p, nullptr);
  if (!added) return *it->second;
  Split& s = splits_.emplace_back();
  it->second = &s;
  for (const CoarsePhase& ph : p.phases) {
    std::vector<char> run(ph.flows.size(), 0);
    bool rest = false;
    for (std::size_t i = 0; i < ph.flows.size(); ++i) {
      run[i] = !representatives_ || built(ph.flows[i].src) || built(ph.flows[i].dst) ? 1 : 0;
      rest = rest || !run[i];
    }
    if (rest) {
      // Stand-ins only for flows that are translates of those that run (represent()).
      std::vector<DevicePair> pairs;
      std::vector<double> bytes;
      for (const PlannedFlow& f : ph.flows) {
        pairs.emplace_back(f.src, f.dst);
        bytes.push_back(f.bytes);
      }
      const std::vector<MirrorLoad::SharedTime> t = load_.shared_times(pairs, bytes);
      represent(t, bytes, run);
    }
    auto& l = s.launched.emplace_back();
    auto& r = s.rest.emplace_back();
    auto& slots = s.rest_slots.emplace_back();
    for (std::size_t i = 0; i < ph.flows.size(); ++i) {
      (run[i] ? l : r).push_back(ph.flows[i]);
      if (!run[i]) load_.slots({ph.flows[i].src, ph.flows[i].dst}, slots);
    }
    if (!r.empty()) keep_rest_counts();
  }
  return s;
}

void CollectiveReplay::keep_rest_counts() {
  if (has_rest_) return;
  has_rest_ = true;
  live_ = ZeroArray<std::int32_t>(load_.slot_count());
  rest_live_ = ZeroArray<std::int32_t>(load_.slot_count());
  if (g_.part_begin.size() > 1) {
    all_mirrors_ = ZeroArray<std::int32_t>(load_.slot_count());
    part_mirrors_.clear();
    for (std::size_t p = 0; p < g_.part_begin.size(); ++p) part_mirrors_.emplace_back(load_.slot_count());
  }
}

// Flows of a phase fall into classes of equal bytes and equal share of their links (a
// multi-ring across two nodes: its NVLink hops and its network hops). Where the flows the
// built devices send or receive meet every class, the others of a class are its translates
// and stand for nothing new; the slowest of a class (the longest route) runs too when no
// launched flow of the class is as slow. Where a class has no launched flow (a torus shared
// unevenly) every flow runs. A phase of one class is uniform: its slowest flow runs even
// where no built device takes part (the inter-node ring of node leaders).
void CollectiveReplay::represent(const std::vector<MirrorLoad::SharedTime>& t, const std::vector<double>& bytes,
                                 std::vector<char>& run) {
  auto same = [](double a, double b) { return std::abs(a - b) <= 1e-9 * std::max(std::abs(a), std::abs(b)); };
  std::vector<std::size_t> cls(t.size());
  std::vector<std::size_t> heads;  // first flow of each class
  for (std::size_t i = 0; i < t.size(); ++i) {
    std::size_t k = 0;
    while (k < heads.size() && !(same(bytes[heads[k]], bytes[i]) && same(t[heads[k]].transfer, t[i].transfer))) ++k;
    if (k == heads.size()) heads.push_back(i);
    cls[i] = k;
  }
  const double none = -std::numeric_limits<double>::infinity();
  std::vector<double> launched(heads.size(), none), slowest(heads.size(), none);
  std::vector<std::size_t> at(heads.size(), 0);
  for (std::size_t i = 0; i < t.size(); ++i) {
    const std::size_t k = cls[i];
    if (run[i]) launched[k] = std::max(launched[k], t[i].total());
    else if (t[i].total() > slowest[k]) {
      slowest[k] = t[i].total();
      at[k] = i;
    }
  }
  if (heads.size() > 1 && std::find(launched.begin(), launched.end(), none) != launched.end()) {
    run.assign(run.size(), 1);
    return;
  }
  for (std::size_t k = 0; k < heads.size(); ++k)
    if (slowest[k] > launched[k]) run[at[k]] = 1;
}

void CollectiveReplay::count_flow(std::uint32_t src, std::uint32_t dst, int d) {
  // Offload streams to memory nodes cross no link a collective does (their routes are the
  // platform's, not the devices'); they keep their own stretch.
  if (!has_rest_ || src == dst || g_.is_memory(src) || g_.is_memory(dst)) return;
  for (std::uint32_t s : pair_slots(src, dst)) live_[s] += d;
}

std::span<const std::uint32_t> CollectiveReplay::pair_slots(std::uint32_t src, std::uint32_t dst) {
  auto [it, added] = pair_at_.try_emplace(MirrorLoad::key(src, dst));
  if (added) {
    const auto first = static_cast<std::uint32_t>(pair_slots_.size());
    load_.slots({src, dst}, pair_slots_);
    it->second = {first, static_cast<std::uint32_t>(pair_slots_.size()) - first};
  }
  return {pair_slots_.data() + it->second.first, it->second.second};
}

void CollectiveReplay::count_rest(const Instance& co, int d) {
  if (!co.split) return;
  for (std::uint32_t s : co.split->rest_slots[co.phase]) rest_live_[s] += d;
}

const CollectiveReplay::SlotCounts& CollectiveReplay::send_counts(std::uint32_t set) {
  auto [it, added] = send_mirror_slots_.try_emplace(set);
  if (added) it->second = mirror_counts(g_.mirror_sets()[set].pairs);
  return it->second;
}

CollectiveReplay::SlotCounts CollectiveReplay::mirror_counts(const std::vector<DevicePair>& pairs) {
  // By class, but where another job's counts add its links up one by one (count_part_mirrors).
  return g_.part_begin.size() > 1 ? load_.counts(pairs) : load_.class_counts(pairs);
}

void CollectiveReplay::count_part_mirrors(const SlotCounts* m, std::uint32_t part, int d) {
  if (!m || part_mirrors_.empty()) return;
  for (const auto& [s, n] : m->links) {
    all_mirrors_[s] += d * n;
    part_mirrors_[part][s] += d * n;
  }
}

double CollectiveReplay::dynamic_stretch(std::uint32_t src, std::uint32_t dst, const SlotCounts* mirrors,
                                         std::uint32_t part) {
  if (src == dst) return 1;
  double alone = std::numeric_limits<double>::infinity(), shared = alone;
  for (std::uint32_t s : pair_slots(src, dst)) {
    const double b = load_.slot_bandwidth(s), k = std::max(1, live_[s]);
    double others = rest_live_[s];
    if (mirrors) others += mirrors->at(s);
    // Another job's mirrors on this link (its own are its representative's only: within one
    // job a mirrored group may be another task's built group, counted by live_).
    if (!part_mirrors_.empty()) others += all_mirrors_[s] - part_mirrors_[part][s];
    alone = std::min(alone, b / k);
    shared = std::min(shared, b / (k + others));
  }
  return shared < alone ? alone / shared : 1;
}

const CollectiveReplay::SlotCounts* CollectiveReplay::mirror_slots(int c, std::size_t phase) {
  const Instance& co = colls_[static_cast<std::size_t>(c)];
  const std::uint32_t set = set_of(co.task);
  if (set == kNoSet) return nullptr;
  auto [it, added] = mirror_slots_.try_emplace({co.plan, set, phase});
  if (added) {
    const Task& t = g_[co.task];
    std::vector<DevicePair> pairs;
    for (const MirrorPlan& m : mirror_plans(t, set)) {
      const CollectiveExpansion& q = *m.plan;
      if (co.plan->flow) {  // flow mode by phases: `phase` is a step of the schedule
        if (q.flow && q.flow->steps == co.plan->flow->steps) {
          for (const FlowSchedule::Xfer& x : q.flow->transfers)
            if (x.step == phase && x.timer <= 0)
              pairs.emplace_back(m.at(q.rank_devices[x.src]), m.at(q.rank_devices[x.dst]));
          continue;
        }
      } else if (q.phases.size() == co.plan->phases.size()) {
        for (const PlannedFlow& f : q.phases[phase].flows) pairs.emplace_back(m.at(f.src), m.at(f.dst));
        continue;
      }
      for (const PlannedFlow& f : q.pair_bytes) pairs.emplace_back(m.at(f.src), m.at(f.dst));
    }
    it->second = mirror_counts(pairs);
  }
  return &it->second;
}

void CollectiveReplay::account_rest() {
  std::vector<double>& edge = host_.edge_bytes();
  const auto charge = [&](const PlannedFlow& f, double runs) {  // a translate's links moved, not routed
    planner_.router().for_link_slots(static_cast<int>(f.src), static_cast<int>(f.dst),
                                     [&](std::size_t s) { edge[s / 2] += f.bytes * runs; });
  };
  for (const Split& s : splits_) {
    if (s.runs == 0) continue;
    for (const auto& phase : s.rest)
      for (const PlannedFlow& f : phase) charge(f, s.runs);
  }
  for (const FlowSplit& s : flow_splits_)
    if (s.runs > 0)
      for (const PlannedFlow& f : s.rest_flows) charge(f, s.runs);
}

// Per-phase stretch of the built flows for their mirrors (runs without rest flows).
double CollectiveReplay::stretch(int c, std::size_t phase, std::uint32_t src, std::uint32_t dst) {
  const Instance& co = colls_[static_cast<std::size_t>(c)];
  const std::uint32_t set = set_of(co.task);
  if (set == kNoSet) return 1;
  auto [it, added] = stretches_.try_emplace({co.plan, set, phase});
  if (added) {
    const Task& t = g_[co.task];
    const CollectiveExpansion& p = *co.plan;
    const bool by_phase = phase < p.phases.size();
    std::vector<DevicePair> built, mirrored;
    for (const PlannedFlow& f : by_phase ? p.phases[phase].flows : p.pair_bytes) built.emplace_back(f.src, f.dst);
    for (const MirrorPlan& m : mirror_plans(t, set)) {
      const CollectiveExpansion& q = *m.plan;
      const bool same = by_phase && q.phases.size() == p.phases.size();
      for (const PlannedFlow& f : same ? q.phases[phase].flows : q.pair_bytes)
        mirrored.emplace_back(m.at(f.src), m.at(f.dst));
    }
    it->second = load_.stretches(built, mirrored);
  }
  const auto b = it->second.find(MirrorLoad::key(src, dst));
  return b == it->second.end() ? 1 : b->second;
}

double CollectiveReplay::send_stretch(TaskId t) {
  const std::uint32_t set = set_of(t);
  const Task& task = g_[t];
  if (has_rest_ && !g_.is_memory(task.device) && !g_.is_memory(task.peer)) {
    const SlotCounts* mirrors = nullptr;
    if (set != kNoSet) {
      mirrors = &send_counts(set);
      if (!part_mirrors_.empty()) {
        count_part_mirrors(mirrors, g_.part_of(t), +1);
        send_mirrors_live_[t] = mirrors;
      }
    }
    return dynamic_stretch(task.device, task.peer, mirrors, g_.part_of(t));
  }
  if (set == kNoSet) return 1;
  const std::uint64_t k = MirrorLoad::key(task.device, task.peer);
  auto [it, added] = send_stretches_.try_emplace({set, k}, 1.0);
  if (added) {
    const Stretches b = load_.stretches({{task.device, task.peer}}, g_.mirror_sets()[set].pairs);
    if (const auto f = b.find(k); f != b.end()) it->second = f->second;
  }
  return it->second;
}

void CollectiveReplay::send_ended(TaskId t) {
  if (send_mirrors_live_.empty()) return;
  const auto it = send_mirrors_live_.find(t);
  if (it == send_mirrors_live_.end()) return;
  count_part_mirrors(it->second, g_.part_of(t), -1);
  send_mirrors_live_.erase(it);
}

const CollectiveExpansion& CollectiveReplay::plan_of(const Task& t) {
  // The last plan of the group and operation first: a group runs the same collective many
  // times (sequence parallelism alternates all-gather and reduce-scatter on one group).
  const std::size_t slot = std::size_t{t.group} * kOps + static_cast<std::size_t>(t.op);
  LastPlan& last = last_plan_[slot];
  if (last.plan && last.bytes == t.bytes.value()) return *last.plan;
  auto key = std::make_tuple(t.group, static_cast<int>(t.op), t.bytes.value());
  if (auto it = plans_.find(key); it != plans_.end()) {
    last = {t.bytes.value(), it->second};
    return *it->second;
  }
  CollectiveFamily family;
  if (const TaskGraph::GroupFamily* f = g_.group_family(t.group)) family = {f->first, f->siblings.get()};
  const CollectiveExpansion& p = planner_.plan(g_.groups()[t.group], t.op, t.bytes.value(), {}, family);
  plans_.emplace(key, &p);
  last = {t.bytes.value(), &p};
  return p;
}

void CollectiveReplay::plan_all(std::set<std::pair<std::uint32_t, std::uint32_t>>& pairs, bool solo) {
  std::set<const CollectiveExpansion*> seen;
  for (const Task& t : g_.tasks()) {
    if (t.kind != TaskKind::collective) continue;
    const CollectiveExpansion& p = plan_of(t);
    if (!seen.insert(&p).second) continue;
    if (p.flow) {
      if (const FlowSplit* s = flow_split_of(p)) {  // the transfers that run
        for (std::size_t i = 0; i < s->run.size(); ++i) {
          const FlowSchedule::Xfer& x = p.flow->transfers[i];
          if (s->run[i] && x.timer <= 0) pairs.insert({p.rank_devices[x.src], p.rank_devices[x.dst]});
        }
      } else {
        for (const PlannedFlow& f : p.pair_bytes) pairs.insert({f.src, f.dst});
      }
      continue;
    }
    for (const auto& phase : split_of(p).launched)  // event mode: the flows that run
      for (const PlannedFlow& f : phase) pairs.insert({f.src, f.dst});
  }
  if (solo) find_solo();
}

int CollectiveReplay::channels(TaskId t) {
  const CollectiveExpansion& p = plan_of(g_[t]);
  if (p.estimate.protocol == "direct" || p.rank_devices.empty()) return 0;
  const Task& task = g_[t];
  if (overlap_sms_ && (task.comm == CommClass::tp || task.comm == CommClass::sp)) return *overlap_sms_;
  return held_channels(planner_.router().graph(), g_.groups()[task.group], p.estimate);
}

void CollectiveReplay::start(TaskId t) {
  const CollectiveExpansion& p = plan_of(g_[t]);
  if (p.rank_devices.empty()) {  // one rank or nothing to send
    host_.launch_timer(Seconds{}, t, -1, 0);
    return;
  }
  int c;
  if (!free_.empty()) {  // a finished instance, its vectors' storage kept
    c = free_.back();
    free_.pop_back();
  } else {
    colls_.emplace_back();
    c = static_cast<int>(colls_.size()) - 1;
  }
  Instance& co = colls_[static_cast<std::size_t>(c)];
  co.task = t;
  co.plan = &p;
  co.split = nullptr;
  co.flow_split = nullptr;
  co.pending = 0;
  co.phase = 0;
  co.in_timer = false;
  co.remaining = 0;
  planner_.add_timer_bytes(p, host_.edge_bytes());  // bytes no flow carries
  if (!p.flow) {
    co.split = &split_of(p);
    co.split->runs += 1;
    if (!solo_.empty() && solo_[t]) {
      const double d = solo_time(c);
      std::vector<double>& edge = host_.edge_bytes();  // the launched flows' bytes (Replay::comm)
      for (const auto& phase : co.split->launched)
        for (const PlannedFlow& f : phase)
          planner_.router().for_link_slots(static_cast<int>(f.src), static_cast<int>(f.dst),
                                           [&](std::size_t s) { edge[s / 2] += f.bytes; });
      free_.push_back(c);
      host_.launch_timer(Seconds(d), t, -1, 0);
      return;
    }
    run_phase(c);
    return;
  }
  if (p.estimate.protocol_term.value() > 0) {  // the protocol's own time, then the flows
    co.in_timer = true;
    host_.launch_timer(p.estimate.protocol_term, t, c, 0);
    return;
  }
  start_flows(c);
}

// Event mode: the phase's timer (when it has one), then its flows.
void CollectiveReplay::run_phase(int c) {
  Instance& co = colls_[static_cast<std::size_t>(c)];
  if (co.phase == co.plan->phases.size()) {
    finish(c);
    return;
  }
  const CoarsePhase& ph = co.plan->phases[co.phase];
  if (ph.timer.value() > 0) {
    co.in_timer = true;
    co.pending = 1;
    host_.launch_timer(ph.timer, co.task, c, 0);
    return;
  }
  launch_flows(c);
}

void CollectiveReplay::launch_flows(int c) {
  Instance& co = colls_[static_cast<std::size_t>(c)];
  const std::vector<PlannedFlow>& flows = co.split->launched[co.phase];
  co.in_timer = false;
  if (flows.empty()) {
    ++co.phase;
    run_phase(c);
    return;
  }
  co.pending = static_cast<std::uint32_t>(flows.size());
  if (!has_rest_) {
    for (const PlannedFlow& f : flows)
      host_.launch_comm(f.src, f.dst, f.bytes, co.task, c, 0, stretch(c, co.phase, f.src, f.dst));
    return;
  }
  count_rest(co, +1);
  for (const PlannedFlow& f : flows) flow_started(f.src, f.dst);
  const SlotCounts* mirrors = mirror_slots(c, co.phase);
  const std::uint32_t part = g_.part_of(co.task);
  if (!part_mirrors_.empty()) {
    count_part_mirrors(mirrors, part, +1);
    co.mirrors_live = mirrors;
  }
  for (const PlannedFlow& f : flows)
    host_.launch_comm(f.src, f.dst, f.bytes, co.task, c, 0, dynamic_stretch(f.src, f.dst, mirrors, part));
}

void CollectiveReplay::on_activity(int c, std::uint32_t item) {
  Instance& co = colls_[static_cast<std::size_t>(c)];
  if (co.plan->flow) {
    if (co.in_timer) {
      co.in_timer = false;
      start_flows(c);
      return;
    }
    transfer_done(c, item);
    return;
  }
  if (--co.pending > 0) return;
  if (co.in_timer) {
    launch_flows(c);
    return;
  }
  count_rest(co, -1);
  count_part_mirrors(static_cast<const SlotCounts*>(co.mirrors_live), g_.part_of(co.task), -1);
  co.mirrors_live = nullptr;
  ++co.phase;
  run_phase(c);
}

void CollectiveReplay::finish(int c) {
  Instance& co = colls_[static_cast<std::size_t>(c)];
  const TaskId t = co.task;
  host_.finish(t);  // may start collectives; instance c is free only after
  free_.push_back(c);
}

const std::vector<CollectiveReplay::MirrorPlan>& CollectiveReplay::mirror_plans(const Task& t, std::uint32_t set) {
  const CollectiveExpansion& base = plan_of(t);
  auto [it, added] = mirror_plans_.try_emplace({&base, set});
  if (!added) return it->second;
  const std::vector<std::uint32_t>& base_group = g_.groups()[t.group];
  const std::vector<std::uint32_t>& groups = g_.mirror_sets()[set].groups;
  it->second.reserve(groups.size());
  for (std::uint32_t group_id : groups) {
    const auto& group = g_.groups()[group_id];
    if (const std::optional<std::int64_t> o = planner_.shift(base, base_group, group)) {
      it->second.push_back({&base, *o});
      continue;
    }
    const CollectiveExpansion* own = nullptr;
    try {  // the mirrored collective's algorithm; a symmetric group always supports it
      own = &planner_.plan(group, t.op, t.bytes.value(), base.algorithm);
    } catch (const InputError&) { own = &planner_.plan(group, t.op, t.bytes.value()); }
    it->second.push_back({own, 0});
  }
  return it->second;
}

void CollectiveReplay::account_mirror(TaskId task, std::uint32_t set, double copies) {
  for (const MirrorPlan& q : mirror_plans(g_[task], set))
    planner_.add_edge_bytes(*q.plan, host_.edge_bytes(), copies, q.offset);
}

}  // namespace hcsim::engine
