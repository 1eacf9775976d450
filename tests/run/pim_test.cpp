// GPUs with a PIM pool: the scenario runs end to end and the stacks shorten the step.
#include <gtest/gtest.h>

#include "scenarios/scenario.hpp"
#include "sim/driver/run.hpp"

namespace hcsim {
namespace {

TEST(PimPool, StacksTakeTheMemoryBoundKernels) {
  nlohmann::json doc = read_json_file(std::string(HCSIM_SOURCE_DIR) + "/scenarios/gpu-with-hbm-pim.json");
  const Scenario with = parse_scenario(doc, "pim.json");
  EXPECT_EQ(with.device_count(), 8);  // the stacks are not devices of the layout
  const RunOutput a = run_scenario(with);
  doc["cluster"]["pools"].erase(1);
  const RunOutput b = run_scenario(parse_scenario(doc, "nopim.json"));
  EXPECT_LT(a.metrics.step_time.value(), b.metrics.step_time.value());
  // Same GEMM work, so the difference is all memory-bound time.
  EXPECT_DOUBLE_EQ(a.metrics.model_flops.value(), b.metrics.model_flops.value());
}

TEST(PimPool, AttachToMustNameAComputePool) {
  nlohmann::json doc = read_json_file(std::string(HCSIM_SOURCE_DIR) + "/scenarios/gpu-with-hbm-pim.json");
  doc["cluster"]["pools"][1]["attach_to"] = "gpu";
  try {
    parse_scenario(doc, "bad.json");
    FAIL();
  } catch (const InputError& e) {
    EXPECT_EQ(e.issues()[0].path, "/cluster/pools/1/attach_to");
    EXPECT_EQ(e.issues()[0].message, "no compute pool named \"gpu\"; valid ones are: a100");
  }
  doc["cluster"]["pools"][1]["attach_to"] = "a100";
  doc["cluster"]["pools"][1]["count"] = 12;
  try {
    parse_scenario(doc, "bad.json");
    FAIL();
  } catch (const InputError& e) {
    EXPECT_EQ(e.issues()[0].path, "/cluster/pools/1/count");
  }
}

}  // namespace
}  // namespace hcsim
