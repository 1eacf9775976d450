// SM contention (EngineOptions::comm_cores, docs/models.md "SM contention"): while a
// collective runs on a device, its channels hold that many of the device's cores, and its
// compute runs at 1 - channels / cores. A compute span t beside a collective of c (c < t)
// then ends at t + f c, f = channels / cores: work conservation over the collective's
// window. The channels: NCCL's on one node (its tuning: 32 for a 1 GB buffer), two per NIC
// the group's ranks on a node use across nodes (NCCL's rings, each run on two channels,
// src/graph/connect.cc), EngineOptions::tp_overlap_sms for an overlapped tensor-parallel one.
#include <gtest/gtest.h>

#include <optional>

#include "../support/test_topology.hpp"
#include "sim/engine/engine.hpp"
#include "workloads/strategy.hpp"

namespace hcsim {
namespace {

TopologyGraph two_gpus() { return testing::test_topology({{"type", "nvswitch-cluster"}, {"gpus_per_node", 2}}, 2); }
// Two DGX-H100-like nodes of 8 GPUs with `nics` NDR NICs each.
TopologyGraph two_nodes(int nics) {
  return testing::test_topology({{"type", "nvswitch-cluster"},
                                 {"gpus_per_node", 8},
                                 {"nvlink", {{"preset", "nvlink4"}}},
                                 {"nics_per_node", nics},
                                 {"nic", {{"preset", "ib-ndr"}}}},
                                16);
}

Task kernel(std::uint32_t device, double seconds) {
  Task t;
  t.kind = TaskKind::compute;
  t.device = device;
  t.duration = Seconds(seconds);
  return t;
}

// Device 0 computes `tasks` (a chain, or independent tasks sharing the device) while
// devices 0 and 1 all-reduce 1 GB; the collective is task 0.
TaskGraph beside(int tasks, bool chain, std::vector<std::uint32_t> group = {0, 1}, std::uint32_t devices = 2,
                 CommClass comm = CommClass::none) {
  TaskGraph g;
  g.devices = devices;
  const auto grp = g.add_group(std::move(group));
  Task c;
  c.kind = TaskKind::collective;
  c.op = CollectiveOp::all_reduce;
  c.group = grp;
  c.bytes = Bytes(1e9);
  c.comm = comm;
  g.add(c, {});
  std::optional<TaskId> prev;
  for (int i = 0; i < tasks; ++i) {
    const TaskId t = chain && prev ? g.add(kernel(0, 0.1), {*prev}) : g.add(kernel(0, 0.1), {});
    prev = t;
  }
  return g;
}

constexpr int kSms = 132;         // H100 SXM5
constexpr double kChannels = 32;  // NCCL's most channels, which a 1 GB all-reduce runs on

TEST(EngineContention, AChainBesideACollectiveLosesTheChannelsShareOfItsWindow) {
  EngineOptions opt;
  const EngineResult alone = simulate(two_gpus(), beside(1, true), opt);
  const double c = alone.end[0];
  ASSERT_LT(c, 0.1);
  EXPECT_DOUBLE_EQ(alone.end[1], 0.1);  // without comm_cores compute is not slowed
  opt.comm_cores = {kSms, kSms};
  const EngineResult r = simulate(two_gpus(), beside(1, true), opt);
  EXPECT_DOUBLE_EQ(r.end[0], c);  // the collective itself is not slowed
  EXPECT_NEAR(r.end[1], 0.1 + kChannels / kSms * c, 1e-12);
}

TEST(EngineContention, TheRateChangesMidTaskAndAgainWhenTheCollectiveEnds) {
  // A chain of three 0.1 s tasks: the first runs beside the whole collective, the others
  // at the full rate; the chain ends f c late.
  EngineOptions opt;
  opt.comm_cores = {kSms, kSms};
  const EngineResult r = simulate(two_gpus(), beside(3, true), opt);
  const double c = r.end[0];
  EXPECT_NEAR(r.end[3], 0.3 + kChannels / kSms * c, 1e-12);
  EXPECT_NEAR(r.end[3] - r.end[2], 0.1, 1e-12);
}

TEST(EngineContention, TasksSharingADeviceLoseTheSameShare) {
  // Two independent 0.1 s tasks share device 0 (Execs, max-min): together they get
  // 1 - f of it while the collective runs, so both end at 0.2 + f c.
  EngineOptions opt;
  opt.comm_cores = {kSms, kSms};
  const EngineResult r = simulate(two_gpus(), beside(2, false), opt);
  const double c = r.end[0];
  EXPECT_NEAR(r.end[1], 0.2 + kChannels / kSms * c, 1e-9);
  EXPECT_NEAR(r.end[2], 0.2 + kChannels / kSms * c, 1e-9);
}

// Across nodes: the channels are two per NIC the group's ranks on one node use, whatever
// NCCL's tuning would give the buffer on one node.
double across_nodes_slowdown(int nics, std::vector<std::uint32_t> group) {
  EngineOptions opt;
  opt.comm_cores.assign(16, kSms);
  const EngineResult r = simulate(two_nodes(nics), beside(1, true, std::move(group), 16), opt);
  const double c = r.end[0];
  EXPECT_LT(c, 0.1);
  return (r.end[1] - 0.1) / c;  // f
}

TEST(EngineContention, AcrossNodesACollectiveHoldsTwoChannelsPerNicItsRanksOnANodeUse) {
  EXPECT_NEAR(across_nodes_slowdown(8, {0, 8}), 2.0 / kSms, 1e-12);  // one rank a node: one NIC
  std::vector<std::uint32_t> all(16);
  for (std::uint32_t d = 0; d < 16; ++d) all[d] = d;
  EXPECT_NEAR(across_nodes_slowdown(8, all), 16.0 / kSms, 1e-12);  // eight NICs
  EXPECT_NEAR(across_nodes_slowdown(2, all), 4.0 / kSms, 1e-12);   // two NICs shared by eight GPUs
}

TEST(EngineContention, NvlinkSharpHoldsItsSixteenChannels) {
  // NVLS on one node runs on NVLS_NCHANNELS_SM90 = 16 channels (src/transport/nvls.cc), not
  // the ring's 32: all-reduce over the 8 H100 of a node, the algorithm forced.
  EngineOptions opt;
  opt.comm_cores.assign(8, kSms);
  opt.algorithm = "in_network";
  const TopologyGraph node = testing::test_topology({{"type", "nvswitch-cluster"},
                                                     {"gpus_per_node", 8},
                                                     {"nvlink", {{"preset", "nvlink4"}}},
                                                     {"nvswitch_reduction", true}},
                                                    8);
  const EngineResult r = simulate(node, beside(1, true, {0, 1, 2, 3, 4, 5, 6, 7}, 8), opt);
  const double c = r.end[0];
  ASSERT_LT(c, 0.1);
  EXPECT_NEAR(r.end[1], 0.1 + 16.0 / kSms * c, 1e-12);
}

TEST(EngineContention, AnOverlappedTensorParallelCollectiveHoldsTheOverlapsSms) {
  EngineOptions opt;
  opt.comm_cores = {kSms, kSms};
  opt.tp_overlap_sms = 8;
  const EngineResult tp = simulate(two_gpus(), beside(1, true, {0, 1}, 2, CommClass::tp), opt);
  EXPECT_NEAR(tp.end[1], 0.1 + 8.0 / kSms * tp.end[0], 1e-12);
  // Any other class keeps NCCL's channels.
  const EngineResult dp = simulate(two_gpus(), beside(1, true, {0, 1}, 2, CommClass::dp), opt);
  EXPECT_NEAR(dp.end[1], 0.1 + kChannels / kSms * dp.end[0], 1e-12);
  // Copy engines (PyTorch's micro-pipelined TP): the tensor-parallel collective holds none.
  opt.tp_overlap_sms = 0;
  EXPECT_EQ(simulate(two_gpus(), beside(1, true, {0, 1}, 2, CommClass::tp), opt).end[1], 0.1);
}

TEST(EngineContention, TheOverlapsOwnKernelsHoldEightSmsForUserbuffersAndNoneForCopyEngines) {
  StrategySpec st;
  st.sequence_parallel = true;
  const std::pair<TpOverlap, std::optional<int>> expected[] = {{TpOverlap::none, std::nullopt},
                                                               {TpOverlap::backward, std::nullopt},
                                                               {TpOverlap::full, 8},
                                                               {TpOverlap::micro_pipeline, 0}};
  for (const auto& [overlap, sms] : expected) {
    st.tp_overlap = overlap;
    EXPECT_EQ(tp_overlap_sms(st), sms);
  }
  st.sequence_parallel = false;  // full is backward without it (strategy.hpp): NCCL's channels
  st.tp_overlap = TpOverlap::full;
  EXPECT_EQ(tp_overlap_sms(st), std::nullopt);
}

}  // namespace
}  // namespace hcsim
