#include "run.hpp"

#include <chrono>

#include <fmt/format.h>

#include "sim/core/quantity.hpp"

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

RunOutput run_scenario(const Scenario& sc) {
  const auto t0 = std::chrono::steady_clock::now();
  RunOutput out;
  LoweringInput in = lowering_input(sc);
  out.shapes = stage_shapes(in);
  if (sc.simulation.check_memory) check_memory(sc, out.shapes);
  const double est = estimate_tasks(sc);
  if (est > static_cast<double>(sc.simulation.max_tasks))
    throw InputError("/simulation/max_tasks",
                     fmt::format("the step would need about {:.3g} tasks, more than max_tasks = {}; use \"symmetry\": "
                                 "true, \"mode\": \"analytical\", fewer micro-batches, or raise max_tasks",
                                 est, sc.simulation.max_tasks));
  out.graph = lower_training_step(in);
  EngineOptions opt;
  opt.mode = sc.simulation.mode == "flow" ? "flow" : "event";
  out.engine = simulate(sc.topology, out.graph, opt);
  out.metrics = compute_metrics(sc, out.graph, out.engine, out.shapes);
  out.wall_s = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  return out;
}

}  // namespace hcsim
