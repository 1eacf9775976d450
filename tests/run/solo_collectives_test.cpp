// Solo collectives on a real step (sim/engine/collective_replay.hpp): tensor parallelism 8
// (sequence-parallel) inside each NVSwitch node, the pipeline's sends between the two
// nodes over the NICs (embeddings untied: no all-reduce of the embedding group between the
// nodes). Every
// tensor-parallel collective has its node's NVLinks to itself and runs after the one before,
// so each is one timer; the schedule is the one its flows give (every task's start and end),
// the links carry the same bytes, and the step takes one engine activity per task.
#include <gtest/gtest.h>

#include "scenarios/scenario.hpp"
#include "sim/driver/run.hpp"

namespace hcsim {
namespace {

void expect_schedule_of_the_flows(bool symmetry) {
  const nlohmann::json doc = {{"cluster",
                               {{"pools", {{{"preset", "nvidia-a100-80gb-sxm"}, {"count", 16}}}},
                                {"topology", {{"type", "nvswitch-cluster"}, {"gpus_per_node", 8}}}}},
                              {"workload",
                               {{"model", {{"preset", "gpt3-1.3b"}, {"overrides", {{"tied_embeddings", false}}}}},
                                {"global_batch", 32},
                                {"micro_batch", 2}}},
                              {"strategy", {{"dp", 1}, {"tp", 8}, {"pp", 2}, {"sequence_parallel", true}}},
                              {"simulation", {{"mode", "event"}, {"symmetry", symmetry}}}};
  const Scenario sc = parse_scenario(doc, "test.json");
  const RunOutput out = run_scenario(sc);
  EngineOptions opt;
  opt.algorithm = sc.simulation.collective_algorithm;
  opt.solo_collectives = false;
  const EngineResult ref = simulate(sc.topology, out.graph, opt);
  ASSERT_EQ(ref.end.size(), out.engine.end.size());
  // SimGrid ends a flow whose end lies within its timing precision (1e-9 s) of the event
  // before it at that event; the timer ends at the exact sum.
  const double tol = 1e-9;
  for (std::size_t t = 0; t < ref.end.size(); ++t) {
    ASSERT_NEAR(out.engine.start[t], ref.start[t], tol) << "task " << t;
    ASSERT_NEAR(out.engine.end[t], ref.end[t], tol) << "task " << t;
  }
  for (std::size_t e = 0; e < ref.edge_bytes.size(); ++e)
    EXPECT_NEAR(out.engine.edge_bytes[e], ref.edge_bytes[e], 1e-12 * ref.edge_bytes[e]) << "edge " << e;
  // Compute tasks are timers, sends flows, every collective one timer: an activity per task.
  EXPECT_EQ(out.engine.activities, out.graph.size());
  EXPECT_LT(out.engine.activities, ref.activities);
}

TEST(SoloCollectives, GiveTheScheduleOfTheirFlowsWithSymmetry) { expect_schedule_of_the_flows(true); }
TEST(SoloCollectives, GiveTheScheduleOfTheirFlowsWithoutSymmetry) { expect_schedule_of_the_flows(false); }

}  // namespace
}  // namespace hcsim
