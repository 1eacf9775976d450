// "onebit-adam" and "onebit-lamb": cost formulas of onebit.cpp / two_phase.hpp, the executed
// 1-bit two-phase all-reduce, and what error feedback does to the accumulated error.
#include <cmath>
#include <numeric>
#include <string>

#include <gtest/gtest.h>

#include "codec_test_util.hpp"
#include "models/compression/reference.hpp"

namespace hcsim {
namespace {

using namespace codec_reference;
using testing::make_codec;
using testing::report;

// DeepSpeed OnebitAdam pads N to a multiple of n lcm(n, 8); each rank owns c = P / n elements.
struct Geometry {
  std::int64_t padded, chunk, message;
};
Geometry deepspeed_geometry(std::int64_t n_elements, int ranks) {
  const std::int64_t unit = ranks * std::lcm<std::int64_t>(ranks, 8);
  const std::int64_t padded = (n_elements + unit - 1) / unit * unit;
  return {padded, padded / ranks, padded / ranks / 8 + 4};  // m = c/8 sign bytes + fp32 scale
}

TEST(OnebitAdamCodec, WarmUpIsAnUncompressedAllReduce) {
  auto codec = make_codec({{"type", "onebit-adam"}, {"warmup_steps", 100}});
  const CodecCost warm = codec->cost(100000, 2, 8, 99);
  EXPECT_FALSE(warm.compressed);
  ASSERT_EQ(warm.plan.phases.size(), 1u);
  EXPECT_EQ(warm.plan.phases[0].op, WireOp::all_reduce);
  EXPECT_DOUBLE_EQ(warm.wire_bytes_per_rank.value(), 200000.0);  // N e, bf16 gradients
  EXPECT_DOUBLE_EQ(warm.encode_flops.value(), 0.0);
  const CodecCost comp = codec->cost(100000, 2, 8, 100);
  EXPECT_TRUE(comp.compressed);
  EXPECT_EQ(warm.extra_memory, comp.extra_memory);  // the peak, reported at every step
  EXPECT_FALSE(codec->in_place_allreduce());
}

TEST(OnebitAdamCodec, CompressedCostFormulas) {
  const Geometry g = deepspeed_geometry(100000, 8);  // P = 100032, c = 12504, m = 1567
  ASSERT_EQ(g.padded, 100032);
  const double p = g.padded, c = g.chunk, m = g.message, n = 8, ne = 100000 * 4.0;
  const CodecCost k = make_codec({{"type", "onebit-adam"}, {"warmup_steps", 0}})->cost(100000, 4, 8, 0);
  ASSERT_EQ(k.plan.phases.size(), 2u);
  EXPECT_EQ(k.plan.phases[0].op, WireOp::all_to_all);
  EXPECT_DOUBLE_EQ(k.plan.phases[0].contribution.value(), n * m);
  EXPECT_EQ(k.plan.phases[1].op, WireOp::all_gather);
  EXPECT_DOUBLE_EQ(k.plan.phases[1].contribution.value(), m);
  EXPECT_DOUBLE_EQ(k.plan.phases[1].buffer.value(), n * m);
  EXPECT_DOUBLE_EQ(k.wire_bytes_per_rank.value(), (n + 1) * m);
  // two_phase.hpp with the sign format (onebit.hpp): 6 encode operations per element with error
  // feedback, 1 decode operation.
  EXPECT_DOUBLE_EQ(k.encode_flops.value(), 6 * (p + c));
  EXPECT_DOUBLE_EQ(k.decode_flops.value(), 3 * p + c);
  EXPECT_DOUBLE_EQ(k.encode_memory_traffic.value(), ne + n * m + 4 * c + m + 8 * p + 8 * c);
  EXPECT_DOUBLE_EQ(k.decode_memory_traffic.value(), 2 * n * m + 4 * c + ne);
  EXPECT_DOUBLE_EQ(k.extra_memory.value(), 3 * n * m + m + 4 * c + 4 * p + 4 * c);
  // Ring all-reduce of fp32 sends 2 (7/8) 4e5 = 7e5 bytes; the 1-bit plan (7/8)(n m + n m) = 21938.
  EXPECT_DOUBLE_EQ(bytes_sent_per_rank(k.plan, 8).value(), 7.0 / 8 * 2 * n * m);
  // Without error feedback: 3 operations per element, no residuals.
  const CodecCost k0 =
      make_codec({{"type", "onebit-adam"}, {"warmup_steps", 0}, {"error_feedback", false}})->cost(100000, 4, 8, 0);
  EXPECT_DOUBLE_EQ(k0.encode_flops.value(), 3 * (p + c));
  EXPECT_DOUBLE_EQ(k0.extra_memory.value(), 3 * n * m + m + 4 * c);
}

TEST(OnebitLambCodec, KeepsFreshVarianceAndLastMomentum) {
  // DeepSpeed OnebitLamb: exp_avg_sq_fresh and exp_avg_last_step, fp32 each: 8N more than 1-bit Adam.
  const CodecCost adam = make_codec({{"type", "onebit-adam"}, {"warmup_steps", 10}})->cost(100000, 4, 8, 10);
  const CodecCost lamb = make_codec({{"type", "onebit-lamb"}, {"warmup_steps", 10}})->cost(100000, 4, 8, 10);
  EXPECT_DOUBLE_EQ(lamb.extra_memory.value() - adam.extra_memory.value(), 8 * 100000.0);
  EXPECT_EQ(lamb.wire_bytes_per_rank, adam.wire_bytes_per_rank);
  EXPECT_FALSE(make_codec({{"type", "onebit-lamb"}})->cost(100000, 4, 8, 99999).compressed);  // default 100000
}

// Executed: the 1-bit two-phase all-reduce on real buffers hands exactly the modelled bytes to
// the all-to-all and to the all-gather, for divisible and non-divisible sizes.
TEST(OnebitAdamCodec, ExecutedTwoPhaseMatchesModelledBytes) {
  auto codec = make_codec({{"type", "onebit-adam"}, {"warmup_steps", 0}});
  for (auto [n, ranks] : {std::pair<std::int64_t, int>{100000, 8}, {12345, 6}, {1000, 3}, {77, 1}}) {
    std::vector<Eigen::VectorXf> grads;
    for (int r = 0; r < ranks; ++r) grads.push_back(student_t_vector(n, 3.0, 1e-3, 200 + r));
    const Geometry g = deepspeed_geometry(n, ranks);
    TwoPhaseErrorFeedback ef(ranks, g.chunk);
    const TwoPhaseResult res = two_phase_allreduce(grads, g.chunk, sign_codec(), &ef);
    const CodecCost k = codec->cost(n, 4, ranks, 0);
    EXPECT_EQ(static_cast<double>(res.alltoall_bytes), k.plan.phases[0].contribution.value()) << n;
    EXPECT_EQ(static_cast<double>(res.allgather_bytes), k.plan.phases[1].contribution.value()) << n;
    EXPECT_EQ(static_cast<double>(res.alltoall_bytes + res.allgather_bytes), k.wire_bytes_per_rank.value()) << n;
  }
}

// Norm of the accumulated error sum_t (truth_t - decoded_t) after each step, for gradients
// with a persistent direction (a fixed heavy-tailed vector) plus heavy-tailed noise.
std::vector<double> accumulated_error_single(bool error_feedback, int steps) {
  const std::int64_t n = 10000;
  const Eigen::VectorXf mu = student_t_vector(n, 3.0, 1e-3, 5);
  ErrorFeedback ef(n);
  Eigen::VectorXf sum = Eigen::VectorXf::Zero(n);
  std::vector<double> norms;
  for (int t = 0; t < steps; ++t) {
    const Eigen::VectorXf g = mu + student_t_vector(n, 3.0, 1e-3, 1000 + t);
    const Eigen::VectorXf d = error_feedback ? ef.apply(g, sign_codec()) : decode_sign(encode_sign(g), n);
    sum += g - d;
    norms.push_back(sum.norm());
  }
  if (error_feedback) {
    EXPECT_LE((sum - ef.residual()).norm(), 1e-4 * sum.norm());  // telescoping: sum = e_T
  }
  return norms;
}

// Error feedback (Karimireddy et al. 2019): with it the accumulated error telescopes to the last
// residual; without it the bias of the 1-bit code adds up step after step. From step 50 to 100
// an error growing linearly doubles and a random walk grows by sqrt(2); we assert that without
// feedback it grows at least 1.8x (linearly) and with feedback less than sqrt(2) (it levels off),
// and that after 100 steps feedback leaves at most a quarter of the error.
void expect_feedback_bounds_the_error(const std::string& what, double with50, double with100, double without50,
                                      double without100) {
  report(what + ": accumulated error norm after 50 steps, with error feedback", with50);
  report(what + ": accumulated error norm after 100 steps, with error feedback", with100);
  report(what + ": accumulated error norm after 50 steps, without", without50);
  report(what + ": accumulated error norm after 100 steps, without", without100);
  EXPECT_LT(with100, std::sqrt(2.0) * with50) << what;
  EXPECT_GT(without100, 1.8 * without50) << what;
  EXPECT_LT(with100, without100 / 4) << what;
}

TEST(OnebitErrorFeedback, AccumulatedErrorLevelsOffOnlyWithFeedback) {
  const std::vector<double> with = accumulated_error_single(true, 100);
  const std::vector<double> without = accumulated_error_single(false, 100);
  expect_feedback_bounds_the_error("1-bit, one vector", with[49], with[99], without[49], without[99]);
}

// The same on 4 ranks through the two-phase all-reduce (worker and server residuals).
TEST(OnebitErrorFeedback, TwoPhaseAccumulatedErrorLevelsOffOnlyWithFeedback) {
  const std::int64_t n = 8000;
  const int ranks = 4, steps = 100;
  const Geometry geo = deepspeed_geometry(n, ranks);
  std::vector<Eigen::VectorXf> mu;
  for (int r = 0; r < ranks; ++r) mu.push_back(student_t_vector(n, 3.0, 1e-3, 50 + r));
  double norm50[2] = {0, 0}, norm100[2] = {0, 0};
  for (int use_ef = 0; use_ef < 2; ++use_ef) {
    TwoPhaseErrorFeedback ef(ranks, geo.chunk);
    Eigen::VectorXf sum = Eigen::VectorXf::Zero(n);
    for (int t = 0; t < steps; ++t) {
      std::vector<Eigen::VectorXf> g;
      Eigen::VectorXf truth = Eigen::VectorXf::Zero(n);
      for (int r = 0; r < ranks; ++r) {
        g.push_back(mu[r] + student_t_vector(n, 3.0, 1e-3, 5000 + 10 * t + r));
        truth += g.back() / static_cast<float>(ranks);
      }
      sum += truth - two_phase_allreduce(g, geo.chunk, sign_codec(), use_ef ? &ef : nullptr).mean;
      if (t == 49) norm50[use_ef] = sum.norm();
    }
    norm100[use_ef] = sum.norm();
  }
  expect_feedback_bounds_the_error("1-bit two-phase, 4 ranks", norm50[1], norm100[1], norm50[0], norm100[0]);
}

}  // namespace
}  // namespace hcsim
