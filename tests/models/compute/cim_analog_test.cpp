// Analog CIM model: capacity-bound timing, reprogramming when weights do not fit, power.
#include "models/compute/cim_analog.hpp"

#include <gtest/gtest.h>

#include "preset_helpers.hpp"

namespace hcsim {
namespace {

using testing_helpers::build_preset;

TEST(CimAnalog, MythicCapacityIs76TilesOfOneMegaCell) {
  auto d = build_preset("mythic-m1076");
  // 76 x 1024 x 1024 8-bit cells = 79.7 M weights ("up to 80M weights", product brief).
  EXPECT_DOUBLE_EQ(d->memory_capacity().value(), 76.0 * 1024 * 1024);
  EXPECT_DOUBLE_EQ(d->peak(DType::int8).value(), 25e12);
  EXPECT_TRUE(d->supports(gemm_kernel(16, 4096, 4096, DType::int8)));
  Kernel att;
  att.kind = KernelKind::attention;
  EXPECT_FALSE(d->supports(att));
}

TEST(CimAnalog, WeightsThatFitAreNotReprogrammed) {
  auto d = build_preset("mythic-m1076", {{"launch_overhead", 0}});
  // 4096 x 4096 weights = 16 tiles <= 76: one round; t = m x t_mvm,
  // t_mvm = 2 * 1024^2 / (25e12 / 76) = 6.376 us; compute bound over PCIe? m = 64:
  // compute 408 us, I/O (64 x 8192 B) / 2 GB/s = 262 us.
  const double t_mvm = 2.0 * 1024 * 1024 / (25e12 / 76);
  EXPECT_NEAR(d->time(gemm_kernel(64, 4096, 4096, DType::int8)).value(), 64 * t_mvm, 1e-15);
}

TEST(CimAnalog, WeightsThatDoNotFitAreTiledWithAReprogrammingCost) {
  auto d = build_preset("mythic-m1076", {{"launch_overhead", 0}});
  // 12288 x 8192 = 96 tiles > 76: two rounds, each rewriting its weights; all 96 M bytes of
  // weights cross the 2 GB/s programming path: 50.3 ms, on top of 2 x m x t_mvm.
  const double t_mvm = 2.0 * 1024 * 1024 / (25e12 / 76);
  const double program = 12288.0 * 8192 / 2e9;
  EXPECT_NEAR(d->time(gemm_kernel(64, 8192, 12288, DType::int8)).value(), 2 * 64 * t_mvm + program, 1e-12);
}

TEST(CimAnalog, SaturatedPowerStaysBelowTheDatasheetMaximum) {
  // All 76 tiles busy (k = 19 x 1024, n = 4 x 1024) with activations kept on chip, so the
  // PCIe link does not limit the rate: the arrays and converters run flat out.
  auto d = build_preset("mythic-m1076", {{"io_bandwidth", "1 TB/s"}});
  const Kernel k = gemm_kernel(100000, 4 * 1024, 19 * 1024, DType::int8);
  const double w = d->idle_power().value() + d->dynamic_energy(k).value() / d->time(k).value();
  EXPECT_LT(w, 4.0);  // product brief: 3-4 W
  EXPECT_GT(w, 2.0);
}

}  // namespace
}  // namespace hcsim
