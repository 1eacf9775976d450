// The layout search over expert parallelism (sim/sweep/search_runner.cpp): on the tiny MoE
// (scenarios/sweeps/tiny-moe-search.json: 8 experts, up to 16 H100 in two nodes), the
// search's best layout by tokens/s is the best of a brute-force evaluation of every legal
// (tp, pp, dp, ep, ZeRO, sequence parallelism) in the full analytical mode: each layout's
// scenario parsed (the parser's rules decide what is legal) and run by run_scenario. The
// brute force enumerates its own grid, wider than the search's (every dp and ep up to 16
// and 8, not only the divisors), so an ep missing from the search's axis would show.
#include "sim/sweep/search_runner.hpp"

#include <gtest/gtest.h>

#include <cstdio>

#include <fmt/format.h>

#include "scenarios/scenario.hpp"
#include "sim/core/error.hpp"
#include "sim/driver/run.hpp"

namespace hcsim::sweep {
namespace {

const std::string kSweeps = std::string(HCSIM_SOURCE_DIR) + "/scenarios/sweeps/";

struct Best {
  double tokens_per_s = 0;
  std::string layout;
};

TEST(SearchRunner, FindsTheBestExpertParallelLayoutOfABruteForce) {
  register_builtins();
  const SearchSpec spec = load_search(kSweeps + "tiny-moe-search.json");
  // Screened and ranked at the analytical fidelity (the confirmation at the same fidelity
  // as the screen, so every feasible layout is ranked).
  const SearchResult res = run_search(spec, 1, false, "analytical");
  ASSERT_FALSE(res.ranking.empty());
  EXPECT_EQ(res.fast_screened, res.rows.size());
  const Candidate& won = res.rows[res.ranking.front()].candidate;
  const double found = res.rows[res.ranking.front()].tokens_per_s;

  const nlohmann::json base = read_json_file(kSweeps + "tiny-moe.json");
  Best best, best_ep1;
  int legal = 0;
  for (int tp : {1, 2})
    for (int pp : {1, 2})
      for (int dp = 1; dp * tp * pp <= 16; ++dp)
        for (int ep = 1; ep <= 8; ++ep)
          for (int zero : {0, 1})
            for (bool sp : {false, true}) {
              nlohmann::json doc = base;
              doc["cluster"]["pools"][0]["count"] = tp * pp * dp;
              doc["strategy"] = {{"dp", dp},           {"tp", tp},
                                 {"pp", pp},           {"ep", ep},
                                 {"schedule", "1f1b"}, {"recompute", "selective"},
                                 {"zero", zero},       {"sequence_parallel", sp}};
              doc["simulation"] = {{"mode", "analytical"}};
              double tokens = 0;
              try {
                tokens = run_scenario(parse_scenario(doc, "layout.json")).metrics.tokens_per_s;
              } catch (const InputError&) {
                continue;  // refused by the layout rules, or does not fit in memory
              }
              ++legal;
              const std::string text = fmt::format("tp {} pp {} dp {} ep {} zero {} sp {}", tp, pp, dp, ep, zero, sp);
              if (tokens > best.tokens_per_s) best = {tokens, text};
              if (ep == 1 && tokens > best_ep1.tokens_per_s) best_ep1 = {tokens, text};
            }
  std::printf("%d legal layouts; best %s (%.6g tokens/s), best at ep 1 %s (%.6g tokens/s)\n", legal,
              best.layout.c_str(), best.tokens_per_s, best_ep1.layout.c_str(), best_ep1.tokens_per_s);
  EXPECT_GT(legal, 50);
  SCOPED_TRACE("brute force: " + best.layout + "; search: " + describe_layout(won));
  // The same best, to the summation order in which the fast path and run_scenario differ.
  EXPECT_NEAR(found, best.tokens_per_s, 1e-9 * best.tokens_per_s);
  // The search's winner is itself legal and gives that figure in the full analytical mode.
  const Evaluation ev = evaluate_scenario(candidate_document(spec, won, "analytical"), spec.base.file, false);
  ASSERT_EQ(ev.status, "ok") << ev.reason;
  EXPECT_NEAR(ev.report["tokens_per_s"].get<double>(), found, 1e-9 * found);
  // Expert parallelism is what wins here: the best layout without it is slower.
  EXPECT_GT(won.params["/strategy/ep"].get<int>(), 1);
  EXPECT_LT(best_ep1.tokens_per_s, best.tokens_per_s) << best_ep1.layout;
}

// The rows of a search hold their candidates.csv rows in a temporary file (CsvSpill) and
// no parameters where the layout is not feasible: each row reads back as the CSV of its
// record, index and status first; a feasible row keeps what its confirmation and the tables
// need.
TEST(SearchRunner, RowsKeepTheirCsvInTheSpillAndParametersOnlyWhenFeasible) {
  register_builtins();
  const SearchSpec spec = load_search(kSweeps + "tiny-moe-search.json");
  const SearchResult res = run_search(spec, 1, false, "analytical");
  ASSERT_TRUE(res.csv);
  std::size_t ok = 0;
  for (std::size_t i = 0; i < res.rows.size(); ++i) {
    const SearchRow& row = res.rows[i];
    const std::string line = res.csv->read(row.csv);
    ASSERT_FALSE(line.empty()) << i;
    EXPECT_EQ(line.back(), '\n') << i;
    EXPECT_EQ(line.rfind(fmt::format("{},{},", i, row.status), 0), 0u) << line;
    EXPECT_EQ(row.candidate.params.is_null(), row.status != "ok") << line;
    ok += row.status == "ok" ? 1 : 0;
  }
  EXPECT_GT(ok, 0u);
  EXPECT_LT(ok, res.rows.size());
}

TEST(CsvSpill, ReadsBackWhatWasAppended) {
  CsvSpill spill;
  const std::string a = "0,ok,1,2\n", b(70000, 'x'), c = "2,infeasible,\"a, quoted\"\n";
  const CsvSpill::Ref ra = spill.append(a), rb = spill.append(b), rc = spill.append(c);
  EXPECT_EQ(spill.read(rc), c);
  EXPECT_EQ(spill.read(ra), a);
  EXPECT_EQ(spill.read(rb), b);
  EXPECT_EQ(rb.at, a.size());
  EXPECT_EQ(spill.read({}), "");
}

}  // namespace
}  // namespace hcsim::sweep
