// Memory model against the ZeRO paper and Korthikanti et al.'s Table 2.
#include <gtest/gtest.h>

#include "workloads/formulas.hpp"
#include "workloads/memory.hpp"
#include "model_configs.hpp"

namespace hcsim {
namespace {

TEST(ZeroMemory, WorkedExampleOfFigure1) {
  // Rajbhandari et al. SC20 Fig. 1: Psi = 7.5B, N_d = 64, K = 12: 120, 31.4, 16.6, 1.9 GB.
  const double psi = 7.5e9;
  EXPECT_NEAR(formulas::zero_model_state_bytes(psi, 64, 0).value() / 1e9, 120.0, 0.05);
  EXPECT_NEAR(formulas::zero_model_state_bytes(psi, 64, 1).value() / 1e9, 31.4, 0.05);
  EXPECT_NEAR(formulas::zero_model_state_bytes(psi, 64, 2).value() / 1e9, 16.6, 0.05);
  EXPECT_NEAR(formulas::zero_model_state_bytes(psi, 64, 3).value() / 1e9, 1.9, 0.05);
}

TransformerConfig small() { return test::gpt_config(8, 1024, 16, 32000, 1024); }

TEST(StageMemory, ModelStatesFollowZeroStages) {
  const auto c = small();
  WorkloadSpec w;
  StageShape sh{0, 8, true, true, 1};
  for (int stage = 0; stage <= 3; ++stage) {
    StrategySpec st;
    st.dp = 8;
    st.zero = stage;
    st.main_grads = MainGrads::model;  // ZeRO §5's premise: 16-bit gradients
    const auto m = stage_memory(c, st, w, sh);
    const double psi = stage_params_per_device(c, st, sh);
    const double states = (m.weights + m.gradients + m.optimizer).value();
    // Mixed-precision Adam: 16 bytes per parameter unpartitioned (ZeRO §5), partitioned by stage.
    EXPECT_NEAR(states, formulas::zero_model_state_bytes(psi, 8, stage).value(), 1.0) << "stage " << stage;
  }
  StrategySpec dp;
  dp.dp = 8;
  dp.main_grads = MainGrads::model;
  const auto m16 = stage_memory(c, dp, w, sh);
  EXPECT_NEAR((m16.weights + m16.gradients + m16.optimizer).value() / stage_params_per_device(c, dp, sh), 16.0, 1e-9);
  // bf16 with its fp32 main-gradient buffer (Megatron-LM's rule, strategy.main_grads auto):
  // 2 + 4 + 12 = 18 bytes per parameter.
  dp.main_grads = MainGrads::automatic;
  const auto m = stage_memory(c, dp, w, sh);
  EXPECT_NEAR((m.weights + m.gradients + m.optimizer).value() / stage_params_per_device(c, dp, sh), 18.0, 1e-9);
  EXPECT_NEAR(m.gradients.value() / stage_params_per_device(c, dp, sh), 4.0, 1e-12);
  // ZeRO-2 (a DeepSpeed stage) keeps its gradient shard in the model's datatype, as
  // DeepSpeed's grad_accum_dtype defaults to under ZeRO: 2 bytes a parameter over 8 ranks.
  dp.zero = 2;
  const auto z2 = stage_memory(c, dp, w, sh);
  EXPECT_NEAR(z2.gradients.value() / stage_params_per_device(c, dp, sh), 2.0 / 8, 1e-12);
}

TEST(StageMemory, ParameterCountMatchesNarayananEq2) {
  // P = 12 l h^2 (1 + 13/(12h) + (V+s)/(12 l h)) for GPT with learned positions.
  const auto c = small();
  const double l = 8, h = 1024, V = 32000, s = 1024;
  const double expect = 12 * l * h * h * (1 + 13 / (12 * h) + (V + s) / (12 * l * h));
  EXPECT_NEAR(c.total_params() / expect, 1.0, 1e-12);
}

TEST(StageMemory, OneFOneBKeepsPMicroBatchesGPipeKeepsM) {
  const auto c = small();
  WorkloadSpec w;
  StrategySpec st;
  st.pp = 4;
  st.flash_attention = false;
  StageShape a{0, 2, false, false, 4}, b{0, 2, false, false, 16};
  const double per_layer = formulas::activation_bytes_per_layer(1024, 1, 1024, 16, 1, false, Recompute::none).value();
  EXPECT_DOUBLE_EQ(stage_memory(c, st, w, a).activations.value(), per_layer * 2 * 4);
  EXPECT_DOUBLE_EQ(stage_memory(c, st, w, b).activations.value(), per_layer * 2 * 16);
}

TEST(StageMemory, UndeallocatedPipelineOutputsStayOnePerChunkInFlight) {
  // Megatron-LM before January 2022 kept each chunk's output (b s h, 2 B at bf16) until its
  // backward; deallocate_output_tensor frees it once sent (the default). b = 1, s = 1024,
  // h = 1024 (small()); 4 micro-batches in flight; v = 2 chunks per stage.
  const auto c = small();
  WorkloadSpec w;
  StrategySpec st;
  st.pp = 4;
  st.interleave = 2;
  const StageShape first{0, 2, true, false, 4, 0, 2}, last{3, 2, false, true, 4, 0, 2};  // 2 chunks
  const double out = 1.0 * 1024 * 1024 * 2;
  StrategySpec kept = st;
  kept.deallocate_pipeline_outputs = false;
  EXPECT_DOUBLE_EQ(stage_memory(c, kept, w, first).activations.value() - stage_memory(c, st, w, first).activations.value(),
                   out * 2 * 4);
  // The last stage's final chunk ends in the loss: one output per micro-batch fewer.
  EXPECT_DOUBLE_EQ(stage_memory(c, kept, w, last).activations.value() - stage_memory(c, st, w, last).activations.value(),
                   out * 1 * 4);
  // Under sequence parallelism the output holds s/t tokens.
  st.tp = kept.tp = 4;
  st.sequence_parallel = kept.sequence_parallel = true;
  EXPECT_DOUBLE_EQ(stage_memory(c, kept, w, first).activations.value() - stage_memory(c, st, w, first).activations.value(),
                   out / 4 * 2 * 4);
}

}  // namespace
}  // namespace hcsim
