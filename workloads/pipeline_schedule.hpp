#pragma once
// Pipeline schedules as per-stage orders of forward and backward micro-batch passes:
// GPipe (Huang et al. 2019: all forwards, then all backwards), 1F1B / PipeDream-Flush
// (Narayanan et al. 2021: p-s-1 warm-up forwards, then alternate, then drain), and
// interleaved 1F1B with v model chunks per device (Narayanan et al. SC21 §2.2.2). The
// engine does not know schedules: the order becomes task dependencies.
// Bubble fraction, uniform stages, free communication: (p-1)/(m+p-1) for GPipe and 1F1B,
// (p-1)/(v m + p - 1) for interleaved 1F1B.

#include <string_view>
#include <vector>

#include "sim/core/registry.hpp"

namespace hcsim {

struct PipeOp {
  bool backward = false;
  int microbatch = 0;
  int chunk = 0;  // model chunk on this device (0..v-1); virtual stage = chunk * p + stage
};

class PipelineSchedule {
 public:
  virtual ~PipelineSchedule() = default;
  [[nodiscard]] virtual std::string_view type() const = 0;
  [[nodiscard]] virtual bool interleaved() const { return false; }
  // The order of passes on `stage` (0..p-1) for m micro-batches and v chunks.
  [[nodiscard]] virtual std::vector<PipeOp> order(int stage, int p, int m, int v) const = 0;
  // Micro-batches whose activations stage 0 keeps at peak (memory report).
  [[nodiscard]] virtual double in_flight(int stage, int p, int m, int v) const = 0;
};

Registry<PipelineSchedule>& pipeline_schedules();
void register_builtin_schedules();

}  // namespace hcsim
