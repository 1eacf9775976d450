// Closed form of transfers that start at once and share links (topologies/transfer_time).
#include "topologies/transfer_time.hpp"

#include <gtest/gtest.h>

#include "../support/test_topology.hpp"

namespace hcsim {
namespace {

TopologyGraph pool(int devices, int mems, nlohmann::json extra = nlohmann::json::object()) {
  nlohmann::json desc = {{"type", "cxl-pool"}, {"memory_devices", mems}, {"capacity", "512 GiB"}};
  desc.update(extra);
  return testing::test_topology(desc, devices);
}

// Every device reads `bytes` from memory node d mod M, all at once.
std::vector<NodeTransfer> reads(const TopologyGraph& g, double bytes) {
  const auto mem = memory_nodes(g);
  std::vector<NodeTransfer> out;
  for (int d = 0; d < g.device_count(); ++d)
    out.push_back({mem[static_cast<std::size_t>(d) % mem.size()], g.device_node(d), Bytes(bytes)});
  return out;
}

TEST(TransferTime, MemoryNodesInNodeOrder) {
  const TopologyGraph g = pool(4, 3);
  const auto mem = memory_nodes(g);
  ASSERT_EQ(mem.size(), 3u);
  EXPECT_LT(mem[0], mem[1]);
  EXPECT_LT(mem[1], mem[2]);
  for (int n : mem) EXPECT_EQ(g.nodes()[static_cast<std::size_t>(n)].kind, TopoNode::Kind::memory);
}

TEST(TransferTime, SharedMemoryLinkIsTheBottleneck) {
  // 4 hosts on 2 memory devices: each memory link carries 2 streams of S, each host link
  // one. cxl2 preset: 64 GB/s x 0.8 per direction; latency 80 ns host link + 70 ns switch
  // + 90 ns media (cxl_pool.hpp).
  const TopologyGraph g = pool(4, 2);
  const Router r(g);
  const double s = 1e9;
  const double expect = 2.0 * s / (64e9 * 0.8) + 240e-9;
  EXPECT_NEAR(concurrent_transfer_time(r, reads(g, s)).value(), expect, expect * 1e-12);
}

TEST(TransferTime, OneStreamPerMemoryDeviceIsBoundByItsLink) {
  const TopologyGraph g = pool(2, 2);
  const Router r(g);
  const double expect = 1e9 / (64e9 * 0.8) + 240e-9;  // one stream per link
  EXPECT_NEAR(concurrent_transfer_time(r, reads(g, 1e9)).value(), expect, expect * 1e-12);
}

TEST(TransferTime, MediaBandwidthSharedByReadsAndWrites) {
  // Media at 20 GB/s (below the 51.2 GB/s link): a read and a write on one device share it,
  // while each link direction carries only one of them.
  const TopologyGraph g = pool(2, 1, {{"media_bandwidth", "20 GB/s"}});
  const Router r(g);
  const int mem = memory_nodes(g).front();
  const std::vector<NodeTransfer> rw = {{mem, g.device_node(0), Bytes(1e9)}, {g.device_node(1), mem, Bytes(1e9)}};
  const double expect = 2e9 / 20e9 + 240e-9;
  EXPECT_NEAR(concurrent_transfer_time(r, rw).value(), expect, expect * 1e-12);
}

}  // namespace
}  // namespace hcsim
