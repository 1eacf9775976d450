#pragma once
// A gpt3-1.3b scenario on one NVSwitch node of A100s (dp * tp * pp devices, micro-batch 2)
// with a given pipeline schedule, and its metrics in a given mode, for the schedules' mode
// and memory tests.
#include <nlohmann/json.hpp>

#include "scenarios/scenario.hpp"
#include "sim/driver/run.hpp"

namespace hcsim::run_support {

inline nlohmann::json pipeline_scenario(const char* schedule, int dp, int tp, int pp, int batch) {
  const int n = dp * tp * pp;
  return {{"cluster",
           {{"pools", {{{"preset", "nvidia-a100-80gb-sxm"}, {"count", n}}}},
            {"topology", {{"type", "nvswitch-cluster"}, {"gpus_per_node", n}}}}},
          {"workload", {{"model", {{"preset", "gpt3-1.3b"}}}, {"global_batch", batch}, {"micro_batch", 2}}},
          {"strategy", {{"dp", dp}, {"tp", tp}, {"pp", pp}, {"schedule", schedule}}}};
}

inline Metrics scenario_metrics(nlohmann::json doc, const char* mode) {
  doc["simulation"] = {{"mode", mode}};
  return run_scenario(parse_scenario(doc, "test.json")).metrics;
}

}  // namespace hcsim::run_support
