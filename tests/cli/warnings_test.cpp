// The warnings channel on the command line (sim/cli/warnings.hpp, docs/robustness.md):
// a warning is one line "warning: FILE:/json/pointer: message" on standard error, the run
// goes on with the value as written and standard output carries only the report; with
// --strict the same lines, without the prefix, are errors: exit 2, nothing on standard
// output, no file written. The example is the reported one: --set .../nvlink/bandwidth=600.
#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "hcsim_child.hpp"
#include "../support/paths.hpp"

namespace hcsim::test {
namespace {

using ::testing::HasSubstr;

const std::string kSet600 = "/cluster/topology/nvlink/bandwidth=600";
const std::string kLine = kQuickstart + ":/cluster/topology/nvlink/bandwidth: 600 is read as 600 B/s";

TEST(CliWarnings, RunWarnsOnceAndReportsAsWritten) {
  TempDir dir;
  const ChildResult r = run_hcsim({"run", kQuickstart, "--set", kSet600, "--format", "json", "--out", dir.path()},
                                  {.timeout_s = 60});
  ASSERT_EQ(r.exit_code, 0) << describe(r);
  const auto err = lines_of(r.err);
  ASSERT_EQ(err.size(), 1u) << r.err;
  EXPECT_TRUE(err[0].starts_with("warning: " + kLine)) << err[0];
  EXPECT_THAT(err[0], HasSubstr("did you mean \"600 GB/s\"?"));
  // Standard output is the report alone, the very bytes written to report.json.
  EXPECT_EQ(r.out, read_file(dir.file("report.json")));
  EXPECT_EQ(r.out.find("warning"), std::string::npos);
  EXPECT_GT(nlohmann::json::parse(r.out)["step_time_s"].get<double>(), 1e3);  // 600 B/s, as the user wrote
}

TEST(CliWarnings, FlowScheduleOutsideFlowModeIsAWarning) {
  // simulation.flow_schedule applies to flow mode only (docs/scenario.md): given with event
  // mode (the quickstart's), a warning at its path and the run goes on; with flow mode, none.
  const std::string set = "/simulation/flow_schedule=phases";
  const ChildResult event = run_hcsim({"validate", kQuickstart, "--set", set}, {.timeout_s = 60});
  ASSERT_EQ(event.exit_code, 0) << describe(event);
  const auto err = lines_of(event.err);
  ASSERT_EQ(err.size(), 1u) << event.err;
  EXPECT_TRUE(err[0].starts_with("warning: " + kQuickstart + ":/simulation/flow_schedule: applies to flow mode only"))
      << err[0];
  const ChildResult flow =
      run_hcsim({"validate", kQuickstart, "--set", set, "--set", "/simulation/mode=flow"}, {.timeout_s = 60});
  ASSERT_EQ(flow.exit_code, 0) << describe(flow);
  EXPECT_EQ(flow.err, "");
}

TEST(CliWarnings, RepresentativeFlowsWhereNoneRunIsAWarning) {
  // simulation.representative_flows applies to event mode and flow mode by phases
  // (docs/scenario.md): in analytical mode or flow mode by steps a warning at its path;
  // in event mode (the quickstart's) and flow mode by phases, none.
  const std::string set = "/simulation/representative_flows=false";
  for (const std::vector<std::string>& mode :
       {std::vector<std::string>{"--set", "/simulation/mode=analytical"}, {"--set", "/simulation/mode=flow"}}) {
    std::vector<std::string> args{"validate", kQuickstart, "--set", set};
    args.insert(args.end(), mode.begin(), mode.end());
    const ChildResult r = run_hcsim(args, {.timeout_s = 60});
    ASSERT_EQ(r.exit_code, 0) << describe(r);
    const auto err = lines_of(r.err);
    ASSERT_EQ(err.size(), 1u) << r.err;
    EXPECT_TRUE(err[0].starts_with("warning: " + kQuickstart +
                                   ":/simulation/representative_flows: applies to event mode and flow mode by phases"))
        << err[0];
  }
  for (const std::vector<std::string>& mode :
       {std::vector<std::string>{}, {"--set", "/simulation/mode=flow", "--set", "/simulation/flow_schedule=phases"}}) {
    std::vector<std::string> args{"validate", kQuickstart, "--set", set};
    args.insert(args.end(), mode.begin(), mode.end());
    const ChildResult r = run_hcsim(args, {.timeout_s = 60});
    ASSERT_EQ(r.exit_code, 0) << describe(r);
    EXPECT_EQ(r.err, "");
  }
}

TEST(CliWarnings, StrictRunIsExitTwoAndWritesNothing) {
  TempDir dir;
  const std::string out = dir.file("out");
  const std::string trace = dir.file("trace.json");
  const ChildResult r =
      run_hcsim({"run", kQuickstart, "--set", kSet600, "--strict", "--out", out, "--trace", trace});
  EXPECT_EQ(r.exit_code, 2) << describe(r);
  EXPECT_EQ(r.out, "");
  const auto err = lines_of(r.err);
  ASSERT_EQ(err.size(), 1u) << r.err;
  EXPECT_TRUE(err[0].starts_with(kLine)) << err[0];
  EXPECT_FALSE(file_exists(out));
  EXPECT_FALSE(file_exists(trace));
}

TEST(CliWarnings, StrictOnEveryScenarioCommand) {
  const std::vector<std::vector<std::string>> cmds{
      {"validate", kQuickstart}, {"topo", kQuickstart}, {"collective", kQuickstart, "--max", "1 MiB"}};
  for (auto args : cmds) {
    args.insert(args.end(), {"--set", kSet600});
    const ChildResult warned = run_hcsim(args, {.timeout_s = 60});
    EXPECT_EQ(warned.exit_code, 0) << args[0] << ": " << describe(warned);
    EXPECT_TRUE(warned.err.starts_with("warning: " + kLine)) << args[0] << ": " << warned.err;
    args.push_back("--strict");
    const ChildResult strict = run_hcsim(args);
    EXPECT_EQ(strict.exit_code, 2) << args[0] << ": " << describe(strict);
    EXPECT_EQ(strict.out, "") << args[0];
    EXPECT_TRUE(strict.err.starts_with(kLine)) << args[0] << ": " << strict.err;
  }
  // Every command that reads a scenario offers the flag.
  for (const char* c : {"run", "validate", "topo", "collective", "validate-suite", "sweep", "search", "check"}) {
    const ChildResult h = run_hcsim({c, "--help"});
    EXPECT_THAT(h.out, HasSubstr("--strict")) << c;
  }
}

TEST(CliWarnings, CleanScenarioUnderStrictRuns) {
  const ChildResult r = run_hcsim({"validate", kQuickstart, "--strict"});
  EXPECT_EQ(r.exit_code, 0) << describe(r);
  EXPECT_EQ(r.err, "");
}

TEST(CliWarnings, WarningsComeInParseOrder) {
  const ChildResult r = run_hcsim({"validate", kQuickstart, "--set", "/cluster/topology/nic/bandwidth=25",
                                   "--set", "/cluster/pools/0/overrides/memory_capacity=80 Gb", "--set", kSet600});
  ASSERT_EQ(r.exit_code, 0) << describe(r);
  const auto err = lines_of(r.err);
  ASSERT_EQ(err.size(), 3u) << r.err;
  EXPECT_THAT(err[0], HasSubstr(":/cluster/pools/0/overrides/memory_capacity: \"80 Gb\" is read as 80 gigabits"));
  EXPECT_THAT(err[1], HasSubstr(":/cluster/topology/nvlink/bandwidth: "));
  EXPECT_THAT(err[2], HasSubstr(":/cluster/topology/nic/bandwidth: 25 is read as 25 B/s"));
  EXPECT_EQ(run_hcsim({"validate", kQuickstart, "--set", "/cluster/topology/nic/bandwidth=25", "--set",
                       "/cluster/pools/0/overrides/memory_capacity=80 Gb", "--set", kSet600}).err,
            r.err);
}

}  // namespace
}  // namespace hcsim
