// The cycle-level systolic simulator against Eigen (product) and against the SCALE-Sim
// analytical model (cycles): folds·(2R + C + T − 2), exactly, for OS, WS and IS.
#include "models/compute/systolic_reference.hpp"

#include <random>

#include <gtest/gtest.h>

namespace hcsim {
namespace {

Eigen::MatrixXd random_int_matrix(int r, int c, std::mt19937_64& rng) {
  // Small integers: every partial sum is exact in double, so the products compare exactly.
  std::uniform_int_distribution<int> v(-8, 8);
  Eigen::MatrixXd m(r, c);
  for (int i = 0; i < r; ++i)
    for (int j = 0; j < c; ++j) m(i, j) = v(rng);
  return m;
}

TEST(SystolicReference, ProductAndCyclesMatchEigenAndTheAnalyticalModel) {
  std::mt19937_64 rng(20240501);
  std::uniform_int_distribution<int> dim(1, 23), arr(2, 8);
  int checked = 0;
  for (int trial = 0; trial < 60; ++trial) {
    const int M = dim(rng), K = dim(rng), N = dim(rng), R = arr(rng), C = arr(rng);
    const Eigen::MatrixXd a = random_int_matrix(M, K, rng), b = random_int_matrix(K, N, rng);
    const Eigen::MatrixXd expect = a * b;
    for (Dataflow df : {Dataflow::os, Dataflow::ws, Dataflow::is}) {
      const SystolicRun run = run_systolic(df, a, b, R, C);
      const SystolicCycles model = systolic_cycles(df, M, N, K, R, C);
      SCOPED_TRACE(testing::Message() << dataflow_name(df) << " M=" << M << " K=" << K << " N=" << N << " on " << R
                                      << "x" << C);
      EXPECT_TRUE(run.product == expect);          // Eigen's product, exactly
      EXPECT_EQ(run.folds, model.folds);           // ceil(Sr/R) * ceil(Sc/C)
      EXPECT_EQ(run.cycles, model.total());        // folds * (2R + C + T - 2)
      EXPECT_EQ(run.macs, static_cast<std::int64_t>(M) * N * K);  // every real MAC done once
      ++checked;
    }
  }
  EXPECT_EQ(checked, 180);
}

TEST(SystolicReference, OneFoldOnAnExactFitTakesTwoRPlusCPlusTMinusTwo) {
  // 4x4 array, WS, K = N = 4 (one fold), M = 10 streamed rows: 2*4 + 4 + 10 - 2 = 20 cycles.
  std::mt19937_64 rng(1);
  const SystolicRun run = run_systolic(Dataflow::ws, random_int_matrix(10, 4, rng), random_int_matrix(4, 4, rng), 4, 4);
  EXPECT_EQ(run.folds, 1);
  EXPECT_EQ(run.cycles, 20);
}

}  // namespace
}  // namespace hcsim
