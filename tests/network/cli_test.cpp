// `hcsim topo` and `hcsim collective` run as a user runs them (the binary as a child
// process), on the scenarios of scenarios/network/ and the quickstart.
#include <cmath>
#include <numeric>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "../cli/hcsim_child.hpp"
#include "../support/paths.hpp"

namespace hcsim::test {
namespace {

std::string network(const std::string& name) { return kSource + "/scenarios/network/" + name + ".json"; }

TEST(TopoCommand, TorusAnalysisMatchesItsShape) {
  const ChildResult r = run_hcsim({"topo", network("electrical-torus-1024"), "--format", "json"});
  ASSERT_EQ(r.exit_code, 0) << describe(r);
  const auto j = nlohmann::json::parse(r.out);
  EXPECT_EQ(j["devices"], 1024);
  EXPECT_EQ(j["links"], 3 * 1024);  // one +1 link per device and dimension, every dimension > 2
  // Diameter of a torus: sum of floor(d_k / 2) = 4 + 4 + 8 (Dally & Towles 2004, §3).
  EXPECT_EQ(j["diameter"], 16);
  // Bisection: 2 N / d_max = 128 links cut, 50 GB/s each per direction.
  EXPECT_DOUBLE_EQ(j["bisection_bandwidth"].get<double>(), 128 * 50e9);
  std::int64_t pairs = 0;
  for (const auto& h : j["hop_histogram"]) pairs += h["pairs"].get<std::int64_t>();
  EXPECT_EQ(pairs, 1024 * 1023);
  EXPECT_EQ(j["hop_histogram"][0]["hops"], 1);
  EXPECT_EQ(j["hop_histogram"][0]["pairs"], 1024 * 6);  // six neighbours each
}

TEST(TopoCommand, FatTreeTableCountsLinksByClass) {
  const ChildResult r = run_hcsim({"topo", network("nvlink-fat-tree-1024")});
  ASSERT_EQ(r.exit_code, 0) << describe(r);
  // 1,024 NVLink edges (GPU to NVSwitch); 1,024 NIC edges plus 52 leaves x 20 spines of
  // 40-port switches split 20 down / 20 up.
  EXPECT_NE(r.out.find("  nvlink            1024    1024"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("  infiniband        2064    2064"), std::string::npos) << r.out;
  // GPU -> NIC -> leaf -> spine -> leaf -> NIC... : 4 edges between nodes on different leaves.
  EXPECT_NE(r.out.find("diameter 4 hops"), std::string::npos) << r.out;
}

TEST(CollectiveCommand, NodeSweepReportsNcclTestsBandwidths) {
  const ChildResult r = run_hcsim({"collective", kQuickstart, "--group", "node", "--min", "8 B", "--max", "1 GiB",
                                   "--format", "json"});
  ASSERT_EQ(r.exit_code, 0) << describe(r);
  const auto j = nlohmann::json::parse(r.out);
  EXPECT_EQ(j["ranks"], 8);
  ASSERT_EQ(j["rows"].size(), 28u);  // 2^3 .. 2^30
  for (const auto& row : j["rows"]) {
    const double size = row["size"], time = row["time"];
    // nccl-tests: algbw = S / t, busbw = algbw x 2(n-1)/n for all-reduce (formulas.md §6).
    EXPECT_DOUBLE_EQ(row["algbw"].get<double>(), size / time);
    EXPECT_DOUBLE_EQ(row["busbw"].get<double>(), size / time * 2 * 7 / 8);
    // On an idle node the engine takes the cost model's time (tests/engine).
    EXPECT_NEAR(time / row["model_time"].get<double>(), 1.0, 1e-3) << size;
  }
  // Latency-bound sizes go to the tree, large ones to the ring (as NCCL's tuner).
  EXPECT_EQ(j["rows"][0]["algorithm"], "double_binary_tree");
  EXPECT_EQ(j["rows"][27]["algorithm"], "ring");
  // 1 GiB: busbw reaches NVLink3's 300 GB/s x 0.78 (efficiency of the preset, NCCL's
  // A100 tuning cap) but for the Simple protocol's latency, 8.4 us + 14 x
  // (0.5 + 2.8) us, against 8.03 ms (sim/collectives/protocol.hpp).
  const double s = 1073741824.0, t = 8.4e-6 + 14 * 3.3e-6 + 14.0 / 8 * s / 234e9;
  EXPECT_EQ(j["rows"][27]["protocol"], "Simple");
  EXPECT_EQ(j["rows"][27]["channels"], 32);
  EXPECT_NEAR(j["rows"][27]["busbw"].get<double>(), 14.0 / 8 * s / t, 1e-4 * 234e9);
}

TEST(CollectiveCommand, ReadsLikeNcclTests) {
  // all_reduce_perf -b 8 -e 1G -f 4: sizes 8, 32, ..., 2^29 (8 x 4^13), 14 rows of size,
  // count (float elements), the algorithm, protocol and channels the tuner chose, time,
  // algbw and busbw; the JSON carries the same rows.
  const std::vector<std::string> base{"collective", kQuickstart, "--group", "node", "-b", "8", "-e", "1G", "-f", "4"};
  const ChildResult table = run_hcsim(base);
  ASSERT_EQ(table.exit_code, 0) << describe(table);
  EXPECT_NE(table.out.find("size        count            algorithm  proto  ch         time     algbw     busbw"),
            std::string::npos)
      << table.out;
  int rows = 0;
  for (const std::string& line : lines_of(table.out)) rows += line.rfind("  ", 0) == 0 ? 1 : 0;
  EXPECT_EQ(rows, 14) << table.out;
  EXPECT_NE(table.out.find("            8            2   double_binary_tree     LL"), std::string::npos) << table.out;
  std::vector<std::string> json_args = base;
  json_args.insert(json_args.end(), {"--format", "json"});
  const ChildResult json = run_hcsim(json_args);
  ASSERT_EQ(json.exit_code, 0) << describe(json);
  const auto j = nlohmann::json::parse(json.out);
  ASSERT_EQ(j["rows"].size(), 14u);
  EXPECT_EQ(j["rows"][13]["size"], 536870912.0);
  EXPECT_EQ(j["rows"][13]["count"], 134217728.0);
  EXPECT_EQ(j["rows"][13]["protocol"], "Simple");
  EXPECT_EQ(j["rows"][0]["protocol"], "LL");
}

TEST(CollectiveCommand, GpusSharingANicTalkOverNvlink) {
  // Issue 17: with 4 NICs per node, GPUs 0 and 1 (sharing NIC 0) all-reduced through the
  // NIC's attachment, 21.75 GB/s and 0 J. Intra-node traffic stays on the NVSwitch
  // (topologies/routing.hpp), so the NIC count does not matter inside a node: the same
  // time and energy as with 8 NICs, and the energy is the NVLink edges' (nonzero).
  std::vector<nlohmann::json> rows;
  for (const char* nics : {"4", "8"}) {
    const ChildResult r = run_hcsim({"collective", kQuickstart, "--group", "2", "--min", "1 GiB", "--max", "1 GiB",
                                     "--format", "json", "--set", std::string("/cluster/topology/nics_per_node=") + nics});
    ASSERT_EQ(r.exit_code, 0) << describe(r);
    rows.push_back(nlohmann::json::parse(r.out)["rows"][0]);
  }
  EXPECT_EQ(rows[0]["time"], rows[1]["time"]);
  EXPECT_EQ(rows[0]["network_energy"], rows[1]["network_energy"]);
  EXPECT_GT(rows[0]["network_energy"].get<double>(), 0.0);
}

TEST(CollectiveCommand, FlowModeByPhasesRunsEventModesFlowsEveryOneInTheNetwork) {
  // A flat ring all-reduce of 1 GiB over 256 chips of the 1,024-chip torus (docs/network.md,
  // "Flow mode by phases"). By steps: 2(n - 1) steps of n flows = 130,560 activities. By
  // phases: per rank a timer of (2(n - 1) - 1) alpha and one flow of 2(n - 1)/n S, 2n = 512
  // activities, and the event mode's time to the bit (the same timer and merged flows, all n
  // of them built -- no symmetry outside a task graph).
  std::vector<nlohmann::json> out;
  for (const std::vector<std::string>& mode : std::vector<std::vector<std::string>>{
           {"--mode", "event"}, {"--mode", "flow"}, {"--mode", "flow", "--flow-schedule", "phases"}}) {
    std::vector<std::string> args{"collective", network("electrical-torus-1024"), "--group", "256", "--algorithm",
                                  "ring", "-b", "1G", "-e", "1G", "--format", "json"};
    args.insert(args.end(), mode.begin(), mode.end());
    const ChildResult r = run_hcsim(args);
    ASSERT_EQ(r.exit_code, 0) << describe(r);
    out.push_back(nlohmann::json::parse(r.out));
  }
  EXPECT_EQ(out[1]["flow_schedule"], "steps");
  EXPECT_EQ(out[2]["flow_schedule"], "phases");
  EXPECT_FALSE(out[0].contains("flow_schedule"));
  EXPECT_EQ(out[1]["activities"], 2 * 255 * 256);
  EXPECT_EQ(out[2]["activities"], 2 * 256);
  EXPECT_EQ(out[2]["rows"][0]["time"], out[0]["rows"][0]["time"]);
  const ChildResult bad = run_hcsim({"collective", network("electrical-torus-1024"), "--flow-schedule", "rings"});
  EXPECT_EQ(bad.exit_code, 2) << describe(bad);
}

TEST(CollectiveCommand, SixtyFourDeviceSweepIsFast) {
  // 8 B .. 8 GiB on 8 nodes x 8 GPUs: 31 sizes, one engine run.
  const ChildResult r = run_hcsim({"collective", kQuickstart, "--set", "/cluster/pools/0/count=64", "--set",
                                   "/strategy/dp=8"});
  ASSERT_EQ(r.exit_code, 0) << describe(r);
  EXPECT_NE(r.out.find("on 64 ranks"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("   8589934592 "), std::string::npos) << r.out;
  EXPECT_LT(r.seconds, 3.0);  // 0.12 s on the development machine
}

TEST(CollectiveCommand, BadOptionsAreInputErrors) {
  for (const std::vector<std::string>& extra :
       {std::vector<std::string>{"--group", "1"}, {"--group", "nodes"}, {"--min", "eight"}, {"--op", "scan"},
        {"--algorithm", "torus"}, {"--algorithm", "butterfly"}, {"--min", "1 MiB", "--max", "1 KiB"}, {"--step-factor", "1"}}) {
    std::vector<std::string> args{"collective", kQuickstart};
    args.insert(args.end(), extra.begin(), extra.end());
    const ChildResult r = run_hcsim(args);
    EXPECT_EQ(r.exit_code, 2) << extra[0] << " " << extra[1] << "\n" << describe(r);
    EXPECT_EQ(lines_of(r.err).size(), 1u) << describe(r);
  }
}

// A send_recv is between two devices: on a larger group it is an input error naming --op
// (it was an internal error and an abort), and on --group 2 it runs.
TEST(CollectiveCommand, SendRecvNeedsTwoDevices) {
  const ChildResult bad = run_hcsim({"collective", kQuickstart, "--op", "send_recv"});
  EXPECT_EQ(bad.exit_code, 2) << describe(bad);
  EXPECT_EQ(lines_of(bad.err).size(), 1u) << describe(bad);
  EXPECT_NE(bad.err.find("--op: send_recv is between two devices and --group \"all\" has 16"), std::string::npos)
      << describe(bad);
  const ChildResult ok = run_hcsim({"collective", kQuickstart, "--op", "send_recv", "--group", "2", "--max", "1 MiB"});
  EXPECT_EQ(ok.exit_code, 0) << describe(ok);
}

// Every --op on the groups all (16 devices), node (8) and 2 of quickstart either runs (exit 0,
// no standard error) or, for send_recv on more than two devices, is refused as bad input
// (exit 2, one line); none is an internal error or an abort.
TEST(CollectiveCommand, EveryOpOnEveryGroupRunsOrIsRefused) {
  for (const char* group : {"all", "node", "2"})
    for (const char* op : {"all_reduce", "reduce_scatter", "all_gather", "broadcast", "reduce", "all_to_all",
                           "send_recv"}) {
      const ChildResult r = run_hcsim({"collective", kQuickstart, "--op", op, "--group", group, "--max", "64 KiB"});
      const bool refused = std::string(op) == "send_recv" && std::string(group) != "2";
      EXPECT_EQ(r.exit_code, refused ? 2 : 0) << op << " on " << group << "\n" << describe(r);
      EXPECT_EQ(lines_of(r.err).size(), refused ? 1u : 0u) << op << " on " << group << "\n" << describe(r);
      EXPECT_EQ(r.err.find("internal error"), std::string::npos) << describe(r);
    }
}

}  // namespace
}  // namespace hcsim::test
