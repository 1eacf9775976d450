// Tied embeddings over two pipeline stages (workloads/step_plan.cpp): Megatron-LM keeps the
// word embedding on the first stage and a copy for the head on the last, and all-reduces
// their gradients over the embedding group (training.py of 2021; Megatron-Core's
// finalize_model_grads.py, _allreduce_word_embedding_grads) after the data-parallel
// reduction and before the optimizer: V/t x h elements in the gradients' datatype.
#include <gtest/gtest.h>

#include "../support/test_pipeline.hpp"
#include "workloads/analytical.hpp"
#include "workloads/lowering.hpp"
#include "workloads/lowering_tasks.hpp"
#include "workloads/step_plan.hpp"
#include "workloads/transformer.hpp"

namespace hcsim {
namespace {

// A small GPT (testing::PipelineCase) with a 2,048-token vocabulary, 4 layers, 8 micro-batches.
struct Tied : testing::PipelineCase {
  std::unique_ptr<PipelineSchedule> sched;
  Tied(const char* schedule, int pp, int tp, bool tied = true)
      : PipelineCase(schedule, pp, 8, 4), sched(testing::make_schedule(schedule)) {
    c.vocab = 2048;
    c.tied_embeddings = tied;
    st.tp = tp;
  }
  [[nodiscard]] LoweringInput in() const { return input(*sched); }
  [[nodiscard]] StepPlan plan() const { return build_step_plan(in()); }
};

TEST(TiedEmbeddings, ThePlanReducesTheEmbeddingBetweenTheEndStages) {
  // V/t x h x 4 bytes (fp32 main gradients under bf16): 2048 / 2 x 1024 x 4.
  const StepPlan p = Tied("1f1b", 4, 2).plan();
  EXPECT_DOUBLE_EQ(p.tied_bytes.value(), 2048.0 / 2 * 1024 * 4);
  EXPECT_EQ(p.tied_first, 0);
  EXPECT_EQ(p.tied_last, 3);
  EXPECT_EQ(p.tied_pair(0), 3);
  EXPECT_EQ(p.tied_pair(3), 0);
  EXPECT_EQ(p.tied_pair(1), -1);
  // Interleaved: the embedding in chunk 0 of stage 0, the head in the last chunk of stage 3.
  Tied looped("interleaved-1f1b", 4, 2);
  looped.st.interleave = 2;
  looped.c.layers = 8;  // one layer a chunk
  EXPECT_DOUBLE_EQ(looped.plan().tied_bytes.value(), 2048.0 / 2 * 1024 * 4);
}

TEST(TiedEmbeddings, FamiliesTieByDefaultAndTheModelCanSayOtherwise) {
  // GPT-2/3 and BERT tie the head to the embedding, LLaMA does not (its parameter count has
  // V h twice); `tied_embeddings` overrides the family.
  register_builtin_transformers();
  const auto build = [](const char* type, nlohmann::json values) {
    Diagnostics diag;
    values.update({{"layers", 2}, {"hidden", 64}, {"heads", 4}});
    auto m = transformer_models().build(type, values, "/m", diag);
    EXPECT_TRUE(m && diag.ok()) << type;
    return m->config;
  };
  EXPECT_TRUE(build("gpt", nlohmann::json::object()).tied_embeddings);
  EXPECT_FALSE(build("llama", nlohmann::json::object()).tied_embeddings);
  EXPECT_FALSE(build("gpt", {{"tied_embeddings", false}}).tied_embeddings);
  EXPECT_TRUE(build("llama", {{"tied_embeddings", true}}).tied_embeddings);
  const TransformerConfig untied = build("gpt", {{"tied_embeddings", false}}), tied = build("gpt", {});
  EXPECT_DOUBLE_EQ(untied.total_params() - tied.total_params(), 64.0 * 51200);  // the head's own V h
}

TEST(TiedEmbeddings, NoneWhereNothingIsTiedAcrossDevices) {
  EXPECT_EQ(Tied("1f1b", 4, 2, false).plan().tied_bytes.value(), 0.0);  // untied (Llama)
  EXPECT_EQ(Tied("1f1b", 1, 2).plan().tied_bytes.value(), 0.0);         // one stage
  // ZB-V: the first device holds the embedding and the loss.
  EXPECT_EQ(Tied("zb-v", 2, 1).plan().tied_bytes.value(), 0.0);
  // DualPipe: every stage's copy is summed by its own pair reduction.
  EXPECT_EQ(Tied("dualpipe", 2, 1).plan().tied_bytes.value(), 0.0);
  Tied z3("1f1b", 2, 1);
  z3.st.dp = 2;
  z3.st.zero = 3;
  z3.w.global_batch = 16;
  EXPECT_EQ(z3.plan().tied_bytes.value(), 0.0);  // not modelled with ZeRO-3 / FSDP
}

TEST(TiedEmbeddings, BothOptimizersWaitForTheEmbeddingGroupsAllReduce) {
  // tp 2: one all-reduce per tensor rank over (stage 0 rank t, stage 3 rank t), of the plan's
  // bytes, and each of the four end devices' optimizer task depends on its rank's.
  const Tied k("1f1b", 4, 2);
  const Bytes bytes = k.plan().tied_bytes;
  const TaskGraph g = lower_training_step(k.in());
  int pairs = 0, waiting = 0, optimizers = 0;
  const auto is_pair = [&](TaskId id) {
    return g[id].kind == TaskKind::collective && g[id].op == CollectiveOp::all_reduce && g[id].bytes == bytes;
  };
  for (TaskId id = 0; id < g.size(); ++id) {
    const Task t = g[id];
    if (is_pair(id)) {
      const auto& members = g.groups()[t.group];
      ASSERT_EQ(members.size(), 2u);
      EXPECT_EQ(members[1] - members[0], 6u);  // device (0, t) and (3, t): 3 stages of 2 apart
      ++pairs;
    }
    if (t.kind == TaskKind::compute && t.phase == Phase::optimizer && (t.stage == 0 || t.stage == 3)) {
      ++optimizers;
      for (TaskId d : g.deps(id)) waiting += is_pair(d) ? 1 : 0;
    }
  }
  EXPECT_EQ(pairs, 2);
  EXPECT_EQ(optimizers, 4);
  EXPECT_EQ(waiting, 4);
}

TEST(TiedEmbeddings, TheClosedFormAddsTheAllReduceAfterStageZerosLastBackward) {
  // tp 1, dp 1: the only all-reduce is the embedding group's. 1F1B ends on stage 0, so its
  // cost X adds to the step one for one: step(X) - step(0) = X.
  const Tied k("1f1b", 4, 1);
  const LoweringInput in = k.in();
  const auto step = [&](double x) {
    const GroupCostFn cost = [x](const DeviceGroup&, CollectiveOp op, Bytes b) {
      return op == CollectiveOp::all_reduce ? Seconds(x) : Seconds(1e-12 * b.value());
    };
    return analytical_step(in, cost, nullptr);
  };
  const AnalyticalResult free = step(0), costly = step(0.25);
  EXPECT_NEAR((costly.step_time - free.step_time).value(), 0.25, 1e-12);
  EXPECT_NEAR((costly.stages[0].dp_exposed - free.stages[0].dp_exposed).value(), 0.25, 1e-12);
  EXPECT_NEAR((costly.stages[3].dp_exposed - free.stages[3].dp_exposed).value(), 0.25, 1e-12);
}

}  // namespace
}  // namespace hcsim
