// Graph analysis: counts, diameter, hop histogram and bisection against closed forms.
#include "topologies/analysis.hpp"

#include <numeric>

#include <gtest/gtest.h>

namespace hcsim {
namespace {

const nlohmann::json kLink = {{"type", "electrical"}, {"bandwidth", "50 GB/s"}, {"latency", "1 us"}};

TopologyGraph build_ok(const nlohmann::json& desc, int devices) {
  Diagnostics d;
  TopologyGraph g = build_topology(desc, devices, "/t", d);
  EXPECT_TRUE(d.ok()) << (d.ok() ? "" : d.issues()[0].message);
  return g;
}

TEST(Analysis, TorusDiameterHistogramAndBisection) {
  TopologyGraph g = build_ok({{"type", "torus"}, {"dims", {4, 4, 8}}, {"link", kLink}}, 128);
  const auto a = analyse_topology(g);
  EXPECT_EQ(a.devices, 128);
  EXPECT_EQ(a.links, 384);
  // Diameter of a torus: sum of floor(d_k / 2) = 2 + 2 + 4.
  EXPECT_EQ(a.diameter, 8);
  // Every ordered pair counted; 6 neighbours per chip.
  EXPECT_EQ(a.pairs_counted, 128 * 127);
  EXPECT_EQ(a.hop_histogram[1], 128 * 6);
  EXPECT_EQ(std::accumulate(a.hop_histogram.begin(), a.hop_histogram.end(), std::int64_t{0}), 128 * 127);
  // Bisection across the longest dimension: 2 * N / d_max = 2 * 4 * 4 = 32 links of 50 GB/s (Dally & Towles §3).
  EXPECT_DOUBLE_EQ(a.bisection_bandwidth.value(), 32 * 50e9);
  // Mean distance of a torus = sum of mean ring distances, over pairs excluding self:
  // rings of 4: (0+1+2+1)/4 = 1, ring of 8: 16/8 = 2 -> 4 per ordered pair including self -> x 128/127.
  EXPECT_NEAR(a.mean_hops, 4.0 * 128 / 127, 1e-12);
}

TEST(Analysis, BisectionFindsTheShortDimensionCut) {
  // 8x4x4: the longest dimension varies fastest; the cut across it is still 2 * 4 * 4 links.
  TopologyGraph g = build_ok({{"type", "torus"}, {"dims", {8, 4, 4}}, {"link", kLink}}, 128);
  EXPECT_DOUBLE_EQ(analyse_topology(g).bisection_bandwidth.value(), 32 * 50e9);
}

TEST(Analysis, NonBlockingFatTreeBisectionIsHalfTheNics) {
  // 16 nodes x 8 GPUs, 1:1 fat-tree: N/2 = 64 HDR ports of 25 GB/s cross any balanced cut.
  TopologyGraph g = build_ok({{"type", "nvswitch-cluster"}}, 128);
  const auto a = analyse_topology(g);
  EXPECT_DOUBLE_EQ(a.bisection_bandwidth.value(), 64 * 25e9);
  // GPU - leaf - spine - leaf - GPU.
  EXPECT_EQ(a.diameter, 4);
  // Same node: 2 hops (NVSwitch); 7 peers per GPU.
  EXPECT_EQ(a.hop_histogram[2] >= 128 * 7, true);
}

TEST(Analysis, OversubscribedFatTreeBisection) {
  // 1:3 at radix 40: 30 down, 10 up; 64 ports -> 3 leaves (30, 30, 4 ports) x 10 spines.
  // Contiguous halving puts leaf 0 + 2 of leaf 1's ports on one side: 30 ports on leaf 0 can only
  // leave through its 10 uplinks -> the cut is 10 + 2 = 12 links of 25 GB/s.
  TopologyGraph g = build_ok({{"type", "nvswitch-cluster"}, {"oversubscription", 3}}, 64);
  EXPECT_DOUBLE_EQ(analyse_topology(g).bisection_bandwidth.value(), 12 * 25e9);
}

TEST(Analysis, SingleNodeNvswitch) {
  TopologyGraph g = build_ok({{"type", "nvswitch-cluster"}}, 8);
  const auto a = analyse_topology(g);
  EXPECT_EQ(a.diameter, 2);
  EXPECT_EQ(a.switches, 1);
  // Half the GPUs each push their 300 GB/s through the switch.
  EXPECT_DOUBLE_EQ(a.bisection_bandwidth.value(), 4 * 300e9);
}

TEST(Analysis, LargeGraphsAreSampledDeterministically) {
  TopologyGraph g = build_ok({{"type", "torus"}, {"dims", {16, 16, 16}}, {"link", kLink}}, 4096);
  AnalysisOptions o;
  o.max_exact_devices = 1024;
  o.sample_sources = 8;
  o.max_bisection_cuts = 1;
  const auto a = analyse_topology(g, o);
  EXPECT_TRUE(a.sampled);
  EXPECT_EQ(a.pairs_counted, 8 * 4095);
  EXPECT_EQ(a.diameter, 24);  // vertex-transitive: exact from any source
  // Contiguous halving of a 16^3 torus: 2 * 16 * 16 links.
  EXPECT_DOUBLE_EQ(a.bisection_bandwidth.value(), 512 * 50e9);
}

}  // namespace
}  // namespace hcsim
