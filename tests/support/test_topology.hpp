#pragma once
// A topology for a test, from its JSON description (docs/network.md), with the builtin
// links and topologies registered. The description must be valid: a test failure names the
// first issue.
#include <numeric>
#include <vector>

#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include "topologies/topology.hpp"

namespace hcsim::testing {

inline TopologyGraph test_topology(const nlohmann::json& desc, int devices) {
  register_builtin_links();
  register_builtin_topologies();
  Diagnostics d;
  TopologyGraph g = build_topology(desc, devices, "/t", d);
  EXPECT_TRUE(d.ok()) << (d.ok() ? "" : d.issues()[0].message);
  return g;
}

// 32 nodes of 8 H800 (NVLink 200 GB/s, one 400 Gb/s NDR NIC per GPU) on leaves of 20 nodes
// (radix 40): 64-GPU groups of nodes 16-23 straddle a leaf edge, those of nodes 24-31 do
// not. `fabric` and `routing`: nvswitch-cluster's `fabric` and `fabric_routing`
// (docs/network.md).
inline TopologyGraph h800_leaves_of_20_nodes(const char* fabric, const char* routing) {
  return test_topology({{"type", "nvswitch-cluster"},
                        {"nvlink", {{"preset", "nvlink4-h800"}}},
                        {"nic", {{"preset", "ib-ndr"}}},
                        {"fabric", fabric},
                        {"fabric_routing", routing},
                        {"switch_radix", 40}},
                       256);
}
// The same on rail-optimised leaves, routed by destination.
inline TopologyGraph h800_rails_of_20_nodes() { return h800_leaves_of_20_nodes("rail-optimised", "d-mod-k"); }

// Devices 0 .. n-1: a group of the first n devices.
inline std::vector<int> first_devices(int n) {
  std::vector<int> v(static_cast<std::size_t>(n));
  std::iota(v.begin(), v.end(), 0);
  return v;
}

}  // namespace hcsim::testing
