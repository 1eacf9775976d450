#pragma once
// The parallel layout of a training step: the degrees (data dp, tensor tp, pipeline pp,
// context cp), how devices are numbered, every group the step communicates in, and the one
// copy of the layout rules (check_layout), which the scenario parser, the run driver and
// the layout search all use.
//
// Device numbering (Megatron-Core's tensor-context-data-pipeline order, tensor fastest):
//   device = ((stage * dp + dp_rank) * cp + cp_rank) * tp + tp_rank
// so a stage is a contiguous block of devices (a pool can hold whole stages), a tensor-
// parallel group sits inside a node and a context-parallel ring is next closest. The dp * cp
// ranks of a stage that hold the same weights form its "replica" axis,
// r = dp_rank * cp + cp_rank: their gradients are reduced together and ZeRO shards over them.
//
// Every group is arithmetic (first device, stride, count):
//   tensor group of (stage, replica r):       (first(stage) + r * tp, 1, tp)
//   replica group of (stage, tensor rank t):  (first(stage) + t, tp, dp * cp)
//   context ring hop k of a stage:            (context rank k, its successor's offset, 2)
//   pipeline pair (stage a -> stage b):       (first(a), first(b) - first(a), 2)
//
// Expert parallelism (MoE models; Megatron-Core's "parallel folding", Liu et al. 2025,
// arXiv 2504.14960): the experts' layout folds over the same dp * cp * tp devices of a stage
// as attention's, in Megatron-Core's expert order tp-ep-dp (expert tensor rank fastest, then
// expert rank, then expert-data-parallel rank; megatron/core/parallel_state.py): the stage's
// local device i = device - first(stage) has expert tensor rank i % etp, expert rank
// (i / etp) % ep and expert-data-parallel rank i / (ep * etp); ep * etp divides the stage.
//   expert group (stage, j):                  (first(stage) + (j / etp) * ep * etp + j % etp, etp, ep)
//   expert tensor group (stage, k):           (first(stage) + k * etp, 1, etp)
//   expert replica group (stage, rank r):     (first(stage) + r, ep * etp, dp * cp * tp / (ep * etp))
// An expert group (the ep devices of one expert tensor rank) exchanges its tokens
// (all-to-all); an expert tensor group holds the same experts split by columns and rows,
// and gathers the dispatched tokens (etp > 1); an expert replica group holds the same
// expert shards and reduces their gradients. With etp = 1 these are the groups i / ep,
// none, and i % ep.

#include <array>
#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "workloads/pipeline_schedule.hpp"

// TransformerConfig: workloads/transformer.hpp (which includes this file through strategy.hpp).

namespace hcsim {

enum class Recompute : std::uint8_t;  // workloads/strategy.hpp

struct TransformerConfig;

// A group of devices first, first + stride, ... (count of them), and its siblings: the
// translates of the group by i * sib[0].stride + j * sib[1].stride (i < sib[0].count,
// j < sib[1].count, not both 0) that run the same collective at the same time -- the
// layout's symmetric replicas, whose traffic shares the group's NICs and links.
struct DeviceGroup {
  struct Axis {
    int count = 1, stride = 0;
  };
  int first = 0, stride = 1, count = 1;
  std::array<Axis, 2> sib{};
  [[nodiscard]] int device(int k) const { return first + k * stride; }
  // The devices of the group into `out` (reused by callers that cost many groups).
  void devices(std::vector<int>& out) const;
  // The siblings' offsets into `out` (empty: none).
  void sibling_offsets(std::vector<int>& out) const;
};

// Groups' sibling offsets, one list per distinct pair of sibling axes, shared by every
// group that has them: the 16,384 tensor-parallel groups of a 131,072-GPU layout share one
// list of 16,383 offsets instead of holding a copy each.
class SiblingLists {
 public:
  // g's sibling offsets (DeviceGroup::sibling_offsets); null when it has none.
  std::shared_ptr<const std::vector<int>> of(const DeviceGroup& g);

 private:
  std::map<std::array<int, 4>, std::shared_ptr<const std::vector<int>>> lists_;
};

struct Layout {
  int dp = 1, tp = 1, pp = 1, cp = 1, ep = 1, etp = 1;

  [[nodiscard]] int replicas() const { return dp * cp; }          // ranks of equal weights
  [[nodiscard]] int per_stage() const { return dp * cp * tp; }    // devices of one stage
  [[nodiscard]] std::int64_t devices() const { return static_cast<std::int64_t>(per_stage()) * pp; }
  [[nodiscard]] int stage_of(int device) const { return device / per_stage(); }
  [[nodiscard]] int first_device(int stage) const { return stage * per_stage(); }
  [[nodiscard]] std::uint32_t device(int stage, int replica, int tp_rank) const {
    return static_cast<std::uint32_t>((stage * replicas() + replica) * tp + tp_rank);
  }
  [[nodiscard]] std::uint32_t device(int stage, int dp_rank, int cp_rank, int tp_rank) const {
    return device(stage, dp_rank * cp + cp_rank, tp_rank);
  }
  // Siblings: the other replicas' tensor groups.
  [[nodiscard]] DeviceGroup tensor_group(int stage, int replica = 0) const {
    return {first_device(stage) + replica * tp, 1, tp, {{{replicas(), tp}, {}}}};
  }
  // Siblings: the other tensor ranks' replica groups.
  [[nodiscard]] DeviceGroup replica_group(int stage, int tp_rank = 0) const {
    return {first_device(stage) + tp_rank, tp, replicas(), {{{tp, 1}, {}}}};
  }
  // Hop k of the context-parallel ring of (stage, data-parallel rank 0, tensor rank 0):
  // context rank k to k + 1 (mod cp). Siblings: the same hop of every tensor rank and
  // data-parallel rank.
  [[nodiscard]] DeviceGroup context_hop(int stage, int k) const {
    const int from = static_cast<int>(device(stage, 0, k, 0)), to = static_cast<int>(device(stage, 0, (k + 1) % cp, 0));
    return {from, to - from, 2, {{{tp, 1}, {dp, cp * tp}}}};
  }
  // Siblings: every device of the stage sends to its twin at the same time.
  [[nodiscard]] DeviceGroup pipeline_pair(int from, int to) const {
    return {first_device(from), first_device(to) - first_device(from), 2, {{{per_stage(), 1}, {}}}};
  }
  // Hybrid sharding (`shard` consecutive replicas hold one copy, `copies` copies): the first
  // shard group (tensor rank 0, copy 0); siblings: the other tensor ranks' and copies'.
  [[nodiscard]] DeviceGroup shard_group(int stage, int shard, int copies) const {
    return {first_device(stage), tp, shard, {{{tp, 1}, {copies, tp * shard}}}};
  }
  // The first copy group (tensor rank 0, replica 0 of every copy: one shard each);
  // siblings: the other (tensor rank, replica) pairs of a copy.
  [[nodiscard]] DeviceGroup shard_peers(int stage, int shard, int copies) const {
    return {first_device(stage), tp * shard, copies, {{{tp * shard, 1}, {}}}};
  }
  // Expert-data-parallel ranks: devices of a stage that hold the same expert shards.
  [[nodiscard]] int expert_replicas() const { return per_stage() / (ep * etp); }
  // Expert groups (all-to-alls) of a stage, and the one holding stage-local device i.
  [[nodiscard]] int expert_groups() const { return per_stage() / ep; }
  [[nodiscard]] int expert_group_of(int i) const { return i / (ep * etp) * etp + i % etp; }
  // Siblings: the stage's other expert groups (the other expert tensor ranks' and the other
  // expert-data-parallel ranks').
  [[nodiscard]] DeviceGroup expert_group(int stage, int j = 0) const {
    DeviceGroup g{first_device(stage) + j / etp * ep * etp + j % etp, etp, ep, {{{expert_replicas(), ep * etp}, {}}}};
    if (etp > 1) g.sib[1] = {etp, 1};
    return g;
  }
  // Siblings: the stage's other expert tensor groups.
  [[nodiscard]] DeviceGroup expert_tensor_group(int stage, int k = 0) const {
    return {first_device(stage) + k * etp, 1, etp, {{{per_stage() / etp, etp}, {}}}};
  }
  // Siblings: the other (expert rank, expert tensor rank) pairs' replica groups.
  [[nodiscard]] DeviceGroup expert_replica_group(int stage, int rank = 0) const {
    return {first_device(stage) + rank, ep * etp, expert_replicas(), {{{ep * etp, 1}, {}}}};
  }
};

// The rule a layout breaks, for callers that need a code rather than the message.
enum class LayoutIssue : std::uint8_t {
  none,
  degrees,
  too_many_devices,
  heads,
  kv_heads,
  ffn,
  schedule,
  interleave,
  batch,
  interleaved_batch,
  too_many_micro_batches,
  layers,
  uneven_layers,
  zero,
  context,
  placement,
  experts
};
std::string_view layout_issue_text(LayoutIssue i);

// A block of devices of one device model (a compute pool), in device order.
struct PoolSpan {
  std::string_view name;
  std::int64_t first = 0, count = 0;
};
// The index in `pools` of the pool holding `device`, -1 for none.
int pool_index(const std::vector<PoolSpan>& pools, std::int64_t device);
// Placement by device order: the pool of each stage's first device.
std::vector<int> stage_pools(const Layout& l, const std::vector<PoolSpan>& pools);

// What the layout rules read.
struct LayoutRequest {
  const TransformerConfig* model = nullptr;
  Layout layout;
  std::int64_t devices = 0;         // of the cluster
  bool interleaved = false;         // the schedule keeps v > 1 model chunks per device
  int interleave = 1;               // v as given
  int chunks = 1;                   // pieces of a stage's layers (the schedule's Placement::layer_chunks)
  std::string_view schedule;        // the schedule's name, for messages
  ScheduleNeeds needs;              // what the schedule needs of pp and the micro-batches
  std::int64_t global_batch = 1, micro_batch = 1;
  const std::vector<int>* layers_per_stage = nullptr;  // as given; null or empty: balanced
  // Every stage on the same device model: layers split evenly (else by device speed).
  bool uniform_stages = true;
  // The cluster's compute pools when stages are placed by device order (no stage_pools
  // given): each stage must sit inside one pool. Null: placement is not checked here.
  const std::vector<PoolSpan>* pools = nullptr;
  // MoE models: sequence parallelism (needed with tp > 1) and the ZeRO stage (ZeRO-3 / FSDP
  // of experts is not modelled).
  bool sequence_parallel = false;
  int zero = 0;
  // MoE all-to-all overlap (StrategySpec::moe_a2a_overlap): ep > 1, 1F1B or interleaved 1F1B
  // (interleaved with pp > 1), no full recomputation, no ZeRO-3.
  bool moe_a2a_overlap = false;
  Recompute recompute{};  // value-initialised: Recompute::none
};

// Receives each broken rule: its code, JSON pointer and (on request) its message. Return
// false to stop at this rule.
using LayoutSink = std::function<bool(LayoutIssue, std::string_view path, const std::function<std::string()>& message)>;

// The cross-field layout rules, in the order the parser reports them: layout = devices,
// context parallelism (s divisible by cp, even s/cp for causal models), heads, key/value
// heads and MLP divisible by tp, expert parallelism (MoE: ep divides the experts, etp the
// experts' MLP, ep * etp a stage's devices; sequence parallelism with tp > 1; no ZeRO-3), the schedule's
// interleaving, batch divisibility, the
// micro-batch limit, layers enough for the model chunks, layers_per_stage when given, and
// the stages' placement in the pools (when `pools` is set).
void check_layout(const LayoutRequest& r, const LayoutSink& sink);
// The even layer split of uniform stages without layers_per_stage (checked once the
// cluster is built): layers divisible by pp * v.
void check_layer_split(const LayoutRequest& r, const LayoutSink& sink);
// The first rule `r` breaks in check_layout then check_layer_split, none if it breaks none;
// no message is formatted.
LayoutIssue first_layout_issue(const LayoutRequest& r);

}  // namespace hcsim
