// Scenario input on the command line (docs/scenario.md, docs/robustness.md): a YAML file
// runs to the very bytes of its JSON twin; a YAML syntax error is one line with its line and
// column, exit 2; comments in a JSON file are skipped; a scenario with errors has its
// warnings printed too, before the errors (with --strict, as errors after them).
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "hcsim_child.hpp"
#include "../support/paths.hpp"

namespace hcsim::test {
namespace {

using ::testing::HasSubstr;

const std::string kYaml = std::string(HCSIM_SOURCE_DIR) + "/tests/cli/quickstart.yaml";

void write(const std::string& path, const std::string& text) { std::ofstream(path, std::ios::binary) << text; }

TEST(ScenarioInput, YamlScenarioGivesTheJsonReportByteForByte) {
  const std::vector<std::string> fast = {"--format", "json", "--set", "/simulation/mode=analytical"};
  std::vector<std::string> a = {"run", kQuickstart}, b = {"run", kYaml};
  a.insert(a.end(), fast.begin(), fast.end());
  b.insert(b.end(), fast.begin(), fast.end());
  const ChildResult json = run_hcsim(a), yaml = run_hcsim(b);
  ASSERT_EQ(json.exit_code, 0) << describe(json);
  ASSERT_EQ(yaml.exit_code, 0) << describe(yaml);
  EXPECT_FALSE(json.out.empty());
  EXPECT_EQ(yaml.out, json.out);
  EXPECT_EQ(yaml.err, "");
}

TEST(ScenarioInput, YamlSyntaxErrorIsExitTwoWithLineAndColumn) {
  TempDir dir;
  const std::string f = dir.file("bad.yaml");
  write(f, "cluster:\n  pools: [1, 2\nworkload: {}\n");
  const ChildResult r = run_hcsim({"validate", f});
  EXPECT_EQ(r.exit_code, 2) << describe(r);
  EXPECT_EQ(r.out, "");
  const auto err = lines_of(r.err);
  ASSERT_EQ(err.size(), 1u) << r.err;
  EXPECT_TRUE(err[0].starts_with(f + ":: invalid YAML at line 3, column ")) << err[0];
}

TEST(ScenarioInput, YamlMistakesHaveTheJsonPointers) {
  TempDir dir;
  const std::string f = dir.file("s.yml");
  std::string text = read_file(kYaml);
  text.replace(text.find("micro_batch"), 11, "micro_bach");
  write(f, text);
  const ChildResult r = run_hcsim({"validate", f});
  EXPECT_EQ(r.exit_code, 2) << describe(r);
  EXPECT_THAT(r.err, HasSubstr(f + ":/workload/micro_bach: unknown key \"micro_bach\"; did you mean \"micro_batch\"?"));
}

TEST(ScenarioInput, JsonWithCommentsRuns) {
  TempDir dir;
  const std::string f = dir.file("s.json");
  std::string text = read_file(kQuickstart);
  text.insert(text.find("\"cluster\""), "// the devices /* and { brackets\n  /* block\n  comment */ ");
  write(f, text);
  const ChildResult r = run_hcsim({"validate", f});
  EXPECT_EQ(r.exit_code, 0) << describe(r);
}

// Warnings are not lost when the scenario also has errors: a memory bandwidth of 2000 B/s (a
// plain number far below every preset: a warning) and tp = 0 (an error) in one file.
TEST(ScenarioInput, WarningsArePrintedBeforeTheErrors) {
  const std::vector<std::string> args = {"validate", kQuickstart, "--set", "/cluster/pools/0/overrides/memory_bandwidth=2000",
                                         "--set", "/strategy/tp=0"};
  const ChildResult r = run_hcsim(args);
  EXPECT_EQ(r.exit_code, 2) << describe(r);
  EXPECT_EQ(r.out, "");
  const auto err = lines_of(r.err);
  ASSERT_EQ(err.size(), 2u) << r.err;
  EXPECT_TRUE(err[0].starts_with("warning: " + kQuickstart + ":/cluster/pools/0/overrides/memory_bandwidth: ")) << err[0];
  EXPECT_TRUE(err[1].starts_with(kQuickstart + ":/strategy/tp: must be ")) << err[1];

  std::vector<std::string> strict = args;
  strict.push_back("--strict");
  const ChildResult s = run_hcsim(strict);
  EXPECT_EQ(s.exit_code, 2) << describe(s);
  const auto serr = lines_of(s.err);
  ASSERT_EQ(serr.size(), 2u) << s.err;
  EXPECT_TRUE(serr[0].starts_with(kQuickstart + ":/strategy/tp: must be ")) << serr[0];
  EXPECT_TRUE(serr[1].starts_with(kQuickstart + ":/cluster/pools/0/overrides/memory_bandwidth: ")) << serr[1];
}

}  // namespace
}  // namespace hcsim::test
