// The per-step work around the layers, as Megatron-LM runs it: the optimizer step's passes
// (megatron/optimizer/optimizer.py, MixedPrecisionOptimizer.step), the gradients'
// datatype (strategy.main_grads: Megatron-LM's arguments.py rule for bf16), separate
// per-tensor gradient accumulation (the 2021 DDP hook main_grad.add_(grad)) and the
// vocab-parallel cross entropy (megatron/mpu/cross_entropy.py). Expected values are the
// byte counts of those code paths (workloads/items.hpp, transformer_ops.cpp).
#include <gtest/gtest.h>

#include "../support/test_device.hpp"
#include "../support/test_lowering.hpp"
#include "model_configs.hpp"
#include "workloads/items.hpp"
#include "workloads/lowering.hpp"
#include "workloads/step_plan.hpp"

namespace hcsim {
namespace {

TransformerConfig gpt_opt(int layers) { return test::gpt_config(layers, 1024, 16, 1024, 512); }

TEST(OptimizerStep, BytesPerParameterFollowMegatronsMixedPrecisionStep) {
  const double shard = 1e6, params = 8e6;
  // bf16 with fp32 main gradients: no cast; gradient norm 4, Adam 28 (read weight, gradient,
  // m, v; write weight, m, v), fp32 weights back to bf16 4 + 2; the whole buffer zeroed (4).
  const Kernel bf16 = optimizer_kernel(shard, params, DType::bf16, 4.0);
  EXPECT_DOUBLE_EQ(bf16.bytes.value(), shard * (4 + 28 + 6) + params * 4);
  EXPECT_EQ(bf16.launches, 4);
  // fp16 with fp16 gradients (Megatron-LM 2021): the cast to fp32 main gradients 2 + 4, the
  // unscale and inf check 4 + 4, then as above; the fp16 buffer zeroed (2).
  const Kernel fp16 = optimizer_kernel(shard, params, DType::fp16, 2.0);
  EXPECT_DOUBLE_EQ(fp16.bytes.value(), shard * (6 + 8 + 4 + 28 + 6) + params * 2);
  EXPECT_EQ(fp16.launches, 6);
  // fp32 training: no master copy, no cast.
  const Kernel fp32 = optimizer_kernel(shard, params, DType::fp32, 4.0);
  EXPECT_DOUBLE_EQ(fp32.bytes.value(), shard * 32 + params * 4);
  EXPECT_EQ(fp32.launches, 3);
}

TEST(OptimizerStep, MainGradientsAreFp32ForBf16AndFp8WithoutZero3) {
  StrategySpec st;
  EXPECT_EQ(grad_element_bytes(st, DType::bf16), 4.0);
  EXPECT_EQ(grad_element_bytes(st, DType::fp8), 4.0);
  EXPECT_EQ(grad_element_bytes(st, DType::fp16), 2.0);
  EXPECT_EQ(grad_element_bytes(st, DType::fp32), 4.0);
  st.zero = 3;  // PyTorch FSDP2's default reduce_dtype: the parameters'
  EXPECT_EQ(grad_element_bytes(st, DType::bf16), 2.0);
  st.main_grads = MainGrads::fp32;
  EXPECT_EQ(grad_element_bytes(st, DType::bf16), 4.0);
  st.zero = 0;
  st.main_grads = MainGrads::model;
  EXPECT_EQ(grad_element_bytes(st, DType::bf16), 2.0);
}

double chunk_bytes(const std::vector<Item>& items) {
  double b = 0;
  for (const Item& it : items)
    if (it.kind == Item::Kind::compute) b += it.bytes.value();
  return b;
}

TEST(GradAccumulation, SeparateAddsOneKernelPerTensorReadingTheGradientAndTheAccumulator) {
  register_builtin_schedules();
  const TransformerConfig c = gpt_opt(2);
  WorkloadSpec w;
  w.global_batch = 4;
  w.precision = DType::fp16;
  StrategySpec fused, separate;
  fused.tp = separate.tp = 2;
  separate.grad_accumulation = GradAccumulation::separate;
  testing::TestDevice dev;
  auto sched = pipeline_schedules().get("1f1b", "").make(Params());
  const ChunkItems a = build_chunk_items(testing::uniform_lowering(c, fused, w, *sched, dev), dev, 2, true, true);
  const ChunkItems b = build_chunk_items(testing::uniform_lowering(c, separate, w, *sched, dev), dev, 2, true, true);
  // One add per layer and one for the embedding (tied: the head adds into it): each reads
  // the fp16 gradient (2 B) and reads and writes the fp16 accumulator (2 + 2 B) of its
  // P/t parameters (P = 12 h^2 + 13 h per layer; embedding V h + s h).
  const double h = 1024, t = 2, V = 1024, s = 512;
  const double layer = (12 * h * h + 13 * h) / t, emb = (V * h + s * h) / t;
  EXPECT_EQ(b.bwd.size(), a.bwd.size() + 3);
  EXPECT_NEAR(chunk_bytes(b.bwd) - chunk_bytes(a.bwd), 6.0 * (2 * layer + emb), 1e-6);
  EXPECT_DOUBLE_EQ(chunk_bytes(b.fwd), chunk_bytes(a.fwd));
  // Every micro-batch adds: over the lowered step's 4 micro-batches the backward tasks
  // of tensor-parallel rank 0 move 4 times those bytes more.
  auto backward_bytes = [&](const StrategySpec& st) {
    const TaskGraph g = lower_training_step(testing::uniform_lowering(c, st, w, *sched, dev));
    double n = 0;
    for (const Task& task : g.tasks())
      if (task.kind == TaskKind::compute && task.phase == Phase::backward && task.device == 0) n += task.bytes.value();
    return n;
  };
  EXPECT_NEAR(backward_bytes(separate) - backward_bytes(fused), 4 * 6.0 * (2 * layer + emb), 1e-3);
}

TEST(CrossEntropy, UnfusedIsMegatronsSixPassesInFp32FusedIsTwo) {
  const TransformerConfig c = gpt_opt(1);
  ShardShape s;
  s.micro_batch = 2;
  s.tp = 4;
  s.dtype = DType::bf16;
  auto ce = [&](const std::vector<LayerOp>& ops) {
    for (const LayerOp& op : ops)
      if (std::string_view(op.name) == "cross_entropy") return op;
    ADD_FAILURE() << "no cross_entropy op";
    return ops.front();
  };
  const double logits = 2.0 * 512 * (1024 / 4);  // b s x V/t
  const LayerOp unfused = ce(head_ops(c, s));
  // cast 2 + 4, max 4, subtract 8, exp 8, sum 4, divide 8 (34 + e); backward scale 8, cast 4 + e.
  EXPECT_DOUBLE_EQ(unfused.kernel.bytes.value(), logits * 36);
  EXPECT_EQ(unfused.kernel.launches, 6);
  EXPECT_DOUBLE_EQ(unfused.backward_bytes.value(), logits * 14);
  EXPECT_EQ(unfused.backward_launches, 2);
  s.fused_cross_entropy = true;
  const LayerOp fused = ce(head_ops(c, s));
  // Two reads and one write of the bf16 logits; backward reads and writes them once.
  EXPECT_DOUBLE_EQ(fused.kernel.bytes.value(), logits * 6);
  EXPECT_EQ(fused.kernel.launches, 2);
  EXPECT_DOUBLE_EQ(fused.backward_bytes.value(), logits * 4);
  EXPECT_EQ(fused.backward_launches, 1);
}

}  // namespace
}  // namespace hcsim
