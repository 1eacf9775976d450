// Regression tests for parse_scenario on bad input (docs/robustness.md, "Bugs found and
// fixed"): each input once crashed, overflowed or misreported. The expectation in every
// case is the input-error contract: an InputError whose issues name the offending JSON
// pointer -- never an assertion, another exception, or an extra message caused by the first.
#include <string>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "scenarios/scenario.hpp"
#include "../support/quickstart_doc.hpp"

namespace hcsim {
namespace {

using json = nlohmann::json;

json quickstart() { return test::quickstart_doc(); }

// The issues of the InputError parse_scenario throws; fails the test if it does not throw one.
std::vector<Issue> issues_of(const json& doc) {
  try {
    (void)parse_scenario(doc, "t.json");
  } catch (const InputError& e) {
    return e.issues();
  }
  ADD_FAILURE() << "accepted: " << doc.dump();
  return {};
}

TEST(ParseScenario, QuickstartIsValid) { EXPECT_NO_THROW((void)parse_scenario(quickstart(), "t.json")); }

// A section holding one valid and one invalid key once aborted on HCSIM_ASSERT when its
// typed fields were read (the invalid key is absent from the resolved values).
TEST(ParseScenario, PartlyInvalidSectionIsReportedNotAborted) {
  struct Case { const char* ptr; json value; const char* path; };
  const Case cases[] = {
      {"/strategy/tp", 0, "/strategy/tp"},
      {"/strategy/schedule", "zero-bubble", "/strategy/schedule"},
      {"/workload/micro_batch", 0, "/workload/micro_batch"},
      {"/workload/precision", "int4", "/workload/precision"},
      {"/simulation", {{"mode", "event"}, {"max_tasks", 0}}, "/simulation/max_tasks"},
      {"/outputs", {{"format", "json"}, {"trace", 1}}, "/outputs/trace"},
  };
  for (const auto& c : cases) {
    json doc = quickstart();
    doc[json::json_pointer(c.ptr)] = c.value;
    const auto is = issues_of(doc);
    ASSERT_EQ(is.size(), 1u) << c.ptr;
    EXPECT_EQ(is[0].path, c.path);
  }
}

TEST(ParseScenario, MissingSectionIsOneMessage) {
  json doc = quickstart();
  doc.erase("cluster");
  const auto is = issues_of(doc);
  ASSERT_EQ(is.size(), 1u);
  EXPECT_EQ(is[0].path, "/cluster");
  EXPECT_EQ(is[0].message, "required key is missing");
}

TEST(ParseScenario, MistypedPresetIsOneMessage) {
  json doc = quickstart();
  doc["cluster"]["pools"][0]["preset"] = 100;
  const auto is = issues_of(doc);
  ASSERT_EQ(is.size(), 1u);
  EXPECT_EQ(is[0].path, "/cluster/pools/0/preset");
}

// 2,200 pools of 10^6 devices once overflowed the int device index.
TEST(ParseScenario, DeviceTotalIsBounded) {
  json doc = quickstart();
  doc["cluster"]["pools"] = json::array();
  for (int i = 0; i < 2200; ++i)
    doc["cluster"]["pools"].push_back({{"name", "p" + std::to_string(i)}, {"preset", "nvidia-a100-80gb-sxm"},
                                       {"count", 1000000}});
  const auto is = issues_of(doc);
  ASSERT_FALSE(is.empty());
  EXPECT_EQ(is[0].path, "/cluster/pools/4/count");  // four pools fill the 4,000,000
  EXPECT_EQ(is[0].message, "the pools hold more than 4000000 devices in total");
}

// 30,000 stages of 100,000 layers sum to 3x10^9, past int.
TEST(ParseScenario, LayersPerStageSumDoesNotOverflow) {
  json doc = quickstart();
  doc["strategy"]["layers_per_stage"] = json(std::vector<int>(30000, 100000));
  const auto is = issues_of(doc);
  ASSERT_EQ(is.size(), 1u);
  EXPECT_EQ(is[0].path, "/strategy/layers_per_stage");
  EXPECT_EQ(is[0].message, "30000 entries given for pp = 2 stages");
}

}  // namespace
}  // namespace hcsim
