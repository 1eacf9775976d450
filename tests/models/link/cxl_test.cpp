// CXL link model: added load latency plus switch hops.
#include "models/link/cxl.hpp"

#include <gtest/gtest.h>

namespace hcsim {
namespace {

TEST(CxlLink, LatencyIsLoadLatencyPlusSwitchHops) {
  Diagnostics d;
  LinkSpec direct = resolve_link({{"preset", "cxl2"}}, "/l", d);
  LinkSpec switched = resolve_link({{"preset", "cxl2"}, {"switch_hops", 2}}, "/l", d);
  ASSERT_TRUE(d.ok());
  // Preset: 80 ns added load latency (Pond: 70-90 ns), 70 ns per switch hop (estimate).
  EXPECT_NEAR(direct.latency.value(), 80e-9, 1e-18);
  EXPECT_NEAR(switched.latency.value(), 80e-9 + 2 * 70e-9, 1e-18);
  EXPECT_EQ(direct.technology, "cxl");
  // PCIe 5.0 x16: 64 GB/s per direction; CXL 3 on PCIe 6.0 doubles it.
  EXPECT_DOUBLE_EQ(direct.bandwidth.value(), 64e9);
  EXPECT_DOUBLE_EQ(resolve_link({{"preset", "cxl3"}}, "/l", d).bandwidth.value(), 128e9);
}

TEST(CxlLink, HopCountOutOfRange) {
  Diagnostics d;
  resolve_link({{"preset", "cxl3"}, {"switch_hops", -1}}, "/pool/link", d);
  ASSERT_EQ(d.issues().size(), 1u);
  EXPECT_EQ(d.issues()[0].path, "/pool/link/switch_hops");
}

}  // namespace
}  // namespace hcsim
