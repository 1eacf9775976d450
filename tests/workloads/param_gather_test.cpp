// ZeRO-1/2's parameter all-gather overlapped with the first micro-batch's forward
// (strategy.overlap_param_gather: Megatron-Core's distributed optimizer, the buckets of each
// model chunk's buffer and the forward pre-hooks that wait for them; workloads/step_plan.hpp,
// ParamGather). Expected values: the buckets' bytes from the parameter counts (12 h^2 + 13 h
// a GPT layer, V h + s h the embedding), and the analytical step's closed forms with a cost
// proportional to the bytes gathered (no latency) on the test device (FLOPs at 100 TF).
#include <gtest/gtest.h>

#include "step_setup.hpp"
#include "workloads/analytical.hpp"

namespace hcsim {
namespace {

constexpr double kH = 1024, kV = 1024, kS = 512;
constexpr double kLayer = 12 * kH * kH + 13 * kH;  // parameters of one layer (tp 1)
constexpr double kEmbedding = kV * kH + kS * kH;   // word and position embeddings (tied head)

struct GatherSetup : test::StepSetup {
  GatherSetup() {
    st.dp = 2;
    st.zero = 1;
    st.overlap_param_gather = true;
    st.dp_bucket = Bytes(1);  // every marker closes a bucket
    w.global_batch = 8;       // 4 micro-batches per replica
    make();
  }
};

// A gather that costs k seconds a byte, and nothing else.
GroupCostFn gathers_cost(double k) {
  return [k](const DeviceGroup&, CollectiveOp op, Bytes b) {
    return Seconds(op == CollectiveOp::all_gather ? k * b.value() : 0.0);
  };
}

TEST(ParamGather, BucketsFollowTheChunkBufferInForwardOrder) {
  GatherSetup s;
  const StepPlan plan = build_step_plan(s.input(), PlanDetail::totals);
  const StagePlan& sp = plan.stages[0];
  // One bucket a marker with parameters (the tied head's marker has none), in forward order:
  // the embedding, then the layers; bf16 parameters, 2 bytes each.
  ASSERT_EQ(sp.param_gathers.size(), 5u);
  EXPECT_DOUBLE_EQ(sp.param_gathers[0].bytes.value(), 2 * kEmbedding);
  for (std::size_t j = 1; j < 5; ++j) {
    EXPECT_DOUBLE_EQ(sp.param_gathers[j].bytes.value(), 2 * kLayer);
    EXPECT_EQ(sp.param_gathers[j].first, static_cast<int>(j));
    EXPECT_EQ(sp.param_gathers[j].last, j < 4 ? static_cast<int>(j) : 5);  // the last takes the head's marker
  }
  EXPECT_EQ(sp.zero_gather_bytes.value(), 0.0);  // nothing left for after the optimizer
  // Buckets of two layers' fp32 main gradients, filled from the backward's end as
  // Megatron-Core fills a buffer: the head (none) and layers 3, 2; layers 1, 0; the
  // embedding alone, the partial bucket the forward meets first.
  s.st.dp_bucket = Bytes(2 * 4 * kLayer);
  const StepPlan two = build_step_plan(s.input(), PlanDetail::totals);
  const auto& pg = two.stages[0].param_gathers;
  ASSERT_EQ(pg.size(), 3u);
  EXPECT_EQ(pg[0].first, 0);
  EXPECT_EQ(pg[0].last, 0);
  EXPECT_DOUBLE_EQ(pg[0].bytes.value(), 2 * kEmbedding);
  EXPECT_EQ(pg[1].first, 1);
  EXPECT_EQ(pg[1].last, 2);
  EXPECT_DOUBLE_EQ(pg[1].bytes.value(), 2 * 2 * kLayer);
  EXPECT_EQ(pg[2].first, 3);
  EXPECT_EQ(pg[2].last, 5);  // layers 2, 3 and the head's empty marker
  // Without the overlap the same bytes go in one gather after the optimizer.
  s.st.overlap_param_gather = false;
  const StepPlan off = build_step_plan(s.input(), PlanDetail::totals);
  EXPECT_DOUBLE_EQ(off.stages[0].zero_gather_bytes.value(), 2 * (kEmbedding + 4 * kLayer));
  EXPECT_TRUE(off.stages[0].param_gathers.empty());
}

TEST(ParamGather, ComputeBoundForwardHidesTheBucketsBehindTheLayers) {
  // A layer's gather (2 kLayer B at 1e-15 s/B, 25 ns) is far below a layer's forward (about
  // 0.13 ms at 100 TF), but not below the embedding's (a lookup: about no time on the test
  // device). So the first micro-batch waits for the embedding's bucket and for layer 0's,
  // less the embedding's forward, and every later bucket runs behind the layer before it,
  // whether issued as the forward reaches the bucket before (prefetch 1) or all at the
  // start (aligned). Against the gather after the optimizer:
  //   k 2 (kEmbedding + kLayer) - F_embedding - k 2 (kEmbedding + 4 kLayer).
  const double k = 1e-15;
  for (const bool align : {false, true}) {
    GatherSetup s;
    s.st.align_param_gather = align;
    const LoweringInput in = s.input();
    const StepPlan plan = build_step_plan(in, PlanDetail::totals);
    const double f_embedding = plan.stages[0].totals[0]->marker_forward.back().value();
    ASSERT_LT(f_embedding, k * 2 * kLayer);
    const double on = analytical_step(in, gathers_cost(k), nullptr).step_time.value();
    s.st.overlap_param_gather = false;
    const double off = analytical_step(s.input(), gathers_cost(k), nullptr).step_time.value();
    EXPECT_NEAR(on - off, k * 2 * (kEmbedding + kLayer) - f_embedding - k * 2 * (kEmbedding + 4 * kLayer), 1e-12 * off)
        << align;
  }
}

TEST(ParamGather, GatherBoundForwardOverlapsAllButTheLastBlock) {
  // A layer's gather at 1e-9 s/B (25 ms) outlasts a layer's forward: the forward of block j
  // runs under bucket j + 1's gather, so the first forward ends when the last gather has
  // ended plus the last block's forward. Against the gather after the optimizer the step
  // saves the forward of every block but the last: -(F - F_last) (ChunkTotals::
  // marker_forward: the test device's FLOPs at 100 TF).
  const double k = 1e-9;
  GatherSetup s;
  const LoweringInput in = s.input();
  const StepPlan plan = build_step_plan(in, PlanDetail::totals);
  const ChunkTotals& ct = *plan.stages[0].totals[0];
  double forward = 0;
  for (Seconds f : ct.marker_forward) forward += f.value();
  const double last = ct.marker_forward.front().value() + ct.marker_forward[1].value();  // the head's, layer 3's
  const double on = analytical_step(in, gathers_cost(k), nullptr).step_time.value();
  s.st.overlap_param_gather = false;
  const double off = analytical_step(s.input(), gathers_cost(k), nullptr).step_time.value();
  EXPECT_NEAR(on - off, -(forward - last), 1e-9 * off);
  EXPECT_DOUBLE_EQ(forward, ct.fwd.t.value());  // the markers' blocks cover the forward
}

}  // namespace
}  // namespace hcsim
