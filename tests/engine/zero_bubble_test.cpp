// ZB-H1 (Qi et al., "Zero Bubble Pipeline Parallelism", ICLR 2024, arXiv 2401.10241,
// §3.1 and Figure 3) replayed on SimGrid with round-number devices and free communication:
// its order, the split of the backward into B and W, and its pipeline time against the
// paper's m (F+B+W) + (p-1)(F+B-W) and against 1F1B's m (F+B+W) + (p-1)(F+B+W), with F, B
// and W the per-micro-batch pass times summed from the plan's items.
// The paper's formula assumes uniform stages; here the first stage also runs the embedding
// and the last the (vocab 8) head: the formula with an interior stage's F, B and W is
// within 2.4e-4 of the engine (measured: p 4, m 10; 2.2e-4 at p 4, m 8 and p 8, m 16;
// 5.7e-5 at p 2, m 5), so kUniformTolerance is 5e-4 relative;
// the per-stage recurrence of workloads/analytical.hpp (pipeline_ends) takes those
// differences in and must match the engine within rounding (kRounding = 1e-9 relative).
#include <gtest/gtest.h>

#include <algorithm>

#include "../support/test_device.hpp"
#include "../support/test_lowering.hpp"
#include "../support/test_topology.hpp"
#include "sim/engine/engine.hpp"
#include "workloads/analytical.hpp"
#include "workloads/lowering.hpp"
#include "workloads/step_plan.hpp"

namespace hcsim {
namespace {

constexpr double kUniformTolerance = 5e-4;
constexpr double kRounding = 1e-9;

TopologyGraph zb_free_network(int devices) {
  return testing::test_topology({{"type", "nvswitch-cluster"},
                                 {"gpus_per_node", devices},
                                 {"nvlink", {{"type", "electrical"}, {"bandwidth", "1 EB/s"}, {"latency", 0}}}},
                                devices);
}

struct ZbSetup {
  TransformerConfig c;
  StrategySpec st;
  WorkloadSpec w;
  testing::TestDevice dev;
  std::unique_ptr<PipelineSchedule> sched;
  ZbSetup(const char* schedule, int p, int m) {
    register_builtin_schedules();
    c.family = "gpt";
    c.layers = p * 2; c.hidden = 1024; c.heads = 16; c.kv_heads = 16; c.ffn_hidden = 4096;
    c.vocab = 8;  // a negligible head keeps the stages uniform
    c.seq_len = 512;
    st.pp = p;
    st.schedule = schedule;
    w.global_batch = m;
    sched = pipeline_schedules().get(schedule, "").make(Params());
  }
  [[nodiscard]] LoweringInput input() const { return testing::uniform_lowering(c, st, w, *sched, dev); }
};

// The end of the last non-optimizer compute task (the pipeline's end) in the engine.
double pipeline_end(const ZbSetup& z) {
  const LoweringInput in = z.input();
  TaskGraph g = lower_training_step(in);
  EngineResult r = simulate(zb_free_network(z.st.pp), g, {});
  double end = 0;
  for (TaskId t = 0; t < g.size(); ++t)
    if (g[t].kind == TaskKind::compute && g[t].phase != Phase::optimizer) end = std::max(end, r.end[t]);
  return end;
}

double items_time(const std::vector<Item>& items) {
  double t = 0;
  for (const Item& it : items)
    if (it.kind == Item::Kind::compute) t += it.t.value();
  return t;
}

// Per stage: F, B, W of one micro-batch from the plan's split items.
std::vector<PassTimes> stage_passes(const ZbSetup& z) {
  const StepPlan plan = build_step_plan(z.input());
  std::vector<PassTimes> out;
  for (const StagePlan& sp : plan.stages) {
    const ChunkItems& ci = sp.chunks.front();
    out.push_back({Seconds(items_time(ci.fwd)), Seconds(items_time(ci.bwd_input)), Seconds(items_time(ci.bwd_weight)),
                   Seconds{}, Seconds{}});
  }
  return out;
}

TEST(ZeroBubble, OrderFollowsThePaper) {
  register_builtin_schedules();
  const auto zb = pipeline_schedules().get("zb-h1", "").make(Params());
  ASSERT_TRUE(zb->splits_backward());
  // Figure 3 (top), p = 4, m = 8, worker 4 (stage 3): F1 B1 F2 B2 F3 B3 F4 B4 W1 F5 B5 W2 ...
  // its first 3 W deferred; worker 1 (stage 0): 3 warm-up forwards, then F B W.
  auto text = [&](int s) {
    std::string o;
    for (const PipeOp& op : zb->order(s, 4, 8, 1))
      o += (op.weight() ? "W" : op.backward ? "B" : "F") + std::to_string(op.microbatch + 1) + " ";
    return o;
  };
  EXPECT_EQ(text(3), "F1 B1 F2 B2 F3 B3 F4 B4 W1 F5 B5 W2 F6 B6 W3 F7 B7 W4 F8 B8 W5 W6 W7 W8 ");
  EXPECT_EQ(text(0), "F1 F2 F3 F4 B1 W1 F5 B2 W2 F6 B3 W3 F7 B4 W4 F8 B5 W5 B6 W6 B7 W7 B8 W8 ");
  // Every stage keeps min(p, m) micro-batches from forward to W, 1F1B's stage-0 peak (§3.1).
  const auto f1b = pipeline_schedules().get("1f1b", "").make(Params());
  for (auto [p, m] : {std::pair{4, 8}, std::pair{4, 3}, std::pair{2, 5}})
    for (int s = 0; s < p; ++s) {
      int held = 0, peak = 0, b = 0, w = 0;
      for (const PipeOp& op : zb->order(s, p, m, 1)) {
        if (op.forward()) peak = std::max(peak, ++held);
        if (op.backward) {
          EXPECT_EQ(op.part, PassPart::input);
          EXPECT_EQ(op.microbatch, b++);
        }
        if (op.weight()) {
          EXPECT_LT(op.microbatch, b);  // after its B
          EXPECT_EQ(op.microbatch, w++);
          --held;
        }
      }
      EXPECT_EQ(b, m);
      EXPECT_EQ(w, m);
      EXPECT_EQ(peak, std::min(p, m)) << p << " " << m << " " << s;
      EXPECT_EQ(zb->in_flight(s, p, m, 1), peak);
      EXPECT_EQ(zb->in_flight(s, p, m, 1), f1b->in_flight(0, p, m, 1));
    }
}

// B holds everything of the backward but the weight-gradient GEMMs (and the embedding's
// backward, a weight gradient alone) and the bucket markers, which W holds in their order,
// each marker after the weight gradients it covers.
TEST(ZeroBubble, SplitKeepsTheBackward) {
  const ZbSetup z("zb-h1", 2, 4);
  const StepPlan plan = build_step_plan(z.input());
  for (const StagePlan& sp : plan.stages) {
    const ChunkItems& ci = sp.chunks.front();
    EXPECT_NEAR(items_time(ci.bwd_input) + items_time(ci.bwd_weight), items_time(ci.bwd),
                kRounding * items_time(ci.bwd));
    std::size_t markers = 0, gemms = 0;
    for (const Item& it : ci.bwd_weight) {
      if (it.kind == Item::Kind::bucket) {
        ++markers;
        EXPECT_GT(gemms, 0u);  // GEMMs before every marker
        gemms = 0;
      } else {
        EXPECT_TRUE(it.kind == Item::Kind::compute && it.weight_grad);
        ++gemms;
      }
    }
    EXPECT_EQ(markers, ci.markers.size());
    for (const Item& it : ci.bwd_input) EXPECT_FALSE(it.weight_grad || it.kind == Item::Kind::bucket);
    // A GPT layer's four GEMMs (QKV, projection, two MLP) each have a weight gradient of the
    // forward GEMM's FLOPs; at 100 TFLOP/s W is the forward GEMMs' time, below F.
    EXPECT_GT(items_time(ci.bwd_weight), 0.0);
    EXPECT_LT(items_time(ci.bwd_weight), items_time(ci.fwd));
  }
}

TEST(ZeroBubble, PipelineMatchesThePaper) {
  for (auto [p, m] : {std::pair{4, 8}, std::pair{4, 10}, std::pair{2, 5}, std::pair{8, 16}}) {
    const ZbSetup z("zb-h1", p, m);
    const std::vector<PassTimes> t = stage_passes(z);
    const PassTimes& mid = t[static_cast<std::size_t>(p / 2)];  // a stage with layers only
    const double F = mid.f.value(), B = mid.b.value(), W = mid.w.value();
    ASSERT_LE(W, F);  // the paper's formula needs W <= F here (analytical.hpp)
    const double end = pipeline_end(z);
    // Qi et al. §3.1: m (F+B+W) + (p-1)(F+B-W).
    const double paper = m * (F + B + W) + (p - 1) * (F + B - W);
    EXPECT_NEAR(end, paper, kUniformTolerance * paper) << p << " " << m;
    // The per-stage recurrence (workloads/analytical.hpp) is the engine's time exactly.
    const auto ends = pipeline_ends(*z.sched, Placement{p, 1}, m, t);
    EXPECT_NEAR(end, std::max_element(ends.begin(), ends.end())->value(), kRounding * end) << p << " " << m;
  }
}

TEST(ZeroBubble, BubbleSmallerThanOneFOneB) {
  for (auto [p, m] : {std::pair{4, 8}, std::pair{2, 5}}) {
    const ZbSetup zb("zb-h1", p, m), f1b("1f1b", p, m);
    const std::vector<PassTimes> t = stage_passes(zb);
    const double W = t[static_cast<std::size_t>(p / 2)].w.value();
    const double z_end = pipeline_end(zb), f_end = pipeline_end(f1b);
    EXPECT_LT(z_end, f_end);
    // 1F1B's bubble (p-1)(F+B+W) less ZB-H1's (p-1)(F+B-W): 2 (p-1) W (Qi et al. §3.1).
    EXPECT_NEAR(f_end - z_end, 2.0 * (p - 1) * W, kUniformTolerance * f_end) << p << " " << m;
  }
}

}  // namespace
}  // namespace hcsim
