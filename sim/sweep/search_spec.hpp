#pragma once
// A layout search file for `hcsim search`: the best parallel strategy for one model on one
// kind of device and network, under a device budget and a power cap, for an objective.
//
//   {
//     "base": "../quickstart.json",          // its model, batch and cluster (see below for pools)
//     "objective": "tokens_per_s",           // or "energy_per_token", "step_time"
//     "max_devices": 16,                     // default: the base pool's count
//     "device_counts": [8, 16],              // optional: only these totals tp*pp*dp*cp
//     "max_power_w": 12000,                  // optional cap on the average IT power
//     "top_k": 5,                            // confirmed with the event simulation
//     "prune_mode": "analytical",            // fidelity of the first pass (default)
//     "space": {"tp": [1, 2, 4, 8], "pp": [1, 2, 4], "dp": [1, 2, 4, 8, 16], "micro_batch": [1, 2, 4],
//               "schedule": ["1f1b", "interleaved-1f1b"], "interleave": [2], "recompute": ["none", "selective"],
//               "zero": [0, 1], "sequence_parallel": [false, true], "ep": [1, 2, 4], "etp": [1, 2]}
//   }
//
// With one compute pool in the base, a candidate resizes it to its tp * pp * dp * cp devices
// (cp: the base's); with several (heterogeneous placement), the pools keep their counts and
// a candidate fills them all, its stages placed by device order, each inside one pool.
// Every layout of the space within the budget is a candidate, minus equivalent duplicates
// (interleave only with the interleaved schedule, sequence parallelism only with tp > 1,
// ZeRO only with dp > 1 or, for an MoE model, dp * cp * tp / (ep * etp) > 1 devices holding the same
// experts, one schedule when pp = 1); the scenario parser rejects the rest
// (heads not divisible by tp, batch not divisible by dp x micro-batch, ep not dividing the
// experts or a stage's devices, ...).
//
// Expert parallelism ("ep": [1, 2, 4, 8] in the space, MoE models): without "ep", an MoE base
// tries every ep that divides both its routed experts and the candidate's stage of
// dp * cp * tp devices (the layout rules, workloads/layout.hpp; with the candidate's etp,
// ep * etp divides the stage), a dense base ep = 1; a base that does not parse keeps its
// own ep.
//
// Expert tensor parallelism ("etp": [1, 2] in the space; default: the base's etp): a layout
// whose etp the layout rules refuse for it (ep * etp not dividing the stage) is not a
// candidate; an etp the rules refuse whatever the layout (etp > 1 on a dense model, etp not
// dividing the experts' MLP) is an error at /space/etp/i, as strategy.etp is in a scenario.
// A base that does not parse keeps every listed etp (the parser then refuses each row).

#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json.hpp>

#include "sim/sweep/scenario_source.hpp"
#include "workloads/strategy.hpp"

namespace hcsim {
struct TransformerConfig;
}

namespace hcsim::sweep {

// The first-pass fidelity: closed forms, microseconds per layout (run_scenario's
// "analytical" mode). A search file ("prune_mode") or --prune-mode may ask for "event"
// instead, which screens at the confirmation fidelity and so confirms every feasible layout.
inline constexpr const char* kDefaultPruneMode = "analytical";

struct SearchSpace {
  std::vector<int> tp{1, 2, 4, 8}, pp{1, 2, 4, 8}, dp;  // dp default: powers of two up to max_devices
  std::vector<int> ep;   // default: per layout, the ep the experts and the stage allow (see above)
  std::vector<int> etp;  // default: the base's etp
  std::vector<int> micro_batch{1, 2, 4};
  std::vector<std::string> schedule{"1f1b", "interleaved-1f1b"};
  std::vector<int> interleave{2};
  std::vector<std::string> recompute{"none", "selective", "full"};
  std::vector<int> zero{0, 1};
  std::vector<bool> sequence_parallel{false, true};
};

enum class Objective { tokens_per_s, energy_per_token, step_time };

struct SearchSpec {
  std::string file;
  ScenarioSource base;
  SearchSpace space;
  int max_devices = 0;
  bool fixed_pools = false;  // the base has several compute pools: counts kept, devices = their sum
  int base_cp = 1;           // the base's context parallelism: candidates hold tp * pp * dp * cp devices
  // The base model's routed experts (0: dense), -1 when the base does not parse; then the
  // default ep axis is the base's ep.
  std::int64_t experts = -1;
  // The base's model, for the layout rules on expert parallelism; null when the base does
  // not parse.
  std::shared_ptr<const TransformerConfig> model;
  int base_ep = 1;
  int base_etp = 1;                // the base's expert tensor parallelism: the default etp axis
  std::vector<int> device_counts;  // empty: any total within max_devices
  std::optional<double> max_power_w;
  Objective objective = Objective::tokens_per_s;
  std::size_t top_k = 5;
  std::string prune_mode = kDefaultPruneMode;
};

// One layout of a search, as typed fields: a search enumerates many (87,924 for the 530B
// GPT) and most are refused at once, so the assignments that apply it to the base are made
// only when a row needs them (params()).
struct Candidate {
  std::size_t index = 0;
  int devices = 0;
  int tp = 1, pp = 1, dp = 1, ep = 1, etp = 1, micro_batch = 1;
  std::string schedule;  // a name of space.schedule
  int interleave = 1;
  Recompute recompute = Recompute::none;
  int zero = 0;
  bool sequence_parallel = false;
  bool sets_count = true;  // one pool: "/cluster/pools/0/count" = devices (several: their counts stay)
  // Calls f(pointer, value) for each parameter the candidate sets, in this order: the one
  // list of them (params(), candidates.csv's columns and rows). A value is an int, a bool
  // or a std::string_view.
  template <class F>
  void each_param(F&& f) const {
    f("/strategy/tp", tp);
    f("/strategy/pp", pp);
    f("/strategy/dp", dp);
    f("/strategy/ep", ep);
    f("/strategy/etp", etp);
    f("/workload/micro_batch", micro_batch);
    f("/strategy/schedule", std::string_view(schedule));
    f("/strategy/interleave", interleave);
    f("/strategy/recompute", recompute_name(recompute));
    f("/strategy/zero", zero);
    f("/strategy/sequence_parallel", sequence_parallel);
    if (sets_count) f("/cluster/pools/0/count", devices);
  }
  // {"/strategy/tp": 2, ..., "/cluster/pools/0/count": 16}: each_param as JSON.
  [[nodiscard]] nlohmann::ordered_json params() const;
};

SearchSpec load_search(const std::string& file);
SearchSpec parse_search(const nlohmann::json& doc, const std::string& file);

// A search refuses a space of more candidates than this (at /space).
inline constexpr std::size_t kMaxCandidates = 200'000;
// Every candidate of the space, in order (index 0, 1, ...), to `add` as it is made.
using CandidateFn = std::function<void(Candidate)>;
void enumerate_candidates(const SearchSpec& spec, const CandidateFn& add);
std::vector<Candidate> enumerate_candidates(const SearchSpec& spec);

// "tokens_per_s" etc.
std::string objective_name(Objective o);

}  // namespace hcsim::sweep
