// The emitter's communication groups and their collectives (see lowering_groups.hpp).
#include "workloads/lowering_groups.hpp"

#include <algorithm>

#include "sim/core/error.hpp"

namespace hcsim {

GroupCollectives::GroupCollectives(TaskGraph& g, StreamTasks& tasks, const StepPlan& plan, const StrategySpec& st)
    : g_(g), tasks_(tasks), plan_(plan), st_(st) {}

std::uint32_t GroupCollectives::graph_group(std::map<std::pair<int, int>, std::uint32_t>& cache, int s, int j,
                                            const DeviceGroup& g) {
  auto [it, added] = cache.try_emplace(std::make_pair(s, j), 0);
  if (added) {
    std::vector<std::uint32_t> devs;
    for (int k = 0; k < g.count; ++k) devs.push_back(static_cast<std::uint32_t>(g.device(k)));
    it->second = g_.add_group(std::move(devs));
    g_.set_group_family(it->second, plan_.layout.first_device(s) - g.first, siblings_.of(g));
  }
  return it->second;
}

std::uint32_t GroupCollectives::tp_group(int s, int d) {
  return graph_group(tp_groups_, s, d, plan_.layout.tensor_group(s, d));
}
std::uint32_t GroupCollectives::dp_group(int s, int t) {
  return graph_group(dp_groups_, s, t, plan_.layout.replica_group(s, t));
}
// The expert layout (workloads/layout.hpp): expert tensor rank i % etp, expert rank
// (i / etp) % ep, expert-data-parallel rank i / (ep * etp).
std::uint32_t GroupCollectives::expert_group(int s, int j) {
  return graph_group(expert_groups_, s, j, plan_.layout.expert_group(s, j));
}
std::uint32_t GroupCollectives::expert_tensor_group(int s, int k) {
  return graph_group(expert_tensor_groups_, s, k, plan_.layout.expert_tensor_group(s, k));
}
std::uint32_t GroupCollectives::expert_replica_group(int s, int q) {
  return graph_group(expert_replica_groups_, s, q, plan_.layout.expert_replica_group(s, q));
}

// The mirror set of stage s's groups group(k), k in [from, to) (the ranks not built).
std::uint32_t GroupCollectives::group_mirrors(Sets& sets, int s, int from, int to,
                                              const std::function<std::uint32_t(int)>& group) {
  auto [it, added] = sets.try_emplace(s, 0);
  if (added) {
    std::vector<std::uint32_t> groups;
    for (int k = from; k < to; ++k) groups.push_back(group(k));
    it->second = g_.add_group_mirror_set(std::move(groups));
  }
  return it->second;
}

void GroupCollectives::mirror_dp(int s, int t, TaskId id) {
  if (t != 0) return;
  g_.add_mirror(id, group_mirrors(dp_mirrors_, s, tp_, st_.tp, [&](int k) { return dp_group(s, k); }));
}

TaskId GroupCollectives::dp_collective(int s, int t, CollectiveOp op, Bytes bytes, CommClass cls, Phase phase,
                                       int microbatch, std::vector<TaskId> deps) {
  const TaskId id = tasks_.collective(dp_group(s, t), op, bytes, cls, phase, s, microbatch, deps, true);
  mirror_dp(s, t, id);
  return id;
}

std::uint32_t GroupCollectives::pair_mirrors(std::array<int, 3> key, const std::function<int(int)>& peer) {
  auto [it, added] = pair_mirrors_.try_emplace(key, 0);
  if (added) {
    std::vector<std::pair<std::uint32_t, std::uint32_t>> pairs;
    for (int d = 0; d < st_.dp; ++d)
      for (int t = 0; t < st_.tp; ++t)
        if (d >= dp_ || t >= tp_)
          pairs.emplace_back(plan_.layout.device(key[0], d, t), plan_.layout.device(key[1], peer(d), t));
    it->second = g_.add_mirror_set(std::move(pairs));
  }
  return it->second;
}

void GroupCollectives::tp_comm(int s, const PipeOp& op, const Item& it, const std::vector<TaskId>& chain,
                               const std::vector<TaskId>& extra, std::vector<TaskId>& out) {
  for (int d = 0; d < dp_; ++d) {
    std::vector<TaskId> deps;
    for (int t = 0; t < tp_; ++t)
      for (const auto* v : {&chain, &extra}) deps.push_back((*v)[static_cast<std::size_t>(d * tp_ + t)]);
    TaskId id =
        tasks_.collective(tp_group(s, d), it.op, it.comm_bytes, st_.sequence_parallel ? CommClass::sp : CommClass::tp,
                          op.forward() ? Phase::forward : Phase::backward, s, op.microbatch, deps, false);
    for (int t = 0; t < tp_; ++t) out[static_cast<std::size_t>(d * tp_ + t)] = id;
    if (d == 0)  // the tensor-parallel collectives of the data-parallel ranks not built
      g_.add_mirror(id, group_mirrors(tp_mirrors_, s, dp_, st_.dp, [&](int k) { return tp_group(s, k); }));
  }
}

// One collective per group key(r) of the built ranks r (the ranks of a group waiting for
// each other), each after its built ranks' `chain` and `extra` tasks; `out` gets the ids.
// Groups with no built rank (symmetry) are the first collective's mirrors: groups `all`
// minus the keys seen, one mirror set per (stage, kind).
void GroupCollectives::emit_keyed(int s, const std::vector<TaskId>& chain, const std::vector<TaskId>* extra,
                                  std::vector<TaskId>& out, int all, const std::function<int(int, int)>& key,
                                  const std::function<std::uint32_t(int)>& group,
                                  const std::function<TaskId(std::uint32_t, std::vector<TaskId>&)>& make, Sets& sets,
                                  const std::vector<TaskId>* also) {
  std::map<int, std::vector<std::size_t>> ranks;  // group key -> built ranks
  for (int d = 0; d < dp_; ++d)
    for (int t = 0; t < tp_; ++t) ranks[key(d, t)].push_back(static_cast<std::size_t>(d * tp_ + t));
  TaskId first = kNoTask;
  for (const auto& [k, rs] : ranks) {
    std::vector<TaskId> deps;
    for (std::size_t r : rs) {
      deps.push_back(chain[r]);
      if (extra) deps.push_back((*extra)[r]);
      if (also) deps.push_back((*also)[r]);
    }
    const TaskId id = make(group(k), deps);
    for (std::size_t r : rs) out[r] = id;
    if (first == kNoTask) first = id;
  }
  if (static_cast<int>(ranks.size()) < all) {
    auto [it, added] = sets.try_emplace(s, 0);
    if (added) {
      std::vector<std::uint32_t> groups;
      for (int k = 0; k < all; ++k)
        if (!ranks.count(k)) groups.push_back(group(k));
      it->second = g_.add_group_mirror_set(std::move(groups));
    }
    g_.add_mirror(first, it->second);
  }
}

void GroupCollectives::ep_comm(int s, const PipeOp& op, const Item& it, std::vector<TaskId>& chain,
                               std::vector<TaskId>& extra, const std::vector<TaskId>* after) {
  const Layout& lay = plan_.layout;
  const bool a2a = it.op == CollectiveOp::all_to_all;
  std::vector<TaskId> out = chain;
  emit_keyed(
      s, chain, &extra, out, a2a ? lay.expert_groups() : lay.per_stage() / lay.etp,
      [&](int d, int t) { return a2a ? lay.expert_group_of(local(d, t)) : local(d, t) / lay.etp; },
      [&](int j) { return a2a ? expert_group(s, j) : expert_tensor_group(s, j); },
      [&](std::uint32_t group, std::vector<TaskId>& deps) {
        return tasks_.collective(group, it.op, it.comm_bytes, CommClass::ep,
                                 op.forward() ? Phase::forward : Phase::backward, s, op.microbatch, deps, false);
      },
      a2a ? ep_mirrors_ : etp_mirrors_, after);
  chain = std::move(out);
  std::fill(extra.begin(), extra.end(), kNoTask);
}

// A collective of the routed experts' gradients or parameters over each expert replica
// group holding a built rank, after `chain`.
std::vector<TaskId> GroupCollectives::expert_collective(int s, CollectiveOp op, Bytes bytes, CommClass cls, Phase phase,
                                                        int mb, const std::vector<TaskId>& chain, Sets& sets) {
  const Layout& lay = plan_.layout;
  std::vector<TaskId> out(chain.size(), kNoTask);
  emit_keyed(
      s, chain, nullptr, out, lay.ep * lay.etp, [&](int d, int t) { return local(d, t) % (lay.ep * lay.etp); },
      [&](int q) { return expert_replica_group(s, q); },
      [&](std::uint32_t group, std::vector<TaskId>& deps) {
        return tasks_.collective(group, op, bytes, cls, phase, s, mb, deps, true);
      },
      sets);
  return out;
}

void GroupCollectives::expert_reduction(int s, const GradReduction& red, const std::vector<TaskId>& chain,
                                        int microbatch) {
  HCSIM_ASSERT(!red.codec.compressed, "a gradient codec on the experts' reduction");
  for (const GradReduction::Phase& ph : red.phases)
    expert_collective(s, ph.op, ph.bytes, plan_.grad_class, Phase::backward, microbatch, chain, expert_dp_mirrors_);
}

std::vector<TaskId> GroupCollectives::expert_gather(int s, Bytes bytes, Phase phase, const std::vector<TaskId>& chain) {
  return expert_collective(s, CollectiveOp::all_gather, bytes, CommClass::zero, phase, 0, chain,
                           expert_gather_mirrors_);
}

void GroupCollectives::pair_reduction(int a, int b, Bytes bytes) {
  TaskId first = kNoTask;
  for (int d = 0; d < dp_; ++d)
    for (int t = 0; t < tp_; ++t) {
      std::vector<TaskId> deps{tasks_.compute_tail(plan_.layout.device(a, d, t)),
                               tasks_.compute_tail(plan_.layout.device(b, d, t))};
      const TaskId id = tasks_.collective(copy_group(a, b, d, t), CollectiveOp::all_reduce, bytes, plan_.grad_class,
                                          Phase::backward, a, plan_.m - 1, deps, true);
      if (first == kNoTask) first = id;
    }
  // The ranks not built (symmetry) reduce the same bytes between their own pairs.
  std::vector<std::uint32_t> groups;
  for (int d = 0; d < st_.dp; ++d)
    for (int t = 0; t < st_.tp; ++t)
      if (d >= dp_ || t >= tp_) groups.push_back(copy_group(a, b, d, t));
  if (!groups.empty()) g_.add_mirror(first, g_.add_group_mirror_set(std::move(groups)));
}

std::uint32_t GroupCollectives::copy_group(int a, int b, int d, int t) {
  return g_.add_group({plan_.layout.device(a, d, t), plan_.layout.device(b, d, t)});
}

const std::vector<TaskId>& GroupCollectives::issue_gather(int s, std::size_t j, const std::vector<TaskId>& deps) {
  const ParamGather& pg = plan_.stages[static_cast<std::size_t>(s)].param_gathers[j];
  std::vector<TaskId> ids(static_cast<std::size_t>(dp_ * tp_), kNoTask);
  if (pg.bytes > Bytes{})
    for (int t = 0; t < tp_; ++t) {
      std::vector<TaskId> after;
      for (int d = 0; d < dp_; ++d)
        if (!deps.empty()) after.push_back(deps[static_cast<std::size_t>(d * tp_ + t)]);
      const TaskId id =
          dp_collective(s, t, CollectiveOp::all_gather, pg.bytes, CommClass::zero, Phase::forward, 0, std::move(after));
      for (int d = 0; d < dp_; ++d) ids[static_cast<std::size_t>(d * tp_ + t)] = id;
    }
  if (pg.expert > Bytes{}) {
    // After the dense bucket on the same stream: the later of the two is the one to wait for.
    const std::vector<TaskId> after = deps.empty() ? std::vector<TaskId>(ids.size(), kNoTask) : deps;
    const std::vector<TaskId> ex = expert_gather(s, pg.expert, Phase::forward, after);
    for (std::size_t r = 0; r < ids.size(); ++r) ids[r] = ex[r];
  }
  return gathered_[{s, static_cast<int>(j)}] = std::move(ids);
}

void GroupCollectives::issue_chunk_gathers(int s, int chunk, const std::vector<TaskId>& deps) {
  const auto& pgs = plan_.stages[static_cast<std::size_t>(s)].param_gathers;
  for (std::size_t j = 0; j < pgs.size(); ++j)
    if (pgs[j].chunk == chunk && !gathered(s, j)) issue_gather(s, j, deps);
}

const std::vector<TaskId>* GroupCollectives::gathered(int s, std::size_t j) const {
  const auto it = gathered_.find({s, static_cast<int>(j)});
  return it == gathered_.end() ? nullptr : &it->second;
}

}  // namespace hcsim
