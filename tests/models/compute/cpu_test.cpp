// CPU host model: the datasheet peak, micro-kernel quantisation, and an executed reference:
// Eigen SGEMM timed on this machine against the model's prediction, given the SIMD peak
// measured here by an FMA-throughput loop.
#include "models/compute/cpu.hpp"

#include <algorithm>
#include <ctime>
#include <cmath>
#include <iostream>

#include <Eigen/Dense>
#include <gtest/gtest.h>

#include "preset_helpers.hpp"

namespace hcsim {
namespace {

using testing_helpers::build_preset;

// Thread CPU time: the shared CI machine preempts us, and time spent descheduled is not
// time the kernel ran.
double thread_seconds() {
  timespec ts{};
  clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
  return static_cast<double>(ts.tv_sec) + 1e-9 * static_cast<double>(ts.tv_nsec);
}

constexpr int kLanes = Eigen::internal::packet_traits<float>::size;  // SIMD width of this build

TEST(Cpu, EpycPeakIsCoresTimesFmaTimesLanesTimesClock) {
  auto d = build_preset("amd-epyc-7543");
  // 32 cores x 2 FMA pipes x 8 fp32 lanes x 2 flop x 2.8 GHz = 2.8672 TF.
  EXPECT_DOUBLE_EQ(d->peak(DType::fp32).value(), 32.0 * 2 * 8 * 2 * 2.8e9);
  EXPECT_DOUBLE_EQ(d->memory_bandwidth().value(), 204.8e9);
}

TEST(Cpu, MicroKernelPadsRaggedRows) {
  auto d = build_preset("amd-epyc-7543", {{"call_overhead", 0}});
  // mr = 24: m = 240 is ten micro-panels, m = 241 needs eleven (264 rows of work). Compute
  // bound (8 GFLOP at 2.3 TF = 3.5 ms vs 68 MB of DRAM traffic at 143 GB/s = 0.5 ms).
  const double a = d->time(gemm_kernel(240, 4096, 4096, DType::fp32)).value();
  const double b = d->time(gemm_kernel(241, 4096, 4096, DType::fp32)).value();
  EXPECT_NEAR(b / a, 264.0 / 240.0, 1e-12);
}

// Peak of this core: independent multiply-add chains on full SIMD packets (enough chains
// to cover the pipeline latency), best of three runs.
double measured_simd_peak() {
  using Packet = Eigen::Array<float, kLanes, 1>;
  constexpr int kChains = 12;
  Packet acc[kChains];
  for (int i = 0; i < kChains; ++i) acc[i] = Packet::Constant(static_cast<float>(i));
  const Packet x = Packet::Constant(0.999f), y = Packet::Constant(0.001f);
  constexpr long kIters = 4'000'000;
  double best = 0;
  for (int rep = 0; rep < 3; ++rep) {
    const double t0 = thread_seconds();
    for (long it = 0; it < kIters; ++it)
      for (int i = 0; i < kChains; ++i) acc[i] = acc[i] * x + y;
    const double s = thread_seconds() - t0;
    best = std::max(best, static_cast<double>(kIters) * kChains * kLanes * 2.0 / s);
  }
  float sink = 0;
  for (const auto& a : acc) sink += a.sum();
  EXPECT_TRUE(std::isfinite(sink));
  return best;
}

double timed_eigen_sgemm(int n) {
  const Eigen::MatrixXf a = Eigen::MatrixXf::Random(n, n), b = Eigen::MatrixXf::Random(n, n);
  Eigen::MatrixXf c(n, n);
  const int reps = std::max(3, static_cast<int>(3e7 / (2.0 * n * n * n)));
  double best = 1e30;
  for (int trial = 0; trial < 9; ++trial) {  // best of 9: other tenants only slow a trial down
    const double t0 = thread_seconds();
    for (int r = 0; r < reps; ++r) c.noalias() = a * b;
    best = std::min(best, (thread_seconds() - t0) / reps);
  }
  EXPECT_TRUE(std::isfinite(c(0, 0)));
  return best;
}

TEST(Cpu, EigenSgemmOnThisMachineAgreesWithTheModel) {
#ifdef HCSIM_SANITIZED
  GTEST_SKIP() << "timing reference: under ASan/UBSan instrumentation it would time the sanitizer";
#endif
  const double peak = measured_simd_peak();
  CpuSpec spec;  // one core of this machine; model defaults otherwise
  spec.peak_fp32 = FlopsPerSecond(peak);
  spec.mr = 3 * kLanes;  // Eigen's float micro-kernel: 3 packets x 4 columns
  spec.nr = 4;
  spec.memory_bandwidth = BytesPerSecond(20e9);
  spec.call_overhead = Seconds(1e-6);
  spec.tdp = Watts(1);
  const CpuDevice model(spec);
  std::cout << "measured SIMD peak of one core: " << peak / 1e9 << " GFLOPS (" << kLanes << " lanes)\n";
  for (int n : {64, 128, 256, 384, 512}) {
    const double measured = timed_eigen_sgemm(n);
    const double predicted = model.time(gemm_kernel(n, n, n, DType::fp32)).value();
    const double err = predicted / measured - 1.0;
    std::cout << "  n=" << n << "  measured " << measured * 1e6 << " us  predicted " << predicted * 1e6
              << " us  error " << err * 100 << " %\n";
    RecordProperty("sgemm_error_pct_n" + std::to_string(n), std::to_string(err * 100));
    // Stated bound where the micro-kernel dominates, Eigen's packed panels stay in this
    // core's caches and the leading dimension is not a power of two (n = 384): 30 %. The
    // model's default efficiency (0.8) is the generic BLAS figure, not fitted here; on the
    // development machine's SSE2 build it is 18-23 % optimistic for Eigen at n = 384 on an
    // idle machine and up to 30 % beside a build. n = 256 has a power-of-two
    // leading-dimension slowdown the model does not have, and n = 512 (3 MiB of operands)
    // streams its panels from the last-level cache other tenants draw on too; they are
    // reported, not asserted.
    if (n == 384) {
      EXPECT_LT(std::fabs(err), 0.30) << "n=" << n;
    }
  }
}

}  // namespace
}  // namespace hcsim
