// Solo collectives (collective_replay.hpp, "Solo collectives"): which collectives have
// their links to themselves, and the time their flows would take there.
#include <algorithm>
#include <array>
#include <cstdlib>
#include <map>
#include <set>
#include <unordered_map>

#include "sim/engine/collective_replay.hpp"

namespace hcsim::engine {

void CollectiveReplay::find_solo() {
  if (planner_.flow_mode() || g_.memory_endpoints > 0 || g_.part_begin.size() > 1) return;
  // Who crosses each directed link: up to kUsers distinct users (a group's collectives, or the
  // sends of one device pair: kSends + its index), else kShared (so is a mirror's flow). Only
  // the users of the links the built collectives' flows cross are read (the candidates' check
  // below), so only those links are followed: users[at[s] - 1] (at[s] = 0: not followed).
  // Marking a link again for the same user changes nothing, and what is read of a link (its
  // distinct users, or shared) does not depend on the order of the marks.
  constexpr std::int32_t kFree = -1, kShared = -2, kSends = 1 << 30;
  constexpr std::size_t kUsers = 4;
  ZeroArray<std::uint32_t> at(load_.slot_count());
  std::vector<std::array<std::int32_t, kUsers>> users;
  std::vector<std::uint32_t> followed;  // the links followed, in the order of users
  std::vector<std::uint32_t> slots;
  // A set of pairs may be marked link by link from its counts.
  const auto mark_slot = [&](std::uint32_t s, std::int32_t who) {
    if (at[s] == 0) return;
    auto& u = users[at[s] - 1];
    if (u[0] == kShared) return;
    std::size_t k = 0;
    while (k < kUsers && u[k] != kFree && u[k] != who) ++k;
    if (who == kShared || k == kUsers)
      u.fill(kShared);
    else
      u[k] = who;
  };
  const auto mark = [&](std::uint32_t src, std::uint32_t dst, std::int32_t who) {
    slots.clear();
    load_.slots({src, dst}, slots);
    for (std::uint32_t s : slots) mark_slot(s, who);
  };
  // Counts by class (MirrorLoad::class_counts) mark the followed links of their classes they
  // land on: the followed links by class, listed once.
  std::unordered_map<std::size_t, std::vector<std::pair<std::int64_t, std::uint32_t>>> followed_by_class;
  bool classes_listed = false;
  const auto mark_classes = [&](const SlotCounts& c, std::int32_t who) {
    if (!classes_listed) {
      for (std::uint32_t s : followed)
        if (const std::optional<Router::LinkClass> k = load_.slot_class(s))
          followed_by_class[k->canon].emplace_back(k->window, s);
      classes_listed = true;
    }
    for (std::size_t i = 0, j = 0; i < c.members.size(); i = j) {  // class by class
      while (j < c.members.size() && c.members[j].canon == c.members[i].canon) ++j;
      if (const auto f = followed_by_class.find(c.members[i].canon); f != followed_by_class.end())
        for (const auto& [window, s] : f->second)
          if (c.lands({c.members.data() + i, j - i}, window)) mark_slot(s, who);
    }
  };
  const auto mark_counts = [&](const SlotCounts& c, std::int32_t who) {
    for (const auto& [s, n] : c.links) mark_slot(s, who);
    if (c.by_class()) mark_classes(c, who);
  };
  // A list of pairs: by class where the fabric has classes, else route by route.
  const auto mark_pairs = [&](const std::vector<DevicePair>& pairs, std::int32_t who) {
    if (planner_.router().translation_periods() > 0) {
      mark_counts(load_.class_counts(pairs), who);
      return;
    }
    for (const auto& [src, dst] : pairs) mark(src, dst, who);
  };
  std::set<std::pair<const CollectiveExpansion*, std::uint32_t>> plans;     // (plan, group)
  std::set<std::pair<const CollectiveExpansion*, std::uint32_t>> mirrored;  // (plan, mirror set)
  std::set<std::uint32_t> send_sets;                           // a set's pairs are marked once, for its first send
  std::unordered_map<std::uint64_t, std::int32_t> send_pairs;  // device pair -> its index
  std::vector<std::int32_t> user_of(g_.size(), kFree);         // per task: its user id
  // The built collectives' links, followed, and their own flows marked on them.
  for (TaskId t = 0; t < g_.size(); ++t) {
    const Task& task = g_[t];
    if (task.kind != TaskKind::collective) continue;
    const CollectiveExpansion& p = plan_of(task);
    if (p.rank_devices.empty() || !plans.insert({&p, task.group}).second) continue;
    for (const CoarsePhase& ph : p.phases)
      for (const PlannedFlow& f : ph.flows) {
        slots.clear();
        load_.slots({f.src, f.dst}, slots);
        for (std::uint32_t x : slots) {
          if (at[x] == 0) {
            at[x] = static_cast<std::uint32_t>(users.size()) + 1;
            users.emplace_back().fill(kFree);
            followed.push_back(x);
          }
          mark_slot(x, static_cast<std::int32_t>(task.group));
        }
      }
  }
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
      if (set != kNoSet && send_sets.insert(set).second) {
        const std::int32_t who = user_of[t] >= 0 ? user_of[t] : kShared;
        if (has_rest_)  // the counts its sends' stretches read (send_stretch): its routes read once
          mark_counts(send_counts(set), who);
        else
          mark_pairs(g_.mirror_sets()[set].pairs, who);
      }
    } else if (task.kind == TaskKind::collective) {
      const CollectiveExpansion& p = plan_of(task);
      if (p.rank_devices.empty()) continue;
      user_of[t] = static_cast<std::int32_t>(task.group);
      if (set != kNoSet && mirrored.insert({&p, set}).second) {
        std::vector<DevicePair> pairs;
        for (const MirrorPlan& m : mirror_plans(task, set))
          for (const PlannedFlow& f : m.plan->pair_bytes) pairs.emplace_back(m.at(f.src), m.at(f.dst));
        mark_pairs(pairs, static_cast<std::int32_t>(task.group));
      }
    }
  }
  // Candidate groups: no link shared with a mirror or with more than kUsers users, the
  // launched flows of each phase on distinct links; their foreign users (other groups, sends).
  const std::size_t groups = g_.groups().size();
  std::vector<char> bad(groups, 0), candidate(groups, 0);
  std::map<std::size_t, std::set<std::int32_t>> foreign;  // candidates only (a few of the graph's groups)
  for (const auto& [p, group] : plans) {
    candidate[group] = 1;
    const Split& split = split_of(*p);
    for (std::size_t k = 0; k < p->phases.size() && !bad[group]; ++k) {
      for (const PlannedFlow& f : p->phases[k].flows) {
        slots.clear();
        load_.slots({f.src, f.dst}, slots);
        for (std::uint32_t s : slots)
          for (std::int32_t u : users[at[s] - 1]) {
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
  std::map<std::size_t, std::vector<TaskId>> group_tasks;  // listed groups only
  std::vector<std::vector<TaskId>> send_tasks(send_pairs.size());
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
      // The route the platform declares (replay.cpp, build_platform): its links' latencies
      // add up (Route::latency), the flow runs at the narrowest one's bandwidth x efficiency
      // (Route::bottleneck).
      const Route& r = planner_.router().device_route(static_cast<int>(f.src), static_cast<int>(f.dst));
      const auto size = static_cast<std::uint64_t>(f.bytes * stretch[i] + 0.5);  // Replay::comm
      slowest = std::max(slowest, r.latency.value() + static_cast<double>(size) / r.bottleneck.value());
    }
    total += slowest;
  }
  co.phase = 0;
  it->second = total;
  return total;
}

}  // namespace hcsim::engine
