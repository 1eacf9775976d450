#pragma once
// One model of the training step, read three ways. build_step_plan() describes the step
// once: per pipeline stage, its schedule order and, per model chunk, the ordered forward and
// backward items (costed kernels, tensor/sequence-parallel collectives, context-parallel
// rings, gradient-bucket markers: workloads/items.hpp); the pipeline send of each pass and
// its codec; the gradient reductions with their issue points and codec phases; ZeRO-3 /
// FSDP's per-unit gathers and reduce-scatters; the optimizer, ZeRO-1/2's parameter all-gather and the
// optimizer-state offload streams.
//
//   Scenario -> Layout -> StepPlan -+-> x schedule -> TaskGraph -> engine (event, flow)
//                                   |                              (lower_training_step)
//                                   +-> closed forms (analytical_step)
//                                   +-> cached shapes -> the search's fast path
//
// Each concern is built by its own builder, one file each:
//   tensor / sequence parallel, context ring   workloads/item_builder.hpp
//   data-parallel buckets and codecs           workloads/plan_gradients.cpp
//   pipeline sends and activation codecs       workloads/plan_pipeline.cpp
//   ZeRO-1/2 gather, optimizer and offload     workloads/plan_optimizer.cpp
//   ZeRO-3 / FSDP units and their collectives  workloads/plan_sharding.cpp (lowering_sharding.cpp)
//   symmetry mirrors                           workloads/lowering_mirrors.hpp (the emitter's)
// A new parallelism or memory technique is a new builder here and its tests.

#include <cstdint>
#include <memory>
#include <vector>

#include "workloads/items.hpp"

namespace hcsim {

class ChunkCache;

enum class PlanDetail : std::uint8_t { items, totals };

// A codec's work around one transfer: encode on the sender, decode on the receiver.
struct CodecItems {
  bool compressed = false;
  Item encode, decode;
};

// One gradient reduction over a stage's replica group (dp * cp ranks): `bytes` of
// gradients, sent as `phases` (one collective without a codec; the codec's plan with one).
struct GradReduction {
  struct Phase {
    CollectiveOp op = CollectiveOp::all_reduce;
    Bytes bytes{};
  };
  Bytes bytes{};
  std::vector<Phase> phases;
  CodecItems codec;  // encode before the first phase, decode after the last (one rank's)
};

// Where a reduction is issued: in the last micro-batch's backward pass of model chunk
// `chunk` (these come in chunk order v-1, ..., 0 on every schedule: a micro-batch's backward
// runs down the virtual stages), at its bucket marker number `marker` (from 0), or after
// the pass's items when marker = -1; chunk = -1: after the stage's last pass (no overlap).
// With StepPlan::reduce_every_microbatch the same points are issued in every micro-batch's
// backward pass of the chunk, and a chunk's buckets end with its pass (marker -1).
struct BucketPoint {
  int chunk = 0;
  int marker = -1;
  GradReduction reduction;
  // PlanDetail::totals only: the same reduction at this many consecutive bucket points
  // (markers marker, marker + 1, ...; the layers of a chunk fill equal buckets).
  int repeat = 1;
  // MoE: the routed experts' gradients of the same bucket, reduced over the expert replica
  // group (bytes 0: none).
  GradReduction expert;
};

// ZeRO-3 / FSDP per unit (Zhao et al. VLDB 2023, PyTorch FSDP; Rajbhandari et al. SC20 §5):
// each unit's parameters are all-gathered over its shard group before its forward (and its
// backward, unless kept from forward), `prefetch` units ahead, on the communication stream
// one after another; its gradients are reduce-scattered over the shard group as its
// backward ends and, with hybrid sharding (copies > 1), the shard all-reduced over the
// `copies` shard groups.
struct ShardPlan {
  bool on = false;
  int shard = 1;              // ranks of a shard group (consecutive replica ranks)
  int copies = 1;             // shard groups of the replica group
  int prefetch_forward = 1, prefetch_backward = 1;
  bool gather_backward = true;  // reshard_after_forward
  bool reduce_stream = true;    // ShardingSpec::reduce_stream
  [[nodiscard]] int prefetch(bool backward) const { return backward ? prefetch_backward : prefetch_forward; }
  [[nodiscard]] bool gathers(bool backward) const { return !backward || gather_backward; }
};

// ZeRO-1/2 with overlap_param_gather (Megatron-Core's distributed optimizer): the updated
// parameters of model chunk `chunk` all-gathered in buckets before the step's first forward
// of that chunk reaches them. A bucket covers the chunk's bucket markers [first, last] in
// forward order (the embedding's, each layer's, the head's: ChunkItems::markers reversed);
// it is filled as Megatron-Core fills a chunk's buckets, in backward order up to
// strategy.dp_bucket of gradient bytes, so the partial one is the first forward meets.
struct ParamGather {
  int chunk = 0;
  int first = 0, last = 0;  // forward marker indices
  Bytes bytes{};            // parameters gathered over the replica group
  Bytes expert{};           // MoE: routed experts' parameters, over the expert replica group
};

struct StagePlan {
  int stage = 0;
  const ComputeDevice* device = nullptr;
  std::vector<PipeOp> order;       // the schedule's order of passes (PlanDetail::items)
  // Per model chunk c (virtual stage StepPlan::vstage(stage, c)): the item lists (PlanDetail::items,
  // for the emitter) or their sums (PlanDetail::totals, for the closed forms); both give
  // each chunk's gradient bytes and bucket markers.
  std::vector<ChunkItems> chunks;
  std::vector<const ChunkTotals*> totals;
  Bytes grad_bytes{};         // gradients of one device, all chunks (routed experts' apart)
  Bytes expert_grad_bytes{};  // MoE: the routed experts' gradients of one device
  [[nodiscard]] const std::vector<Bytes>& chunk_markers(int c) const {
    return chunks.empty() ? totals[static_cast<std::size_t>(c)]->markers : chunks[static_cast<std::size_t>(c)].markers;
  }
  [[nodiscard]] const std::vector<Bytes>& chunk_expert_markers(int c) const {
    return chunks.empty() ? totals[static_cast<std::size_t>(c)]->expert_markers
                          : chunks[static_cast<std::size_t>(c)].expert_markers;
  }

  // Data parallelism: with overlap, reductions issued during the last micro-batch's
  // backward passes as buckets fill (issue points); without, one after the last pass.
  // ZeRO-2 over several micro-batches (StepPlan::reduce_every_microbatch): each chunk's
  // buckets in every backward pass of it; without overlap, the chunk's whole gradients after
  // each of its backward passes, the device's compute waiting for them.
  std::vector<BucketPoint> buckets;

  // Pipeline: each pass's output to the next virtual stage (activations forward, their
  // gradients backward), `send_bytes` on the wire per rank; the codec's items are costed
  // on this stage's device: encode when it sends, decode when it receives.
  Bytes send_bytes{};
  CodecItems send_codec;

  // ZeRO-3 / FSDP (plan_sharding.cpp): the passes' unit markers say what each unit gathers
  // and reduces; `sharding` how. ZeRO-1/2: after the optimizer, the updated parameter shards
  // are all-gathered (zero_gather_bytes; 0 for none).
  ShardPlan sharding;
  Bytes zero_gather_bytes{};
  Bytes expert_gather_bytes{};  // MoE, ZeRO-1/2: the routed experts' shards, over the expert replica group
  // overlap_param_gather: the same parameters in buckets before the first forward, by chunk
  // and in forward order (zero_gather_bytes and expert_gather_bytes are then 0).
  std::vector<ParamGather> param_gathers;

  // Optimizer over this device's parameters (its shard under ZeRO >= 1), and with
  // offload the bytes of each stream of its state from and back to the pool.
  Item optimizer;
  Bytes offload_bytes{};
};

struct StepPlan {
  Layout layout;          // the strategy's degrees
  Placement placement;    // the schedule's virtual stages on the stages (pipeline_schedule.hpp)
  int v = 1;              // model chunks per device (placement.v)
  int m = 1;              // micro-batches per replica
  Bytes act_bytes{};     // one micro-batch's activations (b * s/cp * h) in the workload precision
  CommClass tp_class = CommClass::tp;    // sp with sequence parallelism
  CommClass grad_class = CommClass::dp;  // zero with ZeRO >= 1
  // ZeRO-2 with more than one micro-batch: each rank keeps only its shard of the gradients,
  // so every micro-batch's backward reduce-scatters its gradients as they complete
  // (DeepSpeed's stage_1_and_2.py reduces at every micro-step when it partitions gradients,
  // reduce_ready_partitions_and_remove_grads; ZeRO-1 and Megatron's distributed optimizer
  // accumulate whole gradients and reduce after the last micro-batch). The stage's buckets
  // are then issued in every backward pass, each chunk's in its own pass.
  bool reduce_every_microbatch = false;
  std::vector<StagePlan> stages;
  std::shared_ptr<ChunkCache> own_cache;  // totals without a caller's cache
  // Tied embeddings on two devices (Megatron-LM's embedding group): the first virtual
  // stage's embedding matrix and the last's copy of it, used by the head. Their gradients
  // (V/t x h each, in the gradients' datatype) are all-reduced between each pair of ranks
  // once both stages' data-parallel reductions are done, before either's optimizer;
  // tied_bytes 0: none (untied, one stage, both on one device, or ZeRO-3 / FSDP).
  Bytes tied_bytes{};
  int tied_first = -1, tied_last = -1;            // the two stages
  [[nodiscard]] int tied_pair(int stage) const {  // the other stage of the pair, or -1
    return tied_bytes > Bytes{} ? (stage == tied_first ? tied_last : stage == tied_last ? tied_first : -1) : -1;
  }

  [[nodiscard]] int vstages() const { return placement.vstages(); }
  [[nodiscard]] int vstage(int stage, int chunk) const { return placement.vstage(stage, chunk); }
};

// Chunk sums kept across plans, keyed by everything they depend on, for callers that
// build many plans of one model (the layout search).
class ChunkCache {
 public:
  ChunkCache();
  ~ChunkCache();
  ChunkCache(const ChunkCache&) = delete;
  ChunkCache& operator=(const ChunkCache&) = delete;
  const ChunkTotals& get(const LoweringInput& in, const ComputeDevice& dev, int layers, bool embedding, bool head,
                         int first_layer = 0);

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

// `cache` (totals only; null: the plan keeps its own) must outlive the plan.
StepPlan build_step_plan(const LoweringInput& in, PlanDetail detail = PlanDetail::items, ChunkCache* cache = nullptr);

// The builders build_step_plan() calls, one per concern (and their tests).
// Data-parallel buckets and codecs (plan_gradients.cpp): the reduction of `bytes` of
// stage gradients over the replica group, and the stage's issue points.
GradReduction plan_grad_reduction(const LoweringInput& in, const ComputeDevice& dev, Bytes bytes, bool expert = false);
// `expert`: the reduction of routed experts' gradients, over the expert replica group.
std::vector<BucketPoint> plan_buckets(const LoweringInput& in, const StepPlan& plan, const StagePlan& stage,
                                      PlanDetail detail);
// Pipeline sends (plan_pipeline.cpp): wire bytes and codec of the stage's sends.
void plan_pipeline_sends(const LoweringInput& in, const StepPlan& plan, std::vector<StagePlan>& stages);
// ZeRO, optimizer and offload (plan_optimizer.cpp); with overlap_param_gather, ZeRO-1/2's
// gather as the stage's ParamGather buckets.
void plan_optimizer(const LoweringInput& in, StagePlan& stage);
// ZeRO-3 / FSDP (plan_sharding.cpp): how the stage's units are gathered and reduced.
ShardPlan plan_sharding(const LoweringInput& in, const StagePlan& stage);
// The units of one transformer layer: unit k starts at forward op `first_op` of `ops`
// (transformer_layer_ops) and holds `params` parameters of one tensor-parallel rank, of
// which `gathered` are sharded (the rest, tensors under the persistence threshold, stay
// whole on every rank).
struct LayerUnit {
  std::size_t first_op = 0;
  double params = 0, gathered = 0;
  bool fp8 = false;  // gathered as FP8, one byte per element (ShardingSpec::fp8_all_gather)
};
std::vector<LayerUnit> layer_units(const TransformerConfig& c, const ShardingSpec& sh, const std::vector<LayerOp>& ops,
                                   int tp);
// Parameters of one layer (one tensor-parallel rank) that stay whole: tensors under the
// persistence threshold (DeepSpeed's stage3_param_persistence_threshold).
double persistent_layer_params(const TransformerConfig& c, const ShardingSpec& sh, int tp);
// The largest unit's gathered parameters on one rank of a stage (its layers' units, the
// embedding on the first stage, the LM head on the last).
double largest_unit_params(const TransformerConfig& c, const StrategySpec& st, bool embedding, bool head);
// The prefetch depth `depth` bounded by max_live_parameters for units of `unit` parameters.
int bounded_prefetch(int depth, const ShardingSpec& sh, double unit);
// Whether ZeRO-3 / FSDP shards this strategy's parameters (zero = 3 over > 1 replica).
bool sharded_parameters(const StrategySpec& st);
// Ranks a ZeRO stage shards over: the replica group (dp * cp ranks), or with hybrid sharding
// (ZeRO-3, strategy.fsdp.shard_group) the shard group.
int shard_ranks(const StrategySpec& st);
// A memory-bound codec kernel on `dev` as an item.
Item codec_item(const ComputeDevice& dev, Flops flops, Bytes traffic);

}  // namespace hcsim
