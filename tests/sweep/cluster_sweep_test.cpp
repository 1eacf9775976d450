// Cluster sweeps (`"cluster_base"` + `"jobs"` in a sweep file, docs/sweeps.md "Cluster
// studies"): each point is the cluster study `hcsim cluster run` runs for the same inputs.
// The reference for a point's figures is that command itself, run on the cluster file with
// the point's values given by --scheduler and --set (scenarios/cluster/small.json and its
// 5 jobs, 0.3 s a study); for the bytes, the single-worker run.
#include <sstream>

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include "sim/core/error.hpp"
#include "sim/sweep/sweep_spec.hpp"
#include "support/run_binary.hpp"

namespace hcsim::test {
namespace {

using ::testing::HasSubstr;

const std::string kRoot = HCSIM_SOURCE_DIR;
const std::string kSweep = kRoot + "/scenarios/sweeps/cluster-schedulers.json";
const std::string kCluster = kRoot + "/scenarios/cluster/small.json";
const std::string kJobs = kRoot + "/scenarios/cluster/small-jobs.json";

std::vector<nlohmann::json> records(const std::string& jsonl) {
  std::vector<nlohmann::json> out;
  std::istringstream in(jsonl);
  for (std::string line; std::getline(in, line);) out.push_back(nlohmann::json::parse(line));
  return out;
}

// A sweep file over the small cluster with these axes (a JSON list).
std::string small_sweep(const std::string& axes) {
  return R"({"cluster_base": ")" + kCluster + R"(", "jobs": ")" + kJobs + R"(", "axes": )" + axes + "}";
}

TEST(ClusterSweep, EachPointEqualsHcsimClusterRunForTheSameInputs) {
  ScratchDir dir("hcsim-cluster-sweep");
  const RunResult r = hcsim({"sweep", kSweep, "--out", dir / "out", "-q", "-j", "2"}, dir);
  ASSERT_EQ(r.rc, 0) << r.err;
  EXPECT_THAT(r.out, HasSubstr("sweep: 10 points, 0 already done, 10 run (10 ok, 0 infeasible, 0 errors)"));
  const auto rec = records(slurp(dir / "out/results.jsonl"));
  ASSERT_EQ(rec.size(), 10u);
  for (const auto& p : rec) {
    const std::string scheduler = p["params"]["/scheduler/type"].get<std::string>();
    const std::string a100 = p["params"]["/cluster/pools/1/count"].dump();
    const RunResult ref = hcsim({"cluster", "run", kCluster, kJobs, "--scheduler", scheduler, "--set",
                                 "/cluster/pools/1/count=" + a100, "--format", "json"},
                                dir);
    ASSERT_EQ(ref.rc, 0) << ref.err;
    const auto rep = nlohmann::json::parse(ref.out);
    SCOPED_TRACE(scheduler + ", " + a100 + " A100");
    ASSERT_EQ(p["status"], "ok");
    EXPECT_EQ(p["metrics"]["totals.mean_completion"], rep["totals"]["mean_completion"]);
    EXPECT_EQ(p["metrics"]["totals.makespan"], rep["totals"]["makespan"]);
    EXPECT_EQ(p["metrics"]["util_a100"], rep["pools"][1]["utilisation"]);
    // The record keeps the report's totals and pools, not its per-job and timeline arrays.
    EXPECT_EQ(p["study"]["totals"], rep["totals"]);
    EXPECT_EQ(p["study"]["pools"], rep["pools"]);
    EXPECT_EQ(p["study"]["scheduler"], scheduler);
    EXPECT_FALSE(p["study"].contains("jobs"));
    EXPECT_FALSE(p["study"].contains("timeline"));
  }
  // The scheduler is each point's own: on 32 A100 the priority scheduler runs job e (priority
  // 1) first and finishes sooner on average than first in, first out.
  EXPECT_LT(rec[4]["metrics"]["totals.mean_completion"], rec[0]["metrics"]["totals.mean_completion"]);
  EXPECT_EQ(slurp(dir / "out/base_cluster.json"), nlohmann::json::parse(slurp(kCluster)).dump(2) + "\n");
}

TEST(ClusterSweep, SameBytesWithOneAndTwoWorkersAndResumeRunsNothing) {
  ScratchDir dir("hcsim-cluster-sweep-j");
  // Four points (two schedulers on both A100 pool sizes): two for each worker.
  spit(dir / "s.json", small_sweep(R"([{"path": "/scheduler/type", "values": ["fifo", "priority"]},
                                       {"path": "/cluster/pools/1/count", "values": [32, 64]}])"));
  const RunResult one = hcsim({"sweep", dir / "s.json", "--out", dir / "one", "-q"}, dir);
  ASSERT_EQ(one.rc, 0) << one.err;
  const RunResult two = hcsim({"sweep", dir / "s.json", "--out", dir / "two", "-q", "-j", "2"}, dir);
  ASSERT_EQ(two.rc, 0) << two.err;
  EXPECT_EQ(slurp(dir / "one/results.jsonl"), slurp(dir / "two/results.jsonl"));
  EXPECT_EQ(slurp(dir / "one/results.csv"), slurp(dir / "two/results.csv"));
  EXPECT_THAT(slurp(dir / "one/results.csv"),
              HasSubstr("index,status,scheduler.type,cluster.pools.1.count,totals.completed,totals.makespan,"));
  const RunResult again = hcsim({"sweep", dir / "s.json", "--out", dir / "two", "-q", "-j", "2"}, dir);
  ASSERT_EQ(again.rc, 0) << again.err;
  EXPECT_THAT(again.out, HasSubstr("4 already done, 0 run"));
}

TEST(ClusterSweep, BadBaseIsExitCodeTwoWithThePath) {
  ScratchDir dir("hcsim-cluster-sweep-bad");
  const std::string axes = R"([{"path": "/scheduler/type", "values": ["fifo"]}])";
  spit(dir / "missing.json", R"({"cluster_base": "nope.json", "jobs": ")" + kJobs + R"(", "axes": )" + axes + "}");
  RunResult r = hcsim({"sweep", dir / "missing.json", "--out", dir / "o"}, dir);
  EXPECT_EQ(r.rc, 2);
  EXPECT_THAT(r.err, HasSubstr("missing.json:/cluster_base: cluster " + dir / "nope.json"));

  spit(dir / "both.json", R"({"base": ")" + kRoot + R"(/scenarios/sweeps/tiny-gpt.json", "cluster_base": ")" +
                              kCluster + R"(", "jobs": ")" + kJobs + R"(", "axes": )" + axes + "}");
  r = hcsim({"sweep", dir / "both.json", "--out", dir / "o"}, dir);
  EXPECT_EQ(r.rc, 2);
  EXPECT_THAT(r.err, HasSubstr("both.json:/cluster_base: give either \"base\" (a scenario) or \"cluster_base\""));

  spit(dir / "neither.json", R"({"axes": )" + axes + "}");
  r = hcsim({"sweep", dir / "neither.json", "--out", dir / "o"}, dir);
  EXPECT_EQ(r.rc, 2);
  EXPECT_THAT(r.err, HasSubstr("neither.json:/base: missing"));

  spit(dir / "nojobs.json", R"({"cluster_base": ")" + kCluster + R"(", "jobs": "none.json", "axes": )" + axes + "}");
  r = hcsim({"sweep", dir / "nojobs.json", "--out", dir / "o"}, dir);
  EXPECT_EQ(r.rc, 2);
  EXPECT_THAT(r.err, HasSubstr("nojobs.json:/jobs: job list " + dir / "none.json"));

  // A misspelt pointer of the cluster file is refused before any point runs.
  spit(dir / "typo.json", small_sweep(R"([{"path": "/scheduler/tpye", "values": ["fifo"]}])"));
  r = hcsim({"sweep", dir / "typo.json", "--out", dir / "o"}, dir);
  EXPECT_EQ(r.rc, 2);
  EXPECT_THAT(r.err, HasSubstr("typo.json:/axes/0: pointer \"/scheduler/tpye\" is neither in the base cluster file "
                               "nor a field of a cluster file; did you mean \"/scheduler/type\"?"));
}

TEST(ClusterSweep, InvalidClusterPointIsAnInfeasibleRowNamingThePath) {
  ScratchDir dir("hcsim-cluster-sweep-infeasible");
  spit(dir / "s.json", small_sweep(R"([{"path": "/cluster/pools/1/count", "values": [32, 0]},
                                       {"points": [{"/scheduler/type": "fifo"}, {"/scheduler/type": "lottery"}]}])"));
  const RunResult r = hcsim({"sweep", dir / "s.json", "--out", dir / "o", "-q"}, dir);
  ASSERT_EQ(r.rc, 0) << r.err;
  EXPECT_THAT(r.out, HasSubstr("4 run (1 ok, 3 infeasible, 0 errors)"));
  const auto rec = records(slurp(dir / "o/results.jsonl"));
  ASSERT_EQ(rec.size(), 4u);
  EXPECT_EQ(rec[0]["status"], "ok");
  EXPECT_EQ(rec[1]["status"], "infeasible");
  EXPECT_THAT(rec[1]["reason"].get<std::string>(),
              HasSubstr("/scheduler/type: unknown cluster scheduler type \"lottery\""));
  EXPECT_FALSE(rec[1].contains("study"));
  EXPECT_FALSE(rec[1].contains("metrics"));
  EXPECT_EQ(rec[2]["status"], "infeasible");
  EXPECT_EQ(rec[2]["reason"], "/cluster/pools/1/count: must be between 1 and 4e+06, got 0");
  EXPECT_THAT(slurp(dir / "o/results.csv"),
              HasSubstr("2,infeasible,0,fifo,,,,,,,\"/cluster/pools/1/count: must be between 1 and 4e+06, got 0\"\n"));
}

TEST(ClusterSweep, SpecTakesTheJobListRelativeToTheSweepFileAndDefaultsToTheTotals) {
  const auto spec = sweep::parse_sweep(
      nlohmann::json::parse(R"({"cluster_base": "../cluster/small.json", "jobs": "../cluster/small-jobs.json",
                                 "axes": [{"path": "/scheduler/type", "values": ["fifo", "srtf"]}]})"),
      kSweep);
  EXPECT_TRUE(spec.cluster());
  EXPECT_EQ(spec.cluster_jobs, kRoot + "/scenarios/sweeps/../cluster/small-jobs.json");
  EXPECT_EQ(spec.base.doc["name"], "small-mixed-cluster");
  ASSERT_FALSE(spec.metrics.empty());
  EXPECT_EQ(spec.metrics[0].pointer, "/totals/completed");
  EXPECT_EQ(sweep::enumerate_points(spec).size(), 2u);
  // A scheduler parameter is checked against the scheduler type its own choice sets: srtf
  // takes "preempt", the base's fifo does not.
  const std::string base = R"({"cluster_base": "../cluster/small.json", "jobs": "../cluster/small-jobs.json", )";
  EXPECT_NO_THROW((void)sweep::parse_sweep(
      nlohmann::json::parse(base +
                            R"("axes": [{"points": [{"/scheduler/type": "srtf", "/scheduler/preempt": true}]}]})"),
      kSweep));
  try {
    (void)sweep::parse_sweep(
        nlohmann::json::parse(base + R"("axes": [{"path": "/scheduler/preempt", "values": [true]}]})"), kSweep);
    ADD_FAILURE() << "accepted";
  } catch (const InputError& e) {
    EXPECT_THAT(e.render(), HasSubstr("/axes/0: pointer \"/scheduler/preempt\" is neither in the base cluster file"));
  }
  // A job list without a cluster base is refused at its path.
  try {
    (void)sweep::parse_sweep(nlohmann::json::parse(R"({"base": {}, "jobs": "j.json", "axes": []})"), "s.json");
    ADD_FAILURE() << "accepted";
  } catch (const InputError& e) {
    EXPECT_THAT(e.render(), HasSubstr("/jobs: a job list goes with \"cluster_base\", not \"base\""));
  }
}

}  // namespace
}  // namespace hcsim::test
