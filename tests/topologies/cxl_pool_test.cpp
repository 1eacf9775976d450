// cxl-pool: hosts, switch, memory devices and the latency of a pooled load.
#include "topologies/cxl_pool.hpp"

#include <gtest/gtest.h>

#include "topologies/routing.hpp"

namespace hcsim {
namespace {

TEST(CxlPool, HostsReachMemoryThroughTheSwitch) {
  Diagnostics d;
  TopologyGraph g = build_topology({{"type", "cxl-pool"}, {"memory_devices", 2}, {"capacity", "512 GiB"}}, 4, "/t", d);
  ASSERT_TRUE(d.ok());
  EXPECT_EQ(g.device_count(), 4);
  EXPECT_EQ(static_cast<int>(g.edges().size()), 4 + 2);
  int mem = -1;
  for (std::size_t i = 0; i < g.nodes().size(); ++i)
    if (g.nodes()[i].kind == TopoNode::Kind::memory) { mem = static_cast<int>(i); break; }
  ASSERT_GE(mem, 0);
  const MemoryMedia& media = g.media(mem);
  EXPECT_DOUBLE_EQ(media.capacity.value(), 512.0 * 1073741824.0);
  EXPECT_NEAR(media.latency.value(), 90e-9, 1e-18);  // default local DRAM media latency
  Router r(g);
  const Route& rt = r.route(g.device_node(2), mem);
  ASSERT_TRUE(rt.reachable);
  EXPECT_EQ(rt.hops(), 2);
  // cxl2 preset: 80 ns added load latency on the host link + 70 ns switch traversal.
  EXPECT_NEAR(rt.latency.value(), 150e-9, 1e-18);
  // 64 GB/s x 0.8 efficiency (cxl2 preset).
  EXPECT_DOUBLE_EQ(rt.bottleneck.value(), 64e9 * 0.8);
  EXPECT_EQ(g.edges()[0].link_class(), "cxl");
}

}  // namespace
}  // namespace hcsim
