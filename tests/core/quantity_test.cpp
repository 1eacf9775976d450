// The one quantity parser: SI and IEC prefixes, bits, plain SI numbers, clear errors.
#include "sim/core/quantity.hpp"

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

namespace hcsim {
namespace {

double parse(const char* s, Dim d) {
  auto q = parse_quantity(std::string_view(s), d);
  EXPECT_TRUE(q.value.has_value()) << s << ": " << q.error;
  return q.value.value_or(-1);
}

TEST(Quantity, Bandwidths) {
  EXPECT_DOUBLE_EQ(parse("600 GB/s", Dim::bandwidth), 600e9);
  EXPECT_DOUBLE_EQ(parse("200 Gb/s", Dim::bandwidth), 25e9);  // 200 Gbit/s = 25 GB/s
  EXPECT_DOUBLE_EQ(parse("400Gbps", Dim::bandwidth), 50e9);
  EXPECT_DOUBLE_EQ(parse("1 GiB/s", Dim::bandwidth), 1073741824.0);
}

TEST(Quantity, Times) {
  EXPECT_DOUBLE_EQ(parse("1.2 us", Dim::time), 1.2e-6);
  EXPECT_DOUBLE_EQ(parse("1.2 \xC2\xB5s", Dim::time), 1.2e-6);
  EXPECT_DOUBLE_EQ(parse("5 ns", Dim::time), 5e-9);
  EXPECT_DOUBLE_EQ(parse("3 ms", Dim::time), 3e-3);
  EXPECT_DOUBLE_EQ(parse("2 min", Dim::time), 120.0);
}

TEST(Quantity, SizesSiAndIec) {
  EXPECT_DOUBLE_EQ(parse("80 GiB", Dim::data), 80.0 * 1073741824.0);
  EXPECT_DOUBLE_EQ(parse("80 GB", Dim::data), 80e9);
  EXPECT_DOUBLE_EQ(parse("64 KiB", Dim::data), 65536.0);
  EXPECT_DOUBLE_EQ(parse("8 bit", Dim::data), 1.0);
}

TEST(Quantity, RatesPowerEnergy) {
  EXPECT_DOUBLE_EQ(parse("19.5 TFLOPS", Dim::flop_rate), 19.5e12);
  EXPECT_DOUBLE_EQ(parse("624 TOPS", Dim::flop_rate), 624e12);
  EXPECT_DOUBLE_EQ(parse("700 W", Dim::power), 700.0);
  EXPECT_DOUBLE_EQ(parse("5 pJ/bit", Dim::energy_per_byte), 40e-12);
  EXPECT_DOUBLE_EQ(parse("1.41 GHz", Dim::frequency), 1.41e9);
  EXPECT_DOUBLE_EQ(parse("85 %", Dim::ratio), 0.85);
}

TEST(Quantity, PlainNumbersAreSi) {
  EXPECT_DOUBLE_EQ(parse("1e-6", Dim::time), 1e-6);
  auto q = parse_quantity(nlohmann::json(600e9), Dim::bandwidth);
  ASSERT_TRUE(q.value);
  EXPECT_DOUBLE_EQ(*q.value, 600e9);
}

TEST(Quantity, WrongUnitIsAnErrorNamingTheExpectation) {
  auto q = parse_quantity(std::string_view("600 GB"), Dim::bandwidth);
  EXPECT_FALSE(q.value);
  EXPECT_EQ(q.error, "expected a bandwidth such as \"600 GB/s\", got \"600 GB\"");
  EXPECT_FALSE(parse_quantity(std::string_view("fast"), Dim::bandwidth).value);
  EXPECT_FALSE(parse_quantity(std::string_view(""), Dim::time).value);
  EXPECT_FALSE(parse_quantity(std::string_view("1e999 s"), Dim::time).value);
  EXPECT_FALSE(parse_quantity(nlohmann::json(true), Dim::time).value);
  // Milli is not mega: "600 mB/s" parses, but as 0.6 B/s, never 600 MB/s.
  EXPECT_DOUBLE_EQ(parse("600 mB/s", Dim::bandwidth), 0.6);
}

TEST(Quantity, Format) {
  EXPECT_EQ(format_quantity(312e12, Dim::flop_rate), "312 TFLOPS");
  EXPECT_EQ(format_quantity(80.0 * 1073741824.0, Dim::data), "80 GiB");
  EXPECT_EQ(format_quantity(1.2e-6, Dim::time), "1.2 us");
}

}  // namespace
}  // namespace hcsim
