#pragma once
// The emitter's ZeRO-3 / FSDP part (workloads/lowering.cpp calls it): one pass's unit
// gathers and gradient reductions as collective tasks on the communication stream, from
// the pass's unit markers and the stage's ShardPlan (workloads/step_plan.hpp).
//
// At unit u's marker (the compute of unit u-1 has just been emitted, `chain`):
//   backward: unit u-1's gradients reduce-scattered over its shard group after that compute
//             (hybrid: then the shard all-reduced over the shard groups);
//   the gathers of units up to u + prefetch not yet issued, after that compute: with
//             prefetch 0 unit u's gather starts when unit u-1 ends (exposed), with 1 unit
//             u+1's runs during unit u;
//   unit u's compute waits for its gather (`extra`).
// At the pass's end (backward) the last unit's reduction. The pass's first gathers wait for
// the pass's inputs (`chain` at its start) and the device's compute; every gather follows the
// one before on its devices' communication stream. The reductions do too, or, with
// ShardPlan::reduce_stream, run on streams of their own (reduce-scatters on one, hybrid
// sharding's all-reduces on another), beside the gathers, and the device's next compute
// after the backward waits for its last reduction (end()).

#include <array>
#include <cstdint>
#include <functional>
#include <map>
#include <vector>

#include "workloads/step_plan.hpp"

namespace hcsim {

class ShardEmitter {
 public:
  // A collective over `group` after `deps` and a stream's last tasks on its devices: the
  // communication stream (stream -1) or reduction stream 0 or 1 (StreamTasks::reduction).
  using Collective = std::function<TaskId(std::uint32_t group, CollectiveOp op, Bytes bytes, Phase phase, int stage,
                                          int microbatch, std::vector<TaskId>& deps, int stream)>;
  // Built replica ranks 0..replicas-1 and tensor ranks 0..tp-1 of every stage (symmetry);
  // the chain vectors index a rank as replica * tp + tensor rank.
  ShardEmitter(TaskGraph& g, const Layout& layout, int replicas, int tp, Collective collective);
  void set_built(int replicas, int tp) {
    replicas_ = replicas;
    tp_ = tp;
  }

  void begin(int stage, const ShardPlan& plan, const std::vector<Item>& items, bool backward, int microbatch);
  // At the pass's u-th unit marker: `compute_tail` is each built device's last compute task.
  void at_unit(std::size_t u, const std::vector<TaskId>& chain, const std::vector<TaskId>& compute_tail,
               std::vector<TaskId>& extra);
  // The pass's end; backward with reduction streams, each built rank's last reduction (the
  // device's next compute waits for it), else none.
  std::vector<TaskId> end(const std::vector<TaskId>& chain);

 private:
  struct Unit {
    Bytes gather{}, grads{};
  };
  void issue_gather(std::size_t u, const std::vector<TaskId>& after, std::vector<TaskId>& ids);
  void reduce(std::size_t u, const std::vector<TaskId>& after);
  void note_reduction(int d, int t, TaskId id) { last_reduction_[static_cast<std::size_t>(d * tp_ + t)] = id; }
  std::vector<TaskId> last_reduction_;  // per built rank, at the pass's end
  // Groups of replica ranks of the stage for tensor rank t: shard group k (ranks k*shard ..
  // k*shard + shard-1) or, hybrid, the peers at position i of every shard group.
  // Adds `devs` as a group into `id`, member of the family whose first member is `first`.
  std::uint32_t add_family_group(std::uint32_t& id, const DeviceGroup& first, std::vector<std::uint32_t> devs);
  std::uint32_t shard_group(int t, int k);
  std::uint32_t peer_group(int t, int i);
  // Symmetry: the groups of the same kind that no built rank is in stand mirrored behind
  // the collective of (tensor rank 0, group 0).
  void mirror(TaskId id, bool peers);

  TaskGraph& g_;
  Layout layout_;
  int replicas_ = 1, tp_ = 1;
  Collective collective_;
  int stage_ = 0, mb_ = 0;
  bool backward_ = false;
  ShardPlan plan_;
  std::vector<Unit> units_;
  std::vector<std::vector<TaskId>> gathered_;  // per unit: per built rank its gather (or none)
  std::size_t issued_ = 0;                     // units whose gather is issued
  std::map<std::array<int, 4>, std::uint32_t> groups_;  // (stage, peers?, t, k) -> group
  std::map<std::array<int, 2>, std::uint32_t> mirrors_;  // (stage, peers?) -> mirror set
  SiblingLists siblings_;  // the families' sibling offsets, one list per shape
};

}  // namespace hcsim
