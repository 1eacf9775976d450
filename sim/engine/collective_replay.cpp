#include "sim/engine/collective_replay.hpp"

#include <algorithm>
#include <array>
#include <cmath>
#include <limits>

#include "sim/core/error.hpp"

namespace hcsim::engine {
CollectiveReplay::CollectiveReplay(const TaskGraph& g, CollectivePlanner& planner, ActivityHost& host)
    : g_(g), planner_(planner), host_(host), load_(planner.router().graph(), planner.router()) {
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
      run[i] = built(ph.flows[i].src) || built(ph.flows[i].dst) ? 1 : 0;
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
    if (!r.empty() && !has_rest_) {
      has_rest_ = true;
      live_.assign(load_.slot_count(), 0);
      slot_bandwidth_.resize(load_.slot_count());
      for (std::size_t k = 0; k < slot_bandwidth_.size(); ++k) slot_bandwidth_[k] = load_.slot_bandwidth(k);
      rest_live_.assign(load_.slot_count(), 0);
      if (g_.part_begin.size() > 1) {
        all_mirrors_.assign(load_.slot_count(), 0);
        part_mirrors_.assign(g_.part_begin.size(), std::vector<std::int32_t>(load_.slot_count(), 0));
      }
    }
  }
  return s;
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

CollectiveReplay::SlotCounts CollectiveReplay::slot_counts(const std::vector<DevicePair>& pairs) const {
  std::vector<std::uint32_t> slots;
  for (const DevicePair& p : pairs) load_.slots(p, slots);
  SlotCounts out;
  for (std::uint32_t s : slots) ++out[s];
  return out;
}

void CollectiveReplay::count_part_mirrors(const SlotCounts* m, std::uint32_t part, int d) {
  if (!m || part_mirrors_.empty()) return;
  for (const auto& [s, n] : *m) {
    all_mirrors_[s] += d * n;
    part_mirrors_[part][s] += d * n;
  }
}

double CollectiveReplay::dynamic_stretch(std::uint32_t src, std::uint32_t dst, const SlotCounts* mirrors,
                                         std::uint32_t part) {
  if (src == dst) return 1;
  double alone = std::numeric_limits<double>::infinity(), shared = alone;
  for (std::uint32_t s : pair_slots(src, dst)) {
    const double b = slot_bandwidth_[s], k = std::max(1, live_[s]);
    double others = rest_live_[s];
    if (mirrors)
      if (const auto m = mirrors->find(s); m != mirrors->end()) others += m->second;
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
    for (std::uint32_t group : g_.mirror_sets()[set].groups) {
      const CollectiveExpansion& q = mirror_plan(t, group);
      const bool same = q.phases.size() == co.plan->phases.size();
      for (const PlannedFlow& f : same ? q.phases[phase].flows : q.pair_bytes) pairs.emplace_back(f.src, f.dst);
    }
    it->second = slot_counts(pairs);
  }
  return &it->second;
}

void CollectiveReplay::account_rest() {
  std::vector<double>& edge = host_.edge_bytes();
  for (const Split& s : splits_) {
    if (s.runs == 0) continue;
    for (const auto& phase : s.rest)
      for (const PlannedFlow& f : phase)
        for (int e : planner_.router().device_route(static_cast<int>(f.src), static_cast<int>(f.dst)).edges)
          edge[static_cast<std::size_t>(e)] += f.bytes * s.runs;
  }
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
    for (std::uint32_t group : g_.mirror_sets()[set].groups) {
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
  const std::uint32_t set = set_of(t);
  const Task& task = g_[t];
  if (has_rest_ && !g_.is_memory(task.device) && !g_.is_memory(task.peer)) {
    const SlotCounts* mirrors = nullptr;
    if (set != kNoSet) {
      auto [it, added] = send_mirror_slots_.try_emplace(set);
      if (added) it->second = slot_counts(g_.mirror_sets()[set].pairs);
      mirrors = &it->second;
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
  if (slot >= last_plan_.size()) last_plan_.resize((std::size_t{t.group} + 1) * kOps);
  LastPlan& last = last_plan_[slot];
  if (last.plan && last.bytes == t.bytes.value()) return *last.plan;
  auto key = std::make_tuple(t.group, static_cast<int>(t.op), t.bytes.value());
  if (auto it = plans_.find(key); it != plans_.end()) {
    last = {t.bytes.value(), it->second};
    return *it->second;
  }
  CollectiveFamily family;
  if (const TaskGraph::GroupFamily* f = g_.group_family(t.group)) family = {f->first, &f->siblings};
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
      for (const PlannedFlow& f : p.pair_bytes) pairs.insert({f.src, f.dst});
      continue;
    }
    for (const auto& phase : split_of(p).launched)  // event mode: the flows that run
      for (const PlannedFlow& f : phase) pairs.insert({f.src, f.dst});
  }
  if (solo) find_solo();
}

void CollectiveReplay::find_solo() {
  if (planner_.flow_mode() || g_.memory_endpoints > 0 || g_.part_begin.size() > 1) return;
  // Who crosses each directed link: up to kUsers distinct users (a group's collectives, or the
  // sends of one device pair: kSends + its index), else kShared (so is a mirror's flow).
  constexpr std::int32_t kFree = -1, kShared = -2, kSends = 1 << 30;
  constexpr std::size_t kUsers = 4;
  std::vector<std::array<std::int32_t, kUsers>> users(load_.slot_count());
  for (auto& u : users) u.fill(kFree);
  std::vector<std::uint32_t> slots;
  const auto mark = [&](std::uint32_t src, std::uint32_t dst, std::int32_t who) {
    slots.clear();
    load_.slots({src, dst}, slots);
    for (std::uint32_t s : slots) {
      auto& u = users[s];
      if (u[0] == kShared) continue;
      std::size_t k = 0;
      while (k < kUsers && u[k] != kFree && u[k] != who) ++k;
      if (who == kShared || k == kUsers)
        u.fill(kShared);
      else
        u[k] = who;
    }
  };
  std::set<std::pair<const CollectiveExpansion*, std::uint32_t>> plans;     // (plan, group)
  std::set<std::pair<const CollectiveExpansion*, std::uint32_t>> mirrored;  // (plan, mirror set)
  std::set<std::uint32_t> send_sets;                           // a set's pairs are marked once, for its first send
  std::unordered_map<std::uint64_t, std::int32_t> send_pairs;  // device pair -> its index
  std::vector<std::int32_t> user_of(g_.size(), kFree);         // per task: its user id
  for (TaskId t = 0; t < g_.size(); ++t) {
    const Task& task = g_[t];
    const std::uint32_t set = set_of(t);
    if (task.kind == TaskKind::send) {
      if (task.device != task.peer && task.bytes > Bytes{}) {
        const auto [it, added] = send_pairs.try_emplace(MirrorLoad::key(task.device, task.peer),
                                                        kSends + static_cast<std::int32_t>(send_pairs.size()));
        if (added) mark(task.device, task.peer, it->second);
        user_of[t] = it->second;
      }
      // A mirror runs when the task it mirrors does: its flows are that task's use.
      if (set != kNoSet && send_sets.insert(set).second)
        for (const auto& [src, dst] : g_.mirror_sets()[set].pairs)
          mark(src, dst, user_of[t] >= 0 ? user_of[t] : kShared);
    } else if (task.kind == TaskKind::collective) {
      const CollectiveExpansion& p = plan_of(task);
      if (p.rank_devices.empty()) continue;
      user_of[t] = static_cast<std::int32_t>(task.group);
      if (plans.insert({&p, task.group}).second)
        for (const CoarsePhase& ph : p.phases)
          for (const PlannedFlow& f : ph.flows) mark(f.src, f.dst, static_cast<std::int32_t>(task.group));
      if (set != kNoSet && mirrored.insert({&p, set}).second)
        for (std::uint32_t group : g_.mirror_sets()[set].groups)
          for (const PlannedFlow& f : mirror_plan(task, group).pair_bytes)
            mark(f.src, f.dst, static_cast<std::int32_t>(task.group));
    }
  }
  // Candidate groups: no link shared with a mirror or with more than kUsers users, the
  // launched flows of each phase on distinct links; their foreign users (other groups, sends).
  const std::size_t groups = g_.groups().size();
  std::vector<char> bad(groups, 0), candidate(groups, 0);
  std::vector<std::set<std::int32_t>> foreign(groups);
  for (const auto& [p, group] : plans) {
    candidate[group] = 1;
    const Split& split = split_of(*p);
    for (std::size_t k = 0; k < p->phases.size() && !bad[group]; ++k) {
      for (const PlannedFlow& f : p->phases[k].flows) {
        slots.clear();
        load_.slots({f.src, f.dst}, slots);
        for (std::uint32_t s : slots)
          for (std::int32_t u : users[s]) {
            if (u == kShared)
              bad[group] = 1;
            else if (u != kFree && u != static_cast<std::int32_t>(group))
              foreign[group].insert(u);
          }
      }
      slots.clear();
      for (const PlannedFlow& f : split.launched[k]) load_.slots({f.src, f.dst}, slots);
      std::sort(slots.begin(), slots.end());
      bad[group] |= std::adjacent_find(slots.begin(), slots.end()) != slots.end() ? 1 : 0;
    }
  }
  // Each user's tasks in order, for the candidates and their foreign users.
  std::vector<char> listed_group(groups, 0), listed_send(send_pairs.size(), 0);
  for (std::size_t k = 0; k < groups; ++k) {
    if (!candidate[k] || bad[k]) continue;
    listed_group[k] = 1;
    for (std::int32_t u : foreign[k])
      (u >= kSends ? listed_send[static_cast<std::size_t>(u - kSends)] : listed_group[static_cast<std::size_t>(u)]) = 1;
  }
  std::vector<std::vector<TaskId>> group_tasks(groups), send_tasks(send_pairs.size());
  for (TaskId t = 0; t < g_.size(); ++t) {
    const std::int32_t u = user_of[t];
    if (u >= kSends) {
      if (listed_send[static_cast<std::size_t>(u - kSends)])
        send_tasks[static_cast<std::size_t>(u - kSends)].push_back(t);
    } else if (u >= 0 && listed_group[static_cast<std::size_t>(u)]) {
      group_tasks[static_cast<std::size_t>(u)].push_back(t);
    }
  }
  user_of = {};
  // Whether `from` depends on `to` (to < from) through the graph: a bounded search back along
  // the dependencies (ids grow along them); false when not found within the bound. Each
  // group's search has a bound of its own (past it the group is not solo), and so does the
  // whole (past it no further group is).
  std::int64_t total = 50'000'000, budget = 0;
  std::vector<TaskId> stack;
  const auto reaches = [&](TaskId from, TaskId to) {
    stack.assign(1, from);
    for (int visited = 0; !stack.empty() && visited < 1024 && budget > 0; ++visited, --budget) {
      const TaskId t = stack.back();
      stack.pop_back();
      for (TaskId d : g_.deps(t)) {
        if (d == to) return true;
        if (d > to) stack.push_back(d);
      }
    }
    return false;
  };
  solo_.assign(g_.size(), 0);
  bool any = false;
  for (std::size_t k = 0; k < groups; ++k) {
    if (!candidate[k] || bad[k]) continue;
    const std::vector<TaskId>& mine = group_tasks[k];
    // Worth it where the group runs more collectives than others cross its links (a tensor-
    // parallel group beside the few data-parallel ones), not the other way round.
    std::size_t others = 0;
    for (std::int32_t u : foreign[k])
      others +=
          (u >= kSends ? send_tasks[static_cast<std::size_t>(u - kSends)] : group_tasks[static_cast<std::size_t>(u)])
              .size();
    if (others > mine.size() / 4 + 64) continue;
    budget = std::min<std::int64_t>(total, 2'000'000);
    total -= budget;
    // One after another: each collective of the group depends on the one before.
    bool chained = true;
    for (std::size_t i = 1; i < mine.size() && chained; ++i) chained = reaches(mine[i], mine[i - 1]);
    if (!chained || budget <= 0) {
      total += std::max<std::int64_t>(budget, 0);
      continue;
    }
    // A foreign task y is ordered with mine[0 .. a] (they come before it) and mine[d ..]
    // (after it), the chain making the found ones' neighbours so; those between may run
    // beside it and are not solo. Found by galloping out from y's place, then bisecting.
    std::vector<int> cover(mine.size() + 1, 0);  // +1 / -1 at the ends of the intervals not solo
    const auto gallop = [&](std::size_t from, bool back, TaskId y) -> std::ptrdiff_t {
      // The nearest index (searching away from `from`) whose task is ordered with y; -1: none.
      const auto n = static_cast<std::ptrdiff_t>(mine.size());
      const auto ordered = [&](std::ptrdiff_t i) {
        return back ? reaches(y, mine[static_cast<std::size_t>(i)]) : reaches(mine[static_cast<std::size_t>(i)], y);
      };
      std::ptrdiff_t miss = back ? static_cast<std::ptrdiff_t>(from) + 1 : static_cast<std::ptrdiff_t>(from) - 1;
      for (std::ptrdiff_t step = 1;; step *= 2) {
        std::ptrdiff_t i = back ? miss - step : miss + step;
        if (back ? i < 0 : i >= n) i = back ? 0 : n - 1;
        if ((back ? i >= miss : i <= miss)) return -1;
        if (ordered(i)) {
          std::ptrdiff_t hit = i;  // bisect between the last miss and this hit
          while (std::abs(hit - miss) > 1) {
            const std::ptrdiff_t mid = (hit + miss) / 2;
            (ordered(mid) ? hit : miss) = mid;
          }
          return hit;
        }
        miss = i;
        if (back ? i == 0 : i == n - 1) return -1;
      }
    };
    for (std::int32_t u : foreign[k]) {
      const std::vector<TaskId>& theirs =
          u >= kSends ? send_tasks[static_cast<std::size_t>(u - kSends)] : group_tasks[static_cast<std::size_t>(u)];
      for (TaskId y : theirs) {
        const auto at = static_cast<std::size_t>(std::lower_bound(mine.begin(), mine.end(), y) - mine.begin());
        const std::ptrdiff_t a = at > 0 ? gallop(at - 1, true, y) : -1;
        const std::ptrdiff_t d = at < mine.size() ? gallop(at, false, y) : -1;
        const std::size_t lo = static_cast<std::size_t>(a + 1), hi = d < 0 ? mine.size() : static_cast<std::size_t>(d);
        if (lo < hi) {
          ++cover[lo];
          --cover[hi];
        }
      }
    }
    total += std::max<std::int64_t>(budget, 0);  // what the group did not use
    if (budget <= 0) continue;
    int open = 0;
    for (std::size_t i = 0; i < mine.size(); ++i) {
      open += cover[i];
      if (open == 0) {
        solo_[mine[i]] = 1;
        any = true;
      }
    }
  }
  if (!any) solo_.clear();
}

double CollectiveReplay::solo_time(int c) {
  Instance& co = colls_[static_cast<std::size_t>(c)];
  auto [it, added] = solo_times_.try_emplace({co.plan, set_of(co.task)}, 0.0);
  if (!added) return it->second;
  const TopologyGraph& topo = planner_.router().graph();
  double total = 0;
  for (co.phase = 0; co.phase < co.plan->phases.size(); ++co.phase) {
    total += co.plan->phases[co.phase].timer.value();
    const std::vector<PlannedFlow>& flows = co.split->launched[co.phase];
    if (flows.empty()) continue;
    // The stretch each flow would get at its launch (launch_flows): the counts it would see
    // are the phase's own, as nothing else crosses its links.
    std::vector<double> stretch;
    if (has_rest_) {
      count_rest(co, +1);
      for (const PlannedFlow& f : flows) flow_started(f.src, f.dst);
      const SlotCounts* mirrors = mirror_slots(c, co.phase);
      for (const PlannedFlow& f : flows) stretch.push_back(dynamic_stretch(f.src, f.dst, mirrors, g_.part_of(co.task)));
      for (const PlannedFlow& f : flows) flow_ended(f.src, f.dst);
      count_rest(co, -1);
    } else {
      for (const PlannedFlow& f : flows) stretch.push_back(this->stretch(c, co.phase, f.src, f.dst));
    }
    double slowest = 0;
    for (std::size_t i = 0; i < flows.size(); ++i) {
      const PlannedFlow& f = flows[i];
      // As the platform declares the route (replay.cpp, build_platform): its links'
      // latencies add up, the flow runs at the narrowest one's bandwidth x efficiency.
      const Route& r = planner_.router().device_route(static_cast<int>(f.src), static_cast<int>(f.dst));
      double latency = 0, bandwidth = std::numeric_limits<double>::infinity();
      for (int e : r.edges) {
        const TopoEdge& ed = topo.edges()[static_cast<std::size_t>(e)];
        latency += ed.link().latency.value();
        bandwidth = std::min(bandwidth, ed.bandwidth().value() * ed.link().efficiency);
      }
      const auto size = static_cast<std::uint64_t>(f.bytes * stretch[i] + 0.5);  // Replay::comm
      slowest = std::max(slowest, latency + static_cast<double>(size) / bandwidth);
    }
    total += slowest;
  }
  co.phase = 0;
  it->second = total;
  return total;
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
          for (int e : planner_.router().device_route(static_cast<int>(f.src), static_cast<int>(f.dst)).edges)
            edge[static_cast<std::size_t>(e)] += f.bytes;
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
      flow_started(a, b);
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
