// SM contention's closed forms in the analytical mode (workloads/analytical.hpp): compute of
// t seconds beside a collective of c seconds holding share f of the SMs runs at 1 - f while
// the collective runs (docs/models.md, "SM contention"); expected values by hand from that
// rule (work conservation over the collective's window).
#include <gtest/gtest.h>

#include <vector>

#include "workloads/analytical.hpp"
#include "workloads/contended_pass.hpp"

namespace hcsim {
namespace {

TEST(ContentionClosedForm, AWindowIsTheComputeAndItsLossOrTheCollective) {
  // t = 1 beside c = 0.5 at f = 0.2: the compute loses f c = 0.1.
  EXPECT_DOUBLE_EQ(contended_window(Seconds(1), Seconds(0.5), 0.2).value(), 1.1);
  // t = 0.2 beside c = 1 at f = 0.5: the compute ends at t / (1 - f) = 0.4 inside the
  // collective, which sets the window.
  EXPECT_DOUBLE_EQ(contended_window(Seconds(0.2), Seconds(1), 0.5).value(), 1.0);
  // t = 0.5 beside c = 1 at f = 0.5: t / (1 - f) = 1 = c, the boundary.
  EXPECT_DOUBLE_EQ(contended_window(Seconds(0.5), Seconds(1), 0.5).value(), 1.0);
  // Without contention the longer of the two.
  EXPECT_DOUBLE_EQ(contended_window(Seconds(0.3), Seconds(0.7), 0).value(), 0.7);
}

TEST(ContentionClosedForm, AUnitsComputeLosesTheShareOfTheGatherBesideIt) {
  // Two units, forward, prefetch 1: both gathers (g = 1 each) issued at 0 on one stream; unit
  // 0 computes b = 3 from 1 while unit 1's gather runs [1, 2] at f = 0.25: it ends at
  // 1 + 3 + 0.25 = 4.25; unit 1's gather is done, so it ends at 7.25.
  UnitCost u;
  u.busy = Seconds(3);
  u.gather = Seconds(1);
  u.gather_share = 0.25;
  std::vector<UnitCost> units{u, u};
  EXPECT_DOUBLE_EQ(sharded_pass_time(units, 1, false).value(), 7.25);
  for (UnitCost& unit : units) unit.gather_share = 0;
  EXPECT_DOUBLE_EQ(sharded_pass_time(units, 1, false).value(), 7.0);
}

TEST(ContentionClosedForm, ABackwardOnReductionStreamsLosesTheShareOfEachReduction) {
  // Two units, backward, reductions on their own stream, no gathers: unit 1 computes b = 3
  // from 3 beside unit 0's reduce-scatter (r = 1, f = 0.5): 3 + 3 + 0.5 = 6.5; unit 1's
  // reduce-scatter then ends at 7.5.
  UnitCost u;
  u.busy = Seconds(3);
  u.reduce = Seconds(1);
  u.reduce_share = 0.5;
  const std::vector<UnitCost> units{u, u};
  EXPECT_DOUBLE_EQ(sharded_pass_time(units, 0, true, true).value(), 7.5);
  // On one stream with the gathers (FSDP1's default), the same here: no gather to share it.
  EXPECT_DOUBLE_EQ(sharded_pass_time(units, 0, true, false).value(), 7.5);
}

TEST(ContentionClosedForm, APassBesideABucketRunsAtTheShareLeftWhileItRuns) {
  // 4 s of work from -4; a bucket runs [-3, -1] holding half the SMs: 1 s of work by -3,
  // 1 more by -1, the last 2 at the full rate: the pass ends at 1. It has 2.5 s to go at -2.
  ContendedPass pass(Seconds(4));
  pass.run(Seconds(-3), Seconds(-1), 0.5);
  EXPECT_DOUBLE_EQ(pass.reach(Seconds(2.5)).value(), -2.0);
  EXPECT_DOUBLE_EQ(pass.reach(Seconds(0)).value(), 1.0);
  // Nothing beside it: the pass ends at 0.
  EXPECT_DOUBLE_EQ(ContendedPass(Seconds(4)).reach(Seconds(0)).value(), 0.0);
}

}  // namespace
}  // namespace hcsim
