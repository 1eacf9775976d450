// ZeRO-3 / FSDP emission (see lowering_sharding.hpp).
#include "workloads/lowering_sharding.hpp"

#include <algorithm>

#include "workloads/lowering_tasks.hpp"

namespace hcsim {

ShardEmitter::ShardEmitter(TaskGraph& g, const Layout& layout, int replicas, int tp, Collective collective)
    : g_(g), layout_(layout), replicas_(replicas), tp_(tp), collective_(std::move(collective)) {}

void ShardEmitter::begin(int stage, const ShardPlan& plan, const std::vector<Item>& items, bool backward,
                         int microbatch) {
  stage_ = stage;
  plan_ = plan;
  backward_ = backward;
  mb_ = microbatch;
  units_.clear();
  for (const Item& it : items)
    if (it.kind == Item::Kind::unit) units_.push_back({plan.gathers(backward) ? it.comm_bytes : Bytes{}, it.grad_bytes});
  gathered_.assign(units_.size(), std::vector<TaskId>(static_cast<std::size_t>(replicas_ * tp_), kNoTask));
  issued_ = 0;
  last_reduction_.assign(static_cast<std::size_t>(replicas_ * tp_), kNoTask);
}

void ShardEmitter::at_unit(std::size_t u, const std::vector<TaskId>& chain, const std::vector<TaskId>& compute_tail,
                           std::vector<TaskId>& extra) {
  if (backward_ && u > 0) reduce(u - 1, chain);
  const std::size_t last = std::min(units_.size() - 1, u + static_cast<std::size_t>(plan_.prefetch(backward_)));
  const std::vector<TaskId> none(chain.size(), kNoTask);
  for (; issued_ <= last; ++issued_) {
    // The pass's first gathers wait for its inputs and the device's compute stream; the
    // others for the compute of the unit before this one.
    std::vector<TaskId> after = chain;
    if (u == 0) after.insert(after.end(), compute_tail.begin(), compute_tail.end());
    issue_gather(issued_, after, gathered_[issued_]);
  }
  for (std::size_t r = 0; r < extra.size(); ++r)
    if (gathered_[u][r] != kNoTask) extra[r] = gathered_[u][r];
}

std::vector<TaskId> ShardEmitter::end(const std::vector<TaskId>& chain) {
  if (backward_ && !units_.empty()) reduce(units_.size() - 1, chain);
  if (!plan_.reduce_stream) std::fill(last_reduction_.begin(), last_reduction_.end(), kNoTask);
  return last_reduction_;
}

// `after` holds one task per built rank (and, for a pass's first gathers, a second run of
// them): the collective of a shard group waits for those of its built ranks.
void ShardEmitter::issue_gather(std::size_t u, const std::vector<TaskId>& after, std::vector<TaskId>& ids) {
  if (units_[u].gather <= Bytes{}) return;
  const std::size_t ranks = ids.size();
  const Phase phase = backward_ ? Phase::backward : Phase::forward;
  for (int t = 0; t < tp_; ++t)
    for (int k = 0; k * plan_.shard < replicas_; ++k) {
      std::vector<TaskId> deps;
      const int to = std::min(replicas_, (k + 1) * plan_.shard);
      for (int d = k * plan_.shard; d < to; ++d)
        for (std::size_t base = 0; base < after.size(); base += ranks) deps.push_back(after[base + static_cast<std::size_t>(d * tp_ + t)]);
      const TaskId id =
          collective_(shard_group(t, k), CollectiveOp::all_gather, units_[u].gather, phase, stage_, mb_, deps, -1);
      if (t == 0 && k == 0) mirror(id, false);
      for (int d = k * plan_.shard; d < to; ++d) ids[static_cast<std::size_t>(d * tp_ + t)] = id;
    }
}

void ShardEmitter::reduce(std::size_t u, const std::vector<TaskId>& after) {
  const Bytes grads = units_[u].grads;
  if (grads <= Bytes{}) return;
  for (int t = 0; t < tp_; ++t) {
    std::vector<TaskId> scattered;  // per built shard group
    for (int k = 0; k * plan_.shard < replicas_; ++k) {
      std::vector<TaskId> deps;
      const int to = std::min(replicas_, (k + 1) * plan_.shard);
      for (int d = k * plan_.shard; d < to; ++d) deps.push_back(after[static_cast<std::size_t>(d * tp_ + t)]);
      scattered.push_back(collective_(shard_group(t, k), CollectiveOp::reduce_scatter, grads, Phase::backward, stage_,
                                      mb_, deps, plan_.reduce_stream ? 0 : -1));
      if (t == 0 && k == 0) mirror(scattered.back(), false);
      for (int d = k * plan_.shard; d < to; ++d) note_reduction(d, t, scattered.back());
    }
    if (plan_.copies <= 1) continue;
    // Hybrid sharding: each rank's shard all-reduced with the same shard of the other groups.
    for (int i = 0; i < std::min(plan_.shard, replicas_); ++i) {
      std::vector<TaskId> deps;
      for (int d = i; d < replicas_; d += plan_.shard) deps.push_back(scattered[static_cast<std::size_t>(d / plan_.shard)]);
      const TaskId id = collective_(peer_group(t, i), CollectiveOp::all_reduce, grads / plan_.shard, Phase::backward,
                                    stage_, mb_, deps, plan_.reduce_stream ? 1 : -1);
      if (t == 0 && i == 0) mirror(id, true);
      for (int d = i; d < replicas_; d += plan_.shard) note_reduction(d, t, id);
    }
  }
}

std::uint32_t ShardEmitter::add_family_group(std::uint32_t& id, const DeviceGroup& first,
                                             std::vector<std::uint32_t> devs) {
  // The family the analytical mode costs (workloads/analytical.cpp, ShardCosts).
  const int offset = first.first - static_cast<int>(devs.front());
  id = g_.add_group(std::move(devs));
  g_.set_group_family(id, offset, siblings_.of(first));
  return id;
}

std::uint32_t ShardEmitter::shard_group(int t, int k) {
  auto [it, added] = groups_.try_emplace({stage_, 0, t, k}, 0);
  if (added) {
    std::vector<std::uint32_t> devs;
    for (int d = k * plan_.shard; d < (k + 1) * plan_.shard; ++d) devs.push_back(layout_.device(stage_, d, t));
    add_family_group(it->second, layout_.shard_group(stage_, plan_.shard, plan_.copies), std::move(devs));
  }
  return it->second;
}

std::uint32_t ShardEmitter::peer_group(int t, int i) {
  auto [it, added] = groups_.try_emplace({stage_, 1, t, i}, 0);
  if (added) {
    std::vector<std::uint32_t> devs;
    for (int d = i; d < layout_.replicas(); d += plan_.shard) devs.push_back(layout_.device(stage_, d, t));
    add_family_group(it->second, layout_.shard_peers(stage_, plan_.shard, plan_.copies), std::move(devs));
  }
  return it->second;
}

void ShardEmitter::mirror(TaskId id, bool peers) {
  auto [it, added] = mirrors_.try_emplace({stage_, peers ? 1 : 0}, 0);
  if (added) {
    // Groups of kind `peers` (positions 0..shard-1) or shard groups (0..copies-1) that no
    // built rank is in, for every tensor rank, and all of them for the tensor ranks not built.
    const int kinds = peers ? plan_.shard : plan_.copies;
    const int built = peers ? std::min(plan_.shard, replicas_) : (replicas_ + plan_.shard - 1) / plan_.shard;
    std::vector<std::uint32_t> groups;
    for (int t = 0; t < layout_.tp; ++t)
      for (int k = 0; k < kinds; ++k)
        if (t >= tp_ || k >= built) groups.push_back(peers ? peer_group(t, k) : shard_group(t, k));
    it->second = g_.add_group_mirror_set(std::move(groups));
  }
  g_.add_mirror(id, it->second);
}

}  // namespace hcsim
