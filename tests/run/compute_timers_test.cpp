// The engine's fast path for compute (sim/engine/replay.cpp): on a device whose compute
// tasks form a chain, each task is a kernel timer of its duration instead of a SimGrid
// Exec. Running alone at full speed, an Exec takes exactly its duration, so the two must
// give the same start and end for every task of a real step (pipeline sends, tensor- and
// data-parallel collectives contending on the links), in event and flow mode.
#include <gtest/gtest.h>

#include "scenarios/scenario.hpp"
#include "sim/driver/run.hpp"

namespace hcsim {
namespace {

void expect_same_schedule(const char* mode) {
  const nlohmann::json doc = {
      {"cluster",
       {{"pools", {{{"preset", "nvidia-a100-80gb-sxm"}, {"count", 16}}}},
        {"topology", {{"type", "nvswitch-cluster"}, {"gpus_per_node", 8}}}}},
      {"workload", {{"model", {{"preset", "gpt3-1.3b"}}}, {"global_batch", 32}, {"micro_batch", 2}}},
      {"strategy", {{"dp", 2}, {"tp", 4}, {"pp", 2}, {"schedule", "interleaved-1f1b"}, {"interleave", 2}}},
      {"simulation", {{"mode", mode}, {"symmetry", false}}}};
  const Scenario sc = parse_scenario(doc, "test.json");
  const RunOutput out = run_scenario(sc);
  EngineOptions opt;
  opt.mode = mode;
  opt.algorithm = sc.simulation.collective_algorithm;
  opt.compute_timers = false;
  const EngineResult ref = simulate(sc.topology, out.graph, opt);
  ASSERT_EQ(ref.end.size(), out.engine.end.size());
  const double tol = 1e-9 * ref.makespan;
  for (std::size_t t = 0; t < ref.end.size(); ++t) {
    ASSERT_NEAR(out.engine.start[t], ref.start[t], tol) << "task " << t;
    ASSERT_NEAR(out.engine.end[t], ref.end[t], tol) << "task " << t;
  }
  EXPECT_NEAR(out.engine.makespan, ref.makespan, tol);
  // The timers replace activities one for one.
  EXPECT_EQ(out.engine.activities, ref.activities);
}

TEST(ComputeTimers, GiveTheSameScheduleAsExecsInEventMode) { expect_same_schedule("event"); }
TEST(ComputeTimers, GiveTheSameScheduleAsExecsInFlowMode) { expect_same_schedule("flow"); }

}  // namespace
}  // namespace hcsim
