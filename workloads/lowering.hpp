#pragma once
// Lowers (model, strategy, placement) to a TaskGraph: the per-device compute segments,
// tensor-parallel collectives, pipeline sends and data-parallel gradient collectives of one
// training step, with the pipeline schedule's order and each device's compute and
// communication streams expressed as dependencies.
//
// Device numbering (Megatron's tensor-data-pipeline order, tensor fastest):
//   device = (stage * dp + dp_rank) * tp + tp_rank
// so a stage is a contiguous block of devices (a pool can hold whole stages) and a tensor-
// parallel group sits inside a node.

#include <cstdint>
#include <vector>

#include "models/compute/compute_device.hpp"
#include "workloads/memory.hpp"
#include "workloads/pipeline_schedule.hpp"
#include "workloads/strategy.hpp"
#include "workloads/task_graph.hpp"
#include "workloads/transformer.hpp"

namespace hcsim {

struct LoweringInput {
  const TransformerConfig* model = nullptr;
  const StrategySpec* strategy = nullptr;
  const WorkloadSpec* workload = nullptr;
  const PipelineSchedule* schedule = nullptr;
  std::vector<const ComputeDevice*> stage_device;  // per pipeline stage
  std::vector<int> layers_per_stage;               // per stage, all chunks; sums to layers
  // Symmetry: build only the first `dp_replicas` data-parallel replicas and the first
  // `tp_ranks` tensor-parallel ranks of each stage (-1: all). Collectives still span their
  // whole groups, so every link they load is loaded; the ranks not built are identical to
  // a built one (same device model, same schedule, symmetric links) and take its results.
  int dp_replicas = -1;
  int tp_ranks = -1;
};

struct StagePlan {
  int first_layer = 0;
  int layers = 0;  // over all chunks of the stage
};

inline std::uint32_t device_index(int stage, int dp_rank, int tp_rank, int dp, int tp) {
  return static_cast<std::uint32_t>((stage * dp + dp_rank) * tp + tp_rank);
}

TaskGraph lower_training_step(const LoweringInput& in);

// Layers per stage balanced by device speed: each stage gets layers in proportion to its
// device's throughput on one layer (forward + backward), whole layers, each stage >= v.
std::vector<int> balance_layers(const TransformerConfig& c, const StrategySpec& st, const WorkloadSpec& w,
                                const std::vector<const ComputeDevice*>& stage_device);

// Stage shapes (layers, embedding/head, in-flight micro-batches) for the memory model.
std::vector<StageShape> stage_shapes(const LoweringInput& in);

}  // namespace hcsim
