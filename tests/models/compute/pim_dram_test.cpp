// Processing-in-DRAM: GEMV and elementwise at internal bandwidth; large GEMMs unsupported.
#include "models/compute/pim_dram.hpp"

#include <gtest/gtest.h>

#include "preset_helpers.hpp"

namespace hcsim {
namespace {

using testing_helpers::build_preset;

TEST(PimDram, RunsGemvButNotLargeGemm) {
  auto d = build_preset("samsung-hbm-pim");
  EXPECT_TRUE(d->supports(gemm_kernel(1, 4096, 4096, DType::fp16)));
  EXPECT_TRUE(d->supports(gemm_kernel(8, 4096, 4096, DType::fp16)));
  EXPECT_FALSE(d->supports(gemm_kernel(2048, 4096, 4096, DType::fp16)));
  EXPECT_TRUE(d->supports(memory_kernel(KernelKind::elementwise, Bytes(1e6), Flops(1e5), DType::fp16)));
}

TEST(PimDram, GemvSeesInternalBandwidth) {
  auto d = build_preset("samsung-hbm-pim", {{"launch_overhead", 0}});
  const Kernel k = gemm_kernel(1, 4096, 4096, DType::fp16);
  // Weights dominate: (4096^2 + 2 x 4096) x 2 B at 0.85 x 1228.8 GB/s (4 x the pins' 307.2).
  EXPECT_NEAR(d->time(k).value(), k.bytes.value() / (0.85 * 1228.8e9), 1e-15);
  // The same bytes over the external pins would take 4x longer.
  EXPECT_NEAR(d->memory_bandwidth().value() * 4, 1228.8e9, 1e-3);
}

TEST(PimDram, EnergyIsFlopsAndInternalBytes) {
  auto d = build_preset("samsung-hbm-pim");
  const Kernel k = memory_kernel(KernelKind::elementwise, Bytes(1e9), Flops(2.5e8), DType::fp16);
  // 0.75 pJ/flop and 1.2 pJ/bit = 9.6 pJ/B (preset).
  EXPECT_NEAR(d->dynamic_energy(k).value(), 2.5e8 * 0.75e-12 + 1e9 * 9.6e-12, 1e-12);
  const double w = d->idle_power().value() + d->dynamic_energy(k).value() / d->time(k).value();
  EXPECT_LT(w, d->max_power().value());
}

}  // namespace
}  // namespace hcsim
