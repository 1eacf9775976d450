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
// DualPipe (DeepSeek-V3 Technical Report, arXiv 2412.19437, §3.2.1, Table 2) sends half the
// micro-batches from each end through two copies of the model (Placement::Shape::dual) with
// the backward split as ZB-H1's and forward-backward pairs; its bubble (p/2-1)(F&B + B' - 3W).
// ZB-V (Qi et al., "Pipeline Parallelism with Controllable Memory", NeurIPS 2024, arXiv
// 2405.15362, §4 and its V-ZB schedule; the zero-bubble repository's ZB-V) places two chunks
// per device in a V (Placement::Shape::v_shape) and splits the backward like ZB-H1; with
// chunk pass times F = B = W and m >= 2p - 1 the pipeline takes 6 m F + (p - 1) F: no bubble
// but the forward fill of the first chunk-forward on each later device.

#include <cstdint>
#include <memory>
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
  // DualPipe: this forward and the next pass of the order (a whole backward of another
  // micro-batch) run as a pair, each computing beside the other's MoE collectives; both
  // outputs are sent when both are done (lowering_pass.cpp emit_pair, analytical.hpp pair_end).
  bool paired = false;
  [[nodiscard]] bool weight() const { return part == PassPart::weight; }
  [[nodiscard]] bool forward() const { return !backward && !weight(); }
};

// Where a schedule places the model's virtual stages (the path of a micro-batch, the
// embedding in its first virtual stage, the loss in its last) on p devices of v chunks each.
//   looped (GPipe, 1F1B, ZB-H1 with v = 1; interleaved 1F1B, Narayanan et al. SC21 §2.2):
//     chunk c of stage s is virtual stage c p + s;
//   v_shape (ZB-V, v = 2, Qi et al. arXiv 2405.15362 §4): chunk 0 of stage s is virtual stage
//     s and chunk 1 is 2p - 1 - s, so the last device runs virtual stages p - 1 and p back to
//     back (no send between them) and the first device holds both the embedding and the loss;
//   dual (DualPipe, v = 2, DeepSeek-V3 report arXiv 2412.19437 §3.2.1): two paths of p
//     virtual stages, one per direction: virtual stages 0..p-1 (model stages 0..p-1 on stages
//     0..p-1, chunk 0) and p..2p-1 (model stages 0..p-1 on stages p-1..0, chunk 1), so every
//     model stage is held twice: by stage k (chunk 0) and by stage p-1-k (chunk 1).
// A micro-batch runs one path: the schedule's chunk of its passes says which.
struct Placement {
  enum class Shape : std::uint8_t { looped, v_shape, dual };
  int p = 1, v = 1;
  Shape shape = Shape::looped;
  [[nodiscard]] int vstages() const { return p * v; }  // over all paths
  [[nodiscard]] int vstage(int stage, int chunk) const {
    return shape != Shape::looped && chunk % 2 == 1 ? (chunk + 1) * p - 1 - stage : chunk * p + stage;
  }
  [[nodiscard]] int stage(int vs) const {
    return shape != Shape::looped && chunk(vs) % 2 == 1 ? p - 1 - vs % p : vs % p;
  }
  [[nodiscard]] int chunk(int vs) const { return vs / p; }
  // Virtual stages of one path; the first and last of the path of `vs`.
  [[nodiscard]] int path_stages() const { return shape == Shape::dual ? p : p * v; }
  [[nodiscard]] bool first(int vs) const { return vs % path_stages() == 0; }
  [[nodiscard]] bool last(int vs) const { return vs % path_stages() == path_stages() - 1; }
  // The model stage (layers) of `vs`: its place on its path.
  [[nodiscard]] int model_stage(int vs) const { return vs % path_stages(); }
  // Pieces each stage's share of the layers (layers_per_stage) is cut into.
  [[nodiscard]] int layer_chunks() const { return path_stages() / p; }
  // The stage holding the other copy of this stage's parameters (dual: p-1-s), or -1.
  [[nodiscard]] int copy_stage(int stage) const { return shape == Shape::dual ? p - 1 - stage : -1; }
};

// What a schedule needs of the layout (workloads/layout.cpp reports what is not met): pp a
// multiple of `pp_multiple`, and the micro-batches per replica a multiple of
// `batch_multiple` and at least `min_batch_per_stage` * pp.
struct ScheduleNeeds {
  int pp_multiple = 1;
  int batch_multiple = 1;
  int min_batch_per_stage = 0;
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
  [[nodiscard]] virtual ScheduleNeeds needs() const { return {}; }
  // Whether the order's backward passes are split into B and W (PassPart input, weight).
  [[nodiscard]] virtual bool splits_backward() const { return false; }
  // Whether the order pairs passes (PipeOp::paired): the analytical mode then replays the
  // order (pipeline_ends) instead of the closed form.
  [[nodiscard]] virtual bool pairs() const { return false; }
  // The order of passes on `stage` (0..p-1) for m micro-batches and v chunks.
  [[nodiscard]] virtual std::vector<PipeOp> order(int stage, int p, int m, int v) const = 0;
  // Micro-batches whose activations `stage` keeps at peak, in units of the stage's layers
  // (memory report).
  [[nodiscard]] virtual double in_flight(int stage, int p, int m, int v) const = 0;
};

Registry<PipelineSchedule>& pipeline_schedules();
void register_builtin_schedules();

// Megatron-Core's MoE all-to-all overlap (overlap_moe_expert_parallel_comm;
// megatron/core/pipeline_parallel/combined_1f1b.py and schedules.py): `base`'s order
// (1F1B, or interleaved 1F1B) with one more warm-up forward, so that each forward of the
// steady state runs as a pair (PipeOp::paired, as DualPipe's) with the backward of an
// earlier micro-batch that 1F1B would have run before it: F F ... F, F*B, F*B, ..., B B.
// Every backward moves after the next forward; the passes of a pair are independent (the
// backward's micro-batch went forward earlier). Without pipelining (p = 1) this is
// Megatron-Core's combined_1f1b_schedule_for_no_pipelining: F0, F1*B0, ..., F(m-1)*B(m-2),
// B(m-1). The stage keeps one micro-batch more at peak (the extra forward).
std::unique_ptr<PipelineSchedule> with_a2a_overlap(std::unique_ptr<PipelineSchedule> base);
// The schedule `name` of the registry, with_a2a_overlap when `a2a_overlap`; `path` names it
// in the error for an unknown name.
std::unique_ptr<PipelineSchedule> make_schedule(std::string_view name, bool a2a_overlap, std::string_view path);

}  // namespace hcsim
