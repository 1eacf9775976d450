// Candidate layouts of a search (sim/sweep/search_spec.cpp): the budget, the device counts
// and the equivalent duplicates that are left out; counts enumerated by hand.
#include "sim/sweep/search_spec.hpp"

#include <set>

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
    EXPECT_EQ(k.params()["/cluster/pools/0/count"].get<int>(), k.devices);
    if (k.params()["/strategy/schedule"] == "interleaved-1f1b")
      EXPECT_EQ(k.params()["/strategy/interleave"], 2);
    else
      EXPECT_EQ(k.params()["/strategy/interleave"], 1);
  }
  EXPECT_EQ(
      c.front().params().dump(),
      R"({"/strategy/tp":1,"/strategy/pp":1,"/strategy/dp":1,"/strategy/ep":1,"/strategy/etp":1,)"
      R"("/workload/micro_batch":1,)"
      R"("/strategy/schedule":"1f1b",)"
      R"("/strategy/interleave":1,"/strategy/recompute":"none","/strategy/zero":0,"/strategy/sequence_parallel":false,)"
      R"("/cluster/pools/0/count":1})");
}

TEST(SearchSpec, EveryRecomputationModeOfTheScenarioIsASearchChoice) {
  // The space's recompute list takes the scenario's choices (scenarios/sections.cpp),
  // selective-op included, and writes each candidate's as the scenario spells it.
  const auto s = parse_search({{"base", base(1)},
                               {"space",
                                {{"tp", {1}},
                                 {"pp", {1}},
                                 {"dp", {1}},
                                 {"micro_batch", {1}},
                                 {"recompute", {"none", "selective", "full", "selective-op"}}}}},
                              "s.json");
  std::set<std::string> written;
  for (const auto& k : enumerate_candidates(s)) written.insert(k.params()["/strategy/recompute"].get<std::string>());
  EXPECT_EQ(written, (std::set<std::string>{"none", "selective", "full", "selective-op"}));
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

// Expert parallelism: an MoE base (the tiny MoE, 8 experts) tries, per (tp, pp, dp), every ep
// that divides both the 8 experts and the stage's dp * tp devices; a dense base ep = 1; a
// space's "ep" list is taken as it is (the layout rules then refuse what does not divide).
TEST(SearchSpec, ExpertParallelismDefaultsToWhatTheExpertsAndTheStageAllow) {
  const std::string moe = std::string(HCSIM_SOURCE_DIR) + "/scenarios/sweeps/tiny-moe.json";
  const nlohmann::json space = {{"tp", {1, 2}},
                                {"pp", {1, 2}},
                                {"micro_batch", {1}},
                                {"schedule", {"1f1b"}},
                                {"recompute", {"none"}},
                                {"zero", {0}},
                                {"sequence_parallel", {false, true}}};
  const auto s = parse_search({{"base", moe}, {"max_devices", 16}, {"space", space}}, "s.json");
  EXPECT_EQ(s.experts, 8);
  EXPECT_TRUE(s.space.ep.empty());
  // Per (tp, pp, dp) with tp * pp * dp <= 16 (dp in 1, 2, 4, 8, 16), the divisors of
  // gcd(8, tp * dp): stage 1 -> {1}, 2 -> {1, 2}, 4 -> {1, 2, 4}, 8 and 16 -> {1, 2, 4, 8}.
  //   tp 1, pp 1: dp 1..16 -> stages 1, 2, 4, 8, 16: 1 + 2 + 3 + 4 + 4 = 14
  //   tp 1, pp 2: dp 1..8  -> stages 1, 2, 4, 8:     1 + 2 + 3 + 4     = 10
  //   tp 2, pp 1: dp 1..8  -> stages 2, 4, 8, 16:    2 + 3 + 4 + 4     = 13, x 2 (sp no, yes)
  //   tp 2, pp 2: dp 1..4  -> stages 2, 4, 8:        2 + 3 + 4         = 9, x 2
  // 24 + 44 = 68.
  const auto c = enumerate_candidates(s);
  EXPECT_EQ(c.size(), 68u);
  for (const auto& k : c) {
    const int ep = k.params()["/strategy/ep"].get<int>();
    const int stage = k.params()["/strategy/tp"].get<int>() * k.params()["/strategy/dp"].get<int>();
    EXPECT_EQ(8 % ep, 0);
    EXPECT_EQ(stage % ep, 0);
  }
  // The space's list as given: 3 is tried, and refused later by the layout rules. 16 (tp,
  // pp, dp) triples: 9 with tp 1, 7 with tp 2 (x 2 sp): 23 per ep.
  nlohmann::json listed = space;
  listed["ep"] = {1, 3};
  EXPECT_EQ(
      enumerate_candidates(parse_search({{"base", moe}, {"max_devices", 16}, {"space", listed}}, "s.json")).size(),
      2 * 23u);
  // ZeRO where a device's experts are held by another device too (dp * tp / ep > 1), even at
  // dp 1: tp 2, pp 1, dp 1 at ep 1 shards the experts' state over the two tensor ranks.
  listed = space;
  listed["zero"] = {0, 1};
  listed["tp"] = {2};
  listed["pp"] = {1};
  listed["dp"] = {1};
  listed["sequence_parallel"] = {true};
  const auto z = enumerate_candidates(parse_search({{"base", moe}, {"space", listed}}, "s.json"));
  ASSERT_EQ(z.size(), 3u);  // ep 1 with zero 0 and 1; ep 2 (one device per expert set) zero 0
  EXPECT_EQ(z[1].params()["/strategy/zero"], 1);
  EXPECT_EQ(z[2].params()["/strategy/ep"], 2);
  // A dense base: ep 1 only.
  const auto dense = parse_search(
      {{"base", std::string(HCSIM_SOURCE_DIR) + "/scenarios/sweeps/tiny-gpt.json"}, {"space", space}}, "s.json");
  EXPECT_EQ(dense.experts, 0);
  for (const auto& k : enumerate_candidates(dense)) EXPECT_EQ(k.params()["/strategy/ep"], 1);
  // A base that does not parse keeps its own ep.
  nlohmann::json b = base(8);
  b["strategy"] = {{"ep", 4}};
  const auto unknown = parse_search({{"base", b}, {"space", space}}, "s.json");
  EXPECT_EQ(unknown.experts, -1);
  for (const auto& k : enumerate_candidates(unknown)) EXPECT_EQ(k.params()["/strategy/ep"], 4);
}

// Expert tensor parallelism: the space's "etp" list (default: the base's etp). A layout whose
// etp the layout rules refuse for it (ep * etp not dividing the stage) is no candidate; one
// whose ep they refuse stays (the parser's message then says why).
TEST(SearchSpec, ExpertTensorParallelismSkipsTheLayoutsItDoesNotFit) {
  const std::string moe = std::string(HCSIM_SOURCE_DIR) + "/scenarios/sweeps/tiny-moe.json";
  const nlohmann::json space = {
      {"tp", {1}},   {"pp", {1}},    {"micro_batch", {1}}, {"schedule", {"1f1b"}}, {"recompute", {"none"}},
      {"zero", {0}}, {"etp", {1, 2}}};
  const auto s = parse_search({{"base", moe}, {"max_devices", 8}, {"space", space}}, "s.json");
  EXPECT_EQ(s.space.etp, (std::vector<int>{1, 2}));
  // dp 1, 2, 4, 8 (stages of 1 to 8 devices), the default ep axis per etp:
  //   etp 1: the ep dividing the 8 experts and the stage:  1 + 2 + 3 + 4 = 10
  //   etp 2: those with 2 ep dividing the stage (none on 1): 0 + 1 + 2 + 3 = 6
  const auto c = enumerate_candidates(s);
  ASSERT_EQ(c.size(), 16u);
  std::size_t etp2 = 0;
  for (const auto& k : c) {
    const int ep = k.params()["/strategy/ep"].get<int>(), etp = k.params()["/strategy/etp"].get<int>();
    EXPECT_EQ(k.params()["/strategy/dp"].get<int>() % (ep * etp), 0) << k.params().dump();
    etp2 += etp == 2 ? 1 : 0;
  }
  EXPECT_EQ(etp2, 6u);
  // A listed ep: at dp 2 and etp 2, ep 2 (2 * 2 does not divide the stage) is skipped, ep 3
  // (not dividing the experts) and ep 4 (not dividing the stage) stay for the parser.
  nlohmann::json listed = space;
  listed["dp"] = {2};
  listed["ep"] = {1, 2, 3, 4};
  listed["etp"] = {2};
  std::vector<int> eps;
  for (const auto& k : enumerate_candidates(parse_search({{"base", moe}, {"space", listed}}, "s.json")))
    eps.push_back(k.params()["/strategy/ep"].get<int>());
  EXPECT_EQ(eps, (std::vector<int>{1, 3, 4}));
  // Without "etp", every candidate has the base's (1 for the tiny MoE).
  nlohmann::json plain = space;
  plain.erase("etp");
  for (const auto& k :
       enumerate_candidates(parse_search({{"base", moe}, {"max_devices", 8}, {"space", plain}}, "s.json")))
    EXPECT_EQ(k.params()["/strategy/etp"], 1);
  // A base that does not parse keeps every listed etp (the parser refuses each row then).
  nlohmann::json b = base(4);
  b["strategy"] = {{"etp", 2}};
  const auto unknown = parse_search({{"base", b}, {"space", {{"etp", {2, 4}}}}}, "s.json");
  EXPECT_EQ(unknown.base_etp, 2);
  std::set<int> etps;
  for (const auto& k : enumerate_candidates(unknown)) etps.insert(k.params()["/strategy/etp"].get<int>());
  EXPECT_EQ(etps, (std::set<int>{2, 4}));
}

// An etp the layout rules refuse whatever the layout is an error at its place in the space,
// with the parser's message for strategy.etp (workloads/layout.cpp): etp > 1 on a dense
// model, etp not dividing the experts' MLP (the tiny MoE's 1792 = 2^8 * 7).
TEST(SearchSpec, AnEtpNoLayoutAllowsIsRefusedAtItsPath) {
  const std::string dir = std::string(HCSIM_SOURCE_DIR) + "/scenarios/sweeps/";
  const auto refused = [](const nlohmann::json& doc) {
    try {
      parse_search(doc, "s.json");
    } catch (const InputError& e) { return e.render(); }
    return std::string("no error");
  };
  const std::string dense = refused({{"base", dir + "tiny-gpt.json"}, {"space", {{"etp", {1, 2}}}}});
  EXPECT_THAT(dense,
              ::testing::HasSubstr(R"(s.json:/space/etp/1: etp = 2 needs an MoE model ("experts" > 0 in the model))"));
  EXPECT_THAT(dense, ::testing::Not(::testing::HasSubstr("/space/etp/0")));
  EXPECT_THAT(refused({{"base", dir + "tiny-moe.json"}, {"space", {{"etp", {2, 3}}}}}),
              ::testing::HasSubstr("s.json:/space/etp/1: the experts' MLP size 1792 is not divisible by etp = 3"));
}

TEST(SearchSpec, ProblemsAreReportedWithPaths) {
  try {
    parse_search(
        {{"base", {{"cluster", {{"pools", nlohmann::json::array()}}}}},
         {"objective", "speed"},
         {"max_power_w", "lots"},
         {"space",
          {{"tp", {0.5}}, {"ep", {2, -1}}, {"etp", {0, 1.5, "2"}}, {"schedule", {"zigzag"}}, {"colour", {1}}}}},
        "s.json");
    FAIL() << "no error";
  } catch (const InputError& e) {
    const std::string m = e.render();
    EXPECT_THAT(m, ::testing::HasSubstr("s.json:/base/cluster/pools: the base scenario needs at least one pool of devices"));
    EXPECT_THAT(m, ::testing::HasSubstr("s.json:/objective: expected one of: tokens_per_s, energy_per_token, step_time"));
    EXPECT_THAT(m, ::testing::HasSubstr("s.json:/max_power_w: expected a power"));
    EXPECT_THAT(m, ::testing::HasSubstr("s.json:/space/tp/0: expected a non-negative integer"));
    EXPECT_THAT(m, ::testing::HasSubstr("s.json:/space/ep/1: expected a non-negative integer"));
    // etp is at least 1, as strategy.etp.
    EXPECT_THAT(m, ::testing::HasSubstr("s.json:/space/etp/0: expected a positive integer"));
    EXPECT_THAT(m, ::testing::HasSubstr("s.json:/space/etp/1: expected a positive integer"));
    EXPECT_THAT(m, ::testing::HasSubstr("s.json:/space/etp/2: expected a positive integer"));
    EXPECT_THAT(m, ::testing::HasSubstr("s.json:/space/schedule/0: expected a listed choice; valid ones are: gpipe, 1f1b, interleaved-1f1b"));
    EXPECT_THAT(m, ::testing::HasSubstr("s.json:/space/colour: unknown key"));
  }
}

// A base that asks for SM contention is refused at its path: the screen is analytical mode,
// which has no closed form of it (docs/models.md, "SM contention").
TEST(SearchSpec, ABaseWithSmContentionIsRefused) {
  nlohmann::json b = base(8);
  b["simulation"] = {{"sm_contention", true}};
  try {
    parse_search({{"base", b}}, "s.json");
    FAIL() << "no error";
  } catch (const InputError& e) {
    EXPECT_THAT(e.render(), ::testing::HasSubstr("s.json:/base/simulation/sm_contention: the search screens in "
                                                 "analytical mode"));
  }
  b["simulation"]["sm_contention"] = false;
  EXPECT_NO_THROW(parse_search({{"base", b}}, "s.json"));
}

}  // namespace
}  // namespace hcsim::sweep
