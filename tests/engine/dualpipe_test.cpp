// DualPipe (DeepSeek-V3 Technical Report, arXiv 2412.19437, §3.2.1, Figure 5, Table 2; the
// deepseek-ai/DualPipe repository's order): its two copies' placement, its order, its peak
// activations (Table 2: PP + 1 chunks), and its pipeline time against Table 2's bubble
//   (p/2 - 1)(F&B + B' - 3W)
// for chunk passes F, B (input gradients), W and B' = B + W (the whole backward), with a
// paired forward and backward run one after the other (F&B = F + B'), the pair's outputs
// sent when both are done: T = m (F + B') + (p/2 - 1)(F + 2B' - 3W), met exactly by the
// replayed order for F = B with W = B or W = B/2, and from below for F = 1, B = 1.2, W = 0.8.
// The engine (round-number devices, communication at 1 EB/s and no latency) replays the
// order as the recurrence of workloads/analytical.hpp does with free sends, within
// kNearlyFree = 3e-9 relative (measured 1.5e-9 at p 4: the picoseconds of the sends on the
// critical path, 2 MB at 1 EB/s each).
#include <gtest/gtest.h>

#include <algorithm>
#include <map>
#include <tuple>

#include "../support/test_pipeline.hpp"

namespace hcsim {
namespace dualpipe_test {  // unity builds: apart from the other pipeline tests' helpers
namespace {

constexpr double kRounding = 1e-9;
constexpr double kNearlyFree = 3e-9;

std::unique_ptr<PipelineSchedule> dualpipe() { return testing::make_schedule("dualpipe"); }

TEST(DualPipe, TwoCopiesOfEachModelStage) {
  const auto dp = dualpipe();
  EXPECT_TRUE(dp->splits_backward());
  const ScheduleNeeds needs = dp->needs();
  EXPECT_EQ(needs.pp_multiple, 2);
  EXPECT_EQ(needs.batch_multiple, 2);
  EXPECT_EQ(needs.min_batch_per_stage, 2);
  const Placement place = dp->placement(4, 1);
  ASSERT_EQ(place.v, 2);
  EXPECT_EQ(place.path_stages(), 4);
  EXPECT_EQ(place.layer_chunks(), 1);
  for (int s = 0; s < 4; ++s) {
    // Chunk 0: model stage s of the first direction; chunk 1: model stage p-1-s of the second.
    EXPECT_EQ(place.model_stage(place.vstage(s, 0)), s);
    EXPECT_EQ(place.model_stage(place.vstage(s, 1)), 3 - s);
    EXPECT_EQ(place.copy_stage(s), 3 - s);
    for (int c = 0; c < 2; ++c) EXPECT_EQ(place.stage(place.vstage(s, c)), s);
  }
  // Each direction enters at one end and ends in the loss at the other.
  EXPECT_TRUE(place.first(place.vstage(0, 0)));
  EXPECT_TRUE(place.last(place.vstage(3, 0)));
  EXPECT_TRUE(place.first(place.vstage(3, 1)));
  EXPECT_TRUE(place.last(place.vstage(0, 1)));
}

// Each micro-batch runs on its direction's chunk (the first m/2 on chunk 0): one F, then one
// whole backward or a B and a later W; a paired forward is followed by a whole backward of
// another micro-batch; the orders of all stages run to the end.
TEST(DualPipe, OrderIsValid) {
  const auto dp = dualpipe();
  for (int p : {2, 4, 6, 8})
    for (int m : {2 * p, 2 * p + 2, 4 * p}) {
      for (int s = 0; s < p; ++s) {
        const std::vector<PipeOp> order = dp->order(s, p, m, 2);
        std::map<int, int> state;  // micro-batch -> 1 after F, 2 after B, 3 done
        for (std::size_t i = 0; i < order.size(); ++i) {
          const PipeOp& op = order[i];
          ASSERT_EQ(op.chunk, op.microbatch < m / 2 ? 0 : 1);
          int& seen = state[op.microbatch];
          if (op.forward()) {
            EXPECT_EQ(seen, 0);
            seen = 1;
            if (op.paired) {
              ASSERT_LT(i + 1, order.size());
              EXPECT_TRUE(order[i + 1].backward && order[i + 1].part == PassPart::whole);
              EXPECT_NE(order[i + 1].microbatch, op.microbatch);
            }
          } else if (op.backward) {
            EXPECT_EQ(seen, 1) << p << " " << m << " " << s;
            seen = op.part == PassPart::whole ? 3 : 2;
          } else {
            EXPECT_EQ(seen, 2);
            seen = 3;
          }
        }
        EXPECT_EQ(state.size(), static_cast<std::size_t>(m));
        for (const auto& [mb, seen] : state) EXPECT_EQ(seen, 3);
      }
      const std::vector<PassTimes> t(static_cast<std::size_t>(2 * p),
                                     PassTimes{Seconds(1), Seconds(1), Seconds(1), {}, {}, Seconds(2)});
      const auto ends = pipeline_ends(*dp, dp->placement(p, 1), m, t);
      for (const Seconds e : ends) EXPECT_GE(e.value(), 3.0 * m);
    }
}

// Table 2: activations PP + 1 chunks (in_flight counts them in units of the stage's two
// chunks).
TEST(DualPipe, KeepsPPPlusOneChunks) {
  const auto dp = dualpipe();
  for (int p : {2, 4, 8})
    for (int m : {2 * p, 4 * p})
      for (int s = 0; s < p; ++s) EXPECT_EQ(dp->in_flight(s, p, m, 2), (p + 1) / 2.0) << p << " " << m << " " << s;
}

// Table 2's bubble with F&B = F + B' in the recurrence: exact for F = B and W = B or B/2,
// an upper bound for F = 1, B = 1.2, W = 0.8.
TEST(DualPipe, RecurrenceMeetsTableTwo) {
  const auto dp = dualpipe();
  for (int p : {2, 4, 6, 8})
    for (int m : {2 * p, 2 * p + 2, 4 * p})
      for (auto [F, B, W] : {std::tuple{1.0, 1.0, 1.0}, std::tuple{1.0, 1.0, 0.5}, std::tuple{1.0, 1.2, 0.8}}) {
        const std::vector<PassTimes> t(static_cast<std::size_t>(2 * p),
                                       PassTimes{Seconds(F), Seconds(B), Seconds(W), {}, {}, Seconds(B + W)});
        const auto ends = pipeline_ends(*dp, dp->placement(p, 1), m, t);
        const double end = std::max_element(ends.begin(), ends.end())->value();
        const double whole = B + W, pair = F + whole;
        const double table = m * (F + whole) + (p / 2 - 1) * (pair + whole - 3 * W);
        if (F == B && (W == B || 2 * W == B)) {
          EXPECT_NEAR(end, table, kRounding * table) << p << " " << m << " " << W;
        } else {
          EXPECT_LE(end, table * (1 + kRounding)) << p << " " << m;
        }
      }
}

// The engine (nearly free communication, 100 TFLOP/s devices) against the recurrence over
// the plan's per-chunk pass times: the same order, pairs and sends.
TEST(DualPipe, EngineMatchesTheRecurrence) {
  const auto dp = dualpipe();
  for (auto [p, m] : {std::pair{4, 8}, std::pair{4, 12}, std::pair{2, 6}}) {
    const testing::PipelineCase pc("dualpipe", p, m, 2 * p);  // two layers per model stage
    const LoweringInput in = pc.input(*dp);
    const StepPlan plan = build_step_plan(in);
    const double end = testing::engine_pipeline_end(in);
    const auto ends = pipeline_ends(*dp, plan.placement, m, testing::chunk_pass_times(plan));
    EXPECT_NEAR(end, std::max_element(ends.begin(), ends.end())->value(), kNearlyFree * end) << p << " " << m;
  }
}

// A pair's interleaving (workloads/analytical.hpp, pair_end), by hand: F's pieces (busy,
// then collective) (2, 1), (3, 0) and B's (1, 2), (4, 0), the device free at 0 and both
// inputs there: F0 ends at 2 (its collective at 3), B0 at 3 (its collective at 5), F1 at
// max(3, 3) + 3 = 6, B1 at max(6, 5) + 4 = 10; one after the other they take 13. An input
// arriving late holds its pass's first piece only: B's at 4 puts B0 at 4..5, F1 at 5..8
// (its collective was done at 3), B1 at max(8, 7) + 4 = 12. A last collective longer than
// the other pass's work ends the pair: F's pieces (1, 10), (1, 0) and B's (1, 0): F0 to 1,
// B0 to 2, F1 at max(2, 11) + 1 = 12.
TEST(DualPipe, PairOverlapsEachPassComputationWithTheOthersCollectives) {
  const std::vector<PairPiece> f{{Seconds(2), Seconds(1)}, {Seconds(3), Seconds(0)}};
  const std::vector<PairPiece> b{{Seconds(1), Seconds(2)}, {Seconds(4), Seconds(0)}};
  EXPECT_DOUBLE_EQ(pair_end(Seconds(0), Seconds(0), Seconds(0), f, b).value(), 10.0);
  EXPECT_DOUBLE_EQ(pair_end(Seconds(0), Seconds(0), Seconds(4), f, b).value(), 12.0);
  EXPECT_DOUBLE_EQ(pair_end(Seconds(5), Seconds(0), Seconds(0), f, b).value(), 15.0);
  const std::vector<PairPiece> lf{{Seconds(1), Seconds(10)}, {Seconds(1), Seconds(0)}}, lb{{Seconds(1), Seconds(0)}};
  EXPECT_DOUBLE_EQ(pair_end(Seconds(0), Seconds(0), Seconds(0), lf, lb).value(), 12.0);
}

}  // namespace
}  // namespace dualpipe_test
}  // namespace hcsim
