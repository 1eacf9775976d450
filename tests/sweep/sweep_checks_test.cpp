// What a sweep, a search and a check are checked for before any point runs
// (sim/sweep/sweep_checks.hpp, docs/sweeps.md): an axis or derived pointer that names no
// scenario field is an error (exit 2) naming the axis, the pointer and the nearest valid
// one, where it once ran every point as "infeasible" and exited 0; the scenarios' warnings
// are printed once, and --strict makes them errors before anything is written.
#include <algorithm>
#include <filesystem>

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "scenarios/scenario.hpp"
#include "sim/sweep/sweep_checks.hpp"
#include "support/run_binary.hpp"
#include "../support/paths.hpp"

namespace hcsim::test {
namespace {

using ::testing::HasSubstr;
using json = nlohmann::json;

json tiny() { return read_json_file(kTiny); }

TEST(UnknownPointer, FieldsOfTheBaseOrTheSchemaAreKnown) {
  register_builtins();
  for (const char* p : {"/strategy/tp", "/strategy/zero", "/simulation/mode", "/workload/micro_batch",
                        "/cluster/pools/0/count", "/cluster/topology/nvlink/bandwidth",
                        "/cluster/pools/0/overrides/memory_bandwidth", "/strategy/fsdp/shard_group"})
    EXPECT_EQ(sweep::unknown_pointer(tiny(), p, 1), "") << p;
}

TEST(UnknownPointer, MisspeltKeysAreNamedWithTheNearestValidPointer) {
  register_builtins();
  struct Case { const char* ptr; json value; const char* nearest; };
  const Case cases[] = {
      {"/strategy/schedul", "gpipe", "/strategy/schedule"},                    // the schema's section keys
      {"/simulation/mdoe", "flow", "/simulation/mode"},
      {"/cluster/pools/0/overrides/memroy_bandwidth", "1 TB/s", "/cluster/pools/0/overrides/memory_bandwidth"},
      {"/cluster/topology/nvlnk/bandwidth", "1 TB/s", "/cluster/topology/nvlink/bandwidth"},  // open in the schema
  };
  for (const auto& c : cases) {
    const std::string why = sweep::unknown_pointer(tiny(), c.ptr, c.value);
    EXPECT_THAT(why, HasSubstr(std::string("pointer \"") + c.ptr +
                               "\" is neither in the base scenario nor in the scenario schema"));
    EXPECT_THAT(why, HasSubstr(std::string("did you mean \"") + c.nearest + "\"?"));
  }
  EXPECT_THAT(sweep::unknown_pointer(tiny(), "/nothing/like/it", 1), ::testing::Not(HasSubstr("did you mean")));
}

TEST(SweepChecks, MisspeltAxisIsExitTwoBeforeAnyPointRuns) {
  ScratchDir dir("hcsim-sweep-misspelt");
  spit(dir / "sweep.json", R"({"base": ")" + kTiny + R"(", "axes": [
      {"path": "/strategy/tp", "values": [1, 2]},
      {"path": "/strategy/schedul", "values": ["1f1b", "gpipe"]}]})");
  const RunResult r = hcsim({"sweep", dir / "sweep.json", "--out", dir / "out", "-q"}, dir);
  EXPECT_EQ(r.rc, 2) << r.out << r.err;
  EXPECT_THAT(r.err, HasSubstr(dir / "sweep.json" + ":/axes/1: pointer \"/strategy/schedul\" is neither in the "
                               "base scenario nor in the scenario schema; did you mean \"/strategy/schedule\"?"));
  EXPECT_EQ(r.out, "");
  EXPECT_FALSE(std::filesystem::exists(dir / "out"));
}

TEST(SweepChecks, MisspeltDerivedPointerIsAnError) {
  ScratchDir dir("hcsim-sweep-derived");
  spit(dir / "sweep.json", R"({"base": ")" + kTiny + R"(", "axes": [{"path": "/strategy/tp", "values": [1, 2]}],
      "derived": {"/strategy/dpp": "8 / /strategy/tp"}})");
  const RunResult r = hcsim({"sweep", dir / "sweep.json", "--out", dir / "out", "-q"}, dir);
  EXPECT_EQ(r.rc, 2) << r.err;
  EXPECT_THAT(r.err, HasSubstr(":/derived/~1strategy~1dpp: pointer \"/strategy/dpp\""));
}

TEST(SweepChecks, AxisValueWarnsOnceAndStrictWritesNothing) {
  ScratchDir dir("hcsim-sweep-warn");
  spit(dir / "sweep.json", R"({"base": ")" + kTiny + R"(", "axes": [
      {"path": "/strategy/tp", "values": [1, 2]},
      {"path": "/cluster/topology/nvlink/bandwidth", "values": ["600 GB/s", 600]}]})");  // tp = 1 points are infeasible (dp*tp*pp != 8): warned at tp = 2
  RunResult r = hcsim({"sweep", dir / "sweep.json", "--out", dir / "strict", "-q", "--strict"}, dir);
  EXPECT_EQ(r.rc, 2) << r.err;
  EXPECT_THAT(r.err, HasSubstr(kTiny + ":/cluster/topology/nvlink/bandwidth: 600 is read as 600 B/s"));
  EXPECT_FALSE(std::filesystem::exists(dir / "strict"));

  r = hcsim({"sweep", dir / "sweep.json", "--out", dir / "out", "-q"}, dir);
  EXPECT_EQ(r.rc, 0) << r.err;
  EXPECT_EQ(r.err, "warning: " + kTiny + ":/cluster/topology/nvlink/bandwidth: 600 is read as 600 B/s (a plain "
                   "number is in SI units), under 1/100 of the smallest of the shipped electrical link presets' "
                   "bandwidth (5 GB/s in ethernet-40g to 900 GB/s in nvlink5); did you mean \"600 GB/s\"?\n");
  EXPECT_THAT(r.out, HasSubstr("4 run (2 ok, 2 infeasible, 0 errors)"));
}

TEST(SweepChecks, SearchAndCheckReportTheirScenariosWarnings) {
  ScratchDir dir("hcsim-search-warn");
  json base = tiny();
  base["cluster"]["pools"][0]["overrides"] = {{"memory_capacity", "80 Gb"}};
  spit(dir / "base.json", base.dump());
  spit(dir / "search.json", R"({"base": "base.json", "max_devices": 8, "space": {"tp": [2], "pp": [2]}})");
  RunResult r = hcsim({"search", dir / "search.json", "--out", dir / "out", "-q", "--strict"}, dir);
  EXPECT_EQ(r.rc, 2) << r.out << r.err;
  EXPECT_THAT(r.err, HasSubstr(dir / "base.json" + ":/cluster/pools/0/overrides/memory_capacity: \"80 Gb\""));
  EXPECT_FALSE(std::filesystem::exists(dir / "out"));

  spit(dir / "expect.json", R"({"scenarios": {"a": "base.json"},
      "expectations": [{"name": "positive", "scenario": "a", "metric": "/step_time_s", "at_least": 0}]})");
  r = hcsim({"check", dir / "expect.json", "--strict", "--junit", dir / "junit.xml"}, dir);
  EXPECT_EQ(r.rc, 2) << r.out << r.err;
  EXPECT_THAT(r.err, HasSubstr(":/cluster/pools/0/overrides/memory_capacity: \"80 Gb\""));
  EXPECT_FALSE(std::filesystem::exists(dir / "junit.xml"));
}

TEST(SweepChecks, ShippedSweepsHaveKnownPointersAndNoWarnings) {
  namespace fs = std::filesystem;
  std::vector<fs::path> files;
  for (const auto& e : fs::recursive_directory_iterator(fs::path(HCSIM_SOURCE_DIR) / "scenarios"))
    if (e.is_regular_file() && e.path().extension() == ".json") files.push_back(e.path());
  std::sort(files.begin(), files.end());
  int sweeps = 0;
  for (const auto& f : files) {
    const json doc = read_json_file(f.string());
    if (!doc.is_object() || !doc.contains("axes")) continue;
    ++sweeps;
    try {
      const sweep::SweepSpec spec = sweep::load_sweep(f.string());
      for (const auto& w : sweep::sweep_warnings(spec, sweep::enumerate_points(spec)))
        ADD_FAILURE() << f.string() << ": warning " << w.path << ": " << w.message;
    } catch (const InputError& e) {
      ADD_FAILURE() << e.render();
    }
  }
  EXPECT_GE(sweeps, 3);
}

}  // namespace
}  // namespace hcsim::test
