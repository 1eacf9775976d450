#pragma once
// Memory per device over a training step: weights, gradients and optimizer state from
// the ZeRO paper's accounting (Rajbhandari et al. SC20 §5: 2 + 2 + 12 bytes per
// parameter for mixed-precision Adam, partitioned over data-parallel ranks by stage),
// activations from Korthikanti et al. 2022 Table 2 per layer times the layers of the stage
// times the micro-batches the pipeline schedule keeps in flight (1F1B: p - s; GPipe: m),
// plus the last stage's fp32 logits (4 s b V / t) and communication buffers. Under context
// parallelism (cp) activations and logits cover s/cp tokens and ZeRO partitions over dp * cp.
// MoE layers keep their own activations (moe_layer_ops) and hold E/ep routed experts, 1/etp
// of each (expert tensor parallelism), whose gradients and optimizer state ZeRO partitions
// over the expert replica group (dp * cp * tp / (ep * etp) ranks).

#include <string>

#include "workloads/strategy.hpp"
#include "workloads/transformer.hpp"

namespace hcsim {

struct MemoryBreakdown {
  Bytes weights{}, gradients{}, optimizer{}, activations{}, buffers{};
  // Optimizer state kept outside the device (strategy.offload = "pool"): not in total().
  Bytes offloaded{};
  [[nodiscard]] Bytes total() const { return weights + gradients + optimizer + activations + buffers; }
};

struct StageShape {
  int stage = 0;
  double layers = 0;        // transformer layers held by this stage (all chunks)
  bool has_embedding = false;
  bool has_head = false;
  double in_flight = 1;     // micro-batches of activations kept at peak
  double moe_layers = 0;    // of `layers`, the MoE layers (MoE models)
  int chunks = 1;           // model chunks of the stage (the schedule's Placement::v)
};

// Parameters held by one device of the stage (one tensor-parallel shard; of an MoE layer,
// 1/etp of each of its E/ep routed experts).
double stage_params_per_device(const TransformerConfig& c, const StrategySpec& st, const StageShape& sh);
// Of which the routed experts' (MoE), sharded by ZeRO over the expert replica group.
double stage_expert_params_per_device(const TransformerConfig& c, const StrategySpec& st, const StageShape& sh);

MemoryBreakdown stage_memory(const TransformerConfig& c, const StrategySpec& st, const WorkloadSpec& w,
                             const StageShape& sh);

// ZeRO-3 / FSDP buffers of one device of the stage (workloads/plan_sharding.cpp): e bytes
// per element of
//   (d + 1) U            the unit in use and the d prefetched (d bounded by max_live_parameters),
//                        or, with reshard_after_forward off, the stage's parameters
//   + P (1 - 1/N)        tensors under the persistence threshold, whole on every rank
//   + 2 U                unsharded gradients: the unit being reduce-scattered, the next one
// for the stage's largest unit U, N ranks of a shard's replica group.
Bytes sharding_buffers(const TransformerConfig& c, const StrategySpec& st, const WorkloadSpec& w, const StageShape& sh);

}  // namespace hcsim
