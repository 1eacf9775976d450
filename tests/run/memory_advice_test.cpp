// The memory refusal's advice on sequence parallelism (sim/driver/run.cpp stage_shortfall):
// with tp > 1 and sequence parallelism off, the message says whether turning it on fits the
// stage, and the advice holds: the same layout with it on runs. Llama-3 70B on 512 H100
// (scenarios/llama3-70b-h100-512.json), TP 8 · PP 4, no recomputation: Korthikanti et al.
// 2022 Table 2 gives sbh(10 + 24/t + 5as/(ht)) per layer without sequence parallelism and
// sbh(34/t + 5as/(ht)) with it, so at t = 8 it removes 10 of 13 sbh of the non-attention
// terms (tests/workloads/activation_test.cpp checks the per-layer figures).
#include <gtest/gtest.h>

#include "sim/driver/run.hpp"

namespace hcsim {
namespace {

const std::string kScenario = std::string(HCSIM_SOURCE_DIR) + "/scenarios/llama3-70b-h100-512.json";

std::string refusal(const std::vector<std::string>& sets) {
  try {
    run_scenario(load_scenario(kScenario, sets));
  } catch (const InputError& e) {
    return e.issues().front().message;
  }
  return "";
}

TEST(MemoryAdvice, SuggestsSequenceParallelismWhenItFits) {
  register_builtins();
  const std::vector<std::string> base = {"/simulation/mode=analytical", "/strategy/recompute=none",
                                         "/strategy/sequence_parallel=false"};
  std::vector<std::string> mb1 = base;
  mb1.push_back("/workload/micro_batch=1");
  const std::string m = refusal(mb1);
  EXPECT_NE(m.find("does not fit in memory"), std::string::npos) << m;
  EXPECT_NE(m.find("sequence_parallel: true fits it"), std::string::npos) << m;
  // The advice holds: with sequence parallelism the same layout runs.
  mb1.push_back("/strategy/sequence_parallel=true");
  EXPECT_TRUE(run_scenario(load_scenario(kScenario, mb1)).metrics.memory_fits);
  // Four sequences per micro-batch: it helps, but not enough.
  std::vector<std::string> mb4 = base;
  mb4.push_back("/workload/micro_batch=4");
  const std::string m4 = refusal(mb4);
  EXPECT_NE(m4.find("sequence_parallel: true would save"), std::string::npos) << m4;
  // Already on: no advice.
  mb4.push_back("/strategy/sequence_parallel=true");
  const std::string on = refusal(mb4);
  EXPECT_NE(on.find("does not fit in memory"), std::string::npos) << on;
  EXPECT_EQ(on.find("sequence_parallel"), std::string::npos) << on;
}

}  // namespace
}  // namespace hcsim
