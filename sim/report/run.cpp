#include "run.hpp"

#include <algorithm>
#include <chrono>
#include <map>

#include <fmt/format.h>

#include "sim/collectives/cost.hpp"
#include "sim/engine/collective_plan.hpp"
#include "sim/core/quantity.hpp"
#include "workloads/analytical.hpp"

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
  return in;
}

void check_memory(const Scenario& sc, const std::vector<StageShape>& shapes) {
  const int per_stage = sc.strategy.dp * sc.strategy.tp;
  std::vector<Issue> issues;
  for (int s = 0; s < sc.strategy.pp; ++s) {
    const auto& pool = sc.pools[sc.stage_pool[s]];
    const MemoryBreakdown m = stage_memory(sc.model, sc.strategy, sc.workload, shapes[s]);
    const double cap = pool.device->memory_capacity().value();
    if (m.total().value() <= cap) continue;
    issues.push_back(
        {"/strategy",
         fmt::format("does not fit in memory: stage {} (devices {}..{}, pool \"{}\") needs {} per device but has {}, "
                     "short by {} (weights {}, gradients {}, optimizer {}, activations {}, buffers {}); try more "
                     "tp/pp, ZeRO, recomputation or a smaller micro-batch",
                     s, s * per_stage, (s + 1) * per_stage - 1, pool.name, format_quantity(m.total().value(), Dim::data),
                     format_quantity(cap, Dim::data), format_quantity(m.total().value() - cap, Dim::data),
                     format_quantity(m.weights.value(), Dim::data), format_quantity(m.gradients.value(), Dim::data),
                     format_quantity(m.optimizer.value(), Dim::data), format_quantity(m.activations.value(), Dim::data),
                     format_quantity(m.buffers.value(), Dim::data))});
  }
  if (!issues.empty()) throw InputError(issues);
}

}  // namespace

double estimate_tasks(const Scenario& sc) {
  const auto& st = sc.strategy;
  const double m = static_cast<double>(sc.workload.micro_batches(st.dp));
  const double layers_per_stage = static_cast<double>(sc.model.layers) / st.pp;
  // Per pass and rank: tensor-parallel layers split at 2 (forward) or 2-4 (backward)
  // communication points per layer, each one compute task plus a share of a collective.
  double per_pass = st.tp > 1 ? layers_per_stage * (st.sequence_parallel ? 8.0 : 4.0) : 2.0;
  if (st.recompute == Recompute::full) per_pass *= 1.5;
  const double ranks = sc.simulation.symmetry ? st.pp : static_cast<double>(st.dp) * st.tp * st.pp;
  return ranks * m * 2.0 * (per_pass + 1.0) + ranks * 4.0;
}

namespace {

// The analytical fidelity: closed-form step from the same cost items, collectives from the
// topology-aware cost model; no task graph, no engine. Link bytes are not estimated, so
// network energy is the links' static part only.
Metrics analytical_metrics(const Scenario& sc, const LoweringInput& in, const std::vector<StageShape>& shapes) {
  const CollectiveCostModel model(sc.topology);
  const std::string algo = sc.simulation.collective_algorithm;
  const AnalyticalResult a = analytical_step(in, [&](const std::vector<int>& devs, CollectiveOp op, double bytes) {
    if (devs.size() <= 1 || bytes <= 0) return 0.0;
    // The engine's choice: the named algorithm where it applies, else the cheapest.
    const std::string use = resolve_collective_algorithm(model, devs, op, Bytes(bytes), algo);
    return model.estimate(devs, op, Bytes(bytes), use).time.value();
  });
  Metrics m;
  m.step_time_s = a.step_time_s;
  const int per_stage = sc.strategy.dp * sc.strategy.tp;
  const double step = a.step_time_s;
  for (int d = 0; d < sc.device_count(); ++d) {
    DeviceMetrics dm;
    dm.device = static_cast<std::uint32_t>(d);
    dm.stage = d / per_stage;
    dm.pool = sc.stage_pool[static_cast<std::size_t>(dm.stage)];
    const AnalyticalStage& st = a.stages[static_cast<std::size_t>(dm.stage)];
    dm.compute_s = st.compute_s + st.optimizer_s;
    dm.exposed_comm_s[static_cast<std::size_t>(sc.strategy.sequence_parallel ? CommClass::sp : CommClass::tp)] =
        st.tp_comm_s;
    dm.exposed_comm_s[static_cast<std::size_t>(CommClass::pp)] = st.pp_comm_s;
    dm.exposed_comm_s[static_cast<std::size_t>(sc.strategy.zero >= 1 ? CommClass::zero : CommClass::dp)] =
        st.dp_exposed_s;
    dm.bubble_s = st.bubble_s;
    dm.idle_s = std::max(0.0, step - dm.compute_s - dm.exposed_comm_total() - dm.bubble_s);
    dm.flops = st.flops;
    dm.model_flops = st.model_flops;
    dm.dynamic_energy_j = st.dynamic_energy_j;
    m.devices.push_back(dm);
  }
  // Memory, energy, throughput and the totals from the per-device figures.
  return complete_metrics(sc, m, shapes, {.train_tokens = sc.workload.train_tokens});
}

// Mean over the devices that ran any codec task of their encode + decode time.
double codec_time(const TaskGraph& g, const EngineResult& r) {
  std::uint32_t label = 0;
  bool found = false;
  for (std::uint32_t i = 0; i < g.labels().size(); ++i)
    if (g.labels()[i] == "codec") { label = i; found = true; }
  if (!found) return 0;
  std::map<std::uint32_t, double> per_device;
  for (TaskId t = 0; t < g.size(); ++t)
    if (g[t].kind == TaskKind::compute && g[t].label == label) per_device[g[t].device] += r.end[t] - r.start[t];
  double sum = 0;
  for (const auto& [d, v] : per_device) sum += v;
  return per_device.empty() ? 0 : sum / static_cast<double>(per_device.size());
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

void average_over_steps(const Scenario& sc, RunOutput& out) {
  const std::int64_t k = sc.strategy.average_steps;
  std::map<std::vector<double>, RunOutput::StepPhase> groups;
  for (std::int64_t s = 0; s < k; ++s) {
    auto [it, fresh] = groups.try_emplace(codec_signature(sc, s));
    if (fresh) it->second.first_step = s;
    ++it->second.steps;
  }
  for (auto& [sig, ph] : groups) {
    Scenario one = sc;
    one.strategy.step = ph.first_step;
    one.strategy.average_steps = 0;
    const Metrics m = run_scenario(one).metrics;
    ph.step_time_s = m.step_time_s;
    ph.it_energy_j = m.it_energy_j;
    out.mean_step_time_s += m.step_time_s * static_cast<double>(ph.steps) / static_cast<double>(k);
    out.mean_it_energy_j += m.it_energy_j * static_cast<double>(ph.steps) / static_cast<double>(k);
    out.phases.push_back(ph);
  }
  std::sort(out.phases.begin(), out.phases.end(),
            [](const auto& a, const auto& b) { return a.first_step < b.first_step; });
}

}  // namespace

RunOutput run_scenario(const Scenario& sc) {
  const auto t0 = std::chrono::steady_clock::now();
  RunOutput out;
  LoweringInput in = lowering_input(sc);
  out.shapes = stage_shapes(in);
  if (sc.simulation.check_memory) check_memory(sc, out.shapes);
  if (sc.simulation.mode == "analytical") {
    out.metrics = analytical_metrics(sc, in, out.shapes);
    out.wall_s = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    return out;
  }
  const double est = estimate_tasks(sc);
  if (est > static_cast<double>(sc.simulation.max_tasks))
    throw InputError("/simulation/max_tasks",
                     fmt::format("the step would need about {:.3g} tasks, more than max_tasks = {}; use \"symmetry\": "
                                 "true, \"mode\": \"analytical\", fewer micro-batches, or raise max_tasks",
                                 est, sc.simulation.max_tasks));
  out.graph = lower_training_step(in);
  EngineOptions opt;
  opt.mode = sc.simulation.mode == "flow" ? "flow" : "event";
  opt.algorithm = sc.simulation.collective_algorithm;
  out.engine = simulate(sc.topology, out.graph, opt);
  out.metrics = compute_metrics(sc, out.graph, out.engine, out.shapes, {.train_tokens = sc.workload.train_tokens});
  out.codec_time_s = codec_time(out.graph, out.engine);
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
  out.wall_s = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  return out;
}

}  // namespace hcsim
