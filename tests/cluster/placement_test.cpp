// The Placer's packing and leaf rules (sim/cluster/placement.hpp), on hand-drawn layouts.

#include "sim/cluster/placement.hpp"

#include <numeric>

#include <gtest/gtest.h>

#include "fake_oracle.hpp"

namespace hcsim {
namespace {

std::vector<std::uint32_t> range(std::uint32_t first, std::uint32_t n) {
  std::vector<std::uint32_t> v(n);
  std::iota(v.begin(), v.end(), first);
  return v;
}

// 4 nodes of 8, one leaf. Small jobs: best fit among partly held nodes, else the lowest
// fully free node; the lowest free devices of that node.
TEST(Placer, SmallJobsBestFitOnPartlyHeldNodes) {
  const auto l = test::layout({32});
  Placer p(l);
  EXPECT_EQ(p.place(0, 4).devices, range(0, 4));  // no partly held node: node 0
  EXPECT_EQ(p.place(0, 2).devices, range(4, 2));  // node 0 (4 free) is partly held
  EXPECT_EQ(p.place(0, 4).devices, range(8, 4));  // node 0 has 2 free < 4: lowest free node 1
  EXPECT_EQ(p.place(0, 2).devices, range(6, 2));  // node 0 (2 free) before node 1 (4 free)
  EXPECT_EQ(p.free(0), 20u);                      // 32 - 12
  EXPECT_EQ(p.fragmented(0), 4u);                 // node 1's 4 free; node 0 full, 2-3 free
  EXPECT_TRUE(p.fits(0, 16));                     // nodes 2, 3
  EXPECT_FALSE(p.fits(0, 24));                    // only 2 whole nodes free
  EXPECT_FALSE(p.fits(0, 12));                    // not a multiple of 8 (the parser's rule)
}

// 6 nodes of 8, leaves of 2 nodes: L0 {0,1}, L1 {2,3}, L2 {4,5}.
TEST(Placer, WholeNodeJobsBestFitLeafThenMostFreeLeaves) {
  const auto l = test::layout({48}, 8, 2);
  Placer p(l);
  EXPECT_EQ(p.place(0, 8).devices, range(0, 8));  // all leaves have 2 free: tie, L0, node 0
  EXPECT_EQ(p.place(0, 8).devices, range(8, 8));  // best fit: L0 has 1 free node, enough
  const JobPlacement small = p.place(0, 4);       // lowest fully free node: node 2
  EXPECT_EQ(small.devices, range(16, 4));
  // Free whole nodes: L1 {3}, L2 {4, 5}: no leaf has 3; L2 (2 free) then L1 (1 free).
  const JobPlacement big = p.place(0, 24);
  EXPECT_EQ(big.devices, range(24, 24));
  EXPECT_EQ(p.free(0), 4u);
  EXPECT_EQ(p.fragmented(0), 4u);
  EXPECT_FALSE(p.fits(0, 8));
  EXPECT_TRUE(p.fits(0, 4));
  p.release(big);
  EXPECT_EQ(p.free(0), 28u);
  // L1 {3} has 1 free node, L2 {4, 5} 2: 8 devices best-fit into L1.
  EXPECT_EQ(p.place(0, 8).devices, range(24, 8));
}

// Pools number their devices from their first device; pools do not share nodes.
TEST(Placer, PoolsAreSeparateRanges) {
  const auto l = test::layout({16, 16});
  Placer p(l);
  EXPECT_EQ(p.place(1, 16).devices, range(16, 16));
  EXPECT_FALSE(p.fits(1, 1));
  EXPECT_EQ(p.place(0, 1).devices, range(0, 1));
  EXPECT_EQ(p.free(0), 15u);
  EXPECT_EQ(p.free(1), 0u);
  EXPECT_FALSE(p.fits(0, 32));  // larger than the pool
}

// Leaves are the cluster's, not the pool's: with three nodes a leaf, a pool of four nodes
// that starts at node 2 has its first node in leaf 0 (beside the other pool's two) and the
// other three in leaf 1. A three-node job fits leaf 1 alone: nodes 3-5, devices 24-47 (a
// leaf counted from the pool's start would have given nodes 2-4, across two leaves).
TEST(Placer, LeavesAreTheClustersWhenAPoolStartsInsideOne) {
  const auto l = test::layout({16, 32}, 8, 3);
  Placer p(l);
  EXPECT_EQ(p.place(1, 24).devices, range(24, 24));
  EXPECT_EQ(p.place(1, 8).devices, range(16, 8));  // the node left in leaf 0
}

}  // namespace
}  // namespace hcsim
