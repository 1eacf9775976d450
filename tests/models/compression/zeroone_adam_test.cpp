// "zeroone-adam": the step schedule of zeroone_adam.cpp (variance refreshes, local steps) and its
// costs.
#include <algorithm>

#include <gtest/gtest.h>

#include "codec_test_util.hpp"

namespace hcsim {
namespace {

using testing::make_codec;
using testing::report;

enum class Kind { full, onebit, silent };

Kind kind_of(const CodecCost& c) {
  if (!c.compressed) return Kind::full;
  return c.plan.empty() ? Kind::silent : Kind::onebit;
}

// DeepSpeed ZeroOneAdam's own counters, replayed step by step (1-based t): a refresh when t is a
// multiple of var_interval; after var_update_scaler refreshes the interval doubles.
std::vector<bool> deepspeed_refreshes(std::int64_t steps, std::int64_t scaler) {
  std::vector<bool> out;
  std::int64_t interval = 1, counter = 0;
  for (std::int64_t t = 1; t <= steps; ++t) {
    const bool refresh = t % interval == 0;
    out.push_back(refresh);
    if (refresh && ++counter == scaler) {
      counter = 0;
      interval *= 2;
    }
  }
  return out;
}

TEST(ZeroOneAdamCodec, VariancePhaseMatchesDeepSpeedCounters) {
  for (std::int64_t scaler : {16, 3}) {
    auto codec = make_codec({{"type", "zeroone-adam"}, {"var_update_scaler", scaler}});
    const std::vector<bool> refresh = deepspeed_refreshes(5000, scaler);
    for (std::int64_t s = 0; s < 5000; ++s)
      ASSERT_EQ(kind_of(codec->cost(4096, 4, 4, s)), refresh[s] ? Kind::full : Kind::onebit)
          << "scaler " << scaler << " step " << s;
  }
  // Spot values for the default scaler 16: t = 1..16 refresh, then every 2nd step up to 48.
  auto codec = make_codec({{"type", "zeroone-adam"}});
  EXPECT_EQ(kind_of(codec->cost(4096, 4, 4, 15)), Kind::full);
  EXPECT_EQ(kind_of(codec->cost(4096, 4, 4, 16)), Kind::onebit);
  EXPECT_EQ(kind_of(codec->cost(4096, 4, 4, 17)), Kind::full);
  EXPECT_EQ(kind_of(codec->cost(4096, 4, 4, 49)), Kind::onebit);  // t = 50, interval 4 from t = 49
  EXPECT_EQ(kind_of(codec->cost(4096, 4, 4, 51)), Kind::full);    // t = 52
}

TEST(ZeroOneAdamCodec, FrozenPhaseSyncsOncePerLocalWindow) {
  // Freeze at 1000; the window doubles every 10 frozen steps up to 4: 1 (u < 10), 2 (u < 20), 4.
  auto codec = make_codec({{"type", "zeroone-adam"},
                           {"var_freeze_step", 1000},
                           {"local_step_scaler", 10},
                           {"local_steps", 4}});
  std::int64_t window = 1, counter = 0;
  for (std::int64_t u = 0; u < 60; ++u) {
    const bool sync = (u + 1) % window == 0;
    ASSERT_EQ(kind_of(codec->cost(4096, 4, 4, 1000 + u)), sync ? Kind::onebit : Kind::silent) << "u " << u;
    if (++counter == 10) {
      counter = 0;
      window = std::min<std::int64_t>(4, window * 2);
    }
  }
  const CodecCost silent = codec->cost(4096, 4, 4, 1000 + 20);
  EXPECT_DOUBLE_EQ(silent.wire_bytes_per_rank.value(), 0.0);
  EXPECT_DOUBLE_EQ(silent.encode_flops.value() + silent.decode_flops.value(), 0.0);
}

TEST(ZeroOneAdamCodec, OnebitStepsCostAsOnebitAdamPlusTheAccumulator) {
  // Same wire and work as 1-bit Adam with error feedback; 4N more memory (momentum accumulator).
  const CodecCost z = make_codec({{"type", "zeroone-adam"}})->cost(100000, 4, 8, 16);
  const CodecCost a = make_codec({{"type", "onebit-adam"}, {"warmup_steps", 0}})->cost(100000, 4, 8, 16);
  ASSERT_EQ(kind_of(z), Kind::onebit);
  EXPECT_EQ(z.wire_bytes_per_rank, a.wire_bytes_per_rank);
  EXPECT_EQ(z.encode_flops, a.encode_flops);
  EXPECT_DOUBLE_EQ(z.extra_memory.value() - a.extra_memory.value(), 4 * 100000.0);
  EXPECT_EQ(make_codec({{"type", "zeroone-adam"}})->cost(100000, 4, 8, 0).extra_memory, z.extra_memory);
}

TEST(ZeroOneAdamCodec, ReportsTrafficAgainstAdamAndOnebitAdam) {
  // Bytes sent per rank over 120k steps (DeepSpeed defaults), relative to uncompressed Adam.
  auto zero = make_codec({{"type", "zeroone-adam"}});
  auto one = make_codec({{"type", "onebit-adam"}});
  auto none = make_codec({{"type", "none"}});
  double z = 0, o = 0, u = 0;
  for (std::int64_t s = 0; s < 120000; ++s) {
    z += bytes_sent_per_rank(zero->cost(1 << 20, 4, 64, s).plan, 64).value();
    o += bytes_sent_per_rank(one->cost(1 << 20, 4, 64, s).plan, 64).value();
    u += bytes_sent_per_rank(none->cost(1 << 20, 4, 64, s).plan, 64).value();
  }
  report("0/1 Adam bytes sent / Adam over 120k steps", z / u);
  report("1-bit Adam bytes sent / Adam over 120k steps", o / u);
  EXPECT_LT(z, o);  // no long full-precision warm-up, and local steps after the freeze
}

}  // namespace
}  // namespace hcsim
