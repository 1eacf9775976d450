#pragma once
// `hcsim search`: enumerates the candidate layouts of a search file, screens them all at the
// prune fidelity (`prune_mode`, by default the analytical mode), keeps those that
// fit in memory, the device budget and the power cap, confirms the best by the objective
// and the screened Pareto front with the event simulation, and ranks the confirmed ones.
// The Pareto front is over step time, energy per token and device count.
//
// Bounded confirmation. The screened rows are confirmed best first, `-j` at a time, until
// no row left can enter the best `top_k` confirmed: a row's screened key improved by the
// margin m (objective_key - |key| m) is no better than the top_k-th confirmed key. m is the
// larger of kScreenMargin (the analytical mode's agreement with the event mode that the
// property tests hold it to, docs/architecture.md) and the largest |confirmed / screened - 1|
// of the objective seen so far in this search, so a screen that errs more than its tests
// say widens its own bound. Then the screened front (at most 4 top_k of it, best first) is
// confirmed, but for layouts that a confirmed feasible one dominates by more than m in step
// time and energy per token with no more devices.

#include <cstdint>
#include <cstdio>
#include <memory>
#include <ostream>
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json.hpp>

#include "sim/sweep/record.hpp"
#include "sim/sweep/search_spec.hpp"

namespace hcsim::sweep {

// The candidates.csv rows of a search, kept in an unnamed temporary file rather than in
// memory: a search holds every candidate it enumerates, most are refused with a reason, and
// their rows' text would grow with the space (600 B a row, 52 MB for the 530B GPT's 87,924
// layouts). Rows are written to the file a megabyte at a time; those not yet written are
// read from memory. Throws std::runtime_error when the file cannot be made, written or read.
class CsvSpill {
 public:
  struct Ref {
    std::uint64_t at = 0;
    std::uint32_t size = 0;
  };
  CsvSpill();
  ~CsvSpill();
  CsvSpill(const CsvSpill&) = delete;
  CsvSpill& operator=(const CsvSpill&) = delete;
  Ref append(std::string_view text);
  [[nodiscard]] std::string read(Ref r) const;
  // The rows `refs`, in that order, to `out`; rows that lie one after another in the file
  // are read together.
  void copy(const std::vector<Ref>& refs, std::ostream& out) const;

 private:
  void flush() const;
  std::FILE* file_;
  std::uint64_t end_ = 0;              // the rows' total size
  mutable std::uint64_t written_ = 0;  // how much of it is in the file; the rest is pending_
  mutable std::string pending_;
};

// What a row's figures and candidates.csv row are made of: its last run's status, metrics
// (an object of default_metrics() names, when ok) and reason (when not).
struct RowOutcome {
  std::string status;
  nlohmann::ordered_json metrics;
  std::string reason;
};

struct SearchRow {
  Candidate candidate;
  std::string status = "pending";  // ok, infeasible (does not fit, invalid), error, over_power
  double step_time_s = 0, tokens_per_s = 0, energy_per_token_j = 0, power_w = 0, mfu = 0;
  CsvSpill::Ref csv;       // its candidates.csv row (search_columns(); the reason where not ok) in SearchResult::csv
  bool confirmed = false;  // simulated at the confirmation fidelity
};

struct SearchResult {
  std::vector<SearchRow> rows;        // every candidate, in enumeration order
  std::shared_ptr<CsvSpill> csv;      // the rows' candidates.csv rows, from their last run's record
  std::vector<std::size_t> ranking;   // confirmed feasible rows, best first by the objective
  std::vector<std::size_t> pareto;    // confirmed feasible rows on the front, by step time
  std::size_t screened_ok = 0;        // feasible after the first pass
  std::size_t fast_screened = 0;      // rows the first pass decided by the fast path (fast_screen.hpp)
  std::size_t confirm_rounds = 0;     // rounds of the bounded confirmation of the best
  double seconds = 0;
  double screen_seconds = 0;  // of `seconds`: the candidates' enumeration and first pass
};

// The columns of candidates.csv: the layout's parameters, then the default metrics.
const Columns& search_columns();

// The analytical screen's relative error on the objective that the bound allows at least.
inline constexpr double kScreenMargin = 0.02;

// Runs both passes on `jobs` worker processes. `confirm_mode` is "event" (the reference).
SearchResult run_search(const SearchSpec& spec, int jobs, bool progress, const std::string& confirm_mode = "event");

// Smaller is better for the ranking.
double objective_key(const SearchSpec& spec, const SearchRow& r);

// The scenario document of a candidate (base + layout), at simulation mode `mode`.
nlohmann::json candidate_document(const SearchSpec& spec, const Candidate& c, const std::string& mode);

// "tp 4 · pp 2 · dp 2 · ep 1 · mb 1 · 1f1b · recompute none · zero 0" (" · etp 2" after the
// ep where etp > 1)
std::string describe_layout(const Candidate& c);

}  // namespace hcsim::sweep
