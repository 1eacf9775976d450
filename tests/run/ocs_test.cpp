// A torus rewired by optical circuit switches between phases of a job (torus ocs_phases;
// TPU v4, Jouppi et al., ISCA 2023): each phase costs what a static run on its wiring
// costs, and each change of wiring adds the reconfiguration time once.
#include <gtest/gtest.h>

#include "scenarios/scenario.hpp"
#include "sim/driver/run.hpp"
#include "sim/report/report.hpp"

namespace hcsim {
namespace {

// 64 TPU v4 chips, data-parallel over the whole torus: the gradient all-reduce is what the
// wiring changes.
nlohmann::json doc(const nlohmann::json& dims) {
  return {{"name", "ocs"},
          {"cluster",
           {{"pools", {{{"name", "tpu"}, {"preset", "google-tpu-v4"}, {"count", 64}}}},
            {"topology",
             {{"type", "torus"},
              {"dims", dims},
              {"link", {{"type", "electrical"}, {"bandwidth", "400 Gb/s"}, {"latency", "1 us"}}}}}}},
          {"workload",
           {{"model",
             {{"type", "gpt"},
              {"overrides", {{"layers", 4}, {"hidden", 1024}, {"heads", 16}, {"vocab", 1024}, {"seq_len", 512}}}}},
            {"global_batch", 64},
            {"micro_batch", 1}}},
          {"strategy", {{"dp", 64}}},
          {"simulation", {{"symmetry", true}}}};
}

nlohmann::json rewired(std::int64_t steps) {
  nlohmann::json d = doc({4, 4, 4});
  auto& t = d["cluster"]["topology"];
  t["ocs_reconfiguration_time"] = "10 s";
  t["ocs_phases"] = {{{"from_step", 0}, {"dims", {4, 4, 4}}}, {{"from_step", 300}, {"dims", {2, 4, 8}}}};
  d["workload"]["average_steps"] = steps;
  return d;
}

double static_step(const nlohmann::json& dims) {
  return run_scenario(parse_scenario(doc(dims), "static.json")).metrics.step_time.value();
}

TEST(Ocs, EachPhaseCostsAStaticRunOnItsWiring) {
  const Scenario sc = parse_scenario(rewired(1000), "ocs.json");
  const RunOutput r = run_scenario(sc);
  ASSERT_EQ(r.phases.size(), 2u);
  EXPECT_EQ(r.phases[0].first_step, 0);
  EXPECT_EQ(r.phases[0].steps, 300);
  EXPECT_EQ(r.phases[0].dims, (std::vector<int>{4, 4, 4}));
  EXPECT_EQ(r.phases[1].first_step, 300);
  EXPECT_EQ(r.phases[1].steps, 700);
  EXPECT_EQ(r.phases[1].dims, (std::vector<int>{2, 4, 8}));
  // The same simulation on the same graph: exactly equal.
  const double cube = static_step({4, 4, 4}), slab = static_step({2, 4, 8});
  EXPECT_EQ(r.phases[0].step_time.value(), cube);
  EXPECT_EQ(r.phases[1].step_time.value(), slab);
  EXPECT_NE(cube, slab);  // the wiring matters to the all-reduce
  // Closed form (run.hpp): (300 cube + 700 slab + 1 reconfiguration x 10 s) / 1000.
  EXPECT_EQ(r.reconfigurations, 1);
  EXPECT_DOUBLE_EQ(r.reconfiguration_time.value(), 10.0);
  EXPECT_NEAR(r.mean_step_time.value(), (300 * cube + 700 * slab + 10.0) / 1000.0, 1e-12 * r.mean_step_time.value());
  // Reconfiguration energy: every chip idle for 10 s.
  double idle_w = 0;
  for (const auto& d : r.metrics.devices) idle_w += d.idle_power.value();
  EXPECT_NEAR(r.reconfiguration_energy.value(), 10.0 * idle_w, 1e-9 * r.reconfiguration_energy.value());
  const auto j = ocs_json(sc, r);
  EXPECT_EQ(j["phases"][1]["dims"], nlohmann::json({2, 4, 8}));
  EXPECT_EQ(j["reconfigurations"], 1);
  EXPECT_NE(ocs_table(sc, r).find("2x4x8"), std::string::npos);
}

TEST(Ocs, AJobEndingBeforeAPhaseNeverRewires) {
  const RunOutput r = run_scenario(parse_scenario(rewired(200), "short.json"));
  ASSERT_EQ(r.phases.size(), 1u);
  EXPECT_EQ(r.reconfigurations, 0);
  EXPECT_EQ(r.mean_step_time.value(), r.phases[0].step_time.value());
}

TEST(Ocs, BackToTheFirstWiringReconfiguresTwice) {
  // 4x4x4 until 300, 2x4x8 until 600, 4x4x4 again: two changes; the two 4x4x4 stretches are
  // one phase, simulated once.
  nlohmann::json d = rewired(1000);
  d["cluster"]["topology"]["ocs_phases"].push_back({{"from_step", 600}, {"dims", {4, 4, 4}}});
  const RunOutput r = run_scenario(parse_scenario(d, "back.json"));
  ASSERT_EQ(r.phases.size(), 2u);
  EXPECT_EQ(r.phases[0].steps, 700);
  EXPECT_EQ(r.reconfigurations, 2);
  EXPECT_NEAR(r.mean_step_time.value(), (700 * r.phases[0].step_time.value() + 300 * r.phases[1].step_time.value() + 20.0) / 1000.0,
              1e-12 * r.mean_step_time.value());
}

TEST(Ocs, PhasesNeedTheJobsStepCount) {
  nlohmann::json d = rewired(1000);
  d["workload"].erase("average_steps");
  try {
    parse_scenario(d, "nosteps.json");
    FAIL() << "accepted phases without a step count";
  } catch (const InputError& e) {
    ASSERT_EQ(e.issues().size(), 1u);
    EXPECT_EQ(e.issues()[0].path, "/workload/average_steps");
  }
}

}  // namespace
}  // namespace hcsim
