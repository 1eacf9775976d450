// The command line as a user meets it: the hcsim binary run as a child process.
// Expectations come from the CLI contract (sim/cli/command.hpp, docs/robustness.md): exit
// code 2 and "FILE:/json/pointer: message" lines for bad input, every problem of a
// scenario reported at once, one line for a file that cannot be read or parsed, --set
// applied before validation, and --format json / --out writing the report and the
// resolved scenario.
#include <algorithm>
#include <filesystem>
#include <fstream>
#include <string>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "hcsim/version.hpp"
#include "hcsim_child.hpp"
#include "../support/paths.hpp"

namespace hcsim::test {
namespace {

bool has_line(const std::string& text, const std::string& prefix, const std::string& part) {
  const auto ls = lines_of(text);
  return std::any_of(ls.begin(), ls.end(),
                     [&](const std::string& l) { return l.starts_with(prefix) && l.find(part) != std::string::npos; });
}

void write(const std::string& path, const std::string& text) {
  std::ofstream(path, std::ios::binary) << text;
}

TEST(CliValidate, ReportsEveryMistakeWithItsPointer) {
  // tests/scenarios/three_mistakes.json holds three independent mistakes in three sections.
  const std::string f = kSource + "/tests/scenarios/three_mistakes.json";
  const ChildResult r = run_hcsim({"validate", f});
  EXPECT_EQ(r.exit_code, 2) << describe(r);
  EXPECT_EQ(r.out, "") << describe(r);
  EXPECT_EQ(lines_of(r.err).size(), 3u) << describe(r);
  EXPECT_TRUE(has_line(r.err, f + ":/cluster/pools/0/preset: ", "unknown compute device preset \"nvidia-a100-80gb\""))
      << describe(r);
  EXPECT_TRUE(has_line(r.err, f + ":/workload/precision: ", "unknown value \"bf8\"")) << describe(r);
  EXPECT_TRUE(has_line(r.err, f + ":/strategy/schedule: ", "unknown value \"zero-bubble\"")) << describe(r);
}

TEST(CliValidate, MissingFileIsOneLine) {
  const std::string f = kSource + "/tests/scenarios/no_such_file.json";
  const ChildResult r = run_hcsim({"validate", f});
  EXPECT_EQ(r.exit_code, 2) << describe(r);
  EXPECT_EQ(r.out, "");
  ASSERT_EQ(lines_of(r.err).size(), 1u) << describe(r);
  EXPECT_TRUE(has_line(r.err, f + ":", "cannot open the file")) << describe(r);
}

TEST(CliValidate, DirectoryIsOneLine) {
  TempDir dir;
  const ChildResult r = run_hcsim({"validate", dir.path()});
  EXPECT_EQ(r.exit_code, 2) << describe(r);
  ASSERT_EQ(lines_of(r.err).size(), 1u) << describe(r);
  EXPECT_TRUE(has_line(r.err, dir.path() + ":", "is a directory")) << describe(r);
}

TEST(CliValidate, EndlessInputStopsAtTheSizeLimit) {
  // /dev/zero never ends: reading must stop at the 64 MiB limit, not exhaust memory.
  const ChildResult r = run_hcsim({"validate", "/dev/zero"});
  EXPECT_EQ(r.exit_code, 2) << describe(r);
  ASSERT_EQ(lines_of(r.err).size(), 1u) << describe(r);
  EXPECT_TRUE(has_line(r.err, "/dev/zero:", "file larger than 64 MiB")) << describe(r);
}

TEST(CliValidate, SyntaxErrorIsOneLineWithLineAndColumn) {
  TempDir dir;
  const std::string f = dir.file("broken.json");
  // The stray comma is the 13th character of line 3, so the parser stops at the '}' on line 4, column 1.
  write(f, "{\n  \"name\": \"x\",\n  \"cluster\": {},\n}\n");
  const ChildResult r = run_hcsim({"validate", f});
  EXPECT_EQ(r.exit_code, 2) << describe(r);
  EXPECT_EQ(r.out, "");
  ASSERT_EQ(lines_of(r.err).size(), 1u) << describe(r);
  EXPECT_TRUE(has_line(r.err, f + ":", "invalid JSON at line 4, column 1")) << describe(r);
}

TEST(CliValidate, UnknownPresetIsOneLineListingTheValidOnes) {
  const ChildResult r = run_hcsim({"validate", kQuickstart, "--set", "/workload/model/preset=gpt-5"});
  EXPECT_EQ(r.exit_code, 2) << describe(r);
  EXPECT_EQ(r.out, "");
  ASSERT_EQ(lines_of(r.err).size(), 1u) << describe(r);
  EXPECT_TRUE(has_line(r.err, kQuickstart + ":/workload/model/preset: ",
                       "unknown model preset \"gpt-5\"; valid ones are: "))
      << describe(r);
  EXPECT_TRUE(has_line(r.err, kQuickstart + ":", "gpt3-1.3b")) << describe(r);
}

TEST(CliValidate, AcceptsQuickstart) {
  // quickstart.json: 16 GPUs as dp 2 x tp 4 x pp 2 of GPT-3 1.3B (24 layers).
  const ChildResult r = run_hcsim({"validate", kQuickstart});
  EXPECT_EQ(r.exit_code, 0) << describe(r);
  EXPECT_NE(r.out.find("valid (16 devices, dp 2 · tp 4 · pp 2, 24 layers)"), std::string::npos) << describe(r);
  EXPECT_EQ(r.err, "");
}

// validate applies run's memory check (docs/robustness.md): GPT-3 175B on 16 A100-80GB
// without ZeRO needs far more than 80 GB per device (at least 16 B of weights, gradients and
// Adam state per parameter: 175e9 x 16 B over tp·pp = 16 devices is 175 GB), so both refuse it
// with the same line and exit code 2; with simulation.check_memory off both accept it.
TEST(CliValidate, RefusesWhatRunRefusesForMemory) {
  const std::string file = kSource + "/tests/bad_scenarios/run_model_does_not_fit.json";
  const ChildResult v = run_hcsim({"validate", file});
  const ChildResult r = run_hcsim({"run", file});
  EXPECT_EQ(v.exit_code, 2) << describe(v);
  EXPECT_EQ(r.exit_code, 2) << describe(r);
  EXPECT_EQ(v.out, "") << describe(v);
  EXPECT_TRUE(has_line(v.err, file + ":/strategy: ", "does not fit in memory: stage 0")) << describe(v);
  EXPECT_EQ(v.err, r.err);
  const ChildResult off = run_hcsim({"validate", file, "--set", "/simulation/check_memory=false"});
  EXPECT_EQ(off.exit_code, 0) << describe(off);
  EXPECT_NE(off.out.find(": valid ("), std::string::npos) << describe(off);
}

TEST(CliSet, OverridesTheScenario) {
  // tp = 8 alone breaks the layout (2*8*2 = 32 for 16 devices): the override was applied.
  ChildResult r = run_hcsim({"validate", kQuickstart, "--set", "/strategy/tp=8"});
  EXPECT_EQ(r.exit_code, 2) << describe(r);
  EXPECT_TRUE(has_line(r.err, kQuickstart + ":/strategy: ", "dp*tp*pp = 2*8*2 = 32")) << describe(r);
  // With dp = 1 as well the layout is 1*8*2 = 16 again.
  r = run_hcsim({"validate", kQuickstart, "--set", "/strategy/tp=8", "--set", "/strategy/dp=1"});
  EXPECT_EQ(r.exit_code, 0) << describe(r);
  EXPECT_NE(r.out.find("dp 1 · tp 8 · pp 2"), std::string::npos) << describe(r);
}

TEST(CliSet, RejectsMalformedAssignments) {
  for (const std::string bad : {"strategy/tp=8", "/strategy/tp", "=8"}) {
    const ChildResult r = run_hcsim({"validate", kQuickstart, "--set", bad});
    EXPECT_EQ(r.exit_code, 2) << bad << "\n" << describe(r);
    EXPECT_NE(r.err.find("--set expects /json/pointer=value"), std::string::npos) << bad << "\n" << describe(r);
  }
}

TEST(CliSet, IndexFarPastAnArrayIsRefusedNotAllocated) {
  // Growing /cluster/pools to 10^9 entries would need gigabytes; the child has 4 GiB.
  const ChildResult r = run_hcsim({"validate", kQuickstart, "--set", "/cluster/pools/999999999/count=1"});
  EXPECT_EQ(r.exit_code, 2) << describe(r);
  EXPECT_TRUE(has_line(r.err, kQuickstart + ":/cluster/pools/999999999/count: ", "past the end of an array of 1"))
      << describe(r);
}

TEST(CliRun, JsonReportHasTheDocumentedFields) {
  const ChildResult r = run_hcsim({"run", kQuickstart, "--format", "json"});
  ASSERT_EQ(r.exit_code, 0) << describe(r);
  const auto rep = nlohmann::json::parse(r.out);  // throws, failing the test, if not valid JSON
  ASSERT_TRUE(rep.is_object());
  EXPECT_GT(rep.at("step_time_s").get<double>(), 0.0);
  const double bubble = rep.at("bubble_fraction").get<double>();
  EXPECT_GE(bubble, 0.0);
  EXPECT_LT(bubble, 1.0);
  EXPECT_EQ(rep.at("hcsim_version"), kVersion);
  EXPECT_EQ(rep.at("devices"), 16);
  const auto& devs = rep.at("per_device");
  ASSERT_TRUE(devs.is_array());
  ASSERT_FALSE(devs.empty());
  for (const auto& d : devs) {
    const auto& m = d.at("memory");
    EXPECT_GT(m.at("peak_bytes").get<double>(), 0.0);
    EXPECT_LE(m.at("peak_bytes").get<double>(), m.at("capacity_bytes").get<double>());
  }
  for (const char* k : {"tokens_per_s", "mfu", "energy", "links", "comm_bytes", "simulation"})
    EXPECT_TRUE(rep.contains(k)) << k;
}

TEST(CliRun, OutDirHoldsReportAndResolvedScenario) {
  TempDir dir;
  const std::string out = dir.file("run1");
  const ChildResult r = run_hcsim({"run", kQuickstart, "--format", "json", "--out", out});
  ASSERT_EQ(r.exit_code, 0) << describe(r);
  // Exactly the three result files: no temporary left behind by the atomic writes.
  std::vector<std::string> names;
  for (const auto& e : std::filesystem::directory_iterator(out)) names.push_back(e.path().filename().string());
  std::sort(names.begin(), names.end());
  EXPECT_EQ(names, (std::vector<std::string>{"report.html", "report.json", "resolved_scenario.json"}));

  // report.json is the report printed on stdout.
  EXPECT_EQ(nlohmann::json::parse(read_file(out + "/report.json")), nlohmann::json::parse(r.out));
  const auto res = nlohmann::json::parse(read_file(out + "/resolved_scenario.json"));
  EXPECT_EQ(res.at("hcsim_version"), kVersion);
  // Defaults filled in for what quickstart.json leaves out (sections.cpp declares them).
  EXPECT_EQ(res.at("simulation").at("mode"), "event");
  EXPECT_EQ(res.at("strategy").at("zero"), 0);
  EXPECT_EQ(res.at("strategy").at("recompute"), "none");
  EXPECT_EQ(res.at("cluster").at("pue"), 1.0);
  EXPECT_EQ(res.at("strategy").at("layers_per_stage"), nlohmann::json::array({12, 12}));
  // Quantities normalised to SI: the default 25 MB bucket is a plain number of bytes.
  EXPECT_EQ(res.at("strategy").at("dp_bucket"), 25e6);
}

TEST(CliRun, TaskBoundRefusesWithTheEstimate) {
  // quickstart's estimated task count is in the thousands; a bound of 1000 must refuse it
  // before anything is simulated, at the bound's pointer.
  const ChildResult r = run_hcsim({"run", kQuickstart, "--set", "/simulation/max_tasks=1000"});
  EXPECT_EQ(r.exit_code, 2) << describe(r);
  EXPECT_EQ(r.out, "") << describe(r);
  EXPECT_TRUE(has_line(r.err, kQuickstart + ":/simulation/max_tasks: ", "the step would need about")) << describe(r);
  EXPECT_NE(r.err.find("max_tasks = 1000"), std::string::npos) << describe(r);
}

TEST(CliRun, UnknownFormatIsAnInputError) {
  const ChildResult r = run_hcsim({"run", kQuickstart, "--format", "xml"});
  EXPECT_EQ(r.exit_code, 2) << describe(r);
  EXPECT_EQ(r.out, "");
}

}  // namespace
}  // namespace hcsim::test
