// Same scenario, same bytes out (style principle 8). Every shipped scenario at the top of
// scenarios/ (sweep files, which have "axes", excepted) is run twice by the binary with
// --format json --out DIR; the two stdout reports, report.json, report.html and
// resolved_scenario.json files must be byte-identical. Any unordered iteration, unseeded
// random stream, pointer-keyed order or wall-clock value reaching the output fails here.
#include <algorithm>
#include <filesystem>
#include <string>
#include <vector>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "hcsim_child.hpp"

namespace hcsim::test {
namespace {

const std::string kScenarios = std::string(HCSIM_SOURCE_DIR) + "/scenarios";

std::vector<std::string> shipped_scenarios() {
  std::vector<std::string> out;
  for (const auto& e : std::filesystem::directory_iterator(kScenarios)) {
    if (!e.is_regular_file() || e.path().extension() != ".json") continue;
    try {
      const auto doc = nlohmann::json::parse(read_file(e.path().string()));
      if (doc.is_object() && doc.contains("axes")) continue;  // a sweep, not a scenario
    } catch (const nlohmann::json::exception&) {
      // Kept: a shipped file that does not parse fails the test below, loudly.
    }
    out.push_back(e.path().filename().string());
  }
  std::sort(out.begin(), out.end());
  return out;
}

class Determinism : public ::testing::TestWithParam<std::string> {};

TEST_P(Determinism, TwoRunsGiveTheSameBytes) {
  const std::string file = kScenarios + "/" + GetParam();
  TempDir dir;
  ChildLimits lim;
  lim.timeout_s = 120;
  const ChildResult a = run_hcsim({"run", file, "--format", "json", "--out", dir.file("a")}, lim);
  ASSERT_EQ(a.exit_code, 0) << describe(a);
  const ChildResult b = run_hcsim({"run", file, "--format", "json", "--out", dir.file("b")}, lim);
  ASSERT_EQ(b.exit_code, 0) << describe(b);
  EXPECT_EQ(a.out, b.out) << "stdout reports differ";
  EXPECT_EQ(read_file(dir.file("a/report.json")), read_file(dir.file("b/report.json")));
  EXPECT_EQ(read_file(dir.file("a/resolved_scenario.json")), read_file(dir.file("b/resolved_scenario.json")));
  EXPECT_EQ(read_file(dir.file("a/report.html")), read_file(dir.file("b/report.html")));
  EXPECT_FALSE(read_file(dir.file("a/report.json")).empty());
  // Recorded for docs/robustness.md: scenarios much slower than this are listed there.
  RecordProperty("seconds_per_run", std::to_string((a.seconds + b.seconds) / 2));
}

INSTANTIATE_TEST_SUITE_P(Shipped, Determinism, ::testing::ValuesIn(shipped_scenarios()), scenario_test_name);

}  // namespace
}  // namespace hcsim::test
