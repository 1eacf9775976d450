// simulation.sm_contention (docs/models.md, "SM contention"): in event and flow modes a
// GPU's compute runs at 1 - channels / SMs while collectives run on it, so a step whose
// collectives overlap its compute takes longer, by at most the channels' share of the
// collectives' time (work conservation: each collective of c seconds on a device costs its
// compute at most f c, f = channels / SMs <= 32 / 132 on an H100, NCCL's most channels).
// Devices whose collectives take no cores (a systolic array's ICI DMA) are not slowed. The
// analytical mode's closed forms slow the compute beside tensor-parallel pairs, ZeRO-3 /
// FSDP units and the gradient buckets; where they have none (ZeRO-1/2's overlapped
// parameter gathers, MoE pairs) it refuses the option at its JSON path.
#include <gtest/gtest.h>

#include <algorithm>
#include <string>

#include "scenarios/scenario.hpp"
#include "sim/core/error.hpp"
#include "sim/driver/run.hpp"

namespace hcsim {
namespace {

// GPT-3 1.3B with FSDP over the 8 H100 of one node: every unit's gather and
// reduce-scatter runs beside the compute of another.
nlohmann::json fsdp_node(bool contention) {
  return {{"cluster",
           {{"pools", {{{"preset", "nvidia-h100-sxm5"}, {"count", 8}}}},
            {"topology", {{"type", "nvswitch-cluster"}, {"gpus_per_node", 8}, {"nvlink", {{"preset", "nvlink4"}}}}}}},
          {"workload", {{"model", {{"preset", "gpt3-1.3b"}}}, {"global_batch", 16}, {"micro_batch", 2}}},
          {"strategy", {{"dp", 8}, {"zero", 3}, {"fsdp", {{"preset", "pytorch-fsdp"}}}}},
          {"simulation", {{"mode", "event"}, {"sm_contention", contention}}}};
}

TEST(SmContention, SlowsAStepByAtMostTheChannelsShareOfItsCollectives) {
  const RunOutput alone = run_scenario(parse_scenario(fsdp_node(false), "fsdp.json"));
  const RunOutput slowed = run_scenario(parse_scenario(fsdp_node(true), "fsdp.json"));
  // The collectives' time on device 0 in the slowed run.
  double collectives = 0;
  for (TaskId t = 0; t < slowed.graph.size(); ++t) {
    const Task& task = slowed.graph[t];
    if (task.kind != TaskKind::collective) continue;
    const auto& members = slowed.graph.groups()[task.group];
    if (std::find(members.begin(), members.end(), 0u) == members.end()) continue;
    collectives += slowed.engine.end[t] - slowed.engine.start[t];
  }
  ASSERT_GT(collectives, 0.0);
  const double delta = slowed.metrics.step_time.value() - alone.metrics.step_time.value();
  EXPECT_GT(delta, 0.0);
  EXPECT_LE(delta, 32.0 / 132.0 * collectives);
}

TEST(SmContention, SystolicArraysCollectivesTakeNoCores) {
  const std::string file = std::string(HCSIM_SOURCE_DIR) + "/scenarios/gpt3-175b-tpuv4-512.json";
  nlohmann::json doc = read_json_file(file);
  const double alone = run_scenario(parse_scenario(doc, file)).metrics.step_time.value();
  doc["simulation"]["sm_contention"] = true;
  EXPECT_EQ(run_scenario(parse_scenario(doc, file)).metrics.step_time.value(), alone);
}

// The analytical closed form of the FSDP units (sharded_pass_time with the shares) replays
// the engine's re-rated kernels: one node, no link shared, the same step to rounding.
TEST(SmContention, AnalyticalFsdpUnitsAreTheEnginesStep) {
  nlohmann::json doc = fsdp_node(true);
  const double event = run_scenario(parse_scenario(doc, "fsdp.json")).metrics.step_time.value();
  doc["simulation"]["mode"] = "analytical";
  const double analytical = run_scenario(parse_scenario(doc, "fsdp.json")).metrics.step_time.value();
  EXPECT_NEAR(analytical / event, 1.0, 1e-9);
  doc["simulation"]["sm_contention"] = false;
  EXPECT_LT(run_scenario(parse_scenario(doc, "fsdp.json")).metrics.step_time.value(), analytical);
}

TEST(SmContention, AnalyticalModeRefusesItWhereItsClosedFormsHaveNone) {
  nlohmann::json doc = fsdp_node(true);
  doc["simulation"]["mode"] = "analytical";
  doc["strategy"] = {{"dp", 8}, {"zero", 1}, {"overlap_param_gather", true}};
  try {
    parse_scenario(doc, "zero1.json");
    FAIL() << "no error";
  } catch (const InputError& e) {
    EXPECT_NE(e.render().find("/simulation/sm_contention: analytical mode has no closed form of SM contention with "
                              "strategy.overlap_param_gather"),
              std::string::npos)
        << e.render();
  }
  doc["simulation"]["mode"] = "flow";
  EXPECT_NO_THROW(parse_scenario(doc, "zero1.json"));
}

}  // namespace
}  // namespace hcsim
