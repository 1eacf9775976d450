// The warnings parse_scenario collects (Scenario::warnings, docs/robustness.md): legal but
// implausible input is parsed as written, and each warning names its JSON pointer. The
// shipped run scenarios must give none (a warning there is a bug of the scenario or of a
// rule). Ranges come from the preset registries: the A100's 80 GiB and the electrical
// links' 5 GB/s (ethernet-40g) .. 900 GB/s (nvlink5) at the time of writing.
#include <filesystem>
#include <fstream>

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "scenarios/scenario.hpp"
#include "../support/quickstart_doc.hpp"

namespace hcsim {
namespace {

using ::testing::HasSubstr;
using json = nlohmann::json;

std::vector<Issue> warnings_of(const json& doc) { return parse_scenario(doc, "t.json").warnings; }

TEST(ScenarioWarnings, QuickstartHasNone) { EXPECT_TRUE(warnings_of(test::quickstart_doc()).empty()); }

TEST(ScenarioWarnings, PlainNumberBandwidthOfALink) {
  json doc = test::quickstart_doc();
  doc["cluster"]["topology"]["nvlink"] = {{"preset", "nvlink3"}, {"bandwidth", 600}};
  const Scenario sc = parse_scenario(doc, "t.json");
  ASSERT_EQ(sc.warnings.size(), 1u);
  EXPECT_EQ(sc.warnings[0].path, "/cluster/topology/nvlink/bandwidth");
  EXPECT_THAT(sc.warnings[0].message, HasSubstr("600 is read as 600 B/s"));
  EXPECT_THAT(sc.warnings[0].message, HasSubstr("electrical link presets' bandwidth"));
  EXPECT_THAT(sc.warnings[0].message, HasSubstr("did you mean \"600 GB/s\"?"));
  EXPECT_DOUBLE_EQ(sc.resolved["cluster"]["topology"]["nvlink"]["bandwidth"].get<double>(), 600);  // run as written
}

TEST(ScenarioWarnings, NicParameterAndDeviceOverride) {
  json doc = test::quickstart_doc();
  doc["cluster"]["topology"]["nic"] = {{"preset", "ib-hdr"}, {"latency", 2}};  // 2 s, meant 2 us
  doc["cluster"]["pools"][0]["overrides"] = {{"memory_capacity", "80 Gb"}, {"memory_bandwidth", 2000}};
  const auto w = warnings_of(doc);
  ASSERT_EQ(w.size(), 3u);
  // Parse order: the pools before the topology; a look-alike unit is not also a range warning.
  EXPECT_EQ(w[0].path, "/cluster/pools/0/overrides/memory_capacity");
  EXPECT_THAT(w[0].message, HasSubstr("did you mean \"80 GB\"?"));
  EXPECT_EQ(w[1].path, "/cluster/pools/0/overrides/memory_bandwidth");
  EXPECT_THAT(w[1].message, HasSubstr("gpu compute device presets' memory_bandwidth"));
  EXPECT_THAT(w[1].message, HasSubstr("did you mean \"2000 GB/s\"?"));
  EXPECT_EQ(w[2].path, "/cluster/topology/nic/latency");
  EXPECT_THAT(w[2].message, HasSubstr("did you mean \"2 us\"?"));
}

// The one error parse_scenario reports for `doc`.
Issue only_error(const json& doc) {
  try {
    (void)parse_scenario(doc, "t.json");
  } catch (const InputError& e) {
    EXPECT_EQ(e.issues().size(), 1u) << e.render();
    if (!e.issues().empty()) return e.issues()[0];
  }
  ADD_FAILURE() << "accepted: " << doc.dump();
  return {};
}

TEST(ScenarioWarnings, MillibitBucket) {
  json doc = test::quickstart_doc();
  doc["strategy"]["dp_bucket"] = "250 mb";  // 0.03125 B: below the 1 B minimum, so an error with the hint
  const Issue e = only_error(doc);
  EXPECT_EQ(e.path, "/strategy/dp_bucket");
  EXPECT_THAT(e.message, HasSubstr("did you mean \"250 MB\"?"));
}

// A GPU without fp8 tensor cores is refused, not run at another rate.
TEST(ScenarioWarnings, Fp8OnAnA100IsAnErrorNotAWarning) {
  json doc = test::quickstart_doc();
  doc["workload"]["precision"] = "fp8";
  const Issue e = only_error(doc);
  EXPECT_EQ(e.path, "/workload/precision");
  EXPECT_THAT(e.message, HasSubstr("has no fp8 tensor cores"));
}

// A device that runs fp8 without fp8 units: the CPU model's fp8 GEMMs take its fp32 rate
// (models/compute/cpu.cpp: peak(fp8) falls to peak_fp32; bf16_speedup 1 by default).
TEST(ScenarioWarnings, Fp8OnACpuRunsAtItsFp32RateAndSaysSo) {
  json doc = test::quickstart_doc();
  doc["cluster"]["pools"][0] = {{"name", "cpu"}, {"preset", "amd-epyc-7543"}, {"count", 16}};
  doc["workload"]["precision"] = "fp8";
  const auto w = warnings_of(doc);
  ASSERT_EQ(w.size(), 1u);
  EXPECT_EQ(w[0].path, "/workload/precision");
  EXPECT_THAT(w[0].message, HasSubstr("pool \"cpu\" (amd-epyc-7543) has no fp8 units: its fp8 GEMMs run at its "
                                      "fp32 rate ("));
  doc["workload"]["precision"] = "bf16";
  EXPECT_TRUE(warnings_of(doc).empty());
}

TEST(ScenarioWarnings, ShippedRunScenariosHaveNone) {
  namespace fs = std::filesystem;
  const fs::path root = fs::path(HCSIM_SOURCE_DIR) / "scenarios";
  std::vector<fs::path> files;
  for (const auto& e : fs::recursive_directory_iterator(root))
    if (e.is_regular_file() && e.path().extension() == ".json") files.push_back(e.path());
  std::sort(files.begin(), files.end());
  int run_scenarios = 0;
  for (const auto& f : files) {
    const json doc = read_json_file(f.string());
    // Sweeps, searches, suites' expected.json, and cluster studies (a cluster file has no workload).
    if (!doc.is_object() || !doc.contains("cluster") || !doc.contains("workload")) continue;
    ++run_scenarios;
    const Scenario sc = load_scenario(f.string());
    for (const auto& w : sc.warnings) ADD_FAILURE() << f.string() << ":" << w.path << ": " << w.message;
  }
  EXPECT_GE(run_scenarios, 20);
}

}  // namespace
}  // namespace hcsim
