// ZeRO-3 / FSDP per unit (workloads/plan_sharding.cpp, lowering_sharding.cpp, the closed
// form sharded_pass_time in analytical.cpp, sharding_buffers in memory.cpp) against closed
// forms derived by hand from the model's rules (docs/models.md, "ZeRO-3 and FSDP").
#include <gtest/gtest.h>

#include <map>

#include "../support/test_device.hpp"
#include "../support/test_lowering.hpp"
#include "workloads/analytical.hpp"
#include "workloads/lowering.hpp"
#include "workloads/lowering_tasks.hpp"
#include "workloads/memory.hpp"
#include "workloads/step_plan.hpp"

namespace hcsim {
namespace {

TransformerConfig gpt(int layers) {
  TransformerConfig c;
  c.family = "gpt";
  c.layers = layers; c.hidden = 1024; c.heads = 16; c.kv_heads = 16; c.ffn_hidden = 4096; c.vocab = 1024;
  c.seq_len = 512;
  c.tied_embeddings = false;  // the head is a unit of its own
  return c;
}

struct Collectives {
  std::map<CollectiveOp, int> count;
  std::map<CollectiveOp, std::vector<Bytes>> bytes;
  std::map<CollectiveOp, std::vector<std::size_t>> group_size;
};

Collectives zero_collectives(const TransformerConfig& c, const StrategySpec& st, std::int64_t batch) {
  register_builtin_schedules();
  WorkloadSpec w;
  w.global_batch = batch;
  testing::TestDevice dev;
  auto sched = pipeline_schedules().get(st.schedule, "").make(Params());
  const TaskGraph g = lower_training_step(testing::uniform_lowering(c, st, w, *sched, dev));
  Collectives out;
  for (const Task& t : g.tasks())
    if (t.kind == TaskKind::collective && t.comm == CommClass::zero) {
      ++out.count[t.op];
      out.bytes[t.op].push_back(t.bytes);
      out.group_size[t.op].push_back(g.groups()[t.group].size());
    }
  return out;
}

StrategySpec zero3(int dp) {
  StrategySpec st;
  st.dp = dp;
  st.zero = 3;
  return st;
}

TEST(Sharding, GathersAndReduceScattersPerUnitAndMicroBatch) {
  // 2 layers + embedding + untied head = 4 units. With reshard_after_forward each unit is
  // gathered before its forward and its backward: 2 x 4 per micro-batch; 2 micro-batches
  // per replica (batch 8 over dp 4, micro-batch 1): 16 gathers, 8 reduce-scatters.
  const Collectives z = zero_collectives(gpt(2), zero3(4), 8);
  EXPECT_EQ(z.count.at(CollectiveOp::all_gather), 16);
  EXPECT_EQ(z.count.at(CollectiveOp::reduce_scatter), 8);
  EXPECT_EQ(z.count.count(CollectiveOp::all_reduce), 0u);
  // Kept from forward to backward: one gather per unit and micro-batch.
  StrategySpec kept = zero3(4);
  kept.sharding.reshard_after_forward = false;
  EXPECT_EQ(zero_collectives(gpt(2), kept, 8).count.at(CollectiveOp::all_gather), 8);
}

TEST(Sharding, BytesPerUnit) {
  // A layer unit gathers all its parameters: GPT layer 12 h^2 + 13 h (Narayanan eq. 2) in
  // bf16; the embedding v h + s h (learned positions), the head v h.
  const TransformerConfig c = gpt(2);
  const double h = 1024, v = 1024, s = 512;
  const Collectives z = zero_collectives(c, zero3(4), 4);
  const std::vector<Bytes>& g = z.bytes.at(CollectiveOp::all_gather);
  ASSERT_EQ(g.size(), 8u);
  // Forward order: embedding, layer, layer, head; backward: head, layer, layer, embedding.
  const double layer = 2.0 * (12 * h * h + 13 * h);
  const double emb = 2.0 * (c.learned_positions ? v * h + s * h : v * h), head = 2.0 * v * h;
  const std::vector<double> expect = {emb, layer, layer, head, head, layer, layer, emb};
  for (std::size_t i = 0; i < expect.size(); ++i) EXPECT_DOUBLE_EQ(g[i].value(), expect[i]) << i;
  // Reduce-scatters: each unit's gradients, in backward order.
  const std::vector<Bytes>& r = z.bytes.at(CollectiveOp::reduce_scatter);
  ASSERT_EQ(r.size(), 4u);
  EXPECT_DOUBLE_EQ(r[0].value(), head);
  EXPECT_DOUBLE_EQ(r[1].value(), layer);
  EXPECT_DOUBLE_EQ(r[3].value(), emb);
}

TEST(Sharding, Fp8GathersBringTheLayersAtOneBytePerElement) {
  // strategy.fsdp.fp8_all_gather with fp8 precision: each layer unit's all-gather carries
  // 1 byte per parameter (torchao's enable_fsdp_float8_all_gather), the embedding and the
  // head their bf16 2; the reduce-scatters are unchanged.
  const TransformerConfig c = gpt(2);
  const double h = 1024, v = 1024, s = 512;
  StrategySpec st = zero3(4);
  st.sharding.fp8_all_gather = true;
  register_builtin_schedules();
  WorkloadSpec w;
  w.global_batch = 4;
  w.precision = DType::fp8;
  testing::TestDevice dev;
  auto sched = pipeline_schedules().get(st.schedule, "").make(Params());
  const TaskGraph g = lower_training_step(testing::uniform_lowering(c, st, w, *sched, dev));
  std::vector<double> gathers;
  for (const Task& t : g.tasks())
    if (t.kind == TaskKind::collective && t.comm == CommClass::zero && t.op == CollectiveOp::all_gather)
      gathers.push_back(t.bytes.value());
  const double layer = 12 * h * h + 13 * h;
  const double emb = 2.0 * (c.learned_positions ? v * h + s * h : v * h), head = 2.0 * v * h;
  const std::vector<double> expect = {emb, layer, layer, head, head, layer, layer, emb};
  ASSERT_EQ(gathers.size(), expect.size());
  for (std::size_t i = 0; i < expect.size(); ++i) EXPECT_DOUBLE_EQ(gathers[i], expect[i]) << i;
}

TEST(Sharding, HybridShardsInsideGroupsAndAllReducesAcross) {
  // dp 8, shard groups of 4: gathers and reduce-scatters over 4 ranks; each unit's shard
  // (1/4 of its gradients) all-reduced over the 2 groups. Without symmetry reduction (the
  // test lowering builds every rank): 2 shard groups each, 4 peer groups.
  StrategySpec st = zero3(8);
  st.sharding.shard_group = 4;
  const Collectives z = zero_collectives(gpt(2), st, 8);
  for (std::size_t n : z.group_size.at(CollectiveOp::all_gather)) EXPECT_EQ(n, 4u);
  for (std::size_t n : z.group_size.at(CollectiveOp::all_reduce)) EXPECT_EQ(n, 2u);
  EXPECT_EQ(z.count.at(CollectiveOp::all_gather), 2 * 8 * 1);        // 2 groups x 8 gathers x 1 micro-batch
  EXPECT_EQ(z.count.at(CollectiveOp::reduce_scatter), 2 * 4);        // 2 groups x 4 units
  EXPECT_EQ(z.count.at(CollectiveOp::all_reduce), 4 * 4);            // 4 positions x 4 units
  const double layer = 2.0 * (12 * 1024.0 * 1024.0 + 13 * 1024.0);
  EXPECT_DOUBLE_EQ(z.bytes.at(CollectiveOp::all_reduce)[4].value(), layer / 4);  // unit 2 (a layer), position 0
}

std::vector<UnitCost> equal_units(int n, double g, double c, double r = 0) {
  return std::vector<UnitCost>(static_cast<std::size_t>(n), UnitCost{Seconds(c), Seconds(g), Seconds(r)});
}

TEST(Sharding, PassWithoutPrefetchExposesEveryGather) {
  // Depth 0: each gather starts when the unit before ends: n (g + c).
  EXPECT_DOUBLE_EQ(sharded_pass_time(equal_units(4, 2, 3), 0, false).value(), 4 * (2 + 3));
}

TEST(Sharding, PassWithPrefetchOnePipelinesGathersAndCompute) {
  // Depth 1: g + c + (n - 1) max(g, c), compute-bound and gather-bound.
  EXPECT_DOUBLE_EQ(sharded_pass_time(equal_units(4, 2, 3), 1, false).value(), 2 + 3 + 3 * 3);
  EXPECT_DOUBLE_EQ(sharded_pass_time(equal_units(4, 5, 3), 1, false).value(), 5 + 3 + 3 * 5);
  // A deeper prefetch cannot beat the stream: the same for equal units.
  EXPECT_DOUBLE_EQ(sharded_pass_time(equal_units(4, 5, 3), 3, false).value(), 5 + 3 + 3 * 5);
}

TEST(Sharding, BackwardPassReducesEachUnitBehindTheNext) {
  // Two units, g = 1, c = 2, r = 1, worked by hand from the stream order.
  // Depth 1: G0 [0,1], G1 [1,2]; unit 0 computes [1,3]; RS0 [3,4]; unit 1 [3,5]; RS1 [5,6].
  EXPECT_DOUBLE_EQ(sharded_pass_time(equal_units(2, 1, 2, 1), 1, true).value(), 6.0);
  // Depth 0: G0 [0,1]; unit 0 [1,3]; RS0 [3,4]; G1 [4,5]; unit 1 [5,7]; RS1 [7,8].
  EXPECT_DOUBLE_EQ(sharded_pass_time(equal_units(2, 1, 2, 1), 0, true).value(), 8.0);
}

TEST(Sharding, ReduceStreamsRunBesideTheGathers) {
  // Three gather-bound units, g = 3, c = 1, r = 2, prefetch 1, worked by hand.
  // One stream: G0 [0,3], G1 [3,6]; unit 0 [3,4]; RS0 after G1 [6,8], G2 [8,11]; unit 1
  // [6,7]; RS1 [11,13]; unit 2 [11,12]; RS2 [13,15]: 15.
  EXPECT_DOUBLE_EQ(sharded_pass_time(equal_units(3, 3, 1, 2), 1, true, false).value(), 15.0);
  // Reduce-scatters on their own stream, all latency (nothing shared): RS0 [4,6] beside G1
  // and G2 [6,9]; unit 1 [6,7]; RS1 [7,9]; unit 2 [9,10]; RS2 [10,12]: 12.
  EXPECT_DOUBLE_EQ(sharded_pass_time(equal_units(3, 3, 1, 2), 1, true, true).value(), 12.0);
  // All bandwidth, shared: G1 alone [3,4] (2 left), then with RS0 at half rate to 8; G2
  // alone [8,9], then with RS1 (issued at 9, when unit 1 [8,9] ends) to 13; unit 2 [13,14];
  // RS2 [14,16]: 16, slower than one stream, where the gathers go first.
  std::vector<UnitCost> shared = equal_units(3, 3, 1, 2);
  for (UnitCost& u : shared) {
    u.gather_bw = u.gather;
    u.reduce_bw = u.reduce;
  }
  EXPECT_DOUBLE_EQ(sharded_pass_time(shared, 1, true, true).value(), 16.0);
  // Hybrid sharding: each all-reduce (a = 1) after its reduce-scatter on a third stream:
  // RS [4,6], [7,9], [10,12] as above, AR [6,7], [9,10], [12,13]: 13.
  std::vector<UnitCost> hybrid = equal_units(3, 3, 1, 2);
  for (UnitCost& u : hybrid) u.all_reduce = Seconds(1);
  EXPECT_DOUBLE_EQ(sharded_pass_time(hybrid, 1, true, true).value(), 13.0);
  // The forward has no reductions: the same either way.
  EXPECT_DOUBLE_EQ(sharded_pass_time(equal_units(3, 3, 1), 1, false, true).value(),
                   sharded_pass_time(equal_units(3, 3, 1), 1, false, false).value());
}

TEST(Sharding, ReductionsLeaveTheGathersStreamAndTheBackwardWaitsForThem) {
  // dp 4, batch 8: two micro-batches per replica, F0 B0 F1 B1. With reduce_stream (the
  // presets' default) no reduce-scatter follows an all-gather on a stream, and micro-batch
  // 1's first forward compute waits for B0's last reduce-scatter (FSDP's final callback);
  // with one stream the reduce-scatters queue behind the gathers and the compute does not
  // wait for them.
  for (const bool own : {true, false}) {
    StrategySpec st = zero3(4);
    st.sharding.reduce_stream = own;
    register_builtin_schedules();
    WorkloadSpec w;
    w.global_batch = 8;
    testing::TestDevice dev;
    auto sched = pipeline_schedules().get(st.schedule, "").make(Params());
    const TaskGraph g = lower_training_step(testing::uniform_lowering(gpt(2), st, w, *sched, dev));
    auto is = [&](TaskId id, CollectiveOp op) {
      return g[id].kind == TaskKind::collective && g[id].comm == CommClass::zero && g[id].op == op;
    };
    int after_gather = 0, waits = 0;
    TaskId first_f1 = kNoTask;
    for (TaskId id = 0; id < g.size(); ++id) {
      if (is(id, CollectiveOp::reduce_scatter))
        for (TaskId d : g.deps(id)) after_gather += is(d, CollectiveOp::all_gather) ? 1 : 0;
      if (first_f1 == kNoTask && g[id].kind == TaskKind::compute && g[id].device == 0 && g[id].microbatch == 1 &&
          g[id].phase == Phase::forward)
        first_f1 = id;
    }
    ASSERT_NE(first_f1, kNoTask);
    for (TaskId d : g.deps(first_f1)) waits += is(d, CollectiveOp::reduce_scatter) ? 1 : 0;
    EXPECT_EQ(after_gather == 0, own) << own;
    EXPECT_EQ(waits, own ? 1 : 0) << own;
  }
}

TEST(Sharding, AnalyticalStepEqualsTheUnitPipeline) {
  // One stage, one micro-batch, a free compute device: the step is the forward pass plus the
  // backward pass over the units (sharded_pass_time) with the collective costs given.
  register_builtin_schedules();
  const TransformerConfig c = gpt(2);
  StrategySpec st = zero3(4);
  WorkloadSpec w;
  w.global_batch = 4;
  testing::TestDevice dev;
  auto sched = pipeline_schedules().get(st.schedule, "").make(Params());
  const LoweringInput in = testing::uniform_lowering(c, st, w, *sched, dev);
  const GroupCostFn cost = [](const DeviceGroup&, CollectiveOp op, Bytes b) {
    return Seconds((op == CollectiveOp::all_gather ? 1e-9 : 2e-9) * b.value());
  };
  const AnalyticalResult r = analytical_step(in, cost, nullptr);
  const StepPlan plan = build_step_plan(in, PlanDetail::totals);
  const ChunkTotals& ct = *plan.stages[0].totals[0];
  auto units = [&](const PassTotals& p, bool backward) {
    std::vector<UnitCost> u;
    for (const UnitTotals& x : p.units)
      u.push_back({x.t, cost({}, CollectiveOp::all_gather, x.gather),
                   backward ? cost({}, CollectiveOp::reduce_scatter, x.grads) : Seconds{}});
    return u;
  };
  const Seconds expect = sharded_pass_time(units(ct.fwd, false), 1, false) + sharded_pass_time(units(ct.bwd, true), 1, true) +
                         plan.stages[0].optimizer.t;
  EXPECT_NEAR(r.step_time.value(), expect.value(), 1e-12 * expect.value());
  EXPECT_EQ(ct.fwd.units.size(), 4u);
}

TEST(Sharding, MemoryOfUnitsInFlight) {
  // FSDP per layer, prefetch 1: 2 layers gathered (in use + prefetched) and 2 layers of
  // unsharded gradients; a stage without embedding or head: 4 e (12 h^2 + 13 h).
  const TransformerConfig c = gpt(4);
  StrategySpec st = zero3(8);
  WorkloadSpec w;
  const StageShape mid{1, 4, false, false, 1};
  const double layer = 12 * 1024.0 * 1024.0 + 13 * 1024.0;
  EXPECT_DOUBLE_EQ(sharding_buffers(c, st, w, mid).value(), 2.0 * 4 * layer);
  // Kept from forward to backward: the stage's 4 layers gathered, plus 2 of gradients.
  st.sharding.reshard_after_forward = false;
  EXPECT_DOUBLE_EQ(sharding_buffers(c, st, w, mid).value(), 2.0 * (4 + 2) * layer);
}

TEST(Sharding, Fp8GathersHoldTheLayersAtOneByte) {
  // fp8_all_gather: the units in flight at 1 byte per element (2 layers, prefetch 1), the
  // unsharded gradients as before (2 layers at 2 bytes); kept from forward to backward, the
  // stage's 4 layers at 1 byte. A first stage whose embedding (v h + s h = 1.5 M) is larger
  // than a layer holds 2 embedding-sized units at 2 bytes.
  const TransformerConfig c = gpt(4);
  StrategySpec st = zero3(8);
  st.sharding.fp8_all_gather = true;
  WorkloadSpec w;
  w.precision = DType::fp8;
  const StageShape mid{1, 4, false, false, 1};
  const double layer = 12 * 1024.0 * 1024.0 + 13 * 1024.0;
  EXPECT_DOUBLE_EQ(sharding_buffers(c, st, w, mid).value(), 1.0 * 2 * layer + 2.0 * 2 * layer);
  StrategySpec kept = st;
  kept.sharding.reshard_after_forward = false;
  EXPECT_DOUBLE_EQ(sharding_buffers(c, kept, w, mid).value(), 1.0 * 4 * layer + 2.0 * 2 * layer);
  TransformerConfig wide = c;
  wide.vocab = 16384;  // embedding 16384 h + 512 h > a layer's 12 h^2 + 13 h
  const StageShape first{1, 4, true, false, 1};
  const double emb = (16384.0 + 512.0) * 1024.0;
  EXPECT_DOUBLE_EQ(sharding_buffers(wide, st, w, first).value(), 2.0 * 2 * emb + 2.0 * 2 * emb);
}

TEST(Sharding, DeepSpeedBuffersOf530BWithoutTensorParallelism) {
  // MT-NLG 530B (Smith et al. 2022: 105 layers, h 20480, 128 heads), tp 1, DeepSpeed ZeRO-3
  // defaults. Units are weight matrices: the largest is the MLP's 4h x h = 1.678e9
  // elements (more than stage3_max_live_parameters 1e9, so nothing is prefetched: one unit
  // live); every bias and LayerNorm (3h, f = 4h and h elements, all under 1e5) stays whole.
  TransformerConfig c;
  c.family = "gpt";
  c.layers = 105; c.hidden = 20480; c.heads = 128; c.kv_heads = 128; c.ffn_hidden = 4 * 20480; c.vocab = 51200;
  c.seq_len = 2048;
  StrategySpec st = zero3(280);
  st.sharding = {ShardUnit::submodule, 1, 1, true, 0, 5e7, 1e9, 1e5};
  const double h = 20480, unit = 4 * h * h, persistent = 13 * h * 105;
  const StageShape sh{0, 105, false, false, 1};
  const double expect = 2.0 * (unit + persistent * (1 - 1.0 / 280) + 2 * unit);
  EXPECT_NEAR(sharding_buffers(c, st, WorkloadSpec{}, sh).value(), expect, 1e-9 * expect);
  // The fixed two gathered layers counted before: 2 e (12 h^2 + 13 h) = 18.8 GiB.
  EXPECT_LT(expect, 0.55 * 2.0 * 2.0 * c.layer_params());
}

}  // namespace
}  // namespace hcsim
