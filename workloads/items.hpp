#pragma once
// The cost items of one model chunk on one device: compute items (one per kernel, costed
// by the device model), tensor-parallel collective items and gradient-bucket markers, for
// the forward and the backward pass of one micro-batch. The lowering folds them into tasks;
// the analytical mode sums them in closed form.

#include <array>
#include <cstdint>
#include <vector>

#include "workloads/lowering.hpp"

namespace hcsim {

struct Item {
  // cp_ring: an attention pass under context parallelism, its compute (t, flops, ...) split
  // into cp blocks overlapped with cp - 1 ring steps that each pass comm_bytes to the next
  // context-parallel rank (ring attention, Liu et al. ICLR 2024).
  // unit: ZeRO-3 / FSDP, the items up to the next unit marker (or the pass's end) use the
  // parameters of one unit (workloads/plan_sharding.cpp): comm_bytes of them all-gathered
  // before, grad_bytes of gradients reduce-scattered after its backward.
  // ep_comm: an MoE token dispatch or combine, an all-to-all (op) of comm_bytes per rank over
  // the expert-parallel group, or with expert tensor parallelism the all-gather or
  // reduce-scatter (op) of the dispatched tokens over the expert tensor group, comm_bytes
  // gathered (workloads/layout.hpp).
  enum class Kind : std::uint8_t { compute, tp_comm, bucket, cp_ring, unit, ep_comm } kind = Kind::compute;
  Phase phase = Phase::forward;
  Seconds t{};  // compute
  Flops flops{}, model_flops{};
  Bytes bytes{};
  Joules energy{};
  CollectiveOp op = CollectiveOp::all_reduce;  // tp_comm
  Bytes comm_bytes{};                          // tp_comm payload; cp_ring: per step; unit: gathered
  // tp_comm: runs beside the next item (a compute item), and the item after that waits
  // for both (StrategySpec::tp_overlap).
  bool overlap_next = false;
  Bytes grad_bytes{};                          // bucket: gradients now ready; unit: its gradients
  Bytes expert_grad_bytes{};                   // bucket: routed experts' gradients now ready
  std::uint32_t label = 0xFFFFFFFFu;           // task label; default: by phase
  // compute, cp_ring: the model op it runs (transformer_ops.cpp's name; null for the
  // gradient accumulation, codec and optimizer kernels) and its transformer layer within
  // the chunk (-1: the embedding or the head). The lowering names each task by them.
  const char* op_name = nullptr;
  std::int16_t layer = -1;
  // compute: a weight-gradient GEMM (dW = X^T dY), the embedding's backward (its weight
  // gradient alone) or the separate accumulation of weight gradients: the W pass of a
  // schedule that splits the backward (PassPart::weight).
  bool weight_grad = false;
};

struct ChunkItems {
  std::vector<Item> fwd, bwd;
  // A schedule that splits the backward (ZB-H1): bwd as B (bwd_input) and W (bwd_weight),
  // split_backward's; empty otherwise.
  std::vector<Item> bwd_input, bwd_weight;
  Bytes grad_bytes{};          // gradient bytes of the chunk on one device (routed experts' apart)
  Bytes expert_grad_bytes{};   // of the routed experts (MoE)
  std::vector<Bytes> markers;  // the bucket markers' gradient bytes, in backward order
  // MoE: the routed experts' gradient bytes of each marker (reduced over the expert replica
  // group, workloads/layout.hpp); empty for a dense model.
  std::vector<Bytes> expert_markers;
  int first_layer = 0;         // the model's index of the chunk's first transformer layer
};

// The backward `bwd` split into B (`input`: every item but the weight-gradient compute items
// and the bucket markers) and W (`weight`: those, in order, so each bucket marker follows
// the weight gradients it covers). A tensor-parallel collective that ran beside a weight-
// gradient GEMM (Item::overlap_next) has no compute item beside it in B: it runs exposed.
void split_backward(const std::vector<Item>& bwd, std::vector<Item>& input, std::vector<Item>& weight);

// Items of a chunk of `layers` transformer layers from the model's layer `first_layer` (plus
// the embedding on the first virtual stage and the head on the last) on device `dev`.
ChunkItems build_chunk_items(const LoweringInput& in, const ComputeDevice& dev, int layers, bool embedding, bool head,
                             int first_layer = 0);

// The sums the analytical mode needs from a chunk's items, per pass: compute time, FLOPs,
// model FLOPs and dynamic energy of the compute items, and how many tensor-parallel
// collectives of each op (all of `comm_bytes`). Equal to summing build_chunk_items' lists
// (up to rounding: one layer's items are summed once and multiplied by the layer count).
// Context-parallel attention rings of one pass with equal compute time t (all blocks) and
// step bytes: count of them.
struct CpRing {
  Seconds t{};
  Bytes bytes{};
  int count = 0;
};
// Tensor-parallel collectives of one op run beside a compute item of time t: count of them
// (each exposed for max(0, collective - t)).
struct HiddenComm {
  CollectiveOp op = CollectiveOp::all_reduce;
  Seconds t{};
  int count = 0;
};

// ZeRO-3 / FSDP: one unit of a pass (Item::Kind::unit up to the next): its compute time and
// tensor-parallel collectives, the bytes it gathers and the gradients it reduces.
struct UnitTotals {
  Seconds t{};
  std::array<int, 7> comm{};
  std::vector<HiddenComm> hidden;
  Bytes gather{}, grads{};
};
// MoE collectives of one pass: count of them of `bytes`, all-to-alls over the expert group
// or (etp > 1) all-gathers and reduce-scatters over the expert tensor group.
struct EpComm {
  Bytes bytes{};
  int count = 0;
  CollectiveOp op = CollectiveOp::all_to_all;
};
// MoE: a pass cut at its dispatch and combine collectives (Item::Kind::ep_comm), in pass
// order: the compute and tensor-parallel collectives before collective k (work; its gather
// and grads unused), then the collective (ep, count 1); the last piece's ep has count 0
// (the pass's end). Pairs (DualPipe's, the all-to-all overlap's) overlap one pass's pieces
// with the other's collectives (lowering_pass.cpp, emit_pair; analytical.hpp, PassTimes).
struct EpSegment {
  UnitTotals work;
  EpComm ep{Bytes{}, 0, CollectiveOp::all_to_all};
};
struct PassTotals {
  Seconds t{};  // compute, cp_ring compute included
  Flops flops{}, model_flops{};
  Joules energy{};
  std::array<int, 7> comm{};  // count per CollectiveOp of the collectives not hidden
  std::vector<HiddenComm> hidden;
  std::vector<CpRing> cp;     // context-parallel rings (none when cp = 1)
  std::vector<UnitTotals> units;  // in pass order (none without ZeRO-3 / FSDP)
  std::vector<EpComm> ep;         // MoE dispatch and combine (none for a dense model or ep = etp = 1)
  // The pass cut at them (EpSegment): by chunk_totals only for a chunk with MoE layers whose
  // passes have such collectives; empty otherwise.
  std::vector<EpSegment> segments;
};
struct ChunkTotals {
  PassTotals fwd, bwd;
  PassTotals bwd_input, bwd_weight;  // bwd as split_backward splits it (B and W)
  Bytes comm_bytes{};  // payload of every tensor-parallel collective
  Bytes grad_bytes{}, expert_grad_bytes{};
  std::vector<Bytes> markers;  // as ChunkItems::markers
  std::vector<Bytes> expert_markers;
  // Per marker (as markers), the compute time of the backward pass after it: when, before
  // the pass ends, the bucket it closes is issued (the analytical mode's bucket stream).
  std::vector<Seconds> marker_after;
  // Per marker (as markers), the forward compute time of its block (the layer, the
  // embedding or the head whose gradients it closes); ZeRO-1/2 with overlap_param_gather
  // only (empty otherwise).
  std::vector<Seconds> marker_forward;
};
ChunkTotals chunk_totals(const LoweringInput& in, const ComputeDevice& dev, int layers, bool embedding, bool head,
                         int first_layer = 0);

// The optimizer step of one device, as Megatron-LM's mixed-precision optimizer runs it
// (megatron/optimizer/optimizer.py, MixedPrecisionOptimizer.step), over the `shard`
// parameters it updates (all of them without ZeRO): the model-datatype gradients cast to
// fp32 main gradients (e + 4 B per parameter; none when they accumulate in fp32), under fp16
// the unscale and inf check (4 + 4), the gradient norm for clipping (read 4), Adam (read the
// fp32 weight, gradient, momentum and variance, write three: 28) and the copy of the updated
// fp32 weights to the model's (4 + e); and the gradient buffer of all `params` zeroed for the
// next step (grad_e). One kernel launch per pass. Not modelled: the clipping scale itself,
// which runs only when the norm exceeds the threshold, and the scalar all-reduces of the
// norm and the inf flag.
Kernel optimizer_kernel(double shard, double params, DType precision, double grad_e);

// Chunk c of a stage holds stage_layers / v layers, the first remainder chunks one more.
int chunk_layers(int stage_layers, int v, int c);
// The layers of virtual stage `vs` (placed by `placement`): chunk c of its stage's share,
// cut into placement.layer_chunks() pieces (chunk_layers), or with two copies (DualPipe) its
// model stage's share whole.
int vstage_layers(const std::vector<int>& layers_per_stage, const Placement& placement, int vs);
// The model's index of the first layer of virtual stage `vs`: the layers of the virtual
// stages before it on its path.
int first_chunk_layer(const std::vector<int>& layers_per_stage, const Placement& placement, int vs);

}  // namespace hcsim
