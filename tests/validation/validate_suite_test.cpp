// `hcsim validate-suite` on a small suite built in a temporary directory (the quickstart
// scenario, 16 GPUs, runs in milliseconds): the error arithmetic, the exit codes (0 all
// within tolerance, 1 a case drifted or could not run, 2 a malformed suite), --case,
// --record and the JSON report; a collective case (one size of `hcsim collective`).
#include <cmath>
#include <filesystem>
#include <fstream>
#include <string>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "../cli/hcsim_child.hpp"
#include "../support/paths.hpp"

namespace hcsim::test {
namespace {

using nlohmann::json;

void write(const std::string& path, const json& j) { std::ofstream(path) << j.dump(2) << "\n"; }

// The step time the quickstart scenario predicts, from `hcsim run --format json`.
double quickstart_step() {
  const ChildResult r = run_hcsim({"run", kQuickstart, "--format", "json"});
  EXPECT_EQ(r.exit_code, 0) << describe(r);
  return json::parse(r.out).at("step_time_s").get<double>();
}

json one_case(double published, double recorded) {
  return {{"drift_tolerance_pp", 1.0},
          {"cases",
           {{"quick.json",
             {{"case", "Q-1"}, {"metric", "/step_time_s"}, {"value", published}, {"tf_per_gpu", 100.0},
              {"source", "test: a published value chosen 10 % above the prediction"},
              {"recorded_error_pct", recorded}}}}}};
}

class ValidateSuite : public ::testing::Test {
 protected:
  void SetUp() override {
    std::filesystem::copy_file(kQuickstart, dir_.file("quick.json"));
    step_ = quickstart_step();
  }
  TempDir dir_;
  double step_ = 0;
};

TEST_F(ValidateSuite, ErrorIsRelativeToThePublishedValue) {
  // Published 10 % above the prediction: error = (T - 1.1 T) / 1.1 T = -9.09 %.
  const double published = step_ * 1.1;
  const double expect_err = (step_ - published) / published * 100.0;
  write(dir_.file("expected.json"), one_case(published, expect_err));
  const ChildResult r = run_hcsim({"validate-suite", dir_.path(), "--format", "json"});
  ASSERT_EQ(r.exit_code, 0) << describe(r);
  const json out = json::parse(r.out);
  const json& c = out.at("cases").at(0);
  EXPECT_NEAR(c.at("error_pct").get<double>(), -100.0 / 11.0, 1e-6);
  EXPECT_NEAR(out.at("mean_abs_error_pct").get<double>(), 100.0 / 11.0, 1e-6);
  EXPECT_NEAR(out.at("max_abs_error_pct").get<double>(), 100.0 / 11.0, 1e-6);
  // Same FLOPs, so the rate scales inversely with time: X_pred = X_pub * T_pub / T_pred = 110.
  EXPECT_NEAR(c.at("/tf_per_gpu/predicted"_json_pointer).get<double>(), 110.0, 1e-6);
  EXPECT_TRUE(c.at("pass").get<bool>());
}

TEST_F(ValidateSuite, TableHasMeanAndMaxLines) {
  write(dir_.file("expected.json"), one_case(step_ * 1.1, -9.09));
  const ChildResult r = run_hcsim({"validate-suite", dir_.path()});
  ASSERT_EQ(r.exit_code, 0) << describe(r);
  EXPECT_NE(r.out.find("mean |error| 9.09 %"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("max  |error| 9.09 % (Q-1)"), std::string::npos) << r.out;
}

TEST_F(ValidateSuite, DriftBeyondOnePointFailsWithExitOne) {
  // True error -9.09 %; recorded -7.5 % is 1.59 pp away.
  write(dir_.file("expected.json"), one_case(step_ * 1.1, -7.5));
  const ChildResult r = run_hcsim({"validate-suite", dir_.path()});
  EXPECT_EQ(r.exit_code, 1) << describe(r);
  EXPECT_NE(r.out.find("drifted more than 1 pp"), std::string::npos) << r.out;
}

TEST_F(ValidateSuite, ACaseThatDoesNotFitFailsWithExitOne) {
  write(dir_.file("expected.json"), one_case(step_ * 1.1, -9.09));
  // Micro-batch 128 of GPT-3 1.3B without recomputation: ~100 GiB of activations per GPU.
  const ChildResult r = run_hcsim({"validate-suite", dir_.path(), "--set", "/workload/micro_batch=128", "--set",
                                   "/workload/global_batch=256"});
  EXPECT_EQ(r.exit_code, 1) << describe(r);
  EXPECT_NE(r.out.find("does not fit in memory"), std::string::npos) << r.out;
}

TEST_F(ValidateSuite, MalformedSuitesAreBadInput) {
  json j = one_case(step_, 0.0);
  j["cases"]["quick.json"]["colour"] = "red";
  write(dir_.file("expected.json"), j);
  ChildResult r = run_hcsim({"validate-suite", dir_.path()});
  EXPECT_EQ(r.exit_code, 2) << describe(r);
  EXPECT_NE(r.err.find("/cases/quick.json/colour: unknown key"), std::string::npos) << r.err;

  // A scenario without an expected value would pass unnoticed: refused.
  write(dir_.file("expected.json"), one_case(step_, 0.0));
  std::filesystem::copy_file(kQuickstart, dir_.file("other.json"));
  r = run_hcsim({"validate-suite", dir_.path()});
  EXPECT_EQ(r.exit_code, 2) << describe(r);
  EXPECT_NE(r.err.find("no expected value for scenario other.json"), std::string::npos) << r.err;

  r = run_hcsim({"validate-suite", dir_.path() + "/missing"});
  EXPECT_EQ(r.exit_code, 2) << describe(r);
}

TEST_F(ValidateSuite, RecordStoresTheCurrentErrors) {
  write(dir_.file("expected.json"), one_case(step_ * 1.1, 50.0));
  ChildResult r = run_hcsim({"validate-suite", dir_.path(), "--record"});
  ASSERT_EQ(r.exit_code, 0) << describe(r);
  const json stored = json::parse(read_file(dir_.file("expected.json")));
  EXPECT_NEAR(stored.at("/cases/quick.json/recorded_error_pct"_json_pointer).get<double>(), -9.09, 0.006);
  EXPECT_EQ(stored.at("/cases/quick.json/source"_json_pointer).get<std::string>().rfind("test:", 0), 0u);
  r = run_hcsim({"validate-suite", dir_.path()});
  EXPECT_EQ(r.exit_code, 0) << describe(r);
}

TEST_F(ValidateSuite, CaseSelectsOneCase) {
  write(dir_.file("expected.json"), one_case(step_ * 1.1, -9.09));
  ChildResult r = run_hcsim({"validate-suite", dir_.path(), "--case", "Q-1", "--format", "json"});
  ASSERT_EQ(r.exit_code, 0) << describe(r);
  EXPECT_EQ(json::parse(r.out).at("cases").size(), 1u);
  r = run_hcsim({"validate-suite", dir_.path(), "--case", "nope"});
  EXPECT_EQ(r.exit_code, 2) << describe(r);
  EXPECT_NE(r.err.find("no case named nope"), std::string::npos) << r.err;
}

// A collective case is one size of `hcsim collective` on the scenario's cluster, its metric
// the busbw of that row. The quickstart's node (8 A100 on NVLink 3 through an NVSwitch, the
// nvlink3 preset: 300 GB/s a direction, efficiency 0.78) runs a 1 GiB ring all-reduce at
// the closed form of tests/network/ring_busbw_test.cpp: busbw = (14/8) S / (8.4 us + 14 x
// 3.3 us + (14/8) S / B), B = 0.78 x 300 GB/s (NCCL Simple's base and per-step latencies,
// sim/collectives/protocol.hpp).
TEST_F(ValidateSuite, ACollectiveCaseIsOneSizeOfHcsimCollective) {
  const double S = 1073741824.0, B = 300e9 * 0.78;
  const double want = 14.0 / 8 * S / (8.4e-6 + 14 * 3.3e-6 + 14.0 / 8 * S / B);
  const ChildResult c = run_hcsim({"collective", dir_.file("quick.json"), "--group", "node", "--algorithm", "ring",
                                   "-b", "1G", "-e", "1G", "--format", "json"});
  ASSERT_EQ(c.exit_code, 0) << describe(c);
  const double busbw = json::parse(c.out).at("/rows/0/busbw"_json_pointer).get<double>();
  EXPECT_NEAR(busbw, want, 1e-5 * B);
  json j = {{"drift_tolerance_pp", 1.0},
            {"cases",
             {{"quick.json",
               {{"case", "Q-AR"},
                {"collective", {{"op", "all_reduce"}, {"group", "node"}, {"size", "1 GiB"}, {"algorithm", "ring"}}},
                {"value", want / 0.9},
                {"source", "test: a published busbw chosen so that the prediction is 10 % below it"}}}}}};
  write(dir_.file("expected.json"), j);
  const ChildResult r = run_hcsim({"validate-suite", dir_.path(), "--format", "json"});
  ASSERT_EQ(r.exit_code, 0) << describe(r);
  const json doc = json::parse(r.out);
  const json& out = doc.at("cases").at(0);
  EXPECT_EQ(out.at("metric").get<std::string>(), "/busbw");  // the default metric of a collective case
  EXPECT_EQ(out.at("predicted").get<double>(), busbw);       // the same row, bit for bit
  EXPECT_NEAR(out.at("error_pct").get<double>(), (busbw - want / 0.9) / (want / 0.9) * 100.0, 1e-9);
  EXPECT_FALSE(out.contains("memory"));  // no training step, no memory to report
}

TEST_F(ValidateSuite, AMalformedCollectiveCaseIsBadInputAtItsPath) {
  const auto suite = [&](const json& coll) {
    write(dir_.file("expected.json"),
          {{"cases", {{"quick.json", {{"collective", coll}, {"value", 1e11}, {"source", "test: any value"}}}}}});
    return run_hcsim({"validate-suite", dir_.path()});
  };
  ChildResult r = suite({{"op", "all_smash"}, {"size", "1 GiB"}});
  EXPECT_EQ(r.exit_code, 2) << describe(r);
  EXPECT_NE(r.err.find("/cases/quick.json/collective/op: unknown collective"), std::string::npos) << r.err;
  r = suite({{"op", "all_reduce"}});
  EXPECT_EQ(r.exit_code, 2) << describe(r);
  EXPECT_NE(r.err.find("/cases/quick.json/collective/size"), std::string::npos) << r.err;
  r = suite({{"op", "all_reduce"}, {"size", "1 GiB"}, {"group", "99"}});  // the quickstart has 16 GPUs
  EXPECT_EQ(r.exit_code, 2) << describe(r);
  EXPECT_NE(r.err.find("/cases/quick.json/collective/group: expected all, node or a device count from 2 to 16"),
            std::string::npos)
      << r.err;
  r = suite({{"op", "all_reduce"}, {"size", 1024}});
  EXPECT_EQ(r.exit_code, 2) << describe(r);
  EXPECT_NE(r.err.find("/cases/quick.json/collective/size: expected a string"), std::string::npos) << r.err;
}

}  // namespace
}  // namespace hcsim::test
