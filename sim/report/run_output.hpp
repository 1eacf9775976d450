#pragma once
// What one run of a scenario produced: the task graph, the engine's result and the metrics,
// plus the compression and step-averaging figures. Data only: the run driver
// (sim/driver/run.hpp) fills it, the report writers (report.hpp) read it.

#include <cstdint>
#include <memory>
#include <vector>

#include "sim/engine/engine.hpp"
#include "sim/report/metrics.hpp"

namespace hcsim {

struct RunOutput {
  TaskGraph graph;
  EngineResult engine;
  Metrics metrics;
  std::vector<StageShape> shapes;
  double wall_s = 0;
  // With compression configured: the same step without it, and the codec time added
  // (mean over devices of encode + decode time).
  std::shared_ptr<Metrics> uncompressed;
  Seconds codec_time{};
  // With an MoE model routed unevenly (a skewed routing or a capacity factor): the same step
  // with even routing, dropless; the difference is the imbalance's cost.
  std::shared_ptr<Metrics> balanced;
  // With workload.average_steps = K: the steps 0..K-1 grouped by what the codecs do at
  // them (warm-up, compressed, local or variance-frozen steps) and, on a torus rewired by
  // optical circuit switches (ocs_phases), by its wiring `dims`; each group simulated once.
  struct StepPhase {
    std::int64_t first_step = 0, steps = 0;
    Seconds step_time{};
    Joules it_energy{};
    std::vector<int> dims;  // the torus wiring of these steps; empty unless rewired
  };
  std::vector<StepPhase> phases;
  // Mean over the K steps, OCS reconfigurations included:
  // (sum of phase step x steps + reconfigurations x reconfiguration time) / K.
  Seconds mean_step_time{};
  Joules mean_it_energy{};
  // Changes of wiring during the K steps, their total time and energy (devices idle).
  std::int64_t reconfigurations = 0;
  Seconds reconfiguration_time{};
  Joules reconfiguration_energy{};
};

}  // namespace hcsim
