// The scenario's choices of a registered family come from its registry (style principles 1
// and 17): an unknown name is refused at its JSON pointer with every registered name, so a
// newly registered algorithm or schedule is accepted without touching scenarios/.
#include <string>
#include <vector>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "scenarios/scenario.hpp"
#include "../support/quickstart_doc.hpp"
#include "sim/collectives/algorithms.hpp"
#include "workloads/pipeline_schedule.hpp"

namespace hcsim {
namespace {

using json = nlohmann::json;

json quickstart_sections() { return test::quickstart_doc(); }

// The one issue parse_scenario reports for `doc`, as "path: message".
std::string only_issue_sections(const json& doc) {
  try {
    (void)parse_scenario(doc, "t.json");
  } catch (const InputError& e) {
    EXPECT_EQ(e.issues().size(), 1u) << e.what();
    return e.issues().empty() ? "" : e.issues()[0].path + ": " + e.issues()[0].message;
  }
  ADD_FAILURE() << "accepted: " << doc.dump();
  return "";
}

TEST(ScenarioSections, UnknownCollectiveAlgorithmListsAutoAndEveryRegisteredOne) {
  json doc = quickstart_sections();
  doc["simulation"] = {{"collective_algorithm", "butterfly"}};
  // The wording of every choice parameter (sim/core/params.cpp); the names, in the
  // registry's order, are what collective_algorithms() holds, after "auto".
  std::vector<std::string> names{"auto"};
  for (const auto& [name, algorithm] : collective_algorithms()) names.push_back(name);
  ASSERT_GT(names.size(), 1u);
  EXPECT_EQ(only_issue_sections(doc),
            "/simulation/collective_algorithm: unknown value \"butterfly\"; " + valid_list(names));
}

TEST(ScenarioSections, EveryRegisteredCollectiveAlgorithmIsAccepted) {
  for (const auto& [name, algorithm] : collective_algorithms()) {
    json doc = quickstart_sections();
    doc["simulation"] = {{"collective_algorithm", name}};
    EXPECT_NO_THROW((void)parse_scenario(doc, "t.json")) << name;
  }
}

TEST(ScenarioSections, UnknownScheduleListsEveryRegisteredOne) {
  register_builtin_schedules();
  json doc = quickstart_sections();
  doc["strategy"]["schedule"] = "zero-bubble";
  std::vector<std::string> names;
  for (const auto& [name, schedule] : pipeline_schedules()) names.push_back(name);
  ASSERT_FALSE(names.empty());
  EXPECT_EQ(only_issue_sections(doc), "/strategy/schedule: unknown value \"zero-bubble\"; " + valid_list(names));
}

}  // namespace
}  // namespace hcsim
