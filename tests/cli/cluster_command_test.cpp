// `hcsim cluster run` and `hcsim cluster jobs` (docs/cluster.md): reports written whole and
// the same bytes on every run; bad inputs named at their JSON path with exit code 2.
#include <fstream>
#include <string>
#include <vector>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "hcsim_child.hpp"

namespace hcsim::test {
namespace {

const std::string kCluster = std::string(HCSIM_SOURCE_DIR) + "/scenarios/cluster/";

void write_text(const std::string& path, const std::string& text) { std::ofstream(path) << text; }

TEST(ClusterCommand, WritesEveryReportAndTheSameBytesTwice) {
  TempDir dir;
  for (const char* out : {"a", "b"}) {
    const ChildResult r =
        run_hcsim({"cluster", "run", kCluster + "small.json", kCluster + "small-jobs.json", "--out", dir.file(out)});
    ASSERT_EQ(r.exit_code, 0) << describe(r);
    EXPECT_NE(r.out.find("completed        5 of 5"), std::string::npos) << r.out;
  }
  for (const char* f : {"report.json", "jobs.csv", "pools.csv", "report.html"}) {
    const std::string a = read_file(dir.file(std::string("a/") + f));
    EXPECT_FALSE(a.empty()) << f;
    EXPECT_EQ(a, read_file(dir.file(std::string("b/") + f))) << f;
  }
  const auto rep = nlohmann::json::parse(read_file(dir.file("a/report.json")));
  EXPECT_EQ(rep["jobs"].size(), 5u);
  EXPECT_EQ(rep["totals"]["completed"], 5);
  // jobs.csv: a header and one row a job.
  const std::string csv = read_file(dir.file("a/jobs.csv"));
  EXPECT_EQ(std::count(csv.begin(), csv.end(), '\n'), 6);
  const std::string html = read_file(dir.file("a/report.html"));
  for (const char* id : {"id=\"gantt\"", "id=\"utilisation-h100\"", "id=\"utilisation-a100\""})
    EXPECT_NE(html.find(id), std::string::npos) << id;
}

struct BadClusterInput {
  const char* what;
  std::string cluster_set;  // an override of the cluster file ("" for none)
  std::string jobs;         // a job list's JSON ("" for the shipped one)
  std::string expect;       // in standard error
};

TEST(ClusterCommand, BadInputNamesItsPathWithExitCodeTwo) {
  const std::string good = read_file(kCluster + "small-jobs.json");
  auto edited = [&](const std::string& ptr, const nlohmann::json& v) {
    auto doc = nlohmann::json::parse(good);
    doc[nlohmann::json::json_pointer(ptr)] = v;
    return doc.dump();
  };
  auto removed = [&](const std::string& parent, const std::string& key) {
    auto doc = nlohmann::json::parse(good);
    doc[nlohmann::json::json_pointer(parent)].erase(key);
    return doc.dump();
  };
  const std::vector<BadClusterInput> cases = {
      {"unknown scheduler", "/scheduler={\"type\": \"lotery\"}", "", ":/scheduler/type: unknown"},
      {"misspelt cluster key", "/simulation/horizn=\"2 d\"", "", ":/simulation/horizn: unknown key"},
      {"partial node",
       "/cluster/pools=[{\"name\": \"h100\", \"preset\": \"nvidia-h100-sxm5\", \"count\": 36}, "
       "{\"name\": \"a100\", \"preset\": \"nvidia-a100-80gb-sxm\", \"count\": 28}]",
       "", ":/cluster/pools/0/count: a shared cluster's pools hold whole nodes"},
      {"one-job topology",
       "/cluster/topology={\"type\": \"nvswitch-cluster\", \"fabric\": \"torus\", \"fabric_dims\": [2, 2, 2]}", "",
       ":/cluster/topology/fabric: a torus of nodes is sized for one job"},
      {"unknown workload", "", edited("/jobs/1/workload", "gpt-2"),
       "small-jobs.json:/jobs/1/workload: no workload named"},
      {"size off the model-parallel degree", "", edited("/jobs/0/devices", 18),
       ":/jobs/0/devices: 18 devices is not a multiple"},
      {"duration without pool", "", removed("/jobs/2/work", "pool"), ":/jobs/2/work/pool: duration needs the pool"},
      {"two kinds of work", "", edited("/jobs/0/work/tokens", 1e9), ":/jobs/0/work: give exactly one of"},
      {"unknown pool", "", edited("/jobs/4/pools", nlohmann::json::array({"v100"})), ":/jobs/4/pools/0: no pool named"},
      {"workload that cannot be built", "", edited("/workloads/gpt-1.3b/strategy/sp", true),
       ":/workloads/gpt-1.3b/strategy/sp: unknown key"},
  };
  TempDir dir;
  for (const BadClusterInput& c : cases) {
    std::string jobs = kCluster + "small-jobs.json";
    if (!c.jobs.empty()) {
      jobs = dir.file("small-jobs.json");
      write_text(jobs, c.jobs);
    }
    std::vector<std::string> args{"cluster", "run", kCluster + "small.json", jobs, "--out", dir.file("out")};
    if (!c.cluster_set.empty()) args.insert(args.end(), {"--set", c.cluster_set});
    const ChildResult r = run_hcsim(args);
    EXPECT_EQ(r.exit_code, 2) << c.what << ": " << describe(r);
    EXPECT_NE(r.err.find(c.expect), std::string::npos) << c.what << ": " << r.err;
    EXPECT_EQ(r.out, "") << c.what;
  }
  EXPECT_FALSE(std::ifstream(dir.file("out/report.json")).good());  // nothing written, not even in part
}

// --scheduler names the scheduler and --set its parameters, in either order on the line.
TEST(ClusterCommand, SchedulerOptionTakesItsParametersFromSet) {
  const ChildResult r = run_hcsim({"cluster", "run", kCluster + "small.json", kCluster + "small-jobs.json", "--set",
                                   "/scheduler/preempt=true", "--scheduler", "srtf", "--format", "json"});
  ASSERT_EQ(r.exit_code, 0) << describe(r);
  const auto rep = nlohmann::json::parse(r.out);
  EXPECT_EQ(rep["scheduler"], "srtf");
  EXPECT_EQ(rep["scheduler_resolved"]["preempt"], true);
}

TEST(ClusterCommand, JobsFromTheSampleTraceAreTheSameBytesForOneSeed) {
  TempDir dir;
  for (const char* out : {"a.json", "b.json"}) {
    const ChildResult r = run_hcsim({"cluster", "jobs", kCluster + "sample-trace", kCluster + "trace-mapping.json",
                                     "--draw", "50", "--days", "3", "--seed", "7", "--out", dir.file(out)});
    ASSERT_EQ(r.exit_code, 0) << describe(r);
  }
  const std::string a = read_file(dir.file("a.json"));
  EXPECT_EQ(a, read_file(dir.file("b.json")));
  EXPECT_EQ(nlohmann::json::parse(a)["jobs"].size(), 50u);
  // The shipped 1,000-job list is this command's output for seed 1 over 30 days.
  const ChildResult r = run_hcsim({"cluster", "jobs", kCluster + "sample-trace", kCluster + "trace-mapping.json",
                                   "--draw", "1000", "--days", "30", "--seed", "1"});
  ASSERT_EQ(r.exit_code, 0) << describe(r);
  EXPECT_EQ(r.out, read_file(kCluster + "mixed-4096-jobs.json"));
}

}  // namespace
}  // namespace hcsim::test
