// The preset-range warnings (sim/core/plausible.hpp). The presets here are made up, two per
// type, so the expected range is read off the test itself: [lo, hi] over the presets, a
// value reported below lo/100 or above 100*hi (the rule stated in docs/robustness.md).
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "sim/core/plausible.hpp"

namespace hcsim {
namespace {

using ::testing::HasSubstr;
using json = nlohmann::json;

const ParamTable& plausible_table() {
  static const ParamTable t{
      {.name = "bandwidth", .kind = ParamKind::quantity, .dim = Dim::bandwidth, .min = 0},
      {.name = "latency", .kind = ParamKind::quantity, .dim = Dim::time, .def = "1 us", .min = 0},
      {.name = "efficiency", .kind = ParamKind::quantity, .dim = Dim::ratio, .def = 1.0},
  };
  return t;
}

PresetLibrary library() {
  PresetLibrary lib("test link");
  lib.add({.name = "slow", .type = "wire", .values = {{"bandwidth", "10 GB/s"}, {"latency", "2 us"}}, .source = "", .help = ""});
  lib.add({.name = "fast", .type = "wire", .values = {{"bandwidth", "100 GB/s"}}, .source = "", .help = ""});  // latency: the default, 1 us
  lib.add({.name = "other", .type = "fibre", .values = {{"bandwidth", "1 EB/s"}}, .source = "", .help = ""});  // another type: not counted
  return lib;
}

std::vector<Issue> warnings_for(const json& given) {
  Diagnostics d;
  warn_implausible(plausible_table(), library(), "wire", "wire link", given, "/links/0", d);
  EXPECT_TRUE(d.ok());
  return d.warnings();
}

TEST(PresetRange, SpansThePresetsOfTheTypeWithDefaultsFilled) {
  const auto bw = preset_range(plausible_table(), library(), "wire", "bandwidth");
  ASSERT_TRUE(bw.has_value());
  EXPECT_DOUBLE_EQ(bw->lo, 10e9);
  EXPECT_EQ(bw->lo_preset, "slow");
  EXPECT_DOUBLE_EQ(bw->hi, 100e9);
  EXPECT_EQ(bw->hi_preset, "fast");
  const auto lat = preset_range(plausible_table(), library(), "wire", "latency");
  ASSERT_TRUE(lat.has_value());
  EXPECT_DOUBLE_EQ(lat->lo, 1e-6);
  EXPECT_DOUBLE_EQ(lat->hi, 2e-6);
  EXPECT_FALSE(preset_range(plausible_table(), library(), "carrier-pigeon", "bandwidth").has_value());
}

TEST(PresetRange, GrowsWithTheRegistry) {
  PresetLibrary lib = library();
  EXPECT_EQ(warnings_for({{"bandwidth", "20 TB/s"}}).size(), 1u);  // over 100 x 100 GB/s
  lib.add({.name = "faster", .type = "wire", .values = {{"bandwidth", "1 TB/s"}}, .source = "", .help = ""});
  Diagnostics d;
  warn_implausible(plausible_table(), lib, "wire", "wire link", {{"bandwidth", "20 TB/s"}}, "/links/0", d);
  EXPECT_TRUE(d.warnings().empty());
}

TEST(WarnImplausible, PlainNumberSaysItsUnitAndTheLikelyOne) {
  const auto w = warnings_for({{"bandwidth", 600}});
  ASSERT_EQ(w.size(), 1u);
  EXPECT_EQ(w[0].path, "/links/0/bandwidth");
  EXPECT_THAT(w[0].message, HasSubstr("600 is read as 600 B/s (a plain number is in SI units)"));
  EXPECT_THAT(w[0].message, HasSubstr("under 1/100 of the smallest of the shipped wire link presets' bandwidth "
                                      "(10 GB/s in slow to 100 GB/s in fast)"));
  EXPECT_THAT(w[0].message, HasSubstr("did you mean \"600 GB/s\"?"));
  // A latency of 5 (seconds) meant in microseconds.
  const auto l = warnings_for({{"latency", 5}});
  ASSERT_EQ(l.size(), 1u);
  EXPECT_THAT(l[0].message, HasSubstr("over 100 times the largest"));
  EXPECT_THAT(l[0].message, HasSubstr("did you mean \"5 us\"?"));
}

TEST(WarnImplausible, TheRuleIsAFactorOf100BeyondThePresets) {
  EXPECT_TRUE(warnings_for({{"bandwidth", "100 MB/s"}}).empty());   // 10 GB/s / 100 exactly
  EXPECT_EQ(warnings_for({{"bandwidth", "99 MB/s"}}).size(), 1u);
  EXPECT_TRUE(warnings_for({{"bandwidth", "10 TB/s"}}).empty());    // 100 GB/s * 100 exactly
  EXPECT_EQ(warnings_for({{"bandwidth", "10.1 TB/s"}}).size(), 1u);
  EXPECT_TRUE(warnings_for({{"bandwidth", "50 GB/s"}, {"latency", "3 us"}}).empty());
}

TEST(WarnImplausible, UnitGivenNoHintZeroAndRatiosNotChecked) {
  const auto w = warnings_for({{"bandwidth", "1 kB/s"}});
  ASSERT_EQ(w.size(), 1u);
  EXPECT_THAT(w[0].message, HasSubstr("\"1 kB/s\" is 1 kB/s"));
  EXPECT_THAT(w[0].message, ::testing::Not(HasSubstr("did you mean")));
  EXPECT_TRUE(warnings_for({{"latency", 0}}).empty());         // an ideal link
  EXPECT_TRUE(warnings_for({{"efficiency", 1e-9}}).empty());   // ratios have no preset range
  EXPECT_TRUE(warnings_for({{"bandwidth", "fast"}}).empty());  // an error, reported by the resolver
}

}  // namespace
}  // namespace hcsim
