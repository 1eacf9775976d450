// ZB-V (Qi et al., "Pipeline Parallelism with Controllable Memory", NeurIPS 2024, arXiv
// 2405.15362, §4, V-ZB; the zero-bubble repository's ZB-V): two chunks per device in a V,
// the backward split into B and W. Its order, its placement, its peak activations (the
// paper: p micro-batches, 1F1B's), and its pipeline time:
//   with chunk pass times F = B = W and m >= 2p - 1:  6 m F + (p - 1) F
// (the paper's bubble rate 0 for T_F = T_B = T_W, reached as m grows; (p - 1) F is the fill
// no schedule of this placement avoids), and, derived from the order (workloads/
// pipeline_schedule.cpp) for W <= F <= B:  2 m (F + B + W) + (p - 1) max(B, 2 (B - W)).
// The engine (round-number devices, free communication) replays the order exactly as the
// recurrence of workloads/analytical.hpp does (kRounding); the first device also runs the
// embedding and the (vocab 8) head, so the closed form with an interior chunk's F, B, W is
// within kUniformTolerance = 3e-5 relative (measured: 2.0e-5 at p 2, m 5; 1.2e-5 at p 4,
// m 8; 8.2e-6 at p 4, m 12).
#include <gtest/gtest.h>

#include <algorithm>
#include <map>
#include <tuple>

#include "../support/test_pipeline.hpp"

namespace hcsim {
namespace zb_v_test {  // unity builds: apart from zero_bubble_test.cpp's helpers
namespace {

constexpr double kRounding = 1e-9;
constexpr double kUniformTolerance = 3e-5;

std::unique_ptr<PipelineSchedule> zb_v() { return testing::make_schedule("zb-v"); }

TEST(ZbV, PlacementIsAV) {
  const auto zb = zb_v();
  EXPECT_TRUE(zb->splits_backward());
  EXPECT_FALSE(zb->interleaved());
  const Placement place = zb->placement(4, 1);
  ASSERT_EQ(place.v, 2);
  ASSERT_EQ(place.vstages(), 8);
  // Device s: virtual stages s and 2p - 1 - s; the last device holds p - 1 and p.
  for (int s = 0; s < 4; ++s) {
    EXPECT_EQ(place.vstage(s, 0), s);
    EXPECT_EQ(place.vstage(s, 1), 7 - s);
    for (int c = 0; c < 2; ++c) {
      EXPECT_EQ(place.stage(place.vstage(s, c)), s);
      EXPECT_EQ(place.chunk(place.vstage(s, c)), c);
    }
  }
  EXPECT_EQ(place.stage(0), 0);  // the embedding and the loss on the first device
  EXPECT_EQ(place.stage(7), 0);
}

// Every (chunk, micro-batch) has one F, one B and one W on its stage, in that order; the
// orders of all stages together run to the end (no pass waits for one that never comes).
TEST(ZbV, OrderIsValid) {
  const auto zb = zb_v();
  for (int p : {1, 2, 3, 4, 8})
    for (int m : {1, 2, p, 2 * p - 1, 2 * p, 3 * p + 1}) {
      if (m < 1) continue;
      for (int s = 0; s < p; ++s) {
        std::map<std::pair<int, int>, int> state;  // (chunk, micro-batch) -> passes seen
        for (const PipeOp& op : zb->order(s, p, m, 2)) {
          ASSERT_TRUE(op.chunk == 0 || op.chunk == 1);
          ASSERT_TRUE(op.microbatch >= 0 && op.microbatch < m);
          int& seen = state[{op.chunk, op.microbatch}];
          const int expected = op.forward() ? 0 : op.backward ? 1 : 2;
          EXPECT_EQ(seen, expected) << "p " << p << " m " << m << " stage " << s;
          if (op.backward) { EXPECT_EQ(op.part, PassPart::input); }
          seen = expected + 1;
        }
        EXPECT_EQ(state.size(), static_cast<std::size_t>(2 * m));
        for (const auto& [k, seen] : state) EXPECT_EQ(seen, 3);
      }
      // The recurrence asserts on a deadlock; with unit passes every stage ends.
      const std::vector<PassTimes> t(static_cast<std::size_t>(2 * p), PassTimes{Seconds(1), Seconds(1), Seconds(1)});
      const auto ends = pipeline_ends(*zb, zb->placement(p, 1), m, t);
      for (const Seconds e : ends) EXPECT_GE(e.value(), 6.0 * m);
    }
}

// Qi et al. 2405.15362 (V-ZB, T_F = T_B = T_W): no bubble but the fill, 6 m F + (p - 1) F;
// and for W <= F <= B the form derived from the order. Exact in the recurrence.
TEST(ZbV, RecurrenceMeetsTheClosedForms) {
  const auto zb = zb_v();
  for (int p : {2, 3, 4, 8})
    for (int m : {2 * p - 1, 2 * p, 4 * p + 1}) {
      for (auto [F, B, W] : {std::tuple{1.0, 1.0, 1.0}, std::tuple{1.0, 1.2, 0.8}, std::tuple{1.0, 1.5, 0.5},
                             std::tuple{0.5, 1.0, 0.25}}) {
        const std::vector<PassTimes> t(static_cast<std::size_t>(2 * p), PassTimes{Seconds(F), Seconds(B), Seconds(W)});
        const auto ends = pipeline_ends(*zb, zb->placement(p, 1), m, t);
        const double end = std::max_element(ends.begin(), ends.end())->value();
        const double closed = 2.0 * m * (F + B + W) + (p - 1) * std::max(B, 2.0 * (B - W));
        EXPECT_NEAR(end, closed, kRounding * closed) << p << " " << m << " " << F << " " << B << " " << W;
        if (F == B && B == W) { EXPECT_NEAR(end, 6.0 * m * F + (p - 1) * F, kRounding * end); }
      }
    }
}

// Every device keeps 2p chunk activations at peak for m >= 2p - 1: p micro-batches of its
// layers (the paper: V-ZB's activation memory p, 1F1B's).
TEST(ZbV, KeepsOneFOneBActivations) {
  const auto zb = zb_v();
  for (int p : {1, 2, 4, 8})
    for (int m : {2 * p - 1, 2 * p, 4 * p})
      for (int s = 0; s < p; ++s) EXPECT_EQ(zb->in_flight(s, p, m, 2), p) << p << " " << m << " " << s;
  // Fewer micro-batches: the chunks of the m there are at most.
  EXPECT_EQ(zb->in_flight(0, 4, 1, 2), 1.0);
}

// The engine (nearly free communication, 100 TFLOP/s devices) against the recurrence over
// the plan's per-chunk pass times, and against the closed form with an interior chunk's.
TEST(ZbV, EngineMatchesTheRecurrenceAndTheClosedForm) {
  const auto zb = zb_v();
  for (auto [p, m] : {std::pair{4, 8}, std::pair{4, 12}, std::pair{2, 5}}) {
    const testing::PipelineCase pc("zb-v", p, m, 4 * p);  // two layers per chunk
    const LoweringInput in = pc.input(*zb);
    const StepPlan plan = build_step_plan(in);
    const std::vector<PassTimes> t = testing::chunk_pass_times(plan);
    const double end = testing::engine_pipeline_end(in);
    const auto ends = pipeline_ends(*zb, plan.placement, m, t);
    EXPECT_NEAR(end, std::max_element(ends.begin(), ends.end())->value(), kRounding * end) << p << " " << m;
    // An interior chunk (layers only): chunk 0 of stage 1.
    const PassTimes& mid = t[2];
    const double F = mid.f.value(), B = mid.b.value(), W = mid.w.value();
    ASSERT_LE(W, F);
    ASSERT_LE(F, B);
    const double closed = 2.0 * m * (F + B + W) + (p - 1) * std::max(B, 2.0 * (B - W));
    EXPECT_NEAR(end, closed, kUniformTolerance * closed) << p << " " << m;
  }
}

}  // namespace
}  // namespace zb_v_test
}  // namespace hcsim
