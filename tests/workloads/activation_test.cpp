// Activation memory per layer summed over the layer's ops (what each op keeps for its
// backward pass) against Korthikanti et al. 2022, Table 2, for each of its six variants.
#include <gtest/gtest.h>

#include "workloads/formulas.hpp"
#include "workloads/transformer.hpp"
#include "model_configs.hpp"

namespace hcsim {
namespace {

TransformerConfig gpt3() { return test::gpt3_175b(); }

double from_ops(int t, bool sp, Recompute r, int b = 1) {
  ShardShape s{b, t, sp, /*flash_attention=*/false, DType::bf16};
  return layer_activation_bytes(gpt3(), s, r).value();
}

double table2(int t, bool sp, Recompute r, int b = 1) {
  return formulas::activation_bytes_per_layer(2048, b, 12288, 96, t, sp, r).value();
}

TEST(ActivationMemory, NoParallelism) { EXPECT_DOUBLE_EQ(from_ops(1, false, Recompute::none), table2(1, false, Recompute::none)); }
TEST(ActivationMemory, TensorParallel) { EXPECT_DOUBLE_EQ(from_ops(8, false, Recompute::none), table2(8, false, Recompute::none)); }
TEST(ActivationMemory, TensorAndSequenceParallel) { EXPECT_DOUBLE_EQ(from_ops(8, true, Recompute::none), table2(8, true, Recompute::none)); }
TEST(ActivationMemory, TensorParallelSelectiveRecompute) {
  EXPECT_DOUBLE_EQ(from_ops(8, false, Recompute::selective), table2(8, false, Recompute::selective));
}
TEST(ActivationMemory, TensorSequenceParallelSelectiveRecompute) {
  EXPECT_DOUBLE_EQ(from_ops(8, true, Recompute::selective, 2), table2(8, true, Recompute::selective, 2));
}
TEST(ActivationMemory, FullRecompute) { EXPECT_DOUBLE_EQ(from_ops(8, true, Recompute::full), table2(8, true, Recompute::full)); }

TEST(ActivationMemory, FullRecomputeKeepsTheInputAsSequenceParallelismSplitsIt) {
  // The layer's input is all full recomputation keeps (Megatron-LM's CheckpointFunction):
  // 2 s b h bytes (bf16), or under sequence parallelism the rank's s/t tokens of it, 2 s b h / t
  // (GPT-3: s 2048, h 12288, b 2, t 8). Context parallelism splits s as well.
  const double sbh = 2048.0 * 2 * 12288;
  EXPECT_DOUBLE_EQ(from_ops(8, false, Recompute::full, 2), 2 * sbh);
  EXPECT_DOUBLE_EQ(from_ops(8, true, Recompute::full, 2), 2 * sbh / 8);
  ShardShape cp{2, 8, true, false, DType::bf16, /*cp=*/4};
  EXPECT_DOUBLE_EQ(layer_activation_bytes(gpt3(), cp, Recompute::full).value(), 2 * sbh / 8 / 4);
}

TEST(ActivationMemory, SelectiveSavesSeventyPercentForGpt3) {
  // Korthikanti §5: selective recomputation saves 70 % of activation memory for GPT-3 (TP 8, SP).
  const double saved = 1.0 - from_ops(8, true, Recompute::selective) / from_ops(8, true, Recompute::none);
  EXPECT_NEAR(saved, 0.70, 0.01);
}

TEST(ActivationMemory, FlashAttentionKeepsNoScores) {
  ShardShape flash{1, 8, true, true, DType::bf16};
  EXPECT_DOUBLE_EQ(layer_activation_bytes(gpt3(), flash, Recompute::none).value(), table2(8, true, Recompute::selective));
}

}  // namespace
}  // namespace hcsim
