#include "sim/driver/run.hpp"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <map>

#include <fmt/format.h>

#include "sim/collectives/cost.hpp"
#include "sim/driver/collective_times.hpp"
#include "sim/driver/offload_stream.hpp"
#include "sim/engine/collective_plan.hpp"
#include "sim/core/quantity.hpp"
#include "topologies/torus.hpp"
#include "topologies/transfer_time.hpp"
#include "workloads/analytical.hpp"
#include "workloads/stage_layout.hpp"

namespace hcsim {

namespace {

LoweringInput lowering_input(const Scenario& sc) {
  LoweringInput in;
  in.model = &sc.model;
  in.strategy = &sc.strategy;
  in.workload = &sc.workload;
  in.schedule = &sc.schedule();
  for (int s = 0; s < sc.strategy.pp; ++s) in.stage_device.push_back(sc.pools[sc.stage_pool[s]].device.get());
  in.layers_per_stage = sc.layers_per_stage;
  if (sc.simulation.symmetry) {
    in.dp_replicas = 1;
    in.tp_ranks = 1;
  }
  if (sc.strategy.offload == Offload::pool) {
    in.memory_endpoints = static_cast<std::uint32_t>(memory_nodes(sc.topology).size());
    in.offload_endpoint = offload_endpoints(sc.topology, sc.layout());
  }
  return in;
}

// The offloaded state per device of each stage (strategy.offload = "pool").
std::vector<Bytes> offloaded_state(const Scenario& sc, const std::vector<StageShape>& shapes) {
  std::vector<Bytes> out;
  for (int s = 0; s < sc.strategy.pp; ++s)
    out.push_back(stage_memory(sc.model, sc.strategy, sc.workload, shapes[static_cast<std::size_t>(s)]).offloaded);
  return out;
}

void check_memory(const Scenario& sc, const std::vector<StageShape>& shapes) {
  if (!sc.simulation.check_memory) return;
  std::vector<Issue> issues;
  for (int s = 0; s < sc.strategy.pp; ++s) {
    const auto& pool = sc.pools[sc.stage_pool[s]];
    if (auto why = stage_shortfall(sc.model, sc.strategy, sc.workload, shapes[s], pool.device->memory_capacity())) {
      const int n = sc.strategy.layout().per_stage();
      issues.push_back(memory_shortfall(s, s * n, (s + 1) * n - 1, pool.name, *why));
    }
  }
  if (!issues.empty()) throw InputError(issues);
  if (sc.strategy.offload == Offload::pool)
    if (auto issue = pool_shortfall(sc.topology, sc.layout(), offloaded_state(sc, shapes))) throw InputError({*issue});
}

}  // namespace

void check_scenario_memory(const Scenario& sc) { check_memory(sc, stage_shapes(lowering_input(sc))); }

std::optional<std::string> stage_shortfall(const TransformerConfig& c, const StrategySpec& st, const WorkloadSpec& w,
                                           const StageShape& sh, Bytes capacity, const MemoryBreakdown* need) {
  const MemoryBreakdown m = need ? *need : stage_memory(c, st, w, sh);
  if (m.total() <= capacity) return std::nullopt;
  std::optional<Bytes> with_sp;
  if (st.tp > 1 && !st.sequence_parallel) {
    StrategySpec sp = st;
    sp.sequence_parallel = true;
    with_sp = stage_memory(c, sp, w, sh).total();
  }
  return shortfall_text(capacity, m, with_sp);
}

std::string shortfall_text(Bytes capacity, const MemoryBreakdown& need, std::optional<Bytes> with_sp) {
  const Bytes total = need.total();
  std::string sp;
  if (with_sp && *with_sp < total)
    sp = *with_sp <= capacity
             ? fmt::format("; sequence_parallel: true fits it ({} per device: norms and dropouts sharded over tp)",
                           format_quantity(with_sp->value(), Dim::data))
             : fmt::format("; sequence_parallel: true would save {} per device",
                           format_quantity((total - *with_sp).value(), Dim::data));
  return fmt::format(
             "needs {} per device but has {}, short by {} (weights {}, gradients {}, optimizer {}, activations "
             "{}, buffers {}); try more tp/pp (or cp for long sequences), ZeRO, recomputation or a smaller "
             "micro-batch",
             format_quantity(total.value(), Dim::data), format_quantity(capacity.value(), Dim::data),
             format_quantity((total - capacity).value(), Dim::data), format_quantity(need.weights.value(), Dim::data),
             format_quantity(need.gradients.value(), Dim::data), format_quantity(need.optimizer.value(), Dim::data),
             format_quantity(need.activations.value(), Dim::data), format_quantity(need.buffers.value(), Dim::data)) +
         sp;
}

Issue memory_shortfall(int stage, int first, int last, const std::string& pool, const std::string& why) {
  return {"/strategy", fmt::format("does not fit in memory: stage {} (devices {}..{}, pool \"{}\") {}", stage, first,
                                   last, pool, why)};
}

double estimate_tasks(const Scenario& sc) {
  const auto& st = sc.strategy;
  const double m = static_cast<double>(sc.workload.micro_batches(st.dp));
  const double layers_per_stage = static_cast<double>(sc.model.layers) / st.pp;
  // Per pass and rank: tensor-parallel layers split at 2 (forward) or 2-4 (backward)
  // communication points per layer, each one compute task plus a share of a collective.
  double per_pass = st.tp > 1 ? layers_per_stage * (st.sequence_parallel ? 8.0 : 4.0) : 2.0;
  if (st.recompute == Recompute::full || st.recompute == Recompute::op) per_pass *= 1.5;
  // Context parallelism: per layer and pass up to three attention rings (forward,
  // recomputation, backward) of cp blocks and cp - 1 sends.
  if (st.cp > 1) per_pass += layers_per_stage * 3.0 * 2.0 * st.cp;
  // Expert parallelism: per MoE layer and pass two all-to-alls (and with etp > 1 a gather and
  // a reduce-scatter), each splitting the compute.
  const int expert_comms = (st.ep > 1 ? 2 : 0) + (st.etp > 1 ? 2 : 0);
  if (expert_comms > 0)
    per_pass += static_cast<double>(sc.model.moe_layers(0, sc.model.layers)) / st.pp * 2.0 * expert_comms;
  const double ranks = sc.simulation.symmetry ? static_cast<double>(st.pp) * st.cp
                                             : static_cast<double>(st.grad_ranks()) * st.tp * st.pp;
  // A counted schedule step costs the planner 0.13-0.7 us (analytical mode at 1,048,576 GPUs:
  // Llama-3 405B with ZeRO-3 0.13, with ZeRO-0 0.7, one group of 10^6 ranks 0.45), an engine
  // activity 2-3 us: a step counts as half a task, so that the bound errs on refusing.
  return ranks * m * 2.0 * (per_pass + 1.0) + ranks * 4.0 + 0.5 * estimate_collective_schedule(sc);
}

double estimate_collective_schedule(const Scenario& sc) {
  return estimate_collective_schedule(sc.strategy, sc.simulation.symmetry);
}

double estimate_collective_schedule(const StrategySpec& st, bool symmetry) {
  // Choosing and costing a gradient collective over n ranks walks the compressed schedules of
  // the candidate algorithms: a ring or multi-ring phase is one step of n transfers, a
  // hierarchical one four; a pipelined double binary tree has two phases of at most
  // 3 log2 n steps of up to 2 n transfers (fill, steady runs, drain); a pairwise exchange at
  // most 64 steps. Never more than the uncompressed ring's 2(n - 1) steps of n transfers.
  // One group is planned per stage under symmetry, one per stage and tensor-parallel rank
  // without. Data-parallel groups are the large ones.
  const double n = static_cast<double>(st.grad_ranks());
  if (n < 2) return 0.0;
  const double groups = symmetry ? st.pp : static_cast<double>(st.pp) * st.tp;
  return groups * std::min(2.0 * (n - 1.0) * n, n * (12.0 * std::log2(n) + 72.0));
}

namespace {

// The metrics' options of a run: its training-token count, the default power samples and twins.
MetricsOptions metrics_options(const Scenario& sc, const RunOptions& run = {}) {
  MetricsOptions o;
  o.train_tokens = sc.workload.train_tokens;
  o.power_curve = run.power_curve;
  return o;
}

// SM contention: per device, the cores a collective's channels take from its compute.
std::vector<int> comm_cores(const Scenario& sc) {
  std::vector<int> cores(static_cast<std::size_t>(sc.topology.device_count()));
  for (std::size_t d = 0; d < cores.size(); ++d) cores[d] = sc.pool_of_device(static_cast<int>(d)).device->comm_cores();
  return cores;
}

// The analytical fidelity: closed-form step from the same cost items, collectives from the
// topology-aware cost model; no task graph, no engine. Link bytes are not estimated, so
// network energy is the links' static part only.
Metrics analytical_metrics(const Scenario& sc, const LoweringInput& in, const std::vector<StageShape>& shapes) {
  const CollectiveCostModel model(sc.topology, scenario_cost_options(sc));
  CollectiveTimes times(model, sc.simulation.collective_algorithm);
  std::optional<Contention> contention;
  if (sc.simulation.sm_contention) {
    std::vector<int> cores = comm_cores(sc);
    contention.emplace();
    if (const std::optional<int> sms = tp_overlap_sms(sc.strategy); sms && cores.front() > 0)
      contention->tp_share = std::min(*sms, cores.front() - 1) / static_cast<double>(cores.front());
    contention->share =
        [shares = std::make_shared<CollectiveShares>(model, sc.simulation.collective_algorithm, std::move(cores))](
            const DeviceGroup& g, CollectiveOp op, Bytes bytes) { return (*shares)(g, op, bytes); };
  }
  const AnalyticalResult a = analytical_step(
      in, [&](const DeviceGroup& g, CollectiveOp op, Bytes bytes) { return times(g, op, bytes); }, nullptr,
      contention ? &*contention : nullptr);
  Metrics m;
  m.step_time = a.step_time;
  const int per_stage = sc.strategy.grad_ranks() * sc.strategy.tp;
  const Seconds step = a.step_time;
  // One class of figures per stage: its dp * cp * tp devices are alike.
  for (int s = 0; s < sc.strategy.pp; ++s) {
    DeviceMetrics dm;
    dm.stage = s;
    dm.pool = sc.stage_pool[static_cast<std::size_t>(s)];
    const AnalyticalStage& st = a.stages[static_cast<std::size_t>(s)];
    dm.compute = st.compute + st.optimizer;
    dm.exposed_comm[static_cast<std::size_t>(sc.strategy.sequence_parallel ? CommClass::sp : CommClass::tp)] =
        st.tp_comm;
    dm.exposed_comm[static_cast<std::size_t>(CommClass::cp)] = st.cp_comm;
    dm.exposed_comm[static_cast<std::size_t>(CommClass::ep)] = st.ep_comm;
    dm.exposed_comm[static_cast<std::size_t>(CommClass::pp)] = st.pp_comm;
    dm.exposed_comm[static_cast<std::size_t>(CommClass::offload)] = st.offload;
    dm.exposed_comm[static_cast<std::size_t>(sc.strategy.zero >= 1 ? CommClass::zero : CommClass::dp)] =
        st.dp_exposed;
    dm.bubble = st.bubble;
    dm.idle = max(Seconds{}, step - dm.compute - dm.exposed_comm_total() - dm.bubble);
    dm.flops = st.flops;
    dm.model_flops = st.model_flops;
    dm.dynamic_energy = st.dynamic_energy;
    m.devices.append_class(dm, static_cast<std::size_t>(per_stage));
  }
  // Memory, energy, throughput and the totals from the per-device figures.
  return complete_metrics(sc, std::move(m), shapes, metrics_options(sc));
}

// Mean over the devices that ran any codec task of their encode + decode time.
Seconds codec_time(const TaskGraph& g, const EngineResult& r) {
  std::uint32_t label = 0;
  bool found = false;
  for (std::uint32_t i = 0; i < g.labels().size(); ++i)
    if (g.labels()[i] == "codec") { label = i; found = true; }
  if (!found) return Seconds{};
  std::map<std::uint32_t, double> per_device;
  for (TaskId t = 0; t < g.size(); ++t)
    if (g[t].kind == TaskKind::compute && g[t].label == label) per_device[g[t].device] += r.end[t] - r.start[t];
  double sum = 0;
  for (const auto& [d, v] : per_device) sum += v;
  return per_device.empty() ? Seconds{} : Seconds(sum / static_cast<double>(per_device.size()));
}

// What the codecs do at a step, on a reference tensor: steps with equal signatures cost
// the same, so each distinct signature is simulated once.
std::vector<double> codec_signature(const Scenario& sc, std::int64_t step) {
  std::vector<double> sig;
  for (const Codec* c : {sc.strategy.dp_codec, sc.strategy.pp_codec}) {
    if (!c) continue;
    const CodecCost cc = c->cost(CodecInput{1024, 1024, 2, std::max(2, sc.strategy.dp), step});
    sig.insert(sig.end(), {cc.compressed ? 1.0 : 0.0, cc.wire_bytes_per_rank.value(), cc.encode_flops.value(),
                           cc.decode_flops.value(), static_cast<double>(cc.plan.phases.size())});
  }
  return sig;
}

// The wiring at step s of a job on a rewired torus: the dims of the last OCS phase begun
// by then, else the slice's own; empty for a static fabric.
const std::vector<int>& wiring_at(const TopologyGraph& g, std::int64_t s) {
  const std::vector<int>* dims = &g.torus_dims;
  for (const auto& ph : g.ocs_phases)
    if (ph.from_step <= s) dims = &ph.dims;
  return *dims;
}

// Changes of wiring during steps 0..k-1; the wiring of step 0 is set before the job starts.
std::int64_t reconfigurations(const TopologyGraph& g, std::int64_t k) {
  std::int64_t n = 0;
  const std::vector<int>* cur = &wiring_at(g, 0);
  for (const auto& ph : g.ocs_phases) {
    if (ph.from_step <= 0 || ph.from_step >= k) continue;
    if (ph.dims != *cur) ++n;
    cur = &ph.dims;
  }
  return n;
}

// The scenario with its torus rewired as `dims` (the optical circuit switches' work).
Scenario on_wiring(const Scenario& sc, const std::vector<int>& dims) {
  Scenario one = sc;
  one.topology.ocs_phases.clear();
  if (dims == sc.topology.torus_dims) return one;
  Diagnostics diag;
  one.topology = build_topology(torus_rewired(sc.resolved.at("cluster").at("topology"), dims), sc.device_count(),
                                "/cluster/topology", diag);
  HCSIM_ASSERT(diag.ok(), "an OCS phase checked when parsed does not build");
  return one;
}

// Steps 0..K-1 grouped by what the codecs do at them and by the wiring of a rewired torus;
// each group simulated once, weighted by its steps; each change of wiring adds the OCS
// reconfiguration time, all devices idle (at their idle power).
void average_over_steps(const Scenario& sc, RunOutput& out) {
  const std::int64_t k = sc.strategy.average_steps;
  const bool ocs = !sc.topology.ocs_phases.empty();
  std::map<std::vector<double>, RunOutput::StepPhase> groups;
  for (std::int64_t s = 0; s < k; ++s) {
    std::vector<double> key = codec_signature(sc, s);
    if (ocs) {
      const auto& dims = wiring_at(sc.topology, s);
      key.insert(key.end(), dims.begin(), dims.end());
    }
    auto [it, fresh] = groups.try_emplace(std::move(key));
    if (fresh) it->second.first_step = s;
    ++it->second.steps;
  }
  Watts idle_w{};
  for (auto& [sig, ph] : groups) {
    if (ocs) ph.dims = wiring_at(sc.topology, ph.first_step);
    Scenario one = on_wiring(sc, ph.dims.empty() ? sc.topology.torus_dims : ph.dims);
    one.strategy.step = ph.first_step;
    one.strategy.average_steps = 0;
    const Metrics m = run_scenario(one).metrics;
    ph.step_time = m.step_time;
    ph.it_energy = m.it_energy;
    out.mean_step_time += m.step_time * static_cast<double>(ph.steps) / static_cast<double>(k);
    out.mean_it_energy += m.it_energy * static_cast<double>(ph.steps) / static_cast<double>(k);
    if (ph.first_step == 0)
      for (const auto& d : m.devices) idle_w += d.idle_power;
    out.phases.push_back(ph);
  }
  std::sort(out.phases.begin(), out.phases.end(),
            [](const auto& a, const auto& b) { return a.first_step < b.first_step; });
  if (!ocs) return;
  out.reconfigurations = reconfigurations(sc.topology, k);
  out.reconfiguration_time = static_cast<double>(out.reconfigurations) * sc.topology.reconfiguration_time;
  out.reconfiguration_energy = out.reconfiguration_time * idle_w;
  out.mean_step_time += out.reconfiguration_time / static_cast<double>(k);
  out.mean_it_energy += out.reconfiguration_energy / static_cast<double>(k);
}

}  // namespace

namespace {

// Refuses a run whose estimated work is over simulation.max_tasks: `what` (a format string
// taking the estimate) says what was counted, `advice` what would make it smaller.
void enforce_max_tasks(const Scenario& sc, double estimate, const std::string& what, std::string_view advice) {
  if (estimate <= static_cast<double>(sc.simulation.max_tasks)) return;
  throw InputError("/simulation/max_tasks", fmt::format(fmt::runtime(what), estimate) +
                                                fmt::format(", more than max_tasks = {}; use {}, or raise max_tasks",
                                                            sc.simulation.max_tasks, advice));
}

}  // namespace

std::optional<TokenRouting> deepep_routing(const Scenario& sc) {
  if (!sc.strategy.deepep_dispatch || !sc.model.is_moe()) return std::nullopt;
  const MoeConfig& m = sc.model.moe;
  return TokenRouting{m.experts, m.top_k, m.max_nodes};
}

std::optional<TokenRouting> moe_routing(const Scenario& sc) {
  const MoeConfig& m = sc.model.moe;
  if (!sc.model.is_moe() || m.skew == 0 || m.capacity_factor > 0) return std::nullopt;
  return TokenRouting{m.experts, m.top_k, m.max_nodes, m.skew, m.capacity_factor};
}

CostOptions scenario_cost_options(const Scenario& sc) {
  return {.deepep = deepep_routing(sc), .routing = moe_routing(sc)};
}

Seconds analytical_collective_time(const CollectiveCostModel& model, const std::vector<int>& devices, CollectiveOp op,
                                   Bytes bytes, std::string_view algorithm, const std::vector<int>& siblings) {
  if (devices.size() <= 1 || bytes <= Bytes{}) return Seconds{};
  return analytical_collective_estimate(model, devices, op, bytes, algorithm, siblings).time;
}

CollectiveEstimate analytical_collective_estimate(const CollectiveCostModel& model, const std::vector<int>& devices,
                                                  CollectiveOp op, Bytes bytes, std::string_view algorithm,
                                                  const std::vector<int>& siblings) {
  // The engine's choice (sim/engine/collective_plan.hpp): "deepep" for an MoE dispatch under
  // strategy.moe_dispatch, else the named algorithm where it applies, else the cheapest with
  // the siblings' transfers on the links; its estimate with them.
  if (algorithm == "auto" && !(op == CollectiveOp::all_to_all && model.options().deepep))
    return model.estimate(devices, op, bytes, "auto", siblings);
  return model.estimate(devices, op, bytes,
                        resolve_collective_algorithm(model, devices, op, bytes, algorithm, siblings), siblings);
}

std::optional<Issue> analytical_bound_issue(const StrategySpec& st, bool symmetry, std::int64_t max_tasks) {
  const double estimate = estimate_collective_schedule(st, symmetry);
  if (estimate <= static_cast<double>(max_tasks)) return std::nullopt;
  return Issue{"/simulation/max_tasks",
               fmt::format("costing the step's collectives would walk about {:.3g} schedule steps (data-parallel "
                           "groups of {} ranks), more than max_tasks = {}; use fewer data-parallel ranks per group, "
                           "or raise max_tasks",
                           estimate, st.grad_ranks(), max_tasks)};
}

namespace {

// The imbalance's counterfactual (RunOutput::balanced): with an MoE model routed unevenly,
// the same scenario in the same mode with even routing, dropless (skew 0, no capacity
// factor), and without the memory check (dropless routing can need more than padded
// capacity < 1 does); null otherwise.
std::shared_ptr<Metrics> balanced_routing_step(const Scenario& sc) {
  const MoeConfig& moe = sc.model.moe;
  if (!sc.model.is_moe() || (moe.skew == 0 && moe.capacity_factor == 0)) return nullptr;
  Scenario even = sc;
  even.model.moe.skew = 0;
  even.model.moe.capacity_factor = 0;
  even.simulation.check_memory = false;
  even.strategy.average_steps = 0;
  return std::make_shared<Metrics>(run_scenario(even).metrics);
}

}  // namespace

RunOutput run_scenario(const Scenario& sc, const RunOptions& ropt) {
  const auto t0 = std::chrono::steady_clock::now();
  RunOutput out;
  LoweringInput in = lowering_input(sc);
  out.shapes = stage_shapes(in);
  check_memory(sc, out.shapes);
  if (sc.simulation.mode == "analytical") {
    if (auto issue = analytical_bound_issue(sc.strategy, sc.simulation.symmetry, sc.simulation.max_tasks))
      throw InputError({*issue});
    if (!in.offload_endpoint.empty())
      in.offload_stream.assign(static_cast<std::size_t>(sc.strategy.pp),
                               offload_stream_time(sc.topology, Router(sc.topology), sc.layout(),
                                                   offloaded_state(sc, out.shapes)));
    out.metrics = analytical_metrics(sc, in, out.shapes);
    out.balanced = balanced_routing_step(sc);
    out.wall_s = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    return out;
  }
  enforce_max_tasks(
      sc, estimate_tasks(sc),
      "the step would need about {:.3g} tasks' worth of work (its tasks, and half of one per collective schedule step)",
      "\"symmetry\": true, \"mode\": \"analytical\", fewer micro-batches, smaller data-parallel groups");
  out.graph = lower_training_step(in);
  EngineOptions opt;
  opt.mode = sc.simulation.mode == "flow" ? "flow" : "event";
  opt.algorithm = sc.simulation.collective_algorithm;
  opt.flow_phases = sc.simulation.flow_schedule == "phases";
  opt.representative_flows = sc.simulation.representative_flows;
  opt.deepep = deepep_routing(sc);
  opt.routing = moe_routing(sc);
  if (sc.simulation.sm_contention) {
    opt.comm_cores = comm_cores(sc);
    opt.tp_overlap_sms = tp_overlap_sms(sc.strategy);
  }
  out.engine = simulate(sc.topology, out.graph, opt);
  out.metrics = compute_metrics(sc, out.graph, out.engine, out.shapes, metrics_options(sc, ropt));
  out.codec_time = codec_time(out.graph, out.engine);
  if (sc.strategy.dp_codec || sc.strategy.pp_codec) {
    // The baseline the compression report compares with: the same scenario without codecs.
    Scenario plain = sc;
    plain.strategy.dp_codec = nullptr;
    plain.strategy.pp_codec = nullptr;
    plain.dp_codec.reset();
    plain.pp_codec.reset();
    plain.strategy.average_steps = 0;
    out.uncompressed = std::make_shared<Metrics>(run_scenario(plain).metrics);
  }
  if (sc.strategy.average_steps > 0) average_over_steps(sc, out);
  out.balanced = balanced_routing_step(sc);
  out.wall_s = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  return out;
}

}  // namespace hcsim
