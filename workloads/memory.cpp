#include "memory.hpp"

#include <algorithm>
#include <utility>

#include "workloads/step_plan.hpp"

namespace hcsim {

double stage_expert_params_per_device(const TransformerConfig& c, const StrategySpec& st, const StageShape& sh) {
  return sh.moe_layers * c.moe_expert_params() / (st.ep * st.etp);
}

double stage_params_per_device(const TransformerConfig& c, const StrategySpec& st, const StageShape& sh) {
  double p = (sh.layers - sh.moe_layers) * c.layer_params() + sh.moe_layers * c.moe_dense_params();
  const double emb = static_cast<double>(c.vocab) * static_cast<double>(c.hidden);
  if (sh.has_embedding) p += c.embedding_params();
  // The head's matrix: its own when untied; a copy of the word embeddings on the last
  // stage when tied and the pipeline splits them (Megatron keeps both copies in sync).
  if (sh.has_head && (!c.tied_embeddings || !sh.has_embedding)) p += emb;
  return p / st.tp + stage_expert_params_per_device(c, st, sh);
}

Bytes sharding_buffers(const TransformerConfig& c, const StrategySpec& st, const WorkloadSpec& w, const StageShape& sh) {
  const ShardingSpec& z = st.sharding;
  const double e = dtype_bytes(storage_dtype(w.precision));
  const double nd = shard_ranks(st);
  const double unit = largest_unit_params(c, st, sh.has_embedding, sh.has_head);
  const double persistent = persistent_layer_params(c, z, st.tp) * sh.layers;
  // Gathered parameters: the unit in use and those prefetched (as the plan bounds them), or,
  // kept from forward to backward, every unit of the stage.
  const int depth = bounded_prefetch(std::max(z.prefetch_forward, z.prefetch_backward), z, unit);
  const double gathered =
      z.reshard_after_forward ? (depth + 1) * unit : stage_params_per_device(c, st, sh) - persistent;
  // FP8 gathers (ShardingSpec::fp8_all_gather) hold the layers' units at one byte per
  // element, the embedding and the head at e: what that saves on the units above.
  double fp8_saved = 0;
  if (z.fp8_all_gather) {
    const double layer_unit = largest_unit_params(c, st, false, false);
    const double ends_unit = unit > layer_unit ? unit : 0.0;
    StageShape layers_only = sh;
    layers_only.has_embedding = layers_only.has_head = false;
    const double ends = stage_params_per_device(c, st, sh) - stage_params_per_device(c, st, layers_only);
    fp8_saved = z.reshard_after_forward ? (depth + 1) * (e * unit - std::max(layer_unit, e * ends_unit))
                                        : (e - 1.0) * (gathered - ends);
  }
  // Tensors under the persistence threshold kept whole (counted 1/nd in the weights), and the
  // unsharded gradients of the unit being reduce-scattered and of the one being computed.
  return Bytes(e * (gathered + persistent * (1.0 - 1.0 / nd)) - fp8_saved +
               grad_element_bytes(st, w.precision) * 2.0 * unit);
}

MemoryBreakdown stage_memory(const TransformerConfig& c, const StrategySpec& st, const WorkloadSpec& w,
                             const StageShape& sh) {
  const double psi = stage_params_per_device(c, st, sh);
  const double experts = stage_expert_params_per_device(c, st, sh), dense = psi - experts;
  // ZeRO shards over the dp * cp ranks of equal weights (hybrid sharding: the shard group);
  // the routed experts over their expert replica group.
  const double nd = shard_ranks(st), ne = st.layout().expert_replicas();
  auto sharded = [&](int stage) {
    return dense / (st.zero >= stage ? nd : 1.0) + experts / (st.zero >= stage ? ne : 1.0);
  };
  MemoryBreakdown m;
  const double e = dtype_bytes(storage_dtype(w.precision));
  m.weights = Bytes(e * sharded(3));
  // Gradients as they accumulate: an fp32 main-gradient buffer or the model's datatype.
  m.gradients = Bytes(grad_element_bytes(st, w.precision) * sharded(2));
  m.optimizer = Bytes(12.0 * sharded(1));                                // fp32 master, momentum, variance
  if (st.offload == Offload::pool) std::swap(m.optimizer, m.offloaded);  // the state lives in the pool

  const double s = static_cast<double>(c.seq_len / st.cp), b = static_cast<double>(w.micro_batch);
  const double h = static_cast<double>(c.hidden);
  // Per layer: what the layer's ops keep for backward (transformer_ops.cpp), which equals
  // Korthikanti's Table 2 for each variant (tests/workloads/activation_test.cpp).
  // Under context parallelism every activation covers this rank's s/cp tokens.
  const ShardShape shape = shard_shape(w, st);
  Bytes act = layer_activation_bytes(c, shape, st.recompute) * (sh.layers - sh.moe_layers) * sh.in_flight;
  if (sh.moe_layers > 0) act += layer_activation_bytes(c, shape, st.recompute, true) * sh.moe_layers * sh.in_flight;
  if ((st.recompute == Recompute::full || st.recompute == Recompute::op) && sh.layers > 0) {
    // One layer's full activations are live while it is recomputed and back-propagated.
    Bytes one = layer_activation_bytes(c, shape, Recompute::none);
    if (sh.moe_layers > 0) one = max(one, layer_activation_bytes(c, shape, Recompute::none, true));
    act += one;
  }
  if (sh.has_head) act += Bytes(4.0 * s * b * static_cast<double>(c.vocab) / st.tp + 4.0 * s * b * h / st.tp);
  // Without deallocation, every chunk's output (b s h, s/t tokens under sequence
  // parallelism) stays until its backward: v per micro-batch in flight, but for the last
  // stage's final chunk, whose output is the loss.
  if (!st.deallocate_pipeline_outputs && st.pp > 1) {
    const double v = sh.chunks, kept = v - (sh.has_head ? 1.0 : 0.0);
    act += Bytes(s * b * h * e / (st.sequence_parallel ? st.tp : 1) * kept * sh.in_flight);
  }
  m.activations = act;

  Bytes buf{};
  if (sharded_parameters(st)) buf += sharding_buffers(c, st, w, sh);
  else if (st.grad_ranks() > 1) buf += 2.0 * st.dp_bucket;  // bucket being reduced + bucket being filled
  if (st.dp_codec && st.grad_ranks() > 1) {
    // Error feedback and communication buffers of the gradient codec, over this device's
    // gradients (the codec states its resident bytes; models/compression).
    const auto elements = static_cast<std::int64_t>(psi);
    const std::int64_t rows = std::min<std::int64_t>(c.hidden, std::max<std::int64_t>(1, elements));
    buf += st.dp_codec->cost(CodecInput{rows, std::max<std::int64_t>(1, elements / rows), e, st.grad_ranks(), st.step})
               .extra_memory;
  }
  m.buffers = buf;
  return m;
}

}  // namespace hcsim
