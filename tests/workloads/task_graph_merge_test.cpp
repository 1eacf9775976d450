// Several jobs' task graphs placed on one cluster's numbering (workloads/task_graph_merge.hpp):
// every field renumbered, dependencies offset, families kept only under a translation.
#include <gtest/gtest.h>

#include "workloads/task_graph_merge.hpp"

namespace hcsim {
namespace {

// Two devices: a compute on each, a send 0 -> 1, an all-reduce over {0, 1} whose family is
// its translate by 2 (a replica), mirrored by that replica's group.
TaskGraph two_device_graph() {
  TaskGraph g;
  g.devices = 2;
  Task c;
  c.kind = TaskKind::compute;
  c.duration = Seconds{1e-3};
  c.device = 0;
  c.label = g.intern_label("layer 0");
  const TaskId a = g.add(c, {});
  c.device = 1;
  c.label = g.intern_label("layer 1");
  const TaskId b = g.add(c, {});
  Task s;
  s.kind = TaskKind::send;
  s.device = 0;
  s.peer = 1;
  s.bytes = Bytes{1e6};
  const TaskId send = g.add(s, {a});
  const std::uint32_t grp = g.add_group({0, 1});
  g.set_group_family(grp, 0, std::make_shared<const std::vector<int>>(std::vector<int>{2}));
  Task ar;
  ar.kind = TaskKind::collective;
  ar.group = grp;
  ar.bytes = Bytes{4e6};
  const TaskId coll = g.add(ar, {b, send});
  g.add_mirror(send, g.add_mirror_set({{0, 1}}));
  g.add_mirror(coll, g.add_group_mirror_set({grp}));
  return g;
}

TEST(TaskGraphMerge, RenumbersDevicesGroupsTasksAndMirrors) {
  const TaskGraph g = two_device_graph();
  const std::vector<std::uint32_t> at_a{4, 5}, at_b{9, 2};
  const std::vector<PlacedGraph> parts{{&g, at_a}, {&g, at_b}};
  const MergedGraph m = merge_task_graphs(parts, 16);
  ASSERT_EQ(m.graph.size(), 8u);
  EXPECT_EQ(m.first_task, (std::vector<TaskId>{0, 4, 8}));
  EXPECT_EQ(m.graph.devices, 16u);
  // The second copy: compute on 9 and 2, the send 9 -> 2, its collective on group 1 = {9, 2}.
  EXPECT_EQ(m.graph[4].device, 9u);
  EXPECT_EQ(m.graph[5].device, 2u);
  EXPECT_EQ(m.graph[6].device, 9u);
  EXPECT_EQ(m.graph[6].peer, 2u);
  EXPECT_EQ(m.graph[7].group, 1u);
  EXPECT_EQ(m.graph.groups()[1], (std::vector<std::uint32_t>{9, 2}));
  // Dependencies offset by the first copy's 4 tasks: the collective waits for tasks 5 and 6.
  const auto deps = m.graph.deps(7);
  EXPECT_EQ(std::vector<TaskId>(deps.begin(), deps.end()), (std::vector<TaskId>{5, 6}));
  // Labels are shared by name.
  EXPECT_EQ(m.graph.labels().size(), 2u);
  EXPECT_EQ(m.graph.labels()[m.graph[5].label], "layer 1");
  // Mirrors: each copy's send stands for its own pair, its collective for its own group.
  ASSERT_EQ(m.graph.mirrors().size(), 4u);
  EXPECT_EQ(m.graph.mirror_sets()[m.graph.mirrors()[2].set].pairs,
            (std::vector<std::pair<std::uint32_t, std::uint32_t>>{{9, 2}}));
  EXPECT_EQ(m.graph.mirror_sets()[m.graph.mirrors()[3].set].groups, (std::vector<std::uint32_t>{1}));
  EXPECT_EQ(m.graph.mirrors()[3].task, 7u);
}

TEST(TaskGraphMerge, KeepsAFamilyUnderATranslationOnly) {
  const TaskGraph g = two_device_graph();
  const std::vector<std::uint32_t> shifted{6, 7}, scattered{6, 3};
  const std::vector<PlacedGraph> parts{{&g, shifted}, {&g, scattered}};
  const MergedGraph m = merge_task_graphs(parts, 16);
  // Devices d + 6: the translate by 2 is still a translate by 2.
  ASSERT_NE(m.graph.group_family(0), nullptr);
  EXPECT_EQ(*m.graph.group_family(0)->siblings, (std::vector<int>{2}));
  // 0 -> 6, 1 -> 3 is no translation: the family would name the wrong devices.
  EXPECT_EQ(m.graph.group_family(1), nullptr);
}

}  // namespace
}  // namespace hcsim
