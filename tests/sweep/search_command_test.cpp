// `hcsim search` end to end (sim/cli/search_command.cpp, sim/sweep/search_runner.cpp) on
// the tiny GPT: the best layout by tokens/s, the Pareto front, a power cap that no layout
// meets. Expectations come from the search's own candidate table (the best row must be the
// maximum over every confirmed feasible candidate) and from the cap's definition.
#include <algorithm>
#include <filesystem>
#include <set>
#include <sstream>

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include "support/run_binary.hpp"
#include "../support/paths.hpp"

namespace hcsim::test {
namespace {

using ::testing::HasSubstr;

std::vector<std::vector<std::string>> read_csv(const std::string& text) {
  std::vector<std::vector<std::string>> rows;
  std::istringstream in(text);
  for (std::string line; std::getline(in, line);) {
    rows.emplace_back();
    std::istringstream f(line);
    for (std::string cell; std::getline(f, cell, ',');) rows.back().push_back(cell);
  }
  return rows;
}

TEST(SearchCommand, FindsTheFastestLayoutAndItsParetoFront) {
  ScratchDir dir("hcsim-search");
  spit(dir / "search.json", R"({"base": ")" + kTiny + R"(", "max_devices": 8, "top_k": 2,
    "space": {"tp": [1, 2], "pp": [1, 2], "micro_batch": [1, 2], "schedule": ["1f1b"], "recompute": ["none", "full"],
              "zero": [0], "sequence_parallel": [false]}})");
  // Screened at the event fidelity, so every feasible candidate is confirmed and comparable.
  const RunResult r =
      hcsim({"search", dir / "search.json", "--out", dir / "out", "-q", "-j", "2", "--prune-mode", "event"}, dir);
  ASSERT_EQ(r.rc, 0) << r.out << r.err;
  EXPECT_THAT(r.out, HasSubstr("search: 48 candidate layouts"));
  EXPECT_THAT(r.out, HasSubstr("Pareto front (step time vs energy per token vs devices)"));
  EXPECT_THAT(r.out, ::testing::AnyOf(HasSubstr("Pareto plot: "), HasSubstr("plot skipped: ")));

  // The best row is the highest tokens/s among the confirmed candidates.
  const auto rows = read_csv(slurp(dir / "out/candidates.csv"));
  ASSERT_EQ(rows.size(), 49u);  // header + 48: (tp,pp,dp) with product <= 8: 12, x 2 micro-batches x 2 recompute
  const auto col = [&](const std::string& name) {
    return static_cast<std::size_t>(std::find(rows[0].begin(), rows[0].end(), name) - rows[0].begin());
  };
  double best = 0;
  for (std::size_t i = 1; i < rows.size(); ++i)
    if (rows[i][col("status")] == "ok") best = std::max(best, std::stod(rows[i][col("tokens_per_s")]));
  const auto chosen = nlohmann::json::parse(slurp(dir / "out/best_scenario.json"));
  EXPECT_EQ(chosen["simulation"]["mode"], "event");
  bool found = false;
  for (std::size_t i = 1; i < rows.size(); ++i)
    if (std::stod(rows[i][col("tokens_per_s")]) == best)
      found = found || (std::stoi(rows[i][col("strategy.tp")]) == chosen["strategy"]["tp"].get<int>() &&
                        std::stoi(rows[i][col("strategy.dp")]) == chosen["strategy"]["dp"].get<int>() &&
                        rows[i][col("strategy.recompute")] == chosen["strategy"]["recompute"].get<std::string>());
  EXPECT_TRUE(found) << "best_scenario.json is not the row with the highest tokens/s";

  // The front holds the fastest layout and the one on the fewest devices.
  const auto pts = read_csv(slurp(dir / "out/pareto_points.csv"));
  ASSERT_GE(pts.size(), 3u);
  EXPECT_EQ(pts[0], (std::vector<std::string>{"devices", "step_time_s", "energy_per_token_j", "on_front", "confirmed", "label"}));
  EXPECT_EQ(pts[1][3], "1");  // ranked first by tokens/s, and nothing is faster
  bool one_device_on_front = false;
  for (std::size_t i = 1; i < pts.size(); ++i) one_device_on_front |= pts[i][0] == "1" && pts[i][3] == "1";
  EXPECT_TRUE(one_device_on_front);
  for (std::size_t i = 1; i < pts.size(); ++i) {  // screened layouts are listed, never on the front
    EXPECT_TRUE(pts[i][4] == "0" || pts[i][4] == "1") << i;
    if (pts[i][4] == "0") {
      EXPECT_EQ(pts[i][3], "0") << i;
    }
  }
}

// The confirmation is bounded (sim/sweep/search_runner.hpp): the best layouts are confirmed
// until no screened one could enter the top_k. The top_k must be those that confirming every
// feasible layout (the screen at the event fidelity) finds, and fewer are confirmed than
// are feasible.
std::string best_lines(const std::string& out) {
  const auto at = out.find("best 2 by tokens_per_s:");
  const auto end = out.find("Pareto front", at);
  return at == std::string::npos ? "" : out.substr(at, end - at);
}

std::size_t count_before(const std::string& out, const std::string& what) {
  const auto at = out.find(what);
  if (at == std::string::npos) return 0;
  const auto from = out.rfind(", ", at);
  return static_cast<std::size_t>(std::stoul(out.substr(from + 2, at - from - 2)));
}

TEST(SearchCommand, BoundedConfirmationFindsTheTopLayoutsOfConfirmingThemAll) {
  ScratchDir dir("hcsim-search-bound");
  spit(dir / "search.json", R"({"base": ")" + kTiny + R"(", "max_devices": 8, "top_k": 2,
    "space": {"tp": [1, 2, 4], "pp": [1, 2], "micro_batch": [1, 2], "schedule": ["1f1b"], "recompute": ["none", "full"],
              "zero": [0, 1], "sequence_parallel": [false]}})");
  const RunResult bounded = hcsim({"search", dir / "search.json", "--out", dir / "a", "-q"}, dir);
  const RunResult all =
      hcsim({"search", dir / "search.json", "--out", dir / "b", "-q", "--prune-mode", "event"}, dir);
  ASSERT_EQ(bounded.rc, 0) << bounded.out << bounded.err;
  ASSERT_EQ(all.rc, 0) << all.out << all.err;
  EXPECT_THAT(bounded.out, HasSubstr("until the screen's bound left none that could enter the top 2"));
  ASSERT_FALSE(best_lines(all.out).empty()) << all.out;
  EXPECT_EQ(best_lines(bounded.out), best_lines(all.out));
  const std::size_t feasible = count_before(bounded.out, " feasible after screening");
  const std::size_t confirmed = count_before(bounded.out, " confirmed (event mode");
  EXPECT_GT(confirmed, 0u) << bounded.out;
  EXPECT_LT(confirmed, feasible) << bounded.out;
}

// The search over an MoE model (the tiny MoE of scenarios/sweeps/, no "ep" in the space):
// every layout shows its ep in the table and the candidates' CSV, and the best scenario
// written runs the winner's ep. The winner's ep is taken from the table, so the test holds
// whichever layout wins (the brute force of tests/sweep/search_runner_test.cpp checks that).
TEST(SearchCommand, AnMoeSearchShowsEachLayoutsExpertParallelism) {
  ScratchDir dir("hcsim-search-moe");
  spit(dir / "search.json", R"({"base": ")" + kSource + R"(/scenarios/sweeps/tiny-moe.json", "max_devices": 8,
    "top_k": 1, "space": {"tp": [1], "pp": [1], "micro_batch": [1], "recompute": ["selective"], "zero": [0, 1]}})");
  const RunResult r = hcsim({"search", dir / "search.json", "--out", dir / "out", "-q", "-j", "2"}, dir);
  ASSERT_EQ(r.rc, 0) << r.out << r.err;
  const auto at = r.out.find("best layout: ");
  ASSERT_NE(at, std::string::npos) << r.out;
  const std::string line = r.out.substr(at, r.out.find('\n', at) - at);
  const auto ep_at = line.find(" · ep ");
  ASSERT_NE(ep_at, std::string::npos) << line;
  const int ep = std::stoi(line.substr(ep_at + 6));
  const auto chosen = nlohmann::json::parse(slurp(dir / "out/best_scenario.json"));
  EXPECT_EQ(chosen["strategy"]["ep"].get<int>(), ep) << line;
  // Header + 19: dp 1 at ep 1 (ZeRO only where devices share experts: zero 0), dp 2, 4, 8 at
  // the 2, 3, 4 ep dividing both the 8 experts and the stage, each with zero 0 and 1.
  const auto rows = read_csv(slurp(dir / "out/candidates.csv"));
  ASSERT_EQ(rows.size(), 20u);
  const auto col = static_cast<std::size_t>(std::find(rows[0].begin(), rows[0].end(), "strategy.ep") - rows[0].begin());
  ASSERT_LT(col, rows[0].size());
  std::set<std::string> eps;
  for (std::size_t i = 1; i < rows.size(); ++i) eps.insert(rows[i][col]);
  // dp 1, 2, 4, 8: stages of 1 to 8 devices, so every divisor of the 8 experts appears.
  EXPECT_EQ(eps, (std::set<std::string>{"1", "2", "4", "8"}));
}

// An etp axis end to end (the tiny MoE, tp 1, pp 1, dp 1 to 8, the default ep axis): the
// candidates' CSV has a strategy.etp column with both values; an etp 2 row's screened step
// time is `hcsim run`'s in analytical mode for the same layout (to 1e-9: the fast path sums
// in another order); with etp 2 alone, best_scenario.json runs etp 2 and gives the step
// time its row was confirmed at (the event mode).
TEST(SearchCommand, AnEtpAxisScreensAndConfirmsEachLayoutsExpertTensorParallelism) {
  ScratchDir dir("hcsim-search-etp");
  const std::string moe = kSource + "/scenarios/sweeps/tiny-moe.json";
  const std::string space = R"("tp": [1], "pp": [1], "micro_batch": [1], "recompute": ["selective"], "zero": [0])";
  spit(dir / "search.json", R"({"base": ")" + moe + R"(", "max_devices": 8, "top_k": 1,
    "space": {)" + space + R"(, "etp": [1, 2]}})");
  const RunResult r = hcsim({"search", dir / "search.json", "--out", dir / "out", "-q"}, dir);
  ASSERT_EQ(r.rc, 0) << r.out << r.err;
  // etp 1: the ep dividing the 8 experts and the stage of 1, 2, 4, 8 devices: 1 + 2 + 3 + 4;
  // etp 2: those with 2 ep dividing it: 0 + 1 + 2 + 3.
  const auto rows = read_csv(slurp(dir / "out/candidates.csv"));
  ASSERT_EQ(rows.size(), 17u);
  const auto col = [&](const std::string& name) {
    const auto at = static_cast<std::size_t>(std::find(rows[0].begin(), rows[0].end(), name) - rows[0].begin());
    EXPECT_LT(at, rows[0].size()) << name;
    return at;
  };
  std::set<std::string> etps;
  std::size_t row2 = 0;  // the first feasible etp 2 row
  for (std::size_t i = 1; i < rows.size(); ++i) {
    etps.insert(rows[i][col("strategy.etp")]);
    if (row2 == 0 && rows[i][col("strategy.etp")] == "2" && rows[i][col("status")] == "ok") row2 = i;
  }
  EXPECT_EQ(etps, (std::set<std::string>{"1", "2"}));
  ASSERT_NE(row2, 0u) << slurp(dir / "out/candidates.csv");
  const auto& row = rows[row2];
  std::vector<std::string> run = {"run", moe, "--format", "json", "--set", "/simulation/mode=analytical"};
  for (const char* key : {"strategy.tp", "strategy.pp", "strategy.dp", "strategy.ep", "strategy.etp",
                          "workload.micro_batch", "strategy.schedule", "strategy.interleave", "strategy.recompute",
                          "strategy.zero", "strategy.sequence_parallel", "cluster.pools.0.count"}) {
    std::string pointer = "/" + std::string(key);
    std::replace(pointer.begin(), pointer.end(), '.', '/');
    run.insert(run.end(), {"--set", pointer + "=" + row[col(key)]});
  }
  const RunResult single = hcsim(run, dir);
  ASSERT_EQ(single.rc, 0) << single.out << single.err;
  const double screened = std::stod(row[col("step_time_s")]);
  const double analytical = nlohmann::json::parse(single.out)["step_time_s"].get<double>();
  EXPECT_NEAR(screened, analytical, 1e-9 * analytical);

  // etp 2 alone: the winner, confirmed in event mode, is an etp 2 layout, and the scenario
  // written for it reruns to the confirmed figure.
  spit(dir / "search2.json", R"({"base": ")" + moe + R"(", "max_devices": 8, "top_k": 1,
    "space": {)" + space + R"(, "etp": [2]}})");
  const RunResult only = hcsim({"search", dir / "search2.json", "--out", dir / "out2", "-q"}, dir);
  ASSERT_EQ(only.rc, 0) << only.out << only.err;
  EXPECT_THAT(only.out, HasSubstr("best layout: tp 1 · pp 1 · dp "));
  EXPECT_THAT(only.out, HasSubstr(" · etp 2 · mb 1"));
  const auto chosen = nlohmann::json::parse(slurp(dir / "out2/best_scenario.json"));
  EXPECT_EQ(chosen["strategy"]["etp"], 2);
  const RunResult rerun = hcsim({"run", dir / "out2/best_scenario.json", "--format", "json"}, dir);
  ASSERT_EQ(rerun.rc, 0) << rerun.out << rerun.err;
  const double confirmed = nlohmann::json::parse(rerun.out)["step_time_s"].get<double>();
  const auto rows2 = read_csv(slurp(dir / "out2/candidates.csv"));
  bool found = false;
  for (std::size_t i = 1; i < rows2.size(); ++i)
    found = found || (rows2[i][col("strategy.dp")] == std::to_string(chosen["strategy"]["dp"].get<int>()) &&
                      rows2[i][col("strategy.ep")] == std::to_string(chosen["strategy"]["ep"].get<int>()) &&
                      std::stod(rows2[i][col("step_time_s")]) == confirmed);
  EXPECT_TRUE(found) << "no row of candidates.csv has the step time best_scenario.json runs at";
}

// Bad etp lists are input errors (exit code 2) at their place in the search file: below 1,
// not an integer, or more than 1 on a dense model (as strategy.etp in a scenario).
TEST(SearchCommand, BadEtpValuesAreExitCodeTwo) {
  ScratchDir dir("hcsim-search-etp-bad");
  spit(dir / "bad.json",
       R"({"base": ")" + kSource + R"(/scenarios/sweeps/tiny-moe.json", "space": {"etp": [0, "two"]}})");
  const RunResult bad = hcsim({"search", dir / "bad.json", "--out", dir / "out", "-q"}, dir);
  EXPECT_EQ(bad.rc, 2) << bad.out << bad.err;
  EXPECT_THAT(bad.err, HasSubstr("/space/etp/0: expected a positive integer"));
  EXPECT_THAT(bad.err, HasSubstr("/space/etp/1: expected a positive integer"));
  spit(dir / "dense.json", R"({"base": ")" + kTiny + R"(", "space": {"etp": [2]}})");
  const RunResult dense = hcsim({"search", dir / "dense.json", "--out", dir / "out", "-q"}, dir);
  EXPECT_EQ(dense.rc, 2) << dense.out << dense.err;
  EXPECT_THAT(dense.err, HasSubstr(R"(/space/etp/0: etp = 2 needs an MoE model ("experts" > 0 in the model))"));
  EXPECT_FALSE(std::filesystem::exists(dir / "out/candidates.csv"));
}

TEST(SearchCommand, APowerCapNoLayoutMeetsIsExitCodeOne) {
  ScratchDir dir("hcsim-search-cap");
  spit(dir / "search.json", R"({"base": ")" + kTiny + R"(", "max_power_w": "10 W",
    "space": {"tp": [1], "pp": [1], "micro_batch": [1], "schedule": ["1f1b"], "recompute": ["none"], "zero": [0],
              "sequence_parallel": [false]}})");
  const RunResult r = hcsim({"search", dir / "search.json", "--out", dir / "out", "-q"}, dir);
  EXPECT_EQ(r.rc, 1);
  EXPECT_THAT(r.out, HasSubstr("no layout fits in memory within the device budget and power cap"));
  EXPECT_THAT(slurp(dir / "out/candidates.csv"), HasSubstr("over_power"));
  EXPECT_THAT(slurp(dir / "out/candidates.csv"), HasSubstr("is above the cap of 10 W"));
}

}  // namespace
}  // namespace hcsim::test
