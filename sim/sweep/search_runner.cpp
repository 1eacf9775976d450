#include "search_runner.hpp"

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cmath>
#include <cstring>
#include <stdexcept>
#include <type_traits>

#ifdef __GLIBC__
#include <malloc.h>
#endif

#include <fmt/format.h>

#include "sim/core/fd_io.hpp"
#include "sim/sweep/fast_screen.hpp"
#include "sim/sweep/pareto.hpp"
#include "sim/sweep/progress.hpp"
#include "sim/sweep/record.hpp"
#include "sim/sweep/worker_pool.hpp"

namespace hcsim::sweep {
namespace {

void release_free_memory() {
#ifdef __GLIBC__
  malloc_trim(0);
#endif
}

double metric(const nlohmann::ordered_json& m, const char* name) {
  const auto it = m.find(name);
  return it != m.end() && it->is_number() ? it->get<double>() : 0.0;
}

// Row `index`'s candidates.csv row (search_columns()): what csv_row writes of its record,
// from the candidate's typed fields.
std::string search_csv_row(std::size_t index, const Candidate& c, const RowOutcome& o) {
  CsvLine line(index);
  line.text(o.status);
  c.each_param([&](const char*, auto value) {
    if constexpr (std::is_same_v<decltype(value), std::string_view>)
      line.text(value);
    else if constexpr (std::is_same_v<decltype(value), bool>)
      line.boolean(value);
    else
      line.integer(value);
  });
  if (!c.sets_count) line.empty();  // the pool's count, the last column
  for (const auto& m : search_columns().metrics)
    o.metrics.contains(m.name) ? line.value(o.metrics[m.name]) : line.empty();
  return line.text(o.reason).finish();
}

// A row keeps its figures and where its candidates.csv row is, not the record: a search
// holds every candidate, and most are refused.
void fill_row(const SearchSpec& spec, CsvSpill& csv, std::size_t index, SearchRow& row, RowOutcome o) {
  row.status = o.status;
  if (row.status == "ok") {
    row.step_time_s = metric(o.metrics, "step_time_s");
    row.tokens_per_s = metric(o.metrics, "tokens_per_s");
    row.energy_per_token_j = metric(o.metrics, "energy.per_token_j");
    row.power_w = metric(o.metrics, "energy.average_power_w");
    row.mfu = metric(o.metrics, "mfu");
    if (spec.max_power_w && row.power_w > *spec.max_power_w) {
      row.status = o.status = "over_power";
      o.reason = fmt::format("average power {:.4g} W is above the cap of {:.4g} W", row.power_w, *spec.max_power_w);
    }
  }
  row.csv = csv.append(search_csv_row(index, row.candidate, o));
}

// Simulates rows `which` at `mode`, updating them as they finish.
void run_pass(const SearchSpec& spec, CsvSpill& csv, std::vector<SearchRow>& rows,
              const std::vector<std::size_t>& which, const std::string& mode, int jobs, bool progress,
              const char* label) {
  const auto metrics = default_metrics();
  const JobFn job = [&](std::size_t i) {
    Evaluation ev;
    try {
      // The record's metrics (default_metrics) read neither peak power nor the power curve.
      ev = evaluate_scenario(candidate_document(spec, rows[i].candidate, mode), spec.base.file,
                             needs_per_device(metrics), false);
    } catch (const std::exception& e) {
      ev = {"error", e.what(), {}};
    }
    return make_record(i, rows[i].candidate.params(), ev, metrics);
  };
  Progress bar(label, which.size(), progress);
  const ResultFn done = [&](std::size_t i, std::string line) {
    const auto rec = nlohmann::ordered_json::parse(line);
    fill_row(spec, csv, i, rows[i],
             {rec.value("status", "error"), rec.value("metrics", nlohmann::ordered_json::object()),
              rec.value("reason", "")});
    bar.tick(rows[i].status == "ok");
  };
  const CrashFn crashed = [&](std::size_t i, const std::string& why) {
    return make_record(i, rows[i].candidate.params(), {"error", why, {}}, metrics);
  };
  run_forked(which, jobs, job, done, crashed);
  bar.finish();
}

std::vector<std::size_t> feasible(const std::vector<SearchRow>& rows) {
  std::vector<std::size_t> out;
  for (std::size_t i = 0; i < rows.size(); ++i)
    if (rows[i].status == "ok") out.push_back(i);
  return out;
}

std::vector<std::size_t> front_of(const std::vector<SearchRow>& rows, const std::vector<std::size_t>& which) {
  std::vector<std::vector<double>> obj;
  for (std::size_t i : which)
    obj.push_back({rows[i].step_time_s, rows[i].energy_per_token_j, static_cast<double>(rows[i].candidate.devices)});
  std::vector<std::size_t> out;
  for (std::size_t k : pareto_front(obj)) out.push_back(which[k]);
  std::stable_sort(out.begin(), out.end(),
                   [&](std::size_t a, std::size_t b) { return rows[a].step_time_s < rows[b].step_time_s; });
  return out;
}

void sort_by_objective(const SearchSpec& spec, const std::vector<SearchRow>& rows, std::vector<std::size_t>& v) {
  std::stable_sort(v.begin(), v.end(), [&](std::size_t a, std::size_t b) {
    return objective_key(spec, rows[a]) < objective_key(spec, rows[b]);
  });
}

// The key a row could reach at the confirmation fidelity: its screened key improved by
// `margin` of its size.
double optimistic(double key, double margin) { return key - std::abs(key) * margin; }

// A row's figures at the screening fidelity, kept while confirmation overwrites them.
struct Screened {
  double key = 0, step_time_s = 0, energy_per_token_j = 0;
  int devices = 0;
};

bool dominates_screened(const SearchRow& a, const Screened& b, double margin) {
  return a.step_time_s <= b.step_time_s * (1 - margin) && a.energy_per_token_j <= b.energy_per_token_j * (1 - margin) &&
         a.candidate.devices <= b.devices;
}

// Confirms the best rows by the objective, then the screened front (search_runner.hpp).
void confirm(const SearchSpec& spec, SearchResult& res, std::vector<std::size_t> ok, int jobs, bool progress,
             const std::string& mode) {
  auto& rows = res.rows;
  sort_by_objective(spec, rows, ok);
  std::vector<std::size_t> front = front_of(rows, ok);  // of the screened figures
  sort_by_objective(spec, rows, front);
  std::vector<Screened> screened(rows.size());
  for (std::size_t i : ok) screened[i] = {objective_key(spec, rows[i]), rows[i].step_time_s, rows[i].energy_per_token_j,
                                          rows[i].candidate.devices};
  double margin = kScreenMargin;
  std::vector<double> best;        // keys of the confirmed feasible rows
  std::vector<std::size_t> good;   // those rows
  auto kth_best = [&] {
    std::vector<double> v = best;
    std::nth_element(v.begin(), v.begin() + static_cast<long>(spec.top_k - 1), v.end());
    return v[spec.top_k - 1];
  };
  auto run = [&](const std::vector<std::size_t>& which, const char* label) {
    run_pass(spec, *res.csv, rows, which, mode, jobs, progress, label);
    for (std::size_t i : which) {
      rows[i].confirmed = true;
      if (rows[i].status != "ok") continue;
      const double now = objective_key(spec, rows[i]), then = screened[i].key;
      best.push_back(now);
      good.push_back(i);
      if (then != 0) margin = std::max(margin, std::abs(now / then - 1));
    }
  };
  // The best by the objective, `jobs` at a time, until none left can enter the top_k.
  const std::size_t batch = static_cast<std::size_t>(std::max(jobs, 1));
  std::size_t next = 0;
  while (next < ok.size() && spec.top_k > 0) {
    if (best.size() >= spec.top_k && optimistic(screened[ok[next]].key, margin) >= kth_best()) break;
    std::vector<std::size_t> round(ok.begin() + static_cast<long>(next),
                                   ok.begin() + static_cast<long>(std::min(ok.size(), next + batch)));
    next += round.size();
    ++res.confirm_rounds;
    run(round, "search (confirm best)");
  }
  // The screened front (at most 4 top_k of it), but for the layouts that a confirmed one
  // dominates_screened by more than the margin.
  std::vector<std::size_t> pick;
  for (std::size_t k = 0; k < front.size() && k < 4 * spec.top_k; ++k) {
    const std::size_t i = front[k];
    if (rows[i].confirmed) continue;
    const bool beaten = std::any_of(good.begin(), good.end(),
                                    [&](std::size_t j) { return dominates_screened(rows[j], screened[i], margin); });
    if (!beaten) pick.push_back(i);
  }
  std::sort(pick.begin(), pick.end());
  if (!pick.empty()) run(pick, "search (confirm front)");
}

}  // namespace

CsvSpill::CsvSpill() : file_(std::tmpfile()) {
  if (!file_)
    throw std::runtime_error(std::string("cannot make a temporary file for candidates.csv: ") + std::strerror(errno));
}

CsvSpill::~CsvSpill() { std::fclose(file_); }

namespace {
constexpr std::size_t kSpillChunk = std::size_t{1} << 20;
}

void CsvSpill::flush() const {
  if (pending_.empty()) return;
  if (!write_all(::fileno(file_), pending_.data(), pending_.size()))
    throw std::runtime_error(std::string("cannot write the temporary candidates.csv: ") + std::strerror(errno));
  written_ += pending_.size();
  pending_.clear();
}

CsvSpill::Ref CsvSpill::append(std::string_view text) {
  const Ref r{end_, static_cast<std::uint32_t>(text.size())};
  pending_ += text;
  end_ += text.size();
  if (pending_.size() >= kSpillChunk) flush();
  return r;
}

std::string CsvSpill::read(Ref r) const {
  std::string out(r.size, '\0');
  if (r.at >= written_) {
    pending_.copy(out.data(), r.size, r.at - written_);
    return out;
  }
  if (!pread_all(::fileno(file_), out.data(), r.size, static_cast<long long>(r.at)))
    throw std::runtime_error(std::string("cannot read the temporary candidates.csv: ") + std::strerror(errno));
  return out;
}

void CsvSpill::copy(const std::vector<Ref>& refs, std::ostream& out) const {
  flush();
  std::string buf;
  for (std::size_t k = 0; k < refs.size();) {
    // The run of rows from k that follow one another in the file, up to a chunk.
    Ref run = refs[k++];
    while (k < refs.size() && refs[k].at == run.at + run.size && run.size + std::uint64_t{refs[k].size} <= kSpillChunk)
      run.size += refs[k++].size;
    buf.resize(run.size);
    if (!pread_all(::fileno(file_), buf.data(), run.size, static_cast<long long>(run.at)))
      throw std::runtime_error(std::string("cannot read the temporary candidates.csv: ") + std::strerror(errno));
    out.write(buf.data(), static_cast<std::streamsize>(buf.size()));
  }
}

const Columns& search_columns() {
  static const Columns cols = [] {
    Columns c{{}, default_metrics()};
    Candidate{}.each_param([&](const char* pointer, auto) { c.params.emplace_back(pointer); });  // sets_count
    return c;
  }();
  return cols;
}

double objective_key(const SearchSpec& spec, const SearchRow& r) {
  switch (spec.objective) {
    case Objective::tokens_per_s: return -r.tokens_per_s;
    case Objective::energy_per_token: return r.energy_per_token_j;
    case Objective::step_time: return r.step_time_s;
  }
  return 0;
}

nlohmann::json candidate_document(const SearchSpec& spec, const Candidate& c, const std::string& mode) {
  nlohmann::json doc = spec.base.doc;
  apply_assignments(doc, c.params());
  doc["simulation"]["mode"] = mode;
  return doc;
}

std::string describe_layout(const Candidate& c) {
  std::string sched = c.schedule;
  if (c.interleave > 1) sched += fmt::format(" v={}", c.interleave);
  return fmt::format("tp {} · pp {} · dp {} · ep {}{} · mb {} · {} · recompute {} · zero {}{}", c.tp, c.pp, c.dp, c.ep,
                     c.etp > 1 ? fmt::format(" · etp {}", c.etp) : "", c.micro_batch, sched,
                     recompute_name(c.recompute), c.zero, c.sequence_parallel ? " · sp" : "");
}

SearchResult run_search(const SearchSpec& spec, int jobs, bool progress, const std::string& confirm_mode) {
  const auto t0 = std::chrono::steady_clock::now();
  SearchResult res;
  res.csv = std::make_shared<CsvSpill>();
  // Room for the most rows a space may have: only the pages the rows fill are touched, and
  // none is copied as the rows grow.
  res.rows.reserve(kMaxCandidates + 1);
  enumerate_candidates(spec, [&](Candidate c) {
    SearchRow row;
    row.candidate = std::move(c);
    res.rows.push_back(std::move(row));
  });
  std::vector<std::size_t> all(res.rows.size());
  for (std::size_t i = 0; i < all.size(); ++i) all[i] = i;
  std::vector<std::size_t> rest = all;
  if (spec.prune_mode == "analytical") {
    // Most rows at microseconds each (fast_screen.hpp); the rest as scenarios.
    FastScreen fast = fast_screen(spec, res.rows, all, default_metrics(), [&](std::size_t i, RowOutcome outcome) {
      fill_row(spec, *res.csv, i, res.rows[i], std::move(outcome));
      ++res.fast_screened;
    });
    rest = std::move(fast.rest);
    // The screen's clusters (one topology, router and cost cache per device count) are freed
    // by now; hand their pages back, or every worker forked below carries them.
    release_free_memory();
  }
  run_pass(spec, *res.csv, res.rows, rest, spec.prune_mode, jobs, progress, "search (screen)");
  res.screen_seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  std::vector<std::size_t> ok = feasible(res.rows);
  res.screened_ok = ok.size();
  if (spec.prune_mode == confirm_mode) {
    for (std::size_t i : ok) res.rows[i].confirmed = true;
  } else {
    confirm(spec, res, ok, jobs, progress, confirm_mode);
  }
  for (std::size_t i : feasible(res.rows))
    if (res.rows[i].confirmed) res.ranking.push_back(i);
  sort_by_objective(spec, res.rows, res.ranking);
  res.pareto = front_of(res.rows, res.ranking);
  res.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  return res;
}

}  // namespace hcsim::sweep
