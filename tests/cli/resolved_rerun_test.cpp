// The resolved scenario reruns (docs/scenario.md, style principle 9): for every shipped run
// scenario (scenarios/*.json and scenarios/*/*.json that hold a "cluster"; sweeps, searches
// and expected.json files hold none), `hcsim run FILE --out A` then `hcsim run
// A/resolved_scenario.json --out B` must give byte-identical report.json files, and the
// second resolved_scenario.json must equal the first (a fixed point). The scenarios whose
// event-mode run takes over about 0.7 s on the 2-core machine are run in analytical mode
// (`--set /simulation/mode=analytical`, which the resolved scenario then states), so the
// whole test stays near 30 s.
#include <algorithm>
#include <filesystem>
#include <set>
#include <string>
#include <vector>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "hcsim/version.hpp"
#include "hcsim_child.hpp"

namespace hcsim::test {
namespace {

namespace fs = std::filesystem;
const fs::path kScenarios = fs::path(HCSIM_SOURCE_DIR) / "scenarios";

// Event-mode runs measured at 0.7 s or more (release build, 2 cores; docs/robustness.md).
const std::set<std::string> kAnalytical = {
    "gpt3-175b-a100-1024.json",           "gpt3-175b-tpuv4-512.json",          "bench/llama3-405b-h100-16384.json",
    "network/electrical-torus-1024.json", "network/nvlink-fat-tree-1024.json", "network/photonic-torus-1024.json",
    "predictions/kor-175b-full.json",     "predictions/kor-175b-sel.json",     "predictions/kor-1t-sel.json",
    "predictions/kor-530b-full.json",     "predictions/kor-530b-sel.json",     "predictions/llama3-405b-16384.json",
    "predictions/llama3-405b-8192.json",  "predictions/mtnlg-530b-2240.json",  "predictions/mtnlg-530b-2800.json",
    "predictions/mtnlg-530b-3360.json",   "validation-b200/mb-b200-02.json",   "validation-b200/mb-b200-04.json",
    "validation-h100/mb-h100-02.json",    "validation-h100/mb-h100-03.json",   "validation-h100/mb-h100-04.json",
    "validation-h100/nemo-h100-05.json",  "validation-h100/nemo-h100-10.json", "validation-moe/moe-h100-03.json",
    "validation-moe/moe-h100-04.json",    "validation-moe/moe-h100-05.json",   "validation-moe/moe-h100-06.json",
    "validation-moe/moe-b200-07.json",    "validation-moe/moe-b200-08.json",   "validation-moe/moe-b200-09.json",
    "validation-moe/moe-b200-10.json",    "validation-moe/moe-b200-11.json",   "validation-moe/moe-b200-12.json",
    "validation-moe/moe-b200-14.json",    "validation/meg-t1-07.json",         "validation/meg-t1-08.json",
    "validation/meg-t1-09.json",          "validation/meg-t1-10.json",
};

bool is_run_scenario(const fs::path& p) {
  if (p.extension() != ".json" || p.filename() == "expected.json") return false;
  try {
    const auto doc = nlohmann::json::parse(read_file(p.string()));
    return doc.is_object() && doc.contains("cluster") && doc.contains("workload");  // not a cluster study
  } catch (const nlohmann::json::exception&) {
    return true;  // kept: a shipped file that does not parse fails the test below, loudly
  }
}

std::vector<std::string> run_scenarios() {
  std::vector<std::string> out;
  for (const auto& e : fs::recursive_directory_iterator(kScenarios)) {
    const fs::path rel = fs::relative(e.path(), kScenarios);
    if (e.is_regular_file() && std::distance(rel.begin(), rel.end()) <= 2 && is_run_scenario(e.path()))
      out.push_back(rel.generic_string());
  }
  std::sort(out.begin(), out.end());
  return out;
}

class ResolvedRerun : public ::testing::TestWithParam<std::string> {};

TEST_P(ResolvedRerun, GivesTheSameReportAndResolvedScenario) {
  TempDir dir;
  ChildLimits lim;
  lim.timeout_s = 120;
  std::vector<std::string> first = {"run", (kScenarios / GetParam()).string(), "--out", dir.file("a")};
  if (kAnalytical.count(GetParam())) first.insert(first.end(), {"--set", "/simulation/mode=analytical"});
  const ChildResult a = run_hcsim(first, lim);
  ASSERT_EQ(a.exit_code, 0) << describe(a);
  const ChildResult b = run_hcsim({"run", dir.file("a/resolved_scenario.json"), "--out", dir.file("b")}, lim);
  ASSERT_EQ(b.exit_code, 0) << describe(b);
  const std::string report = read_file(dir.file("a/report.json"));
  EXPECT_FALSE(report.empty());
  EXPECT_EQ(report, read_file(dir.file("b/report.json")));
  EXPECT_EQ(read_file(dir.file("a/resolved_scenario.json")), read_file(dir.file("b/resolved_scenario.json")));
}

INSTANTIATE_TEST_SUITE_P(Shipped, ResolvedRerun, ::testing::ValuesIn(run_scenarios()), scenario_test_name);

// The enumeration reaches the subfolders, and the analytical list names shipped files only
// (a renamed scenario would otherwise leave the list silently stale).
TEST(ResolvedRerunList, CoversSubfoldersAndNamesShippedFiles) {
  const std::vector<std::string> all = run_scenarios();
  EXPECT_NE(std::find(all.begin(), all.end(), "quickstart.json"), all.end());
  EXPECT_NE(std::find(all.begin(), all.end(), "validation/meg-t1-01.json"), all.end());
  EXPECT_EQ(std::find(all.begin(), all.end(), "sweeps/quickstart-layouts.json"), all.end());
  EXPECT_EQ(std::find(all.begin(), all.end(), "validation/expected.json"), all.end());
  for (const std::string& f : kAnalytical) EXPECT_NE(std::find(all.begin(), all.end(), f), all.end()) << f;
}

// What the resolved scenario states: each resolved value in the input shape, the version
// as the informational top-level key.
TEST(ResolvedScenario, StatesEveryResolvedValueInTheInputShape) {
  TempDir dir;
  const ChildResult r = run_hcsim({"run", (kScenarios / "llama2-7b-fsdp-a100-128.json").string(), "--out", dir.file("a"),
                                   "--set", "/simulation/mode=analytical"});
  ASSERT_EQ(r.exit_code, 0) << describe(r);
  const auto res = nlohmann::json::parse(read_file(dir.file("a/resolved_scenario.json")));
  EXPECT_EQ(res.at("hcsim_version"), kVersion);
  // Device parameters: the preset with every parameter as an override (A100 datasheet: 312
  // TFLOPS bf16, 80 GB).
  const auto& pool = res.at("cluster").at("pools").at(0);
  EXPECT_EQ(pool.at("preset"), "nvidia-a100-80gb-sxm");
  EXPECT_EQ(pool.at("overrides").at("peak_bf16"), 312e12);
  EXPECT_EQ(pool.at("overrides").at("memory_capacity"), 80e9);
  // Model dimensions (Llama 2 7B: 32 layers, hidden 4096, 32 heads).
  const auto& model = res.at("workload").at("model").at("overrides");
  EXPECT_EQ(model.at("layers"), 32);
  EXPECT_EQ(model.at("hidden"), 4096);
  EXPECT_EQ(model.at("heads"), 32);
  // The FSDP preset's values (scenarios/fsdp.cpp) and the links' parameters.
  const auto& fsdp = res.at("strategy").at("fsdp");
  EXPECT_TRUE(fsdp.contains("preset"));
  for (const char* k : {"unit", "prefetch_forward", "prefetch_backward", "reshard_after_forward", "prefetch_bucket"})
    EXPECT_FALSE(fsdp.at(k).is_null()) << k;
  EXPECT_EQ(res.at("simulation").at("mode"), "analytical");
}

}  // namespace
}  // namespace hcsim::test
