// Parsing a search file and enumerating its candidate layouts.
#include "search_spec.hpp"

#include <type_traits>

#include <fmt/format.h>

#include "scenarios/scenario.hpp"
#include "sim/core/nearest.hpp"
#include "sim/core/params.hpp"
#include "workloads/layout.hpp"
#include "workloads/transformer.hpp"

namespace hcsim::sweep {
namespace {

// A list of the space at /space/KEY. Integers go from `least` to 1,000,000, and `refuse`
// (when set) says what else is wrong with one ("" for nothing).
template <class T>
void read_list(const nlohmann::json& space, const char* key, std::vector<T>& out, Diagnostics& d,
               const std::vector<std::string>& choices = {}, std::int64_t least = 0,
               const std::function<std::string(int)>& refuse = {}) {
  if (!space.contains(key)) return;
  const std::string path = json_child("/space", key);
  const auto& v = space[key];
  if (!v.is_array() || v.empty()) {
    d.error(path, "expected a non-empty list");
    return;
  }
  std::vector<T> vals;
  for (std::size_t i = 0; i < v.size(); ++i) {
    const auto& e = v[i];
    bool ok = false;
    if constexpr (std::is_same_v<T, int>)
      ok = e.is_number_integer() && e.get<std::int64_t>() >= least && e.get<std::int64_t>() <= 1'000'000;
    else if constexpr (std::is_same_v<T, bool>) ok = e.is_boolean();
    else ok = e.is_string() && (choices.empty() || std::find(choices.begin(), choices.end(), e.get<std::string>()) != choices.end());
    if (!ok) {
      d.error(json_child(path, i), std::is_same_v<T, int>
                                       ? (least == 0   ? std::string("expected a non-negative integer")
                                          : least == 1 ? std::string("expected a positive integer")
                                                       : fmt::format("expected an integer >= {}", least))
                                   : std::is_same_v<T, bool> ? "expected true or false"
                                                             : "expected a listed choice; " + valid_list(choices));
      continue;
    }
    if constexpr (std::is_same_v<T, int>) {
      if (const std::string why = refuse ? refuse(e.get<int>()) : std::string(); !why.empty()) {
        d.error(json_child(path, i), why);
        continue;
      }
    }
    vals.push_back(e.get<T>());
  }
  out = vals;
}

// The base's compute pools (attached processing-in-memory pools aside): with one, the search
// varies its count; with several, their counts stay and every candidate fills them all.
void read_base_pools(const nlohmann::json& doc, SearchSpec& s, Diagnostics& d) {
  const nlohmann::json::json_pointer pools("/cluster/pools");
  if (!doc.contains(pools) || !doc.at(pools).is_array() || doc.at(pools).empty()) {
    d.error("/base/cluster/pools", "the base scenario needs at least one pool of devices");
    return;
  }
  int compute = 0, total = 0;
  for (const auto& p : doc.at(pools)) {
    if (p.is_object() && p.contains("attach_to")) continue;
    const auto& c = p.is_object() ? p.value("count", nlohmann::json()) : nlohmann::json();
    if (!c.is_number_integer() || c.get<std::int64_t>() < 1 || c.get<std::int64_t>() > 10'000'000) {
      d.error("/base/cluster/pools", "each of the base scenario's pools needs an integer \"count\"");
      return;
    }
    ++compute;
    total += static_cast<int>(c.get<std::int64_t>());
  }
  s.max_devices = total;
  s.fixed_pools = compute > 1;
  const nlohmann::json::json_pointer cp("/strategy/cp"), placed("/strategy/stage_pools");
  if (doc.contains(cp) && doc.at(cp).is_number_integer() && doc.at(cp).get<std::int64_t>() >= 1)
    s.base_cp = static_cast<int>(doc.at(cp).get<std::int64_t>());
  const nlohmann::json::json_pointer ep("/strategy/ep"), etp("/strategy/etp");
  if (doc.contains(ep) && doc.at(ep).is_number_integer() && doc.at(ep).get<std::int64_t>() >= 1 &&
      doc.at(ep).get<std::int64_t>() <= 1'000'000)
    s.base_ep = static_cast<int>(doc.at(ep).get<std::int64_t>());
  if (doc.contains(etp) && doc.at(etp).is_number_integer() && doc.at(etp).get<std::int64_t>() >= 1 &&
      doc.at(etp).get<std::int64_t>() <= 1'000'000)
    s.base_etp = static_cast<int>(doc.at(etp).get<std::int64_t>());
  if (s.fixed_pools && doc.contains(placed))
    d.error("/base/strategy/stage_pools", "a search over several pools places its stages by device order (stage s "
                                          "on the pool holding its devices); remove stage_pools from the base");
  const nlohmann::json::json_pointer contention("/simulation/sm_contention");
  if (doc.contains(contention) && doc.at(contention).is_boolean() && doc.at(contention).get<bool>())
    d.error("/base/simulation/sm_contention",
            "the search screens in analytical mode, which has no closed form of "
            "SM contention; set it false in the base");
}

// The path of the first rule on expert parallelism (/strategy/ep, then /strategy/etp) that
// layout `l` breaks on `model`, "" for none, and its message into `message` when given:
// the layout rules' own verdict (check_layout, workloads/layout.hpp, their one copy).
std::string broken_expert_rule(const TransformerConfig& model, const Layout& l, std::string* message = nullptr) {
  LayoutRequest r;
  r.model = &model;
  r.layout = l;
  r.devices = l.devices();
  std::string path;
  check_layout(r, [&](LayoutIssue, std::string_view at, const std::function<std::string()>& why) {
    if (at != "/strategy/ep" && at != "/strategy/etp") return true;
    path = at;
    if (message) *message = why();
    return false;
  });
  return path;
}

// What the layout rules say of expert tensor parallelism `etp` whatever the layout (etp > 1
// on a dense model, etp not dividing the experts' MLP): its message on a stage of etp
// devices at ep 1, where ep * etp divides the stage; "" when they accept it, or when the
// base does not parse (its rows then fail as scenarios).
std::string etp_refused(const SearchSpec& s, int etp) {
  std::string why;
  if (s.model) broken_expert_rule(*s.model, {etp, 1, 1, 1, 1, etp}, &why);
  return why;
}

void parse_space(const nlohmann::json& doc, SearchSpec& s, Diagnostics& d) {
  if (!doc.contains("space")) return;
  const auto& sp = doc["space"];
  if (!sp.is_object()) {
    d.error("/space", "expected an object of lists");
    return;
  }
  check_known_keys(sp,
                   {"tp", "pp", "dp", "ep", "etp", "micro_batch", "schedule", "interleave", "recompute", "zero",
                    "sequence_parallel"},
                   "/space", d);
  read_list(sp, "tp", s.space.tp, d);
  read_list(sp, "pp", s.space.pp, d);
  read_list(sp, "dp", s.space.dp, d);
  read_list(sp, "ep", s.space.ep, d);
  read_list(sp, "etp", s.space.etp, d, {}, 1, [&](int etp) { return etp_refused(s, etp); });
  read_list(sp, "micro_batch", s.space.micro_batch, d);
  read_list(sp, "schedule", s.space.schedule, d, {"gpipe", "1f1b", "interleaved-1f1b"});
  read_list(sp, "interleave", s.space.interleave, d);
  read_list(sp, "recompute", s.space.recompute, d, {"none", "selective", "full", "selective-op"});
  read_list(sp, "zero", s.space.zero, d);
  read_list(sp, "sequence_parallel", s.space.sequence_parallel, d);
}

void parse_settings(const nlohmann::json& doc, SearchSpec& s, Diagnostics& d) {
  const auto integer = [&](const char* key, int lo) -> std::optional<int> {
    if (!doc.contains(key)) return std::nullopt;
    if (!doc[key].is_number_integer() || doc[key].get<std::int64_t>() < lo || doc[key].get<std::int64_t>() > 10'000'000) {
      d.error(json_child("", key), fmt::format("expected an integer >= {}", lo));
      return std::nullopt;
    }
    return static_cast<int>(doc[key].get<std::int64_t>());
  };
  if (auto v = integer("max_devices", 1)) {
    if (s.fixed_pools && *v != s.max_devices)
      d.error("/max_devices", fmt::format("the base's pools keep their {} devices; a budget other than that needs a "
                                          "base with one pool",
                                          s.max_devices));
    else
      s.max_devices = *v;
  }
  if (auto v = integer("top_k", 1)) s.top_k = static_cast<std::size_t>(*v);
  if (doc.contains("device_counts")) read_list(doc, "device_counts", s.device_counts, d);
  if (doc.contains("max_power_w")) {
    const QuantityParse q = parse_quantity(doc["max_power_w"], Dim::power);
    if (!q.value || *q.value <= 0) d.error("/max_power_w", "expected a power such as \"12 kW\" or 12000");
    else s.max_power_w = q.value;
  }
  const std::string obj = doc.value("objective", "tokens_per_s");
  if (obj == "tokens_per_s") s.objective = Objective::tokens_per_s;
  else if (obj == "energy_per_token") s.objective = Objective::energy_per_token;
  else if (obj == "step_time") s.objective = Objective::step_time;
  else d.error("/objective", "expected one of: tokens_per_s, energy_per_token, step_time");
  s.prune_mode = doc.value("prune_mode", std::string(kDefaultPruneMode));
  if (s.prune_mode != "analytical" && s.prune_mode != "event" && s.prune_mode != "flow")
    d.error("/prune_mode", "expected one of: analytical, event, flow");
}

// The base's model, for the default ep axis and the expert layout rules; null when the base
// does not parse (its rows then fail as scenarios, each with the parser's message).
std::shared_ptr<const TransformerConfig> base_model(const ScenarioSource& base) {
  try {
    return std::make_shared<const TransformerConfig>(parse_scenario(base.doc, base.file).model);
  } catch (const InternalError&) {
    throw;  // a bug is reported, not taken for a base that does not parse
  } catch (const std::exception&) { return nullptr; }
}

bool allowed_total(const SearchSpec& s, long devices) {
  if (devices > s.max_devices || devices < 1) return false;
  if (s.fixed_pools && devices != s.max_devices) return false;
  return s.device_counts.empty() ||
         std::find(s.device_counts.begin(), s.device_counts.end(), devices) != s.device_counts.end();
}

}  // namespace

std::string objective_name(Objective o) {
  switch (o) {
    case Objective::tokens_per_s: return "tokens_per_s";
    case Objective::energy_per_token: return "energy_per_token";
    case Objective::step_time: return "step_time";
  }
  return "";
}

SearchSpec parse_search(const nlohmann::json& doc, const std::string& file) {
  Diagnostics d;
  SearchSpec s;
  s.file = file;
  if (!doc.is_object()) throw InputError("", "a search file is a JSON object with \"base\"", file);
  check_known_keys(doc,
                   {"description", "base", "objective", "max_devices", "device_counts", "max_power_w", "top_k",
                    "prune_mode", "space"},
                   "", d);
  if (!doc.contains("base")) d.error("/base", "missing: a scenario file name or an inline scenario");
  else {
    try {
      s.base = resolve_scenario(doc["base"], file, "/base");
      read_base_pools(s.base.doc, s, d);
      s.model = base_model(s.base);
      s.experts = s.model ? s.model->moe.experts : -1;
    } catch (const InputError& e) {
      d.merge(e);
    }
  }
  parse_settings(doc, s, d);
  parse_space(doc, s, d);
  if (s.space.dp.empty())
    for (int v = 1; v <= std::max(s.max_devices, 1); v *= 2) s.space.dp.push_back(v);
  if (s.space.etp.empty()) s.space.etp = {s.base_etp};
  if (!d.ok()) throw InputError(d.issues(), file);
  return s;
}

SearchSpec load_search(const std::string& file) { return parse_search(read_json_file(file), file); }

namespace {

struct LayoutChoice {
  int tp, pp, dp, ep, etp, mb;
  std::string schedule;
  int interleave;
};

// The strategy variants of one layout that differ in effect: ZeRO only with dp > 1 (or,
// for an MoE model, more than one device holding the same experts: dp * cp * tp / (ep * etp) > 1),
// sequence parallelism only with tp > 1.
void add_variants(const SearchSpec& s, const LayoutChoice& l, std::size_t& made, const CandidateFn& add) {
  const int devices = l.tp * l.pp * l.dp * s.base_cp;
  const bool shards = l.dp > 1 || (s.experts > 0 && l.tp * s.base_cp > l.ep * l.etp);
  for (const auto& name : s.space.recompute) {
    const Recompute rc = recompute_named(name).value_or(Recompute::none);  // a name read_list accepts
    for (int z : s.space.zero) {
      if (z > 0 && !shards) continue;
      for (bool seq : s.space.sequence_parallel) {
        if (seq && l.tp == 1) continue;
        if (++made > kMaxCandidates)
          throw InputError("/space", fmt::format("more than {} candidate layouts; narrow the space", kMaxCandidates),
                           s.file);
        add({.index = made - 1,
             .devices = devices,
             .tp = l.tp,
             .pp = l.pp,
             .dp = l.dp,
             .ep = l.ep,
             .etp = l.etp,
             .micro_batch = l.mb,
             .schedule = l.schedule,
             .interleave = l.interleave,
             .recompute = rc,
             .zero = z,
             .sequence_parallel = seq,
             .sets_count = !s.fixed_pools});
      }
    }
  }
}

// The schedules worth trying at `pp`: with one stage every schedule is the same, so only
// the first non-interleaved one; interleaving needs two stages and v >= 2.
std::vector<std::pair<std::string, int>> schedules_for(const SearchSpace& sp, int pp) {
  register_builtin_schedules();
  std::vector<std::pair<std::string, int>> out;
  for (const auto& sched : sp.schedule) {
    if (pipeline_schedules().get(sched, "/space/schedule").make(Params())->interleaved()) {
      if (pp >= 2)
        for (int v : sp.interleave)
          if (v >= 2) out.emplace_back(sched, v);
    } else if (pp > 1 || std::none_of(out.begin(), out.end(), [](const auto& e) { return e.second == 1; })) {
      out.emplace_back(sched, 1);
    }
  }
  return out;
}

// The expert parallelism worth trying in layout `l` (its ep aside): the space's, else for an
// MoE model every ep up to its experts and the stage's devices that the layout rules accept
// with l's etp (ep divides the experts and the stage, ep * etp the stage), else ep = 1
// (dense) or the base's (unknown model).
std::vector<int> ep_values(const SearchSpec& s, Layout l) {
  if (!s.space.ep.empty()) return s.space.ep;
  if (s.experts == 0) return {1};
  if (s.experts < 0) return {s.base_ep};
  std::vector<int> out;
  for (l.ep = 1; l.ep <= l.per_stage() && l.ep <= s.experts; ++l.ep)
    if (broken_expert_rule(*s.model, l).empty()) out.push_back(l.ep);
  return out;
}

}  // namespace

nlohmann::ordered_json Candidate::params() const {
  nlohmann::ordered_json p;
  each_param([&](const char* pointer, auto value) {
    if constexpr (std::is_same_v<decltype(value), std::string_view>)
      p[pointer] = std::string(value);
    else
      p[pointer] = value;
  });
  return p;
}

void enumerate_candidates(const SearchSpec& s, const CandidateFn& add) {
  std::size_t made = 0;
  const auto& sp = s.space;
  for (int tp : sp.tp)
    for (int pp : sp.pp)
      for (int dp : sp.dp) {
        const long devices = static_cast<long>(tp) * pp * dp * s.base_cp;
        if (tp < 1 || pp < 1 || dp < 1 || !allowed_total(s, devices)) continue;
        for (int etp : sp.etp)
          for (int ep : ep_values(s, {dp, tp, pp, s.base_cp, 1, etp})) {
            // A layout whose etp the rules refuse is no candidate; one whose ep they refuse
            // is, and gets the parser's message.
            if (ep < 1 ||
                (s.model && broken_expert_rule(*s.model, {dp, tp, pp, s.base_cp, ep, etp}) == "/strategy/etp"))
              continue;
            for (int mb : sp.micro_batch)
              for (const auto& [sched, v] : schedules_for(sp, pp))
                add_variants(s, {tp, pp, dp, ep, etp, mb, sched, v}, made, add);
          }
      }
}

std::vector<Candidate> enumerate_candidates(const SearchSpec& s) {
  std::vector<Candidate> out;
  enumerate_candidates(s, [&](Candidate c) { out.push_back(std::move(c)); });
  return out;
}

}  // namespace hcsim::sweep
