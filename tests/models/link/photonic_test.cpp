// Photonic link model: WDM bandwidth, time of flight, laser static power.
#include "models/link/photonic.hpp"

#include <gtest/gtest.h>

namespace hcsim {
namespace {

TEST(PhotonicLink, BandwidthLatencyAndLaserPowerFollowTheModel) {
  Diagnostics d;
  LinkSpec s = resolve_link({{"type", "photonic"}, {"lane_rate", "32 Gb/s"}, {"wavelengths", 16}, {"fibres", 4},
                             {"fixed_latency", "10 ns"}, {"length", "20 m"}, {"energy_per_byte", "2 pJ/bit"},
                             {"laser_power_per_lane", "50 mW"}},
                            "/l", d);
  ASSERT_TRUE(d.ok());
  // 32 Gb/s x 16 wavelengths x 4 fibres = 2048 Gb/s = 256 GB/s per direction.
  EXPECT_DOUBLE_EQ(s.bandwidth.value(), 256e9);
  // 10 ns + 4.9 ns/m (silica, group index 1.47) x 20 m = 108 ns.
  EXPECT_NEAR(s.latency.value(), 108e-9, 1e-18);
  // 50 mW x 64 lanes x 2 directions = 6.4 W.
  EXPECT_NEAR(s.static_power.value(), 6.4, 1e-12);
  EXPECT_NEAR(s.energy_per_byte.value(), 16e-12, 1e-24);
  EXPECT_EQ(s.technology, "photonic");
}

TEST(PhotonicLink, TeraphyPresetMatchesVendorFigures) {
  Diagnostics d;
  LinkSpec s = resolve_link({{"preset", "optical-io-teraphy"}}, "/l", d);
  ASSERT_TRUE(d.ok());
  // Ayar Labs: 4 Tb/s bidirectional -> 2 Tb/s (2.048 with 8x8x32 Gb/s) per direction = 256 GB/s.
  EXPECT_DOUBLE_EQ(s.bandwidth.value(), 256e9);
  // 5 ns per chiplet x 2 ends + 4.9 ns over 1 m.
  EXPECT_NEAR(s.latency.value(), 14.9e-9, 1e-18);
  // < 5 pJ/bit -> 40 pJ/B.
  EXPECT_NEAR(s.energy_per_byte.value(), 40e-12, 1e-24);
}

TEST(PhotonicLink, LongerFibreOnlyAddsTimeOfFlight) {
  Diagnostics d;
  LinkSpec a = resolve_link({{"preset", "photonic-cpo"}, {"length", "10 m"}}, "/a", d);
  LinkSpec b = resolve_link({{"preset", "photonic-cpo"}, {"length", "110 m"}}, "/b", d);
  ASSERT_TRUE(d.ok());
  EXPECT_NEAR((b.latency - a.latency).value(), 490e-9, 1e-15);  // 100 m x 4.9 ns/m
  EXPECT_DOUBLE_EQ(a.bandwidth.value(), b.bandwidth.value());
}

}  // namespace
}  // namespace hcsim
