// strategy.fsdp presets and their resolution (see fsdp.hpp). Each preset is the framework's
// documented default behaviour:
// - pytorch-fsdp2: torch.distributed.fsdp.fully_shard applied to each transformer block
//   (PyTorch docs, "torch.distributed.fsdp.fully_shard"; torchtitan's apply_fsdp):
//   reshard_after_forward=True; the next block's all-gather is issued while the current one
//   computes, in forward and backward (implicit prefetch on its all-gather stream; one
//   block ahead, explicit via set_modules_to_forward_prefetch/backward_prefetch).
// - pytorch-fsdp: FullyShardedDataParallel with a transformer auto-wrap policy (PyTorch docs,
//   "FullyShardedDataParallel"; Zhao et al. VLDB 2023 §3.3-3.4): ShardingStrategy.FULL_SHARD,
//   backward_prefetch=BACKWARD_PRE (the next unit's gather before the current unit's
//   gradient computation), limit_all_gathers=True (at most two all-gathers in flight: the
//   CPU's run-ahead issues the next forward unit's gather while this one computes, no further).
// - deepspeed-zero3: DeepSpeed ZeRO stage 3 (deepspeed.readthedocs.io, "ZeRO" configuration
//   defaults): gathers per submodule, stage3_prefetch_bucket_size 5e7 elements,
//   stage3_max_live_parameters 1e9, stage3_param_persistence_threshold 1e5.
// All three reduce gradients on streams of their own beside the gathers' (reduce_stream),
// and the backward's end waits for them: FSDP1's _post_backward_stream and, hybrid,
// _all_reduce_stream, waited for in _post_backward_final_callback
// (torch/distributed/fsdp/_runtime_utils.py); FSDP2's reduce-scatter and all-reduce streams
// of FSDPCommContext, waited for by the root's post-backward callback; DeepSpeed ZeRO-3's
// reduce_and_partition_stream (overlap_comm, true by default at stage 3), synchronised in
// its gradient-partition epilogue.
#include "scenarios/fsdp.hpp"

#include <fmt/format.h>

#include "scenarios/sections.hpp"

namespace hcsim {

const std::vector<ShardingPreset>& sharding_presets() {
  static const std::vector<ShardingPreset> p{
      {"deepspeed-zero3",
       {.unit = ShardUnit::submodule, .prefetch_forward = 1, .prefetch_backward = 1, .reshard_after_forward = true,
        .shard_group = 0, .prefetch_bucket = 5e7, .max_live_parameters = 1e9, .persistence_threshold = 1e5},
       "DeepSpeed ZeRO-3 configuration defaults, deepspeed.readthedocs.io/en/latest/zero3.html"},
      {"pytorch-fsdp",
       {.unit = ShardUnit::layer, .prefetch_forward = 1, .prefetch_backward = 1, .reshard_after_forward = true},
       "PyTorch FullyShardedDataParallel: FULL_SHARD, BACKWARD_PRE, limit_all_gathers; "
       "pytorch.org/docs/stable/fsdp.html"},
      {"pytorch-fsdp2",
       {.unit = ShardUnit::layer, .prefetch_forward = 1, .prefetch_backward = 1, .reshard_after_forward = true},
       "PyTorch fully_shard per transformer block, reshard_after_forward=True; "
       "pytorch.org/docs/stable/distributed.fsdp.fully_shard.html"},
  };
  return p;
}

ShardingSpec resolve_sharding(const nlohmann::json& v, const std::string& path, const StrategySpec& st,
                              Diagnostics& diag, nlohmann::json* resolved) {
  if (!v.is_null() && st.zero != 3) diag.error(path, fmt::format("applies to zero 3; zero is {}", st.zero));
  const nlohmann::json given = v.is_null() ? nlohmann::json::object() : v;
  const Params p = resolve_params(sections::fsdp(), given, path, diag);
  ShardingSpec spec;
  if (!p.has("preset")) return spec;
  for (const ShardingPreset& pr : sharding_presets())
    if (pr.name == p.string("preset")) spec = pr.spec;
  if (p.has("unit")) spec.unit = p.string("unit") == "submodule" ? ShardUnit::submodule : ShardUnit::layer;
  if (p.has("prefetch_forward")) spec.prefetch_forward = static_cast<int>(p.integer("prefetch_forward"));
  if (p.has("prefetch_backward")) spec.prefetch_backward = static_cast<int>(p.integer("prefetch_backward"));
  if (p.has("reshard_after_forward")) spec.reshard_after_forward = p.boolean("reshard_after_forward");
  if (p.has("shard_group")) spec.shard_group = static_cast<int>(p.integer("shard_group"));
  if (p.has("prefetch_bucket")) spec.prefetch_bucket = p.number("prefetch_bucket");
  if (p.has("max_live_parameters")) spec.max_live_parameters = p.number("max_live_parameters");
  if (p.has("persistence_threshold")) spec.persistence_threshold = p.number("persistence_threshold");
  if (p.has("reduce_stream")) spec.reduce_stream = p.boolean("reduce_stream");
  spec.fp8_all_gather = p.boolean("fp8_all_gather");
  if (spec.shard_group > 0 && st.grad_ranks() % spec.shard_group != 0)
    diag.error(path + "/shard_group", fmt::format("{} ranks do not divide the {} data-parallel ranks (dp * cp)",
                                                  spec.shard_group, st.grad_ranks()));
  if (resolved)
    *resolved = {{"preset", p.string("preset")},
                 {"unit", spec.unit == ShardUnit::submodule ? "submodule" : "layer"},
                 {"prefetch_forward", spec.prefetch_forward},
                 {"prefetch_backward", spec.prefetch_backward},
                 {"reshard_after_forward", spec.reshard_after_forward},
                 {"shard_group", spec.shard_group > 0 ? nlohmann::json(spec.shard_group) : nlohmann::json()},
                 {"prefetch_bucket", spec.prefetch_bucket},
                 {"max_live_parameters", spec.max_live_parameters},
                 {"persistence_threshold", spec.persistence_threshold},
                 {"reduce_stream", spec.reduce_stream},
                 {"fp8_all_gather", spec.fp8_all_gather}};
  return spec;
}

}  // namespace hcsim
