// Optimizer-state offload (workloads/offload.hpp): the memory it moves off the device and
// the streams the lowering emits for it.
#include "workloads/offload.hpp"

#include <gtest/gtest.h>

#include "../support/test_device.hpp"
#include "../support/test_lowering.hpp"
#include "workloads/lowering.hpp"
#include "workloads/memory.hpp"
#include "model_configs.hpp"

namespace hcsim {
namespace {

TransformerConfig small_offload() { return test::gpt_config(4, 1024, 16, 32000, 512); }

TEST(OffloadMemory, OptimizerStateLeavesTheDevice) {
  // Mixed-precision Adam: 12 B of state per parameter (Rajbhandari et al. SC20 §3.1, K = 12),
  // partitioned over dp under ZeRO >= 1; offloaded, none of it stays on the device.
  const auto c = small_offload();
  WorkloadSpec w;
  const StageShape sh{0, 4, true, true, 1};
  for (int zero : {0, 1}) {
    StrategySpec st;
    st.dp = 4;
    st.zero = zero;
    const MemoryBreakdown on = stage_memory(c, st, w, sh);
    st.offload = Offload::pool;
    const MemoryBreakdown off = stage_memory(c, st, w, sh);
    const double state = 12.0 * stage_params_per_device(c, st, sh) / (zero >= 1 ? 4.0 : 1.0);
    EXPECT_DOUBLE_EQ(off.optimizer.value(), 0.0);
    EXPECT_NEAR(off.offloaded.value(), state, state * 1e-12);
    EXPECT_NEAR((on.total() - off.total()).value(), state, state * 1e-12);
    EXPECT_DOUBLE_EQ(on.offloaded.value(), 0.0);
  }
}

struct Lowered {
  TaskGraph g;
  double params = 0;  // per device
};

Lowered lower(bool offload, int dp_replicas) {
  register_builtin_schedules();
  const TransformerConfig c = small_offload();
  StrategySpec st;
  st.dp = 4;
  st.offload = offload ? Offload::pool : Offload::none;
  WorkloadSpec w;
  w.global_batch = 8;
  const testing::TestDevice dev;
  const auto sched = pipeline_schedules().get("1f1b", "").make(Params());
  LoweringInput in = testing::uniform_lowering(c, st, w, *sched, dev);
  in.dp_replicas = dp_replicas;
  if (offload) {
    in.memory_endpoints = 2;
    in.offload_endpoint = {0, 1, 0, 1};
  }
  Lowered out{lower_training_step(in), stage_params_per_device(c, st, StageShape{0, 4, true, true, 1})};
  return out;
}

TEST(OffloadLowering, EveryDeviceStreamsItsStateInAndBack) {
  for (int replicas : {-1, 1}) {  // all ranks built, and symmetry: one built
    const Lowered l = lower(true, replicas);
    EXPECT_EQ(l.g.memory_endpoints, 2u);
    std::vector<int> in(4, 0), out(4, 0);
    for (TaskId t = 0; t < l.g.size(); ++t) {
      const Task& k = l.g[t];
      if (k.comm != CommClass::offload) continue;
      ASSERT_EQ(k.kind, TaskKind::send);
      EXPECT_EQ(k.phase, Phase::optimizer);
      // 12 B per parameter each way (no ZeRO: the whole model's state on every rank).
      EXPECT_NEAR(k.bytes.value(), 12.0 * l.params, 1e-6 * l.params);
      const bool read = l.g.is_memory(k.device);
      const std::uint32_t dev = read ? k.peer : k.device;
      const std::uint32_t mem = read ? k.device : k.peer;
      ASSERT_LT(dev, 4u);
      EXPECT_EQ(mem, 4u + dev % 2) << "device d streams to memory endpoint d mod 2";
      ++(read ? in : out)[dev];
    }
    for (int d = 0; d < 4; ++d) {
      EXPECT_EQ(in[static_cast<std::size_t>(d)], 1) << "device " << d << " replicas " << replicas;
      EXPECT_EQ(out[static_cast<std::size_t>(d)], 1) << "device " << d << " replicas " << replicas;
    }
  }
}

TEST(OffloadLowering, UpdateWaitsForTheReadAndTheWriteForTheUpdate) {
  const Lowered l = lower(true, -1);
  for (TaskId t = 0; t < l.g.size(); ++t) {
    const Task& k = l.g[t];
    if (k.kind == TaskKind::compute && k.phase == Phase::optimizer) {
      bool has_read = false;
      for (TaskId d : l.g.deps(t)) has_read |= l.g[d].comm == CommClass::offload && l.g.is_memory(l.g[d].device);
      EXPECT_TRUE(has_read);
    }
    if (k.comm == CommClass::offload && !l.g.is_memory(k.device)) {
      bool has_update = false;
      for (TaskId d : l.g.deps(t)) has_update |= l.g[d].kind == TaskKind::compute && l.g[d].phase == Phase::optimizer;
      EXPECT_TRUE(has_update);
    }
  }
}

TEST(OffloadLowering, NoStreamsWithoutOffload) {
  const Lowered l = lower(false, -1);
  EXPECT_EQ(l.g.memory_endpoints, 0u);
  for (const Task& k : l.g.tasks()) EXPECT_NE(k.comm, CommClass::offload);
}

}  // namespace
}  // namespace hcsim
