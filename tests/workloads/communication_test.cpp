// Communication volumes of the lowered step against the closed forms of Megatron-LM
// (Narayanan et al. SC21 §3) and ZeRO (Rajbhandari et al. SC20 §7).
#include <gtest/gtest.h>

#include "../support/test_device.hpp"
#include "../support/test_lowering.hpp"
#include "workloads/analytical.hpp"
#include "workloads/lowering.hpp"

namespace hcsim {
namespace {

// Bytes one rank sends for a collective of per-rank buffer S over n ranks with
// bandwidth-optimal algorithms (nccl-tests PERFORMANCE.md): all-reduce 2(n-1)/n S,
// reduce-scatter and all-gather (n-1)/n S.
double sent_per_rank(const Task& t, int n) {
  const double f = t.op == CollectiveOp::all_reduce ? 2.0 * (n - 1) / n : (n - 1.0) / n;
  return f * t.bytes.value();
}

double volume(const TransformerConfig& c, StrategySpec st, std::int64_t batch, CommClass cls) {
  register_builtin_schedules();
  WorkloadSpec w;
  w.global_batch = batch;
  testing::TestDevice dev;
  auto sched = pipeline_schedules().get(st.schedule, "").make(Params());
  const LoweringInput in = testing::uniform_lowering(c, st, w, *sched, dev);
  const TaskGraph g = lower_training_step(in);
  double v = 0;
  for (const Task& t : g.tasks())
    if (t.kind == TaskKind::collective && t.comm == cls)
      v += sent_per_rank(t, static_cast<int>(g.groups()[t.group].size()));
  return v;
}

TransformerConfig gpt(int layers) {
  TransformerConfig c;
  c.family = "gpt";
  c.layers = layers; c.hidden = 1024; c.heads = 16; c.kv_heads = 16; c.ffn_hidden = 4096; c.vocab = 1024;
  c.seq_len = 512;
  return c;
}

TEST(Communication, TensorParallelVolumePerLayer) {
  StrategySpec st;
  st.tp = 4;
  // One micro-batch (b = 1): one more layer makes each rank send 8 b s h (t-1)/t elements
  // of 2 bytes (SC21 §3: four all-reduces of b s h per layer, forward and backward).
  const double per_layer = volume(gpt(3), st, 1, CommClass::tp) - volume(gpt(2), st, 1, CommClass::tp);
  const double b = 1, s = 512, h = 1024, t = 4;
  EXPECT_NEAR(per_layer / (8 * b * s * h * (t - 1) / t * 2.0), 1.0, 1e-9);
}

TEST(Communication, SequenceParallelMovesTheAllReducesVolumePlusTheInputRegathers) {
  StrategySpec tp, sp;
  tp.tp = sp.tp = 4;
  sp.sequence_parallel = true;
  // Korthikanti et al. 2022 §4.2.2: four all-gathers and four reduce-scatters move what four
  // all-reduces move; the backward pass all-gathers again the s/t-token inputs the two
  // column-parallel GEMMs kept, for their weight gradients (Megatron-Core's
  // LinearWithGradAccumulationAndAsyncCommunication): 8 + 2 halves of b s h per layer
  // against 8: 1.25.
  const double a = volume(gpt(3), tp, 1, CommClass::tp) - volume(gpt(2), tp, 1, CommClass::tp);
  const double b = volume(gpt(3), sp, 1, CommClass::sp) - volume(gpt(2), sp, 1, CommClass::sp);
  EXPECT_NEAR(b / a, 1.25, 1e-9);
}

// Exposed tensor-parallel time of the analytical step with every collective of the tensor
// group costing `collective`.
double tp_exposed(const TransformerConfig& c, StrategySpec st, TpOverlap overlap, Seconds collective) {
  register_builtin_schedules();
  st.tp_overlap = overlap;
  WorkloadSpec w;
  w.global_batch = 2;
  testing::TestDevice dev;
  auto sched = pipeline_schedules().get(st.schedule, "").make(Params());
  const LoweringInput in = testing::uniform_lowering(c, st, w, *sched, dev);
  const GroupCostFn cost = [&](const DeviceGroup&, CollectiveOp, Bytes) { return collective; };
  return analytical_step(in, cost, nullptr).stages[0].tp_comm.value();
}

// The test device's time of a 16-bit GEMM with b s = 512 tokens as its inner dimension:
// 2 m n (b s) FLOPs at 100 TFLOP/s plus (m + n) b s + m n elements of 2 B at 1e18 B/s.
double wgrad(double m, double n) {
  const double tokens = 512;
  return 2 * m * n * tokens / 100e12 + 2 * (m * tokens + tokens * n + m * n) / 1e18;
}

TEST(Communication, BackwardOverlapHidesTheInputGradientAllReduceBehindTheWeightGradient) {
  StrategySpec st;
  st.tp = 4;
  const TransformerConfig c = gpt(2);
  // Per micro-batch (2 of b = 1) the backward pass all-reduces the input gradients of the
  // column-parallel GEMMs -- QKV and MLP-up of each layer, the LM head -- beside their
  // weight-gradient GEMMs (h x n_out/t from b s tokens) at the test device's 100 TFLOP/s
  // and 1e18 B/s: QKV (n_out = 3h) 8.05 us, MLP-up (4h) 10.7 us, head (V) 2.68 us.
  const double h = 1024, t = 4;
  const double qkv = wgrad(h, 3 * h / t), up = wgrad(h, 4 * h / t), head = wgrad(h, 1024 / t);
  // A 1 us all-reduce hides entirely: the five are gone from the exposed time.
  const Seconds small(1e-6);
  EXPECT_NEAR(tp_exposed(c, st, TpOverlap::none, small) - tp_exposed(c, st, TpOverlap::backward, small),
              2 * 5 * 1e-6, 1e-15);
  // A 1 ms all-reduce outlasts each weight gradient, which it hides behind.
  const Seconds large(1e-3);
  EXPECT_NEAR(tp_exposed(c, st, TpOverlap::none, large) - tp_exposed(c, st, TpOverlap::backward, large),
              2 * (2 * (qkv + up) + head), 1e-15);
}

TEST(Communication, BackwardOverlapUnderSequenceParallelismHidesTheRegatherBehindTheInputGradient) {
  StrategySpec st;
  st.tp = 4;
  st.sequence_parallel = true;
  const TransformerConfig c = gpt(2);
  // Under sequence parallelism each column-parallel GEMM's backward all-gathers its input
  // beside the input-gradient GEMM and reduce-scatters the input gradient beside the
  // weight-gradient GEMM; the two GEMMs of one layer have the same FLOPs and bytes.
  const double h = 1024, t = 4;
  const double qkv = wgrad(h, 3 * h / t), up = wgrad(h, 4 * h / t), head = wgrad(h, 1024 / t);
  const Seconds large(1e-3);
  EXPECT_NEAR(tp_exposed(c, st, TpOverlap::none, large) - tp_exposed(c, st, TpOverlap::backward, large),
              2 * 2 * (2 * (qkv + up) + head), 1e-15);
}

TEST(Communication, UserbuffersHideTheForwardCollectivesAndTheOutputGradientGather) {
  StrategySpec st;
  st.tp = 4;
  st.sequence_parallel = true;
  const TransformerConfig c = gpt(2);
  // Beyond backward's overlaps, full puts each forward all-gather beside the column-parallel
  // GEMM it feeds (QKV, MLP-up, LM head), each forward reduce-scatter beside the
  // row-parallel GEMM it reduces (projection, MLP-down), and each row-parallel GEMM's
  // output-gradient all-gather beside its input-gradient GEMM. Each of these GEMMs runs as
  // t = 4 GEMMs of b s / t = 128 token rows (the ring exchange's chunks): with k inputs and
  // n outputs, t x (2 (bs/t) n k FLOPs at 100 TFLOP/s + ((bs/t) k + k n + (bs/t) n) 2 B at
  // 1e18 B/s), the weight read once per chunk.
  const double h = 1024, t = 4;
  auto chunked = [&](double k, double n) {
    const double rows = 512 / t;
    return t * (2 * rows * n * k / 100e12 + 2 * (rows * k + k * n + rows * n) / 1e18);
  };
  const double qkv = chunked(h, 3 * h / t), up = chunked(h, 4 * h / t), head = chunked(h, 1024 / t);
  // The row-parallel GEMMs and their input-gradient GEMMs (k and n swapped: the same counts).
  const double proj = chunked(h / t, h), down = chunked(4 * h / t, h);
  // A 1 ms collective outlasts every GEMM it runs beside: each hides that GEMM's time, per
  // micro-batch (2) forward 2 x (qkv + up + proj + down) + head, backward 2 x (proj + down).
  const Seconds large(1e-3);
  EXPECT_NEAR(tp_exposed(c, st, TpOverlap::backward, large) - tp_exposed(c, st, TpOverlap::full, large),
              2 * (2 * (qkv + up + proj + down) + head + 2 * (proj + down)), 1e-15);
  // A 1 us one hides entirely: 9 forward and 4 backward collectives per micro-batch.
  const Seconds small(1e-6);
  EXPECT_NEAR(tp_exposed(c, st, TpOverlap::backward, small) - tp_exposed(c, st, TpOverlap::full, small),
              2 * 13 * 1e-6, 1e-15);
  // Without sequence parallelism there is nothing for the userbuffers to pipeline.
  st.sequence_parallel = false;
  EXPECT_EQ(tp_exposed(c, st, TpOverlap::backward, large), tp_exposed(c, st, TpOverlap::full, large));
}

// Compute of the analytical step's first stage, on a test device of 100 TFLOP/s and 1 TB/s.
Seconds stage_compute(const TransformerConfig& c, StrategySpec st, TpOverlap overlap) {
  register_builtin_schedules();
  st.tp_overlap = overlap;
  WorkloadSpec w;
  w.global_batch = 2;
  testing::TestDevice dev(100e12, 1e12);
  auto sched = pipeline_schedules().get(st.schedule, "").make(Params());
  const LoweringInput in = testing::uniform_lowering(c, st, w, *sched, dev);
  const GroupCostFn cost = [](const DeviceGroup&, CollectiveOp, Bytes) { return Seconds(1e-6); };
  return analytical_step(in, cost, nullptr).stages[0].compute;
}

TEST(Communication, MicroPipelineSumsTheStackedPartialsOfEachForwardReduceScatter) {
  StrategySpec st;
  st.tp = 4;
  st.sequence_parallel = true;
  const TransformerConfig c = gpt(2);
  // PyTorch's fused matmul-reduce-scatter (torch/distributed/_symmetric_memory,
  // _fused_matmul_reduce_scatter_impl) ends with a kernel summing the t partial outputs of
  // b s / t rows: it reads b s h and writes b s h / t elements of 2 B. Inductor fuses the
  // forward's row-parallel reduce-scatters (projection, MLP-down: two a layer); per
  // micro-batch (2) and layer (2): 8 sums of (1 + 1/4) 512 x 1024 x 2 B at 1 TB/s.
  const double sum = (1 + 1.0 / 4) * 512 * 1024 * 2 / 1e12;
  const Seconds full = stage_compute(c, st, TpOverlap::full);
  EXPECT_NEAR((stage_compute(c, st, TpOverlap::micro_pipeline) - full).value() / (8 * sum), 1.0, 1e-9);
  // Everything else runs as the userbuffers' overlap does: the same exposed collectives.
  EXPECT_EQ(tp_exposed(c, st, TpOverlap::micro_pipeline, Seconds(1e-3)),
            tp_exposed(c, st, TpOverlap::full, Seconds(1e-3)));
  // Without sequence parallelism there is no reduce-scatter to fuse.
  st.sequence_parallel = false;
  EXPECT_EQ(stage_compute(c, st, TpOverlap::micro_pipeline), stage_compute(c, st, TpOverlap::backward));
}

TEST(Communication, BlockingPipelineSendsAreExposedForEveryChunk) {
  register_builtin_schedules();
  // Interleaved 1F1B over p = 2 stages with v = 2 chunks, m = 4 micro-batches, every send
  // costing 1 ms. On their own stream the sends show on the pipeline's fill and drain only:
  // one forward and one backward hop per stage boundary, 2 ms. Blocking (Megatron-LM's
  // batch_isend_irecv + synchronize), each stage exposes its two hops per chunk and
  // micro-batch: m x 2 v x 1 ms = 16 ms.
  StrategySpec st;
  st.pp = 2;
  st.schedule = "interleaved-1f1b";
  st.interleave = 2;
  WorkloadSpec w;
  w.global_batch = 4;
  testing::TestDevice dev;
  auto sched = pipeline_schedules().get(st.schedule, "").make(Params());
  const TransformerConfig c = gpt(4);
  const GroupCostFn cost = [](const DeviceGroup&, CollectiveOp, Bytes) { return Seconds(1e-3); };
  auto pp = [&](bool blocking) {
    st.blocking_p2p = blocking;
    return analytical_step(testing::uniform_lowering(c, st, w, *sched, dev), cost, nullptr).stages[0].pp_comm.value();
  };
  EXPECT_NEAR(pp(false), 2e-3, 1e-15);
  EXPECT_NEAR(pp(true), 4 * 2 * 2 * 1e-3, 1e-15);
}

TEST(Communication, ZeroStage3MovesOneAndAHalfTimesDataParallel) {
  StrategySpec dp, z3;
  dp.dp = z3.dp = 4;
  dp.overlap_dp = z3.overlap_dp = false;
  z3.zero = 3;
  // ZeRO §7's premise: 16-bit gradients, as the parameters.
  dp.main_grads = z3.main_grads = MainGrads::model;
  // ZeRO §7: DP all-reduce moves 2 Psi, stage 3 moves 3 Psi (two parameter all-gathers and
  // one gradient reduce-scatter) with one micro-batch.
  const double base = volume(gpt(2), dp, 4, CommClass::dp);
  const double zero = volume(gpt(2), z3, 4, CommClass::zero);
  EXPECT_NEAR(zero / base, 1.5, 1e-9);
}

TEST(Communication, ZeroStages1And2MoveTheSameAsDataParallel) {
  StrategySpec dp, z;
  dp.dp = z.dp = 4;
  dp.main_grads = z.main_grads = MainGrads::model;  // ZeRO §7: 16-bit gradients
  // ZeRO §7: a reduce-scatter and an all-gather of Psi move what the all-reduce moves, 2 Psi
  // (n - 1)/n. ZeRO-1 reduces once whatever the micro-batches (batch 8: two per replica).
  z.zero = 1;
  EXPECT_NEAR(volume(gpt(2), z, 8, CommClass::zero) / volume(gpt(2), dp, 8, CommClass::dp), 1.0, 1e-9);
  // ZeRO-2 too with one micro-batch (batch 4); with two it reduce-scatters each micro-batch's
  // gradients (it keeps only their shard): 2 + 1 of Psi (n - 1)/n against 2, 1.5.
  z.zero = 2;
  EXPECT_NEAR(volume(gpt(2), z, 4, CommClass::zero) / volume(gpt(2), dp, 4, CommClass::dp), 1.0, 1e-9);
  EXPECT_NEAR(volume(gpt(2), z, 8, CommClass::zero) / volume(gpt(2), dp, 8, CommClass::dp), 1.5, 1e-9);
}

}  // namespace
}  // namespace hcsim
