// Power and memory of each simulated device over the step, as step functions.
#include <algorithm>
#include <map>
#include <tuple>

#include "sim/report/metrics_parts.hpp"

namespace hcsim::report_detail {

double Series::max() const {
  double x = v.empty() ? 0.0 : v.front();
  for (double y : v) x = std::max(x, y);
  return x;
}

Series step_series(std::vector<Delta> deltas, double base) {
  std::stable_sort(deltas.begin(), deltas.end(), [](const Delta& a, const Delta& b) { return a.t < b.t; });
  Series s;
  s.t.push_back(0.0);
  s.v.push_back(base);
  double v = base;
  for (std::size_t i = 0; i < deltas.size();) {
    const double t = deltas[i].t;
    for (; i < deltas.size() && deltas[i].t == t; ++i) v += deltas[i].dv;
    if (t <= s.t.back()) {
      s.v.back() = v;  // at time 0, or merged with the point before
    } else if (v != s.v.back()) {
      s.t.push_back(t);
      s.v.push_back(v);
    }
  }
  return s;
}

std::vector<Series> device_power_series(const TaskGraph& g, const EngineResult& r, const Metrics& m) {
  std::vector<std::vector<Delta>> deltas(m.devices.size());
  for (TaskId id = 0; id < g.size(); ++id) {
    const Task& t = g[id];
    const double dur = r.end[id] - r.start[id];
    if (t.kind != TaskKind::compute || dur <= 0 || t.energy == Joules{}) continue;
    const double p = (t.energy / Seconds(dur)).value();
    deltas[t.device].push_back({r.start[id], p});
    deltas[t.device].push_back({r.end[id], -p});
  }
  std::vector<Series> out(m.devices.size());
  for (std::size_t d = 0; d < m.devices.size(); ++d)
    if (m.devices.simulated(d)) out[d] = step_series(std::move(deltas[d]), m.devices.shared(d).idle_power.value());
  return out;
}

std::vector<Series> device_memory_series(const TaskGraph& g, const EngineResult& r, const Metrics& m,
                                         const std::vector<StageShape>& shapes) {
  // Model FLOPs (and task count, for FLOP-free tasks) of each (device, micro-batch, direction).
  struct Work {
    Flops flops{};
    int tasks = 0;
  };
  std::map<std::tuple<std::uint32_t, int, bool>, Work> work;
  auto pass = [](const Task& t) {
    return t.kind == TaskKind::compute && (t.phase == Phase::forward || t.phase == Phase::backward);
  };
  for (const Task& t : g.tasks()) {
    if (!pass(t)) continue;
    Work& w = work[{t.device, t.microbatch, t.phase == Phase::backward}];
    w.flops += t.model_flops;
    ++w.tasks;
  }
  std::vector<std::vector<Delta>> deltas(m.devices.size());
  for (TaskId id = 0; id < g.size(); ++id) {
    const Task& t = g[id];
    if (!pass(t)) continue;
    const DeviceMetrics& dm = m.devices.shared(t.device);
    const double in_flight = std::max(1.0, shapes[static_cast<std::size_t>(dm.stage)].in_flight);
    const double per_mb = dm.memory.activations.value() / in_flight;
    const bool bwd = t.phase == Phase::backward;
    const Work& w = work[{t.device, t.microbatch, bwd}];
    const double share = w.flops > Flops{} ? t.model_flops / w.flops : 1.0 / w.tasks;
    if (bwd) deltas[t.device].push_back({r.end[id], -per_mb * share});
    else deltas[t.device].push_back({r.start[id], per_mb * share});
  }
  std::vector<Series> out(m.devices.size());
  for (std::size_t d = 0; d < m.devices.size(); ++d) {
    if (!m.devices.simulated(d)) continue;
    const MemoryBreakdown& mb = m.devices.shared(d).memory;
    out[d] = step_series(std::move(deltas[d]), (mb.weights + mb.gradients + mb.optimizer + mb.buffers).value());
  }
  return out;
}

}  // namespace hcsim::report_detail
