// Selective recomputation by op (strategy.recompute "selective-op"; workloads/transformer_ops.cpp,
// select_by_op): PyTorch's selective activation checkpointing with torchtitan's "op" policy
// (torchtitan/models/llama3/parallelize_llama.py, _save_list and _custom_policy). Per layer
// the outputs of aten.mm are kept but every second one in call order (wq, wk, wv, wo, w1,
// w3, w2: wk, wo and w3 rerun), and those of the fused attention and of the reduce-scatters;
// torchao's fp8 matmuls are aten.mm on Float8Tensor operands and follow the same rule.
// Expected values: the closed forms of that policy on a small Llama layer.
#include <gtest/gtest.h>

#include "../support/test_device.hpp"
#include "../support/test_lowering.hpp"
#include "model_configs.hpp"
#include "workloads/lowering.hpp"
#include "workloads/transformer.hpp"

namespace hcsim {
namespace selective_op_test {

// test::llama_gqa: h 1024, 16 query heads and 4 key/value heads of 64 (q 1024, kv 256 columns
// each), SwiGLU MLP of 2816, s 1024.
TransformerConfig llama_small(int layers) { return test::llama_gqa(layers); }

constexpr double kT = 1024, kH = 1024, kQ = 1024, kKv = 256, kFfn = 2816, kHeads = 16;

TEST(SelectiveOp, RerunsEverySecondMatmulInTorchtitansCallOrder) {
  const std::vector<LayerOp> ops = transformer_layer_ops(llama_small(1), ShardShape{});
  using Cols = std::array<std::int64_t, 3>;
  EXPECT_EQ(test::layer_op(ops, "qkv").op_recompute_cols, (Cols{256, 0, 0}));         // wk (2nd)
  EXPECT_EQ(test::layer_op(ops, "attn_proj").op_recompute_cols, (Cols{1024, 0, 0}));  // wo (4th)
  EXPECT_EQ(test::layer_op(ops, "mlp_up").op_recompute_cols, (Cols{2816, 0, 0}));     // w3 (6th)
  EXPECT_EQ(test::layer_op(ops, "mlp_down").op_recompute_cols, (Cols{0, 0, 0}));      // w2 (7th) kept
  // Kept, at 2 bytes: the layer's input, wq's and wv's outputs, the attention output and its
  // fp32 log-sum-exp (one per head and token), w1's and w2's outputs.
  const double kept = 2 * kT * (kH + kQ + kKv + kQ + kFfn + kH) + 4 * kHeads * kT;
  EXPECT_DOUBLE_EQ(layer_activation_bytes(llama_small(1), ShardShape{}, Recompute::op).value(), kept);
}

TEST(SelectiveOp, Fp8MatmulsFollowTheSameRule) {
  // torchao's Float8Linear calls aten.mm on Float8Tensor operands: the checkpointing mode
  // counts and saves it as any aten.mm (its output is bf16).
  ShardShape s;
  s.dtype = DType::fp8;
  const std::vector<LayerOp> fp8 = transformer_layer_ops(llama_small(1), s);
  const std::vector<LayerOp> bf16 = transformer_layer_ops(llama_small(1), ShardShape{});
  for (const char* name : {"qkv", "attn_proj", "mlp_up", "mlp_down"})
    EXPECT_EQ(test::layer_op(fp8, name).op_recompute_cols, test::layer_op(bf16, name).op_recompute_cols) << name;
  EXPECT_DOUBLE_EQ(layer_activation_bytes(llama_small(1), s, Recompute::op).value(),
                   layer_activation_bytes(llama_small(1), ShardShape{}, Recompute::op).value());
}

TEST(SelectiveOp, SequenceParallelKeepsTheReduceScattersOutputs) {
  // tp 2 with sequence parallelism: the input and the two reduce-scatter outputs are on
  // s/t tokens; the column-parallel GEMMs' outputs are on all s tokens and 1/t of the
  // columns; heads split over t.
  const ShardShape s{1, 2, true};
  const double t = 2;
  const double kept = 2 * (kT / t * kH * 3) + 2 * kT * (kQ + kKv + kQ + kFfn) / t + 2 * kT * kH + 4 * kHeads / t * kT;
  // w2's output is a partial sum over the full hidden size (before its reduce-scatter).
  EXPECT_DOUBLE_EQ(layer_activation_bytes(llama_small(1), s, Recompute::op).value(), kept);
}

TEST(SelectiveOp, TheRecomputePassRunsTheClosedFormsMatmulsAndNoAttention) {
  register_builtin_schedules();
  StrategySpec st;
  st.recompute = Recompute::op;
  WorkloadSpec w;
  w.global_batch = 1;
  w.micro_batch = 1;
  testing::TestDevice dev;
  auto sched = pipeline_schedules().get(st.schedule, "").make(Params());
  auto recompute_flops = [&](int layers) {
    const TransformerConfig c = llama_small(layers);
    const TaskGraph g = lower_training_step(testing::uniform_lowering(c, st, w, *sched, dev));
    Flops f{};
    for (const Task& t : g.tasks())
      if (t.kind == TaskKind::compute && t.phase == Phase::recompute) f += t.flops;
    return f.value();
  };
  // One layer's rerun: wk, wo and w3, 2 T h n each; elementwise ops have no FLOPs and the
  // attention's output is kept.
  const double expected = 2 * kT * kH * kKv + 2 * kT * kQ * kH + 2 * kT * kH * kFfn;
  EXPECT_DOUBLE_EQ(recompute_flops(3) - recompute_flops(2), expected);
}

}  // namespace selective_op_test
}  // namespace hcsim
