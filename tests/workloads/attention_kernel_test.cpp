// The fused attention's library (strategy.attention_kernel, workloads/transformer_ops.cpp):
// "flash2" marks the attention core's fused kernel as FlashAttention-2's, which the GPU
// model runs at the device's flash2_rate (tests/models/compute/gpu_test.cpp); nothing else
// of the layer changes, and an unfused attention is not FlashAttention at all.
#include <string_view>

#include <gtest/gtest.h>

#include "model_configs.hpp"
#include "workloads/strategy.hpp"
#include "workloads/transformer.hpp"

namespace hcsim {
namespace {

TEST(AttentionKernel, Flash2MarksTheFusedAttentionCoreOnly) {
  const TransformerConfig c = test::gpt_config(1, 1024, 16, 32000, 512);
  WorkloadSpec w;
  StrategySpec st;
  EXPECT_FALSE(shard_shape(w, st).flash2);  // default: the device's own fused attention
  st.attention_flash2 = true;
  const ShardShape s = shard_shape(w, st);
  ASSERT_TRUE(s.flash2);
  const std::vector<LayerOp> flash2 = transformer_layer_ops(c, s);
  ShardShape native_shape = s;
  native_shape.flash2 = false;
  const std::vector<LayerOp> native = transformer_layer_ops(c, native_shape);
  ASSERT_EQ(flash2.size(), native.size());
  for (std::size_t i = 0; i < flash2.size(); ++i) {
    SCOPED_TRACE(flash2[i].name);
    EXPECT_EQ(flash2[i].kernel.flash2, std::string_view(flash2[i].name) == "attention");
    EXPECT_DOUBLE_EQ(flash2[i].kernel.flops.value(), native[i].kernel.flops.value());
    EXPECT_DOUBLE_EQ(flash2[i].kernel.bytes.value(), native[i].kernel.bytes.value());
  }
  ShardShape unfused = s;
  unfused.flash_attention = false;
  EXPECT_FALSE(test::layer_op(transformer_layer_ops(c, unfused), "attention").kernel.flash2);
}

}  // namespace
}  // namespace hcsim
