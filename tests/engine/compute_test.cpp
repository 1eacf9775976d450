// Compute tasks in the engine: a device whose compute tasks form a chain runs each alone
// for exactly its duration (kernel timers); compute tasks that may overlap on one device
// share its host, max-min, as SimGrid's CPU model does (each gets half while both run).
#include <gtest/gtest.h>

#include "../support/test_topology.hpp"
#include "sim/engine/engine.hpp"

namespace hcsim {
namespace {

TopologyGraph two_devices() { return testing::test_topology({{"type", "nvswitch-cluster"}, {"gpus_per_node", 2}}, 2); }

Task compute(std::uint32_t device, double seconds) {
  Task t;
  t.kind = TaskKind::compute;
  t.device = device;
  t.duration = Seconds(seconds);
  return t;
}

TEST(EngineCompute, AChainOnOneDeviceTakesTheSumOfItsDurations) {
  TaskGraph g;
  const TaskId a = g.add(compute(0, 1.0), {});
  const TaskId b = g.add(compute(0, 0.25), {a});
  g.add(compute(0, 0.5), {b});
  const EngineResult r = simulate(two_devices(), g, {});
  EXPECT_DOUBLE_EQ(r.start[1], 1.0);
  EXPECT_DOUBLE_EQ(r.end[1], 1.25);
  EXPECT_DOUBLE_EQ(r.makespan, 1.75);
}

TEST(EngineCompute, OverlappingTasksOnOneDeviceShareIt) {
  // Two independent 1 s tasks on device 0 run at half speed together: both end at 2 s
  // (closed form: fair sharing of one core). Device 1 runs its own task alone.
  TaskGraph g;
  g.add(compute(0, 1.0), {});
  g.add(compute(0, 1.0), {});
  g.add(compute(1, 1.0), {});
  const EngineResult r = simulate(two_devices(), g, {});
  EXPECT_NEAR(r.end[0], 2.0, 1e-9);
  EXPECT_NEAR(r.end[1], 2.0, 1e-9);
  EXPECT_NEAR(r.end[2], 1.0, 1e-9);
}

TEST(EngineCompute, ATaskThatSkipsItsPredecessorMakesTheDeviceShared) {
  // Task 2 depends on task 0 but not on task 1, so both start when 0 ends, at 1 s, and
  // share the core. Closed form: 1 (0.5 s of work) ends at 2 s; 2 (1 s of work) has done
  // 0.5 s by then and runs its last 0.5 s alone, ending at 2.5 s.
  TaskGraph g;
  const TaskId a = g.add(compute(0, 1.0), {});
  g.add(compute(0, 0.5), {a});
  g.add(compute(0, 1.0), {a});
  const EngineResult r = simulate(two_devices(), g, {});
  EXPECT_NEAR(r.end[1], 2.0, 1e-9);
  EXPECT_NEAR(r.end[2], 2.5, 1e-9);
}

TEST(EngineCompute, ATaskStartsWhenItsLastDependencyEnds) {
  // The engine reports ends; a task's start is the latest end among its dependencies (0 with
  // none), the clock at which the replay starts it. Device 0: a (1 s) then b (0.25 s); device
  // 1: c (2 s); d on device 0 waits for b and c, so it starts at 2 s and ends at 2.5 s.
  TaskGraph g;
  const TaskId a = g.add(compute(0, 1.0), {});
  const TaskId b = g.add(compute(0, 0.25), {a});
  const TaskId c = g.add(compute(1, 2.0), {});
  const TaskId d = g.add(compute(0, 0.5), {b, c});
  const EngineResult r = simulate(two_devices(), g, {});
  ASSERT_EQ(r.start.size(), 4u);
  EXPECT_EQ(r.start[a], 0.0);
  EXPECT_EQ(r.start[c], 0.0);
  EXPECT_EQ(r.start[b], r.end[a]);
  EXPECT_DOUBLE_EQ(r.start[b], 1.0);
  EXPECT_EQ(r.start[d], r.end[c]);
  EXPECT_DOUBLE_EQ(r.start[d], 2.0);
  EXPECT_DOUBLE_EQ(r.end[d], 2.5);
}

// A broken invariant inside the forked engine child (a graph using a memory endpoint that
// the topology does not have: replay.cpp's HCSIM_ASSERT) comes back to the caller as one InternalError
// carrying the child's message, not an abort of either process (docs/robustness.md).
TEST(EngineCompute, AnInternalErrorInTheEngineProcessReachesTheCaller) {
  TaskGraph g;
  g.devices = 2;
  g.memory_endpoints = 1;  // nvswitch-cluster has no memory nodes
  g.add(compute(0, 1.0), {});
  try {
    (void)simulate(two_devices(), g, {});
    ADD_FAILURE() << "no internal error";
  } catch (const InternalError& e) {
    const std::string what = e.what();
    EXPECT_EQ(what.rfind("internal error (a bug, please report): ", 0), 0u) << what;
    EXPECT_NE(what.find("the task graph uses more memory endpoints than the topology has"), std::string::npos) << what;
    EXPECT_EQ(what.find('\n'), std::string::npos) << what;
  }
}

}  // namespace
}  // namespace hcsim
