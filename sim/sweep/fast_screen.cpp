#include "sim/sweep/fast_screen.hpp"

#include <map>
#include <memory>
#include <optional>
#include <set>

#include "scenarios/scenario.hpp"
#include "sim/core/error.hpp"
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

// cp: the base's unless the candidate sets it.
FastLayout layout_of(const Candidate& c, int base_cp) {
  const auto& p = c.params;
  FastLayout l;
  l.cp = base_cp;
  l.cluster_devices = c.devices;
  l.tp = p.at("/strategy/tp").get<int>();
  l.pp = p.at("/strategy/pp").get<int>();
  l.dp = p.at("/strategy/dp").get<int>();
  l.ep = p.at("/strategy/ep").get<int>();
  l.etp = p.at("/strategy/etp").get<int>();
  l.micro_batch = p.at("/workload/micro_batch").get<std::int64_t>();
  l.schedule = p.at("/strategy/schedule").get_ref<const std::string&>();
  l.interleave = p.at("/strategy/interleave").get<int>();
  const std::string& rc = p.at("/strategy/recompute").get_ref<const std::string&>();
  l.recompute = rc == "full" ? Recompute::full : rc == "selective" ? Recompute::selective : Recompute::none;
  l.zero = p.at("/strategy/zero").get<int>();
  l.sequence_parallel = p.at("/strategy/sequence_parallel").get<bool>();
  if (const auto it = p.find("/strategy/cp"); it != p.end()) l.cp = it->get<int>();
  return l;
}

// The candidate sets exactly the fields a FastLayout holds, and its pool's count (with
// several pools, none: their counts stay).
bool plain_layout(const Candidate& c, bool fixed_pools) {
  static const std::set<std::string> keys = {"/strategy/tp",
                                             "/strategy/pp",
                                             "/strategy/dp",
                                             "/strategy/ep",
                                             "/strategy/etp",
                                             "/workload/micro_batch",
                                             "/strategy/schedule",
                                             "/strategy/interleave",
                                             "/strategy/recompute",
                                             "/strategy/zero",
                                             "/strategy/sequence_parallel"};
  const std::string count = "/cluster/pools/0/count";
  std::size_t known = 0;
  for (const auto& [k, v] : c.params.items()) {
    if (k == "/strategy/cp") continue;  // optional: the base's cp otherwise
    if (k == count && !fixed_pools) continue;
    if (!keys.count(k)) return false;
    ++known;
  }
  if (known != keys.size()) return false;
  return fixed_pools || (c.params.contains(count) && c.params.at(count).get<int>() == c.devices);
}

}  // namespace

FastScreen fast_screen(const SearchSpec& spec, const std::vector<SearchRow>& rows,
                       const std::vector<std::size_t>& which, const std::vector<MetricColumn>& metrics,
                       const RecordFn& on_record) {
  FastScreen out;
  auto emit = [&](std::size_t i, const Candidate& c, const Evaluation& ev) {
    if (on_record) on_record(i, record_json(i, c.params, ev, metrics));
    else out.records.emplace_back(i, make_record(i, c.params, ev, metrics));
  };
  const std::optional<Scenario> base = covers(metrics) ? fast_base(spec) : std::nullopt;
  if (!base) {
    out.rest = which;
    return out;
  }
  FastAnalytical layout_rules(*base);  // the layout rules need no cluster of the candidate's size
  // One cluster and one FastAnalytical per device count (null: that cluster cannot be built).
  struct Cluster {
    std::unique_ptr<Scenario> scenario;
    std::unique_ptr<FastAnalytical> fast;
    std::vector<Issue> refused;  // the topology's issues when it cannot hold the count
  };
  std::map<int, Cluster> per_count;
  for (std::size_t i : which) {
    const Candidate& c = rows[i].candidate;
    if (!plain_layout(c, spec.fixed_pools)) {
      out.rest.push_back(i);
      continue;
    }
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
    auto [it, added] = per_count.try_emplace(c.devices);
    if (added) {
      try {
        it->second.scenario = std::make_unique<Scenario>(spec.fixed_pools ? *base : resized_cluster(*base, c.devices));
        it->second.fast = std::make_unique<FastAnalytical>(*it->second.scenario);
      } catch (const InputError& e) {
        // The parser builds the same topology at the same path, and reports only its issues.
        it->second.refused = e.issues();
        it->second.fast.reset();
      } catch (const InternalError&) {
        throw;
      } catch (const std::exception&) {
        it->second.fast.reset();
      }
    }
    if (refused(it->second.refused)) continue;
    FastAnalytical* fast = it->second.fast.get();
    if (!fast) {
      out.rest.push_back(i);
      continue;
    }
    if (refused(layout_rules.layout_issues(layout, true))) continue;  // after the cluster, as the parser
    const FastResult r = fast->evaluate(layout);
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
  return out;
}

}  // namespace hcsim::sweep
