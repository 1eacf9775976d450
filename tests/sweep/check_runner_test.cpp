// Expectations (sim/sweep/check_spec.cpp, check_runner.cpp) judged against hand-made
// reports, so that each boundary is exact arithmetic and no simulation runs.
#include "sim/sweep/check_runner.hpp"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "sim/core/error.hpp"

namespace hcsim::sweep {
namespace {

using ::testing::HasSubstr;

const nlohmann::json kScenario = {{"strategy", {{"tp", 1}}}};

CheckSpec spec_with(const nlohmann::json& expectations) {
  return parse_check({{"scenarios",
                       {{"a", kScenario},
                        {"b", {{"base", "a"}, {"set", {{"/strategy/tp", 2}}}}},
                        {"c", {{"base", "a"}, {"set", {{"/strategy/tp", 4}}}}}}},
                      {"expectations", expectations}},
                     "e.json");
}

nlohmann::json report(double t, double e) { return {{"step_time_s", t}, {"energy", {{"per_token_j", e}}}}; }

CheckOutcome judge_one(const CheckSpec& s, const std::vector<nlohmann::json>& reports) {
  return judge(s.expectations.at(0), reports, std::vector<std::string>(reports.size()));
}

TEST(CheckSpec, VariantsAreDeduplicatedAndLabelled) {
  const auto s = spec_with({{{"name", "x"}, {"ranking", {"a", "b", "c", {{"base", "a"}, {"set", nlohmann::json::object()}}}}}});
  ASSERT_EQ(s.scenarios.size(), 3u);  // the last ranking entry is "a" again
  EXPECT_EQ(s.expectations[0].scenarios, (std::vector<std::size_t>{0, 1, 2, 0}));
  EXPECT_EQ(s.expectations[0].labels[1], "b");
  EXPECT_EQ(s.scenarios[2].doc["strategy"]["tp"], 4);
}

TEST(CheckRunner, ValueWithinARelativeToleranceBoundaryIncluded) {
  // 0.5 +- 2 % is [0.49, 0.51].
  const auto s = spec_with({{{"scenario", "a"}, {"metric", "/step_time_s"}, {"value", 0.5}, {"tolerance", "2 %"}}});
  EXPECT_EQ(judge_one(s, {report(0.509, 1)}).status, "pass");
  const auto fail = judge_one(s, {report(0.52, 1), {}, {}});
  EXPECT_EQ(fail.status, "fail");
  EXPECT_EQ(fail.message, "a: expected /step_time_s = 0.5 ± 0.01 (0.49 .. 0.51); got 0.52, 4.00 % above (0.01 higher "
                          "than allowed)");
}

TEST(CheckRunner, FasterByAtLeastAFraction) {
  // a = 0.9, b = 1.0: a is 10 % faster.
  const auto ok = spec_with({{{"faster", "a"}, {"than", "b"}, {"by_at_least", "10 %"}}});
  EXPECT_EQ(judge_one(ok, {report(0.9, 1), report(1.0, 1)}).status, "pass");
  const auto hard = spec_with({{{"faster", "a"}, {"than", "b"}, {"by_at_least", 0.15}}});
  const auto o = judge_one(hard, {report(0.9, 1), report(1.0, 1)});
  EXPECT_EQ(o.status, "fail");
  EXPECT_THAT(o.message, HasSubstr("expected a to beat b in /step_time_s (lower is better) by at least 15.00 %; got a = "
                                   "0.9, b = 1: better by 10.00 %, short of it by 5.00 points"));
  // Without a margin, equal is not faster.
  const auto plain = spec_with({{{"faster", "a"}, {"than", "b"}}});
  EXPECT_EQ(judge_one(plain, {report(1.0, 1), report(1.0, 1)}).status, "fail");
}

TEST(CheckRunner, CheaperUsesEnergyPerTokenAndBetterAnyMetric) {
  // Scenarios are numbered in the order the file names them: b is 0, a is 1.
  const auto s = spec_with({{{"cheaper", "b"}, {"than", "a"}}});
  EXPECT_EQ(judge_one(s, {report(1, 1.0), report(1, 2.0)}).status, "pass");
  EXPECT_EQ(judge_one(s, {report(1, 2.0), report(1, 1.0)}).status, "fail");
  const auto hi = spec_with({{{"better", "a"}, {"than", "b"}, {"metric", "/mfu"}, {"higher_is_better", true}}});
  EXPECT_EQ(judge_one(hi, {{{"mfu", 0.5}}, {{"mfu", 0.4}}}).status, "pass");
  EXPECT_EQ(judge_one(hi, {{{"mfu", 0.4}}, {{"mfu", 0.5}}}).status, "fail");
}

TEST(CheckRunner, RankingShowsTheOrderItGot) {
  const auto s = spec_with({{{"ranking", {"a", "b", "c"}}}});
  EXPECT_EQ(judge_one(s, {report(1, 0), report(2, 0), report(3, 0)}).status, "pass");
  const auto o = judge_one(s, {report(1, 0), report(3, 0), report(2, 0)});
  EXPECT_EQ(o.status, "fail");
  EXPECT_EQ(o.message, "expected by /step_time_s (lowest first): a (1) < b (3) < c (2); got a (1) < c (2) < b (3)");
}

TEST(CheckRunner, MissingMetricOrUnsimulatedScenarioIsAnError) {
  const auto s = spec_with({{{"scenario", "a"}, {"metric", "/nope"}, {"at_most", 1}}});
  const auto o = judge_one(s, {report(1, 1)});
  EXPECT_EQ(o.status, "error");
  EXPECT_EQ(o.message, "the report of a has no number at /nope");
  const auto why = judge(s.expectations[0], {nullptr}, {"/strategy: does not fit in memory"});
  EXPECT_EQ(why.message, "scenario a could not be simulated: /strategy: does not fit in memory");
  CheckResult r;
  r.errors = 1;
  r.failed = 3;
  EXPECT_EQ(r.exit_code(), 2);
  r.errors = 0;
  EXPECT_EQ(r.exit_code(), 1);
}

TEST(CheckSpec, BadExpectationsAreReportedWithPaths) {
  try {
    spec_with({{{"faster", "a"}},
               {{"scenario", "a"}, {"value", 1}},
               {{"scenario", "zz/missing.json"}, {"at_most", 1}},
               {{"ranking", {"a"}}},
               {{"frobnicate", 1}}});
    FAIL() << "no error";
  } catch (const InputError& e) {
    const std::string m = e.render();
    EXPECT_THAT(m, HasSubstr("e.json:/expectations/0: \"faster\" needs \"than\""));
    EXPECT_THAT(m, HasSubstr("e.json:/expectations/1: \"value\" needs \"tolerance\""));
    EXPECT_THAT(m, HasSubstr("e.json:/expectations/2/scenario: scenario zz/missing.json: cannot open the file"));
    EXPECT_THAT(m, HasSubstr("e.json:/expectations/3/ranking: expected a list of two or more scenarios"));
    EXPECT_THAT(m, HasSubstr("e.json:/expectations/4: expected one of \"scenario\""));
  }
}

// A variant's "set" pointer that names no scenario field is refused before anything runs,
// with the nearest valid pointer, as a sweep axis is (sim/sweep/sweep_checks.hpp); reported
// once however many expectations use the variant.
TEST(CheckSpec, MisspeltSetPointerIsAnErrorWithTheNearestPointer) {
  const nlohmann::json doc = {
      {"scenarios", {{"a", kScenario}, {"b", {{"base", "a"}, {"set", {{"/strategy/schedul", "gpipe"}}}}}}},
      {"expectations", {{{"name", "x"}, {"faster", "b"}, {"than", "a"}}, {{"name", "y"}, {"cheaper", "b"}, {"than", "a"}}}}};
  try {
    (void)parse_check(doc, "e.json");
    FAIL() << "no error";
  } catch (const InputError& e) {
    ASSERT_EQ(e.issues().size(), 1u) << e.render();
    EXPECT_EQ(e.issues()[0].path, "/scenarios/b/set/~1strategy~1schedul");
    EXPECT_THAT(e.issues()[0].message, HasSubstr("did you mean \"/strategy/schedule\"?"));
  }
}

}  // namespace
}  // namespace hcsim::sweep
