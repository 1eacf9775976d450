// Units that parse but probably mean something else (sim/core/quantity.hpp:
// unit_lookalike), and how resolve_value reports them: a warning, or inside the range error
// they cause. "25 mb" = 25 * 1e-3 * 1/8 B = 0.003125 B; "80 Gb" = 80e9 / 8 B = 9.313 GiB.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "sim/core/params.hpp"

namespace hcsim {
namespace {

using ::testing::HasSubstr;

TEST(UnitLookalike, MillibitsForMegabytes) {
  const std::string m = unit_lookalike("25 mb", Dim::data);
  EXPECT_THAT(m, HasSubstr("\"25 mb\" is read as 25 millibits (0.003125 B)"));
  EXPECT_THAT(m, HasSubstr("did you mean \"25 MB\"?"));
  EXPECT_THAT(unit_lookalike("25 mB", Dim::data), HasSubstr("25 millibytes (0.025 B)"));
  // A data rate keeps the bits written: "mbps" is a slip for "Mbps".
  const std::string r = unit_lookalike("100 mb/s", Dim::bandwidth);
  EXPECT_THAT(r, HasSubstr("100 millibits per second (0.0125 B/s)"));
  EXPECT_THAT(r, HasSubstr("did you mean \"100 Mb/s\"?"));
  EXPECT_THAT(unit_lookalike("5 ub", Dim::data), HasSubstr("5 microbits"));
  EXPECT_THAT(unit_lookalike("5 ub", Dim::data), ::testing::Not(HasSubstr("did you mean")));
}

TEST(UnitLookalike, GigabitsForAMemorySize) {
  const std::string m = unit_lookalike("80 Gb", Dim::data);
  EXPECT_THAT(m, HasSubstr("\"80 Gb\" is read as 80 gigabits (9.313 GiB), an eighth of 80 gigabytes"));
  EXPECT_THAT(m, HasSubstr("did you mean \"80 GB\"?"));
  EXPECT_THAT(unit_lookalike("16 Gibit", Dim::data), HasSubstr("did you mean \"16 GiB\"?"));
}

TEST(UnitLookalike, OrdinaryUnitsAreQuiet) {
  for (const char* s : {"25 MB", "80 GiB", "1 B", "8 b", "12 bytes"}) EXPECT_EQ(unit_lookalike(s, Dim::data), "") << s;
  for (const char* s : {"200 Gb/s", "400 Gbps", "900 GB/s", "1 b/s"})
    EXPECT_EQ(unit_lookalike(s, Dim::bandwidth), "") << s;
  EXPECT_EQ(unit_lookalike("5 ms", Dim::time), "");
  EXPECT_EQ(unit_lookalike("5 mJ", Dim::energy), "");
  EXPECT_EQ(unit_lookalike("garbage", Dim::data), "");
}

TEST(UnitLookalike, ResolveValueWarnsOrExplainsTheRangeError) {
  const ParamSpec free{.name = "capacity", .kind = ParamKind::quantity, .dim = Dim::data, .min = 0};
  Diagnostics d;
  const auto v = resolve_value(free, "80 Gb", "/pools/0/capacity", d);
  ASSERT_TRUE(v.has_value());
  EXPECT_DOUBLE_EQ(v->get<double>(), 10e9);  // the value is kept as read: a warning changes nothing
  EXPECT_TRUE(d.ok());
  ASSERT_EQ(d.warnings().size(), 1u);
  EXPECT_EQ(d.warnings()[0].path, "/pools/0/capacity");

  const ParamSpec bucket{.name = "bucket", .kind = ParamKind::quantity, .dim = Dim::data, .min = 1};
  Diagnostics e;
  EXPECT_FALSE(resolve_value(bucket, "25 mb", "/strategy/dp_bucket", e).has_value());
  ASSERT_EQ(e.issues().size(), 1u);
  EXPECT_THAT(e.issues()[0].message, HasSubstr("must be at least 1 B, got 0.003125 B"));
  EXPECT_THAT(e.issues()[0].message, HasSubstr("did you mean \"25 MB\"?"));
}

TEST(Diagnostics, WarningsAreKeptOnceInOrderAndAreNotErrors) {
  Diagnostics d;
  d.warn("/b", "second");
  d.warn("/a", "first");
  d.warn("/b", "second");
  EXPECT_TRUE(d.ok());
  ASSERT_EQ(d.warnings().size(), 2u);
  EXPECT_EQ(d.warnings()[0].path, "/b");
  EXPECT_EQ(d.warnings()[1].path, "/a");
  Diagnostics outer;
  outer.merge(d);
  EXPECT_EQ(outer.warnings().size(), 2u);
  EXPECT_NO_THROW(outer.throw_if_any());
}

}  // namespace
}  // namespace hcsim
