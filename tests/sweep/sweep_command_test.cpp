// `hcsim sweep` end to end (sim/cli/sweep_command.cpp, sim/sweep/sweep_runner.cpp): a
// sweep killed half-way and resumed ends with the very bytes of an uninterrupted run;
// shards partition the points; bad input is exit code 2. The reference for "the right
// bytes" is the uninterrupted single-worker run itself.
#include <signal.h>

#include <algorithm>
#include <chrono>
#include <sstream>
#include <thread>

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include "support/run_binary.hpp"

namespace hcsim::test {
namespace {

using ::testing::HasSubstr;

const std::string kSweeps = std::string(HCSIM_SOURCE_DIR) + "/scenarios/sweeps";

std::size_t count_lines(const std::string& text) { return static_cast<std::size_t>(std::count(text.begin(), text.end(), '\n')); }

TEST(SweepCommand, KilledHalfWayAndResumedEqualsAnUninterruptedRun) {
  ScratchDir dir("hcsim-sweep-resume");
  const std::string sweep = kSweeps + "/tiny-gpt-200.json";
  const RunResult ref = hcsim({"sweep", sweep, "--out", dir / "ref", "-q"}, dir);
  ASSERT_EQ(ref.rc, 0) << ref.err;
  ASSERT_EQ(count_lines(slurp(dir / "ref/results.jsonl")), 200u);

  // Two workers, SIGKILL to the whole process group once about half the points are on disk.
  const pid_t pid = start_hcsim({"sweep", sweep, "--out", dir / "cut", "-q", "-j", "2"}, dir / "cut.out", dir / "cut.err");
  ASSERT_GT(pid, 0);
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(60);
  while (count_lines(slurp(dir / "cut/results.jsonl")) < 100 && std::chrono::steady_clock::now() < deadline)
    std::this_thread::sleep_for(std::chrono::milliseconds(2));
  ::kill(-pid, SIGKILL);
  EXPECT_EQ(wait_exit(pid), 128 + SIGKILL);
  const std::string cut = slurp(dir / "cut/results.jsonl");
  const std::size_t done = count_lines(cut);
  ASSERT_GE(done, 100u);
  ASSERT_LT(done, 200u) << "the sweep finished before it could be killed";
  // Out of order already (two workers), and a write torn by the kill in both files.
  std::ofstream(dir / "cut/results.jsonl", std::ios::app) << R"({"index":199,"status":"ok","par)";
  std::ofstream(dir / "cut/results.csv", std::ios::app) << "199,ok,76";

  const RunResult resumed = hcsim({"sweep", sweep, "--out", dir / "cut", "-q", "-j", "2"}, dir);
  ASSERT_EQ(resumed.rc, 0) << resumed.err;
  EXPECT_THAT(resumed.out, HasSubstr(std::to_string(done) + " already done, " + std::to_string(200 - done) + " run"));
  EXPECT_EQ(slurp(dir / "cut/results.jsonl"), slurp(dir / "ref/results.jsonl"));
  EXPECT_EQ(slurp(dir / "cut/results.csv"), slurp(dir / "ref/results.csv"));
  EXPECT_EQ(slurp(dir / "cut/base_scenario.json"), slurp(dir / "ref/base_scenario.json"));

  // Infeasible points are rows with their reason, not crashes: 25 batch, 25 memory (the sweep file).
  const std::string csv = slurp(dir / "ref/results.csv");
  EXPECT_EQ(count_lines(csv), 201u);
  std::size_t batch = 0, memory = 0;
  for (std::size_t p = csv.find(",infeasible,"); p != std::string::npos; p = csv.find(",infeasible,", p + 1)) {
    const std::string row = csv.substr(p, csv.find('\n', p) - p);
    batch += row.find("is not divisible by micro_batch*dp") != std::string::npos;
    memory += row.find("does not fit in memory") != std::string::npos;
  }
  EXPECT_EQ(batch, 25u);
  EXPECT_EQ(memory, 25u);
}

TEST(SweepCommand, ShardsPartitionThePointsAndResumeSkipsFinishedOnes) {
  ScratchDir dir("hcsim-sweep-shard");
  const std::string sweep = kSweeps + "/tiny-gpt-layouts.json";
  const RunResult all = hcsim({"sweep", sweep, "--out", dir / "all", "-q"}, dir);
  ASSERT_EQ(all.rc, 0) << all.err;
  EXPECT_THAT(all.out, HasSubstr("sweep: 46 points, 0 already done, 46 run (42 ok, 4 infeasible, 0 errors)"));
  for (const char* s : {"0/3", "1/3", "2/3"}) {
    const RunResult r = hcsim({"sweep", sweep, "--out", dir / "shards", "-q", "--shard", s}, dir);
    ASSERT_EQ(r.rc, 0) << r.err;
  }
  // Three shards into one directory: each run adds its points to the others' and the files
  // end sorted, equal to the unsharded run.
  EXPECT_EQ(slurp(dir / "shards/results.jsonl"), slurp(dir / "all/results.jsonl"));
  EXPECT_EQ(slurp(dir / "shards/results.csv"), slurp(dir / "all/results.csv"));
  const RunResult again = hcsim({"sweep", sweep, "--out", dir / "all", "-q", "-j", "2"}, dir);
  ASSERT_EQ(again.rc, 0);
  EXPECT_THAT(again.out, HasSubstr("46 already done, 0 run"));
}

// strategy.ep is swept as any strategy key (a JSON pointer into the scenario): each point
// runs its own expert parallelism, and the layout rules refuse the ep that do not divide the
// 8 experts or a stage's 8 devices (scenarios/sweeps/tiny-moe-ep.json).
TEST(SweepCommand, ExpertParallelismIsSweptLikeAnyStrategyKey) {
  ScratchDir dir("hcsim-sweep-ep");
  const RunResult r = hcsim({"sweep", kSweeps + "/tiny-moe-ep.json", "--out", dir / "out", "-q", "-j", "2"}, dir);
  ASSERT_EQ(r.rc, 0) << r.err;
  std::vector<nlohmann::json> rec;
  std::istringstream in(slurp(dir / "out/results.jsonl"));
  for (std::string line; std::getline(in, line);) rec.push_back(nlohmann::json::parse(line));
  ASSERT_EQ(rec.size(), 6u);
  const std::vector<int> values = {1, 2, 3, 4, 8, 16};
  for (std::size_t i = 0; i < rec.size(); ++i) {
    EXPECT_EQ(rec[i]["params"]["/strategy/ep"], values[i]);
    EXPECT_EQ(rec[i]["status"], values[i] == 3 || values[i] == 16 ? "infeasible" : "ok") << values[i];
  }
  EXPECT_THAT(rec[2]["reason"].get<std::string>(),
              HasSubstr("/strategy/ep: the model's 8 experts are not divisible by ep = 3"));
  EXPECT_THAT(rec[5]["reason"].get<std::string>(),
              HasSubstr("/strategy/ep: the model's 8 experts are not divisible by ep = 16"));
  // Each point's own ep: ep 1 has no all-to-all, ep 2..8 do; the experts' memory per device
  // falls as ep grows (E / ep experts each).
  const auto& m1 = rec[0]["metrics"];
  EXPECT_EQ(m1["comm_bytes.ep"].get<double>(), 0.0);
  EXPECT_EQ(m1["breakdown.exposed_comm_s.ep"].get<double>(), 0.0);
  double memory = m1["memory.peak_bytes"].get<double>();
  for (std::size_t i : {1u, 3u, 4u}) {
    const auto& m = rec[i]["metrics"];
    EXPECT_GT(m["comm_bytes.ep"].get<double>(), 0.0) << values[i];
    EXPECT_LT(m["memory.peak_bytes"].get<double>(), memory) << values[i];
    memory = m["memory.peak_bytes"].get<double>();
  }
}

TEST(SweepCommand, BadInputIsExitCodeTwoWithThePath) {
  ScratchDir dir("hcsim-sweep-bad");
  spit(dir / "bad.json", R"({"base": ")" + kSweeps + R"(/tiny-gpt.json", "axes": [{"path": "/strategy/tp"}]})");
  RunResult r = hcsim({"sweep", dir / "bad.json", "--out", dir / "o"}, dir);
  EXPECT_EQ(r.rc, 2);
  EXPECT_THAT(r.err, HasSubstr("bad.json:/axes/0: give exactly one of \"values\" (a list) and \"range\""));
  r = hcsim({"sweep", kSweeps + "/tiny-gpt-layouts.json", "--shard", "3/3"}, dir);
  EXPECT_EQ(r.rc, 2);
  EXPECT_THAT(r.err, HasSubstr("--shard expects i/n with 0 <= i < n"));
  // Results of another sweep in the output directory are refused, not mixed in.
  spit(dir / "other.json", R"({"base": ")" + kSweeps + R"(/tiny-gpt.json", "axes": [{"path": "/strategy/tp", "values": [8]}],
                              "derived": {"/strategy/dp": "1"}})");
  std::filesystem::create_directories(dir / "o");
  spit(dir / "o/results.jsonl", R"({"index":0,"status":"ok","params":{"/strategy/tp":2},"metrics":{}})" "\n");
  r = hcsim({"sweep", dir / "other.json", "--out", dir / "o"}, dir);
  EXPECT_EQ(r.rc, 2);
  EXPECT_THAT(r.err, HasSubstr("results.jsonl line 1: point 0 has parameters {\"/strategy/tp\":2} but this sweep's "
                               "point 0 has {\"/strategy/tp\":8,\"/strategy/dp\":1}"));
}

}  // namespace
}  // namespace hcsim::test
