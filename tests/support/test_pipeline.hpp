#pragma once
// A pipeline schedule replayed on SimGrid with round-number devices (TestDevice) and nearly
// free communication (1 EB/s, no latency), for tests that hold a schedule's order against
// its closed form and against the recurrence of workloads/analytical.hpp: a small GPT of
// `layers` layers (vocab 8: a negligible head), each chunk's pass times from the plan's
// items, and the engine's pipeline end.
#include <algorithm>
#include <memory>
#include <vector>

#include "sim/engine/engine.hpp"
#include "test_device.hpp"
#include "test_lowering.hpp"
#include "test_topology.hpp"
#include "workloads/analytical.hpp"
#include "workloads/step_plan.hpp"

namespace hcsim::testing {

struct PipelineCase {
  TransformerConfig c;
  StrategySpec st;
  WorkloadSpec w;
  TestDevice dev;
  PipelineCase(const char* schedule, int p, int m, int layers) {
    c.family = "gpt";
    c.layers = layers;
    c.hidden = 1024;
    c.heads = 16;
    c.kv_heads = 16;
    c.ffn_hidden = 4096;
    c.vocab = 8;
    c.seq_len = 512;
    st.pp = p;
    st.schedule = schedule;
    w.global_batch = m;
  }
  [[nodiscard]] LoweringInput input(const PipelineSchedule& schedule) const {
    return uniform_lowering(c, st, w, schedule, dev);
  }
};

inline std::unique_ptr<PipelineSchedule> make_schedule(const char* name) {
  register_builtin_schedules();
  return pipeline_schedules().get(name, "").make(Params());
}

inline double items_time(const std::vector<Item>& items) {
  double t = 0;
  for (const Item& it : items)
    if (it.kind == Item::Kind::compute) t += it.t.value();
  return t;
}

// Per chunk c of stage s at s * v + c: F, B, W and the whole backward, sends free.
inline std::vector<PassTimes> chunk_pass_times(const StepPlan& plan) {
  std::vector<PassTimes> t;
  for (const StagePlan& sp : plan.stages)
    for (const ChunkItems& ci : sp.chunks)
      t.push_back({Seconds(items_time(ci.fwd)), Seconds(items_time(ci.bwd_input)), Seconds(items_time(ci.bwd_weight)),
                   Seconds{}, Seconds{}, Seconds(items_time(ci.bwd))});
  return t;
}

// The end of the last non-optimizer compute task (the pipeline's end) in the engine.
inline double engine_pipeline_end(const LoweringInput& in) {
  const int p = in.strategy->pp;
  TaskGraph g = lower_training_step(in);
  const EngineResult r =
      simulate(test_topology({{"type", "nvswitch-cluster"},
                              {"gpus_per_node", p},
                              {"nvlink", {{"type", "electrical"}, {"bandwidth", "1 EB/s"}, {"latency", 0}}}},
                             p),
               g, {});
  double end = 0;
  for (TaskId k = 0; k < g.size(); ++k)
    if (g[k].kind == TaskKind::compute && g[k].phase != Phase::optimizer) end = std::max(end, r.end[k]);
  return end;
}

}  // namespace hcsim::testing
