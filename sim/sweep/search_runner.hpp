#pragma once
// `hcsim search`: enumerates the candidate layouts of a search file, screens them all at the
// prune fidelity (`prune_mode`, by default the analytical mode), keeps those that
// fit in memory, the device budget and the power cap, confirms the best `top_k` by the
// objective plus the screened Pareto front with the event simulation, and ranks the
// confirmed ones. The Pareto front is over step time, energy per token and device count.

#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "sim/sweep/search_spec.hpp"

namespace hcsim::sweep {

struct SearchRow {
  Candidate candidate;
  std::string status = "pending";  // ok, infeasible (does not fit, invalid), error, over_power
  std::string reason;
  double step_time_s = 0, tokens_per_s = 0, energy_per_token_j = 0, power_w = 0, mfu = 0;
  std::string record;      // the result record line (sim/sweep/record.hpp) of its last run
  bool confirmed = false;  // simulated at the confirmation fidelity
};

struct SearchResult {
  std::vector<SearchRow> rows;        // every candidate, in enumeration order
  std::vector<std::size_t> ranking;   // confirmed feasible rows, best first by the objective
  std::vector<std::size_t> pareto;    // confirmed feasible rows on the front, by step time
  std::size_t screened_ok = 0;        // feasible after the first pass
  std::size_t fast_screened = 0;      // rows the first pass decided by the fast path (fast_screen.hpp)
  double seconds = 0;
};

// Runs both passes on `jobs` worker processes. `confirm_mode` is "event" (the reference).
SearchResult run_search(const SearchSpec& spec, int jobs, bool progress, const std::string& confirm_mode = "event");

// Smaller is better for the ranking.
double objective_key(const SearchSpec& spec, const SearchRow& r);

// The scenario document of a candidate (base + layout), at simulation mode `mode`.
nlohmann::json candidate_document(const SearchSpec& spec, const Candidate& c, const std::string& mode);

// "tp 4 · pp 2 · dp 2 · mb 1 · 1f1b · recompute none · zero 0"
std::string describe_layout(const Candidate& c);

}  // namespace hcsim::sweep
