// FP8 casts of the GEMM inputs (workloads/transformer_ops.cpp header, docs/models.md "FP8"):
// current scaling reads each input once for its amax and again for the cast, which writes
// the fp8 tensor in both layouts (2e + 2g bytes an element); delayed scaling casts in one
// pass (e + 2g), and a norm that feeds its GEMM writes the fp8 tensor itself, in both
// layouts (Transformer Engine's LayerNormLinear). Closed forms, e = 2 bytes (bf16 storage),
// g = 1 byte (fp8).
#include <string_view>
#include <vector>

#include <gtest/gtest.h>

#include "../support/moe_config.hpp"
#include "model_configs.hpp"
#include "workloads/transformer.hpp"

namespace hcsim {
namespace fp8_casts_test {

// llama_gqa: h 1024, Q width 1024, ffn 2816, s 1024; b 2: 2048 tokens.
constexpr double kTokens = 2048, kH = 1024, kQ = 1024, kFfn = 2816;

ShardShape fp8_shape(bool delayed) {
  ShardShape s;
  s.micro_batch = 2;
  s.dtype = DType::fp8;
  s.fp8_delayed = delayed;
  s.fp8_transposes = true;  // a Hopper: TN-only fp8 GEMMs
  return s;
}

bool has(const std::vector<LayerOp>& ops, std::string_view name) {
  for (const LayerOp& o : ops)
    if (name == o.name) return true;
  return false;
}

const LayerOp& op(const std::vector<LayerOp>& ops, std::string_view name) { return test::layer_op(ops, name); }

TEST(Fp8Casts, CurrentScalingReadsTheAmaxThenCastsEachGemmInput) {
  const std::vector<LayerOp> ops = transformer_layer_ops(test::llama_gqa(1), fp8_shape(false));
  // amax read e, then read e and write g twice (row-wise and transposed): 6 B an element of
  // each GEMM's input.
  EXPECT_DOUBLE_EQ(op(ops, "fp8_cast_qkv").kernel.bytes.value(), kTokens * kH * 6);
  EXPECT_DOUBLE_EQ(op(ops, "fp8_cast_attn_proj").kernel.bytes.value(), kTokens * kQ * 6);
  EXPECT_DOUBLE_EQ(op(ops, "fp8_cast_mlp_up").kernel.bytes.value(), kTokens * kH * 6);
  EXPECT_DOUBLE_EQ(op(ops, "fp8_cast_mlp_down").kernel.bytes.value(), kTokens * kFfn * 6);
  // The norms write bf16 (read e, write e) and leave the backward to the general rule.
  EXPECT_DOUBLE_EQ(op(ops, "norm1").kernel.bytes.value(), kTokens * kH * 4);
  EXPECT_DOUBLE_EQ(op(ops, "norm1").backward_bytes.value(), 0.0);
}

TEST(Fp8Casts, DelayedScalingCastsInOnePassAndTheNormWritesTheFp8Input) {
  const std::vector<LayerOp> cur = transformer_layer_ops(test::llama_gqa(1), fp8_shape(false));
  const std::vector<LayerOp> ops = transformer_layer_ops(test::llama_gqa(1), fp8_shape(true));
  // The QKV and MLP-up inputs come from the norms: no cast kernel of their own.
  EXPECT_FALSE(has(ops, "fp8_cast_qkv"));
  EXPECT_FALSE(has(ops, "fp8_cast_mlp_up"));
  for (const char* norm : {"norm1", "norm2"}) {
    const LayerOp& n = op(ops, norm);
    EXPECT_DOUBLE_EQ(n.kernel.bytes.value(), kTokens * kH * 4) << norm;  // read e, write g twice
    EXPECT_EQ(n.kernel.launches, 1) << norm;
    // Backward: the bf16 norm's (twice 2e) and the output gradient's one-pass cast (twice e + 2g).
    EXPECT_DOUBLE_EQ(n.backward_bytes.value(), kTokens * kH * (8 + 8)) << norm;
    EXPECT_EQ(n.backward_launches, 2) << norm;
    EXPECT_DOUBLE_EQ(n.saved_bytes.value(), op(cur, norm).saved_bytes.value()) << norm;
  }
  // The attention output and the activation are cast by a kernel of their own, one pass.
  EXPECT_DOUBLE_EQ(op(ops, "fp8_cast_attn_proj").kernel.bytes.value(), kTokens * kQ * 4);
  EXPECT_DOUBLE_EQ(op(ops, "fp8_cast_mlp_down").kernel.bytes.value(), kTokens * kFfn * 4);
  // The GEMMs are the same kernels under either recipe.
  EXPECT_DOUBLE_EQ(op(ops, "mlp_up").kernel.flops.value(), op(cur, "mlp_up").kernel.flops.value());
}

TEST(Fp8Casts, WithoutTheTransposedCopyEachQuantisationWritesOneFp8Tensor) {
  // fp8 GEMMs that take any layout (Blackwell): 2e + g = 5 B under current scaling, e + g =
  // 3 B under delayed, and a norm that writes the fp8 input reads e and writes g.
  ShardShape cur = fp8_shape(false), del = fp8_shape(true);
  cur.fp8_transposes = del.fp8_transposes = false;
  const std::vector<LayerOp> a = transformer_layer_ops(test::llama_gqa(1), cur);
  const std::vector<LayerOp> b = transformer_layer_ops(test::llama_gqa(1), del);
  EXPECT_DOUBLE_EQ(op(a, "fp8_cast_qkv").kernel.bytes.value(), kTokens * kH * 5);
  EXPECT_DOUBLE_EQ(op(a, "fp8_cast_mlp_down").kernel.bytes.value(), kTokens * kFfn * 5);
  EXPECT_DOUBLE_EQ(op(b, "fp8_cast_attn_proj").kernel.bytes.value(), kTokens * kQ * 3);
  EXPECT_DOUBLE_EQ(op(b, "norm1").kernel.bytes.value(), kTokens * kH * 3);
  // Backward: the bf16 norm's (twice 2e) and the output gradient's one-pass cast (twice e + g).
  EXPECT_DOUBLE_EQ(op(b, "norm1").backward_bytes.value(), kTokens * kH * (8 + 6));
}

TEST(Fp8Casts, DelayedScalingInEagerModeCastsBesideThePytorchNorm) {
  ShardShape s = fp8_shape(true);
  s.fused_kernels = false;
  const std::vector<LayerOp> ops = transformer_layer_ops(test::llama_gqa(1), s);
  EXPECT_DOUBLE_EQ(op(ops, "fp8_cast_qkv").kernel.bytes.value(), kTokens * kH * 4);
  EXPECT_EQ(op(ops, "norm1").kernel.launches, 7);
  EXPECT_DOUBLE_EQ(op(ops, "norm1").backward_bytes.value(), 0.0);
}

TEST(Fp8Casts, AnMoeLayersNormFeedsTheRouterAndItsExpertsCastTheirTokens) {
  const TransformerConfig c = testing::small_moe();
  ShardShape cur = fp8_shape(false), del = fp8_shape(true);
  const std::vector<LayerOp> a = moe_layer_ops(c, cur), b = moe_layer_ops(c, del);
  // The attention half as a dense layer's: norm1 writes fp8 for QKV; norm2 feeds the router
  // in bf16 and writes bf16 under either recipe.
  EXPECT_DOUBLE_EQ(op(b, "norm1").kernel.bytes.value(), kTokens * kH * 4);
  EXPECT_DOUBLE_EQ(op(b, "norm2").kernel.bytes.value(), kTokens * kH * 4);
  EXPECT_DOUBLE_EQ(op(a, "norm2").kernel.bytes.value(), kTokens * kH * 4);
  // The routed tokens' casts: 6 B an element under current scaling, 4 B under delayed.
  for (const char* cast : {"fp8_cast_expert_up", "fp8_cast_expert_down"}) {
    EXPECT_DOUBLE_EQ(op(b, cast).kernel.bytes.value() * 6, op(a, cast).kernel.bytes.value() * 4) << cast;
  }
  // small_moe: top 2 of 16 experts, the tokens spread evenly: 2 n rows of h into expert_up.
  EXPECT_DOUBLE_EQ(op(a, "fp8_cast_expert_up").kernel.bytes.value(), 2 * kTokens * kH * 6);
}

}  // namespace fp8_casts_test
}  // namespace hcsim
