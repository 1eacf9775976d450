#include "sections.hpp"

#include "sim/collectives/algorithms.hpp"
#include "workloads/pipeline_schedule.hpp"

namespace hcsim::sections {

const ParamTable& top() {
  static const ParamTable t{
      {.name = "$schema", .kind = ParamKind::string, .def = nullptr,
       .help = "informational, not checked: the JSON Schema an editor validates the file with (hcsim schema)"},
      {.name = "name", .kind = ParamKind::string, .def = "", .help = "scenario name (default: file name)"},
      {.name = "description", .kind = ParamKind::string, .def = "", .help = "free text"},
      {.name = "hcsim_version", .kind = ParamKind::string, .def = nullptr,
       .help = "informational, not checked: the hcsim version that wrote a resolved scenario (run --out)"},
      {.name = "cluster", .kind = ParamKind::object, .help = "device pools and topology"},
      {.name = "workload", .kind = ParamKind::object, .help = "model, batch and precision"},
      {.name = "strategy", .kind = ParamKind::object, .help = "parallel layout and schedule"},
      {.name = "simulation", .kind = ParamKind::object, .def = nlohmann::json::object(), .help = "engine settings"},
      {.name = "outputs", .kind = ParamKind::object, .def = nlohmann::json::object(), .help = "report settings"},
  };
  return t;
}

const ParamTable& cluster() {
  static const ParamTable t{
      {.name = "pools", .kind = ParamKind::array, .help = "device pools, in device-index order"},
      {.name = "topology", .kind = ParamKind::object, .help = "{\"type\": ...} and the topology's parameters"},
      {.name = "pue", .kind = ParamKind::number, .def = 1.0, .min = 1.0, .max = 10.0,
       .help = "power usage effectiveness: facility energy / IT energy"},
      {.name = "node_power", .kind = ParamKind::object, .def = nullptr,
       .help = "power of each server beside its accelerators (host CPUs, DRAM, NICs, switches, fans): "
               "{\"preset\": \"dgx-h100\"} or {\"idle\", \"max\", \"devices_per_node\"}; absent: not counted"},
  };
  return t;
}

const ParamTable& pool() {
  static const ParamTable t{
      {.name = "name", .kind = ParamKind::string, .def = nullptr, .help = "pool name (default pool<i>)"},
      {.name = "type",
       .kind = ParamKind::string,
       .def = nullptr,
       .help = "compute-device type (implied by the preset)"},
      {.name = "preset", .kind = ParamKind::string, .def = nullptr, .help = "device preset, see `hcsim list devices`"},
      {.name = "overrides",
       .kind = ParamKind::object,
       .def = nlohmann::json::object(),
       .help = "parameter values over the preset (without a preset: every required parameter)"},
      {.name = "count", .kind = ParamKind::integer, .min = 1, .max = kMaxDevices, .help = "devices in the pool"},
      {.name = "attach_to",
       .kind = ParamKind::string,
       .def = nullptr,
       .help = "processing-in-memory pool: name of the pool whose devices carry these stacks in their memory "
               "(count a multiple of that pool's); memory-bound kernels then run on the stacks"},
  };
  return t;
}

const ParamTable& model_ref() {
  static const ParamTable t{
      {.name = "type", .kind = ParamKind::string, .def = nullptr, .help = "model family: gpt, llama, bert"},
      {.name = "preset", .kind = ParamKind::string, .def = nullptr, .help = "model preset, see `hcsim list models`"},
      {.name = "overrides", .kind = ParamKind::object, .def = nlohmann::json::object(),
       .help = "dimensions over the preset (without a preset: every required dimension)"},
  };
  return t;
}

const ParamTable& workload() {
  static const ParamTable t{
      {.name = "model", .kind = ParamKind::object, .help = "{\"preset\": ...} or {\"type\": ..., \"overrides\": {...}}"},
      {.name = "global_batch", .kind = ParamKind::integer, .min = 1, .max = 1e9, .help = "sequences per step"},
      {.name = "micro_batch", .kind = ParamKind::integer, .def = 1, .min = 1, .max = 1e6,
       .help = "sequences per micro-batch"},
      {.name = "precision", .kind = ParamKind::choice, .def = "bf16", .choices = {"fp32", "tf32", "bf16", "fp16", "fp8"},
       .help = "datatype of weights, activations and GEMMs (mixed precision: fp32 master weights)"},
      {.name = "optimizer", .kind = ParamKind::choice, .def = "adam", .choices = {"adam"},
       .help = "optimizer (mixed-precision Adam: 12 bytes of state per parameter)"},
      {.name = "step", .kind = ParamKind::integer, .def = nullptr, .min = 0, .max = 1e15,
       .help = "training step to cost, for codecs with warm-up phases (default: steady state)"},
      {.name = "train_tokens", .kind = ParamKind::number, .def = 300e9, .min = 1, .max = 1e18,
       .help = "tokens of the whole training run, for the time- and energy-to-train figures (GPT-3: 300e9)"},
      {.name = "average_steps", .kind = ParamKind::integer, .def = nullptr, .min = 1, .max = 1e9,
       .help = "also report the mean over training steps 0..K-1 (codec warm-up, local steps, torus ocs_phases)"},
  };
  return t;
}

const ParamTable& strategy() {
  static const ParamTable t{
      {.name = "dp", .kind = ParamKind::integer, .def = 1, .min = 1, .max = 1'000'000, .help = "data-parallel degree"},
      {.name = "tp", .kind = ParamKind::integer, .def = 1, .min = 1, .max = 1024, .help = "tensor-parallel degree"},
      {.name = "pp", .kind = ParamKind::integer, .def = 1, .min = 1, .max = 4096, .help = "pipeline stages"},
      {.name = "cp", .kind = ParamKind::integer, .def = 1, .min = 1, .max = 4096,
       .help = "context-parallel degree: each rank holds s/cp tokens, attention as a K/V ring (causal: s a multiple "
               "of 2*cp, load-balanced chunks)"},
      {.name = "ep", .kind = ParamKind::integer, .def = 1, .min = 1, .max = 65536,
       .help = "expert-parallel degree (MoE models): each MoE layer's routed experts spread over groups of ep devices "
               "of a stage, tokens exchanged by all-to-all; divides the experts and dp*cp*tp"},
      {.name = "etp", .kind = ParamKind::integer, .def = 1, .min = 1, .max = 1024,
       .help = "expert tensor-parallel degree (MoE models): each routed expert's MLP split over etp devices "
               "(column then row parallel), the dispatched tokens all-gathered over them; divides the experts' MLP, "
               "ep*etp divides dp*cp*tp"},
      {.name = "schedule", .kind = ParamKind::choice, .def = "1f1b",
       .choices = [] {
         register_builtin_schedules();
         return pipeline_schedules().names();
       }(),
       .help = "pipeline schedule"},
      {.name = "interleave", .kind = ParamKind::integer, .def = 1, .min = 1, .max = 64,
       .help = "model chunks per device v (interleaved-1f1b)"},
      {.name = "sequence_parallel", .kind = ParamKind::boolean, .def = false,
       .help = "Megatron sequence parallelism (all-gather/reduce-scatter instead of all-reduce)"},
      {.name = "recompute", .kind = ParamKind::choice, .def = "none",
       .choices = {"none", "selective", "full", "selective-op"},
       .help = "activation recomputation: selective (Megatron: the core attention), full (each layer's forward), "
               "selective-op (PyTorch's per-op selective checkpointing, torchtitan's op policy: every second "
               "matmul and the elementwise ops rerun; dense layers only)"},
      {.name = "zero", .kind = ParamKind::integer, .def = 0, .min = 0, .max = 3,
       .help = "ZeRO stage: 1 shards the optimizer state, 2 also the gradients (reduced every micro-batch), 3 also "
               "the parameters"},
      {.name = "offload", .kind = ParamKind::choice, .def = "none", .choices = {"none", "pool"},
       .help = "optimizer state (fp32 master weights, Adam m and v: 12 B/parameter) on the device, or in the "
               "topology's memory nodes (a CXL pool; host DRAM behind PCIe), streamed in and back at each step"},
      {.name = "flash_attention", .kind = ParamKind::boolean, .def = true, .help = "fused attention kernel"},
      {.name = "attention_kernel", .kind = ParamKind::choice, .def = "native", .choices = {"native", "flash2"},
       .help = "the fused attention's library: native (the device's own: cuDNN / FlashAttention-3 on Hopper, "
               "FlashAttention-2 on Ampere) or flash2 (FlashAttention-2's kernels on any GPU, at the device's "
               "flash2_rate: PyTorch SDPA's flash backend, the flash_attn package before FlashAttention-3)"},
      {.name = "tp_comm_overlap", .kind = ParamKind::choice, .def = "backward",
       .choices = {"none", "backward", "full", "micro-pipeline"},
       .help = "tensor-parallel collectives hidden behind GEMMs: none (every collective waits, Megatron-LM "
               "2021), backward (Megatron-Core: a column-parallel layer's input-gradient all-reduce or "
               "reduce-scatter beside its weight-gradient GEMM; under sequence parallelism the input's "
               "all-gather beside the input-gradient GEMM), full (as backward, and under sequence parallelism "
               "Transformer Engine's userbuffers: forward all-gathers and reduce-scatters beside their GEMMs, the "
               "backward output-gradient all-gather beside its input-gradient GEMM), micro-pipeline (as full, as "
               "PyTorch's async TP runs it: each forward fused matmul-reduce-scatter sums the tp partial outputs "
               "in a kernel of its own)"},
      {.name = "main_grads", .kind = ParamKind::choice, .def = "auto", .choices = {"auto", "fp32", "model"},
       .help = "datatype gradients accumulate and are reduced in: fp32 (a 4 B/parameter main-gradient buffer, "
               "Megatron's rule for bf16), model (the model's datatype: Megatron-LM with fp16, PyTorch FSDP2's "
               "default; DeepSpeed ZeRO's), auto (fp32 for bf16 and fp8 with ZeRO 0 or 1, model otherwise)"},
      {.name = "grad_accumulation", .kind = ParamKind::choice, .def = "fused", .choices = {"fused", "separate"},
       .help = "micro-batch gradient accumulation: fused into the weight-gradient GEMM (Megatron-Core "
               "gradient_accumulation_fusion) or one add kernel per parameter tensor every micro-batch "
               "(Megatron-LM 2021 DDP hooks, PyTorch AccumulateGrad)"},
      {.name = "cross_entropy_fusion", .kind = ParamKind::boolean, .def = false,
       .help = "the LM loss as Transformer Engine's fused cross entropy (Megatron-Core cross_entropy_loss_fusion) "
               "instead of Megatron's six-kernel fp32 vocab-parallel cross entropy"},
      {.name = "fused_kernels", .kind = ParamKind::boolean, .def = true,
       .help = "norms, rotary embedding, SwiGLU and residual adds as Megatron/Transformer Engine's fused kernels; "
               "false: PyTorch eager mode's (RMSNorm in fp32 in seven kernels, rotate-half RoPE, separate SiLU and "
               "product), as Hugging Face-style Llama code runs without torch.compile"},
      {.name = "deallocate_pipeline_outputs", .kind = ParamKind::boolean, .def = true,
       .help = "a pipeline stage frees each chunk's output once sent (Megatron-LM since 2022, Megatron-Core); "
               "false: kept until its backward, one b*s*h tensor per micro-batch in flight"},
      {.name = "blocking_p2p", .kind = ParamKind::boolean, .def = false,
       .help = "pipeline sends block the sender's compute until they complete (Megatron-LM before "
               "Megatron-Core: batch_isend_irecv then a device synchronisation); false: on their own stream"},
      {.name = "scatter_gather", .kind = ParamKind::boolean, .def = true,
       .help = "pipeline sends b*s*h/tp per tensor-parallel rank (Megatron scatter/gather)"},
      {.name = "overlap_dp", .kind = ParamKind::boolean, .def = true,
       .help = "gradient buckets reduced while the last backward runs (ZeRO-2: every backward)"},
      {.name = "dp_bucket", .kind = ParamKind::quantity, .dim = Dim::data, .def = "25 MB", .min = 1,
       .help = "gradient bucket size"},
      {.name = "overlap_param_gather", .kind = ParamKind::boolean, .def = false,
       .help = "ZeRO-1/2: the updated parameters all-gathered bucket by bucket before the first micro-batch's "
               "forward reaches each bucket's layers (Megatron-Core distributed optimizer, overlap_param_gather); "
               "false: all of them after the optimizer step, exposed"},
      {.name = "align_param_gather", .kind = ParamKind::boolean, .def = false,
       .help = "with overlap_param_gather: the gathers of model chunks 0 and 1 issued when the step starts, chunk "
               "c+1's when chunk c's first forward starts (Megatron-Core align_param_gather); false: each bucket's "
               "gather issued when the forward reaches the bucket before it"},
      {.name = "moe_dispatch", .kind = ParamKind::choice, .def = "all_to_all", .choices = {"all_to_all", "deepep"},
       .help = "MoE dispatch and combine: all_to_all (over the expert group, by the collective algorithm) or deepep "
               "(DeepSeek-V3 / DeepEP: each token sent once per destination node on its rail, then forwarded on "
               "NVLink to its experts' GPUs; combine the reverse)"},
      {.name = "moe_fp8_dispatch", .kind = ParamKind::boolean, .def = false,
       .help = "MoE tokens dispatched in FP8 (one byte per value, an fp32 scale per 128), and the gradient sent back "
               "to the experts' outputs likewise; the combine stays in the activations' precision (DeepSeek-V3 "
               "report 3.3.2). Needs precision fp8"},
      {.name = "fp8_scaling", .kind = ParamKind::choice, .def = "current", .choices = {"current", "delayed"},
       .help = "FP8 scaling recipe: current (each GEMM input's amax read by its own pass, then the cast: Transformer "
               "Engine's Float8CurrentScaling, torchao's tensorwise scaling) or delayed (the scale from earlier "
               "steps' amax: one cast pass, written by the norm where a norm feeds the GEMM; Transformer Engine's "
               "DelayedScaling, its only recipe before 2.x). Needs precision fp8"},
      {.name = "moe_a2a_overlap", .kind = ParamKind::boolean, .def = false,
       .help = "MoE: one micro-batch's dispatch and combine run beside another's computation (Megatron-Core "
               "overlap_moe_expert_parallel_comm): each steady-state forward paired with an earlier micro-batch's "
               "backward, one more warm-up forward. Needs ep > 1, 1f1b (pp 1) or interleaved-1f1b, no full "
               "recomputation"},
      {.name = "layers_per_stage", .kind = ParamKind::array, .def = nullptr,
       .help = "layers of each pipeline stage (default: balanced by device speed)"},
      {.name = "stage_pools", .kind = ParamKind::array, .def = nullptr,
       .help = "pool name of each pipeline stage (default: in device order)"},
      {.name = "fsdp", .kind = ParamKind::object, .def = nullptr,
       .help = "ZeRO-3 / FSDP (zero 3): {\"preset\": \"pytorch-fsdp2\" | \"pytorch-fsdp\" | \"deepspeed-zero3\"} and "
               "overrides, see strategy.fsdp; absent: pytorch-fsdp2"},
      {.name = "compression", .kind = ParamKind::object, .def = nullptr,
       .help = "codecs: {\"dp\": {\"type\": ...}, \"pp\": {\"type\": ...}} for gradients and pipeline activations"},
  };
  return t;
}

// Each key but the preset defaults to the preset's value (scenarios/fsdp.cpp: sharding_presets()).
const ParamTable& fsdp() {
  static const ParamTable t{
      {.name = "preset", .kind = ParamKind::choice, .def = "pytorch-fsdp2",
       .choices = {"deepspeed-zero3", "pytorch-fsdp", "pytorch-fsdp2"},
       .help = "framework defaults the other keys start from (docs/models.md: ZeRO-3 and FSDP)"},
      {.name = "unit", .kind = ParamKind::choice, .def = nullptr, .choices = {"layer", "submodule"},
       .help = "what one all-gather brings: a transformer layer (FSDP wrap; embedding and head their own), or "
               "each weight matrix grouped up to prefetch_bucket elements within its layer (DeepSpeed)"},
      {.name = "prefetch_forward", .kind = ParamKind::integer, .def = nullptr, .min = 0, .max = 16,
       .help = "units gathered ahead of the forward compute (0: each gather exposed before its unit)"},
      {.name = "prefetch_backward", .kind = ParamKind::integer, .def = nullptr, .min = 0, .max = 16,
       .help = "units gathered ahead of the backward compute"},
      {.name = "reshard_after_forward", .kind = ParamKind::boolean, .def = nullptr,
       .help = "free each unit after its forward and gather it again for backward; false: keep it (no second "
               "gather, the stage's parameters gathered at once)"},
      {.name = "shard_group", .kind = ParamKind::integer, .def = nullptr, .min = 1, .max = 1'000'000,
       .help = "hybrid sharding: ranks that shard one copy (consecutive data-parallel ranks, e.g. a node; a "
               "divisor of dp*cp); the shards all-reduced across the copies. Absent: all dp*cp ranks"},
      {.name = "prefetch_bucket", .kind = ParamKind::number, .def = nullptr, .min = 1, .max = 1e15,
       .help = "submodule units: elements one gather groups (stage3_prefetch_bucket_size)"},
      {.name = "max_live_parameters", .kind = ParamKind::number, .def = nullptr, .min = 0, .max = 1e15,
       .help = "elements gathered at once, bounding the prefetch (stage3_max_live_parameters); 0: no bound"},
      {.name = "persistence_threshold", .kind = ParamKind::number, .def = nullptr, .min = 0, .max = 1e15,
       .help = "tensors of fewer elements stay whole on every rank (stage3_param_persistence_threshold); 0: none"},
      {.name = "reduce_stream", .kind = ParamKind::boolean, .def = nullptr,
       .help = "gradient reductions on streams of their own (reduce-scatter; hybrid: all-reduce) beside the "
               "gathers, the backward's end waiting for them (FSDP's post-backward and all-reduce streams, "
               "DeepSpeed's overlap_comm); false: one communication stream for all"},
      {.name = "fp8_all_gather", .kind = ParamKind::boolean, .def = false,
       .help = "the transformer layers' weights gathered as FP8 for their FP8 GEMMs, one byte per element "
               "(torchao's enable_fsdp_float8_all_gather; the embedding and the head in the model's datatype); "
               "needs /workload/precision fp8"},
  };
  return t;
}

const ParamTable& simulation() {
  static const ParamTable t{
      {.name = "mode", .kind = ParamKind::choice, .def = "event", .choices = {"analytical", "event", "flow"},
       .help = "fidelity: closed forms, task graph with coarse collectives, or collectives as point-to-point flows"},
      {.name = "collective_algorithm", .kind = ParamKind::choice, .def = "auto",
       .choices = collective_algorithm_choices(),
       .help = "collective algorithm: \"auto\" (least predicted time per collective, as NCCL's tuner) or one "
               "algorithm, used where it applies (docs/network.md)"},
      {.name = "symmetry", .kind = ParamKind::boolean, .def = true,
       .help = "simulate provably identical ranks once"},
      {.name = "flow_schedule", .kind = ParamKind::choice, .def = "steps", .choices = {"steps", "phases"},
       .help = "flow mode: every step of a collective's schedule as its own flows (\"steps\"), or the steps of "
               "each phase merged into one flow per pair after a timer of their latency (\"phases\", event mode's "
               "cut)"},
      {.name = "representative_flows", .kind = ParamKind::boolean, .def = true,
       .help = "with symmetry, in event mode and in flow mode by phases: of a collective's flows that no simulated "
               "rank sends or receives, one per class of equal bytes and link share runs and the others load "
               "the links it crosses (docs/network.md); false: every flow in the network model"},
      {.name = "check_memory", .kind = ParamKind::boolean, .def = true,
       .help = "refuse a layout whose peak memory exceeds a device's capacity"},
      {.name = "sm_contention", .kind = ParamKind::boolean, .def = false,
       .help = "a GPU's compute slowed while collectives run on it, by the share of its SMs their NCCL channels "
               "hold (two per NIC across nodes; 8 for a userbuffers-overlapped tensor-parallel one, 0 for PyTorch's "
               "micro-pipelined one), docs/models.md \"SM contention\"; not in the presets' fits. Analytical mode "
               "refuses it with overlap_param_gather or an MoE model's pairs, a search in its base"},
      {.name = "max_tasks", .kind = ParamKind::integer, .def = 20'000'000, .min = 1, .max = 1e10,
       .help = "refuse scenarios whose estimated task count is larger"},
  };
  return t;
}

const ParamTable& outputs() {
  static const ParamTable t{
      {.name = "format", .kind = ParamKind::choice, .def = "table", .choices = {"table", "json"},
       .help = "report format on standard output"},
      {.name = "trace", .kind = ParamKind::string, .def = "", .help = "Chrome/Perfetto trace file to write"},
  };
  return t;
}

void read_framework_keys(const Params& s, StrategySpec& st) {
  const std::string overlap = s.string("tp_comm_overlap"), grads = s.string("main_grads");
  st.tp_overlap = overlap == "none"             ? TpOverlap::none
                  : overlap == "full"           ? TpOverlap::full
                  : overlap == "micro-pipeline" ? TpOverlap::micro_pipeline
                                                : TpOverlap::backward;
  st.main_grads = grads == "fp32" ? MainGrads::fp32 : grads == "model" ? MainGrads::model : MainGrads::automatic;
  st.grad_accumulation =
      s.string("grad_accumulation") == "separate" ? GradAccumulation::separate : GradAccumulation::fused;
  st.cross_entropy_fusion = s.boolean("cross_entropy_fusion");
  st.fused_kernels = s.boolean("fused_kernels");
  st.deallocate_pipeline_outputs = s.boolean("deallocate_pipeline_outputs");
  st.blocking_p2p = s.boolean("blocking_p2p");
  st.deepep_dispatch = s.string("moe_dispatch") == "deepep";
  st.fp8_dispatch = s.boolean("moe_fp8_dispatch");
  st.moe_a2a_overlap = s.boolean("moe_a2a_overlap");
  st.fp8_delayed = s.string("fp8_scaling") == "delayed";
}

}  // namespace hcsim::sections
