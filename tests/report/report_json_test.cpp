// The JSON report against its published schema (docs/report.schema.json), the checker
// against documents it must reject, and the JSON/CSV views against the metrics.
#include <algorithm>
#include <fstream>
#include <functional>
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

std::string streamed(const Scenario& sc, const RunOutput& out, int indent = 2) {
  std::ostringstream os;
  write_report_json(os, sc, out, report_json(sc, out, false), indent);
  return os.str();
}

// The streamed report is report_json().dump()'s bytes: the quickstart (event mode, 16
// devices of which 14 are replicas of 2), a run without symmetry and one in analytical mode
// (every device its own twin), at two indents.
TEST(ReportJson, StreamedPerDeviceIsTheWholeReportsBytes) {
  json analytical = small_doc(2, 2, 2, testing::nvlink3());
  analytical["simulation"]["mode"] = "analytical";
  for (const auto& r : {quickstart(), run_doc(small_doc(2, 2, 2, testing::nvlink3())), run_doc(analytical)})
    for (int indent : {2, 4}) EXPECT_EQ(streamed(r->sc, r->out, indent), report_json(r->sc, r->out).dump(indent));
  EXPECT_EQ(quickstart()->out.metrics.devices.size(), 16u);
  EXPECT_EQ(quickstart()->out.metrics.simulated_devices, 2);
}

// The per-device list is written in pieces of about 1 MiB (report_json.cpp): 2,048 devices
// of one node in analytical mode print more than 2 MiB of it, so pieces are written
// before the last, and the bytes are still report_json().dump()'s.
TEST(ReportJson, StreamedPerDeviceIsTheWholeReportsBytesPastOnePiece) {
  json doc = small_doc(2048, 1, 1, testing::nvlink3(), 2048);
  doc["simulation"]["mode"] = "analytical";
  const auto r = run_doc(doc);
  const std::string text = streamed(r->sc, r->out);
  EXPECT_GT(text.size(), std::size_t{2} << 20);
  // Compared whole (a failure prints no diff of megabytes), then where they part.
  const std::string whole = report_json(r->sc, r->out).dump(2);
  EXPECT_TRUE(text == whole) << "sizes " << text.size() << " and " << whole.size() << ", apart from byte "
                             << (std::mismatch(text.begin(), text.end(), whole.begin(), whole.end()).first -
                                 text.begin());
}

// Devices of one stage print from one text with their numbers put in; one that differs from
// the last printed of its stage in any figure of the report is printed afresh. Each
// mutation below changes one figure of device 9, whose neighbours share its stage.
TEST(ReportJson, StreamedPerDevicePrintsADeviceWhoseFiguresDifferAfresh) {
  const auto q = quickstart();
  ASSERT_EQ(q->out.metrics.devices[8].stage, q->out.metrics.devices[9].stage);
  ASSERT_EQ(q->out.metrics.devices[9].stage, q->out.metrics.devices[10].stage);
  const std::vector<std::pair<const char*, std::function<void(DeviceMetrics&)>>> changes{
      {"twin", [](DeviceMetrics& d) { d.twin += 1; }},
      {"stage", [](DeviceMetrics& d) { d.stage = 1 - d.stage; }},
      {"simulated", [](DeviceMetrics& d) { d.simulated = !d.simulated; }},
      {"compute", [](DeviceMetrics& d) { d.compute *= 1.5; }},
      {"exposed_comm", [](DeviceMetrics& d) { d.exposed_comm[1] += Seconds(1); }},
      {"bubble", [](DeviceMetrics& d) { d.bubble += Seconds(1); }},
      {"idle", [](DeviceMetrics& d) { d.idle += Seconds(1); }},
      {"flops", [](DeviceMetrics& d) { d.flops *= 2; }},
      {"model_flops", [](DeviceMetrics& d) { d.model_flops *= 2; }},
      {"weights", [](DeviceMetrics& d) { d.memory.weights += Bytes(1); }},
      {"gradients", [](DeviceMetrics& d) { d.memory.gradients += Bytes(1); }},
      {"optimizer", [](DeviceMetrics& d) { d.memory.optimizer += Bytes(1); }},
      {"activations", [](DeviceMetrics& d) { d.memory.activations += Bytes(1); }},
      {"buffers", [](DeviceMetrics& d) { d.memory.buffers += Bytes(1); }},
      {"capacity", [](DeviceMetrics& d) { d.capacity += Bytes(1); }},
      {"tier used", [](DeviceMetrics& d) { d.tiers[2].used += Bytes(1); }},
      {"tier capacity", [](DeviceMetrics& d) { d.tiers[1].capacity += Bytes(1); }},
      {"dynamic_energy", [](DeviceMetrics& d) { d.dynamic_energy += Joules(1); }},
      {"static_energy", [](DeviceMetrics& d) { d.static_energy += Joules(1); }},
      {"idle_power", [](DeviceMetrics& d) { d.idle_power += Watts(1); }},
      {"peak_power", [](DeviceMetrics& d) { d.peak_power += Watts(1); }},
  };
  for (const auto& [what, change] : changes) {
    RunOutput out = q->out;
    DeviceTable devices;  // every device in a class of its own, device 9 changed
    for (std::size_t d = 0; d < out.metrics.devices.size(); ++d) {
      DeviceMetrics dm = out.metrics.devices[d];
      if (d == 9) change(dm);
      devices.push_back(dm);
    }
    out.metrics.devices = devices;
    const std::string text = streamed(q->sc, out);
    EXPECT_EQ(text, report_json(q->sc, out).dump(2)) << what;
    EXPECT_NE(text, streamed(q->sc, q->out)) << what;
  }
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
