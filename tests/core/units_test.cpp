// Unit types: only dimensionally meaningful arithmetic, values held in SI.
#include "sim/core/units.hpp"

#include <type_traits>

#include <gtest/gtest.h>

namespace hcsim {
namespace {

TEST(Units, BytesOverBandwidthIsSeconds) {
  // 600 GB over 300 GB/s is 2 s (plain arithmetic).
  auto t = Bytes(600e9) / BytesPerSecond(300e9);
  static_assert(std::is_same_v<decltype(t), Seconds>);
  EXPECT_DOUBLE_EQ(t.value(), 2.0);
}

TEST(Units, FlopsOverRateIsSeconds) {
  auto t = Flops(312e12) / FlopsPerSecond(312e12);
  static_assert(std::is_same_v<decltype(t), Seconds>);
  EXPECT_DOUBLE_EQ(t.value(), 1.0);
}

TEST(Units, PowerTimesTimeIsEnergy) {
  auto e = Watts(700) * Seconds(2);
  static_assert(std::is_same_v<decltype(e), Joules>);
  EXPECT_DOUBLE_EQ(e.value(), 1400.0);
  auto p = e / Seconds(4);
  static_assert(std::is_same_v<decltype(p), Watts>);
  EXPECT_DOUBLE_EQ(p.value(), 350.0);
}

TEST(Units, EnergyPerByteTimesBytesIsEnergy) {
  auto e = JoulesPerByte(8e-12) * Bytes(1e9);
  static_assert(std::is_same_v<decltype(e), Joules>);
  EXPECT_DOUBLE_EQ(e.value(), 8e-3);
}

TEST(Units, SameDimensionRatioIsPlainNumber) {
  auto r = Seconds(3) / Seconds(2);
  static_assert(std::is_same_v<decltype(r), double>);
  EXPECT_DOUBLE_EQ(r, 1.5);
}

TEST(Units, AdditionAndComparison) {
  Seconds a(1), b(2);
  EXPECT_LT(a, b);
  EXPECT_DOUBLE_EQ((a + b).value(), 3.0);
  EXPECT_DOUBLE_EQ((b - a).value(), 1.0);
  EXPECT_DOUBLE_EQ((2.0 * b).value(), 4.0);
  EXPECT_DOUBLE_EQ(max(a, b).value(), 2.0);
}

// Adding seconds to bytes must not compile; checked by concept.
template <class A, class B>
concept Addable = requires(A a, B b) { a + b; };
static_assert(Addable<Seconds, Seconds>);
static_assert(!Addable<Seconds, Bytes>);
static_assert(!Addable<Watts, Joules>);

}  // namespace
}  // namespace hcsim
