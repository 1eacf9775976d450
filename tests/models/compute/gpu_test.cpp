// GPU model: roofline per dtype, tile/wave quantisation, K-loop fill, split-K, attention
// traffic, energy and DVFS. Expected values come from the closed forms in gpu.hpp and from
// the datasheet numbers of the presets (hardware reference).
#include "models/compute/gpu.hpp"

#include <algorithm>
#include <cmath>
#include <fstream>
#include <random>
#include <utility>

#include <gtest/gtest.h>

#include "models/compute/compute_device.hpp"
#include "preset_helpers.hpp"

namespace hcsim {
namespace {

std::unique_ptr<ComputeDevice> preset(const std::string& name, const nlohmann::json& overrides = nlohmann::json::object()) {
  return testing_helpers::build_preset(name, overrides);
}

const GpuDevice& gpu(const std::unique_ptr<ComputeDevice>& d) { return dynamic_cast<const GpuDevice&>(*d); }

double achieved(const ComputeDevice& d, const Kernel& k) { return k.flops.value() / d.time(k).value(); }

// The A100 presets' efficiencies and overheads, calibrated to the ten Megatron-LM SC21
// Table 1 runs (docs/validation.md, scripts/calibrate/parameters.json).
constexpr double kA100GemmEff = 0.77;   // gemm_efficiency
constexpr double kA100MemEff = 0.65;    // memory_efficiency
constexpr double kA100Fill = 1.08e-6;   // tile_fill, s
constexpr double kA100Launch = 5e-6;    // launch_overhead, s

TEST(Gpu, EveryGpuPresetBuildsAndCitesASource) {
  register_builtin_compute_devices();
  register_builtin_compute_devices();  // idempotent
  int n = 0;
  for (const auto& [name, p] : compute_presets().all()) {
    if (p.type != "gpu") continue;
    ++n;
    EXPECT_FALSE(p.source.empty()) << name;
    auto dev = preset(name);
    ASSERT_NE(dev, nullptr) << name;
    EXPECT_EQ(dev->type(), "gpu");
  }
  EXPECT_GE(n, 6);
}

TEST(Gpu, A100DatasheetPeaks) {
  auto d = preset("nvidia-a100-80gb-sxm");
  // A100 datasheet: 312 TF bf16 dense, 624 with 2:4 sparsity, 156 tf32, 19.5 fp32, 2039 GB/s, 400 W.
  EXPECT_DOUBLE_EQ(d->peak(DType::bf16).value(), 312e12);
  EXPECT_DOUBLE_EQ(d->peak(DType::bf16, true).value(), 624e12);
  EXPECT_DOUBLE_EQ(d->peak(DType::tf32).value(), 156e12);
  EXPECT_DOUBLE_EQ(d->peak(DType::fp32).value(), 19.5e12);
  EXPECT_DOUBLE_EQ(d->memory_bandwidth().value(), 2039e9);
  EXPECT_DOUBLE_EQ(d->memory_capacity().value(), 80e9);
  EXPECT_DOUBLE_EQ(d->max_power().value(), 400.0);
  EXPECT_FALSE(d->supports(gemm_kernel(1024, 1024, 1024, DType::fp8)));  // A100 has no fp8 tensor cores
  EXPECT_TRUE(preset("nvidia-h100-sxm5")->supports(gemm_kernel(1024, 1024, 1024, DType::fp8)));
}

TEST(Gpu, LargeSquareGemmMatchesClosedFormAndStaysBelowPeak) {
  auto d = preset("nvidia-a100-80gb-sxm");
  const Kernel k = gemm_kernel(8192, 8192, 8192, DType::bf16);
  // Closed form (gpu.hpp) with the preset's tile 128x256x64, 108 SMs and the calibrated
  // eta 0.77, fill 1.08 us, eta_mem 0.65, launch 5 us (docs/validation.md):
  // tiles 64*32 = 2048, waves ceil(2048/108) = 19, iters 8192/64 = 128.
  const double t_iter = 2.0 * 128 * 256 * 64 / (312e12 / 108 * kA100GemmEff);
  const double t_comp = 19 * (kA100Fill + 128 * t_iter);
  const double t_mem = 3.0 * 8192 * 8192 * 2 / (2039e9 * kA100MemEff);
  ASSERT_GT(t_comp, t_mem);
  EXPECT_NEAR(d->time(k).value(), t_comp + kA100Launch, 1e-12);
  const double tf = achieved(*d, k);
  // Approaches the efficiency ceiling eta * 312 TF (above 93 % of it: 2048 tiles fill 18.96
  // of 19 waves, and the fill and launch cost < 0.5 %) ...
  EXPECT_GT(tf, 0.93 * kA100GemmEff * 312e12);
  EXPECT_LT(tf, kA100GemmEff * 312e12);  // ... but never exceeds it, let alone 312 TF
}

TEST(Gpu, AchievedRateNeverExceedsCeilingOverRandomShapes) {
  auto d = preset("nvidia-h100-sxm5");
  std::mt19937_64 rng(7);
  std::uniform_int_distribution<std::int64_t> dim(1, 20000);
  for (int i = 0; i < 300; ++i) {
    const Kernel k = gemm_kernel(dim(rng), dim(rng), dim(rng), DType::bf16);
    // Ceiling: eta_gemm * peak (0.80 * 989.4 TF), from the preset.
    EXPECT_LE(achieved(*d, k), 0.80 * 989.4e12 * (1 + 1e-12)) << k.m << "x" << k.n << "x" << k.k;
  }
}

// Closed form of gpu.hpp for a compute-bound GEMM without split-K on the A100 preset
// (108 SMs, tk 64, calibrated eta 0.77 and fill 1.08 us, docs/validation.md): min over the
// tiles 128x256, 256x128, 128x128 of
// waves * (fill + ceil(k/64) * t_iter(tile)).
double a100_closed_form(std::int64_t m, std::int64_t n, std::int64_t k) {
  double best = 1e30;
  for (auto [tm, tn] : {std::pair<std::int64_t, std::int64_t>{128, 256}, {256, 128}, {128, 128}}) {
    const double t_iter = 2.0 * tm * tn * 64 / (312e12 / 108 * kA100GemmEff);
    const std::int64_t tiles = ((m + tm - 1) / tm) * ((n + tn - 1) / tn);
    best = std::min(best, static_cast<double>((tiles + 107) / 108) *
                              (kA100Fill + static_cast<double>((k + 63) / 64) * t_iter));
  }
  return best;
}

TEST(Gpu, WaveQuantisationOneRowPastAFullWave) {
  auto d = preset("nvidia-a100-80gb-sxm", {{"launch_overhead", 0}});
  // 12 x 9 tiles of 128x256 (m = 1536, n = 2304) fill one wave on 108 SMs; one more row needs
  // a second wave, or three waves of half-size tiles. Compute bound (intensity ~920 flop/B >
  // A100 ridge ~180) and tiles >= SMs (no split-K).
  const Kernel one = gemm_kernel(1536, 2304, 16384, DType::bf16);
  const Kernel two = gemm_kernel(1537, 2304, 16384, DType::bf16);
  EXPECT_NEAR(d->time(one).value(), a100_closed_form(1536, 2304, 16384), 1e-12);
  EXPECT_NEAR(d->time(two).value(), a100_closed_form(1537, 2304, 16384), 1e-12);
  EXPECT_GT(d->time(two) / d->time(one), 1.45);  // 0.07 % more work, ~50 % more time
}

TEST(Gpu, TileQuantisationPadsRaggedEdges) {
  auto d = preset("nvidia-a100-80gb-sxm", {{"launch_overhead", 0}});
  // m = 1024 -> 8 x 27 tiles of 128x256 (n = 6912) = 216 = 2 full waves; m = 1025 pads a
  // ninth row of tiles (best: 9 x 54 half tiles in 5 waves).
  const Kernel a = gemm_kernel(1024, 6912, 8192, DType::bf16);
  const Kernel b = gemm_kernel(1025, 6912, 8192, DType::bf16);
  EXPECT_NEAR(d->time(a).value(), a100_closed_form(1024, 6912, 8192), 1e-12);
  EXPECT_NEAR(d->time(b).value(), a100_closed_form(1025, 6912, 8192), 1e-12);
  EXPECT_EQ(gpu(d).cost(a).tile_n, 256);
  EXPECT_GT(d->time(b) / d->time(a), 1.2);
}

TEST(Gpu, ShortKLoopCannotAmortiseThePipelineFill) {
  auto d = preset("nvidia-a100-80gb-sxm", {{"launch_overhead", 0}, {"memory_efficiency", 1.0}});
  const GpuDevice& g = gpu(d);
  // k = 64: one K iteration per tile, so per-tile efficiency is t_iter / (t_fill + t_iter),
  // with the calibrated fill 1.08 us and eta 0.77 (docs/validation.md).
  const Kernel k = gemm_kernel(13824, 6912, 64, DType::bf16);  // 108*27... = 2916 tiles, 27 waves
  const double t_iter = 2.0 * 128 * 256 * 64 / (312e12 / 108 * kA100GemmEff);
  const GpuCost c = g.cost(k);
  EXPECT_NEAR(c.compute.value(), 27 * (kA100Fill + t_iter), 1e-12);
  const double eff_small = k.flops.value() / c.compute.value() / 312e12;
  EXPECT_LT(eff_small, kA100GemmEff * t_iter / (kA100Fill + t_iter) * (1 + 1e-9));
  // The same output with k = 8192 (128 iterations per tile) amortises the fill: its compute
  // phase is 27 * (fill + 128 t_iter). The fill costs the k = 64 kernel 0.5 / (0.5 + 2.05)
  // = 19.6 % of its compute time and the long one 0.2 %, so the short one reaches < 81 %
  // of the long one's compute-phase efficiency.
  const Kernel long_k = gemm_kernel(13824, 6912, 8192, DType::bf16);
  const GpuCost c_long = g.cost(long_k);
  EXPECT_NEAR(c_long.compute.value(), 27 * (kA100Fill + 128 * t_iter), 1e-12);
  const double eff_long = long_k.flops.value() / c_long.compute.value() / 312e12;
  EXPECT_LT(eff_small, 0.81 * eff_long);
  // In total the k = 64 kernel is bound by its HBM traffic, A (m x k), B (k x n) and C (m x n)
  // in bf16 at the full 2039 GB/s (memory_efficiency overridden to 1): 94.6 us > 68.7 us.
  const double bytes = 2.0 * (13824.0 * 64 + 64.0 * 6912 + 13824.0 * 6912);
  EXPECT_NEAR(c.total.value(), bytes / 2039e9, 1e-12);
}

TEST(Gpu, SplitKFillsIdleSmsForSmallOutputs) {
  auto d = preset("nvidia-a100-80gb-sxm");
  const GpuCost c = gpu(d).cost(gemm_kernel(256, 256, 65536, DType::bf16));
  // 2 output tiles on 108 SMs: splitting K is the only way to use more than 2 SMs.
  EXPECT_GT(c.split_k, 1);
  const GpuCost no_split = gpu(d).cost(gemm_kernel(256, 256, 65536, DType::bf16, 1));
  EXPECT_EQ(no_split.total.value(), c.total.value());
  // Lower bound: even perfectly split, the work needs flops / (eta * peak), eta the
  // calibrated 0.77 (docs/validation.md).
  EXPECT_GT(c.total.value(), 2.0 * 256 * 256 * 65536 / (kA100GemmEff * 312e12));
}

TEST(Gpu, MemoryBoundKernelIsBytesOverAchievedBandwidthPlusLaunch) {
  auto d = preset("nvidia-a100-80gb-sxm");
  const Kernel k = memory_kernel(KernelKind::elementwise, Bytes(4e9), Flops(1e9), DType::bf16);
  // Roofline: 4 GB / (2039 GB/s * 0.65) + 5 us (calibrated memory efficiency, fixed launch
  // overhead, docs/validation.md); 1 GFLOP at 19.5 TF is far below.
  EXPECT_NEAR(d->time(k).value(), 4e9 / (2039e9 * kA100MemEff) + kA100Launch, 1e-12);
  // The same bytes over six tensors, one kernel each (Kernel::launches): five more launches.
  Kernel six = k;
  six.launches = 6;
  EXPECT_NEAR(d->time(six).value() - d->time(k).value(), 5 * kA100Launch, 1e-12);
}

TEST(Gpu, DecodeGemvIsMemoryBound) {
  auto d = preset("nvidia-a100-80gb-sxm");
  const Kernel k = gemm_kernel(1, 8192, 8192, DType::bf16);
  const GpuCost c = gpu(d).cost(k);
  EXPECT_GT(c.memory.value(), c.compute.value());
  // Weights dominate: 8192*8192*2 B at 0.65 * 2039 GB/s (calibrated memory efficiency,
  // docs/validation.md), plus the fp32 partials of C that
  // each of the split_k slices writes and the reduction reads (2 * 4 B * s * m * n).
  EXPECT_DOUBLE_EQ(c.hbm_bytes.value(), k.bytes.value() + 8.0 * static_cast<double>(c.split_k) * 8192);
  EXPECT_NEAR(c.memory.value(), c.hbm_bytes.value() / (2039e9 * kA100MemEff), 1e-15);
}

TEST(Gpu, SparseGemmRunsAtTwiceTheDenseTensorRate) {
  auto d = preset("nvidia-a100-80gb-sxm", {{"launch_overhead", 0}});
  Kernel k = gemm_kernel(8192, 8192, 8192, DType::bf16);
  k.sparse = true;
  // 2:4 sparsity doubles tensor throughput (datasheet 624 vs 312 TF): each K iteration takes
  // half as long; the per-tile fill (calibrated 1.08 us) does not shrink. 19 waves, 128
  // iterations (see above).
  const double t_iter = 2.0 * 128 * 256 * 64 / (312e12 / 108 * kA100GemmEff);
  EXPECT_NEAR(gpu(d).cost(k).compute.value(), 19 * (kA100Fill + 128 * t_iter / 2), 1e-12);
  EXPECT_DOUBLE_EQ(gpu(d).cost(k).executed.value(), k.flops.value() / 2);
}

TEST(Gpu, UnfusedAttentionMovesTheScoresThroughHbm) {
  auto d = preset("nvidia-a100-80gb-sxm");
  Kernel k;
  k.kind = KernelKind::attention;
  k.dtype = DType::bf16;
  k.m = 4096; k.n = 4096; k.k = 128; k.batch = 8 * 32;  // batch x heads
  k.fused = true;
  const GpuCost fused = gpu(d).cost(k);
  k.fused = false;
  const GpuCost unfused = gpu(d).cost(k);
  const double S = 256.0 * 4096 * 4096 * 2;  // one bf16 score matrix per problem
  // Fused: Q, K, V, O only. Unfused: + S written, read, P written, read (4 S).
  EXPECT_DOUBLE_EQ(fused.hbm_bytes.value(), 256.0 * 2 * (2.0 * 4096 * 128 + 2.0 * 4096 * 128));
  EXPECT_GE(unfused.hbm_bytes.value() - fused.hbm_bytes.value(), 4 * S);
  EXPECT_EQ(unfused.launches, 3);
  EXPECT_GT(unfused.total.value(), fused.total.value());
}

// FlashAttention-2's kernels (strategy.attention_kernel flash2) run the fused attention's
// tensor-core loop at flash2_rate of the device's own: on H100, 0.57 = 1/1.75, the middle
// of FlashAttention-3's 1.5-2.0x over FlashAttention-2 in bf16 (Shah et al. 2024, arXiv
// 2407.08608, abstract); on A100, where FlashAttention-2 is the native kernel, 1. With no
// per-tile fill the compute time is the K loop alone, so it scales by exactly 1/rate.
TEST(Gpu, FlashAttention2RunsAtTheDevicesFlash2Rate) {
  Kernel k;
  k.kind = KernelKind::attention;
  k.dtype = DType::bf16;
  k.m = 4096;
  k.n = 4096;
  k.k = 128;
  k.batch = 8 * 32;
  k.fused = true;
  const nlohmann::json no_fill = {{"tile_fill", "0 us"}};
  for (const auto& [name, rate] : {std::pair<const char*, double>{"nvidia-h100-sxm5", 0.57},
                                   std::pair<const char*, double>{"nvidia-a100-80gb-sxm", 1.0}}) {
    SCOPED_TRACE(name);
    auto d = preset(name, no_fill);
    EXPECT_DOUBLE_EQ(gpu(d).spec().flash2_rate, rate);
    k.flash2 = false;
    const GpuCost native = gpu(d).cost(k);
    k.flash2 = true;
    const GpuCost flash2 = gpu(d).cost(k);
    EXPECT_NEAR(flash2.compute.value(), native.compute.value() / rate, 1e-12 * native.compute.value());
    EXPECT_DOUBLE_EQ(flash2.hbm_bytes.value(), native.hbm_bytes.value());
  }
}

// Hopper's fp8 tensor cores take only the TN layout, so its fp8 GEMM operands are stored a
// second time, transposed (docs/models.md, "Both layouts"); Blackwell's take any layout
// (Transformer Engine's is_non_tn_fp8_gemm_supported, compute capability 10.0 and later).
TEST(Gpu, OnlyTnOnlyFp8TensorCoresNeedTransposedCopies) {
  for (const auto& [name, tn] :
       {std::pair<const char*, bool>{"nvidia-h100-sxm5", true}, std::pair<const char*, bool>{"nvidia-h200-sxm", true},
        std::pair<const char*, bool>{"nvidia-h800-sxm5", true}, std::pair<const char*, bool>{"nvidia-b200", false}}) {
    SCOPED_TRACE(name);
    EXPECT_EQ(preset(name)->fp8_transposed_copies(), tn);
  }
  EXPECT_FALSE(preset("nvidia-h100-sxm5", {{"fp8_tn_only", false}})->fp8_transposed_copies());
  // No fp8 units (A100): no fp8 copies to make.
  EXPECT_FALSE(preset("nvidia-a100-80gb-sxm")->fp8_transposed_copies());
}

TEST(Gpu, UnfusedAttentionAddsTheStatedDropoutTrafficAsAFourthPass) {
  auto d = preset("nvidia-a100-80gb-sxm");
  Kernel k;
  k.kind = KernelKind::attention;
  k.dtype = DType::fp16;
  k.m = 2048; k.n = 2048; k.k = 96; k.batch = 16 * 24;  // MEG-T1-01: b 16, a 24, s 2048
  k.fused = false;
  k.flops = Flops(4.0 * 384 * 2048.0 * 2048 * 96);
  const GpuCost three = gpu(d).cost(k);  // no bytes stated: QK^T, softmax, PV only
  const double scores = 384.0 * 2048 * 2048;
  // The workload states Megatron's forward: 6e + 1 bytes per score (e = 2), i.e. the three
  // kernels' 4e plus dropout reading P, writing P' (2e) and a 1-byte mask.
  k.bytes = Bytes(three.hbm_bytes.value() + scores * 5.0);
  const GpuCost four = gpu(d).cost(k);
  EXPECT_EQ(three.launches, 3);
  EXPECT_EQ(four.launches, 4);
  EXPECT_DOUBLE_EQ(four.hbm_bytes.value(), k.bytes.value());
  // The fourth pass runs at the achieved HBM bandwidth, 2039 GB/s (datasheet) times the
  // preset's memory efficiency, plus one more launch.
  const GpuSpec& sp = gpu(d).spec();
  EXPECT_NEAR(four.total.value() - three.total.value(),
              scores * 5.0 / (2039e9 * sp.memory_efficiency) + sp.launch_overhead.value(), 1e-9);
}

TEST(Gpu, SaturatedGemmAveragePowerStaysBelowTdp) {
  register_builtin_compute_devices();
  for (const auto& [name, p] : compute_presets().all()) {
    if (p.type != "gpu") continue;
    auto d = preset(name);
    for (DType dt : {DType::fp32, DType::tf32, DType::bf16, DType::fp8, DType::int8}) {
      const Kernel k = gemm_kernel(16384, 16384, 16384, dt);
      if (!d->supports(k)) continue;
      // Average board power = idle + dynamic energy / time; TDP is the datasheet bound.
      const double watts = d->idle_power().value() + d->dynamic_energy(k).value() / d->time(k).value();
      EXPECT_LT(watts, d->max_power().value()) << name << " " << dtype_name(dt);
      EXPECT_GT(watts, d->idle_power().value() + 0.3 * (d->max_power() - d->idle_power()).value())
          << name << " " << dtype_name(dt);  // a saturated GEMM is far from idle
    }
  }
}

TEST(Gpu, EnergyIsFlopsTimesEnergyPerFlopPlusBytesTimesEnergyPerByte) {
  auto d = preset("nvidia-a100-80gb-sxm");
  const Kernel k = memory_kernel(KernelKind::norm, Bytes(1e9), Flops(5e8), DType::bf16);
  // Vector work at e_fp32 = 0.7 (400 - 50) W / 19.5 TF; HBM at 3.9 pJ/bit = 31.2 pJ/B.
  const double e_fp32 = 0.7 * 350.0 / 19.5e12;
  EXPECT_NEAR(d->dynamic_energy(k).value(), 5e8 * e_fp32 + 1e9 * 3.9e-12 * 8, 1e-9);
}

TEST(Gpu, DvfsScalesComputeTimeAndEnergyPerFlop) {
  auto full = preset("nvidia-a100-80gb-sxm", {{"launch_overhead", 0}, {"tile_fill", 0}});
  auto half = preset("nvidia-a100-80gb-sxm", {{"launch_overhead", 0}, {"tile_fill", 0}, {"frequency_scale", 0.5}});
  const Kernel k = gemm_kernel(8192, 8192, 8192, DType::bf16);
  // Compute bound: t ~ 1/f. Energy per flop ~ f^2 (C V^2 with V ~ f); HBM energy unchanged.
  EXPECT_NEAR(half->time(k) / full->time(k), 2.0, 1e-9);
  const double bytes_e = gpu(full).cost(k).hbm_bytes.value() * 3.9e-12 * 8;
  EXPECT_NEAR((half->dynamic_energy(k).value() - bytes_e) / (full->dynamic_energy(k).value() - bytes_e), 0.25, 1e-9);
  // Max power at half clock: idle + (tdp - idle) / 8.
  EXPECT_NEAR(half->max_power().value(), 50 + 350.0 / 8, 1e-9);
}

TEST(Gpu, BadParametersAreReportedWithTheirPaths) {
  register_builtin_compute_devices();
  nlohmann::json v = compute_presets().find("nvidia-a100-80gb-sxm")->values;
  v.erase("sm_count");
  v["gemm_efficiency"] = 1.5;
  v["peak_bf16"] = "312 TB/s";
  v["colour"] = "green";
  Diagnostics d;
  auto dev = compute_devices().build("gpu", v, "/cluster/devices/0", d);
  EXPECT_EQ(dev, nullptr);
  ASSERT_EQ(d.issues().size(), 4u);
  EXPECT_EQ(d.issues()[0].path, "/cluster/devices/0/colour");
  EXPECT_EQ(d.issues()[1].path, "/cluster/devices/0/peak_bf16");
  EXPECT_EQ(d.issues()[1].message, "expected a compute rate such as \"19.5 TFLOPS\", got \"312 TB/s\"");
  EXPECT_EQ(d.issues()[2].path, "/cluster/devices/0/sm_count");
  EXPECT_EQ(d.issues()[2].message, "required key is missing");
  EXPECT_EQ(d.issues()[3].path, "/cluster/devices/0/gemm_efficiency");
}

// The H100-class presets' bf16 GEMM ceiling is tied in the calibration to the fitted fp8
// one (scripts/calibrate/parameters-h100.json, "tied"): bf16 = fp8 x 1.133, the ratio of
// mamf-finder's bf16 and fp8 figures on H100 SXM, 794.5 and 1402.6 TF, per unit of each
// datatype's peak (989.4 and 1978.9 TF; stas00/ml-engineering, compute/accelerator/README.md).
// The stored values keep the tie to their two digits, and the parameters file states the
// factor the calibration applies.
TEST(Gpu, H100Bf16CeilingIsTheFp8FitAtTheMeasuredRatio) {
  register_builtin_compute_devices();
  const double factor = (794.5 / 1402.6) * (1978.9 / 989.4);
  std::ifstream in(std::string(HCSIM_SOURCE_DIR) + "/scripts/calibrate/parameters-h100.json");
  ASSERT_TRUE(in);
  const nlohmann::json params = nlohmann::json::parse(in);
  bool tied = false;
  for (const auto& p : params.at("parameters"))
    if (p.at("name") == "gemm_efficiency_fp8")
      for (const auto& t : p.value("tied", nlohmann::json::array()))
        if (t.at("set") == "/cluster/pools/0/overrides/gemm_efficiency") {
          EXPECT_NEAR(t.at("factor").get<double>(), factor, 5e-4);
          tied = true;
        }
  EXPECT_TRUE(tied);
  for (const char* name : {"nvidia-h100-sxm5", "nvidia-h200-sxm", "nvidia-h800-sxm5"}) {
    const nlohmann::json& v = compute_presets().find(name)->values;
    EXPECT_NEAR(v.at("gemm_efficiency").get<double>(), v.at("gemm_efficiency_fp8").get<double>() * factor, 0.005)
        << name;
  }
}

}  // namespace
}  // namespace hcsim
