// The optical-circuit-switch section of the report (sim/report/ocs_report.cpp) for the
// shipped rewired TPU v4 scenario: it matches the published schema, and its figures are
// the run's: mean = (sum of phase step x steps + reconfigurations x time) / steps.
#include <fstream>

#include <gtest/gtest.h>

#include "json_schema_subset.hpp"
#include "scenarios/scenario.hpp"
#include "sim/driver/run.hpp"
#include "sim/report/report.hpp"

namespace hcsim {
namespace {

TEST(OcsReport, RewiredSliceSectionMatchesSchemaAndRun) {
  register_builtins();
  const Scenario sc = load_scenario(std::string(HCSIM_SOURCE_DIR) + "/scenarios/tpuv4-ocs-rewire.json");
  const RunOutput r = run_scenario(sc);
  const nlohmann::json rep = report_json(sc, r);
  ASSERT_TRUE(rep.contains("ocs"));
  std::ifstream in(std::string(HCSIM_SOURCE_DIR) + "/docs/report.schema.json");
  const auto errors = testing::SchemaSubset(nlohmann::json::parse(in)).validate(rep);
  EXPECT_TRUE(errors.empty()) << (errors.empty() ? "" : errors[0]);
  const nlohmann::json& o = rep["ocs"];
  // The scenario: 2,000 steps, 4x4x4 until step 1000, then 2x4x8; one 10 s change.
  EXPECT_EQ(o["steps"], 2000);
  EXPECT_EQ(o["reconfigurations"], 1);
  EXPECT_EQ(o["total_reconfiguration_time_s"], 10.0);
  ASSERT_EQ(o["phases"].size(), 2u);
  EXPECT_EQ(o["phases"][0]["dims"], nlohmann::json({4, 4, 4}));
  EXPECT_EQ(o["phases"][1]["dims"], nlohmann::json({2, 4, 8}));
  const double a = o["phases"][0]["step_time_s"], b = o["phases"][1]["step_time_s"];
  EXPECT_NEAR(o["mean_step_time_s"].get<double>(), (1000 * a + 1000 * b + 10.0) / 2000, 1e-12);
  // The base wiring is the first phase's: the main report's step is that phase's.
  EXPECT_EQ(rep["step_time_s"].get<double>(), a);
  const std::string table = report_table(sc, r);
  EXPECT_NE(table.find("1 reconfiguration x 10 s = 10 s"), std::string::npos) << table;
  EXPECT_NE(table.find("2x4x8      1000 steps from 1000"), std::string::npos) << table;
}

TEST(OcsReport, AbsentForAStaticTorus) {
  register_builtins();
  nlohmann::json doc = read_json_file(std::string(HCSIM_SOURCE_DIR) + "/scenarios/tpuv4-ocs-rewire.json");
  doc["cluster"]["topology"].erase("ocs_phases");
  const Scenario sc = parse_scenario(doc, "static.json");
  const RunOutput r = run_scenario(sc);
  EXPECT_TRUE(ocs_json(sc, r).is_null());
  EXPECT_EQ(ocs_table(sc, r), "");
  EXPECT_FALSE(report_json(sc, r).contains("ocs"));
}

}  // namespace
}  // namespace hcsim
