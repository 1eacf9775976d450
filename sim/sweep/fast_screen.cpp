#include "sim/sweep/fast_screen.hpp"

#include <algorithm>
#include <memory>
#include <optional>

#include "scenarios/scenario.hpp"
#include "sim/core/error.hpp"
#include "sim/driver/collective_times.hpp"
#include "sim/driver/fast_analytical.hpp"
#include "sim/driver/run.hpp"
#include "sim/sweep/record.hpp"
#include "sim/sweep/scenario_source.hpp"

namespace hcsim::sweep {
namespace {

// The report pointers the fast path fills: default_metrics().
nlohmann::json fast_report(const FastResult& r) {
  return {{"step_time_s", r.step_time.value()},
          {"tokens_per_s", r.tokens_per_s},
          {"mfu", r.mfu},
          {"bubble_fraction", r.bubble_fraction},
          {"energy", {{"it_j", r.it_energy.value()}, {"per_token_j", r.energy_per_token.value()},
                      {"average_power_w", r.average_power.value()}}},
          {"devices", r.devices}};
}

bool covers(const std::vector<MetricColumn>& metrics) {
  const nlohmann::json probe = fast_report(FastResult{});
  for (const auto& c : metrics)
    if (report_value(probe, c.pointer).is_null()) return false;
  return true;
}

// The base at the analytical fidelity, when the fast path reproduces it.
std::optional<Scenario> fast_base(const SearchSpec& spec) {
  nlohmann::json doc = spec.base.doc;
  doc["simulation"]["mode"] = "analytical";
  try {
    return parse_scenario(doc, spec.base.file);
  } catch (const InternalError&) {
    throw;  // a bug is reported, not taken for a base the fast path cannot run
  } catch (const std::exception&) {
    return std::nullopt;
  }
}

FastLayout layout_of(const Candidate& c, int cp) {
  return {.tp = c.tp,
          .pp = c.pp,
          .dp = c.dp,
          .micro_batch = c.micro_batch,
          .schedule = c.schedule,
          .interleave = c.interleave,
          .recompute = c.recompute,
          .zero = c.zero,
          .sequence_parallel = c.sequence_parallel,
          .cp = cp,
          .cluster_devices = c.devices,
          .ep = c.ep,
          .etp = c.etp};
}

}  // namespace

FastScreen fast_screen(const SearchSpec& spec, const std::vector<SearchRow>& rows,
                       const std::vector<std::size_t>& which, const std::vector<MetricColumn>& metrics,
                       const RecordFn& on_record) {
  FastScreen out;
  auto emit = [&](std::size_t i, const Candidate& c, const Evaluation& ev) {
    if (!on_record)
      out.records.emplace_back(i, make_record(i, c.params(), ev, metrics));
    else if (ev.status == "ok")
      on_record(i, {ev.status, metrics_json(ev.report, metrics), ""});
    else
      on_record(i, {ev.status, nlohmann::ordered_json::object(), ev.reason});
  };
  const std::optional<Scenario> base = covers(metrics) ? fast_base(spec) : std::nullopt;
  if (!base) {
    out.rest = which;
    return out;
  }
  FastAnalytical layout_rules(*base);  // the layout rules need no cluster of the candidate's size
  // One cluster and one FastAnalytical per device count (null: that cluster cannot be built),
  // the rows taken by device count (in their order within one), so that one cluster is
  // alive at a time and each is built once.
  struct Cluster {
    std::unique_ptr<Scenario> scenario;
    std::unique_ptr<FastAnalytical> fast;
    std::vector<Issue> refused;  // the topology's issues when it cannot hold the count
  };
  std::vector<std::size_t> order = which;
  std::stable_sort(order.begin(), order.end(),
                   [&](std::size_t a, std::size_t b) { return rows[a].candidate.devices < rows[b].candidate.devices; });
  Cluster cluster;
  int cluster_devices = -1;
  StarTimes star_times;  // the clusters differ in their device count alone
  for (std::size_t i : order) {
    const Candidate& c = rows[i].candidate;
    const FastLayout layout = layout_of(c, base->strategy.cp);
    // A layout the parser refuses gets the parser's messages (the one copy of the rules,
    // workloads/layout.hpp), whatever the cluster of its device count.
    auto refused = [&](std::vector<Issue> issues) {
      if (issues.empty()) return false;
      Evaluation ev;
      ev.status = "infeasible";
      ev.reason = issues_text(InputError(std::move(issues)));
      emit(i, c, ev);
      return true;
    };
    if (refused(layout_rules.layout_issues(layout))) continue;
    if (c.devices != cluster_devices) {
      cluster = Cluster{};  // the last count's, freed first
      cluster_devices = c.devices;
      try {
        cluster.scenario = std::make_unique<Scenario>(spec.fixed_pools ? *base : resized_cluster(*base, c.devices));
        cluster.fast = std::make_unique<FastAnalytical>(*cluster.scenario, &star_times);
      } catch (const InputError& e) {
        // The parser builds the same topology at the same path, and reports only its issues.
        cluster.refused = e.issues();
        cluster.fast.reset();
      } catch (const InternalError&) {
        throw;
      } catch (const std::exception&) {
        cluster.fast.reset();
      }
    }
    if (refused(cluster.refused)) continue;
    FastAnalytical* fast = cluster.fast.get();
    if (!fast) {
      out.rest.push_back(i);
      continue;
    }
    if (refused(layout_rules.layout_issues(layout, true))) continue;  // after the cluster, as the parser
    const FastResult r = fast->evaluate(layout, base->simulation.check_memory ? FastAnalytical::Timed::fitting_only
                                                                              : FastAnalytical::Timed::every_layout);
    if (!r.valid()) {  // a rule the parameter tables check (degrees, ZeRO stage, schedule name)
      out.rest.push_back(i);
      continue;
    }
    Evaluation ev;
    StrategySpec st = base->strategy;
    st.dp = layout.dp;
    st.tp = layout.tp;
    st.pp = layout.pp;
    st.cp = layout.cp;
    st.ep = layout.ep;
    st.etp = layout.etp;
    if (!r.fits && base->simulation.check_memory) {
      ev.status = "infeasible";
      ev.reason = issues_text(InputError(fast->memory_issues(layout)));
    } else if (auto bound = analytical_bound_issue(st, base->simulation.symmetry, base->simulation.max_tasks)) {
      ev.status = "infeasible";
      ev.reason = issues_text(InputError({*bound}));
    } else {
      ev.status = "ok";
      ev.report = fast_report(r);
    }
    emit(i, c, ev);
  }
  std::sort(out.rest.begin(), out.rest.end());
  return out;
}

}  // namespace hcsim::sweep
