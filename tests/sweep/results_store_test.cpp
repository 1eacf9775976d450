// Result files that survive a kill (sim/sweep/results_store.cpp) and their CSV rows
// (sim/sweep/record.cpp). Expected bytes are written out by hand.
#include "sim/sweep/results_store.hpp"

#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <sstream>

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "sim/core/error.hpp"
#include "sim/sweep/record.hpp"

namespace hcsim::sweep {
namespace {

std::string slurp(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::ostringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

void spit(const std::string& path, const std::string& text) { std::ofstream(path, std::ios::binary) << text; }

void plain_write(const std::string& path, const std::string& content) { spit(path, content); }

class ResultsStoreTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir = (std::filesystem::temp_directory_path() / ("hcsim-store-" + std::to_string(::getpid()))).string();
    std::filesystem::remove_all(dir);
    std::filesystem::create_directories(dir);
  }
  void TearDown() override { std::filesystem::remove_all(dir); }
  std::string dir;
  Columns cols{{"/strategy/tp"}, {{"step_time_s", "/step_time_s"}}};
  static std::string rec(int i, int tp, double t) {
    return R"({"index":)" + std::to_string(i) + R"(,"status":"ok","params":{"/strategy/tp":)" + std::to_string(tp) +
           R"(},"metrics":{"step_time_s":)" + nlohmann::json(t).dump() + "}}";
  }
  static void accept(std::size_t, const nlohmann::ordered_json&) {}
};

TEST_F(ResultsStoreTest, AppendsAsPointsFinishAndRewritesSortedAtTheEnd) {
  {
    ResultsStore s(dir, cols, plain_write);
    EXPECT_EQ(s.open(accept), 0u);
    s.append(1, rec(1, 2, 0.5));
    s.append(0, rec(0, 1, 0.25));
    // Completion order on disk until the end.
    EXPECT_EQ(slurp(dir + "/results.jsonl"), rec(1, 2, 0.5) + "\n" + rec(0, 1, 0.25) + "\n");
    EXPECT_EQ(slurp(dir + "/results.csv"), "index,status,strategy.tp,step_time_s,reason\n1,ok,2,0.5,\n0,ok,1,0.25,\n");
    s.finish();
  }
  EXPECT_EQ(slurp(dir + "/results.jsonl"), rec(0, 1, 0.25) + "\n" + rec(1, 2, 0.5) + "\n");
  EXPECT_EQ(slurp(dir + "/results.csv"), "index,status,strategy.tp,step_time_s,reason\n0,ok,1,0.25,\n1,ok,2,0.5,\n");
}

TEST_F(ResultsStoreTest, ATornLastLineIsCutAndTheCsvRebuilt) {
  spit(dir + "/results.jsonl", rec(3, 4, 1.0) + "\n" + rec(0, 1, 0.25) + "\n" + R"({"index":1,"status":"o)");
  spit(dir + "/results.csv", "index,status\n3,ok,4,1.0,\n0,o");  // torn too
  ResultsStore s(dir, cols, plain_write);
  EXPECT_EQ(s.open(accept), 2u);
  EXPECT_TRUE(s.done(0));
  EXPECT_FALSE(s.done(1));
  EXPECT_TRUE(s.done(3));
  EXPECT_EQ(slurp(dir + "/results.jsonl"), rec(3, 4, 1.0) + "\n" + rec(0, 1, 0.25) + "\n");
  EXPECT_EQ(slurp(dir + "/results.csv"), "index,status,strategy.tp,step_time_s,reason\n0,ok,1,0.25,\n3,ok,4,1.0,\n");
  s.append(1, rec(1, 2, 0.5));
  EXPECT_EQ(slurp(dir + "/results.jsonl"), rec(3, 4, 1.0) + "\n" + rec(0, 1, 0.25) + "\n" + rec(1, 2, 0.5) + "\n");
}

TEST_F(ResultsStoreTest, ACorruptCompleteLineOrAForeignRecordIsAnInputError) {
  spit(dir + "/results.jsonl", rec(0, 1, 0.25) + "\nnot json\n");
  ResultsStore s(dir, cols, plain_write);
  EXPECT_THROW(s.open(accept), InputError);
  spit(dir + "/results.jsonl", rec(0, 1, 0.25) + "\n");
  ResultsStore t(dir, cols, plain_write);
  EXPECT_THROW(t.open([](std::size_t, const nlohmann::ordered_json&) { throw InputError("", "another sweep"); }),
               InputError);
}

TEST(Record, InfeasiblePointsKeepTheirReasonAndCsvQuotesIt) {
  const Columns cols{{"/strategy/tp", "/strategy/schedule"}, {{"step_time_s", "/step_time_s"}}};
  const nlohmann::ordered_json params = {{"/strategy/tp", 3}, {"/strategy/schedule", "1f1b"}};
  const std::string line = make_record(7, params, {"infeasible", "/strategy/tp: heads 16, tp 3, \"no\"", {}},
                                       cols.metrics);
  EXPECT_EQ(line, R"({"index":7,"status":"infeasible","params":{"/strategy/tp":3,"/strategy/schedule":"1f1b"},)"
                  R"("reason":"/strategy/tp: heads 16, tp 3, \"no\""})");
  EXPECT_EQ(csv_row(nlohmann::ordered_json::parse(line), cols),
            "7,infeasible,3,1f1b,,\"/strategy/tp: heads 16, tp 3, \"\"no\"\"\"\n");
  const std::string ok = make_record(0, params, {"ok", "", {{"step_time_s", 0.125}, {"extra", 1}}}, cols.metrics);
  EXPECT_EQ(ok, R"({"index":0,"status":"ok","params":{"/strategy/tp":3,"/strategy/schedule":"1f1b"},)"
                R"("metrics":{"step_time_s":0.125}})");
  EXPECT_EQ(report_value({{"energy", {{"it_j", 2.0}}}}, "/energy/it_j"), 2.0);
  EXPECT_TRUE(report_value({{"energy", 1}}, "/energy/it_j").is_null());
}

}  // namespace
}  // namespace hcsim::sweep
