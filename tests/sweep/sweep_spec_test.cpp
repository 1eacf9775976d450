// Sweep files (sim/sweep/sweep_spec.cpp, sweep_points.cpp): axes, derived values,
// constraints, order and errors. Expected point lists are enumerated by hand.
#include "sim/sweep/sweep_spec.hpp"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "sim/core/error.hpp"

namespace hcsim::sweep {
namespace {

using ::testing::HasSubstr;

nlohmann::json base() {
  return {{"strategy", {{"tp", 1}, {"pp", 1}, {"dp", 1}}}, {"workload", {{"micro_batch", 1}}}};
}

std::string messages(const InputError& e) { return e.render(); }

TEST(SweepSpec, GridIsACartesianProductWithTheFirstAxisSlowest) {
  const auto spec = parse_sweep({{"base", base()},
                                 {"axes", {{{"path", "/strategy/tp"}, {"values", {1, 2}}},
                                           {{"path", "/workload/micro_batch"}, {"values", {4, 8, 16}}}}}},
                                "s.json");
  const auto pts = enumerate_points(spec);
  ASSERT_EQ(pts.size(), 6u);
  EXPECT_EQ(pts[0].params.dump(), R"({"/strategy/tp":1,"/workload/micro_batch":4})");
  EXPECT_EQ(pts[2].params.dump(), R"({"/strategy/tp":1,"/workload/micro_batch":16})");
  EXPECT_EQ(pts[3].params.dump(), R"({"/strategy/tp":2,"/workload/micro_batch":4})");
  EXPECT_EQ(pts[5].index, 5u);
  EXPECT_EQ(spec.param_pointers, (std::vector<std::string>{"/strategy/tp", "/workload/micro_batch"}));
  EXPECT_EQ(spec.base.file, "s.json#/base");
}

TEST(SweepSpec, ZipPairsListsAndPointsListExplicitAssignments) {
  const auto spec = parse_sweep(
      {{"base", base()},
       {"axes",
        {{{"zip", {{{"path", "/strategy/tp"}, {"values", {1, 2, 4}}}, {{"path", "/strategy/pp"}, {"values", {4, 2, 1}}}}}},
         {{"points", {{{"/strategy/dp", 1}}, {{"/strategy/dp", 2}, {"/strategy/schedule", "gpipe"}}}}}}}},
      "s.json");
  const auto pts = enumerate_points(spec);
  ASSERT_EQ(pts.size(), 6u);  // 3 zipped pairs x 2 points
  EXPECT_EQ(pts[1].params.dump(), R"({"/strategy/tp":1,"/strategy/pp":4,"/strategy/dp":2,"/strategy/schedule":"gpipe"})");
  EXPECT_EQ(pts[4].params.dump(), R"({"/strategy/tp":4,"/strategy/pp":1,"/strategy/dp":1})");
  const auto doc = point_document(spec, pts[1]);
  EXPECT_EQ(doc["strategy"]["schedule"], "gpipe");
  EXPECT_EQ(doc["workload"]["micro_batch"], 1);  // untouched base value
}

TEST(SweepSpec, RangesIncludeBothEnds) {
  const auto spec = parse_sweep({{"base", base()},
                                 {"axes", {{{"path", "/strategy/tp"}, {"range", {{"from", 1}, {"to", 16}, {"factor", 2}}}},
                                           {{"path", "/workload/train_tokens"}, {"range", {{"from", 0.5}, {"to", 1.5}, {"step", 0.5}}}}}}},
                                "s.json");
  const auto pts = enumerate_points(spec);
  ASSERT_EQ(pts.size(), 15u);  // {1,2,4,8,16} x {0.5,1,1.5}
  EXPECT_EQ(pts.back().params.dump(), R"({"/strategy/tp":16,"/workload/train_tokens":1.5})");
  EXPECT_TRUE(pts.front().params["/strategy/tp"].is_number_integer());
}

TEST(SweepSpec, DerivedValuesThenConstraintsFilterInSweepOrder) {
  // 64 devices: tp = 2^i, pp = 2^j with i, j in 0..4; dp = 64/(tp pp) >= 2 needs i + j <= 5,
  // which 19 of the 25 pairs meet (the 6 with i + j >= 6 are dropped).
  const auto spec = parse_sweep({{"base", base()},
                                 {"axes", {{{"path", "/strategy/tp"}, {"values", {1, 2, 4, 8, 16}}},
                                           {{"path", "/strategy/pp"}, {"values", {1, 2, 4, 8, 16}}}}},
                                 {"derived", {{"/strategy/dp", "64 / (/strategy/tp * /strategy/pp)"}}},
                                 {"constraints", {"/strategy/dp >= 2", "/strategy/tp * /strategy/pp * /strategy/dp == 64"}}},
                                "s.json");
  const auto pts = enumerate_points(spec);
  ASSERT_EQ(pts.size(), 19u);
  for (std::size_t i = 0; i < pts.size(); ++i) {
    EXPECT_EQ(pts[i].index, i);
    EXPECT_GE(pts[i].params["/strategy/dp"].get<int>(), 2);
  }
  EXPECT_EQ(pts.back().params.dump(), R"({"/strategy/tp":16,"/strategy/pp":2,"/strategy/dp":2})");
  EXPECT_EQ(spec.param_pointers.back(), "/strategy/dp");
}

TEST(SweepSpec, DerivedListIsEvaluatedInOrder) {
  const auto spec = parse_sweep({{"base", base()},
                                 {"axes", {{{"path", "/strategy/tp"}, {"values", {2}}}}},
                                 {"derived", {{{"path", "/strategy/pp"}, {"expr", "/strategy/tp * 2"}},
                                              {{"path", "/strategy/dp"}, {"expr", "16 / (/strategy/tp * /strategy/pp)"}}}}},
                                "s.json");
  EXPECT_EQ(enumerate_points(spec).at(0).params.dump(), R"({"/strategy/tp":2,"/strategy/pp":4,"/strategy/dp":2})");
}

TEST(SweepSpec, EveryProblemIsReportedWithItsPath) {
  try {
    parse_sweep({{"base", base()},
                 {"axes", {{{"path", "strategy/tp"}, {"values", {1}}},
                           {{"zip", {{{"path", "/a"}, {"values", {1, 2}}}, {{"path", "/b"}, {"values", {1}}}}}},
                           {{"path", "/c"}, {"values", nlohmann::json::array()}}}},
                 {"constraints", {"/a + "}},
                 {"metrics", {"step_time_s"}},
                 {"colour", "red"}},
                "s.json");
    FAIL() << "no error";
  } catch (const InputError& e) {
    const std::string m = messages(e);
    EXPECT_THAT(m, HasSubstr("s.json:/colour: unknown key \"colour\""));
    EXPECT_THAT(m, HasSubstr("s.json:/axes/0/path: expected a JSON pointer"));
    EXPECT_THAT(m, HasSubstr("s.json:/axes/1/zip/1: zip members need lists of the same length: /a has 2, /b has 1"));
    EXPECT_THAT(m, HasSubstr("s.json:/axes/2/values: expected a non-empty list"));
    EXPECT_THAT(m, HasSubstr("s.json:/constraints/0: expected a value, found the end"));
    EXPECT_THAT(m, HasSubstr("s.json:/metrics/0: expected a JSON pointer into the report"));
  }
}

TEST(SweepSpec, AConstraintOnAnUnsetFieldIsAnInputError) {
  const auto spec = parse_sweep({{"base", base()},
                                 {"axes", {{{"path", "/strategy/tp"}, {"values", {1}}}}},
                                 {"constraints", {"/strategy/zero == 0"}}},
                                "s.json");
  try {
    enumerate_points(spec);
    FAIL() << "no error";
  } catch (const InputError& e) {
    EXPECT_THAT(messages(e), HasSubstr("s.json:/constraints/0: /strategy/zero is not set in the scenario (at the point "
                                       "/strategy/tp = 1)"));
  }
}

TEST(SweepSpec, MetricColumnsAreNamedFromTheirPointers) {
  const auto m = parse_metrics({"/step_time_s", {{"name", "jpt"}, {"pointer", "/energy/per_token_j"}}, "/energy/it_j"},
                               "/metrics", "s.json");
  ASSERT_EQ(m.size(), 3u);
  EXPECT_EQ(m[0].name, "step_time_s");
  EXPECT_EQ(m[1].name, "jpt");
  EXPECT_EQ(m[2].name, "energy.it_j");
  EXPECT_EQ(default_metrics().front().pointer, "/step_time_s");
}

}  // namespace
}  // namespace hcsim::sweep
