// NCCL's protocols and channels in the collective cost model (protocol.hpp) against their
// closed forms, from explicit parameters (not the calibrated presets), and the tuner's
// choice of algorithm x protocol x channels by least predicted time (tuning.cc).
#include "sim/collectives/protocol.hpp"

#include <cmath>
#include <numeric>

#include <gtest/gtest.h>

#include "sim/collectives/cost.hpp"
#include "../support/test_topology.hpp"

namespace hcsim {
namespace {

TopologyGraph build_proto(const nlohmann::json& desc, int devices) { return testing::test_topology(desc, devices); }

// One node of 8 GPUs on an NVSwitch: 300 GB/s x 0.8 = B = 240 GB/s, 0.25 us per edge, so a
// GPU-to-GPU step has alpha = 0.5 us.
const nlohmann::json kNode = {{"type", "nvswitch-cluster"},
                              {"nvlink",
                               {{"type", "electrical"}, {"bandwidth", "300 GB/s"}, {"latency", "0.25 us"},
                                {"efficiency", 0.8}}}};
constexpr double kAlphaProto = 0.5e-6, kBProto = 240e9;

// A single protocol of explicit figures.
ProtocolSet one(double fraction, double tree_fraction, double base, double step, double channel_bw, double grain,
                int max_channels) {
  ProtocolSet s;
  s.max_channels = max_channels;
  s.protocols.push_back({.protocol = Protocol::simple, .ring_fraction = fraction, .tree_fraction = tree_fraction,
                         .base_latency = Seconds(base), .nvlink_step_latency = Seconds(step),
                         .net_step_latency = Seconds(step), .channel_bandwidth = BytesPerSecond(channel_bw),
                         .channel_grain = Bytes(grain)});
  return s;
}

TEST(CollectiveProtocol, RingAllReduceClosedFormPerProtocolAndChannels) {
  // t = base + 2(n-1)(alpha + l) + 2(n-1)/n * S / (min(c x bw_channel, B) x f), with
  // c = min(max_channels, floor(S / grain)) (NCCL enqueue.cc; tuning.cc's busBw = nChannels
  // x bw, x 0.92 for LL128, x 0.5 for LL). Figures: f = 0.92, base 14 us, l = 1.3 us,
  // 20 GB/s a channel, 32 KiB grain, 16 channels: 64 KiB runs on 2 channels (40 GB/s),
  // 256 KiB on 8 (160 GB/s), 1 GiB on 16 (320 GB/s > B: the link binds).
  const TopologyGraph g = build_proto(kNode, 8);
  const double f = 0.92, base = 14e-6, l = 1.3e-6, bw = 20e9;
  CollectiveCostModel m(g, {.protocols = one(f, 1, base, l, bw, 32768, 16)});
  for (auto [s, c] : {std::pair{65536.0, 2}, std::pair{262144.0, 8}, std::pair{1073741824.0, 16}}) {
    const auto e = m.estimate(testing::first_devices(8), CollectiveOp::all_reduce, Bytes(s), "ring");
    const double want = base + 14 * (kAlphaProto + l) + 14.0 / 8 * s / (std::min(c * bw, kBProto) * f);
    EXPECT_NEAR(e.time.value(), want, want * 1e-12) << s;
    EXPECT_EQ(e.channels, c) << s;
    EXPECT_EQ(e.protocol, "Simple");
    // The protocol's share, which the engine runs as a timer before the flows.
    const double network = 14 * kAlphaProto + 14.0 / 8 * s / kBProto;
    EXPECT_NEAR(e.protocol_term.value(), want - network, want * 1e-12) << s;
  }
}

TEST(CollectiveProtocol, ChannelsFollowNcclThreadThresholds) {
  // enqueue.cc drops channels while nBytes < nc x nthreads x threadThreshold: Simple
  // 512 x 64 B = 32 KiB a channel, LL128 640 x 8 B = 5 KiB, LL 512 x 8 B x nRanks (ring);
  // at most 32 channels.
  const ProtocolSet s = ProtocolSet::nccl();
  const ProtocolCost& simple = *s.find(Protocol::simple);
  const ProtocolCost& ll = *s.find(Protocol::ll);
  const ProtocolCost& ll128 = *s.find(Protocol::ll128);
  EXPECT_EQ(s.channels(simple, Bytes(8), 8), 1);
  EXPECT_EQ(s.channels(simple, Bytes(65536), 8), 2);
  EXPECT_EQ(s.channels(simple, Bytes(1 << 20), 8), 32);
  EXPECT_EQ(s.channels(simple, Bytes(1 << 30), 8), 32);
  EXPECT_EQ(s.channels(ll128, Bytes(51200), 8), 10);
  EXPECT_EQ(s.channels(ll, Bytes(65536), 8), 2);   // 65536 / (4096 x 8)
  EXPECT_EQ(s.channels(ll, Bytes(65536), 16), 1);  // the grain grows with the ranks
}

TEST(CollectiveProtocol, TunerPicksTheProtocolOfLeastTime) {
  // NCCL's defaults on the node above. Ring all-reduce of 8 B: LL (6.6 us + 14 x 0.5 us)
  // beats LL128 (14 + 14 x 1.8) and Simple (8.4 + 14 x 3.3); 4 MiB: LL128 (its 0.92 of B
  // against LL's half); 1 GiB: Simple (all of B). Each choice is the least of the three
  // protocols forced alone.
  const TopologyGraph g = build_proto(kNode, 8);
  const ProtocolSet all = ProtocolSet::nccl();
  CollectiveCostModel m(g);
  for (auto [s, want] : {std::pair{8.0, "LL"}, std::pair{4194304.0, "LL128"}, std::pair{1073741824.0, "Simple"}}) {
    const auto e = m.estimate(testing::first_devices(8), CollectiveOp::all_reduce, Bytes(s), "ring");
    EXPECT_EQ(e.protocol, want) << s;
    double least = 1e300;
    for (const ProtocolCost& p : all.protocols) {
      ProtocolSet alone = all;
      alone.protocols = {p};
      least = std::min(least, CollectiveCostModel(g, {.protocols = alone})
                                  .estimate(testing::first_devices(8), CollectiveOp::all_reduce, Bytes(s), "ring")
                                  .time.value());
    }
    EXPECT_DOUBLE_EQ(e.time.value(), least) << s;
  }
  // Large messages keep the link's whole bandwidth (Simple, f = 1): 8 GiB takes
  // 8.4 us + 14 x (0.5 + 2.8) us + 14/8 x S/B, busbw = 14/8 x S / t, 0.087 % below B.
  const double s = 8.0 * 1073741824;
  const auto big = m.estimate(testing::first_devices(8), CollectiveOp::all_reduce, Bytes(s), "auto");
  const double t = 8.4e-6 + 14 * 3.3e-6 + 14.0 / 8 * s / kBProto;
  EXPECT_EQ(big.protocol, "Simple");
  EXPECT_NEAR(big.busbw.value(), 14.0 / 8 * s / t, 1e-6 * kBProto);
}

TEST(CollectiveProtocol, TreePaysItsStepLatencyPerLevelNotPerChunk) {
  // Double binary tree: NCCL's tree latency is 2 (levels) x hwLat (tuning.cc), not one per
  // pipeline chunk; its bandwidth follows the tree fractions. With a channel limit out of
  // reach: t_p = t_network + base + 2 D l + bandwidth term x (1/f_tree - 1), D = floor(log2 n).
  const TopologyGraph g = build_proto(kNode, 8);
  const double base = 8.4e-6, l = 2.8e-6, f_tree = 0.92;
  const CollectiveCostModel ideal(g, {.protocols = ProtocolSet::ideal()});
  const CollectiveCostModel m(g, {.protocols = one(1, f_tree, base, l, 1e15, 1, 1)});
  for (double s : {8.0, 1048576.0, 268435456.0}) {
    const auto net =
        ideal.estimate(testing::first_devices(8), CollectiveOp::all_reduce, Bytes(s), "double_binary_tree");
    const auto e = m.estimate(testing::first_devices(8), CollectiveOp::all_reduce, Bytes(s), "double_binary_tree");
    const double want = net.time.value() + base + 2 * 3 * l + net.bandwidth_term.value() * (1 / f_tree - 1);
    EXPECT_NEAR(e.time.value(), want, want * 1e-12) << s;
    EXPECT_EQ(e.chunks, net.chunks);
  }
}

TEST(CollectiveProtocol, InNetworkReductionRunsSimpleOnly) {
  // tuning.cc: NVLS and NVLS-tree are costed for the Simple protocol alone.
  const TopologyGraph g = build_proto({{"type", "nvswitch-cluster"}, {"nvswitch_reduction", true}}, 8);
  const auto e =
      CollectiveCostModel(g).estimate(testing::first_devices(8), CollectiveOp::all_reduce, Bytes(8), "in_network");
  EXPECT_EQ(e.protocol, "Simple");
}

TEST(CollectiveProtocol, ParametersAreDeclaredOnceWithNcclDefaults) {
  // Defaults from NVIDIA/nccl 2.30.7 src/graph/tuning.cc (ring baseLat Simple 8.4 us,
  // LL fraction 0.5, LL128 0.92) and src/include/comm.h (Simple threshold 64 B x 512 threads).
  Diagnostics d;
  const Params p = resolve_params(protocol_params(), {{"simple_base_latency", "5 us"}}, "/p", d);
  ASSERT_TRUE(d.ok());
  const ProtocolSet s = ProtocolSet::nccl(p);
  EXPECT_DOUBLE_EQ(s.find(Protocol::simple)->base_latency.value(), 5e-6);
  EXPECT_DOUBLE_EQ(ProtocolSet::nccl().find(Protocol::simple)->base_latency.value(), 8.4e-6);
  EXPECT_DOUBLE_EQ(ProtocolSet::nccl().find(Protocol::ll)->ring_fraction, 0.5);
  EXPECT_DOUBLE_EQ(ProtocolSet::nccl().find(Protocol::ll128)->ring_fraction, 0.92);
  EXPECT_DOUBLE_EQ(ProtocolSet::nccl().find(Protocol::simple)->channel_grain.value(), 32768);
  EXPECT_EQ(ProtocolSet::nccl().max_channels, 32);
  resolve_params(protocol_params(), {{"ll_fraction", 1.5}}, "/p", d);
  EXPECT_FALSE(d.ok());
}

}  // namespace
}  // namespace hcsim
