// The JSON report against its published schema (docs/report.schema.json), the checker
// against documents it must reject, and the JSON/CSV views against the metrics.
#include <fstream>
#include <sstream>

#include <gtest/gtest.h>

#include "json_schema_subset.hpp"
#include "report_fixture.hpp"

namespace hcsim {
namespace {

using nlohmann::json;
using testing::quickstart;
using testing::run_doc;
using testing::small_doc;

testing::SchemaSubset schema() {
  std::ifstream in(std::string(HCSIM_SOURCE_DIR) + "/docs/report.schema.json");
  EXPECT_TRUE(in.good());
  return testing::SchemaSubset(json::parse(in));
}

std::string joined(const std::vector<std::string>& v) {
  std::string s;
  for (const auto& x : v) s += x + "\n";
  return s;
}

TEST(ReportJson, QuickstartMatchesSchema) {
  const auto errors = schema().validate(quickstart()->report);
  EXPECT_TRUE(errors.empty()) << joined(errors);
  EXPECT_EQ(quickstart()->report["format"], kReportFormat);
}

TEST(ReportJson, PipelinedPhotonicCaseMatchesSchema) {
  const auto r = run_doc(small_doc(2, 2, 2, {{"type", "photonic"}, {"lane_rate", "37.5 GB/s"},
                                              {"fixed_latency", "5 ns"}, {"energy_per_byte", "1 pJ/bit"}}));
  const auto errors = schema().validate(r->report);
  EXPECT_TRUE(errors.empty()) << joined(errors);
}

TEST(ReportJson, CompressionSectionMatchesSchema) {
  // The optional "compression" section, present when a codec is configured.
  register_builtins();
  const Scenario sc =
      load_scenario(std::string(HCSIM_SOURCE_DIR) + "/scenarios/compression/bert-large-onebit-40gbe.json");
  const json rep = report_json(sc, run_scenario(sc));
  ASSERT_TRUE(rep.contains("compression"));
  const auto errors = schema().validate(rep);
  EXPECT_TRUE(errors.empty()) << joined(errors);
}

TEST(ReportJson, MoeSectionMatchesSchema) {
  // strategy.moe of an MoE model routed unevenly (Zipf exponent 0.2), analytical mode: the
  // routing's load and the imbalance's cost against even routing.
  register_builtins();
  Scenario sc = load_scenario(std::string(HCSIM_SOURCE_DIR) + "/scenarios/mixtral-8x7b-h100-64.json");
  sc.model.moe.skew = 0.2;
  sc.simulation.mode = "analytical";
  const json rep = report_json(sc, run_scenario(sc));
  ASSERT_TRUE(rep["strategy"].contains("moe"));
  EXPECT_GT(rep["strategy"]["moe"]["imbalance_cost_s"].get<double>(), 0.0);
  EXPECT_FALSE(rep["strategy"].contains("etp"));  // listed only above 1
  const auto errors = schema().validate(rep);
  EXPECT_TRUE(errors.empty()) << joined(errors);
  // Expert tensor parallelism 2 (ep 8 * etp 2 = the stage's 16 devices) is listed.
  sc.strategy.etp = 2;
  const json split = report_json(sc, run_scenario(sc));
  EXPECT_EQ(split["strategy"]["etp"], 2);
  const auto split_errors = schema().validate(split);
  EXPECT_TRUE(split_errors.empty()) << joined(split_errors);
}

TEST(ReportJson, CheckerRejectsWhatTheSchemaForbids) {
  const auto s = schema();
  json missing = quickstart()->report;
  missing.erase("step_time_s");
  EXPECT_EQ(s.validate(missing).size(), 1u);
  json extra = quickstart()->report;
  extra["per_device"][0]["surprise"] = 1;
  EXPECT_EQ(s.validate(extra).size(), 1u);
  json wrong = quickstart()->report;
  wrong["energy"]["it_j"] = "1 kJ";
  EXPECT_EQ(s.validate(wrong).size(), 1u);
  json negative = quickstart()->report;
  negative["breakdown"]["exposed_comm_s"]["tp"] = -1.0;
  EXPECT_EQ(s.validate(negative).size(), 1u);
  json version = quickstart()->report;
  version["format"] = "hcsim-report/1";
  EXPECT_EQ(s.validate(version).size(), 1u);
  // Keywords outside the subset are errors, not silently ignored.
  testing::SchemaSubset odd(json{{"type", "object"}, {"patternProperties", json::object()}});
  EXPECT_EQ(odd.validate(json::object()).size(), 1u);
}

TEST(ReportJson, SummaryAgreesWithPerDeviceRows) {
  const json& rep = quickstart()->report;
  const Metrics& m = quickstart()->out.metrics;
  ASSERT_EQ(rep["per_device"].size(), 16u);
  double compute = 0, peak_memory = 0;
  for (const auto& d : rep["per_device"]) {
    compute += d["compute_s"].get<double>();
    peak_memory = std::max(peak_memory, d["memory"]["peak_bytes"].get<double>());
    EXPECT_DOUBLE_EQ(d["energy_j"]["total"].get<double>(),
                     d["energy_j"]["dynamic"].get<double>() + d["energy_j"]["static"].get<double>());
  }
  EXPECT_NEAR(rep["breakdown"]["compute_s"].get<double>(), compute / 16, 1e-12 * compute);
  EXPECT_EQ(rep["memory"]["peak_bytes"].get<double>(), peak_memory);
  EXPECT_EQ(rep["stages"].size(), 2u);
  EXPECT_EQ(rep["stage_bubble_fraction"].size(), 2u);
  EXPECT_EQ(rep["power"]["it_w"].size(), m.power.size());
  EXPECT_EQ(rep["energy"]["it_j"].get<double>(), m.it_energy.value());
}

std::vector<std::vector<std::string>> parse_csv(const std::string& text) {
  std::vector<std::vector<std::string>> rows;
  std::istringstream in(text);
  std::string line;
  while (std::getline(in, line)) {
    std::vector<std::string> cells;
    std::string cell;
    std::istringstream ls(line);
    while (std::getline(ls, cell, ',')) cells.push_back(cell);
    rows.push_back(cells);
  }
  return rows;
}

TEST(ReportCsv, OneRowPerRankAgreeingWithTheMetrics) {
  const auto q = quickstart();
  const auto rows = parse_csv(report_csv(q->sc, q->out));
  ASSERT_EQ(rows.size(), 17u);  // header + 16 devices
  const auto& head = rows[0];
  auto col = [&](const std::string& name) {
    const auto it = std::find(head.begin(), head.end(), name);
    EXPECT_NE(it, head.end()) << name;
    return static_cast<std::size_t>(it - head.begin());
  };
  const double step = q->out.metrics.step_time.value();
  for (std::size_t r = 1; r < rows.size(); ++r) {
    ASSERT_EQ(rows[r].size(), head.size());
    const auto& d = q->out.metrics.devices[r - 1];
    // Shortest round-trip numbers: the CSV holds the metrics' doubles exactly.
    EXPECT_EQ(std::stod(rows[r][col("compute_s")]), d.compute.value());
    EXPECT_EQ(std::stod(rows[r][col("energy_j")]), d.energy().value());
    EXPECT_EQ(std::stod(rows[r][col("peak_bytes")]), d.memory.total().value());
    double sum = std::stod(rows[r][col("compute_s")]) + std::stod(rows[r][col("bubble_s")]) +
                 std::stod(rows[r][col("idle_s")]);
    for (const char* k : {"tp", "sp", "pp", "dp", "zero", "offload", "cp"})
      sum += std::stod(rows[r][col(std::string("exposed_") + k + "_s")]);
    EXPECT_NEAR(sum, step, 1e-12 * step);
  }
}

}  // namespace
}  // namespace hcsim
