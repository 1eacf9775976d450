// Context parallelism (Megatron-Core CP; ring attention, Liu et al. ICLR 2024): activation
// memory per device is Korthikanti et al. 2022 Table 2 over cp, the step's model FLOPs are
// those of Korthikanti eq. 8 whatever cp is, and the ring moves the K/V blocks of the
// closed form below.
#include <gtest/gtest.h>

#include "../support/test_device.hpp"
#include "workloads/formulas.hpp"
#include "workloads/lowering.hpp"
#include "workloads/memory.hpp"
#include "model_configs.hpp"

namespace hcsim {
namespace {

TransformerConfig gpt3_cp() { return test::gpt3_175b(); }

double per_layer(int t, bool sp, Recompute r, int cp, bool flash = false) {
  ShardShape s{1, t, sp, flash, DType::bf16, cp};
  return layer_activation_bytes(gpt3_cp(), s, r).value();
}

TEST(ContextParallel, ActivationsPerDeviceAreTable2OverCp) {
  // Each CP rank keeps its s/cp tokens' activations (and (s/cp) x s scores): Table 2 / cp.
  for (int cp : {2, 4, 8}) {
    for (bool sp : {false, true}) {
      for (Recompute r : {Recompute::none, Recompute::selective, Recompute::full}) {
        const double table2 = formulas::activation_bytes_per_layer(2048, 1, 12288, 96, 8, sp, r).value();
        EXPECT_NEAR(per_layer(8, sp, r, cp) / (table2 / cp), 1.0, 1e-12)
            << "cp " << cp << " sp " << sp << " recompute " << recompute_name(r);
      }
    }
  }
  // A fused attention kernel keeps no scores: the selective row of Table 2, over cp.
  EXPECT_NEAR(per_layer(8, true, Recompute::none, 4, true),
              formulas::activation_bytes_per_layer(2048, 1, 12288, 96, 8, true, Recompute::selective).value() / 4, 1.0);
}

TEST(ContextParallel, StageMemoryActivationsDivideByCp) {
  StrategySpec one, four;
  one.tp = four.tp = 8;
  four.cp = 4;
  WorkloadSpec w;
  StageShape sh;
  sh.layers = 12;
  sh.in_flight = 3;
  const double a1 = stage_memory(gpt3_cp(), one, w, sh).activations.value();
  const double a4 = stage_memory(gpt3_cp(), four, w, sh).activations.value();
  EXPECT_NEAR(a4 / a1, 0.25, 1e-12);
  // Model states: the same weights on every CP rank; ZeRO-1 shards the optimizer over dp*cp.
  four.zero = one.zero = 1;
  one.dp = 4;
  EXPECT_DOUBLE_EQ(stage_memory(gpt3_cp(), four, w, sh).optimizer.value(),
                   stage_memory(gpt3_cp(), one, w, sh).optimizer.value());
}

TaskGraph lower(const TransformerConfig& c, const StrategySpec& st, std::int64_t batch) {
  register_builtin_schedules();
  WorkloadSpec w;
  w.global_batch = batch;
  w.micro_batch = 1;
  testing::TestDevice dev;
  auto sched = pipeline_schedules().get(st.schedule, "").make(Params());
  LoweringInput in;
  in.model = &c;
  in.strategy = &st;
  in.workload = &w;
  in.schedule = sched.get();
  in.stage_device.assign(static_cast<std::size_t>(st.pp), &dev);
  in.layers_per_stage.assign(static_cast<std::size_t>(st.pp), static_cast<int>(c.layers / st.pp));
  return lower_training_step(in);
}

TransformerConfig gqa(int layers) { return test::llama_gqa(layers); }

double model_flops(const TaskGraph& g) {
  Flops f{};
  for (const Task& t : g.tasks()) f += t.model_flops;
  return f.value();
}

TEST(ContextParallel, ModelFlopsPerStepDoNotDependOnCp) {
  TransformerConfig c = gqa(4);
  c.family = "gpt";
  c.kv_heads = 16; c.ffn_hidden = 4096; c.gated_mlp = false;  // GPT shapes for Korthikanti eq. 8
  StrategySpec base;
  base.tp = 2;
  base.pp = 2;
  const double ref = model_flops(lower(c, base, 4));
  // 72 B l s h^2 (1 + s/(6h) + V/(12 h l)), Korthikanti et al. 2022 eq. 8.
  EXPECT_NEAR(ref / formulas::model_flops(4, 1024, 4, 1024, 1024).value(), 1.0, 1e-9);
  for (int cp : {2, 4}) {
    StrategySpec st = base;
    st.cp = cp;
    EXPECT_NEAR(model_flops(lower(c, st, 4)) / ref, 1.0, 1e-12) << "cp " << cp;
  }
}

// Bytes device 0 sends on the context-parallel ring in one phase.
double ring_bytes(const TaskGraph& g, Phase phase) {
  Bytes b{};
  for (const Task& t : g.tasks())
    if (t.kind == TaskKind::send && t.comm == CommClass::cp && t.device == 0 && t.phase == phase) b += t.bytes;
  return b.value();
}

TEST(ContextParallel, RingMovesTheKvBlocksOfTheClosedForm) {
  StrategySpec st;
  st.cp = 4;
  st.tp = 2;
  const TaskGraph g3 = lower(gqa(3), st, 1), g2 = lower(gqa(2), st, 1);
  // Per layer and rank, forward: cp - 1 steps of the local K and V blocks,
  // 2 (cp - 1) b (s/cp) h_kv / t elements of 2 bytes; h_kv = kv_heads * head_dim = 256.
  const double b = 1, s = 1024, h_kv = 256, t = 2, cp = 4;
  const double fwd = 2.0 * (cp - 1) * b * (s / cp) * h_kv / t * 2.0;
  EXPECT_DOUBLE_EQ(ring_bytes(g3, Phase::forward) - ring_bytes(g2, Phase::forward), fwd);
  // Backward: K, V and the dK, dV accumulators, twice the forward bytes.
  EXPECT_DOUBLE_EQ(ring_bytes(g3, Phase::backward) - ring_bytes(g2, Phase::backward), 2.0 * fwd);
  // The ring goes to the next context-parallel rank: tp = 2 devices further.
  for (const Task& task : g3.tasks()) {
    if (task.kind == TaskKind::send && task.comm == CommClass::cp && task.device == 0) {
      EXPECT_EQ(task.peer, 2u);
    }
  }
}

TEST(ContextParallel, SendsOverlapTheAttentionBlocks) {
  // Ring step k + 1 waits for step k (the block it forwards), not for the attention on
  // block k: no send of the ring depends on a compute task other than the one making K/V.
  StrategySpec st;
  st.cp = 4;
  const TaskGraph g = lower(gqa(1), st, 1);
  int sends = 0, after_compute = 0;
  for (TaskId id = 0; id < g.size(); ++id) {
    if (g[id].kind != TaskKind::send || g[id].comm != CommClass::cp) continue;
    ++sends;
    for (TaskId d : g.deps(id)) after_compute += g[d].kind == TaskKind::compute;
  }
  // Forward and backward rings of one layer, on 4 ranks: 2 * 3 * 4 sends; only each
  // ring's first step (per rank) follows a compute task.
  EXPECT_EQ(sends, 24);
  EXPECT_EQ(after_compute, 8);
}

TEST(ContextParallel, RingMergesReadAndWriteThePartialResults) {
  // Transformer Engine's ring attention merges each step's partial output into O (read
  // O_i, read and write O: 3 bytes-per-element passes; the first step a scaled copy, 2),
  // and in the backward each step's dQ_i into dQ and dK_i, dV_i into the travelling
  // block. GPT-3 175B at t = 8, b = 1: O and Q are b (s/cp) h / t elements, K and V
  // together twice that, at 2 bytes (bf16).
  const TransformerConfig c = gpt3_cp();
  for (int cp : {2, 4, 8}) {
    const ShardShape s{1, 8, false, true, DType::bf16, cp};
    const std::vector<LayerOp> ops = transformer_layer_ops(c, s);
    const LayerOp& merge = test::layer_op(ops, "cp_merge");
    const double elems = 2048.0 / cp * 12288 / 8;
    // Causal, load-balanced: 1 + 3/4 (cp - 1) merges' worth of rows (the steps after the
    // diagonal each touch half the queries or half the keys, averaged over the ranks).
    const double steps = 1 + 0.75 * (cp - 1);
    EXPECT_DOUBLE_EQ(merge.kernel.bytes.value(), (3 * steps - 1) * elems * 2) << "cp " << cp;
    EXPECT_DOUBLE_EQ(merge.backward_bytes.value(), (3 * steps - 1) * (elems + 2 * elems) * 2) << "cp " << cp;
    EXPECT_EQ(merge.kernel.launches, cp);
    EXPECT_EQ(merge.backward_launches, 2 * cp);
    EXPECT_DOUBLE_EQ(merge.kernel.flops.value(), 0.0);  // no model work
    EXPECT_DOUBLE_EQ(merge.saved_bytes.value(), 0.0);   // nothing kept for the backward
  }
  // Without context parallelism there is nothing to merge; a non-causal model merges all
  // cp steps in full.
  const std::vector<LayerOp> one = transformer_layer_ops(c, ShardShape{1, 8, false, true, DType::bf16, 1});
  for (const LayerOp& op : one) EXPECT_STRNE(op.name, "cp_merge");
  TransformerConfig bert = c;
  bert.causal = false;
  const std::vector<LayerOp> bert_ops = transformer_layer_ops(bert, ShardShape{1, 8, false, true, DType::bf16, 4});
  const LayerOp& full = test::layer_op(bert_ops, "cp_merge");
  EXPECT_DOUBLE_EQ(full.kernel.bytes.value(), (3 * 4 - 1) * (2048.0 / 4 * 12288 / 8) * 2);
}

TEST(ContextParallel, SelectiveRecomputationRerunsTheRingsMerges) {
  // Selective recomputation reruns the core attention's forward, ring and merges: per layer
  // the recompute pass moves the attention kernel's bytes and the merges' forward bytes.
  StrategySpec st;
  st.cp = 4;
  st.recompute = Recompute::selective;
  auto recompute_bytes = [&](int layers) {
    Bytes b{};
    const TaskGraph g = lower(gqa(layers), st, 1);
    for (const Task& t : g.tasks())
      if (t.kind == TaskKind::compute && t.device == 0 && t.phase == Phase::recompute) b += t.bytes;
    return b.value();
  };
  WorkloadSpec w;
  w.micro_batch = 1;
  const std::vector<LayerOp> ops = transformer_layer_ops(gqa(1), shard_shape(w, st));
  const double expected =
      test::layer_op(ops, "attention").kernel.bytes.value() + test::layer_op(ops, "cp_merge").kernel.bytes.value();
  EXPECT_DOUBLE_EQ(recompute_bytes(3) - recompute_bytes(2), expected);
}

}  // namespace
}  // namespace hcsim
