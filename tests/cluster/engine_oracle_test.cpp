// The engine-backed step oracle (sim/cluster/engine_oracle.hpp): jobs on disjoint links run
// as fast as alone; jobs whose rings cross one oversubscribed uplink share it as the link's
// fair share says.
#include <gtest/gtest.h>

#include "sim/cluster/cluster_file.hpp"
#include "sim/cluster/engine_oracle.hpp"

namespace hcsim {
namespace {

// Six 8-GPU A100 nodes, one NDR NIC each; leaves of 4 ports at 3:1 (3 nodes down, 1 up): two
// leaves, one uplink each, one spine. `nic_gbps` sets every NIC and fabric link.
nlohmann::json cluster_doc(double nic_gbps) {
  return nlohmann::json::parse(R"({
    "cluster": {
      "pools": [ { "name": "a100", "preset": "nvidia-a100-80gb-sxm", "count": 48 } ],
      "topology": { "type": "nvswitch-cluster", "gpus_per_node": 8, "nics_per_node": 1,
                    "nvlink": { "preset": "nvlink3" },
                    "nic": { "preset": "ib-ndr", "bandwidth": ")" +
                               std::to_string(nic_gbps) + R"( Gb/s" },
                    "switch_radix": 4, "oversubscription": 3 } },
    "simulation": { "mode": "event" } })");
}

// GPT-3 1.3B, TP 8 inside a node, DP over the nodes: eight two-rank gradient all-reduces per
// step, all through the node's one NIC.
nlohmann::json job_list() {
  return nlohmann::json::parse(R"({
    "workloads": { "gpt": {
      "workload": { "model": { "preset": "gpt3-1.3b" }, "global_batch": 16, "micro_batch": 4, "precision": "bf16" },
      "strategy": { "tp": 8, "pp": 1, "schedule": "1f1b" } } },
    "jobs": [ { "name": "a", "workload": "gpt", "devices": 16, "work": { "steps": 10 } },
              { "name": "b", "workload": "gpt", "devices": 16, "work": { "steps": 10 } } ] })");
}

JobPlacement nodes(std::initializer_list<std::uint32_t> ns) {
  JobPlacement p;
  for (std::uint32_t n : ns)
    for (std::uint32_t d = 0; d < 8; ++d) p.devices.push_back(n * 8 + d);
  return p;
}

struct OracleInputs {
  ClusterSpec cluster;
  JobList jobs;
  explicit OracleInputs(double nic_gbps)
      : cluster(parse_cluster_file(cluster_doc(nic_gbps))), jobs(parse_job_list(job_list(), cluster)) {}
};

TEST(EngineOracle, JobsOnDisjointLinksRunAsFastAsAlone) {
  OracleInputs s(400);
  EngineOracle oracle(s.cluster, s.jobs);
  const Seconds alone = *oracle.alone(s.jobs.jobs[0], 0, 16);
  // Nodes 0-1 and 3-4: each job inside its own leaf, NIC to leaf and back: no shared link.
  const std::vector<JobPlacement> at{nodes({0, 1}), nodes({3, 4})};
  const std::vector<const JobSpec*> jobs{&s.jobs.jobs[0], &s.jobs.jobs[1]};
  const auto steps = oracle.together(jobs, at);
  // Source: the same step graph on the same routes (a leaf of the job's own scenario).
  EXPECT_DOUBLE_EQ(steps[0].value(), alone.value());
  EXPECT_DOUBLE_EQ(steps[1].value(), alone.value());
  EXPECT_EQ(oracle.runs().together, 0u);  // their footprints never met
}

TEST(EngineOracle, JobsSharingAnUplinkSlowByTheirFairShare) {
  // Nodes 0 and 3, and 1 and 4: both jobs' rings cross leaf 0's one uplink and leaf 1's one
  // downlink, each way. Sixteen flows share the uplink where eight had the NIC: each job gets
  // half a link, as it would alone with every link at half its bandwidth (its eight flows
  // through a half-rate NIC). Source: max-min fair sharing of one bottleneck (SimGrid's LMM).
  OracleInputs full(400), half(200);
  EngineOracle shared(full.cluster, full.jobs), slow(half.cluster, half.jobs);
  const std::vector<JobPlacement> at{nodes({0, 3}), nodes({1, 4})};
  const std::vector<const JobSpec*> jobs{&full.jobs.jobs[0], &full.jobs.jobs[1]};
  const auto steps = shared.together(jobs, at);
  EXPECT_EQ(shared.runs().together, 1u);
  const std::vector<JobPlacement> one{nodes({0, 3})};
  const std::vector<const JobSpec*> job{&half.jobs.jobs[0]};
  const Seconds half_rate = slow.together(job, one)[0];
  const Seconds alone = shared.together(job, one)[0];
  EXPECT_GT(steps[0].value(), alone.value() * 1.01);  // the share costs something
  EXPECT_NEAR(steps[0].value(), half_rate.value(), 1e-9 * half_rate.value());
  EXPECT_DOUBLE_EQ(steps[0].value(), steps[1].value());
}

// A workload with a strategy space: at each size the oracle runs the fastest strategy whose
// replica divides it. Source: the definition, against each strategy alone.
TEST(EngineOracle, AStrategySpaceRunsItsFastestStrategyAtEachSize) {
  auto list = [](const nlohmann::json& strategy_part) {
    nlohmann::json doc = job_list();
    doc["workloads"]["gpt"].erase("strategy");
    for (const auto& [k, v] : strategy_part.items()) doc["workloads"]["gpt"][k] = v;
    doc["jobs"][0]["devices"] = 8;
    doc["jobs"][1]["devices"] = 16;
    return doc;
  };
  const ClusterSpec cluster = parse_cluster_file(cluster_doc(400));
  const nlohmann::json tp8{{"tp", 8}, {"pp", 1}}, tp2{{"tp", 2}, {"pp", 1}};
  const JobList space = parse_job_list(list({{"strategies", {tp8, tp2}}}), cluster);
  const JobList only8 = parse_job_list(list({{"strategy", tp8}}), cluster);
  const JobList only2 = parse_job_list(list({{"strategy", tp2}}), cluster);
  EXPECT_EQ(space.jobs[0].quantum, 2u);  // gcd(8, 2)
  EngineOracle o(cluster, space), o8(cluster, only8), o2(cluster, only2);
  for (std::uint32_t n : {8u, 16u}) {
    const Seconds a = *o8.alone(only8.jobs[0], 0, n), b = *o2.alone(only2.jobs[0], 0, n);
    EXPECT_DOUBLE_EQ(o.alone(space.jobs[0], 0, n)->value(), std::min(a, b).value()) << n;
    EXPECT_EQ(o.strategy(space.jobs[0], 0, n), a <= b ? tp8 : tp2) << n;
  }
  // 4 devices: only TP 2 divides it.
  EXPECT_DOUBLE_EQ(o.alone(space.jobs[0], 0, 4)->value(), o2.alone(only2.jobs[0], 0, 4)->value());
  EXPECT_EQ(o.strategy(space.jobs[0], 0, 4), tp2);
}

}  // namespace
}  // namespace hcsim
