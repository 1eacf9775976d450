// The same 1 GiB all-reduce over 1,024 A100s on the three clusters of scenarios/network/:
// (a) NVLink + InfiniBand fat-tree, (b) an 8x8x16 torus of electrical ICI-like links, (c) the
// same torus with photonic links. Times and network energy must follow the links'
// parameters: the closed forms below take every number from the scenario's own links.
#include <cmath>
#include <map>

#include <gtest/gtest.h>

#include "scenarios/scenario.hpp"
#include "sim/engine/engine.hpp"

namespace hcsim {
namespace {

const std::string kDir = std::string(HCSIM_SOURCE_DIR) + "/scenarios/network/";
constexpr double kS = 1073741824.0;  // 1 GiB per rank, divisible by every ring's chunk count

Scenario load(const std::string& name) {
  register_builtins();
  return load_scenario(kDir + name + ".json");
}

struct Outcome {
  double time = 0;
  std::map<std::string, double> bytes;   // by link class
  double energy = 0;                     // dynamic: bytes x energy per byte
  double model = 0;                      // the cost model's time for the plan
  std::string algorithm;
};

Outcome all_reduce(const Scenario& sc, const char* algorithm) {
  std::vector<std::uint32_t> devs;
  for (int d = 0; d < sc.device_count(); ++d) devs.push_back(static_cast<std::uint32_t>(d));
  EngineOptions opt;
  opt.algorithm = algorithm;
  opt.planner = std::make_shared<CollectivePlanner>(sc.topology, algorithm, false);
  Outcome o;
  const auto& plan = opt.planner->plan(devs, CollectiveOp::all_reduce, kS);
  o.algorithm = plan.algorithm;
  o.model = plan.estimate.time.value();
  TaskGraph g;
  g.devices = static_cast<std::uint32_t>(devs.size());
  Task t;
  t.kind = TaskKind::collective;
  t.group = g.add_group(devs);
  t.bytes = Bytes(kS);
  g.add(t, {});
  const EngineResult r = simulate(sc.topology, g, opt);
  o.time = r.makespan;
  for (std::size_t e = 0; e < r.edge_bytes.size(); ++e) {
    const TopoEdge& ed = sc.topology.edges()[e];
    o.bytes[ed.link_class()] += r.edge_bytes[e];
    o.energy += (Bytes(r.edge_bytes[e]) * ed.link().energy_per_byte).value();
  }
  return o;
}

// Dimension-ordered rings on d0 x d1 x d2, one link of latency a and bandwidth b per hop:
// t = sum_k 2(d_k - 1)(a + S / (b prod_{i<=k} d_i)) (Ying et al. 2018; cost_test.cpp).
double torus_time(const std::vector<int>& dims, double a, double b) {
  double t = 0, prod = 1;
  for (int d : dims) {
    prod *= d;
    t += 2 * (d - 1) * (a + kS / (b * prod));
  }
  return t;
}

// Bytes the torus all-reduce puts on links: each rank sends 2(d_k - 1)/d_k of its region
// S / prod_{i<k} d_i in dimension k, one hop each.
double torus_bytes(const std::vector<int>& dims) {
  double total = 0, prod = 1;
  for (int d : dims) {
    prod *= d;
    total += 2.0 * (d - 1) / prod * kS;
  }
  return 1024 * total;
}

TEST(ThreeClusters, ToriTakeTheTimeTheirLinksGive) {
  const Scenario b = load("electrical-torus-1024"), c = load("photonic-torus-1024");
  const LinkSpec& lb = b.topology.edges()[0].link();
  const LinkSpec& lc = c.topology.edges()[0].link();
  // The links as the scenario and the optical-io-teraphy preset state them (hardware.md §6).
  EXPECT_DOUBLE_EQ(lb.bandwidth.value(), 50e9);
  EXPECT_DOUBLE_EQ(lc.bandwidth.value(), 8 * 8 * 32e9 / 8);
  EXPECT_NEAR(lc.latency.value(), 10e-9 + 4.9e-9, 1e-12);
  const Outcome ob = all_reduce(b, "torus"), oc = all_reduce(c, "torus");
  const double tb = torus_time({8, 8, 16}, lb.latency.value(), (lb.bandwidth * lb.efficiency).value());
  const double tc = torus_time({8, 8, 16}, lc.latency.value(), (lc.bandwidth * lc.efficiency).value());
  EXPECT_NEAR(ob.time / tb, 1.0, 1e-3);
  EXPECT_NEAR(oc.time / tc, 1.0, 1e-3);
  // Bandwidth-bound: the time ratio is nearly the bandwidth ratio 256/50; the latency terms
  // (58 hops of 0.5 us against 14.9 ns) make the electrical torus a little slower still.
  EXPECT_GT(ob.time / oc.time, 256.0 / 50.0);
  EXPECT_NEAR(ob.time / oc.time, tb / tc, 1e-3 * tb / tc);
}

TEST(ThreeClusters, PhotonicTorusSpendsTheEnergyPerByteRatio) {
  // Same shape, same algorithm: the same bytes on the same links, so the dynamic network
  // energy ratio is the energy-per-byte ratio, 5 / 5.5 pJ/bit.
  const Scenario b = load("electrical-torus-1024"), c = load("photonic-torus-1024");
  const Outcome ob = all_reduce(b, "torus"), oc = all_reduce(c, "torus");
  const double eb = b.topology.edges()[0].link().energy_per_byte.value();
  const double ec = c.topology.edges()[0].link().energy_per_byte.value();
  EXPECT_DOUBLE_EQ(eb, 5.5e-12 * 8);
  EXPECT_DOUBLE_EQ(ec, 5e-12 * 8);
  EXPECT_NEAR(ob.bytes.at("ici"), torus_bytes({8, 8, 16}), 1.0);
  EXPECT_NEAR(oc.bytes.at("optical"), torus_bytes({8, 8, 16}), 1.0);
  EXPECT_NEAR(ob.energy, torus_bytes({8, 8, 16}) * eb, 1e-9 * ob.energy);
  EXPECT_NEAR(oc.energy / ob.energy, ec / eb, 1e-12);
}

TEST(ThreeClusters, FatTreeTimeAndEnergyFollowItsLinks) {
  // NCCL's rings over its channels (multi_ring): ring j carries S/8 and crosses into the next
  // node through GPU j's own NIC. Of each ring's 1,024 hops, 128 cross nodes.
  const Scenario a = load("nvlink-fat-tree-1024"), c = load("photonic-torus-1024");
  const Outcome oa = all_reduce(a, "multi_ring"), oc = all_reduce(c, "torus");
  double e_nv = 0, e_ib = 0, b_ib = 0;
  for (const TopoEdge& ed : a.topology.edges()) {
    if (ed.link_class() == "nvlink") e_nv = ed.link().energy_per_byte.value();
    if (ed.link_class() == "infiniband") {
      e_ib = ed.link().energy_per_byte.value();
      b_ib = (ed.bandwidth() * ed.link().efficiency).value();
    }
  }
  // ib-hdr preset: 200 Gb/s, efficiency 0.92 (nccl-tests' ~23 GB/s per
  // HDR HCA, models/link/presets.cpp).
  EXPECT_DOUBLE_EQ(b_ib, 25e9 * 0.92);
  // On an idle network the engine takes the cost model's time (to the latency of the
  // longest path: flows that cross spines are not the most loaded ones).
  EXPECT_LE(oa.time, oa.model * (1 + 1e-9));
  EXPECT_GT(oa.time, oa.model * 0.99);
  // Every node sends 2(N-1)/N S through its 8 NICs at least (bandwidth-optimal all-reduce
  // across N = 128 nodes; Patarasuk & Yuan 2009), and the photonic torus, at 256 GB/s a
  // link, is faster than the NICs' 21.75 GB/s allow.
  const double nic_bound = 2.0 * 127 / 128 * kS / (8 * b_ib);
  EXPECT_GT(oa.time, nic_bound);
  EXPECT_LT(oc.time, nic_bound);
  // Energy: the rings move 2(n-1) S hop-bytes; 7/8 of the hops cross two NVLink edges, 1/8
  // cross two NIC edges and, when leaf and leaf differ, a leaf-spine and a spine-leaf edge
  // (InfiniBand links, ib-hdr's 15 pJ/bit).
  const double hop_bytes = 2.0 * 1023 * kS;
  EXPECT_NEAR(oa.bytes.at("nvlink"), hop_bytes * 7 / 8 * 2, 1.0);
  const double low = hop_bytes * (7.0 / 8 * 2 * e_nv + 1.0 / 8 * 2 * e_ib);
  const double high = hop_bytes * (7.0 / 8 * 2 * e_nv + 1.0 / 8 * 4 * e_ib);
  EXPECT_GT(oa.energy, low);
  EXPECT_LT(oa.energy, high);
  EXPECT_GT(oa.energy, 2 * oc.energy);  // low / E_c = 107 / 40 pJ per hop-byte
}

TEST(ThreeClusters, AutoPicksTheAllDimensionsTorusAlgorithmOnATorus) {
  // On a whole torus the dimension-ordered rings need 58 steps where a flat ring needs 2,046,
  // and running every dimension at once (torus_all_dims) keeps all of a chip's links busy
  // in each phase where the dimension-ordered rings use one dimension's (cost.hpp): "auto"
  // takes it, and it is faster than the dimension-ordered rings.
  const Outcome all = all_reduce(load("photonic-torus-1024"), "auto");
  EXPECT_EQ(all.algorithm, "torus_all_dims");
  EXPECT_LT(all.time, all_reduce(load("photonic-torus-1024"), "torus").time);
}

}  // namespace
}  // namespace hcsim
