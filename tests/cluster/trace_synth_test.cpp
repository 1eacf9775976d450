// synth_job_list / trace_job_list (sim/cluster/trace_synth.hpp) on the hand-written sample
// trace (scenarios/cluster/sample-trace): the draw is deterministic, keeps the trace's
// joint (GPU count, duration) pairs, spreads arrivals over the days asked, and maps sizes
// to workloads by the first covering rule.
#include "sim/cluster/trace_synth.hpp"

#include <gtest/gtest.h>

#include <cmath>
#include <set>
#include <utility>

#include "sim/core/error.hpp"

namespace hcsim {
namespace {

const std::vector<TraceJob>& sample() {
  static const auto t = read_pai_trace(std::string(HCSIM_SOURCE_DIR) + "/scenarios/cluster/sample-trace").jobs;
  return t;
}

TraceJobListParams params() {
  TraceJobListParams p;
  p.workloads = {{"small", {{"workload", {{"type", "transformer"}}}, {"strategy", {{"tp", 1}}}}},
                 {"medium", {{"workload", {{"type", "transformer"}}}, {"strategy", {{"tp", 8}}}}},
                 {"large", {{"workload", {{"type", "transformer"}}}, {"strategy", {{"tp", 8}, {"pp", 4}}}}}};
  p.rules = {{8, "small"}, {32, "medium"}, {1024, "large"}};
  p.gpus_per_node = 8;
  p.pool = "a100";
  return p;
}

double seconds_of(const nlohmann::json& s) {
  const auto text = s.get<std::string>();
  EXPECT_EQ(text.substr(text.size() - 2), " s");
  return std::stod(text.substr(0, text.size() - 2));
}

std::string expected_workload(std::uint32_t devices) {
  return devices <= 8 ? "small" : devices <= 32 ? "medium" : "large";
}

TEST(TraceSynth, SameSeedSameBytesOtherSeedOtherJobs) {
  const auto a = synth_job_list(sample(), {200, 7, 42}, params()).dump();
  const auto b = synth_job_list(sample(), {200, 7, 42}, params()).dump();
  const auto c = synth_job_list(sample(), {200, 7, 43}, params()).dump();
  EXPECT_EQ(a, b);
  EXPECT_NE(a, c);
}

TEST(TraceSynth, NJobsArrivingInOrderWithinTheDays) {
  const auto list = synth_job_list(sample(), {500, 30, 1}, params());
  ASSERT_EQ(list["jobs"].size(), 500u);
  EXPECT_EQ(list["workloads"], params().workloads);
  EXPECT_EQ(list["jobs"][0]["name"], "j0001");
  EXPECT_EQ(list["jobs"][499]["name"], "j0500");
  double last = 0;
  for (const auto& job : list["jobs"]) {
    const double t = seconds_of(job["arrival"]);
    EXPECT_GE(t, last);
    last = t;
    EXPECT_EQ(job["priority"], 0);
  }
  EXPECT_EQ(seconds_of(list["jobs"][0]["arrival"]), 0.0);
  // The gaps are scaled so the last job arrives at D days, floored to the millisecond.
  EXPECT_LE(last, 30 * 86400.0);
  EXPECT_GE(last, 30 * 86400.0 - 1e-3);
}

TEST(TraceSynth, EveryDrawIsATraceJobsSizeAndDurationRoundedToNodes) {
  std::set<std::pair<std::uint32_t, double>> pairs;  // (devices after rounding, duration)
  for (const auto& j : sample()) pairs.insert({round_to_nodes(j.gpus, 8), (j.end - j.start).value()});
  const auto list = synth_job_list(sample(), {1000, 5, 3}, params());
  std::set<std::uint32_t> seen;
  for (const auto& job : list["jobs"]) {
    const auto devices = job["devices"].get<std::uint32_t>();
    EXPECT_TRUE(pairs.count({devices, seconds_of(job["work"]["duration"])})) << job.dump();
    EXPECT_EQ(job["workload"], expected_workload(devices)) << job.dump();
    EXPECT_EQ(job["work"]["pool"], "a100");
    seen.insert(devices);
  }
  EXPECT_FALSE(seen.count(12u));  // the sample's 12-GPU job runs on two whole nodes
  EXPECT_TRUE(seen.count(16u));
  EXPECT_EQ(seen.size(), 7u);  // 1000 draws of 48 jobs miss none of the 7 sizes (1..64)
}

TEST(TraceSynth, MeanDurationMatchesTheTrace) {
  // The durations drawn are i.i.d. uniform picks of the trace's, so their mean has the
  // trace's mean and a standard error sigma / sqrt(N). Four standard errors (on the sample,
  // sigma is 1.4 x the mean, so 4 % of it at N = 20,000): a correct sampler fails for about
  // 1 seed in 16,000, while a draw skewed toward short or long jobs moves the mean by more.
  // (That each duration comes with its own job's size is checked pair by pair above.)
  const auto& t = sample();
  double mean = 0, sq = 0;
  for (const auto& j : t) mean += (j.end - j.start).value() / t.size();
  for (const auto& j : t) sq += std::pow((j.end - j.start).value() - mean, 2) / t.size();
  const std::size_t n = 20000;
  const auto list = synth_job_list(t, {n, 30, 11}, params());
  double drawn = 0;
  for (const auto& job : list["jobs"]) drawn += seconds_of(job["work"]["duration"]) / n;
  EXPECT_NEAR(drawn, mean, 4 * std::sqrt(sq / n));
}

TEST(TraceSynth, TraceJobListKeepsTheTraceAsItCame) {
  auto p = params();
  p.pool_by_gpu_type = {{"T4", "t4"}};
  const auto list = trace_job_list(sample(), p);
  ASSERT_EQ(list["jobs"].size(), sample().size());
  EXPECT_EQ(list["jobs"][0]["arrival"], "0 s");
  for (std::size_t i = 0; i < sample().size(); ++i)
    EXPECT_EQ(list["jobs"][i]["work"]["pool"], sample()[i].gpu_type == "T4" ? "t4" : "a100");
  // pai_job_table.csv line 11 (see trace_import_test): submitted 1774716, the first kept
  // job (line 1) at 1719370; its GPU task ran 1774749 to 1788989 on 16 GPUs.
  for (const auto& job : list["jobs"]) {
    if (job["name"] != "8d3a30c8edea0075f00d3f95") continue;
    EXPECT_EQ(job["arrival"], "55346 s");
    EXPECT_EQ(job["work"]["duration"], "14240 s");
    EXPECT_EQ(job["devices"], 16);
    EXPECT_EQ(job["workload"], "medium");
    return;
  }
  FAIL() << "job 8d3a30c8edea0075f00d3f95 missing";
}

TEST(TraceSynth, RoundingAndRules) {
  EXPECT_EQ(round_to_nodes(3, 8), 3u);
  EXPECT_EQ(round_to_nodes(8, 8), 8u);
  EXPECT_EQ(round_to_nodes(12, 8), 16u);
  EXPECT_EQ(round_to_nodes(17, 8), 24u);
  EXPECT_EQ(round_to_nodes(5, 4), 8u);
  const std::vector<TraceWorkloadRule> rules{{8, "small"}, {32, "medium"}};
  EXPECT_EQ(workload_for(rules, 1), "small");
  EXPECT_EQ(workload_for(rules, 8), "small");
  EXPECT_EQ(workload_for(rules, 9), "medium");
  EXPECT_EQ(workload_for(rules, 64), "");
  EXPECT_EQ(seconds_text(3600), "3600 s");
  EXPECT_EQ(seconds_text(12.5), "12.5 s");
  EXPECT_EQ(seconds_text(0.0001), "0 s");
  EXPECT_EQ(seconds_text(1e6), "1000000 s");
}

std::vector<Issue> issues_of(const std::vector<TraceJob>& trace, TraceSynthParams s, const TraceJobListParams& p) {
  try {
    synth_job_list(trace, s, p);
  } catch (const InputError& e) { return e.issues(); }
  return {};
}

TEST(TraceSynth, BadParametersAreInputErrorsWithPaths) {
  auto p = params();
  p.rules = {{8, "small"}, {16, "huge"}};
  auto issues = issues_of(sample(), {10, 0, 1}, p);
  ASSERT_EQ(issues.size(), 3u);
  EXPECT_EQ(issues[0].path, "/days");
  EXPECT_EQ(issues[1].path, "/rules/1/workload");
  EXPECT_EQ(issues[1].message, "unknown workload \"huge\"; the job list's workloads are: large, medium, small");
  EXPECT_EQ(issues[2].path, "/rules");
  EXPECT_EQ(issues[2].message,
            "no rule covers the trace's jobs of 64 GPUs (after rounding to whole nodes); add a rule with "
            "max_gpus 64 or more");
  issues = issues_of({}, {0, 1, 1}, params());
  ASSERT_EQ(issues.size(), 2u);
  EXPECT_EQ(issues[0].path, "/jobs");
  EXPECT_EQ(issues[1].path, "/trace");
  p = params();
  p.pool.clear();
  p.gpus_per_node = 0;
  issues = issues_of(sample(), {10, 1, 1}, p);
  ASSERT_EQ(issues.size(), 2u);
  EXPECT_EQ(issues[0].path, "/gpus_per_node");
  EXPECT_EQ(issues[1].path, "/pool");
}

}  // namespace
}  // namespace hcsim
