// "none", "fp16", "bf16": cost formulas of cast.cpp and the executed casts.
#include <cmath>

#include <gtest/gtest.h>

#include "codec_test_util.hpp"
#include "models/compression/reference.hpp"

namespace hcsim {
namespace {

using namespace codec_reference;
using testing::make_codec;
using testing::report;

TEST(NoneCodec, OneAllReduceOfTheGradient) {
  // N e bytes in one in-place all-reduce, no work, no memory.
  const CodecCost c = make_codec({{"type", "none"}})->cost(100000, 2, 16, 0);
  EXPECT_FALSE(c.compressed);
  EXPECT_DOUBLE_EQ(c.wire_bytes_per_rank.value(), 200000.0);
  ASSERT_EQ(c.plan.phases.size(), 1u);
  EXPECT_EQ(c.plan.phases[0].op, WireOp::all_reduce);
  EXPECT_DOUBLE_EQ(c.plan.phases[0].buffer.value(), 200000.0);
  EXPECT_DOUBLE_EQ(c.encode_flops.value() + c.decode_flops.value() + c.extra_memory.value(), 0.0);
}

TEST(CastCodec, TwoBytesPerElementSummedInPlace) {
  for (const char* type : {"fp16", "bf16"}) {
    auto codec = make_codec({{"type", type}});
    EXPECT_TRUE(codec->in_place_allreduce());
    // fp32 gradient of N = 1e5: wire 2N; N conversions each way; traffic N e + 2N each way; a 2N buffer.
    const CodecCost c = codec->cost(100000, 4, 8, 0);
    EXPECT_TRUE(c.compressed);
    EXPECT_DOUBLE_EQ(c.wire_bytes_per_rank.value(), 200000.0);
    EXPECT_DOUBLE_EQ(c.uncompressed_bytes.value(), 400000.0);
    ASSERT_EQ(c.plan.phases.size(), 1u);
    EXPECT_EQ(c.plan.phases[0].op, WireOp::all_reduce);
    EXPECT_DOUBLE_EQ(c.plan.phases[0].buffer.value(), 200000.0);
    EXPECT_DOUBLE_EQ(c.encode_flops.value(), 100000.0);
    EXPECT_DOUBLE_EQ(c.decode_flops.value(), 100000.0);
    EXPECT_DOUBLE_EQ(c.encode_memory_traffic.value(), 600000.0);
    EXPECT_DOUBLE_EQ(c.decode_memory_traffic.value(), 600000.0);
    EXPECT_DOUBLE_EQ(c.extra_memory.value(), 200000.0);
    // Ring all-reduce of 2N bytes on 8 ranks sends 2 (7/8) 2N per rank (NCCL-tests bus bandwidth).
    EXPECT_DOUBLE_EQ(bytes_sent_per_rank(c.plan, 8).value(), 2 * 7.0 / 8 * 200000);
  }
}

// Executed: the encoded buffer is exactly the modelled wire bytes, and each element is within
// half an ulp of the target format (round to nearest): relative 2^-11 for binary16 normals
// (10 fraction bits), 2^-8 for bfloat16 (7 fraction bits); binary16 subnormals are spaced 2^-24,
// so there the absolute error is at most 2^-25.
TEST(CastCodec, ExecutedCastsMatchWireBytesAndRoundingBound) {
  const Eigen::VectorXf x = student_t_vector(100000, 3.0, 1e-2, 11);
  struct Case { HalfFormat f; const char* type; double rel; double abs; };
  for (const Case& k : {Case{HalfFormat::fp16, "fp16", std::ldexp(1.0, -11), std::ldexp(1.0, -25)},
                        Case{HalfFormat::bf16, "bf16", std::ldexp(1.0, -8), 0.0}}) {
    const Buffer b = encode_half(x, k.f);
    EXPECT_EQ(static_cast<double>(b.size()), make_codec({{"type", k.type}})->cost(x.size(), 4, 8, 0)
                                                 .wire_bytes_per_rank.value());
    const Eigen::VectorXf y = decode_half(b, k.f);
    for (Eigen::Index i = 0; i < x.size(); ++i)
      ASSERT_LE(std::fabs(x[i] - y[i]), std::max(k.rel * std::fabs(x[i]), k.abs)) << k.type << " element " << i;
    report(std::string(k.type) + " relative L2 reconstruction error", (x - y).norm() / x.norm());
  }
}

}  // namespace
}  // namespace hcsim
