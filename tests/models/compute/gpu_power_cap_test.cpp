// A power cap chooses the DVFS operating point (cubic power law of the GPU model).
#include <cmath>

#include <gtest/gtest.h>

#include "models/compute/gpu.hpp"

namespace hcsim {
namespace {

std::unique_ptr<ComputeDevice> a100(nlohmann::json over, Diagnostics& d) {
  register_builtin_compute_devices();
  const Preset* p = compute_presets().find("nvidia-a100-80gb-sxm");
  nlohmann::json v = p->values;
  for (const auto& [k, x] : over.items()) v[k] = x;
  return compute_devices().build("gpu", v, "/pool", d);
}

TEST(GpuPowerCap, CapPicksTheFastestPointUnderIt) {
  Diagnostics d;
  auto full = a100(nlohmann::json::object(), d);
  auto capped = a100({{"power_cap", "250 W"}}, d);
  ASSERT_TRUE(d.ok());
  // idle + (tdp - idle) f^3 = cap  =>  f = ((cap - idle) / (tdp - idle))^(1/3); the capped
  // device's saturated power is then exactly the cap (A100 TDP 400 W, datasheet).
  EXPECT_NEAR(capped->max_power().value(), 250.0, 1e-9);
  const double idle = full->idle_power().value();
  const double f = std::cbrt((250.0 - idle) / (400.0 - idle));
  EXPECT_NEAR(capped->peak(DType::bf16).value() / full->peak(DType::bf16).value(), f, 1e-12);
  auto loose = a100({{"power_cap", "500 W"}}, d);
  EXPECT_DOUBLE_EQ(loose->peak(DType::bf16).value(), full->peak(DType::bf16).value());
}

TEST(GpuPowerCap, CapBelowIdleIsAnInputError) {
  Diagnostics d;
  auto dev = a100({{"power_cap", "10 W"}}, d);
  EXPECT_EQ(dev, nullptr);
  ASSERT_EQ(d.issues().size(), 1u);
  EXPECT_EQ(d.issues()[0].path, "/pool/power_cap");
}

}  // namespace
}  // namespace hcsim
