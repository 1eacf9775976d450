// TPU-like systolic device: SCALE-Sim cycle counts spread over the chip's arrays, SRAM-
// dependent HBM traffic, dtype passes, attention traffic, power bound. Expected values are
// the closed forms of systolic_array.hpp / systolic_cycles.hpp and the presets' datasheet
// numbers.
#include "models/compute/systolic_array.hpp"

#include <cmath>

#include <gtest/gtest.h>

#include "preset_helpers.hpp"

namespace hcsim {
namespace {

using testing_helpers::build_preset;

const SystolicDevice& sys(const std::unique_ptr<ComputeDevice>& d) { return dynamic_cast<const SystolicDevice&>(*d); }

TEST(Systolic, TpuV4PeakMatchesTheDatasheet) {
  auto d = build_preset("google-tpu-v4");
  // 2 cores x 4 MXU x 128x128 MAC x 2 flop x 1.05 GHz = 275.25 TF; Google: 275 TF bf16 and int8.
  EXPECT_DOUBLE_EQ(d->peak(DType::bf16).value(), 2.0 * 4 * 16384 * 2 * 1.05e9);
  EXPECT_NEAR(d->peak(DType::bf16).value() / 275e12, 1.0, 1e-3);
  EXPECT_DOUBLE_EQ(d->peak(DType::int8).value(), d->peak(DType::bf16).value());
  EXPECT_DOUBLE_EQ(d->memory_bandwidth().value(), 1200e9);
  EXPECT_DOUBLE_EQ(d->memory_capacity().value(), 32.0 * 1073741824.0);
}

TEST(Systolic, MluPeaksMatchTheLaunchFigures) {
  auto d = build_preset("mlu370-class");
  // Cambricon: 96 TF bf16, 32 TF fp32, 256 TOPS int8 (clock derived for 96 TF, 0.01 % rounding).
  EXPECT_NEAR(d->peak(DType::bf16).value() / 96e12, 1.0, 1e-4);
  EXPECT_NEAR(d->peak(DType::fp32).value() / 32e12, 1.0, 1e-4);
  EXPECT_NEAR(d->peak(DType::int8).value() / 256e12, 1.0, 1e-4);
}

TEST(Systolic, GemmCyclesAreFoldsOverArraysTimesFoldCycles) {
  auto d = build_preset("google-tpu-v4", {{"launch_overhead", 0}});
  const SystolicCost c = sys(d).cost(gemm_kernel(1024, 1024, 1024, DType::bf16));
  // WS: Sr = K = 1024, Sc = N = 1024, T = M = 1024 -> 8*8 = 64 folds on 8 arrays = 8 rounds of
  // 2*128 + 128 + 1024 - 2 = 1406 cycles.
  EXPECT_EQ(c.cycles, 8 * 1406);
  EXPECT_DOUBLE_EQ(c.compute.value(), 8 * 1406 / 1.05e9);
}

TEST(Systolic, LargeGemmApproachesButNeverExceedsPeak) {
  auto d = build_preset("google-tpu-v4");
  const Kernel k = gemm_kernel(8192, 8192, 8192, DType::bf16);
  const double rate = k.flops.value() / d->time(k).value();
  // Streaming dominates the fold: T / (2R + C + T - 2) = 8192 / 8574 = 0.955 of peak, less launch.
  EXPECT_LT(rate, d->peak(DType::bf16).value() * 8192.0 / 8574.0);
  EXPECT_GT(rate, 0.95 * d->peak(DType::bf16).value() * 8192.0 / 8574.0);
}

TEST(Systolic, DataflowDecidesWhatIsStreamed) {
  auto ws = build_preset("google-tpu-v4", {{"launch_overhead", 0}, {"dataflow", "ws"}});
  auto os = build_preset("google-tpu-v4", {{"launch_overhead", 0}, {"dataflow", "os"}});
  // Decode-like GEMM, M = 16 tokens, K = N = 4096.
  // WS: folds 32*32 = 1024 -> 128 rounds of (256 + 128 + 16 - 2) = 398 cycles.
  // OS: Sr = M = 16 -> folds 1*32 = 32 -> 4 rounds of (256 + 128 + 4096 - 2) = 4478 cycles.
  const Kernel k = gemm_kernel(16, 4096, 4096, DType::bf16);
  EXPECT_EQ(sys(ws).cost(k).cycles, 128 * 398);
  EXPECT_EQ(sys(os).cost(k).cycles, 4 * 4478);
}

TEST(Systolic, SramDecidesHbmTraffic) {
  auto big = build_preset("google-tpu-v4");
  auto small = build_preset("google-tpu-v4", {{"sram_capacity", "3 MiB"}});
  const std::int64_t n = 4096;
  // Fits in 128 MiB: A, B, C once = 3 * 4096^2 * 2 B.
  EXPECT_DOUBLE_EQ(sys(big).gemm_traffic(n, n, n, 1, DType::bf16).value(), 3.0 * n * n * 2);
  // 3 MiB: b = floor(sqrt(3 MiB / (3 * 2 B))) = 724; A re-read ceil(4096/724) = 6 times, B too.
  const double expect = 2.0 * (double(n) * n * 6 + double(n) * n * 6 + double(n) * n);
  EXPECT_DOUBLE_EQ(sys(small).gemm_traffic(n, n, n, 1, DType::bf16).value(), expect);
}

TEST(Systolic, Fp32TakesThreeBf16Passes) {
  auto d = build_preset("google-tpu-v4", {{"launch_overhead", 0}});
  const double bf = sys(d).cost(gemm_kernel(4096, 4096, 4096, DType::bf16)).compute.value();
  const double f32 = sys(d).cost(gemm_kernel(4096, 4096, 4096, DType::fp32)).compute.value();
  EXPECT_NEAR(f32 / bf, 3.0, 1e-12);  // XLA Precision.HIGH (bf16_3x)
}

TEST(Systolic, UnfusedAttentionWritesTheScores) {
  auto d = build_preset("google-tpu-v4");
  Kernel k;
  k.kind = KernelKind::attention;
  k.m = 2048; k.n = 2048; k.k = 128; k.batch = 64; k.fused = true;
  const SystolicCost fused = sys(d).cost(k);
  k.fused = false;
  const SystolicCost unfused = sys(d).cost(k);
  const double S = 64.0 * 2048 * 2048 * 2;
  EXPECT_DOUBLE_EQ(fused.hbm_bytes.value(), 64.0 * 2 * 2 * (2048.0 + 2048.0) * 128);  // Q, K, V, O
  EXPECT_GE(unfused.hbm_bytes.value() - fused.hbm_bytes.value(), 3.0 * S);
  EXPECT_GT(unfused.total.value(), fused.total.value());
}

TEST(Systolic, SaturatedGemmPowerStaysBelowTdp) {
  register_builtin_compute_devices();
  for (const auto& [name, p] : compute_presets().all()) {
    if (p.type != "systolic") continue;
    auto d = build_preset(name);
    for (DType dt : {DType::bf16, DType::int8, DType::fp32}) {
      const Kernel k = gemm_kernel(16384, 16384, 16384, dt);
      const double w = d->idle_power().value() + d->dynamic_energy(k).value() / d->time(k).value();
      EXPECT_LT(w, d->max_power().value()) << name;
      EXPECT_GT(w, d->idle_power().value()) << name;
    }
  }
}

TEST(Systolic, UnknownDataflowIsReported) {
  register_builtin_compute_devices();
  nlohmann::json v = compute_presets().find("google-tpu-v4")->values;
  v["dataflow"] = "rs";
  Diagnostics d;
  EXPECT_EQ(compute_devices().build("systolic", v, "/devices/1", d), nullptr);
  ASSERT_EQ(d.issues().size(), 1u);
  EXPECT_EQ(d.issues()[0].path, "/devices/1/dataflow");
  EXPECT_EQ(d.issues()[0].message, "unknown value \"rs\"; valid ones are: os, ws, is");
}

}  // namespace
}  // namespace hcsim
