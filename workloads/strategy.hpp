#pragma once
// A parallel training strategy as the scenario states it (Narayanan et al. SC21 notation):
// data (dp), tensor (tp), pipeline (pp) and context (cp) parallel degrees, the pipeline schedule with v
// interleaved chunks, sequence parallelism and activation recomputation (Korthikanti et
// al. 2022), ZeRO stage (Rajbhandari et al. SC20), and where each pipeline stage runs.

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "models/compression/codec.hpp"
#include "models/kernel.hpp"
#include "sim/core/units.hpp"

#include "workloads/layout.hpp"

namespace hcsim {

// op: selective recomputation by op, PyTorch's selective activation checkpointing with
// torchtitan's "op" policy (transformer_ops.cpp, select_by_op).
enum class Recompute : std::uint8_t { none, selective, full, op };
std::string_view recompute_name(Recompute r);
// The inverse of recompute_name; none for a name that is not one.
std::optional<Recompute> recompute_named(std::string_view name);

// Where the optimizer state (fp32 master weights, Adam m and v: 12 B per parameter) lives.
// "pool": in the topology's memory nodes (a CXL pool; host DRAM where the memory node sits
// behind PCIe), streamed to the device for the update and back (ZeRO-Infinity,
// Rajbhandari et al. SC21 §5); see workloads/offload.hpp.
enum class Offload : std::uint8_t { none, pool };

// Tensor-parallel collectives hidden behind GEMMs. none: every collective waits for its
// GEMM and the next kernel for it (Megatron-LM 2021). backward: Megatron-Core's
// asynchronous communication in the backward pass of a column-parallel linear layer
// (LinearWithGradAccumulationAndAsyncCommunication; Korthikanti et al. 2022 section 4.2.2):
// the input gradient's all-reduce (reduce-scatter under sequence parallelism) runs beside
// the weight-gradient GEMM, and under sequence parallelism the all-gather of the saved input
// runs beside the input-gradient GEMM. full: as backward, and under sequence parallelism
// Transformer Engine's userbuffers overlap (Megatron-Bridge's tp_comm_overlap): each forward
// all-gather runs beside the column-parallel GEMM it feeds, each forward reduce-scatter
// beside the row-parallel GEMM it reduces, and the backward all-gather of a row-parallel
// GEMM's output gradient beside its input-gradient GEMM (the GEMMs split into tp chunks
// pipelined with the ring's steps). Without sequence parallelism, full is backward.
// micro_pipeline: as full, as PyTorch's micro-pipelined TP runs it (torch.compile's
// micro_pipeline_tp pass and the symm_mem fused ops, torch/distributed/_symmetric_memory):
// a fused matmul-reduce-scatter gathers the tp partial outputs into one buffer and sums them
// in a kernel of its own, reading tp b s h / tp and writing b s h / tp elements, where NCCL
// and the userbuffers reduce in flight. The pass fuses a reduce-scatter only when a
// matmul's output is its input (_find_producer_matmul): the forward's row-parallel outputs.
enum class TpOverlap : std::uint8_t { none, backward, full, micro_pipeline };

// The datatype gradients accumulate and are reduced in. fp32: a main-gradient buffer of 4 B
// per parameter, reduced in fp32 (Megatron-LM forces it for bf16, arguments.py
// "accumulate and all-reduce gradients in fp32 for bfloat16 data type"; Megatron-Core's
// DDP grad_reduce_in_fp32, which NVIDIA's Megatron-Bridge bf16 and fp8 recipes set). model:
// gradients in the model's datatype, cast to fp32 by the optimizer step (Megatron-LM 2021
// with fp16; PyTorch FSDP2's default reduce_dtype, the parameter datatype; DeepSpeed's ZeRO
// defaults, engine.py get_data_types and communication_data_type). automatic: fp32 for bf16
// and fp8 with ZeRO 0 or 1 (Megatron), the model's datatype otherwise (ZeRO-2: DeepSpeed's;
// ZeRO-3 / FSDP).
enum class MainGrads : std::uint8_t { automatic, fp32, model };

// How the gradients of successive micro-batches add up. fused: the weight-gradient GEMM
// accumulates into the gradient buffer (Megatron-Core's gradient_accumulation_fusion, the
// default of NVIDIA's Megatron-Bridge recipes): no kernel of its own. separate: one add
// kernel per parameter tensor after its backward, every micro-batch, reading the new
// gradient and reading and writing the accumulator (Megatron-LM 2021's DDP hook
// main_grad.add_(grad), PyTorch autograd's AccumulateGrad).
enum class GradAccumulation : std::uint8_t { fused, separate };

// How ZeRO-3 / FSDP shards, gathers and reduces the parameters (workloads/plan_sharding.cpp;
// the presets and their sources: scenarios/sections.cpp). A unit is what one all-gather
// brings: a transformer layer (FSDP's per-layer wrap; the embedding and the LM head are
// units of their own) or, for DeepSpeed ZeRO-3, one weight matrix (a submodule), grouped
// with the next ones of its layer up to `prefetch_bucket` elements.
enum class ShardUnit : std::uint8_t { layer, submodule };

struct ShardingSpec {
  ShardUnit unit = ShardUnit::layer;
  int prefetch_forward = 1;   // units whose gathers run ahead of the forward compute
  int prefetch_backward = 1;  // likewise in backward
  bool reshard_after_forward = true;  // false: kept gathered from forward to backward
  int shard_group = 0;        // ranks that shard a copy (hybrid sharding); 0: the whole replica group
  double prefetch_bucket = 5e7;       // submodule units: elements gathered together
  double max_live_parameters = 0;     // elements gathered at once; 0: no bound
  double persistence_threshold = 0;   // tensors below this many elements stay unsharded
  // Gradient reductions on streams of their own (a reduce-scatter stream and, hybrid, an
  // all-reduce stream) beside the all-gathers' stream, the backward's end waiting for them;
  // false: one communication stream for all.
  bool reduce_stream = true;
  // The transformer layers' weights gathered as FP8 for the FP8 GEMMs that use them, one
  // byte per element (torchao's enable_fsdp_float8_all_gather); the embedding and the LM
  // head, which stay in the model's datatype, are gathered in it. Needs fp8 precision.
  bool fp8_all_gather = false;
};

struct StrategySpec {
  int dp = 1, tp = 1, pp = 1;
  // Context parallelism (Megatron-Core CP, ring attention of Liu et al. ICLR 2024): each of
  // cp ranks holds s/cp tokens of every sequence and the same weights. Devices are numbered
  // tp fastest, then cp, then dp, then pp (lowering.hpp).
  int cp = 1;
  // Ranks that hold the same weights and reduce gradients together (ZeRO shards over them).
  [[nodiscard]] int grad_ranks() const { return dp * cp; }
  // Expert parallelism (MoE models): the routed experts of each MoE layer are spread over
  // groups of ep devices of a stage (workloads/layout.hpp), tokens dispatched to them and
  // combined back by all-to-all; expert gradients are reduced over the stage's devices
  // that hold the same experts.
  int ep = 1;
  // Expert tensor parallelism (Megatron-Core's expert_tensor_parallel_size): each routed
  // expert's MLP split over etp devices (first GEMM by columns, second by rows), the
  // dispatched tokens all-gathered over them before the experts and reduce-scattered after
  // (workloads/layout.hpp).
  int etp = 1;
  [[nodiscard]] Layout layout() const { return {dp, tp, pp, cp, ep, etp}; }
  std::string schedule = "1f1b";  // pipeline schedule registry key
  int interleave = 1;             // v: model chunks per device (interleaved-1f1b)
  bool sequence_parallel = false;
  Recompute recompute = Recompute::none;
  int zero = 0;                   // 0..3
  ShardingSpec sharding;          // ZeRO-3 / FSDP (zero = 3)
  Offload offload = Offload::none;  // optimizer state placement
  bool flash_attention = true;
  bool attention_flash2 = false;  // attention_kernel "flash2": FlashAttention-2's kernels (GpuSpec::flash2_rate)
  TpOverlap tp_overlap = TpOverlap::backward;
  MainGrads main_grads = MainGrads::automatic;
  GradAccumulation grad_accumulation = GradAccumulation::fused;
  bool cross_entropy_fusion = false;  // the LM loss as one fused kernel (transformer_ops.cpp)
  // Megatron / Transformer Engine's fused norm, rotary, activation and residual kernels;
  // false: PyTorch eager mode's (Hugging Face-style Llama modules), one kernel per tensor op.
  bool fused_kernels = true;
  // A pipeline stage frees each chunk's output once sent, keeping only its autograd graph
  // (Megatron-LM's deallocate_output_tensor, January 2022; Megatron-Core's
  // deallocate_pipeline_outputs). false: the output stays until the chunk's backward.
  bool deallocate_pipeline_outputs = true;
  // Pipeline sends that block the sender's compute stream until they complete (Megatron-LM
  // before Megatron-Core: batch_isend_irecv then torch.cuda.synchronize() in
  // p2p_communication.py; DeepSpeed's pipeline engine). false: on their own stream
  // (Megatron-Core's p2p, overlap_p2p_comm for the interleaved schedule).
  bool blocking_p2p = false;
  bool scatter_gather = true;     // pipeline p2p sends b s h / t per TP rank (SC21 §4.1)
  bool overlap_dp = true;         // bucketed gradient collectives overlap the last backward
  // ZeRO-1/2: the updated parameters all-gathered bucket by bucket ahead of the next step's
  // first micro-batch forward, each bucket's layers waiting for their bucket (Megatron-Core's
  // distributed optimizer, overlap_param_gather); false: all of them after the optimizer.
  bool overlap_param_gather = false;
  // With overlap_param_gather: every bucket of model chunks 0 and 1 issued when the step
  // starts and chunk c + 1's when chunk c's first forward starts (align_param_gather); false:
  // a bucket's gather issued when the forward reaches it, the next one's then (prefetch 1).
  bool align_param_gather = false;
  Bytes dp_bucket{25e6};          // gradient bucket (PyTorch DDP default 25 MB)
  std::vector<int> layers_per_stage;  // empty: balanced automatically
  // Compression (models/compression): of data-parallel gradients and of pipeline
  // activations and their gradients; null for none. Owned by the scenario.
  const Codec* dp_codec = nullptr;
  OnIncompatible dp_on_incompatible = OnIncompatible::error;
  const Codec* pp_codec = nullptr;
  std::int64_t step = 1'000'000'000;  // training step costed (warm-up phases of codecs)
  std::int64_t average_steps = 0;     // > 0: also the mean over steps 0..K-1
  // MoE dispatch and combine: all-to-alls over the expert group (false), or DeepEP's (each
  // token sent once per destination node on its rail, then forwarded on NVLink;
  // sim/collectives/deepep.hpp).
  bool deepep_dispatch = false;
  // The tokens dispatched to the experts in FP8 with one fp32 scale per 128 values, and the
  // gradient that comes back to the experts' outputs likewise; the combine and the gradient
  // of the dispatch stay in the activations' precision (DeepSeek-V3 report §3.3.2).
  bool fp8_dispatch = false;
  // MoE: one micro-batch's dispatch and combine run beside another's computation
  // (Megatron-Core overlap_moe_expert_parallel_comm, the "combined 1F1B"): the schedule's
  // steady state pairs each forward with the backward of an earlier micro-batch
  // (workloads/pipeline_schedule.hpp, with_a2a_overlap).
  bool moe_a2a_overlap = false;
  // FP8 scaling recipe (workloads/transformer_ops.cpp). false: current scaling, each GEMM
  // input's amax taken by its own pass before the cast (Transformer Engine's
  // Float8CurrentScaling, torchao's tensorwise dynamic scaling). true: delayed scaling, the
  // scale taken from earlier steps' amax history so the cast is one pass, written by the
  // norm itself where the norm feeds the GEMM (Transformer Engine's DelayedScaling, its
  // only recipe before 2.x, with LayerNormLinear).
  bool fp8_delayed = false;
};

// SM contention (simulation.sm_contention, docs/models.md "SM contention"): the SMs a
// tensor- or sequence-parallel collective holds when the overlap runs it with kernels of its
// own (under sequence parallelism): full, Transformer Engine's userbuffers, 8, about the mean
// of the SMs Megatron-Bridge's recipes give their bulk overlaps (1 to 24,
// src/megatron/bridge/training/comm_overlap.py); micro_pipeline, PyTorch's symmetric-memory
// ops, 0: the copy engines move the chunks. None: NCCL's channels (CollectiveReplay::channels).
std::optional<int> tp_overlap_sms(const StrategySpec& st);

// Bytes of one gradient element as accumulated and reduced (MainGrads).
double grad_element_bytes(const StrategySpec& st, DType precision);

struct WorkloadSpec {
  std::int64_t global_batch = 1;  // sequences per step
  std::int64_t micro_batch = 1;   // sequences per micro-batch
  DType precision = DType::bf16;
  std::string optimizer = "adam";
  double train_tokens = 300e9;    // whole training run, for time-to-train
  [[nodiscard]] std::int64_t micro_batches(int dp) const { return global_batch / (micro_batch * dp); }
};

}  // namespace hcsim
