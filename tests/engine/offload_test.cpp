// The engine with memory endpoints: optimizer-state streams between devices and the
// memory nodes of a CXL pool are flows that share the pool's links, and take the closed
// form of topologies/transfer_time (max-min sharing of alike flows is exact).
#include <gtest/gtest.h>

#include "../support/test_topology.hpp"
#include "sim/engine/engine.hpp"
#include "topologies/transfer_time.hpp"

namespace hcsim {
namespace {

TopologyGraph pool(int devices, int mems) {
  return testing::test_topology({{"type", "cxl-pool"}, {"memory_devices", mems}, {"capacity", "512 GiB"}}, devices);
}

// Device d reads `bytes` from memory endpoint d mod M; with `write`, it then writes them back.
TaskGraph streams(int devices, int mems, double bytes, bool write, int first = 0) {
  TaskGraph g;
  g.devices = static_cast<std::uint32_t>(devices);
  g.memory_endpoints = static_cast<std::uint32_t>(mems);
  for (int d = first; d < devices; ++d) {
    Task t;
    t.kind = TaskKind::send;
    t.comm = CommClass::offload;
    t.phase = Phase::optimizer;
    t.device = static_cast<std::uint32_t>(devices + d % mems);
    t.peer = static_cast<std::uint32_t>(d);
    t.bytes = Bytes(bytes);
    const TaskId read = g.add(t, {});
    if (!write) continue;
    std::swap(t.device, t.peer);
    g.add(t, {read});
  }
  return g;
}

TEST(EngineOffload, SharedPoolStreamsTakeTheClosedForm) {
  const TopologyGraph topo = pool(8, 2);
  const double s = 2e9;
  const TaskGraph g = streams(8, 2, s, true);
  const EngineResult r = simulate(topo, g, {});
  const auto mem = memory_nodes(topo);
  std::vector<NodeTransfer> reads;
  for (int d = 0; d < 8; ++d) reads.push_back({mem[static_cast<std::size_t>(d % 2)], topo.device_node(d), Bytes(s)});
  // Read, then write back: two rounds of 4 streams per memory link (closed form:
  // 4 S / (64 GB/s x 0.8) + 240 ns each; cxl2 preset, cxl_pool.hpp).
  const double one = concurrent_transfer_time(Router(topo), reads).value();
  EXPECT_NEAR(one, 4.0 * s / (64e9 * 0.8) + 240e-9, 1e-12);
  EXPECT_NEAR(r.makespan / (2.0 * one), 1.0, 1e-6);
  // Each stream crosses its host link and its memory link: 2 x 8 streams x 2 edges.
  double link_bytes = 0;
  for (double b : r.edge_bytes) link_bytes += b;
  EXPECT_NEAR(link_bytes, 2.0 * 8 * 2 * s, 1.0);
}

TEST(EngineOffload, DevicesThatRunNothingStillStream) {
  // Only devices 4..7 stream (hosts are made for used endpoints only): half the load on
  // each memory link, half the time of the shared phase above.
  const TopologyGraph topo = pool(8, 2);
  const EngineResult r = simulate(topo, streams(8, 2, 2e9, false, 4), {});
  EXPECT_NEAR(r.makespan, 2.0 * 2e9 / (64e9 * 0.8) + 240e-9, 1e-9);
}

}  // namespace
}  // namespace hcsim
