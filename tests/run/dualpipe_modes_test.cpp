// DualPipe (workloads/pipeline_schedule.cpp; DeepSeek-V3 Technical Report, arXiv 2412.19437,
// §3.2.1, Table 2) run from a scenario: the analytical mode (the recurrence over its order,
// workloads/analytical.hpp) and the flow mode against the event mode; its memory against
// 1F1B's (Table 2: 2x parameters, PP + 1 micro-batches of a stage's activations against
// 1F1B's PP); and the layout rules it needs (pp even, micro-batches even and >= 2 pp).
#include <gtest/gtest.h>

#include "../support/pipeline_scenario.hpp"
#include "sim/core/error.hpp"

namespace hcsim {
namespace dualpipe_modes_test {  // unity builds: apart from the other modes tests' helpers
namespace {

using run_support::pipeline_scenario;
using run_support::scenario_metrics;

// gpt3-1.3b on one NVSwitch node: pp 4, m 16, and dp 2, tp 2, pp 2, m 8 (gradient buckets,
// the copies' all-reduce, tensor-parallel collectives beside the whole backwards' GEMMs).
// Analytical within 2e-3 (measured 4.8e-5 and 9.7e-4), flow within 2e-6 (measured 1e-16 and
// 1.06e-6).
TEST(DualPipeModes, AnalyticalAndFlowAgreeWithEvent) {
  for (const auto& doc : {pipeline_scenario("dualpipe", 1, 1, 4, 32), pipeline_scenario("dualpipe", 2, 2, 2, 32)}) {
    const double event = scenario_metrics(doc, "event").step_time.value();
    EXPECT_NEAR(scenario_metrics(doc, "analytical").step_time.value() / event, 1.0, 2e-3);
    EXPECT_NEAR(scenario_metrics(doc, "flow").step_time.value() / event, 1.0, 2e-6);
  }
}

// Interior stages (no embedding or head): 2x 1F1B's weights, gradients and optimizer state;
// activations of (p + 1) / 2 micro-batches of two model stages against 1F1B's stage 0, p of
// one: (p + 1) / p of it (p = 4: 5/4).
TEST(DualPipeModes, TwiceTheParametersAndPPPlusOneActivations) {
  const Metrics dual = scenario_metrics(pipeline_scenario("dualpipe", 1, 1, 4, 32), "event");
  const Metrics f1b = scenario_metrics(pipeline_scenario("1f1b", 1, 1, 4, 32), "event");
  for (int s : {1, 2}) {
    const auto& d = dual.stages[static_cast<std::size_t>(s)].memory;
    const auto& o = f1b.stages[static_cast<std::size_t>(s)].memory;
    EXPECT_DOUBLE_EQ(d.weights.value(), 2 * o.weights.value()) << s;
    EXPECT_DOUBLE_EQ(d.gradients.value(), 2 * o.gradients.value()) << s;
    EXPECT_DOUBLE_EQ(d.optimizer.value(), 2 * o.optimizer.value()) << s;
    EXPECT_DOUBLE_EQ(d.activations.value(), 1.25 * f1b.stages[0].memory.activations.value()) << s;
  }
}

// The layout rules at their JSON paths (exit code 2 in the CLI: InputError).
void expect_refused(const nlohmann::json& doc, const std::string& path, const std::string& message) {
  try {
    parse_scenario(doc, "test.json");
    FAIL() << "accepted: " << message;
  } catch (const InputError& e) {
    EXPECT_NE(std::string(e.what()).find(path), std::string::npos) << e.what();
    EXPECT_NE(std::string(e.what()).find(message), std::string::npos) << e.what();
  }
}

TEST(DualPipeModes, LayoutRules) {
  auto odd = pipeline_scenario("dualpipe", 1, 1, 4, 32);
  odd["strategy"]["pp"] = 3;
  odd["cluster"]["pools"][0]["count"] = 3;
  odd["cluster"]["topology"]["gpus_per_node"] = 3;
  expect_refused(odd, "/strategy/pp", "the dualpipe schedule needs pp to be a multiple of 2, got 3");
  // 12 / 2 = 6 micro-batches: even, fewer than 2 pp = 8.
  expect_refused(pipeline_scenario("dualpipe", 1, 1, 4, 12), "/workload/global_batch",
                 "the dualpipe schedule needs the micro-batches per replica to be a multiple of 2 and at least 2*pp = "
                 "8, got 6");
  // 18 / 2 = 9: odd.
  expect_refused(pipeline_scenario("dualpipe", 1, 1, 2, 18), "/workload/global_batch", "got 9");
  auto zero3 = pipeline_scenario("dualpipe", 2, 1, 2, 16);
  zero3["strategy"]["zero"] = 3;
  expect_refused(zero3, "/strategy/schedule", "dualpipe splits the backward into B and W passes");
}

}  // namespace
}  // namespace dualpipe_modes_test
}  // namespace hcsim
