#include "sim/engine/collective_replay.hpp"

#include "sim/core/error.hpp"

namespace hcsim::engine {

CollectiveReplay::CollectiveReplay(const TaskGraph& g, CollectivePlanner& planner, ActivityHost& host)
    : g_(g), planner_(planner), host_(host), load_(planner.router().graph(), planner.router()) {
  for (const auto& m : g.mirrors()) mirror_set_.emplace(m.task, m.set);
}

double CollectiveReplay::stretch(int c, std::size_t phase, std::uint32_t src, std::uint32_t dst) {
  const Instance& co = colls_[static_cast<std::size_t>(c)];
  const auto set = mirror_set_.find(co.task);
  if (set == mirror_set_.end()) return 1;
  auto [it, added] = stretches_.try_emplace({co.plan, set->second, phase});
  if (added) {
    const Task& t = g_[co.task];
    const CollectiveExpansion& p = *co.plan;
    const bool by_phase = phase < p.phases.size();
    std::vector<DevicePair> built, mirrored;
    for (const PlannedFlow& f : by_phase ? p.phases[phase].flows : p.pair_bytes) built.emplace_back(f.src, f.dst);
    for (std::uint32_t group : g_.mirror_sets()[set->second].groups) {
      const CollectiveExpansion& q = mirror_plan(t, group);
      const bool same = by_phase && q.phases.size() == p.phases.size();
      for (const PlannedFlow& f : same ? q.phases[phase].flows : q.pair_bytes) mirrored.emplace_back(f.src, f.dst);
    }
    it->second = load_.stretches(built, mirrored);
  }
  const auto b = it->second.find(MirrorLoad::key(src, dst));
  return b == it->second.end() ? 1 : b->second;
}

double CollectiveReplay::send_stretch(TaskId t) {
  const auto set = mirror_set_.find(t);
  if (set == mirror_set_.end()) return 1;
  const Task& task = g_[t];
  const std::uint64_t k = MirrorLoad::key(task.device, task.peer);
  auto [it, added] = send_stretches_.try_emplace({set->second, k}, 1.0);
  if (added) {
    const Stretches b = load_.stretches({{task.device, task.peer}}, g_.mirror_sets()[set->second].pairs);
    if (const auto f = b.find(k); f != b.end()) it->second = f->second;
  }
  return it->second;
}

const CollectiveExpansion& CollectiveReplay::plan_of(const Task& t) {
  auto key = std::make_tuple(t.group, static_cast<int>(t.op), t.bytes.value());
  if (auto it = plans_.find(key); it != plans_.end()) return *it->second;
  const CollectiveExpansion& p = planner_.plan(g_.groups()[t.group], t.op, t.bytes.value());
  plans_.emplace(key, &p);
  return p;
}

void CollectiveReplay::plan_all(std::set<std::pair<std::uint32_t, std::uint32_t>>& pairs) {
  std::set<const CollectiveExpansion*> seen;
  for (const Task& t : g_.tasks()) {
    if (t.kind != TaskKind::collective) continue;
    const CollectiveExpansion& p = plan_of(t);
    if (!seen.insert(&p).second) continue;
    for (const PlannedFlow& f : p.pair_bytes) pairs.insert({f.src, f.dst});
  }
}

void CollectiveReplay::start(TaskId t) {
  const CollectiveExpansion& p = plan_of(g_[t]);
  if (p.rank_devices.empty()) {  // one rank or nothing to send
    host_.launch_timer(Seconds{}, t, -1, 0);
    return;
  }
  colls_.push_back({});
  const int c = static_cast<int>(colls_.size()) - 1;
  Instance& co = colls_.back();
  co.task = t;
  co.plan = &p;
  planner_.add_timer_bytes(p, host_.edge_bytes());  // bytes no flow carries
  if (!p.flow) {
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

void CollectiveReplay::start_flows(int c) {
  Instance& co = colls_[static_cast<std::size_t>(c)];
  const FlowSchedule& f = *co.plan->flow;
  co.remaining = f.transfers.size();
  if (co.remaining == 0) {
    finish(c);
    return;
  }
  const auto n = static_cast<std::size_t>(f.ranks);
  co.done.assign(n * f.steps, 0);
  co.first_open.assign(n, 0);
  co.next_send.assign(f.send_begin.begin(), f.send_begin.end() - 1);
  for (std::uint32_t r = 0; r < n; ++r) advance(c, r);
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
  const CoarsePhase& ph = co.plan->phases[co.phase];
  co.in_timer = false;
  if (ph.flows.empty()) {
    ++co.phase;
    run_phase(c);
    return;
  }
  co.pending = static_cast<std::uint32_t>(ph.flows.size());
  for (const PlannedFlow& f : ph.flows)
    host_.launch_comm(f.src, f.dst, f.bytes, co.task, c, 0, stretch(c, co.phase, f.src, f.dst));
}

// Flow mode: launches every send of `rank` whose step has no open earlier step of that rank.
void CollectiveReplay::advance(int c, std::uint32_t rank) {
  Instance& co = colls_[static_cast<std::size_t>(c)];
  const FlowSchedule& f = *co.plan->flow;
  const std::size_t row = static_cast<std::size_t>(rank) * f.steps;
  std::uint32_t& open = co.first_open[rank];
  while (open < f.steps && co.done[row + open] == f.involvement[row + open]) ++open;
  std::uint32_t& next = co.next_send[rank];
  while (next < f.send_begin[rank + 1]) {
    const std::uint32_t i = f.send_index[next];
    const FlowSchedule::Xfer& x = f.transfers[i];
    if (x.step > open) break;
    ++next;
    if (x.timer > 0)  // the rank's multimem transfers of the step
      host_.launch_timer(Seconds(x.timer), co.task, c, i);
    else {
      const std::uint32_t a = co.plan->rank_devices[x.src], b = co.plan->rank_devices[x.dst];
      host_.launch_comm(a, b, x.bytes, co.task, c, i, stretch(c, static_cast<std::size_t>(-1), a, b));
    }
  }
}

void CollectiveReplay::transfer_done(int c, std::uint32_t item) {
  Instance& co = colls_[static_cast<std::size_t>(c)];
  const FlowSchedule& f = *co.plan->flow;
  const FlowSchedule::Xfer& x = f.transfers[item];
  ++co.done[static_cast<std::size_t>(x.src) * f.steps + x.step];
  ++co.done[static_cast<std::size_t>(x.dst) * f.steps + x.step];
  if (--co.remaining == 0) {
    finish(c);
    return;
  }
  advance(c, x.src);
  advance(c, x.dst);
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
  ++co.phase;
  run_phase(c);
}

void CollectiveReplay::finish(int c) {
  Instance& co = colls_[static_cast<std::size_t>(c)];
  const TaskId t = co.task;
  co.done = {};
  co.first_open = {};
  co.next_send = {};
  host_.finish(t);
}

const CollectiveExpansion& CollectiveReplay::mirror_plan(const Task& t, std::uint32_t group_id) {
  const auto& group = g_.groups()[group_id];
  try {  // the mirrored collective's algorithm; a symmetric group always supports it
    return planner_.plan(group, t.op, t.bytes.value(), plan_of(t).algorithm);
  } catch (const InputError&) {
    return planner_.plan(group, t.op, t.bytes.value());
  }
}

void CollectiveReplay::account_mirror(TaskId task, std::uint32_t group_id, double copies) {
  planner_.add_edge_bytes(mirror_plan(g_[task], group_id), host_.edge_bytes(), copies);
}

}  // namespace hcsim::engine
