// Scenario references and one-scenario evaluation (sim/sweep/scenario_source.cpp): paths
// relative to the file naming them, inline objects, and the three outcomes of a run.
#include "sim/sweep/scenario_source.hpp"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "scenarios/scenario.hpp"
#include "sim/core/error.hpp"
#include "sim/sweep/record.hpp"
#include "../support/paths.hpp"

namespace hcsim::sweep {
namespace {

TEST(ScenarioSource, PathsAreRelativeToTheNamingFile) {
  EXPECT_EQ(relative_to("a/b/sweep.json", "base.json"), "a/b/base.json");
  EXPECT_EQ(relative_to("sweep.json", "../x.json"), "../x.json");
  EXPECT_EQ(relative_to("a/sweep.json", "/abs/x.json"), "/abs/x.json");
  const auto inl = resolve_scenario(nlohmann::json{{"name", "x"}}, "s.json", "/base");
  EXPECT_EQ(inl.file, "s.json#/base");
  EXPECT_EQ(resolve_scenario(kTiny, "anywhere.json", "/base").doc["name"], "tiny-gpt");
  try {
    resolve_scenario(42, "s.json", "/base");
    FAIL() << "no error";
  } catch (const InputError& e) {
    EXPECT_THAT(e.render(), ::testing::HasSubstr("s.json:/base: expected a scenario file name"));
  }
}

TEST(ScenarioSource, EvaluationIsOkOrInfeasibleWithTheReasonNeverAThrow) {
  register_builtins();
  nlohmann::json doc = read_json_file(kTiny);
  const Evaluation ok = evaluate_scenario(doc, kTiny);
  EXPECT_EQ(ok.status, "ok");
  EXPECT_GT(ok.report["step_time_s"].get<double>(), 0);
  apply_assignments(doc, nlohmann::ordered_json{{"/strategy/tp", 3}});
  const Evaluation bad = evaluate_scenario(doc, kTiny);
  EXPECT_EQ(bad.status, "infeasible");
  // The tiny GPT has 8 heads (scenarios/sweeps/tiny-gpt.json).
  EXPECT_THAT(bad.reason, ::testing::HasSubstr("/strategy/tp: the model's 8 attention heads are not divisible by tp = 3"));
  EXPECT_TRUE(bad.report.is_null());
}

TEST(ScenarioSource, ThePerDeviceSectionIsLeftOutOnlyWhenNoMetricReadsIt) {
  register_builtins();
  const nlohmann::json doc = read_json_file(kTiny);
  const Evaluation full = evaluate_scenario(doc, kTiny);
  const Evaluation lean = evaluate_scenario(doc, kTiny, false);
  ASSERT_EQ(lean.status, "ok");
  EXPECT_TRUE(full.report.contains("per_device"));
  EXPECT_FALSE(lean.report.contains("per_device"));
  // Everything else is the same report.
  nlohmann::json rest = full.report;
  rest.erase("per_device");
  EXPECT_EQ(rest, lean.report);
  EXPECT_FALSE(needs_per_device(default_metrics()));
  EXPECT_TRUE(needs_per_device({{"mem", "/per_device/0/memory/total_bytes"}}));
  EXPECT_TRUE(needs_per_device({{"all", "/per_device"}}));
  EXPECT_FALSE(needs_per_device({{"x", "/per_devices_like"}}));
}

}  // namespace
}  // namespace hcsim::sweep
