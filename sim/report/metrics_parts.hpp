#pragma once
// The parts compute_metrics is assembled from (internal to sim/report): the per-device
// time breakdown, the energy and power accounting, and the step-function series of power
// and memory over the step that the power samples and the trace's counter tracks share.

#include <cstdint>
#include <utility>
#include <vector>

#include "sim/core/zero_array.hpp"
#include "sim/report/metrics.hpp"

namespace hcsim::report_detail {

// The simulated devices in order, each found by its slot (its place among them). The slots
// are kept as slot + 1 in a ZeroArray (0: not simulated), so a cluster of replicas touches
// only the pages of its simulated devices' slots (16 of 131,072 in the frontier run).
class SimulatedSlots {
 public:
  explicit SimulatedSlots(const Metrics& m);
  [[nodiscard]] const std::vector<std::uint32_t>& devices() const { return devices_; }
  [[nodiscard]] std::size_t size() const { return devices_.size(); }
  [[nodiscard]] bool simulated(std::uint32_t d) const { return d < slot_.size() && slot_[d] > 0; }
  // The slot of a simulated device (an internal error for any other).
  [[nodiscard]] std::uint32_t slot(std::uint32_t d) const;

 private:
  std::vector<std::uint32_t> devices_;
  ZeroArray<std::uint32_t> slot_;
};

// Fills, per device: simulated, flops, model_flops, dynamic_energy_j and the time
// breakdown of every simulated device; and m.comm_bytes (mirrors of symmetry included).
// `pipelined`: waiting with nothing in flight before the last pass is pipeline bubble
// (pp > 1), otherwise idle.
void time_breakdown(const TaskGraph& g, const EngineResult& r, bool pipelined, Metrics& m);

// A piecewise-constant function of time: v[i] holds on [t[i], t[i+1]) and the last value
// until the end of the step.
struct Series {
  std::vector<double> t, v;
  [[nodiscard]] double max() const;
};

struct Delta {
  double t;
  double dv;
};

// Deltas applied in time order (stable for equal times, merged into one point) from `base`
// at time 0.
Series step_series(std::vector<Delta> deltas, double base);

// One series per simulated device, in device order; a device that takes its twin's figures
// has none (the 131,072-GPU frontier run simulates 16 devices).
struct DeviceSeries {
  SimulatedSlots slots;
  std::vector<Series> series;  // by slot
  // The series of a simulated device (an internal error for any other).
  [[nodiscard]] const Series& of(std::uint32_t device) const { return series[slots.slot(device)]; }
};

// Power of each simulated device: idle power plus, while a compute task runs, its dynamic
// energy spread evenly over its duration.
DeviceSeries device_power_series(const TaskGraph& g, const EngineResult& r, const Metrics& m);

// Memory of each simulated device: weights, gradients, optimizer state and buffers held all
// step; activations of a micro-batch (the stage's activation peak / micro-batches in
// flight) allocated over its forward tasks (at their start) and freed over its backward
// tasks (at their end), in proportion to the tasks' model FLOPs.
DeviceSeries device_memory_series(const TaskGraph& g, const EngineResult& r, const Metrics& m,
                                  const std::vector<StageShape>& shapes);

// Device energy totals, network energy per link class, IT/facility energy, per-token
// energy, average/peak power and the sampled IT power curve (`samples` < 0: neither peak
// power nor the curve).
void energy_and_power(const Scenario& sc, const TaskGraph& g, const EngineResult& r, int samples, Metrics& m);

}  // namespace hcsim::report_detail
