// Total FLOPs of a lowered training step against Megatron-LM's closed forms.
#include <gtest/gtest.h>

#include "../support/test_device.hpp"
#include "workloads/formulas.hpp"
#include "workloads/lowering.hpp"

namespace hcsim {
namespace {

struct Sums {
  double hardware = 0, model = 0;
};

Sums lower_and_sum(const TransformerConfig& c, StrategySpec st, std::int64_t batch) {
  register_builtin_schedules();
  WorkloadSpec w;
  w.global_batch = batch;
  w.micro_batch = 1;
  testing::TestDevice dev;
  LoweringInput in;
  in.model = &c;
  in.strategy = &st;
  in.workload = &w;
  auto sched = pipeline_schedules().get(st.schedule, "").make(Params());
  in.schedule = sched.get();
  in.stage_device.assign(static_cast<std::size_t>(st.pp), &dev);
  in.layers_per_stage.assign(static_cast<std::size_t>(st.pp), static_cast<int>(c.layers / st.pp));
  TaskGraph g = lower_training_step(in);
  Sums s;
  for (const Task& t : g.tasks()) {
    s.hardware += t.flops.value();
    s.model += t.model_flops.value();
  }
  return s;
}

TransformerConfig gpt_1_7b() {
  // Narayanan et al. SC21 Table 1, first row: l = 24, h = 2304, a = 24, V = 51200, s = 2048.
  TransformerConfig c;
  c.family = "gpt";
  c.layers = 24;
  c.hidden = 2304;
  c.heads = 24;
  c.kv_heads = 24;
  c.ffn_hidden = 4 * 2304;
  c.vocab = 51200;
  c.seq_len = 2048;
  return c;
}

TEST(Flops, FullRecomputeMatchesMegatronEq3) {
  StrategySpec st;
  st.dp = 2; st.tp = 2; st.pp = 2;
  st.recompute = Recompute::full;
  st.flash_attention = false;  // eq. 3 counts the attention Megatron ran in 2021: unfused, the whole square
  const auto c = gpt_1_7b();
  const Sums s = lower_and_sum(c, st, 8);
  // 96 B s l h^2 (1 + s/(6h) + V/(16 l h)), Narayanan et al. SC21 eq. 3.
  const double expect = formulas::megatron_flops_full_recompute(8, 2048, 24, 2304, 51200).value();
  EXPECT_NEAR(s.hardware / expect, 1.0, 1e-9);
}

TEST(Flops, NoRecomputeMatchesKorthikantiModelFlops) {
  StrategySpec st;
  st.dp = 2; st.tp = 2; st.pp = 2;
  st.flash_attention = false;  // unfused attention executes the whole score square
  const auto c = gpt_1_7b();
  const Sums s = lower_and_sum(c, st, 8);
  // 72 B l s h^2 (1 + s/(6h) + V/(12 h l)), Korthikanti et al. 2022 eq. 8.
  const double expect = formulas::model_flops(8, 2048, 24, 2304, 51200).value();
  EXPECT_NEAR(s.hardware / expect, 1.0, 1e-9);
  EXPECT_NEAR(s.model / expect, 1.0, 1e-9);
}

TEST(Flops, RecomputationAddsHardwareButNotModelFlops) {
  StrategySpec st;
  st.pp = 2;
  st.recompute = Recompute::selective;
  st.flash_attention = false;
  const auto c = gpt_1_7b();
  const Sums s = lower_and_sum(c, st, 4);
  const double model = formulas::model_flops(4, 2048, 24, 2304, 51200).value();
  EXPECT_NEAR(s.model / model, 1.0, 1e-9);
  // Selective recomputation reruns the attention core's two batched GEMMs, 4 b s^2 h per
  // layer (Korthikanti §5): hardware = model + 4 B s^2 h l.
  const double extra = 4.0 * 4 * 2048.0 * 2048.0 * 2304.0 * 24;
  EXPECT_NEAR(s.hardware / (model + extra), 1.0, 1e-9);
}

TEST(Flops, FusedCausalAttentionSkipsMaskedTilesAndRecomputesScoresInBackward) {
  StrategySpec st;
  st.dp = 2; st.tp = 2; st.pp = 2;
  st.flash_attention = true;
  const auto c = gpt_1_7b();
  const Sums s = lower_and_sum(c, st, 8);
  // Model FLOPs are Korthikanti eq. 8 whatever the kernel. The attention core's full work is
  // 4 B s^2 h l forward and 8 B s^2 h l backward; a fused causal kernel computes the
  // n(n + 1)/2 of n x n tiles of 128 rows on or below the diagonal (n = 2048/128 = 16:
  // 17/32), forward 4 B s^2 h l, backward 2.5x that (it recomputes S = QK^T; Dao et al.
  // 2022 section 3.1).
  const double model = formulas::model_flops(8, 2048, 24, 2304, 51200).value();
  EXPECT_NEAR(s.model / model, 1.0, 1e-9);
  const double attention = 8 * 2048.0 * 2048.0 * 2304.0 * 24;  // B s^2 h l
  const double expect = model - 12.0 * attention + (4.0 + 10.0) * (17.0 / 32.0) * attention;
  EXPECT_NEAR(s.hardware / expect, 1.0, 1e-9);
}

}  // namespace
}  // namespace hcsim
