// ZeRO-2 reduces every micro-batch's gradients (workloads/step_plan.hpp,
// reduce_every_microbatch), in both modes. Without overlap each reduction holds the
// compute, so with m micro-batches ZeRO-2 pays m - 1 more reductions of the stage's
// gradients than ZeRO-1:
//   step(ZeRO-2) - step(ZeRO-1) = (m - 1) R,
// R the time of one reduction, the same in every micro-batch (nothing else on the network).
// Checked as the ratio of the differences at m = 4 and m = 2 (3 R against R), in event mode
// and in analytical mode, and the two modes against each other; with overlap the earlier
// reductions hide behind the compute here, and ZeRO-2 keeps only 1/dp of the gradients.
// Four A100 in two nodes of two (data parallelism crosses the InfiniBand), GPT-3 1.3B.
#include <gtest/gtest.h>

#include <string>

#include "scenarios/scenario.hpp"
#include "sim/driver/run.hpp"

namespace hcsim {
namespace {

double step(int zero, int global_batch, const std::string& mode, bool overlap = false) {
  const nlohmann::json doc = {
      {"cluster",
       {{"pools", {{{"preset", "nvidia-a100-80gb-sxm"}, {"count", 4}}}},
        {"topology",
         {{"type", "nvswitch-cluster"},
          {"gpus_per_node", 2},
          {"nvlink", {{"preset", "nvlink3"}}},
          {"nic", {{"preset", "ib-hdr"}}}}}}},
      {"workload", {{"model", {{"preset", "gpt3-1.3b"}}}, {"global_batch", global_batch}, {"micro_batch", 1}}},
      // fp32 gradients for both stages (ZeRO-2's default is bf16's): only the reductions differ.
      {"strategy", {{"dp", 4}, {"tp", 1}, {"pp", 1}, {"zero", zero}, {"overlap_dp", overlap}, {"main_grads", "fp32"}}},
      {"simulation", {{"mode", mode}}}};
  return run_scenario(parse_scenario(doc, "zero2.json")).metrics.step_time.value();
}

TEST(Zero2Modes, EachMicrobatchAddsOneReductionInBothModes) {
  double diff[2][2];  // [mode][m = 2, m = 4]
  const char* modes[] = {"event", "analytical"};
  for (int k = 0; k < 2; ++k)
    for (int j = 0; j < 2; ++j) {
      const int batch = j == 0 ? 8 : 16;  // 2 or 4 micro-batches per replica
      diff[k][j] = step(2, batch, modes[k]) - step(1, batch, modes[k]);
    }
  for (int k = 0; k < 2; ++k) {
    EXPECT_GT(diff[k][0], 0.01) << modes[k];  // R: 5.2 GB of fp32 gradients over HDR
    EXPECT_NEAR(diff[k][1], 3 * diff[k][0], 1e-9 * diff[k][1]) << modes[k];
  }
  EXPECT_NEAR(diff[0][0], diff[1][0], 1e-9 * diff[0][0]);  // one reduction, alone: both modes cost it alike
}

TEST(Zero2Modes, OverlappedReductionsHideBehindTheComputeHere) {
  for (const char* mode : {"event", "analytical"})
    EXPECT_NEAR(step(2, 16, mode, true), step(1, 16, mode, true), 1e-9 * step(1, 16, mode, true)) << mode;
}

}  // namespace
}  // namespace hcsim
