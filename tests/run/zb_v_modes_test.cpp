// ZB-V (workloads/pipeline_schedule.cpp) run from a scenario: the analytical mode (the
// recurrence over its order, workloads/analytical.hpp) and the flow mode against the event
// mode, its activations against 1F1B's (Qi et al. arXiv 2405.15362: V-ZB keeps 1F1B's
// activation memory, p micro-batches), and its refusal with ZeRO-3.
#include <gtest/gtest.h>

#include "../support/pipeline_scenario.hpp"
#include "sim/core/error.hpp"

namespace hcsim {
namespace zb_v_modes_test {  // unity builds: apart from modes_test.cpp's helpers
namespace {

using run_support::pipeline_scenario;
using run_support::scenario_metrics;

// Analytical (the recurrence) and flow agree with event: gpt3-1.3b, pp 4, m 16 on one
// NVSwitch node, analytical within 1e-4 (measured 5.6e-5), flow within 1e-9 (measured:
// equal). Activations as 1F1B's stage 0 on every
// stage but the first, which also keeps the head's logits; a shorter step than ZB-H1.
TEST(ZbV, ModesAgreeAndMemory) {
  const auto doc = pipeline_scenario("zb-v", 1, 1, 4, 32);
  const Metrics event = scenario_metrics(doc, "event");
  EXPECT_NEAR(scenario_metrics(doc, "analytical").step_time.value() / event.step_time.value(), 1.0, 1e-4);
  EXPECT_NEAR(scenario_metrics(doc, "flow").step_time.value() / event.step_time.value(), 1.0, 1e-9);
  const Metrics f1b = scenario_metrics(pipeline_scenario("1f1b", 1, 1, 4, 32), "event");
  for (int s : {1, 2, 3})
    EXPECT_EQ(event.stages[static_cast<std::size_t>(s)].memory.activations.value(),
              f1b.stages[0].memory.activations.value())
        << s;
  EXPECT_GT(event.stages[0].memory.activations.value(), f1b.stages[0].memory.activations.value());
  EXPECT_LT(event.step_time.value(),
            scenario_metrics(pipeline_scenario("zb-h1", 1, 1, 4, 32), "event").step_time.value());
}

// With data and tensor parallelism: dp 2, tp 2, pp 2, m 8 on one node; the gradient
// buckets reduced behind each chunk's last W. Analytical within 1e-3 (measured 7.9e-4), flow
// within 2e-6 (measured 9.9e-7).
TEST(ZbV, ModesAgreeWithDataAndTensorParallelism) {
  const auto doc = pipeline_scenario("zb-v", 2, 2, 2, 32);
  const double event = scenario_metrics(doc, "event").step_time.value();
  EXPECT_NEAR(scenario_metrics(doc, "analytical").step_time.value() / event, 1.0, 1e-3);
  EXPECT_NEAR(scenario_metrics(doc, "flow").step_time.value() / event, 1.0, 2e-6);
}

TEST(ZbV, RefusedWithZeroThree) {
  auto doc = pipeline_scenario("zb-v", 2, 1, 2, 16);
  doc["strategy"]["zero"] = 3;
  try {
    parse_scenario(doc, "test.json");
    FAIL() << "ZeRO-3 accepted";
  } catch (const InputError& e) {
    EXPECT_NE(std::string(e.what()).find("/strategy/schedule"), std::string::npos) << e.what();
    EXPECT_NE(std::string(e.what()).find("zb-v splits the backward into B and W passes"), std::string::npos)
        << e.what();
  }
}

}  // namespace
}  // namespace zb_v_modes_test
}  // namespace hcsim
