// The built-in schedulers through the scheduler loop, on hand-computed examples with a fake
// oracle (every expected time worked out in the comments).

#include <gtest/gtest.h>

#include "cluster_test_support.hpp"

namespace hcsim {
namespace {

using test::job;

// Every job completed, with these (first start, end) times.
void expect_times(const ClusterResult& r, const std::vector<std::pair<double, double>>& start_end) {
  ASSERT_EQ(r.jobs.size(), start_end.size());
  for (std::size_t j = 0; j < start_end.size(); ++j) {
    EXPECT_TRUE(r.jobs[j].completed) << r.jobs[j].name << ": " << r.jobs[j].reason;
    EXPECT_DOUBLE_EQ(r.jobs[j].first_start.value(), start_end[j].first) << r.jobs[j].name;
    EXPECT_DOUBLE_EQ(r.jobs[j].end.value(), start_end[j].second) << r.jobs[j].name;
  }
}

// The five-job example (test::five_jobs()): one pool of 16 devices (2 nodes of 8), every
// step 1 s alone and together.
//   A: arrives 0, 8 devices, 10 steps     D: arrives 3, 8 devices, 20 steps
//   B: arrives 1, 16 devices, 5 steps     E: arrives 4, 4 devices, 2 steps
//   C: arrives 2, 8 devices, 4 steps
//
// FIFO: A [0,10]. B (16) waits for A; nothing overtakes it: B [10,15]. At 15, C and D
// start (nodes 0 and 1): C [15,19], D [15,35]. E waits for C: E [19,21].
// Completions (end - arrival): 10, 14, 17, 32, 17; mean 90 / 5 = 18.
TEST(Fifo, FiveJobsNoOvertaking) {
  auto o = test::five_oracle();
  const auto r = test::run("fifo", test::layout({16}), test::five_jobs(), o);
  expect_times(r, {{0, 10}, {10, 15}, {15, 19}, {15, 35}, {19, 21}});
  EXPECT_DOUBLE_EQ(r.mean_completion.value(), 18.0);
  EXPECT_DOUBLE_EQ(r.makespan.value(), 35.0);
}

// Backfill: A [0,10]. At 1 B cannot start; its reservation is A's end, 10 (16 free then,
// none spare). At 2, C (ends 6 <= 10) backfills: C [2,6]. At 3 and 4 nothing is free. At
// 6, D would end 26 > 10 and there is no spare device at 10: it waits; E ends 8 <= 10:
// E [6,8]. At 10 B starts: B [10,15]; D [15,35].
// Completions: 10, 14, 4, 32, 4; mean 64 / 5 = 12.8 (fifo: 18).
TEST(Backfill, FiveJobsShortJobsBackfillWithoutDelayingTheHead) {
  auto o = test::five_oracle();
  const auto r = test::run("backfill", test::layout({16}), test::five_jobs(), o);
  expect_times(r, {{0, 10}, {10, 15}, {2, 6}, {15, 35}, {6, 8}});
  EXPECT_DOUBLE_EQ(r.mean_completion.value(), 12.8);
  EXPECT_DOUBLE_EQ(r.makespan.value(), 35.0);
  // p99 by nearest rank over 5 completions: the ceil(4.95) = 5th smallest, 32.
  EXPECT_DOUBLE_EQ(r.p99_completion.value(), 32.0);
}

// A job may backfill past the reservation on devices of the reserved pool that are spare
// then. 24 devices (3 nodes): A (16 devices, 10 steps) [0,10]. B (16) arrives at 1 and
// waits (8 free); its reservation is 10, when 8 + 16 = 24 are free: 8 spare. C (8 devices,
// 30 steps) arrives at 2, would end at 32 > 10 but fits the 8 spare: C [2,32]; B [10,15].
TEST(Backfill, UsesDevicesSpareAtTheReservation) {
  test::FakeOracle o;
  for (const char* n : {"A", "B", "C"}) o.set(n, 0, 1.0);
  const auto r =
      test::run("backfill", test::layout({24}), {job("A", 0, 16, 10), job("B", 1, 16, 5), job("C", 2, 8, 30)}, o);
  expect_times(r, {{0, 10}, {10, 15}, {2, 32}});
}

// srtf on one node of 8, every step 1 s; X (0, 10 steps) runs alone first, then Y (6), Z
// (2) and W (4) arrive at 1, all 8 devices.
// Without preemption: X [0,10], then by remaining time: Z [10,12], W [12,16], Y [16,22];
// completions 10, 21, 11, 15: mean 57 / 4 = 14.25.
// With preempt: at 1 Z (2 s) is shorter than X (9 s left): X preempted, Z [1,3]; at 3 W
// (4) before Y (6) before X (9): W [3,7], Y [7,13], X [13,22] (restart cost 0).
// Completions 22, 12, 2, 6: mean 42 / 4 = 10.5.
std::vector<JobSpec> srtf_jobs() {
  return {job("X", 0, 8, 10), job("Y", 1, 8, 6), job("Z", 1, 8, 2), job("W", 1, 8, 4)};
}

TEST(Srtf, ShortestRemainingFirst) {
  test::FakeOracle o;
  for (const char* n : {"X", "Y", "Z", "W"}) o.set(n, 0, 1.0);
  const auto r = test::run("srtf", test::layout({8}), srtf_jobs(), o);
  expect_times(r, {{0, 10}, {16, 22}, {10, 12}, {12, 16}});
  EXPECT_DOUBLE_EQ(r.mean_completion.value(), 14.25);
}

TEST(Srtf, PreemptsLongerRunningJobs) {
  test::FakeOracle o;
  for (const char* n : {"X", "Y", "Z", "W"}) o.set(n, 0, 1.0);
  const auto r = test::run("srtf", test::layout({8}), srtf_jobs(), o, {{"preempt", true}});
  expect_times(r, {{0, 22}, {7, 13}, {1, 3}, {3, 7}});
  EXPECT_EQ(r.jobs[0].preemptions, 1u);
  EXPECT_DOUBLE_EQ(r.jobs[0].wait.value(), 12.0);  // queued 1 -> 13
  EXPECT_DOUBLE_EQ(r.jobs[0].run.value(), 10.0);   // 1 + 9
  EXPECT_DOUBLE_EQ(r.mean_completion.value(), 10.5);
}

// priority on one node of 8, steps 1 s: L (priority 0, 10 steps, checkpoint_restart 3 s)
// starts at 0; H (priority 1, 4 steps) arrives at 2 and preempts it: H [2,6]. L restarts at
// 6, pays 3 s once: restart [6,9], its 8 remaining steps [9,17]. L: end 17, wait 4 (2 -> 6),
// run 2 + 3 + 8 = 13, slowdown (13 - 3) / 10 = 1, energy 10 steps x 8 devices x 100 W x 1 s
// + 3 s x 8 devices x 50 W idle = 8000 + 1200 = 9200 J.
TEST(Priority, PreemptionChargesTheCheckpointOnce) {
  test::FakeOracle o;
  o.set("L", 0, 1.0).set("H", 0, 1.0);
  const auto r = test::run("priority", test::layout({8}), {job("L", 0, 8, 10, 0, 3.0), job("H", 2, 8, 4, 1)}, o);
  expect_times(r, {{0, 17}, {2, 6}});
  const auto& l = r.jobs[0];
  EXPECT_EQ(l.preemptions, 1u);
  EXPECT_EQ(r.jobs[1].preemptions, 0u);
  EXPECT_DOUBLE_EQ(l.wait.value(), 4.0);
  EXPECT_DOUBLE_EQ(l.run.value(), 13.0);
  EXPECT_DOUBLE_EQ(l.slowdown, 1.0);
  EXPECT_DOUBLE_EQ(l.energy.value(), 9200.0);
  // L's bars: [0,2] at 1 s, the restart [6,9] at step 0, [9,17] at 1 s.
  std::vector<std::tuple<double, double, double>> bars;
  for (const auto& s : r.segments)
    if (s.job == 0) bars.emplace_back(s.begin.value(), s.end.value(), s.step.value());
  EXPECT_EQ(bars, (std::vector<std::tuple<double, double, double>>{{0, 2, 1}, {6, 9, 0}, {9, 17, 1}}));
}

// Victims: lowest priority first, then the most recently started. 16 devices, steps 1 s:
// L0 (priority 0, 8 devices, 10 steps) starts at 0 [0,10], L1 (priority 0, 8, 10) at 1; M
// (priority 1, 8, 10) arrives at 2 and preempts L1, the later started: M [2,12]. L1 has done
// 1 step; it restarts at 10 when L0 ends (checkpoint cost 0), 9 steps: ends 19.
TEST(Priority, PreemptsTheMostRecentlyStartedOfTheLowest) {
  test::FakeOracle o;
  for (const char* n : {"L0", "L1", "M"}) o.set(n, 0, 1.0);
  const auto r =
      test::run("priority", test::layout({16}), {job("L0", 0, 8, 10), job("L1", 1, 8, 10), job("M", 2, 8, 10, 1)}, o);
  expect_times(r, {{0, 10}, {1, 19}, {2, 12}});
  EXPECT_EQ(r.jobs[0].preemptions, 0u);
  EXPECT_EQ(r.jobs[1].preemptions, 1u);
}

// No preemption among equals: H has the same priority as the running L and waits for it.
TEST(Priority, DoesNotPreemptEqualPriority) {
  test::FakeOracle o;
  o.set("L", 0, 1.0).set("H", 0, 1.0);
  const auto r = test::run("priority", test::layout({8}), {job("L", 0, 8, 10, 1), job("H", 2, 8, 4, 1)}, o);
  expect_times(r, {{0, 10}, {10, 14}});
  EXPECT_EQ(r.jobs[0].preemptions, 0u);
}

// Two pools of 8: J1 steps 2 s on p0 and 1 s on p1; J2 1 s on both; both 8 devices, 10
// steps, arrive at 0. fifo puts J1 on the first pool where it fits, p0: [0,20], J2 on p1
// [0,10]: mean 15. heterogeneity-aware puts J1 on p1 (8 device-s per step against 16):
// [0,10]; J2 ties on both pools, p1 is taken: p0 [0,10]: mean 10.
TEST(HeterogeneityAware, ChoosesTheFasterPoolAndBeatsFifo) {
  test::FakeOracle o;
  o.set("J1", 0, 2.0).set("J1", 1, 1.0).set("J2", 0, 1.0).set("J2", 1, 1.0);
  const std::vector<JobSpec> jobs{job("J1", 0, 8, 10), job("J2", 0, 8, 10)};
  const auto fifo = test::run("fifo", test::layout({8, 8}), jobs, o);
  const auto het = test::run("heterogeneity-aware", test::layout({8, 8}), jobs, o);
  EXPECT_EQ(fifo.jobs[0].pool, 0u);
  EXPECT_DOUBLE_EQ(fifo.mean_completion.value(), 15.0);
  EXPECT_EQ(het.jobs[0].pool, 1u);
  EXPECT_EQ(het.jobs[1].pool, 0u);
  EXPECT_DOUBLE_EQ(het.mean_completion.value(), 10.0);
  EXPECT_LT(het.mean_completion, fifo.mean_completion);
}

// With objective "energy" the pool of fewest joules per step wins even if it is slower:
// J1 costs 1 J a step on p0 and 5 J on p1.
TEST(HeterogeneityAware, EnergyObjectivePicksFewestJoulesPerStep) {
  test::FakeOracle o;
  o.set("J1", 0, 2.0).set("J1", 1, 1.0).set_energy("J1", 0, 1.0).set_energy("J1", 1, 5.0);
  const auto r =
      test::run("heterogeneity-aware", test::layout({8, 8}), {job("J1", 0, 8, 10)}, o, {{"objective", "energy"}});
  EXPECT_EQ(r.jobs[0].pool, 0u);
  EXPECT_DOUBLE_EQ(r.jobs[0].end.value(), 20.0);
  EXPECT_DOUBLE_EQ(r.jobs[0].energy.value(), 10.0);  // 10 steps x 1 J
}

TEST(ClusterSchedulers, RegistryHoldsTheFiveWithSources) {
  register_builtin_cluster_schedulers();
  register_builtin_cluster_schedulers();  // idempotent
  EXPECT_EQ(cluster_schedulers().names(),
            (std::vector<std::string>{"backfill", "fifo", "heterogeneity-aware", "priority", "srtf"}));
  for (const auto& [name, e] : cluster_schedulers()) {
    EXPECT_FALSE(e.help.empty()) << name;
    EXPECT_FALSE(e.source.empty()) << name;
  }
}

}  // namespace
}  // namespace hcsim
