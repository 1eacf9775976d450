#pragma once
// Transformer model family: GPT (Brown et al. 2020; Megatron-LM, Narayanan et al. SC21),
// LLaMA (Touvron et al. 2023: RMSNorm, SwiGLU, rotary embeddings, grouped-query attention)
// and BERT (Devlin et al. 2019). A model is its dimensions; transformer_layer_ops() gives the
// per-layer forward op list (shapes, FLOPs, bytes) for one tensor-parallel shard, from which
// backward and recomputation are derived. Parameter count follows Narayanan et al. eq. 2:
// P = 12 l h^2 (1 + 13/(12h) + (V+s)/(12 l h)) for GPT (learned positions, 4h MLP).

#include <cstdint>
#include <string>
#include <vector>

#include "models/kernel.hpp"
#include "workloads/strategy.hpp"
#include "sim/core/registry.hpp"

namespace hcsim {

struct TransformerConfig {
  std::string family;          // "gpt", "llama", "bert"
  std::int64_t layers = 0;     // l
  std::int64_t hidden = 0;     // h
  std::int64_t heads = 0;      // a
  std::int64_t kv_heads = 0;   // grouped-query attention (= heads for MHA)
  std::int64_t ffn_hidden = 0; // MLP inner size (4h for GPT)
  std::int64_t vocab = 0;      // V
  std::int64_t seq_len = 0;    // s
  bool gated_mlp = false;      // SwiGLU: three matrices instead of two
  bool rmsnorm = false;        // RMSNorm instead of LayerNorm
  bool learned_positions = true;  // GPT/BERT position table (s x h); LLaMA uses rotary
  bool tied_embeddings = true;    // LM head shares the embedding matrix
  bool causal = true;

  [[nodiscard]] std::int64_t head_dim() const { return hidden / heads; }
  // Parameters of one transformer layer (weights and biases).
  [[nodiscard]] double layer_params() const;
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
  Bytes backward_bytes{};           // HBM traffic of the backward pass; 0: the general rule (items.cpp)
  int backward_launches = 0;        // kernels of the backward pass; 0: as many as forward
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
};
ShardShape shard_shape(const WorkloadSpec& w, const StrategySpec& st);

std::vector<LayerOp> transformer_layer_ops(const TransformerConfig& c, const ShardShape& s);

// Activation bytes one layer keeps for its backward pass, summed over its ops: everything
// (none), everything but the score tensors (selective recomputation, or a fused attention
// kernel that never stores them), or only the layer input (full recomputation, 2 s b h).
Bytes layer_activation_bytes(const TransformerConfig& c, const ShardShape& s, Recompute r);

}  // namespace hcsim

namespace hcsim {
// Input embedding lookup (stage 0) and the head: final norm, LM head GEMM, loss (last stage).
std::vector<LayerOp> embedding_ops(const TransformerConfig& c, const ShardShape& s);
std::vector<LayerOp> head_ops(const TransformerConfig& c, const ShardShape& s);
}  // namespace hcsim
