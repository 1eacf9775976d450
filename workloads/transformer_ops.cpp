// Per-layer forward ops of a Megatron-style tensor-parallel transformer shard.
// Shapes follow Narayanan et al. SC21 §3 (column-parallel QKV and MLP-up, row-parallel
// projection and MLP-down, one all-reduce after each row-parallel GEMM) and Korthikanti et
// al. 2022 §4 (sequence parallelism: norms and dropouts on s/t tokens). Model FLOPs are the
// matrix-multiply FLOPs only, as in Megatron's eq. 3: per layer 24 b s h^2 + 4 b s^2 h for
// GPT; elementwise kernels carry bytes, not model FLOPs.
//
// fp8 (Transformer Engine's mixed fp8): the four GEMMs of a layer run on fp8 tensor cores;
// norms, attention, elementwise kernels, the LM head and every stored or communicated
// tensor stay in bf16 (storage_dtype). How each GEMM input is quantised depends on the
// scaling recipe (strategy.fp8_scaling):
//   current (Float8CurrentScaling, Transformer Engine 2.x, as NVIDIA's Megatron-Bridge
//     recipes run it since 25.11; torchao's tensorwise dynamic scaling): the scale needs the
//     whole tensor's amax first, so each input is quantised by its own two passes: the amax
//     read (e = 2 B per element), then read again and written as fp8 (e + g = 3 B): 2e + g =
//     5 B per element, 6 B with the transposed copy (below);
//   delayed (DelayedScaling, Transformer Engine's only recipe in 1.x and the default of
//     NeMo through 2024 and of Megatron-Bridge's performance scripts before 25.11): the
//     scale comes from earlier steps' amax history, so the cast is one pass, e + g = 3 B per
//     element (4 B with the transposed copy), and where a norm feeds the GEMM
//     (LayerNormLinear: Megatron-Core's QKV and MLP-up projections of a dense layer) the norm
//     kernel writes the fp8 tensor itself, g (2g) instead of e bytes per element, with no
//     kernel of its own.
// Both layouts (docs/models.md): fp8 tensor cores that take only the TN layout (Hopper)
// need each fp8 operand again, transposed, for dgrad and wgrad (Transformer Engine's
// fp8_cast_transpose, torchao's copies for torch._scaled_mm): g more bytes per element at
// every quantisation where ShardShape::fp8_transposes (ComputeDevice::fp8_transposed_copies).
// The casts sit before the sequence-parallel all-gather, whose bytes stay counted at bf16.
// Each backward quantises the output gradient likewise (twice the forward bytes, as every
// memory-bound op; for a cast the norm wrote, twice a one-pass cast, one kernel more in the
// norm's backward). The GEMMs keep their fp8 inputs for the backward pass. The per-step
// cast of the weights (once per step, not per micro-batch) is not modelled.
//
// Eager mode (strategy.fused_kernels false: PyTorch without torch.compile, Hugging Face
// transformers' LlamaRMSNorm, apply_rotary_pos_emb and LlamaMLP, as IBM's fms-fsdp and most
// FSDP stacks run them), e bytes per stored element:
//   RMSNorm: cast to fp32 (e + 4), square (8), row mean (4), eps add and rsqrt (per token),
//     scale (8), cast back (4 + e), weight product (2e): 24 + 4e bytes in 7 kernels (fused:
//     2e in one); it keeps the fp32 input and the cast-back product's input for backward (4 + e).
//     LayerNorm (GPT) is one native kernel either way.
//   RoPE, per element of Q and K: x cos (2e), the rotated half -- negate one half (e) and
//     concatenate (2e) -- times sin (2e), the sum (3e): 10e in 5 kernels each (fused: 2e in one
//     for both).
//   SwiGLU: SiLU of the gate (2e) and the product with the up half (3e) in two kernels (fused:
//     3e in one); the product keeps both of its inputs (3e per element against 2e).
//   Residual add: one kernel of 3e; a dropout before it (p > 0, GPT) is its own kernel with
//     its mask (2e + 1), where Megatron fuses bias, dropout and add (3e + 1).
// Backward passes follow the general rule (twice the forward bytes, as many kernels).
//
// Context parallelism (cp > 1; Megatron-Core CP, Liu et al. ICLR 2024): the rank holds
// s/cp tokens, so every token-parallel op (norms, GEMMs, dropouts) and its saved
// activations shrink by cp; its attention takes its s/cp queries against all s keys
// (the K/V blocks of the other ranks arrive over the ring, workloads/item_builder.hpp), 1/cp of
// the attention work with the load-balanced causal chunk assignment (2 cp chunks), and
// the merges of the ring's partial results follow it (ring_merge; Transformer Engine's
// AttnFuncWithCPAndKVP2P).
#include <algorithm>
#include <array>
#include <cmath>
#include <string_view>

#include "transformer.hpp"

#include "sim/collectives/deepep.hpp"

namespace hcsim {
namespace {

double d(std::int64_t x) { return static_cast<double>(x); }

LayerOp mem_op(const char* name, KernelKind kind, double bytes, DType dt) {
  return {name, memory_kernel(kind, Bytes(bytes), Flops(0), dt), false, false, false};
}

// Selective activation checkpointing by op (Recompute::op): PyTorch's
// create_selective_checkpoint_contexts with torchtitan's "op" policy
// (torchtitan/models/llama3/parallelize_llama.py, _save_list and _custom_policy, the same
// from torchtitan 9dec370, 2024-12, to 820504e, 2025-06). Per layer (one checkpoint region)
// the outputs of aten.mm are saved but every second one in call order, and the outputs of
// the fused attention and of the sequence-parallel reduce-scatters; everything else is
// rerun before the layer's backward: norms, rotary embedding, activations, residual adds,
// casts, the sequence-parallel all-gathers and the unsaved matmuls. torchao's Float8Linear
// calls aten.mm on its Float8Tensor operands, which the checkpointing mode sees before the
// subclass turns it into torch._scaled_mm: fp8 matmuls follow the same rule (and the list's
// aten.max keeps the casts' amax, so a rerun cast is one pass). The matmuls are counted as
// torchtitan's Llama calls them: wq, wk, wv apart (Q and K and V; hcsim's "qkv" GEMM), then
// wo, then w1 and w3 apart (a gated MLP's input projections), then w2; so wk, wo and w3
// rerun. The region also keeps its input (b s h, s/t tokens under sequence parallelism).
// `input`, `attn_out`: elements of the layer's input and of the attention output; `q`,
// `kv`, `ffn`: this rank's output columns of wq, of wk and wv each, of w1 and w3 each.
void select_by_op(std::vector<LayerOp>& ops, const ShardShape& s, double e, double input, double attn_out, double q,
                  double kv, double ffn, bool gated) {
  int mm = 0;
  for (LayerOp& op : ops) {
    const std::string_view n = op.name;
    if (n == "norm1") op.op_saved_bytes = Bytes(e * input);  // the region's input, before its first op
    if (op.attention_core) {
      // O and the softmax log-sum-exp (fp32, one per head and query).
      op.op_saved_bytes += Bytes(e * attn_out + 4.0 * d(op.kernel.batch) * d(op.kernel.m));
      continue;
    }
    if (op.tp_allreduce_after && s.sequence_parallel && s.tp > 1) op.op_saved_bytes += Bytes(e * input);
    if (op.kernel.kind != KernelKind::gemm) continue;
    std::array<double, 3> cols{d(op.kernel.n), 0, 0};
    if (n == "qkv") cols = {q, kv, kv};
    if (n == "mlp_up" && gated) cols = {ffn, ffn, 0};
    std::size_t rerun = 0;
    for (const double w : cols) {
      if (w <= 0) continue;
      if (++mm % 2 != 0) {
        op.op_saved_bytes += Bytes(e * d(op.kernel.m) * w);
        continue;
      }
      op.op_recompute_cols[rerun++] = static_cast<std::int64_t>(w);
    }
  }
}

// Ring attention's merges (cp > 1), the kernels after the attention blocks on the same
// stream (Transformer Engine AttnFuncWithCPAndKVP2P; the ring's sends overlap the blocks,
// these do not). Forward: each step's partial output O_i is merged into O rescaled by
// exp(lse_i - lse) (flash_attn_fwd_out_correction; the first step's is a scaled copy,
// flash_attn_fwd_out_correction_init): read O_i, read and write O, 3e per element, 2e for
// the first. Backward: each step's dQ_i added into dQ (the first copied), and the step's
// dK_i, dV_i into the travelling dK, dV block (the first copied), 3e and 2e again. The
// log-sum-exp updates (b a s/cp values) are 1/hd of that and left out. A causal model's
// load-balanced chunks give each step after the diagonal one half of the queries or one
// half of the keys (AttnFuncWithCPAndKVP2P: steps i <= rank use the first key half, later
// steps the second query half): over the ranks, 3/4 of a full merge per such step.
// `o`, `q`, `kv`: elements of this rank's O, Q, and K and V together.
LayerOp ring_merge(const TransformerConfig& c, const ShardShape& s, double o, double q, double kv) {
  const DType act = storage_dtype(s.dtype);
  const double e = dtype_bytes(act);
  const double steps = c.causal ? 1 + 0.75 * d(s.cp - 1) : d(s.cp);
  const double per_element = 3 * steps - 1;  // 2e for the first step, 3e for every other
  LayerOp op = mem_op("cp_merge", KernelKind::elementwise, per_element * o * e, act);
  op.kernel.launches = static_cast<int>(s.cp);
  op.backward_bytes = Bytes(per_element * (q + kv) * e);
  op.backward_launches = static_cast<int>(2 * s.cp);
  return op;
}

// One cast pass per element, writing the fp8 copy (and on a TN-only device the transposed
// one): delayed scaling's e + g (e + 2g); current scaling's amax read first, 2e + g (2e + 2g).
double cast_bytes(const ShardShape& s, double e, double g) {
  return (s.fp8_delayed ? 1 : 2) * e + (s.fp8_transposes ? 2 : 1) * g;
}

// A layer's ops; `mlp_norm_writes_fp8`: the second norm feeds the MLP's first GEMM directly
// (a dense layer's MLP-up projection, a LayerNormLinear; an MoE layer's feeds the router).
std::vector<LayerOp> layer_ops(const TransformerConfig& c, const ShardShape& s, bool mlp_norm_writes_fp8) {
  const DType act = storage_dtype(s.dtype);
  const double e = dtype_bytes(act), g = dtype_bytes(s.dtype);  // stored / GEMM input bytes
  const bool fp8 = s.dtype == DType::fp8;
  const std::int64_t t = s.tp;
  const std::int64_t q_len = c.seq_len / s.cp;                           // s / cp tokens on this rank
  const std::int64_t tokens = s.micro_batch * q_len;                     // b s / cp
  const double norm_tokens = s.sequence_parallel ? d(tokens) / d(t) : d(tokens);
  const double h = d(c.hidden);
  const std::int64_t hd = c.head_dim();
  const std::int64_t q_out = c.q_width() / t;
  const std::int64_t kv_out = c.kv_heads * hd / t;
  const std::int64_t ffn = c.ffn_hidden / t;
  std::vector<LayerOp> ops;
  ops.reserve(16);
  // fp8: quantise `elements` GEMM inputs (header). `after_norm`: the op before is the norm
  // that feeds the GEMM, which under delayed scaling writes the fp8 tensor itself, in both layouts (fused
  // kernels only: eager mode's norm is PyTorch's).
  auto quantise = [&](const char* name, double elements, bool after_norm = false) {
    if (!fp8) return;
    if (s.fp8_delayed && after_norm && s.fused_kernels) {
      LayerOp& norm_op = ops.back();
      norm_op.backward_bytes = norm_op.kernel.bytes * 2.0 + Bytes(2 * elements * cast_bytes(s, e, g));
      norm_op.backward_launches = norm_op.kernel.launches + 1;
      norm_op.kernel.bytes += Bytes(elements * ((s.fp8_transposes ? 2 : 1) * g - e));
      return;
    }
    ops.push_back(mem_op(name, KernelKind::elementwise, elements * cast_bytes(s, e, g), act));
  };

  const bool eager = !s.fused_kernels;
  const bool eager_rms = eager && c.rmsnorm;
  // Norm: read x, write y (+ mean/rstd, negligible); eager RMSNorm as in the header.
  auto norm = [&](const char* name) {
    ops.push_back(mem_op(name, KernelKind::norm, norm_tokens * h * (eager_rms ? 24 + 4 * e : 2 * e), act));
    if (eager_rms) ops.back().kernel.launches = 7;
  };
  // Residual add (and dropout): Megatron's fused bias-dropout-add, or eager mode's kernels.
  auto residual = [&](const char* name) {
    const bool dropout = !c.rmsnorm;  // GPT/BERT train with dropout; Llama without
    ops.push_back(mem_op(name, KernelKind::elementwise,
                         norm_tokens * h * (!eager ? 3 * e + 1 : dropout ? 5 * e + 1 : 3 * e), act));
    if (eager && dropout) ops.back().kernel.launches = 2;
  };
  norm("norm1");
  quantise("fp8_cast_qkv", norm_tokens * h, true);
  // Per head: query/key and value dimensions (MLA: nope + rope and v; else the head dimension).
  const MlaConfig& ml = c.mla;
  const std::int64_t heads_t = c.heads / t;
  const std::int64_t dqk = c.is_mla() ? ml.nope_dim + ml.rope_dim : c.head_dim();
  const std::int64_t dv = c.is_mla() ? ml.v_dim : c.head_dim();
  if (c.is_mla()) {
    // Multi-head latent attention (transformer.hpp): the down projections whole on every
    // tensor-parallel rank over the gathered tokens (one all-gather under sequence
    // parallelism, marked on the first), the up projections split by heads.
    auto rms = [&](const char* name, std::int64_t width) {
      ops.push_back(mem_op(name, KernelKind::norm, d(tokens) * d(width) * 2 * e, act));
    };
    if (ml.q_rank > 0) {
      ops.push_back({"q_down", gemm_kernel(tokens, ml.q_rank, c.hidden, s.dtype), false, false, true});
      rms("q_norm", ml.q_rank);
      ops.push_back({"q_up", gemm_kernel(tokens, heads_t * dqk, ml.q_rank, s.dtype), false, false, false});
    } else {
      ops.push_back({"q_proj", gemm_kernel(tokens, heads_t * dqk, c.hidden, s.dtype), false, false, true});
    }
    ops.push_back({"kv_down", gemm_kernel(tokens, ml.kv_rank + ml.rope_dim, c.hidden, s.dtype), false, false, false});
    rms("kv_norm", ml.kv_rank);
    ops.push_back({"kv_up", gemm_kernel(tokens, heads_t * (ml.nope_dim + ml.v_dim), ml.kv_rank, s.dtype), false, false,
                   false});
    // Rotary positions on the queries' rope part and the shared rotary key, read and written.
    ops.push_back(mem_op("rope", KernelKind::elementwise, 2.0 * d(tokens) * d((heads_t + 1) * ml.rope_dim) * e, act));
  } else {
    ops.push_back({"qkv", gemm_kernel(tokens, q_out + 2 * kv_out, c.hidden, s.dtype), false, false, true});
    // Rotary positions (Su et al. 2021, RoFormer; LLaMA): Q and K of the local tokens are
    // rotated by their own kernel, read and written once (Transformer Engine's fused RoPE).
    if (!c.learned_positions) {
      ops.push_back(mem_op("rope", KernelKind::elementwise, (eager ? 10.0 : 2.0) * d(tokens) * d(q_out + kv_out) * e, act));
      if (eager) ops.back().kernel.launches = 10;
    }
  }

  // Attention core over b * a/t heads: QK^T (s x s x hd) and AV (s x hd x s): 4 b s^2 h / t.
  Kernel att;
  att.kind = KernelKind::attention;
  att.dtype = act;
  att.batch = s.micro_batch * (c.heads / t);
  att.m = q_len;
  att.n = c.seq_len;
  att.k = dqk;
  att.fused = s.flash_attention;
  att.flash2 = s.flash_attention && s.flash2;
  // QK^T over dqk dimensions and AV over dv (4 b s^2 hd / t when both are the head dimension).
  att.flops = Flops(2.0 * d(att.batch) * d(q_len) * d(c.seq_len) * d(dqk + dv));
  // A fused kernel of a causal model skips the key blocks above the diagonal: of n x n
  // tiles of 128 rows (FlashAttention-2/3's block, Dao 2023 section 3.1; Shah et al. 2024)
  // it computes n(n + 1)/2. The model FLOPs keep the full square (Megatron's eq. 3), so
  // the op carries the ratio. Unfused attention computes the whole score matrix.
  double model_work = 1;
  if (s.flash_attention && c.causal) {
    const double n = std::ceil(d(c.seq_len) / 128.0);
    const double computed = (n + 1) / (2 * n);
    att.flops = att.flops * computed;
    model_work = 1 / computed;
  }
  // Q in and O out for the local tokens; K and V of all s tokens (the local block and, under
  // context parallelism, the cp - 1 blocks received).
  // (MLA: Q of dqk and O of dv per head; K of dqk and V of dv per head over all s tokens.)
  const double qkvo = c.is_mla() ? (d(tokens) * d(heads_t * (dqk + dv)) + d(s.micro_batch * c.seq_len) * d(heads_t * (dqk + dv))) * e
                                 : (d(tokens) * 2.0 * d(q_out) + d(s.micro_batch * c.seq_len) * 2.0 * d(kv_out)) * e;
  double bytes = qkvo;
  if (!s.flash_attention) {
    // Unfused: scores written by QK^T, read+written by softmax, dropout (with a 1-byte
    // mask), read by AV: 2 + 4 + 2 + 1 + 2 + 2 bytes per score element at 16 bits.
    const double scores = d(att.batch) * d(q_len) * d(c.seq_len);
    bytes += scores * (6.0 * e + 1.0);
  }
  att.bytes = Bytes(bytes);
  ops.push_back({"attention", att, true, false});
  ops.back().model_work = model_work;
  const double attn_out = d(tokens) * d(heads_t * dv);  // O: the attention's output elements
  if (s.cp > 1)
    ops.push_back(ring_merge(c, s, attn_out, d(tokens) * d(heads_t * dqk),
                             d(tokens) * (c.is_mla() ? d(heads_t * (dqk + dv)) : 2.0 * d(kv_out))));

  quantise("fp8_cast_attn_proj", d(tokens) * d(q_out));
  ops.push_back({"attn_proj", gemm_kernel(tokens, c.hidden, heads_t * dv, s.dtype), false, true});
  // Dropout + residual add: read x and residual, write y and a 1-byte mask.
  residual("dropout_residual1");
  norm("norm2");
  quantise("fp8_cast_mlp_up", norm_tokens * h, mlp_norm_writes_fp8);
  ops.push_back({"mlp_up", gemm_kernel(tokens, c.gated_mlp ? 2 * ffn : ffn, c.hidden, s.dtype), false, false, true});
  // GELU reads and writes ffn/t per token; SwiGLU reads two halves and writes one (eager:
  // SiLU, then the product).
  ops.push_back(mem_op("activation", KernelKind::elementwise,
                       d(tokens) * d(ffn) * (c.gated_mlp ? (eager ? 5 : 3) : 2) * e, act));
  if (eager && c.gated_mlp) ops.back().kernel.launches = 2;
  quantise("fp8_cast_mlp_down", d(tokens) * d(ffn));
  ops.push_back({"mlp_down", gemm_kernel(tokens, c.hidden, ffn, s.dtype), false, true});
  residual("dropout_residual2");

  // What each op keeps for its backward pass (Korthikanti et al. 2022 §4.1): norms and
  // GEMMs their input, QK^T its Q and K, AV its V and the dropped-out probabilities,
  // softmax its output, dropouts a 1-byte mask. Under sequence parallelism the norm and
  // dropout tensors and the column-parallel GEMM inputs are kept on s/t tokens.
  const double gemm_in_tokens = s.sequence_parallel ? d(tokens) / d(t) : d(tokens);
  const double scores = d(att.batch) * d(q_len) * d(c.seq_len);
  for (LayerOp& op : ops) {
    const std::string_view n = op.name;
    if (n == "norm1" || n == "norm2") op.saved_bytes = Bytes((eager_rms ? 4 + e : e) * norm_tokens * h);
    else if (n == "qkv" || n == "mlp_up" || n == "q_down" || n == "q_proj") op.saved_bytes = Bytes(g * gemm_in_tokens * h);
    else if (n == "q_norm" || n == "q_up") op.saved_bytes = Bytes((n == "q_up" ? g : e) * d(tokens) * d(ml.q_rank));
    else if (n == "kv_norm" || n == "kv_up") op.saved_bytes = Bytes((n == "kv_up" ? g : e) * d(tokens) * d(ml.kv_rank));
    else if (n == "attention") {
      op.saved_score_bytes = Bytes(scores * (2 * e + 1));  // softmax output, dropout mask, dropout output
      // Q, K and V (MLA: Q and K of dqk, V of dv per head).
      const double qkv = c.is_mla() ? d(heads_t * (2 * dqk + dv)) : d(q_out) + 2.0 * d(kv_out);
      op.saved_bytes = Bytes(e * d(tokens) * qkv) + op.saved_score_bytes;
    } else if (n == "attn_proj") op.saved_bytes = Bytes(g * d(tokens) * d(heads_t * dv));
    else if (n == "dropout_residual1" || n == "dropout_residual2") op.saved_bytes = Bytes(c.rmsnorm && eager ? 0 : norm_tokens * h);
    else if (n == "activation") op.saved_bytes = Bytes(e * d(tokens) * d(ffn) * (c.gated_mlp ? (eager ? 3 : 2) : 1));
    else if (n == "mlp_down") op.saved_bytes = Bytes(g * d(tokens) * d(ffn));
  }
  select_by_op(ops, s, e, norm_tokens * h, attn_out, d(q_out), d(kv_out), d(ffn), c.gated_mlp);
  return ops;
}

}  // namespace

std::vector<LayerOp> transformer_layer_ops(const TransformerConfig& c, const ShardShape& s) {
  return layer_ops(c, s, true);
}

MoeLoad moe_load(const MoeConfig& m, int ep) {
  MoeLoad out;
  const std::int64_t e = std::max<std::int64_t>(1, m.experts);
  const std::int64_t per_rank = std::max<std::int64_t>(1, e / std::max(1, ep));
  const std::vector<double> w = expert_shares(e, m.skew);
  out.rank_share.assign(static_cast<std::size_t>(e / per_rank), 0.0);
  for (std::int64_t j = 0; j < e; ++j)
    out.rank_share[static_cast<std::size_t>(j / per_rank)] += w[static_cast<std::size_t>(j)];
  if (m.capacity_factor > 0) {
    // Each expert takes C / E of the routed tokens, padded up to it, the rest dropped.
    const double cap = m.capacity_factor / d(e);
    for (double x : w) out.dropped += std::max(0.0, x - cap);
    out.load = m.capacity_factor;
  } else {
    out.load = d(static_cast<std::int64_t>(out.rank_share.size())) *
               *std::max_element(out.rank_share.begin(), out.rank_share.end());
  }
  return out;
}

std::vector<LayerOp> moe_layer_ops(const TransformerConfig& c, const ShardShape& s) {
  const DType act = storage_dtype(s.dtype);
  const double e = dtype_bytes(act), g = dtype_bytes(s.dtype);
  const bool fp8 = s.dtype == DType::fp8;
  const MoeConfig& m = c.moe;
  const std::vector<LayerOp> dense = layer_ops(c, s, false);
  std::vector<LayerOp> ops;
  // The attention half, up to and including the second norm.
  for (const LayerOp& op : dense) {
    ops.push_back(op);
    if (std::string_view(op.name) == "norm2") break;
  }
  // Shared experts: the dense MLP at inner size shared_ffn, tensor-parallel as it is.
  if (m.shared_ffn > 0) {
    TransformerConfig sc = c;
    sc.ffn_hidden = m.shared_ffn;
    bool mlp = false;
    for (const LayerOp& op : layer_ops(sc, s, false)) {
      const std::string_view n = op.name;
      if (n == "norm2")
        mlp = true;
      else if (n == "dropout_residual2")
        break;
      else if (mlp) {
        ops.push_back(op);
        ops.back().name = n == "mlp_up"            ? "shared_up"
                          : n == "activation"      ? "shared_activation"
                          : n == "mlp_down"        ? "shared_down"
                          : n == "fp8_cast_mlp_up" ? "fp8_cast_shared_up"
                                                   : "fp8_cast_shared_down";
      }
    }
  }
  // Tokens of this rank: its sequence-parallel shard (all b s/cp without tensor parallelism).
  const std::int64_t n_tok = s.micro_batch * (c.seq_len / s.cp) / (s.sequence_parallel ? s.tp : 1);
  const double n = d(n_tok), h = d(c.hidden), k = m.top_k, experts = d(m.experts);
  const MoeLoad load = moe_load(m, s.ep);
  // Router: logits (N x E), then softmax and top-k in fp32 (read the logits, write the
  // probabilities, then k indices and weights per token).
  ops.push_back({"router", gemm_kernel(n_tok, m.experts, c.hidden, act), false, false, false});
  ops.back().saved_bytes = Bytes(e * n * h);
  ops.push_back(mem_op("router_topk", KernelKind::softmax, n * experts * (e + 4) + n * k * 12, act));
  ops.back().saved_bytes = Bytes(4 * n * experts);
  // Permute: each token copied once per chosen expert, grouped by expert (read and write N k h).
  ops.push_back(mem_op("permute", KernelKind::elementwise, 2 * n * k * h * e, act));
  // The busiest rank's tokens (with etp > 1, those of its expert tensor group, gathered),
  // spread over its E/ep local experts (one grouped GEMM) of f/etp inner columns each.
  const double routed = n * k * load.load;
  const double etp = s.etp, gathered = routed * etp;
  const std::int64_t local = std::max<std::int64_t>(1, m.experts / s.ep);
  const std::int64_t per_expert = static_cast<std::int64_t>(std::ceil(gathered / d(local)));
  const double received = d(per_expert * local);
  const std::int64_t f = m.expert_ffn / s.etp;
  const Bytes wire(s.ep > 1 ? routed * h * e : 0.0);
  // FP8 dispatch (DeepSeek-V3 report §3.3.2): the tokens quantised before the dispatch, one
  // byte per value and an fp32 scale per 1 x 128 tile; so is the gradient the combine's
  // backward brings to the experts' outputs. The combine and the dispatch's backward keep
  // the activations' precision.
  const Bytes toward_experts = s.fp8_dispatch ? Bytes(s.ep > 1 ? routed * h * (1.0 + 4.0 / 128.0) : 0.0) : wire;
  const Bytes etp_wire(s.etp > 1 ? gathered * h * e : 0.0);
  if (fp8)
    ops.push_back(mem_op("fp8_cast_expert_up", KernelKind::elementwise, received * h * cast_bytes(s, e, g), act));
  ops.push_back(
      {"expert_up", gemm_kernel(per_expert, c.gated_mlp ? 2 * f : f, c.hidden, s.dtype, local), false, false, false});
  ops.back().ep_all_to_all = toward_experts;  // dispatch
  ops.back().ep_all_to_all_grad = wire;
  ops.back().etp_all_gather = etp_wire;
  ops.back().saved_bytes = Bytes(g * received * h);
  // Model FLOPs: the even share N k (at full width: etp N k tokens at 1/etp of it), not the
  // busiest rank's excess or padding.
  ops.back().model_work = 1.0 / (received / (n * k * etp));
  ops.push_back(mem_op("expert_activation", KernelKind::elementwise, received * d(f) * (c.gated_mlp ? 3 : 2) * e, act));
  ops.back().saved_bytes = Bytes(e * received * d(f) * (c.gated_mlp ? 2 : 1));
  if (fp8)
    ops.push_back(mem_op("fp8_cast_expert_down", KernelKind::elementwise, received * d(f) * cast_bytes(s, e, g), act));
  ops.push_back({"expert_down", gemm_kernel(per_expert, c.hidden, f, s.dtype, local), false, false, false});
  ops.back().saved_bytes = Bytes(g * received * d(f));
  ops.back().model_work = 1.0 / (received / (n * k * etp));
  // Un-permute: the expert outputs back (combine), weighted by the router's probabilities
  // and summed per token (read N k h, write N h); keeps the expert outputs for the weights'
  // gradient.
  ops.push_back(mem_op("unpermute", KernelKind::elementwise, (n * k + n) * h * e, act));
  ops.back().ep_all_to_all = wire;  // combine
  ops.back().ep_all_to_all_grad = toward_experts;
  ops.back().etp_reduce_scatter = etp_wire;
  ops.back().saved_bytes = Bytes(e * n * k * h);
  ops.push_back(dense.back());  // dropout_residual2
  return ops;
}

Bytes layer_activation_bytes(const TransformerConfig& c, const ShardShape& s, Recompute r, bool moe) {
  // Full recomputation keeps each layer's input (Megatron-LM's CheckpointFunction saves it):
  // b s h, which sequence parallelism has already split over the t ranks (b s/t h; Megatron
  // refuses distribute_saved_activations with it, as the input is already distributed).
  if (r == Recompute::full)
    return Bytes(dtype_bytes(storage_dtype(s.dtype)) * d(s.micro_batch * c.seq_len / s.cp) * d(c.hidden) /
                 (s.sequence_parallel ? s.tp : 1));
  Bytes total{};
  for (const LayerOp& op : moe ? moe_layer_ops(c, s) : transformer_layer_ops(c, s))
    total += r == Recompute::op
                 ? op.op_saved_bytes
                 : op.saved_bytes - (r == Recompute::selective || s.flash_attention ? op.saved_score_bytes : Bytes{});
  return total;
}

std::vector<LayerOp> embedding_ops(const TransformerConfig& c, const ShardShape& s) {
  const DType act = storage_dtype(s.dtype);
  const double e = dtype_bytes(act);
  const double tokens = d(s.micro_batch * c.seq_len / s.cp);
  // Gather one row per token (+ position row), write the hidden state.
  const double bytes = tokens * d(c.hidden) * e * (c.learned_positions ? 3 : 2);
  return {mem_op("embedding", KernelKind::embedding, bytes, act)};
}

std::vector<LayerOp> head_ops(const TransformerConfig& c, const ShardShape& s) {
  const DType act = storage_dtype(s.dtype);  // the LM head stays in bf16 under fp8
  const double e = dtype_bytes(act);
  const std::int64_t tokens = s.micro_batch * c.seq_len / s.cp;
  const double norm_tokens = s.sequence_parallel ? d(tokens) / s.tp : d(tokens);
  std::vector<LayerOp> ops;
  const bool eager_rms = !s.fused_kernels && c.rmsnorm;  // as the layers' norms
  ops.push_back(mem_op("final_norm", KernelKind::norm, norm_tokens * d(c.hidden) * (eager_rms ? 24 + 4 * e : 2 * e), act));
  if (eager_rms) ops.back().kernel.launches = 7;
  ops.push_back({"lm_head", gemm_kernel(tokens, c.vocab / s.tp, c.hidden, act), false, false, true});
  // Vocab-parallel cross entropy over this rank's b s x V/t logits (each an e-byte GEMM
  // output). Unfused, as Megatron-LM's vocab_parallel_cross_entropy runs it on the logits
  // cast to fp32 (fp16_lm_cross_entropy off, its default): the cast (read e, write 4), the
  // row max (read 4), subtracting it in place (4 + 4), exp in place (4 + 4), the row sum
  // (read 4) and the division that leaves the softmax for backward (4 + 4): 34 + e bytes per
  // logit in six kernels; backward scales the softmax by the loss gradient in place (4 + 4)
  // and casts it back (read 4, write e): 12 + e bytes in two. Fused (Megatron-Core's
  // cross_entropy_loss_fusion with Transformer Engine's kernel, as Megatron-Bridge runs it):
  // one pass for the row max and sum of exponentials (read e), one that writes the
  // gradient in place (read e, write e), and backward scales it (read e, write e).
  // The target-logit gathers and the three b s-element all-reduces over the tp ranks are
  // not modelled (b s values against b s V/t).
  const double logits = d(tokens) * d(c.vocab / s.tp);
  LayerOp ce = mem_op("cross_entropy", KernelKind::softmax, logits * (s.fused_cross_entropy ? 3 * e : 34 + e), act);
  ce.kernel.launches = s.fused_cross_entropy ? 2 : 6;
  ce.backward_bytes = Bytes(logits * (s.fused_cross_entropy ? 2 * e : 12 + e));
  ce.backward_launches = s.fused_cross_entropy ? 1 : 2;
  ops.push_back(ce);
  return ops;
}

ShardShape shard_shape(const WorkloadSpec& w, const StrategySpec& st) {
  ShardShape s{w.micro_batch, st.tp, st.sequence_parallel, st.flash_attention, w.precision, st.cp};
  s.fused_cross_entropy = st.cross_entropy_fusion;
  s.fused_kernels = st.fused_kernels;
  s.ep = st.ep;
  s.etp = st.etp;
  s.fp8_dispatch = st.fp8_dispatch;
  s.flash2 = st.attention_flash2;
  s.fp8_delayed = st.fp8_delayed;
  return s;
}

}  // namespace hcsim
