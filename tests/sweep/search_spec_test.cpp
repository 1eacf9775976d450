// Candidate layouts of a search (sim/sweep/search_spec.cpp): the budget, the device counts
// and the equivalent duplicates that are left out; counts enumerated by hand.
#include "sim/sweep/search_spec.hpp"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "sim/core/error.hpp"

namespace hcsim::sweep {
namespace {

nlohmann::json base(int count) { return {{"cluster", {{"pools", {{{"preset", "x"}, {"count", count}}}}}}}; }

TEST(SearchSpec, TheBudgetAndDuplicatesBoundTheCandidates) {
  // tp, pp, dp in {1, 2} within 4 devices: (tp, pp, dp) with product <= 4: all but (2, 2, 2),
  // i.e. 7 triples. Per triple, one micro-batch and recompute; schedules 1f1b and
  // interleaved (v = 2) where pp = 2; zero {0, 1} only where dp = 2; sp {no, yes} only where tp = 2.
  const auto s = parse_search({{"base", base(4)},
                               {"space",
                                {{"tp", {1, 2}}, {"pp", {1, 2}}, {"dp", {1, 2}}, {"micro_batch", {1}},
                                 {"schedule", {"1f1b", "interleaved-1f1b"}}, {"interleave", {2}},
                                 {"recompute", {"none"}}, {"zero", {0, 1}}, {"sequence_parallel", {false, true}}}}},
                              "s.json");
  EXPECT_EQ(s.max_devices, 4);
  const auto c = enumerate_candidates(s);
  // Per triple: schedules (1 if pp = 1, else 2) x zero (2 if dp = 2) x sp (2 if tp = 2).
  // (1,1,1) 1, (1,1,2) 2, (1,2,1) 2, (1,2,2) 4, (2,1,1) 2, (2,1,2) 4, (2,2,1) 4: 19.
  EXPECT_EQ(c.size(), 19u);
  for (const auto& k : c) {
    EXPECT_LE(k.devices, 4);
    EXPECT_EQ(k.params["/cluster/pools/0/count"].get<int>(), k.devices);
    if (k.params["/strategy/schedule"] == "interleaved-1f1b") EXPECT_EQ(k.params["/strategy/interleave"], 2);
    else EXPECT_EQ(k.params["/strategy/interleave"], 1);
  }
  EXPECT_EQ(c.front().params.dump(),
            R"({"/strategy/tp":1,"/strategy/pp":1,"/strategy/dp":1,"/workload/micro_batch":1,"/strategy/schedule":"1f1b",)"
            R"("/strategy/interleave":1,"/strategy/recompute":"none","/strategy/zero":0,"/strategy/sequence_parallel":false,)"
            R"("/cluster/pools/0/count":1})");
}

TEST(SearchSpec, DeviceCountsFilterAndDpDefaultsToPowersOfTwo) {
  const auto s = parse_search({{"base", base(8)},
                               {"device_counts", {8}},
                               {"space",
                                {{"tp", {1, 2, 4, 8}}, {"pp", {1}}, {"micro_batch", {1}}, {"recompute", {"none"}},
                                 {"zero", {0}}, {"sequence_parallel", {false}}}}},
                              "s.json");
  EXPECT_EQ(s.space.dp, (std::vector<int>{1, 2, 4, 8}));
  const auto c = enumerate_candidates(s);
  ASSERT_EQ(c.size(), 4u);  // tp x dp = 8 with pp = 1: (1,8) (2,4) (4,2) (8,1)
  for (const auto& k : c) EXPECT_EQ(k.devices, 8);
}

TEST(SearchSpec, ProblemsAreReportedWithPaths) {
  try {
    parse_search({{"base", {{"cluster", {{"pools", nlohmann::json::array()}}}}},
                  {"objective", "speed"},
                  {"max_power_w", "lots"},
                  {"space", {{"tp", {0.5}}, {"schedule", {"zigzag"}}, {"colour", {1}}}}},
                 "s.json");
    FAIL() << "no error";
  } catch (const InputError& e) {
    const std::string m = e.render();
    EXPECT_THAT(m, ::testing::HasSubstr("s.json:/base/cluster/pools: the base scenario needs at least one pool of devices"));
    EXPECT_THAT(m, ::testing::HasSubstr("s.json:/objective: expected one of: tokens_per_s, energy_per_token, step_time"));
    EXPECT_THAT(m, ::testing::HasSubstr("s.json:/max_power_w: expected a power"));
    EXPECT_THAT(m, ::testing::HasSubstr("s.json:/space/tp/0: expected a non-negative integer"));
    EXPECT_THAT(m, ::testing::HasSubstr("s.json:/space/schedule/0: expected a listed choice; valid ones are: gpipe, 1f1b, interleaved-1f1b"));
    EXPECT_THAT(m, ::testing::HasSubstr("s.json:/space/colour: unknown key"));
  }
}

}  // namespace
}  // namespace hcsim::sweep
