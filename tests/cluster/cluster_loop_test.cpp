// The scheduler loop's bookkeeping (sim/cluster/cluster_loop.hpp): device-hours, makespan,
// utilisation, energies, jobs that fit nowhere, the horizon, and when it asks the oracle.

#include <gtest/gtest.h>

#include "cluster_test_support.hpp"

namespace hcsim {
namespace {

using test::job;

// The five-job example of schedulers_test.cpp under backfill: A [0,10] 8 devices, B [10,15]
// 16, C [2,6] 8, D [15,35] 8, E [6,8] 4 on 16 devices, steps 1 s.
//
// Device-seconds held: 8 x 10 + 16 x 5 + 8 x 4 + 8 x 20 + 4 x 2 = 360, so 0.1 device-hours,
// the sum over jobs of devices x run time and over the Gantt bars. Makespan 35; utilisation
// 360 / (16 x 35) = 0.642857...; idle energy (16 x 35 - 360) device-s x 50 W = 10000 J; job
// energy 360 device-s x 100 W = 36000 J (the fake's step energy: step x devices x 100 W).
TEST(ClusterLoop, DeviceHoursMakespanUtilisationEnergy) {
  auto o = test::five_oracle();
  const auto r = test::run("backfill", test::layout({16}), test::five_jobs(), o);
  double by_jobs = 0, by_bars = 0;
  for (const auto& j : r.jobs) by_jobs += j.devices * j.run.value();
  for (const auto& s : r.segments) by_bars += s.devices * (s.end - s.begin).value();
  EXPECT_DOUBLE_EQ(by_jobs, 360.0);
  EXPECT_DOUBLE_EQ(by_bars, 360.0);
  EXPECT_DOUBLE_EQ(r.device_hours, 0.1);
  EXPECT_DOUBLE_EQ(r.makespan.value(), 35.0);
  ASSERT_EQ(r.utilisation.size(), 1u);
  EXPECT_DOUBLE_EQ(r.utilisation[0], 360.0 / (16 * 35));
  EXPECT_DOUBLE_EQ(r.idle_energy.value(), 10000.0);
  EXPECT_DOUBLE_EQ(r.job_energy.value(), 36000.0);
  for (const auto& j : r.jobs) EXPECT_DOUBLE_EQ(j.slowdown, 1.0) << j.name;
  EXPECT_EQ(r.scheduler, "backfill");
  // Events at 0, 1, 2, 3, 4, 6, 8, 10, 15, 35: one scheduler call and one sample each.
  EXPECT_EQ(r.events, 10u);
  ASSERT_EQ(r.timeline.size(), 10u);
  // At 6 (C done, E started on node 1): 12 allocated, node 1's 4 free are fragmented, B and
  // D wait.
  EXPECT_DOUBLE_EQ(r.timeline[5].time.value(), 6.0);
  EXPECT_EQ(r.timeline[5].allocated, std::vector<std::uint32_t>{12});
  EXPECT_EQ(r.timeline[5].fragmented, std::vector<std::uint32_t>{4});
  EXPECT_EQ(r.timeline[5].queued, 2u);
}

// The running set changes at 0 (A), 2 (C), 6 (C out, E in), 8 (E out), 10 (A out, B in) and
// 15 (B out, D in); at 35 it empties (nothing to ask). Arrivals at 1, 3 and 4 change
// nothing: 6 calls.
TEST(ClusterLoop, AsksTheOracleTogetherOnlyWhenTheRunningSetChanges) {
  auto o = test::five_oracle();
  test::run("backfill", test::layout({16}), test::five_jobs(), o);
  EXPECT_EQ(o.together_calls, 6);
}

// Contention: steps 1 s alone, 1.5 s when two jobs run. P (8 devices, 10 steps) alone from
// 0 to 5: 5 steps. Q (8 devices, 2 steps) arrives at 5: both at 1.5 s; Q's 2 steps take 3 s,
// to 8; P does 2 steps in them, 3 left, alone again at 1 s: ends 11. P's bars [0,5] 1 s,
// [5,8] 1.5 s, [8,11] 1 s; its slowdown 11 / 10 = 1.1, Q's 3 / 2 = 1.5. Oracle asked at 0,
// 5 and 8.
TEST(ClusterLoop, ContendedRatesBetweenEvents) {
  test::FakeOracle o;
  o.set("P", 0, 1.0).set("Q", 0, 1.0);
  o.shared_slowdown = 1.5;
  const auto r = test::run("fifo", test::layout({16}), {job("P", 0, 8, 10), job("Q", 5, 8, 2)}, o);
  EXPECT_DOUBLE_EQ(r.jobs[0].end.value(), 11.0);
  EXPECT_DOUBLE_EQ(r.jobs[1].end.value(), 8.0);
  EXPECT_DOUBLE_EQ(r.jobs[0].slowdown, 1.1);
  EXPECT_DOUBLE_EQ(r.jobs[1].slowdown, 1.5);
  std::vector<std::tuple<double, double, double>> bars;
  for (const auto& s : r.segments)
    if (s.job == 0) bars.emplace_back(s.begin.value(), s.end.value(), s.step.value());
  EXPECT_EQ(bars, (std::vector<std::tuple<double, double, double>>{{0, 5, 1}, {5, 8, 1.5}, {8, 11, 1}}));
  EXPECT_EQ(o.together_calls, 3);
}

// Big needs 32 devices of a 16-device cluster, Ghost has no step time anywhere: both are
// reported at arrival and dropped; A (arrives 1, 2 steps) runs [1,3] behind them.
TEST(ClusterLoop, AJobThatFitsNoPoolIsReportedAndDoesNotBlock) {
  test::FakeOracle o;
  o.set("Big", 0, 1.0).set("A", 0, 1.0);
  const auto r =
      test::run("fifo", test::layout({16}), {job("Big", 0, 32, 1), job("Ghost", 0, 8, 1), job("A", 1, 8, 2)}, o);
  for (int j : {0, 1}) {
    EXPECT_FALSE(r.jobs[j].completed);
    EXPECT_EQ(r.jobs[j].reason.rfind("fits no pool", 0), 0u) << r.jobs[j].reason;
  }
  EXPECT_TRUE(r.jobs[2].completed);
  EXPECT_DOUBLE_EQ(r.jobs[2].first_start.value(), 1.0);
  EXPECT_DOUBLE_EQ(r.jobs[2].end.value(), 3.0);
  EXPECT_DOUBLE_EQ(r.makespan.value(), 3.0);
  EXPECT_DOUBLE_EQ(r.mean_completion.value(), 2.0);
}

// Horizon 12 on the five-job example under backfill (plus F arriving at 50): A, C, E done;
// B has run [10,12] (3 steps left), D still waits, F never arrived. Makespan 12;
// device-seconds 8 x 10 + 8 x 4 + 4 x 2 + 16 x 2 = 152; utilisation 152 / (16 x 12).
TEST(ClusterLoop, TheHorizonEndsTheRun) {
  auto o = test::five_oracle();
  o.set("F", 0, 1.0);
  auto jobs = test::five_jobs();
  jobs.push_back(job("F", 50, 8, 1));
  const auto r = test::run("backfill", test::layout({16}), jobs, o, nlohmann::json::object(),
                           ClusterLoopOptions{.horizon = Seconds(12)});
  for (int j : {0, 2, 4}) EXPECT_TRUE(r.jobs[j].completed) << r.jobs[j].name;
  EXPECT_FALSE(r.jobs[1].completed);
  EXPECT_EQ(r.jobs[1].reason.rfind("still running at the horizon", 0), 0u) << r.jobs[1].reason;
  EXPECT_FALSE(r.jobs[3].completed);
  EXPECT_EQ(r.jobs[3].reason, "still waiting at the horizon");
  EXPECT_EQ(r.jobs[5].reason, "arrives after the horizon");
  EXPECT_DOUBLE_EQ(r.makespan.value(), 12.0);
  EXPECT_DOUBLE_EQ(r.device_hours * 3600, 152.0);
  EXPECT_DOUBLE_EQ(r.utilisation[0], 152.0 / (16 * 12));
  EXPECT_DOUBLE_EQ(r.jobs[1].run.value(), 2.0);
}

// An elastic job (1 to 16 devices, quantum 4 would give 4, 8, 12, 16; 12 is not whole nodes
// so it is no candidate) runs under fifo at its largest size, 16, on the whole pool.
TEST(ClusterLoop, ElasticJobStartsAtItsLargestRunnableSize) {
  test::FakeOracle o;
  o.set("El", 0, 1.0);
  JobSpec el = job("El", 0, 4, 10);
  el.max_devices = 16;
  el.quantum = 4;
  el.elastic = true;
  const auto r = test::run("fifo", test::layout({16}), {el}, o);
  EXPECT_EQ(r.jobs[0].devices, 16u);
}

// A scheduler that starts nothing: the queue can never move (nothing runs, no arrival is
// left), so the loop stops after the last arrival (events at 0 and 5) and reports both jobs.
class StartsNothing final : public ClusterScheduler {
 public:
  Decision decide(const SchedulerView&) override { return {}; }
};

TEST(ClusterLoop, AQueueThatCannotMoveEndsTheRun) {
  test::FakeOracle o;
  o.set("A", 0, 1.0).set("B", 0, 1.0);
  StartsNothing s;
  const std::vector<JobSpec> jobs{job("A", 0, 8, 1), job("B", 5, 8, 1)};
  const auto r = simulate_cluster(test::layout({16}), jobs, s, "nothing", o);
  EXPECT_EQ(r.events, 2u);
  for (const auto& j : r.jobs) {
    EXPECT_FALSE(j.completed);
    EXPECT_EQ(j.reason.rfind("never started", 0), 0u) << j.reason;
  }
  EXPECT_DOUBLE_EQ(r.makespan.value(), 0.0);
  EXPECT_EQ(o.together_calls, 0);
}

}  // namespace
}  // namespace hcsim
