#pragma once
// One scenario from typed values to metrics: memory check, task-count bound, lowering to a
// task graph, the engine, the metrics. Bad layouts (a model that does not fit, a task graph
// beyond --max-tasks) are InputErrors, reported before anything is simulated.

#include <optional>
#include <string>

#include "sim/report/run_output.hpp"

namespace hcsim {

// Estimated task count of the step before building it (for the --max-tasks bound),
// including estimate_collective_schedule.
double estimate_tasks(const Scenario& sc);
// Schedule steps walked to choose and cost the data-parallel collectives: per group of n
// ranks planned, the compressed candidates' min(2(n-1)n, n (12 log2 n + 72)).
double estimate_collective_schedule(const Scenario& sc);
double estimate_collective_schedule(const StrategySpec& st, bool symmetry);

// Why a stage needing `need` per device does not fit devices of `capacity` bytes: "needs
// ... per device but has ..., short by ... (weights ..., ...); try ...". `with_sp`: the
// need with sequence parallelism, when the layout has tp > 1 without it; the text then says
// whether turning it on fits the stage or how much it saves.
std::string shortfall_text(Bytes capacity, const MemoryBreakdown& need, std::optional<Bytes> with_sp = std::nullopt);
// The memory check of one stage (shape `sh`) on devices of `capacity`: its shortfall_text,
// none when it fits. `need`: the stage's stage_memory when the caller has it.
std::optional<std::string> stage_shortfall(const TransformerConfig& c, const StrategySpec& st, const WorkloadSpec& w,
                                           const StageShape& sh, Bytes capacity, const MemoryBreakdown* need = nullptr);
// The issue the memory check raises for stage `stage` on devices first..last of pool
// `pool`, which does not fit for the reason `why` (shortfall_text).
Issue memory_shortfall(int stage, int first, int last, const std::string& pool, const std::string& why);

// One collective's time in analytical mode: the algorithm the engine would run (the named
// one where it applies, else the cost model's choice), costed by the model; 0 for a group
// of one or no bytes.
Seconds analytical_collective_time(const CollectiveCostModel& model, const std::vector<int>& devices, CollectiveOp op,
                                   Bytes bytes, std::string_view algorithm, const std::vector<int>& siblings = {});
// The same collective's whole estimate (its protocol and channels too); a group of two or
// more ranks and some bytes.
CollectiveEstimate analytical_collective_estimate(const CollectiveCostModel& model, const std::vector<int>& devices,
                                                  CollectiveOp op, Bytes bytes, std::string_view algorithm,
                                                  const std::vector<int>& siblings = {});

// CostOptions::deepep of a scenario: its model's token routing when strategy.moe_dispatch is
// "deepep" (sim/collectives/deepep.hpp), else none.
std::optional<TokenRouting> deepep_routing(const Scenario& sc);
// CostOptions::routing of a scenario: its MoE model's token routing when it is uneven
// (router_skew > 0, dropless), which sizes the all-to-alls' blocks; else none.
std::optional<TokenRouting> moe_routing(const Scenario& sc);
// The cost model's options for a scenario's collectives: both of the above.
CostOptions scenario_cost_options(const Scenario& sc);

// The analytical mode's bound: the schedule steps of costing the data-parallel collectives
// (estimate_collective_schedule) over `max_tasks`; none when within it.
std::optional<Issue> analytical_bound_issue(const StrategySpec& st, bool symmetry, std::int64_t max_tasks);

// The memory check of a run, without simulating: each stage's peak memory (from the plan's
// stage shapes) against its devices' capacity, and with strategy.offload = "pool" the
// offloaded state against the memory nodes; InputError at /strategy (resp. /strategy/offload)
// when it does not fit. Nothing when simulation.check_memory is false.
void check_scenario_memory(const Scenario& sc);

struct RunOptions {
  // false: no power curve and no peak power in the metrics (MetricsOptions::power_curve).
  bool power_curve = true;
};

// check_scenario_memory, the task bound, then the step simulated (or its closed forms).
RunOutput run_scenario(const Scenario& sc, const RunOptions& opt = {});

}  // namespace hcsim
