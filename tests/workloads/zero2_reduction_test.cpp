// ZeRO-2 over several micro-batches reduces every micro-batch's gradients (StepPlan::
// reduce_every_microbatch): a rank that keeps only its shard of the gradients cannot
// accumulate whole ones, so DeepSpeed's stage_1_and_2.py reduces at every micro-step when it
// partitions gradients (reduce_ready_partitions_and_remove_grads), where ZeRO-1 and
// Megatron's distributed optimizer reduce once, after the last micro-batch.
// Expected values: the plan's gradient bytes (fp32 main gradients of the stage's
// parameters), the emitted task graph's reduce-scatters counted, and the analytical step's
// closed forms with a reduce-scatter that costs k seconds a byte and nothing else (the test
// device: FLOPs at 100 TF).
#include <gtest/gtest.h>

#include "step_setup.hpp"
#include "workloads/analytical.hpp"
#include "workloads/lowering.hpp"

namespace hcsim {
namespace {

struct Zero2Setup : test::StepSetup {
  explicit Zero2Setup(int zero) {
    st.dp = 2;
    st.zero = zero;
    st.overlap_param_gather = false;
    st.main_grads = MainGrads::fp32;  // ZeRO-1's datatype for both: only the reductions differ
    w.global_batch = 8;               // 4 micro-batches per replica
    make();
  }
};

// A reduce-scatter that costs k seconds a byte, and nothing else.
GroupCostFn reduce_cost(double k) {
  return [k](const DeviceGroup&, CollectiveOp op, Bytes b) {
    return Seconds(op == CollectiveOp::reduce_scatter ? k * b.value() : 0.0);
  };
}

double bucket_bytes(const StagePlan& sp) {
  double sum = 0;
  for (const BucketPoint& bp : sp.buckets) sum += bp.repeat * bp.reduction.bytes.value();
  return sum;
}

TEST(Zero2Reduction, EveryMicrobatchOnlyWithZero2AndSeveralMicrobatches) {
  EXPECT_FALSE(build_step_plan(Zero2Setup(1).input(), PlanDetail::totals).reduce_every_microbatch);
  EXPECT_TRUE(build_step_plan(Zero2Setup(2).input(), PlanDetail::totals).reduce_every_microbatch);
  Zero2Setup one(2);
  one.w.global_batch = 2;  // one micro-batch: nothing to accumulate
  EXPECT_FALSE(build_step_plan(one.input(), PlanDetail::totals).reduce_every_microbatch);
}

TEST(Zero2Reduction, EachChunkEndsItsBucketsInItsOwnPass) {
  // Interleaved, 2 stages x 2 chunks: under ZeRO-1 the last micro-batch's passes run chunk 1
  // then chunk 0 back to back and one bucket spans both; under ZeRO-2 each chunk's pass of
  // every micro-batch reduces its own gradients, so chunk 1's buckets end with its pass.
  for (const int zero : {1, 2}) {
    Zero2Setup s(zero);
    s.st.pp = 2;
    s.st.schedule = "interleaved-1f1b";
    s.st.interleave = 2;
    s.c.layers = 8;
    s.w.global_batch = 8;          // 4 micro-batches per replica: a multiple of pp
    s.st.dp_bucket = Bytes(1e15);  // no bucket fills before its pass ends
    s.make();
    const StepPlan plan = build_step_plan(s.input(), PlanDetail::items);
    for (const StagePlan& sp : plan.stages) {
      EXPECT_DOUBLE_EQ(bucket_bytes(sp), sp.grad_bytes.value());  // every gradient byte, once
      ASSERT_EQ(sp.buckets.size(), zero == 1 ? 1u : 2u);
      EXPECT_EQ(sp.buckets.back().chunk, 0);
      EXPECT_EQ(sp.buckets.back().marker, -1);
      if (zero == 2) {
        EXPECT_EQ(sp.buckets.front().chunk, 1);
        EXPECT_EQ(sp.buckets.front().marker, -1);
        EXPECT_DOUBLE_EQ(sp.buckets.front().reduction.bytes.value(), sp.chunks[1].grad_bytes.value());
      }
    }
  }
}

TEST(Zero2Reduction, TheTaskGraphReducesEveryMicrobatch) {
  // Buckets of one layer's gradients: ZeRO-2 issues each of them in each of the 4
  // micro-batches' backward passes, ZeRO-1 in the last one's; 4 times the reduce-scatters
  // and the bytes.
  double count[2] = {0, 0}, bytes[2] = {0, 0};
  for (const int zero : {1, 2}) {
    Zero2Setup s(zero);
    s.st.dp_bucket = Bytes(1);
    const TaskGraph g = lower_training_step(s.input());
    for (const Task& t : g.tasks())
      if (t.kind == TaskKind::collective && t.op == CollectiveOp::reduce_scatter) {
        count[zero - 1] += 1;
        bytes[zero - 1] += t.bytes.value();
      }
  }
  EXPECT_GT(count[0], 1);
  EXPECT_EQ(count[1], 4 * count[0]);
  EXPECT_DOUBLE_EQ(bytes[1], 4 * bytes[0]);
}

TEST(Zero2Reduction, WithoutOverlapEveryMicrobatchWaitsForItsReduction) {
  // One replica's stage (pp 1), gradients reduced after each pass without overlap: ZeRO-1
  // exposes one reduction of the stage's gradients G, ZeRO-2 one per micro-batch,
  //   step(ZeRO-2) - step(ZeRO-1) = (m - 1) k G,   m = 4.
  const double k = 1e-10;
  double step[2], grads = 0;
  for (const int zero : {1, 2}) {
    Zero2Setup s(zero);
    s.st.overlap_dp = false;
    const LoweringInput in = s.input();
    grads = build_step_plan(in, PlanDetail::totals).stages[0].grad_bytes.value();
    step[zero - 1] = analytical_step(in, reduce_cost(k), nullptr).step_time.value();
  }
  EXPECT_GT(grads, 0);
  EXPECT_NEAR(step[1] - step[0], 3 * k * grads, 1e-12 * step[1]);
}

TEST(Zero2Reduction, OverlappedReductionsQueueWhenTheyOutlastTheCycle) {
  // Overlapped, one bucket at the backward's end (dp_bucket above the gradients). Per
  // micro-batch the stage computes for C = F + B and reduces for R = k G. ZeRO-1: the one
  // reduction after the last backward is exposed, R. ZeRO-2: the 3 earlier micro-batches'
  // reductions queue by R - C each when R > C; the queue is 3 (R - C) behind as the last
  // backward (B) starts, so the last reduction starts after max(0, 3 (R - C) - B) and
  //   step(ZeRO-2) - step(ZeRO-1) = max(0, 3 (R - C) - B).
  for (const double ratio : {0.5, 2.0}) {  // R = ratio x C: hidden, then queued
    double step[2], expected = 0;
    for (const int zero : {1, 2}) {
      Zero2Setup s(zero);
      s.st.dp_bucket = Bytes(1e15);
      const LoweringInput in = s.input();
      const StepPlan plan = build_step_plan(in, PlanDetail::totals);
      const ChunkTotals& ct = *plan.stages[0].totals[0];
      const double f = ct.fwd.t.value(), b = ct.bwd.t.value(), g = plan.stages[0].grad_bytes.value();
      const double k = ratio * (f + b) / g;
      expected = std::max(0.0, 3 * (ratio * (f + b) - (f + b)) - b);
      step[zero - 1] = analytical_step(in, reduce_cost(k), nullptr).step_time.value();
    }
    EXPECT_NEAR(step[1] - step[0], expected, 1e-9 * step[1]) << ratio;
    if (ratio < 1) { EXPECT_EQ(step[1], step[0]); }
  }
}

}  // namespace
}  // namespace hcsim
