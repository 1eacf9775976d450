#pragma once
// The mapping file of `hcsim cluster jobs` (docs/cluster.md): how a trace's jobs become a
// job list (trace_synth.hpp), checked as every input is (unknown keys, types, paths):
//   { "workloads": { name: { "workload": ..., "strategy": ... } },
//     "rules": [ { "max_gpus": 8, "workload": name }, ... ],
//     "gpus_per_node": 8, "pool": "a100", "pool_by_gpu_type": { "V100": "a100" } }

#include <nlohmann/json.hpp>

#include "sim/cluster/trace_synth.hpp"

namespace hcsim {

TraceJobListParams parse_trace_mapping(const nlohmann::json& doc);

}  // namespace hcsim
