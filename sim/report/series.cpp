// Power and memory of each simulated device over the step, as step functions.
#include <algorithm>
#include <map>
#include <tuple>

#include "sim/core/error.hpp"
#include "sim/report/metrics_parts.hpp"

namespace hcsim::report_detail {

double Series::max() const {
  double x = v.empty() ? 0.0 : v.front();
  for (double y : v) x = std::max(x, y);
  return x;
}

SimulatedSlots::SimulatedSlots(const Metrics& m) : slot_(m.devices.size()) {
  for (std::size_t d = 0; d < m.devices.size(); ++d)
    if (m.devices.simulated(d)) {
      devices_.push_back(static_cast<std::uint32_t>(d));
      slot_[d] = static_cast<std::uint32_t>(devices_.size());
    }
}

std::uint32_t SimulatedSlots::slot(std::uint32_t d) const {
  HCSIM_ASSERT(simulated(d), "a slot is asked of a simulated device");
  return slot_[d] - 1;
}

namespace {

// The deltas of each simulated device, by its slot.
class DeltasByDevice {
 public:
  explicit DeltasByDevice(const Metrics& m) : slots_(m), deltas_(slots_.size()) {}
  // The deltas of the device a compute task runs on (simulated: it ran one).
  std::vector<Delta>& operator[](std::uint32_t d) { return deltas_[slots_.slot(d)]; }
  // Each device's series, from base(device) at time 0.
  template <class Base>
  DeviceSeries series(Base base) && {
    DeviceSeries out{std::move(slots_), {}};
    out.series.reserve(out.slots.size());
    for (std::size_t i = 0; i < out.slots.size(); ++i)
      out.series.push_back(step_series(std::move(deltas_[i]), base(out.slots.devices()[i])));
    return out;
  }

 private:
  SimulatedSlots slots_;
  std::vector<std::vector<Delta>> deltas_;
};

}  // namespace

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

DeviceSeries device_power_series(const TaskGraph& g, const EngineResult& r, const Metrics& m) {
  DeltasByDevice deltas(m);
  for (TaskId id = 0; id < g.size(); ++id) {
    const Task& t = g[id];
    const double dur = r.end[id] - r.start[id];
    if (t.kind != TaskKind::compute || dur <= 0 || t.energy == Joules{}) continue;
    const double p = (t.energy / Seconds(dur)).value();
    deltas[t.device].push_back({r.start[id], p});
    deltas[t.device].push_back({r.end[id], -p});
  }
  return std::move(deltas).series([&](std::uint32_t d) { return m.devices.shared(d).idle_power.value(); });
}

DeviceSeries device_memory_series(const TaskGraph& g, const EngineResult& r, const Metrics& m,
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
  DeltasByDevice deltas(m);
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
  return std::move(deltas).series([&](std::uint32_t d) {
    const MemoryBreakdown& mb = m.devices.shared(d).memory;
    return (mb.weights + mb.gradients + mb.optimizer + mb.buffers).value();
  });
}

}  // namespace hcsim::report_detail
