#pragma once
// Pipeline schedules as per-stage orders of forward and backward micro-batch passes:
// GPipe (Huang et al. 2019: all forwards, then all backwards), 1F1B / PipeDream-Flush
// (Narayanan et al. 2021: p-s-1 warm-up forwards, then alternate, then drain), and
// interleaved 1F1B with v model chunks per device (Narayanan et al. SC21 §2.2.2), and ZB-H1
// (Qi et al., "Zero Bubble Pipeline Parallelism", ICLR 2024, arXiv 2401.10241, §3.1 and
// Figure 3), which splits each backward into B (input gradients, sent on at once) and W
// (weight gradients, run later on the same device). The engine does not know schedules:
// the order becomes task dependencies.
// Bubble fraction, uniform stages, free communication: (p-1)/(m+p-1) for GPipe and 1F1B,
// (p-1)/(v m + p - 1) for interleaved 1F1B; ZB-H1's bubble is (p-1)(F+B-W) where 1F1B's is
// (p-1)(F+B+W), for pass times F, B, W and m >= p (workloads/analytical.hpp).
// ZB-V (Qi et al., "Pipeline Parallelism with Controllable Memory", NeurIPS 2024, arXiv
// 2405.15362, §4 and its V-ZB schedule; the zero-bubble repository's ZB-V) places two chunks
// per device in a V (Placement::Shape::v_shape) and splits the backward like ZB-H1; with
// chunk pass times F = B = W and m >= 2p - 1 the pipeline takes 6 m F + (p - 1) F: no bubble
// but the forward fill of the first chunk-forward on each later device.

#include <cstdint>
#include <string_view>
#include <vector>

#include "sim/core/registry.hpp"

namespace hcsim {

// Which part of the backward a pass runs: all of it (GPipe, 1F1B, interleaved), or, where
// a schedule splits it (ZB-H1), B (`input`: everything but the weight-gradient GEMMs and
// their accumulation, Item::weight_grad) or W (`weight`: those, and the gradient buckets).
enum class PassPart : std::uint8_t { whole, input, weight };

struct PipeOp {
  bool backward = false;  // B, or the whole backward (part whole); W passes have it false
  int microbatch = 0;
  int chunk = 0;  // model chunk on this device (0..v-1); its virtual stage: Placement::vstage
  PassPart part = PassPart::whole;
  [[nodiscard]] bool weight() const { return part == PassPart::weight; }
  [[nodiscard]] bool forward() const { return !backward && !weight(); }
};

// Where a schedule places the model's p v virtual stages (the path of a micro-batch, the
// embedding in virtual stage 0, the loss in the last) on p devices of v chunks each.
//   looped (GPipe, 1F1B, ZB-H1 with v = 1; interleaved 1F1B, Narayanan et al. SC21 §2.2):
//     chunk c of stage s is virtual stage c p + s;
//   v_shape (ZB-V, v = 2, Qi et al. arXiv 2405.15362 §4): chunk 0 of stage s is virtual stage
//     s and chunk 1 is 2p - 1 - s, so the last device runs virtual stages p - 1 and p back to
//     back (no send between them) and the first device holds both the embedding and the loss.
struct Placement {
  enum class Shape : std::uint8_t { looped, v_shape };
  int p = 1, v = 1;
  Shape shape = Shape::looped;
  [[nodiscard]] int vstages() const { return p * v; }
  [[nodiscard]] int vstage(int stage, int chunk) const {
    return shape == Shape::v_shape && chunk % 2 == 1 ? (chunk + 1) * p - 1 - stage : chunk * p + stage;
  }
  [[nodiscard]] int stage(int vs) const {
    return shape == Shape::v_shape && chunk(vs) % 2 == 1 ? p - 1 - vs % p : vs % p;
  }
  [[nodiscard]] int chunk(int vs) const { return vs / p; }
};

class PipelineSchedule {
 public:
  virtual ~PipelineSchedule() = default;
  [[nodiscard]] virtual std::string_view type() const = 0;
  // Whether the schedule reads strategy.interleave (its v chunks per device).
  [[nodiscard]] virtual bool interleaved() const { return false; }
  // The placement of the virtual stages for p stages and strategy.interleave = `interleave`.
  [[nodiscard]] virtual Placement placement(int p, int interleave) const {
    return {p, interleaved() ? interleave : 1, Placement::Shape::looped};
  }
  // Whether the order's backward passes are split into B and W (PassPart input, weight).
  [[nodiscard]] virtual bool splits_backward() const { return false; }
  // The order of passes on `stage` (0..p-1) for m micro-batches and v chunks.
  [[nodiscard]] virtual std::vector<PipeOp> order(int stage, int p, int m, int v) const = 0;
  // Micro-batches whose activations `stage` keeps at peak, in units of the stage's layers
  // (memory report).
  [[nodiscard]] virtual double in_flight(int stage, int p, int m, int v) const = 0;
};

Registry<PipelineSchedule>& pipeline_schedules();
void register_builtin_schedules();

}  // namespace hcsim
