// "powersgd": cost formulas of powersgd.cpp and the executed rank-r PowerSGD on real matrices.
#include <cmath>

#include <gtest/gtest.h>

#include "codec_test_util.hpp"
#include "models/compression/reference.hpp"

namespace hcsim {
namespace {

using namespace codec_reference;
using testing::make_codec;
using testing::report;

TEST(PowerSgdCodec, CostFormulasForAMatrix) {
  // A (1024 x 4096) fp32 gradient, rank 4, 8 ranks, after warm-up.
  const double n = 1024, m = 4096, r = 4, e = 4, nm = n * m;
  auto codec = make_codec({{"type", "powersgd"}, {"rank", 4}});
  EXPECT_TRUE(codec->in_place_allreduce());
  const CodecCost c = codec->cost(CodecInput{1024, 4096, 4, 8, 1000});
  EXPECT_TRUE(c.compressed);
  ASSERT_EQ(c.plan.phases.size(), 2u);
  EXPECT_TRUE(c.plan.in_place());
  EXPECT_DOUBLE_EQ(c.plan.phases[0].buffer.value(), n * r * e);  // P
  EXPECT_DOUBLE_EQ(c.plan.phases[1].buffer.value(), m * r * e);  // Q
  EXPECT_DOUBLE_EQ(c.wire_bytes_per_rank.value(), (n + m) * r * e);
  // Two GEMMs 4 n m r, Gram-Schmidt 3 n r + 2 n r (r - 1), error feedback n m; decode 2 n m r + n m.
  EXPECT_DOUBLE_EQ(c.encode_flops.value(), 4 * nm * r + 3 * n * r + 2 * n * r * (r - 1) + nm);
  EXPECT_DOUBLE_EQ(c.decode_flops.value(), 2 * nm * r + nm);
  EXPECT_DOUBLE_EQ(c.encode_memory_traffic.value(), e * (2 * nm + 4 * n * r + 2 * m * r + 3 * nm));
  EXPECT_DOUBLE_EQ(c.decode_memory_traffic.value(), e * (n * r + m * r + nm + 2 * nm));
  EXPECT_DOUBLE_EQ(c.extra_memory.value(), (n + m) * r * e + nm * e);  // P, Q and the residual
  const CodecCost no_ef = make_codec({{"type", "powersgd"}, {"rank", 4}, {"error_feedback", false}})
                              ->cost(CodecInput{1024, 4096, 4, 8, 1000});
  EXPECT_DOUBLE_EQ(no_ef.extra_memory.value(), (n + m) * r * e);
}

TEST(PowerSgdCodec, WarmUpVectorsAndSmallMatricesTravelUncompressed) {
  auto codec = make_codec({{"type", "powersgd"}, {"rank", 4}});
  const CodecCost warm = codec->cost(CodecInput{1024, 4096, 2, 8, 999});  // PyTorch start_powerSGD_iter 1000
  EXPECT_FALSE(warm.compressed);
  EXPECT_DOUBLE_EQ(warm.wire_bytes_per_rank.value(), 1024 * 4096 * 2.0);
  EXPECT_EQ(warm.extra_memory, codec->cost(CodecInput{1024, 4096, 2, 8, 1000}).extra_memory);
  // A vector (flat buffer) is never compressed; nor a 10 x 10 matrix: (10 + 10) 4 * 2 >= 100.
  for (const CodecInput& in : {CodecInput{100000, 1, 4, 8, 5000}, CodecInput{10, 10, 4, 8, 5000}}) {
    const CodecCost c = codec->cost(in);
    EXPECT_FALSE(c.compressed);
    EXPECT_DOUBLE_EQ(c.wire_bytes_per_rank.value(), static_cast<double>(in.elements()) * 4);
    EXPECT_DOUBLE_EQ(c.extra_memory.value(), 0.0);
  }
}

// Executed: on 4 ranks whose gradients share a rank-4 column space, the mean is a rank-4
// matrix and one power iteration reconstructs it: P = M Q spans its column space, so
// P P^T M = M up to fp32 rounding (relative ~1e-6). The serialised P and Q are the modelled bytes.
TEST(PowerSgdCodec, ExecutedRankRMatrixIsReconstructed) {
  const std::int64_t rows = 64, cols = 256;
  const int r = 4, ranks = 4;
  const Eigen::MatrixXf a = student_t_matrix(rows, r, 3.0, 1.0, 61);
  std::vector<Eigen::MatrixXf> grads;
  Eigen::MatrixXf truth = Eigen::MatrixXf::Zero(rows, cols);
  for (int i = 0; i < ranks; ++i) {
    grads.push_back(a * student_t_matrix(cols, r, 3.0, 1.0, 70 + i).transpose());
    truth += grads.back() / static_cast<float>(ranks);
  }
  PowerSgdState state = powersgd_state(rows, cols, r, ranks, 3);
  const PowerSgdResult res = powersgd_allreduce(grads, state, true);
  const double err = (res.mean - truth).norm() / truth.norm();
  report("PowerSGD rank-4 on a rank-4 mean, relative error", err);
  EXPECT_LT(err, 1e-5);
  const CodecCost c = make_codec({{"type", "powersgd"}, {"rank", r}, {"warmup_steps", 0}})
                          ->cost(CodecInput{rows, cols, 4, ranks, 0});
  EXPECT_EQ(static_cast<double>(res.p_bytes), c.plan.phases[0].contribution.value());
  EXPECT_EQ(static_cast<double>(res.q_bytes), c.plan.phases[1].contribution.value());
  EXPECT_EQ(static_cast<double>(res.p_bytes + res.q_bytes), c.wire_bytes_per_rank.value());
}

// Executed: on heavy-tailed full-rank gradients with a persistent part, the accumulated error
// sum_t (mean_t - P Q^T) telescopes to the mean residual with error feedback and stays bounded;
// without it the discarded spectrum adds up step after step.
TEST(PowerSgdCodec, ExecutedErrorFeedbackBoundsTheAccumulatedError) {
  const std::int64_t rows = 64, cols = 128;
  const int r = 2, ranks = 2, steps = 100;
  const Eigen::MatrixXf mu = student_t_matrix(rows, cols, 3.0, 1e-3, 81);
  double first = 0, norm50[2] = {0, 0}, norm100[2] = {0, 0};
  for (int use_ef = 0; use_ef < 2; ++use_ef) {
    PowerSgdState state = powersgd_state(rows, cols, r, ranks, 4);
    Eigen::MatrixXf sum = Eigen::MatrixXf::Zero(rows, cols);
    for (int t = 0; t < steps; ++t) {
      std::vector<Eigen::MatrixXf> g;
      Eigen::MatrixXf truth = Eigen::MatrixXf::Zero(rows, cols);
      for (int i = 0; i < ranks; ++i) {
        g.push_back(mu + student_t_matrix(rows, cols, 3.0, 1e-3, 900 + 10 * t + i));
        truth += g.back() / static_cast<float>(ranks);
      }
      const Eigen::MatrixXf approx = powersgd_allreduce(g, state, use_ef == 1).mean;
      if (t == 0 && use_ef == 1) first = (approx - truth).norm() / truth.norm();
      sum += truth - approx;
      if (t == 49) norm50[use_ef] = sum.norm();
    }
    norm100[use_ef] = sum.norm();
  }
  report("PowerSGD rank-2 on a heavy-tailed 64 x 128 mean, relative error at step 1", first);
  report("PowerSGD accumulated error norm after 50 steps, with error feedback", norm50[1]);
  report("PowerSGD accumulated error norm after 100 steps, with error feedback", norm100[1]);
  report("PowerSGD accumulated error norm after 50 steps, without", norm50[0]);
  report("PowerSGD accumulated error norm after 100 steps, without", norm100[0]);
  // As for 1-bit (onebit_test.cpp): linear growth doubles from step 50 to 100, a random walk
  // grows by sqrt(2).
  EXPECT_LT(norm100[1], std::sqrt(2.0) * norm50[1]);
  EXPECT_GT(norm100[0], 1.8 * norm50[0]);
  EXPECT_LT(norm100[1], norm100[0] / 4);
}

}  // namespace
}  // namespace hcsim
