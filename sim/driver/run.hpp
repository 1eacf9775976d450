#pragma once
// One scenario from typed values to metrics: memory check, task-count bound, lowering to a
// task graph, the engine, the metrics. Bad layouts (a model that does not fit, a task graph
// beyond --max-tasks) are InputErrors, reported before anything is simulated.

#include <memory>

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
  double codec_time_s = 0;
  // With workload.average_steps = K: the steps 0..K-1 grouped by what the codecs do at
  // them (warm-up, compressed, local or variance-frozen steps) and, on a torus rewired by
  // optical circuit switches (ocs_phases), by its wiring `dims`; each group simulated once.
  struct StepPhase {
    std::int64_t first_step = 0, steps = 0;
    double step_time_s = 0, it_energy_j = 0;
    std::vector<int> dims;  // the torus wiring of these steps; empty unless rewired
  };
  std::vector<StepPhase> phases;
  // Mean over the K steps, OCS reconfigurations included:
  // (sum of phase step x steps + reconfigurations x reconfiguration time) / K.
  double mean_step_time_s = 0, mean_it_energy_j = 0;
  // Changes of wiring during the K steps, their total time and energy (devices idle).
  std::int64_t reconfigurations = 0;
  double reconfiguration_time_s = 0, reconfiguration_energy_j = 0;
};

// Estimated task count of the step before building it (for the --max-tasks bound),
// including estimate_collective_schedule.
double estimate_tasks(const Scenario& sc);
// Schedule steps walked to choose and cost the data-parallel collectives: 2(n-1)n per
// group of n ranks planned (the ring's schedule).
double estimate_collective_schedule(const Scenario& sc);
double estimate_collective_schedule(const StrategySpec& st, bool symmetry);

// The issue the memory check raises for a stage that does not fit: its devices
// first..last, in pool `pool` of `capacity` bytes per device, need `need` per device.
Issue memory_shortfall(int stage, int first, int last, const std::string& pool, double capacity,
                       const MemoryBreakdown& need);

RunOutput run_scenario(const Scenario& sc);

}  // namespace hcsim
