// Gradient compression in the simulated step: 1-bit Adam (Tang et al. 2021) pays off where
// the data-parallel link is the bottleneck and not where NVLink already hides the traffic.
#include <gtest/gtest.h>

#include "scenarios/scenario.hpp"
#include "sim/driver/run.hpp"
#include "sim/report/report.hpp"

namespace hcsim {
namespace {

RunOutput run(const char* file) {
  return run_scenario(load_scenario(std::string(HCSIM_SOURCE_DIR) + "/scenarios/compression/" + file));
}

TEST(Compression, OneBitAdamShortensABandwidthPoorStep) {
  const RunOutput r = run("bert-large-onebit-40gbe.json");
  ASSERT_TRUE(r.uncompressed);
  EXPECT_LT(r.metrics.step_time.value(), 0.85 * r.uncompressed->step_time.value());
  // Sign + one scale per chunk in two phases (all-to-all, all-gather) instead of one fp16
  // all-reduce: 2/16 of the bytes (docs/compression.md), and the scales (measured 1e-5).
  const auto dp = static_cast<std::size_t>(CommClass::dp);
  EXPECT_NEAR(r.metrics.comm_bytes[dp].value() / r.uncompressed->comm_bytes[dp].value(), 2.0 / 16.0, 2e-5);
  EXPECT_GT(r.codec_time.value(), 0.0);
  const auto j = compression_json(load_scenario(std::string(HCSIM_SOURCE_DIR) +
                                                "/scenarios/compression/bert-large-onebit-40gbe.json"),
                                  r);
  EXPECT_GT(j["by_kind"]["dp"]["exposed_s_saved"].get<double>(), 0.0);
}

TEST(Compression, OnNvlinkTheGainShrinksOrReverses) {
  const RunOutput r = run("bert-large-onebit-nvlink.json");
  ASSERT_TRUE(r.uncompressed);
  EXPECT_GT(r.metrics.step_time.value(), 0.97 * r.uncompressed->step_time.value());
}

TEST(Compression, WarmUpStepsAreUncompressed) {
  nlohmann::json doc =
      read_json_file(std::string(HCSIM_SOURCE_DIR) + "/scenarios/compression/bert-large-onebit-40gbe.json");
  doc["workload"]["step"] = 10;  // 1-bit Adam warms up uncompressed for 100,000 steps by default
  const RunOutput r = run_scenario(parse_scenario(doc, "warmup.json"));
  ASSERT_TRUE(r.uncompressed);
  EXPECT_DOUBLE_EQ(r.metrics.step_time.value(), r.uncompressed->step_time.value());
}

TEST(Compression, AverageOverTheFirstKStepsWeighsWarmUpAndCompressedPhases) {
  nlohmann::json doc =
      read_json_file(std::string(HCSIM_SOURCE_DIR) + "/scenarios/compression/bert-large-onebit-40gbe.json");
  doc["workload"]["average_steps"] = 150000;  // 100,000 warm-up steps, then 50,000 compressed
  const RunOutput r = run_scenario(parse_scenario(doc, "avg.json"));
  ASSERT_EQ(r.phases.size(), 2u);
  EXPECT_EQ(r.phases[0].steps, 100000);
  EXPECT_EQ(r.phases[1].first_step, 100000);
  const double expect = (2.0 * r.phases[0].step_time.value() + r.phases[1].step_time.value()) / 3.0;
  EXPECT_NEAR(r.mean_step_time.value() / expect, 1.0, 1e-12);
  EXPECT_DOUBLE_EQ(r.phases[0].step_time.value(), r.uncompressed->step_time.value());
}

}  // namespace
}  // namespace hcsim
