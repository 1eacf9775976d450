#pragma once
// Transformer model family: GPT (Brown et al. 2020; Megatron-LM, Narayanan et al. SC21),
// LLaMA (Touvron et al. 2023: RMSNorm, SwiGLU, rotary embeddings, grouped-query attention)
// and BERT (Devlin et al. 2019). A model is its dimensions; transformer_layer_ops() gives the
// per-layer forward op list (shapes, FLOPs, bytes) for one tensor-parallel shard, from which
// backward and recomputation are derived. Parameter count follows Narayanan et al. eq. 2:
// P = 12 l h^2 (1 + 13/(12h) + (V+s)/(12 l h)) for GPT (learned positions, 4h MLP).
//
// Mixture of experts (Shazeer et al. 2017, arXiv 1701.06538; GShard, Lepikhin et al. 2021,
// arXiv 2006.16668; Switch, Fedus et al. 2022, arXiv 2101.03961; Mixtral, Jiang et al. 2024,
// arXiv 2401.04088; DeepSeekMoE, Dai et al. 2024, arXiv 2401.06066): in an MoE layer the MLP
// is E routed experts (each an MLP of inner size expert_ffn, the family's kind: SwiGLU for
// LLaMA, GELU with biases for GPT), a router (an h x E linear map, softmax, top-k), and
// optionally shared experts every token passes through (one MLP of inner size shared_ffn).
// Layer i (from 0) is an MoE layer when i >= first_dense and (i - first_dense) % every == 0
// (Megatron-Core's moe_layer_freq; GShard and Switch: every = 2; DeepSeek-V3: first_dense =
// 3). A token activates k routed experts: active parameters count k of the E.
//
// Multi-head latent attention (DeepSeek-V2, arXiv 2405.04434, §2.1; DeepSeek-V3, arXiv
// 2412.19437, §2.1.1), as trained (keys and values up-projected, not absorbed): queries
// through a low-rank down projection h -> q_rank (RMSNorm) and up projection to a heads x
// (nope + rope) per token; keys and values through a shared down projection h -> kv_rank +
// rope (the decoupled rotary key, shared by the heads; RMSNorm on the kv_rank part) and an
// up projection kv_rank -> heads x (nope + v); attention scores over nope + rope dimensions,
// values of v; the output projection heads v -> h.

#include <array>
#include <cstdint>
#include <string>
#include <vector>

#include "models/kernel.hpp"
#include "workloads/strategy.hpp"
#include "sim/core/registry.hpp"

namespace hcsim {

// Multi-head latent attention (kv_rank = 0: standard attention).
struct MlaConfig {
  std::int64_t q_rank = 0;      // query compression d_c' (0: queries projected directly)
  std::int64_t kv_rank = 0;     // key/value compression d_c
  std::int64_t nope_dim = 128;  // per-head query/key dimension without rotary positions
  std::int64_t rope_dim = 64;   // decoupled rotary query/key dimension
  std::int64_t v_dim = 128;     // per-head value dimension
};

// The MoE part of a model (experts = 0: a dense model).
struct MoeConfig {
  std::int64_t experts = 0;     // routed experts E
  int top_k = 2;                // experts per token k
  std::int64_t expert_ffn = 0;  // inner size of one routed expert
  std::int64_t shared_ffn = 0;  // inner size of the shared experts together (0: none)
  int first_dense = 0;          // the first layers stay dense
  int every = 1;                // then every `every`-th layer is an MoE layer
  // Tokens an expert takes, as a multiple of its even share (GShard's capacity factor):
  // > 0 pads every expert to its capacity and drops the tokens beyond it; 0: dropless
  // (every routed token is computed, Megatron-Core's default).
  double capacity_factor = 0;
  // The routing distribution: expert j (from 0) receives a share proportional to
  // (j + 1)^-skew of the routed tokens (Zipf; 0: uniform).
  double skew = 0;
  // Node-limited routing (DeepSeek-V3 §2.1.2, M = 4): the most nodes of the expert group one
  // token's experts may sit on; 0: no limit. Used by the DeepEP dispatch's deduplication.
  int max_nodes = 0;
};

struct TransformerConfig {
  std::string family;          // "gpt", "llama", "bert"
  std::int64_t layers = 0;     // l
  std::int64_t hidden = 0;     // h
  std::int64_t heads = 0;      // a
  // Per-head dimension when a model sets it apart from h / a (Qwen3: 128 with h = 2,048 and
  // 32 heads); 0: h / a. Queries and the attention output are then a * head_size wide.
  std::int64_t head_size = 0;
  std::int64_t kv_heads = 0;   // grouped-query attention (= heads for MHA)
  std::int64_t ffn_hidden = 0; // MLP inner size (4h for GPT)
  std::int64_t vocab = 0;      // V
  std::int64_t seq_len = 0;    // s
  bool gated_mlp = false;      // SwiGLU: three matrices instead of two
  bool rmsnorm = false;        // RMSNorm instead of LayerNorm
  bool learned_positions = true;  // GPT/BERT position table (s x h); LLaMA uses rotary
  bool tied_embeddings = true;    // LM head shares the embedding matrix
  bool causal = true;
  MoeConfig moe;
  MlaConfig mla;

  [[nodiscard]] std::int64_t head_dim() const { return head_size > 0 ? head_size : hidden / heads; }
  // Query (and attention-output) elements per token, all heads: h unless head_size is set.
  [[nodiscard]] std::int64_t q_width() const { return heads * head_dim(); }
  [[nodiscard]] bool is_mla() const { return mla.kv_rank > 0; }
  // Key and value elements per token, all heads (what attention reads per key and a
  // context-parallel ring passes on): 2 kv_heads head_dim, or under MLA heads (nope + rope + v).
  [[nodiscard]] std::int64_t kv_width() const {
    return is_mla() ? heads * (mla.nope_dim + mla.rope_dim + mla.v_dim) : 2 * kv_heads * head_dim();
  }
  // Parameters of the attention block: projections (and their biases for GPT), MLA's norms.
  [[nodiscard]] double attention_params() const;
  [[nodiscard]] bool is_moe() const { return moe.experts > 0; }
  // Whether layer i (from 0) is an MoE layer.
  [[nodiscard]] bool moe_layer(std::int64_t i) const {
    return is_moe() && i >= moe.first_dense && (i - moe.first_dense) % moe.every == 0;
  }
  // MoE layers among layers [first, first + count).
  [[nodiscard]] std::int64_t moe_layers(std::int64_t first, std::int64_t count) const;
  // Parameters of one dense transformer layer (weights and biases).
  [[nodiscard]] double layer_params() const;
  // Parameters of an MLP of inner size f (the family's kind).
  [[nodiscard]] double mlp_params(std::int64_t f) const;
  // Of an MoE layer: attention, norms, router and shared experts (`dense_part`), and the
  // routed experts (`expert_part`, all E of them).
  [[nodiscard]] double moe_dense_params() const;
  [[nodiscard]] double moe_expert_params() const {
    return static_cast<double>(moe.experts) * mlp_params(moe.expert_ffn);
  }
  // Parameters of layer i.
  [[nodiscard]] double layer_params_at(std::int64_t i) const {
    return moe_layer(i) ? moe_dense_params() + moe_expert_params() : layer_params();
  }
  // Parameters a token uses (k routed experts of each MoE layer; every parameter of a
  // dense model).
  [[nodiscard]] double active_params() const;
  // Parameter tensors of one layer: weights of the four GEMMs and the two norms, and for
  // GPT/BERT their biases (a framework hook or kernel per tensor).
  [[nodiscard]] int layer_tensors() const { return family == "llama" ? 6 : 12; }
  // Embedding (+ positions) parameters; LM head counted separately when untied.
  [[nodiscard]] double embedding_params() const;
  [[nodiscard]] double total_params() const;
};

// The transformer model registry: one entry per family, presets per published model.
class TransformerModel {
 public:
  explicit TransformerModel(TransformerConfig c) : config(std::move(c)) {}
  virtual ~TransformerModel() = default;
  TransformerConfig config;
};

Registry<TransformerModel>& transformer_models();
PresetLibrary& transformer_presets();
void register_builtin_transformers();

// One forward op of a layer for one tensor-parallel shard and one micro-batch.
struct LayerOp {
  const char* name;
  Kernel kernel;
  bool attention_core = false;   // recomputed under selective recomputation
  bool tp_allreduce_after = false;  // Megatron row-parallel output: all-reduce (or RS with SP)
  bool column_parallel = false;     // Megatron column-parallel GEMM: all-gathers its input under SP;
                                    // its input gradient is all-reduced (or reduce-scattered) in backward
  Bytes saved_bytes{};              // activations kept for the backward pass (Korthikanti §4.1)
  Bytes saved_score_bytes{};        // of which s x s score tensors (dropped by flash attention or
                                    // selective recomputation)
  double model_work = 1;            // model FLOPs / kernel.flops: 2 for causal fused attention,
                                    // which skips the masked half that the model count includes
  Bytes backward_bytes{};           // HBM traffic of the backward pass; 0: the general rule (item_builder.hpp)
  int backward_launches = 0;        // kernels of the backward pass; 0: as many as forward
  // Selective recomputation by op (Recompute::op, transformer_ops.cpp): the output columns
  // of the framework's separate matmuls that this GEMM stands for and that are rerun (0:
  // none), and what the op keeps for its backward under that policy.
  std::array<std::int64_t, 3> op_recompute_cols{};
  Bytes op_saved_bytes{};
  // MoE token dispatch or combine: an all-to-all of this many bytes per rank over the
  // expert-parallel group before the op in forward, after its backward in backward (the
  // gradient goes back the way the tokens came). 0: none.
  Bytes ep_all_to_all{};
  Bytes ep_all_to_all_grad{};  // the same all-to-all's bytes in backward
  // Expert tensor parallelism (etp > 1): the dispatched tokens all-gathered over the expert
  // tensor group after the dispatch (etp_all_gather, on the experts' first op) and their
  // partial outputs reduce-scattered before the combine (etp_reduce_scatter, on the
  // combine's op), this many bytes gathered (the whole buffer); in backward the gradient
  // is reduce-scattered where the tokens were gathered and all-gathered where they were
  // reduce-scattered (Megatron-Core's MoEAlltoAllTokenDispatcher:
  // gather_from_sequence_parallel_region and reduce_scatter_to_sequence_parallel_region
  // over the expert tensor group). 0: none.
  Bytes etp_all_gather{}, etp_reduce_scatter{};
};

struct ShardShape {
  std::int64_t micro_batch = 1;  // b
  int tp = 1;                    // t
  bool sequence_parallel = false;
  bool flash_attention = true;   // fused attention: scores never reach HBM
  DType dtype = DType::bf16;
  int cp = 1;                    // context parallel: this rank holds s/cp tokens of each sequence
  bool fused_cross_entropy = false;  // strategy.cross_entropy_fusion
  bool fused_kernels = true;         // strategy.fused_kernels
  int ep = 1;                        // expert parallel: this rank holds E/ep routed experts
  int etp = 1;                       // expert tensor parallel: 1/etp of each of them
  bool fp8_dispatch = false;         // strategy.moe_fp8_dispatch
  bool flash2 = false;               // strategy.attention_kernel flash2 (Kernel::flash2)
  bool fp8_delayed = false;          // strategy.fp8_scaling delayed (StrategySpec::fp8_delayed)
  // fp8 GEMM operands written a second time, transposed (ComputeDevice::fp8_transposed_copies:
  // the stage's device; false where none is known).
  bool fp8_transposes = false;
};
ShardShape shard_shape(const WorkloadSpec& w, const StrategySpec& st);

std::vector<LayerOp> transformer_layer_ops(const TransformerConfig& c, const ShardShape& s);

// How routed tokens fall on the ep ranks of an expert-parallel group (rank r holds experts
// r E/ep .. (r+1) E/ep - 1, Megatron-Core's contiguous placement), from the routing
// distribution (MoeConfig::skew) and the capacity factor C:
//   rank_share[r]  the fraction of routed tokens whose expert rank r holds (sum 1);
//   load           tokens the busiest rank computes and receives, as a multiple of the even
//                  share N k (N tokens per rank, k experts each): dropless, ep max_r
//                  rank_share[r]; with C > 0 every expert is padded to its capacity, C;
//   dropped        the fraction of routed tokens beyond their expert's capacity (C > 0).
struct MoeLoad {
  std::vector<double> rank_share;
  double load = 1, dropped = 0;
};
MoeLoad moe_load(const MoeConfig& m, int ep);

// The forward ops of an MoE layer (transformer.hpp): the dense layer's attention half, the
// shared experts (tensor-parallel as a dense MLP), the router, the tokens permuted and
// dispatched to their experts' ranks (all-to-all over the expert-parallel group), the
// rank's E/ep experts as grouped GEMMs over the busiest rank's tokens (MoeLoad::load: every
// rank waits for it at the combine), the combine all-to-all and the weighted un-permute.
// With tp > 1 the tokens enter on their sequence-parallel shard (s/t per rank; Megatron-Core
// requires sequence parallelism for MoE with tensor parallelism) and the experts are not
// split over tp. With expert tensor parallelism etp > 1 (Megatron-Core's
// MoEAlltoAllTokenDispatcher) each expert's MLP is split over the etp ranks of an expert
// tensor group (its first GEMM by columns, the second by rows: f/etp inner columns each);
// the tokens dispatched to them are all-gathered over the group, so each rank computes
// etp times the tokens at 1/etp of the width -- the same FLOPs per rank as etp = 1, on
// 1/etp of the weights -- and the partial outputs are reduce-scattered before the combine.
std::vector<LayerOp> moe_layer_ops(const TransformerConfig& c, const ShardShape& s);

// Activation bytes one layer keeps for its backward pass, summed over its ops: everything
// (none), everything but the score tensors (selective recomputation, or a fused attention
// kernel that never stores them), or only the layer input (full recomputation, 2 s b h).
// `moe`: of an MoE layer.
Bytes layer_activation_bytes(const TransformerConfig& c, const ShardShape& s, Recompute r, bool moe = false);

}  // namespace hcsim

namespace hcsim {
// Input embedding lookup (stage 0) and the head: final norm, LM head GEMM, loss (last stage).
std::vector<LayerOp> embedding_ops(const TransformerConfig& c, const ShardShape& s);
std::vector<LayerOp> head_ops(const TransformerConfig& c, const ShardShape& s);
}  // namespace hcsim
