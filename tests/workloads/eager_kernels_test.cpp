// Eager-mode kernels (strategy.fused_kernels false; workloads/transformer_ops.cpp header):
// the bytes and launches of a Llama layer's norms, rotary embedding, SwiGLU and residual
// adds as PyTorch runs Hugging Face-style modules one tensor op at a time, against the
// fused kernels of Megatron / Transformer Engine. Closed forms, e = 2 bytes (bf16).
#include <string_view>

#include <gtest/gtest.h>

#include "model_configs.hpp"
#include "workloads/transformer.hpp"

namespace hcsim {
namespace {

// A small Llama: h 1024, 16 heads, 4 key/value heads (head dim 64), ffn 2816, s 512.
TransformerConfig llama() {
  TransformerConfig c = test::gpt_config(1, 1024, 16, 32000, 512);
  c.family = "llama";
  c.kv_heads = 4;
  c.ffn_hidden = 2816;
  c.gated_mlp = c.rmsnorm = true;
  c.learned_positions = c.tied_embeddings = false;
  return c;
}

const LayerOp& op(const std::vector<LayerOp>& ops, std::string_view name) { return test::layer_op(ops, name); }

TEST(EagerKernels, LlamaNormsRopeSwigluAndResidualsAsPytorchRunsThem) {
  const TransformerConfig c = llama();
  ShardShape s;
  s.micro_batch = 2;
  const double t = 2.0 * 512, h = 1024, qkv = 1024 + 256, ffn = 2816;  // tokens; Q + K widths
  const std::vector<LayerOp> fused = transformer_layer_ops(c, s);
  s.fused_kernels = false;
  const std::vector<LayerOp> eager = transformer_layer_ops(c, s);
  // RMSNorm: fp32 cast (e + 4), square (8), mean (4), scale (8), cast back (4 + e), weight (2e).
  EXPECT_DOUBLE_EQ(op(fused, "norm1").kernel.bytes.value(), t * h * 4);
  EXPECT_DOUBLE_EQ(op(eager, "norm1").kernel.bytes.value(), t * h * 32);
  EXPECT_EQ(op(eager, "norm2").kernel.launches, 7);
  EXPECT_DOUBLE_EQ(op(eager, "norm1").saved_bytes.value(), t * h * 6);  // fp32 input + bf16 product input
  // RoPE on Q and K: x cos 2e, negate e, concatenate 2e, x sin 2e, add 3e.
  EXPECT_DOUBLE_EQ(op(fused, "rope").kernel.bytes.value(), t * qkv * 4);
  EXPECT_DOUBLE_EQ(op(eager, "rope").kernel.bytes.value(), t * qkv * 20);
  EXPECT_EQ(op(eager, "rope").kernel.launches, 10);
  // SwiGLU: SiLU 2e, product 3e; the product keeps both inputs.
  EXPECT_DOUBLE_EQ(op(fused, "activation").kernel.bytes.value(), t * ffn * 6);
  EXPECT_DOUBLE_EQ(op(eager, "activation").kernel.bytes.value(), t * ffn * 10);
  EXPECT_EQ(op(eager, "activation").kernel.launches, 2);
  EXPECT_DOUBLE_EQ(op(eager, "activation").saved_bytes.value(), t * ffn * 6);
  // Residual add without dropout: read two, write one; no mask kept.
  EXPECT_DOUBLE_EQ(op(eager, "dropout_residual1").kernel.bytes.value(), t * h * 6);
  EXPECT_DOUBLE_EQ(op(eager, "dropout_residual1").saved_bytes.value(), 0.0);
  // The GEMMs and attention are the same kernels either way.
  EXPECT_DOUBLE_EQ(op(eager, "qkv").kernel.flops.value(), op(fused, "qkv").kernel.flops.value());
  EXPECT_DOUBLE_EQ(op(eager, "attention").kernel.bytes.value(), op(fused, "attention").kernel.bytes.value());
  // The final norm is eager too.
  EXPECT_DOUBLE_EQ(op(head_ops(c, s), "final_norm").kernel.bytes.value(), t * h * 32);
}

TEST(EagerKernels, GptLayerNormIsOneNativeKernelAndDropoutIsItsOwn) {
  const TransformerConfig c = test::gpt_config(1, 1024, 16, 1024, 512);
  ShardShape s;
  const double t = 512, h = 1024;
  const std::vector<LayerOp> fused = transformer_layer_ops(c, s);
  s.fused_kernels = false;
  const std::vector<LayerOp> eager = transformer_layer_ops(c, s);
  EXPECT_DOUBLE_EQ(op(eager, "norm1").kernel.bytes.value(), op(fused, "norm1").kernel.bytes.value());
  EXPECT_EQ(op(eager, "norm1").kernel.launches, 1);
  // Megatron's bias-dropout-add 3e + 1; eager dropout (2e + 1) then add (3e).
  EXPECT_DOUBLE_EQ(op(fused, "dropout_residual2").kernel.bytes.value(), t * h * 7);
  EXPECT_DOUBLE_EQ(op(eager, "dropout_residual2").kernel.bytes.value(), t * h * 11);
  EXPECT_EQ(op(eager, "dropout_residual2").kernel.launches, 2);
}

}  // namespace
}  // namespace hcsim
