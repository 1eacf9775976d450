// The task graph's storage (workloads/task_graph.hpp): a task comes back as added, field for
// field and bit for bit, across the blocks its packed records live in, and the tasks that
// repeat one operation over micro-batches share one signature.
#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <limits>

#include "../support/test_pipeline.hpp"
#include "workloads/layout.hpp"
#include "workloads/task_graph.hpp"

namespace hcsim {
namespace {

// Task k of a graph whose every field depends on k, so no two tasks share a signature.
Task distinct_task(std::uint32_t k) {
  Task t;
  t.kind = static_cast<TaskKind>(k % 3);
  t.comm = static_cast<CommClass>(k % 9);
  t.phase = static_cast<Phase>(k % 5);
  t.stream = static_cast<Stream>(k % 2);
  t.op = static_cast<CollectiveOp>(k % 7);
  t.device = 3 * k + 1;
  t.peer = 5 * k + 2;
  t.group = 7 * k + 3;
  t.stage = static_cast<std::uint16_t>(k % 65536);
  t.microbatch = static_cast<std::uint16_t>((k * 31) % 65536);
  t.label = k % 11;
  t.duration = Seconds{1e-6 * k + 1e-9};
  t.flops = Flops{1.5e9 * k};
  t.model_flops = Flops{1.25e9 * k};
  t.bytes = Bytes{std::ldexp(1.0, static_cast<int>(k % 40)) + 0.25};
  t.energy = Joules{k % 2 ? -0.0 : 3e-3 * k};  // -0.0 and 0.0 are kept apart
  return t;
}

void expect_same(const Task& a, const Task& b, std::uint32_t k) {
  EXPECT_EQ(a.kind, b.kind) << k;
  EXPECT_EQ(a.comm, b.comm) << k;
  EXPECT_EQ(a.phase, b.phase) << k;
  EXPECT_EQ(a.stream, b.stream) << k;
  EXPECT_EQ(a.op, b.op) << k;
  EXPECT_EQ(a.device, b.device) << k;
  EXPECT_EQ(a.peer, b.peer) << k;
  EXPECT_EQ(a.group, b.group) << k;
  EXPECT_EQ(a.stage, b.stage) << k;
  EXPECT_EQ(a.microbatch, b.microbatch) << k;
  EXPECT_EQ(a.label, b.label) << k;
  for (auto [x, y] : {std::pair{a.duration.value(), b.duration.value()},
                      {a.flops.value(), b.flops.value()},
                      {a.model_flops.value(), b.model_flops.value()},
                      {a.bytes.value(), b.bytes.value()},
                      {a.energy.value(), b.energy.value()}})
    EXPECT_EQ(std::memcmp(&x, &y, sizeof x), 0) << k << ": " << x << " vs " << y;
}

TEST(TaskGraphStorage, EveryTaskComesBackBitForBitAcrossBlocks) {
  // 100,000 tasks span four blocks of 32,768; each a signature of its own.
  TaskGraph g;
  constexpr std::uint32_t n = 100000;
  for (std::uint32_t k = 0; k < n; ++k) {
    const Task t = distinct_task(k);
    if (k == 0)
      g.add(t, {});
    else
      g.add(t, {k - 1, k / 2});
  }
  ASSERT_EQ(g.size(), n);
  EXPECT_EQ(g.signature_count(), n);  // every duration differs
  std::uint32_t k = 0;
  for (const Task& t : g.tasks()) {
    expect_same(t, distinct_task(k), k);
    ++k;
  }
  EXPECT_EQ(k, n);
  for (std::uint32_t i : {0u, 32767u, 32768u, 65536u, n - 1}) {
    expect_same(g[i], distinct_task(i), i);
    if (i > 0) {
      const auto d = g.deps(i);
      ASSERT_EQ(d.size(), 2u);
      EXPECT_EQ(d[0], i - 1);
      EXPECT_EQ(d[1], i / 2);
    }
  }
}

TEST(TaskGraphStorage, TasksThatDifferOnlyInPlaceShareASignature) {
  // Device, peer, group, stage and micro-batch are kept per task; everything else is the
  // signature. Two thousand tasks of two operations over ten devices: two signatures.
  TaskGraph g;
  Task a;
  a.kind = TaskKind::compute;
  a.duration = Seconds{2e-3};
  a.flops = Flops{1e12};
  a.label = g.intern_label("forward");
  Task b = a;
  b.phase = Phase::backward;
  b.duration = Seconds{4e-3};
  b.label = g.intern_label("backward");
  for (std::uint32_t mb = 0; mb < 100; ++mb)
    for (std::uint32_t d = 0; d < 10; ++d) {
      a.device = b.device = d;
      a.stage = b.stage = static_cast<std::uint16_t>(d);
      a.microbatch = b.microbatch = static_cast<std::uint16_t>(mb);
      g.add(a, {});
      g.add(b, {});
    }
  EXPECT_EQ(g.size(), 2000u);
  EXPECT_EQ(g.signature_count(), 2u);
  EXPECT_EQ(g[1999].microbatch, 99);
  EXPECT_EQ(g[1999].device, 9u);
  EXPECT_EQ(g[1999].duration, Seconds{4e-3});
  // One bit of one cost apart: a signature of its own.
  a.duration = Seconds{std::nextafter(2e-3, 1.0)};
  g.add(a, {});
  EXPECT_EQ(g.signature_count(), 3u);
  EXPECT_EQ(g[2000].duration, a.duration);
}

TEST(TaskGraphStorage, ALoweredStepHasOneSignaturePerKernelNotPerMicroBatch) {
  // A 4-layer GPT over pp 4, 1F1B, with 16 and with 64 micro-batches: each stage runs the same
  // kernels for every micro-batch, so the step's signatures do not grow with them.
  const auto schedule = testing::make_schedule("1f1b");
  const auto lower = [&](int m) {
    return lower_training_step(testing::PipelineCase("1f1b", 4, m, 4).input(*schedule));
  };
  const TaskGraph g16 = lower(16), g64 = lower(64);
  EXPECT_GT(g64.size(), 3 * g16.size());
  EXPECT_EQ(g64.signature_count(), g16.signature_count());
  EXPECT_LT(g64.signature_count() * 20, g64.size());
}

}  // namespace
}  // namespace hcsim

namespace hcsim {
namespace {

// SiblingLists (workloads/layout.hpp): one shared list per pair of sibling axes, equal to
// DeviceGroup::sibling_offsets; none for a group without siblings.
TEST(SiblingLists, GroupsOfOneShapeShareOneList) {
  // Tensor-parallel groups of 8 in a layout of 4 replicas x 2 stages: siblings every 8 devices
  // (the other replicas) and every 32 (the other stage): offsets i * 8 + j * 32.
  DeviceGroup a{.first = 0, .stride = 1, .count = 8, .sib = {{{.count = 4, .stride = 8}, {.count = 2, .stride = 32}}}};
  DeviceGroup b = a;
  b.first = 40;  // another member of the family: the same axes
  SiblingLists lists;
  const auto la = lists.of(a), lb = lists.of(b);
  ASSERT_NE(la, nullptr);
  EXPECT_EQ(la.get(), lb.get());
  EXPECT_EQ(*la, (std::vector<int>{32, 8, 40, 16, 48, 24, 56}));
  std::vector<int> direct;
  a.sibling_offsets(direct);
  EXPECT_EQ(*la, direct);
  DeviceGroup c = a;
  c.sib[1].count = 1;  // one stage: the replicas only
  EXPECT_EQ(*lists.of(c), (std::vector<int>{8, 16, 24}));
  EXPECT_EQ(lists.of(DeviceGroup{.first = 0, .stride = 1, .count = 8}), nullptr);
}

}  // namespace
}  // namespace hcsim
