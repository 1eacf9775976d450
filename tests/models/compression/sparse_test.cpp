// "topk" and "randomk": cost formulas of sparse.cpp and the executed sparsifiers.
#include <algorithm>
#include <cmath>
#include <set>

#include <gtest/gtest.h>

#include "codec_test_util.hpp"
#include "models/compression/reference.hpp"

namespace hcsim {
namespace {

using namespace codec_reference;
using testing::make_codec;
using testing::report;

TEST(TopKCodec, CostFormulasWithErrorFeedback) {
  // N = 1e5 fp32, ratio 0.01 -> k = 1000 entries of 4 + 4 bytes, n = 8, 4 radix passes.
  const CodecCost c = make_codec({{"type", "topk"}, {"ratio", 0.01}})->cost(100000, 4, 8, 0);
  EXPECT_DOUBLE_EQ(c.wire_bytes_per_rank.value(), 8000.0);
  ASSERT_EQ(c.plan.phases.size(), 1u);
  EXPECT_EQ(c.plan.phases[0].op, WireOp::all_gather);
  EXPECT_DOUBLE_EQ(c.plan.phases[0].contribution.value(), 8000.0);
  EXPECT_DOUBLE_EQ(c.plan.phases[0].buffer.value(), 64000.0);
  EXPECT_DOUBLE_EQ(c.encode_flops.value(), 100000.0 * (1 + 4) + 2 * 100000.0);  // N(1 + passes) + 2N
  EXPECT_DOUBLE_EQ(c.decode_flops.value(), 8.0 * 1000);                         // n k scatter-adds
  EXPECT_DOUBLE_EQ(c.encode_memory_traffic.value(), 3 * 400000.0 + 8000);      // 3 N e + k entry
  EXPECT_DOUBLE_EQ(c.decode_memory_traffic.value(), 8 * 8000.0 + 400000);      // n k entry + N e
  EXPECT_DOUBLE_EQ(c.extra_memory.value(), 400000.0 + 9 * 8000);               // residual N e + (n+1) k entry
  // All-gather sends (n-1)/n of the gathered 64000 bytes: 56000, against 7e5 for an fp32 ring all-reduce.
  EXPECT_DOUBLE_EQ(bytes_sent_per_rank(c.plan, 8).value(), 56000.0);
}

TEST(TopKCodec, CostFormulasWithoutErrorFeedbackAndInBf16) {
  auto codec = make_codec({{"type", "topk"}, {"ratio", 0.01}, {"error_feedback", false}});
  const CodecCost c = codec->cost(100000, 4, 8, 0);
  EXPECT_DOUBLE_EQ(c.encode_flops.value(), 500000.0);
  EXPECT_DOUBLE_EQ(c.encode_memory_traffic.value(), 400000.0 + 8000);
  EXPECT_DOUBLE_EQ(c.extra_memory.value(), 9 * 8000.0);
  // bf16 values: 2 + 4 bytes per entry.
  EXPECT_DOUBLE_EQ(codec->cost(100000, 2, 8, 0).wire_bytes_per_rank.value(), 6000.0);
}

TEST(SparseCodecs, KeptCountAndIndexWidth) {
  auto codec = make_codec({{"type", "topk"}, {"ratio", 0.3}});
  EXPECT_DOUBLE_EQ(codec->cost(10, 4, 2, 0).wire_bytes_per_rank.value(), 3 * 8.0);  // ceil(0.3 * 10) = 3
  auto tiny = make_codec({{"type", "topk"}, {"ratio", 1e-9}});
  EXPECT_DOUBLE_EQ(tiny->cost(1000, 4, 2, 0).wire_bytes_per_rank.value(), 8.0);  // at least one element
  // Above 2^31 - 1 elements an index takes 8 bytes: N = 3e9, k = 3e6, 4 + 8 bytes each.
  auto big = make_codec({{"type", "topk"}, {"ratio", 0.001}});
  EXPECT_DOUBLE_EQ(big->cost(3000000000, 4, 2, 0).wire_bytes_per_rank.value(), 3e6 * 12);
  EXPECT_DOUBLE_EQ(big->cost(0, 4, 2, 0).wire_bytes_per_rank.value(), 0.0);
}

// Executed: the kept positions are exactly the k largest magnitudes (checked against a full
// sort), the decoded vector is x there and 0 elsewhere, and the message is the modelled size.
TEST(TopKCodec, ExecutedKeepsExactlyTheKLargest) {
  const std::int64_t n = 100000, k = 1000;
  const Eigen::VectorXf x = student_t_vector(n, 2.5, 1e-3, 31);
  const std::vector<std::int64_t> kept = topk_indices(x, k);
  ASSERT_EQ(static_cast<std::int64_t>(kept.size()), k);
  std::vector<float> mags(x.data(), x.data() + n);
  for (float& m : mags) m = std::fabs(m);
  std::sort(mags.begin(), mags.end(), std::greater<>());
  const std::set<std::int64_t> kept_set(kept.begin(), kept.end());
  for (std::int64_t i = 0; i < n; ++i) {
    if (kept_set.count(i)) ASSERT_GE(std::fabs(x[i]), mags[k - 1]) << i;
    else ASSERT_LE(std::fabs(x[i]), mags[k]) << i;
  }
  const Buffer b = encode_sparse(x, kept);
  EXPECT_EQ(static_cast<double>(b.size()),
            make_codec({{"type", "topk"}, {"ratio", 0.01}})->cost(n, 4, 8, 0).wire_bytes_per_rank.value());
  const Eigen::VectorXf y = decode_sparse(b, n);
  for (std::int64_t i = 0; i < n; ++i) ASSERT_EQ(y[i], kept_set.count(i) ? x[i] : 0.0f) << i;
  report("top-k (1 %) relative L2 reconstruction error", (x - y).norm() / x.norm());
}

TEST(RandomKCodec, ExecutedDrawsKDistinctPositionsOfTheModelledSize) {
  const std::int64_t n = 100000, k = 1000;
  const Eigen::VectorXf x = student_t_vector(n, 2.5, 1e-3, 41);
  const std::vector<std::int64_t> idx = randomk_indices(n, k, 7);
  EXPECT_EQ(std::set<std::int64_t>(idx.begin(), idx.end()).size(), static_cast<std::size_t>(k));
  const Buffer b = encode_sparse(x, idx);
  auto codec = make_codec({{"type", "randomk"}, {"ratio", 0.01}});
  EXPECT_EQ(static_cast<double>(b.size()), codec->cost(n, 4, 8, 0).wire_bytes_per_rank.value());
  const Eigen::VectorXf y = decode_sparse(b, n);
  report("random-k (1 %) relative L2 reconstruction error", (x - y).norm() / x.norm());
  const Buffer tk = encode_sparse(x, topk_indices(x, k));
  EXPECT_LT((x - decode_sparse(tk, n)).norm(), (x - y).norm());  // top-k keeps more energy than random-k
}

TEST(RandomKCodec, CostFormulasAndCollectives) {
  // Independent indices: all-gather, encode 2k (+ 2N error feedback), like top-k otherwise.
  auto codec = make_codec({{"type", "randomk"}, {"ratio", 0.01}});
  const CodecCost c = codec->cost(100000, 4, 8, 0);
  EXPECT_FALSE(codec->in_place_allreduce());
  EXPECT_EQ(c.plan.phases[0].op, WireOp::all_gather);
  EXPECT_DOUBLE_EQ(c.encode_flops.value(), 2 * 1000.0 + 2 * 100000);
  EXPECT_DOUBLE_EQ(c.encode_memory_traffic.value(), 3 * 400000.0 + 8000);
  EXPECT_THROW((void)cost_for_in_place_allreduce(*codec, {100000, 1, 4, 8, 0}, OnIncompatible::error, "/c"),
               InputError);
  // Shared indices: k values alone (k e = 4000 bytes) in one in-place all-reduce; decode k.
  auto shared = make_codec({{"type", "randomk"}, {"ratio", 0.01}, {"shared_indices", true}, {"error_feedback", false}});
  EXPECT_TRUE(shared->in_place_allreduce());
  const CodecCost s = cost_for_in_place_allreduce(*shared, {100000, 1, 4, 8, 0}, OnIncompatible::error, "/c");
  EXPECT_DOUBLE_EQ(s.wire_bytes_per_rank.value(), 4000.0);
  ASSERT_EQ(s.plan.phases.size(), 1u);
  EXPECT_EQ(s.plan.phases[0].op, WireOp::all_reduce);
  EXPECT_DOUBLE_EQ(s.decode_flops.value(), 1000.0);
  EXPECT_DOUBLE_EQ(s.encode_memory_traffic.value(), 1000 * 4.0 + 4000);  // k e read + k e written
  EXPECT_DOUBLE_EQ(s.extra_memory.value(), 4000.0);
}

}  // namespace
}  // namespace hcsim
