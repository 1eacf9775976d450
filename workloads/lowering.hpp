#pragma once
// Lowers (model, strategy, placement) to a TaskGraph: the per-device compute segments,
// tensor-parallel collectives, pipeline sends and data-parallel gradient collectives of one
// training step, with the pipeline schedule's order and each device's compute and
// communication streams expressed as dependencies.
//
// Devices are numbered as workloads/layout.hpp says (tensor fastest, then context, data,
// pipeline); the step's items, sends, buckets and gathers come from the step plan
// (workloads/step_plan.hpp), which this file turns into tasks.
//
// Context parallelism (cp > 1): each attention pass is a ring over the cp ranks of a
// (stage, dp_rank, tp_rank): cp - 1 steps, each a send of the rank's current K/V block to
// the next cp rank on the communication stream, overlapped with attention on the block
// received the step before (block k waits for step k); backward sends K, V and dK, dV
// (twice the bytes). One compute task per block and one send per step and rank.

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
  // Symmetry: build only the first `dp_replicas` data-parallel ranks (each with all its cp
  // context-parallel ranks) and the first `tp_ranks` tensor-parallel ranks of each stage
  // (-1: all). Collectives still span their
  // whole groups, so every link they load is loaded; the ranks not built are identical to
  // a built one (same device model, same schedule, symmetric links) and take its results.
  int dp_replicas = -1;
  int tp_ranks = -1;
  // Optimizer-state offload (strategy.offload = "pool", workloads/offload.hpp): per device,
  // the memory endpoint holding its state (an index into the topology's memory nodes, in
  // node order), and how many memory endpoints there are. Empty without offload. Every
  // device's streams are built, ranks not built included, so that the pool's links are
  // shared as they are in the cluster.
  std::vector<std::uint32_t> offload_endpoint;
  std::uint32_t memory_endpoints = 0;
  // Analytical mode: per stage, the time of one offload stream (the read, or the write
  // back) with every device of the cluster streaming at once (topologies/transfer_time.hpp).
  std::vector<Seconds> offload_stream;
};

TaskGraph lower_training_step(const LoweringInput& in);

}  // namespace hcsim
