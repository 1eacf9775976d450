// The three fidelities of one scenario agree where their assumptions hold (uniform stages,
// no contention): analytical vs event within 2 %, flow vs event within 1e-5 (measured: at
// most 6.3e-6, on the interleaved layout, 1e-13 on the others); and symmetry (identical
// ranks simulated once) matches the full simulation within 0.1 %.
#include <gtest/gtest.h>

#include "scenarios/scenario.hpp"
#include "sim/driver/run.hpp"

namespace hcsim {
namespace {

nlohmann::json base(int dp, int tp, int pp, const char* schedule, int v, int batch) {
  return {{"cluster",
           {{"pools", {{{"preset", "nvidia-a100-80gb-sxm"}, {"count", dp * tp * pp}}}},
            {"topology", {{"type", "nvswitch-cluster"}, {"gpus_per_node", std::min(8, dp * tp * pp)}}}}},
          {"workload", {{"model", {{"preset", "gpt3-1.3b"}}}, {"global_batch", batch}, {"micro_batch", 2}}},
          {"strategy", {{"dp", dp}, {"tp", tp}, {"pp", pp}, {"schedule", schedule}, {"interleave", v}}}};
}

Metrics metrics(nlohmann::json doc, const char* mode, bool symmetry = true) {
  doc["simulation"] = {{"mode", mode}, {"symmetry", symmetry}};
  return run_scenario(parse_scenario(doc, "test.json")).metrics;
}

double step(const nlohmann::json& doc, const char* mode, bool symmetry = true) {
  return metrics(doc, mode, symmetry).step_time.value();
}

struct Case {
  int dp, tp, pp;
  const char* schedule;
  int v, batch;
};

class Modes : public ::testing::TestWithParam<Case> {};

TEST_P(Modes, AnalyticalAndFlowAgreeWithEvent) {
  const Case c = GetParam();
  const auto doc = base(c.dp, c.tp, c.pp, c.schedule, c.v, c.batch);
  const double event = step(doc, "event");
  EXPECT_NEAR(step(doc, "analytical") / event, 1.0, 0.02);
  EXPECT_NEAR(step(doc, "flow") / event, 1.0, 1e-5);
}

TEST_P(Modes, SymmetryMatchesFullSimulation) {
  const Case c = GetParam();
  const auto doc = base(c.dp, c.tp, c.pp, c.schedule, c.v, c.batch);
  const Metrics sym = metrics(doc, "event", true), full = metrics(doc, "event", false);
  EXPECT_NEAR(sym.step_time.value() / full.step_time.value(), 1.0, 0.001);
  // The mirrors of the ranks not built carry exactly the bytes those ranks send when built:
  // the payload per communication class and the bytes on each class of link.
  for (std::size_t k = 0; k < sym.comm_bytes.size(); ++k)
    EXPECT_NEAR(sym.comm_bytes[k].value(), full.comm_bytes[k].value(), 1e-9 * full.comm_bytes[k].value()) << "class " << k;
  ASSERT_EQ(sym.links.size(), full.links.size());
  for (std::size_t k = 0; k < sym.links.size(); ++k)
    EXPECT_NEAR(sym.links[k].bytes.value(), full.links[k].bytes.value(), 1e-9 * full.links[k].bytes.value()) << sym.links[k].link_class;
  EXPECT_NEAR(sym.it_energy.value() / full.it_energy.value(), 1.0, 0.001);
}

INSTANTIATE_TEST_SUITE_P(Layouts, Modes,
                         ::testing::Values(Case{1, 8, 1, "1f1b", 1, 8}, Case{1, 1, 4, "1f1b", 1, 32},
                                           Case{2, 4, 2, "1f1b", 1, 32}, Case{1, 2, 4, "interleaved-1f1b", 2, 32},
                                           Case{4, 2, 1, "1f1b", 1, 16}, Case{1, 1, 4, "gpipe", 1, 16}));

}  // namespace
}  // namespace hcsim
