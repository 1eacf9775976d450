#pragma once
// The scenario's own sections, declared once: the parser, `hcsim list`, the JSON Schema
// (docs/scenario.schema.json) and docs/scenario.md all read these tables.

#include "sim/core/params.hpp"
#include "workloads/strategy.hpp"

namespace hcsim::sections {

// Devices in the whole cluster, and so in one pool: bounds the work of validation (the
// topology graph) and keeps device and graph-node indices well within int.
inline constexpr int kMaxDevices = 4'000'000;

const ParamTable& top();
const ParamTable& cluster();
const ParamTable& pool();
const ParamTable& model_ref();
const ParamTable& workload();
const ParamTable& strategy();
const ParamTable& fsdp();  // strategy.fsdp
const ParamTable& simulation();
const ParamTable& outputs();

// The strategy keys that say how the framework runs the step (tp_comm_overlap,
// main_grads, grad_accumulation, cross_entropy_fusion, deallocate_pipeline_outputs,
// blocking_p2p), read from a checked strategy section into `st`.
void read_framework_keys(const Params& s, StrategySpec& st);

// JSON Schema of the whole scenario document.
nlohmann::json scenario_schema();

}  // namespace hcsim::sections
