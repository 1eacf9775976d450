#pragma once
// How a pipeline's stages are laid out: layers per stage balanced by device speed (for
// heterogeneous stage placement), and each stage's shape for the memory model.

#include <vector>

#include "workloads/lowering.hpp"

namespace hcsim {

// Layers per stage balanced by device speed: each stage gets layers in proportion to its
// device's throughput on one layer (forward + backward), whole layers, each stage >= v (the
// schedule's chunks per device); the embedding and the head on the stages `place` puts them.
std::vector<int> balance_layers(const TransformerConfig& c, const StrategySpec& st, const WorkloadSpec& w,
                                const std::vector<const ComputeDevice*>& stage_device, const Placement& place);

// Stage shapes (layers, embedding/head, in-flight micro-batches) for the memory model.
std::vector<StageShape> stage_shapes(const LoweringInput& in);

}  // namespace hcsim
