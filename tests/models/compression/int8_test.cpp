// "int8": cost formulas of int8.cpp / two_phase.hpp and the executed bucketed quantiser.
#include <cmath>
#include <cstring>

#include <gtest/gtest.h>

#include "codec_test_util.hpp"
#include "models/compression/reference.hpp"

namespace hcsim {
namespace {

using namespace codec_reference;
using testing::make_codec;
using testing::report;

TEST(Int8Codec, TwoPhaseCostFormulas) {
  // N = 1e5 fp32, n = 8, B = 2048: c = 12500, ceil(c/B) = 7 scales, m = 12500 + 28 = 12528 bytes.
  const CodecCost c = make_codec({{"type", "int8"}})->cost(100000, 4, 8, 0);
  ASSERT_EQ(c.plan.phases.size(), 2u);
  EXPECT_EQ(c.plan.phases[0].op, WireOp::all_to_all);
  EXPECT_DOUBLE_EQ(c.plan.phases[0].contribution.value(), 8 * 12528.0);
  EXPECT_DOUBLE_EQ(c.plan.phases[0].buffer.value(), 8 * 12528.0);
  EXPECT_EQ(c.plan.phases[1].op, WireOp::all_gather);
  EXPECT_DOUBLE_EQ(c.plan.phases[1].contribution.value(), 12528.0);
  EXPECT_DOUBLE_EQ(c.plan.phases[1].buffer.value(), 8 * 12528.0);
  EXPECT_DOUBLE_EQ(c.wire_bytes_per_rank.value(), 9 * 12528.0);
  // two_phase.hpp: encode 4 (P + c); decode (2*1 + 1) P + c.
  EXPECT_DOUBLE_EQ(c.encode_flops.value(), 4.0 * (100000 + 12500));
  EXPECT_DOUBLE_EQ(c.decode_flops.value(), 3.0 * 100000 + 12500);
  // encode N e + n m + 4c + m; decode 2 n m + 4c + N e; memory 3 n m + m + 4c.
  EXPECT_DOUBLE_EQ(c.encode_memory_traffic.value(), 400000 + 8 * 12528.0 + 50000 + 12528);
  EXPECT_DOUBLE_EQ(c.decode_memory_traffic.value(), 2 * 8 * 12528.0 + 50000 + 400000);
  EXPECT_DOUBLE_EQ(c.extra_memory.value(), 3 * 8 * 12528.0 + 12528 + 50000);
  // About a quarter of fp32 ring all-reduce's bytes: 2(7/8) 4e5 = 7e5 against (7/8)(2 * 100224).
  EXPECT_DOUBLE_EQ(bytes_sent_per_rank(c.plan, 8).value(), 7.0 / 8 * (8 * 12528.0) * 2);
}

TEST(Int8Codec, PerBucketScalesDoNotSumInPlace) {
  auto codec = make_codec({{"type", "int8"}, {"bucket_size", 512}});
  EXPECT_FALSE(codec->in_place_allreduce());
  EXPECT_EQ(codec->why_not_in_place(),
            "each rank's int8 values carry their own fp32 scale per bucket of 512 elements, so they do not add "
            "element-wise; int8 reduces by all-to-all + all-gather");
  EXPECT_THROW((void)cost_for_in_place_allreduce(*codec, {1000, 1, 4, 4, 0}, OnIncompatible::error, "/c"),
               InputError);
}

// Executed: each element is within half a quantisation step of its bucket's scale, the scale
// being max|x| / 127 (as sent, fp32); the decoded product q * scale is rounded to fp32, which
// adds at most 2^-24 |decoded|.
TEST(Int8Codec, ExecutedQuantiserIsWithinHalfAStep) {
  const std::int64_t n = 100000, bucket = 2048, buckets = (n + bucket - 1) / bucket;
  const Eigen::VectorXf x = student_t_vector(n, 3.0, 1e-3, 21);
  const Buffer b = encode_int8(x, bucket);
  EXPECT_EQ(static_cast<std::int64_t>(b.size()), n + 4 * buckets);  // one-rank message: N + 4 ceil(N/B)
  const Eigen::VectorXf y = decode_int8(b, n, bucket);
  for (std::int64_t i = 0; i < n; ++i) {
    float scale;
    std::memcpy(&scale, b.data() + 4 * (i / bucket), 4);
    const float expected = x.segment(i / bucket * bucket, std::min(bucket, n - i / bucket * bucket))
                               .cwiseAbs().maxCoeff() / 127.0f;
    ASSERT_EQ(scale, expected) << "bucket " << i / bucket;
    ASSERT_LE(std::fabs(x[i] - y[i]), scale / 2 + std::ldexp(std::fabs(y[i]), -24)) << "element " << i;
  }
  report("int8 relative L2 reconstruction error (B = 2048)", (x - y).norm() / x.norm());
}

// Executed: the two-phase reduction on 8 (and 7) ranks' real buffers hands exactly the modelled
// bytes to each collective. Its error is bounded element by element: phase 1 adds at most the
// average over ranks of s_i / 2 (A, s_i rank i's bucket scale), phase 2 at most s' / 2 with
// s' = max|phase-1 average| / 127 <= (max|true mean| + A) / 127 over the bucket; float sums of
// n terms add at most (n + 2) 2^-24 of the largest input magnitude in the bucket.
// Checks every element of `mean` against the bound of its bucket [start, start + len).
void expect_within_two_phase_bound(const std::vector<Eigen::VectorXf>& grads, const Eigen::VectorXf& truth,
                                   const Eigen::VectorXf& mean, std::int64_t chunk, std::int64_t bucket) {
  const double n = static_cast<double>(grads.size());
  for (std::int64_t c0 = 0; c0 < truth.size(); c0 += chunk) {
    for (std::int64_t start = c0; start < std::min(c0 + chunk, truth.size()); start += bucket) {
      const std::int64_t len = std::min({bucket, c0 + chunk - start, truth.size() - start});
      double a = 0, largest = 0;
      for (const auto& g : grads) {
        const double m = g.segment(start, len).cwiseAbs().maxCoeff();
        a += m / 127 / 2 / n;
        largest = std::max(largest, m);
      }
      const double t = truth.segment(start, len).cwiseAbs().maxCoeff();
      const double bound = a + (t + a) / 127 / 2 + (n + 2) * std::ldexp(largest, -24);
      const double worst = (mean.segment(start, len) - truth.segment(start, len)).cwiseAbs().maxCoeff();
      ASSERT_LE(worst, bound) << "bucket at " << start;
    }
  }
}

TEST(Int8Codec, ExecutedTwoPhaseMatchesModelledBytesAndErrorBound) {
  for (int ranks : {8, 7}) {
    const std::int64_t n = ranks == 8 ? 100000 : 99999;
    std::vector<Eigen::VectorXf> grads;
    Eigen::VectorXf truth = Eigen::VectorXf::Zero(n);
    for (int r = 0; r < ranks; ++r) {
      grads.push_back(student_t_vector(n, 3.0, 1e-3, 100 + r));
      truth += grads.back() / static_cast<float>(ranks);
    }
    const CodecCost c = make_codec({{"type", "int8"}})->cost(n, 4, ranks, 0);
    const std::int64_t chunk = (n + ranks - 1) / ranks;
    const TwoPhaseResult res = two_phase_allreduce(grads, chunk, int8_codec(2048), nullptr);
    EXPECT_EQ(static_cast<double>(res.alltoall_bytes), c.plan.phases[0].contribution.value()) << ranks;
    EXPECT_EQ(static_cast<double>(res.allgather_bytes), c.plan.phases[1].contribution.value()) << ranks;
    EXPECT_EQ(static_cast<double>(res.alltoall_bytes + res.allgather_bytes), c.wire_bytes_per_rank.value());
    expect_within_two_phase_bound(grads, truth, res.mean, chunk, 2048);
    report("int8 two-phase mean relative L2 error, ranks = " + std::to_string(ranks),
           (res.mean - truth).norm() / truth.norm());
  }
}

TEST(Int8Codec, AllGatherFallbackSendsTheWholeEncodedBuffer) {
  // Fallback: n chunk messages in one all-gather: wire n m; decode (1 + 1) n P.
  const CodecCost c = make_codec({{"type", "int8"}})->allgather_cost({100000, 1, 4, 8, 0});
  ASSERT_EQ(c.plan.phases.size(), 1u);
  EXPECT_EQ(c.plan.phases[0].op, WireOp::all_gather);
  EXPECT_DOUBLE_EQ(c.wire_bytes_per_rank.value(), 8 * 12528.0);
  EXPECT_DOUBLE_EQ(c.plan.phases[0].buffer.value(), 64 * 12528.0);
  EXPECT_DOUBLE_EQ(c.decode_flops.value(), 2.0 * 8 * 100000);
}

}  // namespace
}  // namespace hcsim
