// The command line's own help (sim/cli/cli.cpp): a misspelt subcommand named with the
// nearest one, --help with defaults and examples, --version, the bash completion script
// and the progress line of a run. Each expectation is the promise of README "Using it".
#include <fstream>
#include <regex>
#include <string>

#include <gtest/gtest.h>

#include "hcsim/version.hpp"
#include "sim/cli/cli.hpp"
#include "hcsim_child.hpp"
#include "../support/paths.hpp"

namespace hcsim::test {
namespace {

TEST(CliCommands, MisspeltCommandNamesTheNearest) {
  const ChildResult r = run_hcsim({"runn", "x.json"});
  EXPECT_EQ(r.exit_code, 2) << describe(r);
  EXPECT_EQ(r.err, "hcsim: unknown command \"runn\"; did you mean \"run\"?\n");
  EXPECT_EQ(r.out, "");
  EXPECT_EQ(run_hcsim({"serach"}).err, "hcsim: unknown command \"serach\"; did you mean \"search\"?\n");
}

TEST(CliCommands, UnrelatedWordListsEveryCommand) {
  const ChildResult r = run_hcsim({"frobnicate"});
  EXPECT_EQ(r.exit_code, 2) << describe(r);
  EXPECT_TRUE(r.err.starts_with("hcsim: unknown command \"frobnicate\"; valid ones are: check, cluster, collective, "))
      << r.err;
  for (const char* c : {"run", "sweep", "list", "completion", "validate-suite", "cluster"})
    EXPECT_NE(r.err.find(c), std::string::npos) << c;
}

TEST(CliHelp, RunHelpShowsDefaultsAndEndsWithExamples) {
  const ChildResult r = run_hcsim({"run", "--help"});
  EXPECT_EQ(r.exit_code, 0) << describe(r);
  EXPECT_NE(r.out.find("--max-tasks INT:POSITIVE=0"), std::string::npos) << r.out;  // a default value
  const auto at = r.out.find("Examples:\n  hcsim run scenarios/quickstart.json");
  ASSERT_NE(at, std::string::npos) << r.out;
  EXPECT_LT(r.out.rfind("Options:"), at) << "the examples are not at the end";
  EXPECT_EQ(r.out.find("\n  -", at), std::string::npos) << "an option after the examples";
}

TEST(CliHelp, EverySubcommandHasExamples) {
  // The subcommands `hcsim --help` lists (one process), each with its examples (the footer
  // of every subcommand comes from this table: cli.cpp).
  const ChildResult r = run_hcsim({"--help"});
  ASSERT_EQ(r.exit_code, 0) << describe(r);
  const auto ls = lines_of(r.out.substr(r.out.find("Subcommands:\n")));
  ASSERT_GT(ls.size(), 10u) << r.out;
  for (std::size_t i = 1; i < ls.size() && ls[i].starts_with("  "); ++i) {
    const std::string name = ls[i].substr(2, ls[i].find(' ', 2) - 2);
    EXPECT_EQ(command_examples().count(name), 1u) << name << " has no examples";
  }
  EXPECT_NE(run_hcsim({"sweep", "--help"}).out.find("-j,--jobs INT:INT in [1 - 1024]=1"), std::string::npos);
}

// SIMGRID_VERSION_MAJOR/MINOR/PATCH read from the header as text (no SimGrid include
// outside sim/engine: tests/layering.cmake).
std::string header_simgrid_version() {
  std::ifstream in(HCSIM_SIMGRID_VERSION_H);
  const std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  std::string v;
  for (const char* part : {"MAJOR", "MINOR", "PATCH"}) {
    std::smatch m;
    const std::regex re(std::string("#define SIMGRID_VERSION_") + part + R"(\s+(\d+))");
    EXPECT_TRUE(std::regex_search(text, m, re)) << part;
    v += (v.empty() ? "" : ".") + m[1].str();
  }
  return v;
}

TEST(CliVersion, NamesVersionCommitSimGridAndCompiler) {
  const ChildResult r = run_hcsim({"--version"});
  EXPECT_EQ(r.exit_code, 0) << describe(r);
  std::smatch m;
  const std::regex re(R"(hcsim (\d+\.\d+\.\d+)\ncommit   ([0-9a-f]{7,40}(-dirty)?|unknown|\S+)\n)"
                      R"(SimGrid  (\d+\.\d+\.\d+)\ncompiler (g\+\+|clang) \S.*\n)");
  ASSERT_TRUE(std::regex_match(r.out, m, re)) << r.out;
  EXPECT_EQ(m[1].str(), kVersion);
  EXPECT_EQ(m[2].str(), kGitCommit);
  EXPECT_EQ(m[4].str(), header_simgrid_version());
}

// What the completion function offers for the words typed (the last one being completed).
std::string complete(const std::string& words) {
  TempDir dir;
  const std::string script = dir.file("complete.sh");
  std::ofstream(script) << "source <(" << shell_quote(HCSIM_BINARY) << " completion bash)\n"
                        << "COMP_WORDS=(" << words << ")\nCOMP_CWORD=$(( ${#COMP_WORDS[@]} - 1 ))\n"
                        << "_hcsim\necho \"${COMPREPLY[@]}\"\n";
  const std::string cmd = "cd " + shell_quote(kSource) + " && bash " + shell_quote(script) + " > " +
                          shell_quote(dir.file("out")) + " 2>&1";
  EXPECT_EQ(std::system(cmd.c_str()), 0);
  return read_file(dir.file("out"));
}

TEST(CliCompletion, OffersCommandsOptionsChoicesAndCategories) {
  EXPECT_EQ(complete("hcsim ru"), "run\n");
  EXPECT_EQ(complete("hcsim run scenarios/quickstart.json --for"), "--format\n");
  EXPECT_EQ(complete("hcsim run x.json --format ''"), "table json\n");
  EXPECT_EQ(complete("hcsim sweep --j"), "--jobs\n");
  EXPECT_EQ(complete("hcsim list co"), "codecs\n");
  EXPECT_EQ(complete("hcsim run scenarios/quick"), "scenarios/quickstart.json\n");
  // After a flag, the scenario: .json files and directories, not scenarios/precision.cpp.
  EXPECT_EQ(complete("hcsim run --strict scenarios/pr"), "scenarios/predictions\n");
}

TEST(CliList, CodecsAndAlgorithmsFromTheBinary) {
  const ChildResult codecs = run_hcsim({"list", "codecs"});
  EXPECT_EQ(codecs.exit_code, 0) << describe(codecs);
  EXPECT_TRUE(codecs.out.starts_with("compression codecs\n  ")) << codecs.out;
  EXPECT_NE(codecs.out.find("    source: "), std::string::npos);
  const ChildResult algs = run_hcsim({"list", "algorithms"});
  EXPECT_EQ(algs.exit_code, 0) << describe(algs);
  EXPECT_TRUE(algs.out.starts_with("collective algorithms")) << algs.out;
  EXPECT_NE(algs.out.find("  ring — "), std::string::npos) << algs.out;
  const ChildResult bad = run_hcsim({"list", "codec"});
  EXPECT_EQ(bad.exit_code, 2) << describe(bad);
  EXPECT_NE(bad.err.find("unknown list \"codec\"; did you mean \"codecs\"? valid ones are: all, "), std::string::npos)
      << bad.err;
}

TEST(CliProgress, ProgressLineOnStderrLeavesStdoutAlone) {
  // The JSON report: the table's last line has the run's wall-clock time.
  const ChildResult plain = run_hcsim({"run", kQuickstart, "--format", "json"});
  const ChildResult shown = run_hcsim({"run", kQuickstart, "--format", "json", "--progress"});
  ASSERT_EQ(plain.exit_code, 0) << describe(plain);
  ASSERT_EQ(shown.exit_code, 0) << describe(shown);
  EXPECT_EQ(shown.out, plain.out);
  EXPECT_EQ(plain.err, "");
  const std::regex line(R"(run: (building the step|simulating, \d+/\d+ tasks \(\d+ %\), \S+ s simulated|reporting), )"
                        R"(\d+s elapsed)");
  const auto ls = lines_of(shown.err);
  ASSERT_GE(ls.size(), 2u) << shown.err;
  EXPECT_TRUE(std::regex_match(ls.front(), line)) << ls.front();
  EXPECT_TRUE(std::regex_match(ls.back(), std::regex(R"(run: done in \d+s)"))) << ls.back();
}

}  // namespace
}  // namespace hcsim::test
