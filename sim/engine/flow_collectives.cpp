// Flow mode (collective_replay.hpp): each rank's transfers in its own order, and under
// symmetry in flow mode by phases the transfers that run and those that representative
// flows stand for (FlowSplit).
#include <algorithm>

#include "sim/engine/collective_replay.hpp"

namespace hcsim::engine {

// Flow mode by phases: a flow step's transfers split as an event-mode phase's flows are
// (represent()); a rank's timer runs where the rank sends or receives a flow of its phase
// that runs (a phase of timers alone: the built ranks', else its first rank's). Only where
// the ranks of each flow step have one role (below); not in merged graphs (the shared
// cluster replays flow mode by steps).
CollectiveReplay::FlowSplit* CollectiveReplay::flow_split_of(const CollectiveExpansion& p) {
  auto [it, added] = flow_split_of_.try_emplace(&p, nullptr);
  if (!added) return it->second;
  const FlowSchedule& f = *p.flow;
  if (!representatives_ || f.phase_of_step.empty() || built_.empty() || g_.part_begin.size() > 1) return nullptr;
  std::vector<std::uint32_t> begin(f.steps + 1, 0);  // transfers of step s: [begin[s], begin[s + 1])
  for (const FlowSchedule::Xfer& x : f.transfers) ++begin[x.step + 1];
  for (std::uint32_t s = 0; s < f.steps; ++s) begin[s + 1] += begin[s];
  const auto dev = [&](std::uint32_t r) { return p.rank_devices[r]; };
  const auto timers = [&](std::uint32_t s) { return f.transfers[begin[s]].timer > 0; };
  // Only where every rank sends as many flows and receives as many in each flow step (a
  // ring's phases, pairwise exchanges): ranks in the same role keep in step, so a rank's
  // flows end when its translates' do. A tree's ranks have different roles (two children,
  // or none) and drift apart as stand-ins cannot follow (a double binary tree over 16
  // ranks: 4 % fast).
  {
    const auto n = static_cast<std::size_t>(f.ranks);
    std::vector<std::uint32_t> sends(n), receives(n);
    for (std::uint32_t s = 0; s < f.steps; ++s) {
      if (timers(s)) continue;
      std::fill(sends.begin(), sends.end(), 0);
      std::fill(receives.begin(), receives.end(), 0);
      for (std::uint32_t i = begin[s]; i < begin[s + 1]; ++i) {
        ++sends[f.transfers[i].src];
        ++receives[f.transfers[i].dst];
      }
      for (std::size_t r = 1; r < n; ++r)
        if (sends[r] != sends[0] || receives[r] != receives[0]) return nullptr;
    }
  }
  std::vector<char> run(f.transfers.size(), 0);
  for (std::uint32_t s = 0; s < f.steps; ++s) {
    if (timers(s)) continue;
    std::vector<char> r;
    std::vector<DevicePair> pairs;
    std::vector<double> bytes;
    for (std::uint32_t i = begin[s]; i < begin[s + 1]; ++i) {
      const FlowSchedule::Xfer& x = f.transfers[i];
      r.push_back(built(dev(x.src)) || built(dev(x.dst)) ? 1 : 0);
      pairs.emplace_back(dev(x.src), dev(x.dst));
      bytes.push_back(x.bytes);
    }
    if (std::find(r.begin(), r.end(), 0) != r.end()) represent(load_.shared_times(pairs, bytes), bytes, r);
    std::copy(r.begin(), r.end(), run.begin() + begin[s]);
  }
  std::vector<char> in_flows(static_cast<std::size_t>(f.ranks));
  for (std::uint32_t s = 0; s < f.steps; ++s) {
    if (!timers(s)) continue;
    const bool flows = s + 1 < f.steps && !timers(s + 1) && f.phase_of_step[s + 1] == f.phase_of_step[s];
    std::fill(in_flows.begin(), in_flows.end(), 0);
    if (flows) {
      for (std::uint32_t i = begin[s + 1]; i < begin[s + 2]; ++i)
        if (run[i]) in_flows[f.transfers[i].src] = in_flows[f.transfers[i].dst] = 1;
    } else {
      for (std::uint32_t i = begin[s]; i < begin[s + 1]; ++i)
        if (built(dev(f.transfers[i].src))) in_flows[f.transfers[i].src] = 1;
      if (std::find(in_flows.begin(), in_flows.end(), 1) == in_flows.end()) in_flows[f.transfers[begin[s]].src] = 1;
    }
    for (std::uint32_t i = begin[s]; i < begin[s + 1]; ++i) run[i] = in_flows[f.transfers[i].src];
  }
  if (std::find(run.begin(), run.end(), 0) == run.end()) return nullptr;
  FlowSplit& sp = flow_splits_.emplace_back();
  it->second = &sp;
  sp.launched.assign(f.steps, 0);
  sp.rest.resize(f.steps);
  sp.rest_slots.resize(f.steps);
  std::vector<char> active(static_cast<std::size_t>(f.ranks), 0);
  for (std::uint32_t i = 0; i < f.transfers.size(); ++i) {
    const FlowSchedule::Xfer& x = f.transfers[i];
    if (run[i]) {
      ++sp.launched[x.step];
      active[x.src] = active[x.dst] = 1;
      continue;
    }
    sp.rest[x.step].push_back(i);
    if (x.timer > 0) continue;
    sp.rest_flows.push_back({dev(x.src), dev(x.dst), x.bytes});
    load_.slots({dev(x.src), dev(x.dst)}, sp.rest_slots[x.step]);
  }
  for (std::uint32_t r = 0; r < active.size(); ++r)
    if (active[r]) sp.active.push_back(r);
  sp.run = std::move(run);
  keep_rest_counts();
  return &sp;
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
  co.flow_split = flow_split_of(*co.plan);
  if (FlowSplit* s = co.flow_split) {
    s->runs += 1;
    co.step_left = s->launched;
    co.steps_done = 0;
    count_rest_step(*s, 0, +1);
    close_steps(c);  // advances the ranks that run transfers
    return;
  }
  for (std::uint32_t r = 0; r < n; ++r) advance(c, r);
}

void CollectiveReplay::count_rest_step(const FlowSplit& s, std::uint32_t step, int d) {
  for (std::uint32_t slot : s.rest_slots[step]) rest_live_[slot] += d;
}

bool CollectiveReplay::close_steps(int c) {
  Instance& co = colls_[static_cast<std::size_t>(c)];
  const FlowSchedule& f = *co.plan->flow;
  const FlowSplit& s = *co.flow_split;
  while (co.steps_done < f.steps && co.step_left[co.steps_done] == 0) {
    const std::uint32_t step = co.steps_done;
    for (std::uint32_t i : s.rest[step]) {           // they arrive with the step's transfers that run
      const FlowSchedule::Xfer& x = f.transfers[i];  // as transfer_done counts (a timer's rank twice)
      ++co.done[static_cast<std::size_t>(x.src) * f.steps + step];
      ++co.done[static_cast<std::size_t>(x.dst) * f.steps + step];
    }
    count_rest_step(s, step, -1);
    if (++co.steps_done < f.steps) count_rest_step(s, co.steps_done, +1);
  }
  if (co.steps_done == f.steps) {
    finish(c);
    return true;
  }
  for (std::uint32_t r : s.active) advance(c, r);
  return false;
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
    if (co.flow_split && !co.flow_split->run[i]) continue;  // a rest transfer: arrives with its step
    if (x.timer > 0)  // the rank's multimem transfers of the step, or its phase's timer
      host_.launch_timer(Seconds(x.timer), co.task, c, i);
    else {
      const std::uint32_t a = co.plan->rank_devices[x.src], b = co.plan->rank_devices[x.dst];
      flow_started(a, b);
      const double st = has_rest_ ? dynamic_stretch(a, b, mirror_slots(c, x.step), g_.part_of(co.task))
                                  : stretch(c, static_cast<std::size_t>(-1), a, b);
      host_.launch_comm(a, b, x.bytes, co.task, c, i, st);
    }
  }
}

void CollectiveReplay::transfer_done(int c, std::uint32_t item) {
  Instance& co = colls_[static_cast<std::size_t>(c)];
  const FlowSchedule& f = *co.plan->flow;
  const FlowSchedule::Xfer& x = f.transfers[item];
  ++co.done[static_cast<std::size_t>(x.src) * f.steps + x.step];
  ++co.done[static_cast<std::size_t>(x.dst) * f.steps + x.step];
  if (co.flow_split) {  // the collective ends with its last step's close
    if (--co.step_left[x.step] == 0 && x.step == co.steps_done && close_steps(c)) return;
  } else if (--co.remaining == 0) {
    finish(c);
    return;
  }
  advance(c, x.src);
  advance(c, x.dst);
}

}  // namespace hcsim::engine
