// Executed reference for the analog CIM model: a GEMV with quantised weights and inputs
// and n-bit column ADCs. Its error against fp64 falls as ADC bits rise, and the events it
// counts price to exactly the model's dynamic energy.
#include "models/compute/cim_reference.hpp"

#include <random>

#include <gtest/gtest.h>

namespace hcsim {
namespace {

double relative_error(const Eigen::VectorXd& y, const Eigen::VectorXd& ref) { return (y - ref).norm() / ref.norm(); }

TEST(CimReference, ErrorFallsAsAdcBitsRiseAndEnergyMatchesTheModel) {
  std::mt19937_64 rng(11);
  std::normal_distribution<double> g(0.0, 1.0);
  const int k = 700, n = 150;  // ragged against 256 x 64 tiles
  Eigen::MatrixXd w(k, n);
  Eigen::VectorXd x(k);
  for (int i = 0; i < k; ++i) {
    x(i) = g(rng);
    for (int j = 0; j < n; ++j) w(i, j) = g(rng);
  }
  const Eigen::VectorXd exact = w.transpose() * x;  // fp64 reference
  CimSpec s;
  s.tiles = 8; s.rows = 256; s.cols = 64; s.peak = FlopsPerSecond(1e12);
  s.energy_per_op = JoulesPerFlop(0.1e-12); s.adc_fom = Joules(20e-15); s.dac_energy = Joules(50e-15);
  s.reprogram_bandwidth = s.io_bandwidth = BytesPerSecond(2e9); s.tdp = Watts(1);
  double previous = 1e9;
  for (int bits : {3, 4, 6, 8, 10, 12}) {
    s.adc_bits = bits;
    const CimGemvRun run = run_cim_gemv(w, x, s);
    const double err = relative_error(run.y, exact);
    RecordProperty("cim_rel_error_adc" + std::to_string(bits), std::to_string(err));
    EXPECT_LT(err, previous) << bits << " ADC bits";
    previous = err;
    // The counted events are the model's: 3 row tiles x 3 column tiles.
    const CimCounts model = cim_counts(s, 1, n, k, 1);
    EXPECT_EQ(run.counts.macs, model.macs);
    EXPECT_EQ(run.counts.adc_conversions, model.adc_conversions);  // n x ceil(k/rows) = 450
    EXPECT_EQ(run.counts.dac_conversions, model.dac_conversions);  // k x ceil(n/cols) = 2100
    EXPECT_EQ(run.counts.adc_conversions, 150 * 3);
    EXPECT_EQ(run.counts.dac_conversions, 700 * 3);
    const CimAnalogDevice dev(s);
    EXPECT_DOUBLE_EQ(cim_energy(s, run.counts).value(), dev.dynamic_energy(gemm_kernel(1, n, k, DType::int8)).value());
  }
  // With 12-bit converters the error is that of 8-bit weights and inputs: about 1 %
  // (each 8-bit quantisation adds ~0.4 % relative noise for Gaussian data clipped at its max).
  EXPECT_LT(previous, 0.02);
}

}  // namespace
}  // namespace hcsim
