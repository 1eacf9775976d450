#pragma once
// The emitter's communication groups (workloads/lowering.cpp calls it): a stage's tensor,
// replica and expert groups of the layout (workloads/layout.hpp) as task-graph groups, each
// with its family (the groups of a stage are translates of its first one), and the
// collectives over them that the step plan (workloads/step_plan.hpp) places in a pass or
// after it:
//   - a tensor-parallel collective of each data-parallel rank's tensor group;
//   - MoE dispatch / combine (all-to-all of each expert group; with expert tensor
//     parallelism, the gather or reduce-scatter of each expert tensor group);
//   - the routed experts' gradient reductions and parameter all-gathers over their replica
//     groups;
//   - ZeRO-1/2's parameter buckets (ParamGather): one all-gather per built tensor rank over
//     its replica group, then the experts' part.
// Symmetry: only the ranks 0..replicas-1 x 0..tp-1 of a stage are built (the chain vectors
// index a rank as replica * tp + tensor rank); the groups no built rank is in stand mirrored
// behind the first collective of their kind, one mirror set per (stage, kind), made once.

#include <array>
#include <cstdint>
#include <functional>
#include <map>
#include <utility>
#include <vector>

#include "workloads/lowering_tasks.hpp"
#include "workloads/step_plan.hpp"

namespace hcsim {

class GroupCollectives {
 public:
  GroupCollectives(TaskGraph& g, StreamTasks& tasks, const StepPlan& plan, const StrategySpec& st);
  void set_built(int replicas, int tp) {
    dp_ = replicas;
    tp_ = tp;
  }

  std::uint32_t tp_group(int s, int d);  // replica d's tensor group
  // A collective over tensor rank t's replica group on the communication stream after `deps`,
  // standing also for the tensor ranks not built (mirror_dp); its id.
  TaskId dp_collective(int s, int t, CollectiveOp op, Bytes bytes, CommClass cls, Phase phase, int microbatch,
                       std::vector<TaskId> deps);
  // The sends of the ranks not built, from stage key[0]'s rank (d, t) to stage key[1]'s rank
  // (peer(d), t); one set per key (from stage, to stage, kind).
  std::uint32_t pair_mirrors(std::array<int, 3> key, const std::function<int(int)>& peer);

  // A tensor-parallel collective of each replica's tensor group after its ranks' `chain` and
  // `extra` tasks; `out` (chain, or the collectives beside the next compute item) gets its id.
  void tp_comm(int s, const PipeOp& op, const Item& it, const std::vector<TaskId>& chain,
               const std::vector<TaskId>& extra, std::vector<TaskId>& out);
  // MoE dispatch or combine after `chain` and `extra`; `chain` gets the collectives' ids,
  // `extra` is cleared.
  // `after` (per built rank, or null): tasks the collective also waits for (a pair's
  // communication stream).
  void ep_comm(int s, const PipeOp& op, const Item& it, std::vector<TaskId>& chain, std::vector<TaskId>& extra,
               const std::vector<TaskId>* after = nullptr);
  // The routed experts' reduction of micro-batch `microbatch`'s gradients after `chain`.
  void expert_reduction(int s, const GradReduction& red, const std::vector<TaskId>& chain, int microbatch);
  // The routed experts' parameter all-gather after `chain`; ids per built rank.
  std::vector<TaskId> expert_gather(int s, Bytes bytes, Phase phase, const std::vector<TaskId>& chain);

  // An all-reduce of `bytes` between each built rank's pair of devices of stages a and b
  // after both devices' last compute and communication tasks: DualPipe's two copies of a
  // stage's parameters (their gradients summed), tied embeddings (StepPlan::tied_bytes).
  void pair_reduction(int a, int b, Bytes bytes);

  // ZeRO-1/2's parameter bucket j of stage s, after `deps` (per built rank; empty: none) and
  // the communication stream; its ids per built rank, kept for gathered().
  const std::vector<TaskId>& issue_gather(int s, std::size_t j, const std::vector<TaskId>& deps);
  // The buckets of model chunk `chunk` not issued yet.
  void issue_chunk_gathers(int s, int chunk, const std::vector<TaskId>& deps);
  // Bucket j's ids, or null if it was not issued.
  const std::vector<TaskId>* gathered(int s, std::size_t j) const;

 private:
  using Sets = std::map<int, std::uint32_t>;  // mirror sets by stage
  std::uint32_t dp_group(int s, int t);       // tensor rank t's replica group
  // The data-parallel collective of built tensor rank 0 also stands for those of the tensor
  // ranks not built (same bytes over their own replica groups).
  void mirror_dp(int s, int t, TaskId id);
  std::uint32_t graph_group(std::map<std::pair<int, int>, std::uint32_t>& cache, int s, int j, const DeviceGroup& g);
  std::uint32_t expert_group(int s, int j);
  std::uint32_t copy_group(int a, int b, int d, int t);  // rank (d, t) of stages a and b
  std::uint32_t expert_tensor_group(int s, int k);
  std::uint32_t expert_replica_group(int s, int q);
  int local(int d, int t) const { return d * st_.tp + t; }  // the stage-local index of built rank (d, t)
  std::uint32_t group_mirrors(Sets& sets, int s, int from, int to, const std::function<std::uint32_t(int)>& group);
  void emit_keyed(int s, const std::vector<TaskId>& chain, const std::vector<TaskId>* extra, std::vector<TaskId>& out,
                  int all, const std::function<int(int, int)>& key, const std::function<std::uint32_t(int)>& group,
                  const std::function<TaskId(std::uint32_t, std::vector<TaskId>&)>& make, Sets& sets,
                  const std::vector<TaskId>* also = nullptr);
  std::vector<TaskId> expert_collective(int s, CollectiveOp op, Bytes bytes, CommClass cls, Phase phase, int mb,
                                        const std::vector<TaskId>& chain, Sets& sets);

  TaskGraph& g_;
  StreamTasks& tasks_;
  const StepPlan& plan_;
  const StrategySpec& st_;
  int dp_ = 1, tp_ = 1;
  std::map<std::pair<int, int>, std::uint32_t> tp_groups_, dp_groups_;
  std::map<std::pair<int, int>, std::uint32_t> expert_groups_, expert_tensor_groups_, expert_replica_groups_;
  Sets tp_mirrors_, dp_mirrors_, ep_mirrors_, etp_mirrors_, expert_dp_mirrors_, expert_gather_mirrors_;
  std::map<std::array<int, 3>, std::uint32_t> pair_mirrors_;
  SiblingLists siblings_;  // the groups' families' sibling offsets, one list per shape
  std::map<std::pair<int, int>, std::vector<TaskId>> gathered_;  // (stage, ParamGather) -> its tasks per built rank
};

}  // namespace hcsim
