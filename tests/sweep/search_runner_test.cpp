// The layout search over expert parallelism (sim/sweep/search_runner.cpp): on the tiny MoE
// (scenarios/sweeps/tiny-moe-search.json: 8 experts, up to 16 H100 in two nodes), the
// search's best layout by tokens/s is the best of a brute-force evaluation of every legal
// (tp, pp, dp, ep, ZeRO, sequence parallelism) in the full analytical mode: each layout's
// scenario parsed (the parser's rules decide what is legal) and run by run_scenario. The
// brute force enumerates its own grid, wider than the search's (every dp and ep up to 16
// and 8, not only the divisors), so an ep missing from the search's axis would show.
#include "sim/sweep/search_runner.hpp"

#include <gtest/gtest.h>

#include <cmath>
#include <cstdio>
#include <sstream>
#include <string>
#include <vector>

#include <fmt/format.h>

#include "scenarios/scenario.hpp"
#include "sim/core/error.hpp"
#include "sim/driver/run.hpp"
#include "sim/sweep/record.hpp"

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
  EXPECT_GT(won.ep, 1);
  EXPECT_LT(best_ep1.tokens_per_s, best.tokens_per_s) << best_ep1.layout;
}

// The rows of a search hold their candidates.csv rows in a temporary file (CsvSpill), made
// from the candidates' typed fields: each reads back as csv_row writes the record of the
// same layout's scenario run in the full analytical mode (sim/sweep/record.cpp), byte for
// byte where the layout is refused (status, parameters, the parser's or the memory check's
// reason) and, where it is ok, field for field to the summation order in which the fast path
// and run_scenario differ (1e-9 relative).
TEST(SearchRunner, RowsReadBackAsTheFullPathsRecords) {
  register_builtins();
  const SearchSpec spec = load_search(kSweeps + "tiny-moe-search.json");
  const SearchResult res = run_search(spec, 1, false, "analytical");
  ASSERT_TRUE(res.csv);
  const auto split = [](const std::string& line) {
    std::vector<std::string> out(1);
    bool quoted = false;
    for (char c : line) {
      if (c == '"') quoted = !quoted;
      if (c == ',' && !quoted)
        out.emplace_back();
      else if (c != '\n')
        out.back() += c;
    }
    return out;
  };
  std::size_t ok = 0, refused = 0;
  for (std::size_t i = 0; i < res.rows.size(); ++i) {
    const SearchRow& row = res.rows[i];
    const std::string line = res.csv->read(row.csv);
    const Evaluation ev =
        evaluate_scenario(candidate_document(spec, row.candidate, "analytical"), spec.base.file, false);
    const std::string want = csv_row(
        nlohmann::ordered_json::parse(make_record(i, row.candidate.params(), ev, default_metrics())), search_columns());
    ASSERT_EQ(row.status, ev.status) << line << ev.reason;
    if (row.status != "ok") {
      ++refused;
      EXPECT_EQ(line, want);
      continue;
    }
    ++ok;
    const auto got = split(line), exp = split(want);
    ASSERT_EQ(got.size(), exp.size()) << line;
    const std::size_t params = 2 + search_columns().params.size();
    for (std::size_t f = 0; f < got.size(); ++f) {
      if (f < params || f + 1 == got.size()) {
        EXPECT_EQ(got[f], exp[f]) << line;
      } else {
        const double a = std::stod(got[f]), b = std::stod(exp[f]);
        EXPECT_NEAR(a, b, 1e-9 * std::abs(b)) << line;
      }
    }
  }
  EXPECT_GT(ok, 0u);
  EXPECT_GT(refused, 0u);
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

// Rows go to the file a megabyte at a time: rows on either side of a flush, and rows not yet
// written, read back alike, and copy() writes any order of them, runs of neighbours read
// together and split at a megabyte.
TEST(CsvSpill, CopiesRowsOnEitherSideOfAFlushInAnyOrder) {
  CsvSpill spill;
  std::vector<std::string> text;
  std::vector<CsvSpill::Ref> refs;
  for (int i = 0; i < 3000; ++i) {
    text.push_back(fmt::format("{},row,{}\n", i, std::string(static_cast<std::size_t>(100 + i % 700), 'a' + i % 26)));
    refs.push_back(spill.append(text.back()));
  }
  for (int i : {0, 1499, 2999})
    EXPECT_EQ(spill.read(refs[static_cast<std::size_t>(i)]), text[static_cast<std::size_t>(i)]);
  std::vector<CsvSpill::Ref> order;
  std::string want;
  for (int i = 0; i < 3000; ++i) {  // in order, then every third backwards
    order.push_back(refs[static_cast<std::size_t>(i)]);
    want += text[static_cast<std::size_t>(i)];
  }
  for (int i = 2999; i >= 0; i -= 3) {
    order.push_back(refs[static_cast<std::size_t>(i)]);
    want += text[static_cast<std::size_t>(i)];
  }
  std::ostringstream out;
  spill.copy(order, out);
  EXPECT_EQ(out.str(), want);
  EXPECT_EQ(spill.read(refs[2999]), text[2999]);  // after the copy's flush
}

}  // namespace
}  // namespace hcsim::sweep
