// `hcsim search SEARCH.json [-j N] [--out DIR]` (sim/sweep/search_runner.hpp).
#include <filesystem>
#include <iostream>
#include <memory>

#include <fmt/format.h>

#include "output.hpp"
#include "warnings.hpp"
#include "sim/cli/command.hpp"
#include "sim/core/quantity.hpp"
#include "sim/sweep/pareto_plot.hpp"
#include "sim/sweep/record.hpp"
#include "sim/sweep/scenario_source.hpp"
#include "sim/sweep/search_runner.hpp"

namespace hcsim {
namespace {

struct SearchArgs {
  std::string file, out, prune_mode;
  int jobs = 1;
  bool quiet = false;
  bool strict = false;
};

std::string short_label(const sweep::Candidate& c) {
  return fmt::format("tp{} pp{} dp{}{}{} mb{}", c.tp, c.pp, c.dp, c.ep > 1 ? fmt::format(" ep{}", c.ep) : "",
                     c.etp > 1 ? fmt::format(" etp{}", c.etp) : "", c.micro_batch);
}

std::string search_table(const sweep::SearchResult& r, const std::vector<std::size_t>& which) {
  std::string out = fmt::format("  {:>3}  {:>7}  {:>10}  {:>11}  {:>11}  {:>10}  {:>6}  {}\n", "#", "devices", "step time",
                                "tokens/s", "J/token", "power", "MFU", "layout");
  for (std::size_t k = 0; k < which.size(); ++k) {
    const auto& row = r.rows[which[k]];
    out += fmt::format("  {:>3}  {:>7}  {:>10}  {:>11.4g}  {:>11.4g}  {:>10}  {:>5.1f}%  {}\n", k + 1,
                       row.candidate.devices, format_quantity(row.step_time_s, Dim::time), row.tokens_per_s,
                       row.energy_per_token_j, format_quantity(row.power_w, Dim::power), 100 * row.mfu,
                       sweep::describe_layout(row.candidate));
  }
  return out;
}

void write_outputs(const sweep::SearchSpec& spec, const sweep::SearchResult& r, const std::string& dir) {
  std::filesystem::create_directories(dir);
  std::vector<sweep::CsvSpill::Ref> rows;
  rows.reserve(r.rows.size());
  for (const auto& row : r.rows) rows.push_back(row.csv);
  write_stream_atomic(dir + "/candidates.csv", [&](std::ostream& os) {
    os << sweep::csv_header(sweep::search_columns());
    r.csv->copy(rows, os);
  });
  // The confirmed layouts in ranking order, then those only screened (feasible at the
  // screening fidelity), in enumeration order.
  std::string pts = "devices,step_time_s,energy_per_token_j,on_front,confirmed,label\n";
  auto point = [&](std::size_t i, bool confirmed) {
    const auto& row = r.rows[i];
    const bool front = confirmed && std::find(r.pareto.begin(), r.pareto.end(), i) != r.pareto.end();
    pts += fmt::format("{},{},{},{},{},{}\n", row.candidate.devices, row.step_time_s, row.energy_per_token_j,
                       front ? 1 : 0, confirmed ? 1 : 0, sweep::csv_field(short_label(row.candidate)));
  };
  for (std::size_t i : r.ranking) point(i, true);
  for (std::size_t i = 0; i < r.rows.size(); ++i)
    if (!r.rows[i].confirmed && r.rows[i].status == "ok") point(i, false);
  write_file_atomic(dir + "/pareto_points.csv", pts);
  if (!r.ranking.empty()) {
    const auto& best = r.rows[r.ranking.front()].candidate;
    write_file_atomic(dir + "/best_scenario.json", sweep::candidate_document(spec, best, "event").dump(2) + "\n");
  }
}

int run_search_command(const SearchArgs& a) {
  sweep::SearchSpec spec = sweep::load_search(a.file);
  report_warnings(sweep::scenario_warnings(spec.base.doc, spec.base.file).value_or(std::vector<Issue>{}),
                  spec.base.file, a.strict);
  if (!a.prune_mode.empty()) spec.prune_mode = a.prune_mode;
  const sweep::SearchResult r = sweep::run_search(spec, a.jobs, !a.quiet);
  std::size_t confirmed = 0;
  for (const auto& row : r.rows) confirmed += row.confirmed ? 1 : 0;
  std::cout << fmt::format(
      "search: {} candidate layouts{}, {} feasible after screening ({} mode), {} confirmed "
      "(event mode{}), {:.2f} s (the screen {:.2f} s, {:.0f} layouts/s)\n",
      r.rows.size(), r.fast_screened > 0 ? fmt::format(" ({} screened by the fast path)", r.fast_screened) : "",
      r.screened_ok, spec.prune_mode, confirmed,
      r.confirm_rounds > 0 ? fmt::format("; the best in {} rounds, until the screen's bound left "
                                         "none that could enter the top {}",
                                         r.confirm_rounds, spec.top_k)
                           : "",
      r.seconds, r.screen_seconds, r.screen_seconds > 0 ? static_cast<double>(r.rows.size()) / r.screen_seconds : 0.0);
  const std::string out = a.out.empty() ? "search-out" : a.out;
  write_outputs(spec, r, out);
  if (r.ranking.empty()) {
    std::cout << "no layout fits in memory within the device budget and power cap; see " << out
              << "/candidates.csv for each reason\n";
    return 1;
  }
  std::vector<std::size_t> top(r.ranking.begin(),
                               r.ranking.begin() + static_cast<long>(std::min(spec.top_k, r.ranking.size())));
  std::cout << fmt::format("\nbest {} by {}:\n{}", top.size(), sweep::objective_name(spec.objective),
                           search_table(r, top));
  std::cout << fmt::format("\nPareto front (step time vs energy per token vs devices), {} layouts:\n{}",
                           r.pareto.size(), search_table(r, r.pareto));
  std::cout << fmt::format("\nbest layout: {}\nwritten: {}/best_scenario.json, {}/candidates.csv, "
                           "{}/pareto_points.csv\n",
                           sweep::describe_layout(r.rows[r.ranking.front()].candidate), out, out, out);
  const auto plot = sweep::plot_pareto(out + "/pareto_points.csv", out + "/pareto.png");
  std::cout << plot.message << "\n";
  return 0;
}

}  // namespace

void add_search_command(CLI::App& app, Commands& cmds) {
  auto a = std::make_shared<SearchArgs>();
  auto* cmd = app.add_subcommand("search", "find the best parallel layout under memory, device and power limits");
  cmd->add_option("search", a->file, "search JSON file (docs/sweeps.md)")->required();
  cmd->add_option("-j,--jobs", a->jobs, "worker processes (default 1)")->check(CLI::Range(1, 1024));
  cmd->add_option("--out", a->out, "directory for candidates.csv, pareto_points.csv, pareto.png, best_scenario.json "
                                   "(default search-out)");
  cmd->add_option("--prune-mode", a->prune_mode, "fidelity of the screening pass")
      ->check(CLI::IsMember({"analytical", "event", "flow"}));
  cmd->add_flag("-q,--quiet", a->quiet, "no progress on standard error");
  add_strict_flag(*cmd, a->strict);
  cmds.push_back({cmd, [a] { return run_search_command(*a); }});
}

}  // namespace hcsim
