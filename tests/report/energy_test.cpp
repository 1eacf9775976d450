// Energy: components add up to the total, a small case derived by hand from the device
// and link parameters, and electrical vs photonic links in the ratio of their energy per
// bit (plus the lasers' static power).
#include <gtest/gtest.h>

#include "report_fixture.hpp"
#include "workloads/formulas.hpp"

namespace hcsim {
namespace {

using testing::quickstart;
using testing::run_doc;
using testing::small_doc;

// Reassociating sums of a few thousand positive terms: ~1e-13 relative.
constexpr double kSumRounding = 1e-12;

void expect_components_add_up(const Scenario& sc, const Metrics& m) {
  EXPECT_EQ(m.it_energy.value(), m.device_dynamic.value() + m.device_static.value() + m.network_dynamic.value() + m.network_static.value());
  double dyn = 0, stat = 0, total = 0;
  for (const auto& d : m.devices) {
    dyn += d.dynamic_energy.value();
    stat += d.static_energy.value();
    total += d.energy().value();
  }
  EXPECT_EQ(dyn, m.device_dynamic.value());
  EXPECT_EQ(stat, m.device_static.value());
  EXPECT_NEAR(total, m.device_dynamic.value() + m.device_static.value(), kSumRounding * total);
  double ldyn = 0, lstat = 0;
  for (const auto& l : m.links) {
    ldyn += l.dynamic_energy.value();
    lstat += l.static_energy.value();
  }
  EXPECT_EQ(ldyn, m.network_dynamic.value());
  EXPECT_EQ(lstat, m.network_static.value());
  double stages = 0;
  for (const auto& s : m.stages) stages += s.energy.value();
  EXPECT_NEAR(stages, m.device_dynamic.value() + m.device_static.value(), kSumRounding * stages);
  EXPECT_DOUBLE_EQ(m.facility_energy.value(), sc.pue * m.it_energy.value());
  EXPECT_DOUBLE_EQ(m.energy_per_token.value() * m.tokens_per_step, m.it_energy.value());
  EXPECT_DOUBLE_EQ(m.average_power.value() * m.step_time.value(), m.it_energy.value());
}

void expect_power_curve(const Metrics& m) {
  ASSERT_EQ(m.power.size(), 100u);
  double floor = m.network_static.value() / m.step_time.value(), integral = 0;
  for (const auto& d : m.devices) floor += d.idle_power.value();
  for (Watts w : m.power) {
    const double p = w.value();
    integral += p * m.power_interval.value();
    EXPECT_GE(p, floor * (1 - kSumRounding));
    EXPECT_LE(p, m.peak_power.value() * (1 + kSumRounding));
  }
  // The samples are means over their intervals: they integrate to the step's energy.
  EXPECT_NEAR(integral, m.it_energy.value(), 1e-9 * m.it_energy.value());
  EXPECT_GE(m.peak_power.value(), m.average_power.value());
}

TEST(Energy, ComponentsAddUpQuickstart) {
  const auto q = quickstart();
  expect_components_add_up(q->sc, q->out.metrics);
  expect_power_curve(q->out.metrics);
}

nlohmann::json photonic_link() {
  // 8 wavelengths x 37.5 GB/s = 300 GB/s per direction (NVLink3's); 1 pJ/bit; 50 mW laser
  // per wavelength and direction.
  return {{"type", "photonic"},      {"lane_rate", "37.5 GB/s"},        {"wavelengths", 8},
          {"fixed_latency", "0.25 us"}, {"energy_per_byte", "1 pJ/bit"}, {"laser_power_per_lane", "50 mW"}};
}

nlohmann::json electrical_link() {
  return {{"type", "electrical"}, {"bandwidth", "300 GB/s"}, {"latency", "0.2549 us"},
          {"energy_per_byte", "5.5 pJ/bit"}};
}

TEST(Energy, ComponentsAddUpSmallCase) {
  const auto r = run_doc(small_doc(2, 2, 2, photonic_link()));
  expect_components_add_up(r->sc, r->out.metrics);
  expect_power_curve(r->out.metrics);
}

TEST(Energy, DerivedByHand) {
  // Two report-test devices (1 pJ/FLOP, 0 J/B, 50 W idle) in data parallel on one
  // NVSwitch node whose two links are photonic (1 pJ/bit, 8 lanes x 50 mW per direction);
  // PUE 1.5. A GPT with l = 4, h = 1024, V = 1024, s = 512, batch 8, no recompute.
  nlohmann::json doc = small_doc(2, 1, 1, photonic_link());
  doc["cluster"]["pue"] = 1.5;
  doc["strategy"]["flash_attention"] = false;  // unfused: executes the full square eq. 8 counts
  const auto r = run_doc(doc);
  const Metrics& m = r->out.metrics;
  const double T = m.step_time.value();
  // Devices: idle 2 x 50 W x T; dynamic = 1e-12 J x FLOPs executed, which are the model's
  // 72 B l s h^2 (1 + s/(6h) + V/(12 h l)) (Korthikanti et al. eq. 8; 0.5 % as in
  // tests/workloads/flops_test.cpp, the closed form leaves out the element-wise ops).
  EXPECT_DOUBLE_EQ(m.device_static.value(), 2 * 50.0 * T);
  EXPECT_NEAR(m.device_dynamic.value(), 1e-12 * m.hardware_flops.value(), kSumRounding * m.device_dynamic.value());
  const double flops = formulas::model_flops(8, 512, 4, 1024, 1024).value();
  EXPECT_NEAR(m.device_dynamic.value() / (1e-12 * flops), 1.0, 0.005);
  // Network: the gradient all-reduce of S = 4 P bytes (bf16's fp32 main gradients) over n = 2 ranks puts 2(n-1)/n S = S
  // on each of the 2 ring edges (0 -> 1, 1 -> 0), each crossing 2 links (GPU - NVSwitch -
  // GPU): 4 S bytes at 1 pJ/bit = 8e-12 J/B. P = l (12 h^2 + 13 h) + V h + s h.
  const double h = 1024, l = 4, V = 1024, s = 512;
  const double S = 4.0 * (l * (12 * h * h + 13 * h) + V * h + s * h);
  EXPECT_NEAR(m.network_dynamic.value(), 4 * S * 8e-12, 1e-9 * m.network_dynamic.value());
  // Lasers: 50 mW x 8 wavelengths x 2 directions per link, 2 links, all step.
  EXPECT_NEAR(m.network_static.value(), 0.05 * 8 * 2 * 2 * T, 1e-12 * m.network_static.value());
  const double it = 2 * 50.0 * T + 1e-12 * m.hardware_flops.value() + 4 * S * 8e-12 + 0.05 * 8 * 2 * 2 * T;
  EXPECT_NEAR(m.it_energy.value(), it, 1e-9 * it);
  EXPECT_NEAR(m.facility_energy.value(), 1.5 * it, 1.5e-9 * it);
  EXPECT_NEAR(m.energy_per_token.value(), it / (8 * 512), 1e-9 * it / (8 * 512));
}

TEST(Energy, MemoryTrafficAddsBytesTimesEnergyPerByte) {
  // dynamic = FLOPs x e_flop + bytes x e_byte (the device model's energy of each task):
  // raising e_byte from 0 to 10 pJ/B adds 1e-11 J x the compute tasks' memory traffic.
  nlohmann::json doc = small_doc(2, 1, 1, testing::nvlink3());
  const auto base = run_doc(doc);
  doc["cluster"]["pools"][0]["overrides"] = {{"energy_per_byte", 1e-11}};
  const auto more = run_doc(doc);
  double bytes = 0;
  for (const Task& t : more->out.graph.tasks())
    if (t.kind == TaskKind::compute) bytes += t.bytes.value();
  ASSERT_GT(bytes, 0);
  const double extra = more->out.metrics.device_dynamic.value() - base->out.metrics.device_dynamic.value();
  EXPECT_NEAR(extra, 1e-11 * bytes, 1e-9 * extra);
}

TEST(Energy, PhotonicVersusElectricalLinks) {
  // Same bandwidth, same bytes moved: network dynamic energy scales by the energy per bit,
  // 1 / 5.5; the photonic link adds its lasers' static power, the electrical one has none.
  const auto el = run_doc(small_doc(2, 2, 2, electrical_link()));
  const auto ph = run_doc(small_doc(2, 2, 2, photonic_link()));
  const Metrics& a = el->out.metrics;
  const Metrics& b = ph->out.metrics;
  double bytes_a = 0, bytes_b = 0;
  for (const auto& l : a.links) bytes_a += l.bytes.value();
  for (const auto& l : b.links) bytes_b += l.bytes.value();
  ASSERT_GT(bytes_a, 0);
  EXPECT_DOUBLE_EQ(bytes_a, bytes_b);
  EXPECT_NEAR(b.network_dynamic.value() / a.network_dynamic.value(), 1.0 / 5.5, 1e-12);
  EXPECT_EQ(a.network_static.value(), 0);
  // 8 links (one per GPU) x 50 mW x 8 wavelengths x 2 directions.
  EXPECT_NEAR(b.network_static.value(), 8 * 0.05 * 8 * 2 * b.step_time.value(), 1e-12 * b.network_static.value());
  const double net_a = a.network_dynamic.value() + a.network_static.value();
  const double net_b = b.network_dynamic.value() + b.network_static.value();
  EXPECT_NEAR(net_b, net_a / 5.5 + 8 * 0.05 * 8 * 2 * b.step_time.value(), 1e-9 * net_b);
}

// Node power (models/energy/node_power.hpp): the hosts beside the accelerators draw
// idle + (max - idle) u, u = the accelerators' dynamic power over their dynamic range
// (TDP - idle, summed), per node of devices_per_node; IT = accelerators + links + hosts and
// facility = PUE x IT. Four devices at 2 per node: two nodes of 1 kW idle, 3 kW max.
TEST(Energy, NodePowerAddsUp) {
  nlohmann::json doc = small_doc(4, 1, 1, testing::nvlink3());
  doc["cluster"]["pue"] = 1.2;
  doc["cluster"]["node_power"] = {{"idle", "1 kW"}, {"max", "3 kW"}, {"devices_per_node", 2}};
  const auto r = run_doc(doc);
  const Metrics& m = r->out.metrics;
  const double T = m.step_time.value();
  double headroom = 0;
  for (const auto& d : m.devices)
    headroom += (r->sc.pools[0].device->max_power() - d.idle_power).value();
  const double u = m.device_dynamic.value() / (headroom * T);
  ASSERT_GT(u, 0.0);
  ASSERT_LT(u, 1.0);
  EXPECT_NEAR(m.host_energy.value(), 2 * (1000.0 + 2000.0 * u) * T, 1e-12 * m.host_energy.value());
  EXPECT_EQ(m.accelerator_energy.value(), m.device_dynamic.value() + m.device_static.value() +
                                              m.network_dynamic.value() + m.network_static.value());
  EXPECT_EQ(m.it_energy, m.accelerator_energy + m.host_energy);
  EXPECT_DOUBLE_EQ(m.facility_energy.value(), 1.2 * m.it_energy.value());
  EXPECT_DOUBLE_EQ(r->report["energy"]["host_j"].get<double>(), m.host_energy.value());
  // The power samples integrate to the IT energy, hosts included.
  double e = 0;
  for (const auto& w : m.power) e += w.value() * m.power_interval.value();
  EXPECT_NEAR(e, m.it_energy.value(), 1e-9 * e);
  // Without node_power the hosts are not counted and nothing else moves.
  doc["cluster"].erase("node_power");
  const auto plain = run_doc(doc);
  EXPECT_EQ(plain->out.metrics.host_energy.value(), 0.0);
  EXPECT_EQ(plain->out.metrics.accelerator_energy, m.accelerator_energy);
}

// The presets are their datasheets' system maxima minus the accelerators' TDP
// (models/energy/node_power.hpp): DGX H100 10.2 kW - 8 x 700 W = 4.6 kW; bad input names
// its path.
TEST(Energy, NodePowerPresetsAndBadInput) {
  Diagnostics d;
  const auto h = parse_node_power({{"preset", "dgx-h100"}}, "/cluster/node_power", d);
  ASSERT_TRUE(h);
  EXPECT_EQ(h->max.value(), 10200.0 - 8 * 700.0);
  EXPECT_EQ(h->devices_per_node, 8);
  const auto a = parse_node_power({{"preset", "dgx-a100"}, {"idle", "900 W"}}, "/cluster/node_power", d);
  ASSERT_TRUE(a);
  EXPECT_EQ(a->max.value(), 6500.0 - 8 * 400.0);
  EXPECT_EQ(a->idle.value(), 900.0);
  EXPECT_TRUE(d.ok());
  EXPECT_FALSE(parse_node_power(nlohmann::json::object(), "/cluster/node_power", d));
  EXPECT_FALSE(parse_node_power({{"idle", "2 kW"}, {"max", "1 kW"}}, "/cluster/node_power", d));
  ASSERT_EQ(d.issues().size(), 2u);
  EXPECT_EQ(d.issues()[0].path, "/cluster/node_power");
  EXPECT_EQ(d.issues()[1].path, "/cluster/node_power/max");
}

}  // namespace
}  // namespace hcsim
