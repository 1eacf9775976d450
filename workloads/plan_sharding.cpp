// Step-plan builder: ZeRO-3 / FSDP parameter sharding per unit (see step_plan.hpp).
//
// As the frameworks run it:
// - PyTorch FSDP (Zhao et al., "PyTorch FSDP", VLDB 2023 §3-4; torch.distributed.fsdp docs):
//   each wrapped module (a transformer layer) is a unit: its flat parameter is all-gathered
//   before its forward and again before its backward (FULL_SHARD; reshard_after_forward
//   False keeps it from forward to backward, SHARD_GRAD_OP), the next unit's gather issued
//   while this one computes (forward prefetch, BACKWARD_PRE backward prefetch), the
//   gradients reduce-scattered as the unit's backward ends; HYBRID_SHARD shards inside a
//   group (a node) and all-reduces the shard across the groups.
// - DeepSpeed ZeRO-3 (Rajbhandari et al. SC20 §5; deepspeed.readthedocs.io zero config): the
//   parameters of each submodule are gathered as it is called, the upcoming ones prefetched
//   up to stage3_prefetch_bucket_size elements, no more than stage3_max_live_parameters
//   gathered at once, tensors under stage3_param_persistence_threshold elements never
//   sharded.
// Units here: a layer (or its weight matrices, grouped up to the prefetch bucket inside the
// layer), the embedding, the LM head. The items carry the unit markers
// (workloads/item_builder.hpp); this file says how they are gathered and reduced.
#include "workloads/step_plan.hpp"

#include <algorithm>
#include <cmath>

#include "sim/core/error.hpp"

namespace hcsim {
namespace {

// The tensors of a layer that are not weight matrices, in elements (whole, before tensor
// parallelism): LLaMA's two RMSNorm weights; GPT/BERT's QKV, projection, MLP biases and two
// LayerNorms' weight and bias (transformer.cpp: layer_params).
std::vector<double> small_tensors(const TransformerConfig& c) {
  const double h = static_cast<double>(c.hidden), f = static_cast<double>(c.ffn_hidden);
  if (c.family == "llama") return {h, h};
  return {3 * h, h, f, h, h, h, h, h};
}

}  // namespace

bool sharded_parameters(const StrategySpec& st) { return st.zero >= 3 && st.grad_ranks() > 1; }

int shard_ranks(const StrategySpec& st) {
  const int ranks = st.grad_ranks();
  const int g = st.sharding.shard_group;
  // The parser requires g to divide the ranks; a layout-search candidate whose replica group
  // it does not divide shards over the whole group.
  return st.zero >= 3 && g > 0 && g < ranks && ranks % g == 0 ? g : ranks;
}

double persistent_layer_params(const TransformerConfig& c, const ShardingSpec& sh, int tp) {
  double p = 0;
  for (double n : small_tensors(c))
    if (n < sh.persistence_threshold) p += n;
  return p / tp;
}

std::vector<LayerUnit> layer_units(const TransformerConfig& c, const ShardingSpec& sh, const std::vector<LayerOp>& ops,
                                   int tp) {
  const double layer = c.layer_params() / tp;
  const double persistent = persistent_layer_params(c, sh, tp);
  if (sh.unit == ShardUnit::layer) return {{0, layer, layer - persistent, sh.fp8_all_gather}};
  // Submodules: each weight matrix (a GEMM's k x n weights), the next ones of the layer
  // joined to it while the group stays within the prefetch bucket; the small tensors go
  // with the first group.
  std::vector<LayerUnit> out;
  double in_group = 0, matrices = 0;
  for (std::size_t i = 0; i < ops.size(); ++i) {
    if (ops[i].kernel.kind != KernelKind::gemm) continue;
    const double w = static_cast<double>(ops[i].kernel.n) * static_cast<double>(ops[i].kernel.k);
    matrices += w;
    if (out.empty() || in_group + w > sh.prefetch_bucket) {
      out.push_back({i, w, w, sh.fp8_all_gather});
      in_group = w;
    } else {
      out.back().params += w;
      out.back().gathered += w;
      in_group += w;
    }
  }
  HCSIM_ASSERT(!out.empty(), "a transformer layer without weight matrices");
  out.front().first_op = 0;
  out.front().params += layer - matrices;
  out.front().gathered += layer - matrices - persistent;
  return out;
}

ShardPlan plan_sharding(const LoweringInput& in, const StagePlan& sp) {
  const StrategySpec& st = *in.strategy;
  const ShardingSpec& sh = st.sharding;
  ShardPlan p;
  if (!sharded_parameters(st)) return p;
  p.on = true;
  p.shard = shard_ranks(st);
  p.copies = st.grad_ranks() / p.shard;
  p.gather_backward = sh.reshard_after_forward;
  p.reduce_stream = sh.reduce_stream;
  p.prefetch_forward = sh.prefetch_forward;
  p.prefetch_backward = sh.prefetch_backward;
  if (sh.max_live_parameters > 0) {
    const double unit = largest_unit_params(*in.model, st, sp.stage == 0, sp.stage == st.pp - 1);
    p.prefetch_forward = bounded_prefetch(sh.prefetch_forward, sh, unit);
    p.prefetch_backward = bounded_prefetch(sh.prefetch_backward, sh, unit);
  }
  return p;
}

int bounded_prefetch(int depth, const ShardingSpec& sh, double unit) {
  // No more than max_live_parameters gathered at once: the prefetch stops where the units
  // in flight (this one and those ahead) would pass it; the unit in use is always gathered.
  if (sh.max_live_parameters <= 0 || unit <= 0) return depth;
  const int live = std::max(1, static_cast<int>(std::floor(sh.max_live_parameters / unit)));
  return std::min(depth, live - 1);
}

double largest_unit_params(const TransformerConfig& c, const StrategySpec& st, bool embedding, bool head) {
  ShardShape shape;
  shape.tp = st.tp;
  double u = 0;
  for (const LayerUnit& x : layer_units(c, st.sharding, transformer_layer_ops(c, shape), st.tp)) u = std::max(u, x.gathered);
  const double vocab = static_cast<double>(c.vocab) * static_cast<double>(c.hidden) / st.tp;
  if (embedding) u = std::max(u, c.embedding_params() / st.tp);
  if (head) u = std::max(u, vocab);
  return u;
}

}  // namespace hcsim
