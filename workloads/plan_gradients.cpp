// Step-plan builder: data-parallel gradient reductions (see step_plan.hpp).
//
// Gradients are reduced over the stage's replica group (the dp * cp ranks of equal weights):
// an all-reduce, or a reduce-scatter under ZeRO >= 1 (Rajbhandari et al. SC20 §5). With
// overlap (PyTorch DDP's buckets, Li et al. VLDB 2020), the last micro-batch's backward
// passes fill a bucket as each layer's gradients complete (the bucket markers); a full
// bucket (>= strategy.dp_bucket) is reduced at once, and what is left goes after the
// stage's last backward pass. Without overlap, all gradients after the last pass.
// ZeRO-2 over several micro-batches keeps only a shard of the gradients, so the buckets are
// reduced in every micro-batch's backward (DeepSpeed stage_1_and_2.py,
// reduce_ready_partitions_and_remove_grads; StepPlan::reduce_every_microbatch).
// A gradient codec (models/compression) encodes before and decodes after its collective
// plan; under ZeRO the gradients are reduce-scattered in place, so a codec that does not
// sum in place is refused or sent by all-gather ("on_incompatible").
#include "workloads/step_plan.hpp"

#include <algorithm>

namespace hcsim {

double grad_element_bytes(const StrategySpec& st, DType precision) {
  const bool fp32 =
      st.main_grads == MainGrads::fp32 ||
      (st.main_grads == MainGrads::automatic && (precision == DType::bf16 || precision == DType::fp8) && st.zero <= 1);
  return fp32 ? 4.0 : dtype_bytes(storage_dtype(precision));
}

std::optional<int> tp_overlap_sms(const StrategySpec& st) {
  if (!st.sequence_parallel) return std::nullopt;
  if (st.tp_overlap == TpOverlap::full) return 8;
  if (st.tp_overlap == TpOverlap::micro_pipeline) return 0;
  return std::nullopt;
}

Item codec_item(const ComputeDevice& dev, Flops flops, Bytes traffic) {
  const Kernel k = memory_kernel(KernelKind::codec, traffic, flops, DType::fp32);
  Item it;
  it.t = dev.time(k);
  it.bytes = traffic;
  it.energy = dev.dynamic_energy(k);
  return it;
}

GradReduction plan_grad_reduction(const LoweringInput& in, const ComputeDevice& dev, Bytes bytes, bool expert) {
  const StrategySpec& st = *in.strategy;
  const int ranks = expert ? st.layout().expert_replicas() : st.grad_ranks();
  const CollectiveOp plain = st.zero >= 1 ? CollectiveOp::reduce_scatter : CollectiveOp::all_reduce;
  GradReduction r;
  r.bytes = bytes;
  CodecCost cc;
  if (st.dp_codec) {
    // The bucket seen as a (hidden x elements/hidden) matrix.
    const double e = grad_element_bytes(st, in.workload->precision);
    const auto elements = static_cast<std::int64_t>(bytes.value() / e);
    const std::int64_t rows = std::min<std::int64_t>(in.model->hidden, std::max<std::int64_t>(1, elements));
    const CodecInput ci{rows, std::max<std::int64_t>(1, elements / rows), e, ranks, st.step};
    cc = st.zero >= 1 ? cost_for_in_place_allreduce(*st.dp_codec, ci, st.dp_on_incompatible, "/strategy/compression/dp")
                      : st.dp_codec->cost(ci);
  }
  if (!cc.compressed) {
    r.phases.push_back({plain, bytes});
    return r;
  }
  for (const CollectivePhase& ph : cc.plan.phases) {
    const CollectiveOp op = ph.op == WireOp::all_gather   ? CollectiveOp::all_gather
                            : ph.op == WireOp::all_to_all ? CollectiveOp::all_to_all
                                                          : plain;
    r.phases.push_back({op, ph.buffer});
  }
  r.codec.compressed = true;
  r.codec.encode = codec_item(dev, cc.encode_flops, cc.encode_memory_traffic);
  r.codec.decode = codec_item(dev, cc.decode_flops, cc.decode_memory_traffic);
  return r;
}

std::vector<BucketPoint> plan_buckets(const LoweringInput& in, const StepPlan& plan, const StagePlan& stage,
                                      PlanDetail detail) {
  const StrategySpec& st = *in.strategy;
  std::vector<BucketPoint> out;
  // ZeRO-3 / FSDP reduce-scatter each unit's gradients as its backward ends, every
  // micro-batch (plan_sharding.cpp), not in buckets of the last one.
  // MoE: the routed experts' gradients are reduced over the expert replica group (dp*cp*tp/ep
  // ranks), the rest over the replica group; a bucket holds both (Megatron-Core keeps the
  // experts' in buffers of their own, filled in the same order).
  const bool experts = in.model->is_moe() && st.layout().expert_replicas() > 1;
  if ((st.grad_ranks() <= 1 && !experts) || stage.sharding.on) return out;
  auto add = [&](int chunk, int marker, Bytes bytes, Bytes expert) {
    if (st.grad_ranks() <= 1) bytes = Bytes{};
    if (!experts) expert = Bytes{};
    if (bytes <= Bytes{} && expert <= Bytes{}) return;
    // For the closed forms, a run of equal reductions is one entry (a chunk's layers fill
    // equal buckets): the search builds a plan per layout.
    if (detail == PlanDetail::totals && !out.empty() && out.back().chunk == chunk && out.back().marker >= 0 &&
        marker == out.back().marker + out.back().repeat && out.back().reduction.bytes == bytes &&
        out.back().expert.bytes == expert) {
      ++out.back().repeat;
      return;
    }
    BucketPoint bp;
    bp.chunk = chunk;
    bp.marker = marker;
    if (bytes > Bytes{}) bp.reduction = plan_grad_reduction(in, *stage.device, bytes);
    if (expert > Bytes{}) bp.expert = plan_grad_reduction(in, *stage.device, expert, true);
    out.push_back(std::move(bp));
  };
  const bool every = plan.reduce_every_microbatch;
  if (!st.overlap_dp && !every) {
    add(-1, -1, stage.grad_bytes, stage.expert_grad_bytes);
    return out;
  }
  // Only the last micro-batch's backward completes gradients; its passes come in chunk
  // order v-1, ..., 0, the last being the stage's last backward pass. Reduced every
  // micro-batch, a chunk's pass is not followed by the next chunk's: its buckets end with it.
  Bytes filled{}, filled_expert{};
  for (int c = plan.v - 1; c >= 0; --c) {
    const auto& markers = stage.chunk_markers(c);
    const auto& expert = stage.chunk_expert_markers(c);
    for (std::size_t i = 0; i < markers.size(); ++i) {
      filled += markers[i];
      if (!expert.empty()) filled_expert += expert[i];
      if (st.overlap_dp && filled + filled_expert >= st.dp_bucket) {
        add(c, static_cast<int>(i), filled, filled_expert);
        filled = filled_expert = Bytes{};
      }
    }
    if (every && c > 0) {
      add(c, -1, filled, filled_expert);
      filled = filled_expert = Bytes{};
    }
  }
  // The stage's last backward pass: whatever is left in the bucket goes now.
  add(0, -1, filled, filled_expert);
  return out;
}

}  // namespace hcsim
