#include "metrics.hpp"

#include <algorithm>
#include <map>

namespace hcsim {

double DeviceMetrics::exposed_comm_total() const {
  double s = 0;
  for (double x : exposed_comm_s) s += x;
  return s;
}

namespace {

// When several kinds of communication wait at once, the time is charged to the first of
// this list: the one on the critical path of the forward/backward pass comes first.
constexpr std::array<CommClass, 7> kPriority{CommClass::tp, CommClass::sp, CommClass::cp, CommClass::pp,
                                             CommClass::zero, CommClass::dp, CommClass::offload};

struct Event {
  double t;
  int delta;  // +1 start, -1 end
  int cls;    // -1 compute, else CommClass
  bool operator<(const Event& o) const { return t != o.t ? t < o.t : delta < o.delta; }
};

void breakdown(DeviceMetrics& dm, std::vector<Event>& ev, double pass_end, double step) {
  std::sort(ev.begin(), ev.end());
  int compute = 0;
  std::array<int, kCommClasses> comm{};
  double t = 0;
  auto charge = [&](double a, double b) {
    if (b <= a) return;
    if (compute > 0) { dm.compute_s += b - a; return; }
    for (CommClass c : kPriority)
      if (comm[static_cast<std::size_t>(c)] > 0) { dm.exposed_comm_s[static_cast<std::size_t>(c)] += b - a; return; }
    // Waiting with nothing in flight: pipeline bubble until the pipeline's last pass, idle after.
    const double mid = std::min(std::max(pass_end, a), b);
    dm.bubble_s += mid - a;
    dm.idle_s += b - mid;
  };
  for (const Event& e : ev) {
    charge(t, e.t);
    t = std::max(t, e.t);
    if (e.cls < 0) compute += e.delta;
    else comm[static_cast<std::size_t>(e.cls)] += e.delta;
  }
  charge(t, step);
}

}  // namespace

Metrics compute_metrics(const Scenario& sc, const TaskGraph& g, const EngineResult& r,
                        const std::vector<StageShape>& shapes) {
  Metrics m;
  m.step_time_s = r.makespan;
  m.tasks = g.size();
  m.activities = r.activities;
  const auto n = static_cast<std::size_t>(sc.device_count());
  const int per_stage = sc.strategy.dp * sc.strategy.tp;
  std::vector<std::vector<Event>> ev(n);
  std::vector<double> pass_end(n, 0.0);
  m.devices.resize(n);
  for (std::size_t d = 0; d < n; ++d) {
    auto& dm = m.devices[d];
    dm.device = static_cast<std::uint32_t>(d);
    dm.stage = static_cast<int>(d) / per_stage;
    dm.pool = sc.stage_pool[static_cast<std::size_t>(dm.stage)];
    dm.simulated = false;
  }
  for (TaskId id = 0; id < g.size(); ++id) {
    const Task& t = g[id];
    const double a = r.start[id], b = r.end[id];
    switch (t.kind) {
      case TaskKind::compute: {
        auto& dm = m.devices[t.device];
        dm.simulated = true;
        ev[t.device].push_back({a, +1, -1});
        ev[t.device].push_back({b, -1, -1});
        dm.flops += t.flops;
        dm.model_flops += t.model_flops;
        dm.dynamic_energy_j += t.energy_j;
        if (t.phase != Phase::optimizer) pass_end[t.device] = std::max(pass_end[t.device], b);
        break;
      }
      case TaskKind::send:
        m.comm_bytes[static_cast<std::size_t>(t.comm)] += t.bytes;
        for (std::uint32_t d : {t.device, t.peer}) {
          ev[d].push_back({a, +1, static_cast<int>(t.comm)});
          ev[d].push_back({b, -1, static_cast<int>(t.comm)});
        }
        break;
      case TaskKind::collective:
        m.comm_bytes[static_cast<std::size_t>(t.comm)] += t.bytes * static_cast<double>(g.groups()[t.group].size());
        for (std::uint32_t d : g.groups()[t.group]) {
          ev[d].push_back({a, +1, static_cast<int>(t.comm)});
          ev[d].push_back({b, -1, static_cast<int>(t.comm)});
        }
        break;
    }
  }
  const double step = m.step_time_s;
  // The pipeline's span ends with the last forward/backward pass of any device: a stage
  // waiting before it is in the bubble (the closed forms count the drain), after it idle.
  const double span = pass_end.empty() ? 0.0 : *std::max_element(pass_end.begin(), pass_end.end());
  std::vector<double> stage_bubble(static_cast<std::size_t>(sc.strategy.pp), 0.0);
  std::vector<int> stage_n(stage_bubble.size(), 0);
  double bubble = 0;
  int simulated = 0;
  for (std::size_t d = 0; d < n; ++d) {
    auto& dm = m.devices[d];
    const auto& pool = sc.pools[static_cast<std::size_t>(dm.pool)];
    dm.memory = stage_memory(sc.model, sc.strategy, sc.workload, shapes[static_cast<std::size_t>(dm.stage)]);
    dm.capacity_bytes = pool.device->memory_capacity().value();
    if (dm.memory.total().value() > dm.capacity_bytes) m.memory_fits = false;
    dm.static_energy_j = pool.device->idle_power().value() * step;
    if (!dm.simulated) continue;
    breakdown(dm, ev[d], span, step);
    ++simulated;
    bubble += dm.bubble_s;
    stage_bubble[static_cast<std::size_t>(dm.stage)] += dm.bubble_s;
    ++stage_n[static_cast<std::size_t>(dm.stage)];
    m.model_flops += dm.model_flops;
    m.hardware_flops += dm.flops;
    m.device_dynamic_j += dm.dynamic_energy_j;
  }
  for (const auto& dm : m.devices) m.device_static_j += dm.static_energy_j;
  m.bubble_fraction = step > 0 && simulated > 0 ? bubble / simulated / step : 0;
  for (std::size_t s = 0; s < stage_bubble.size(); ++s)
    m.stage_bubble_fraction.push_back(stage_n[s] && step > 0 ? stage_bubble[s] / stage_n[s] / step : 0);

  double peak = 0;
  for (const auto& p : sc.pools) peak += p.count * p.device->peak(sc.workload.precision).value();
  if (step > 0 && peak > 0) {
    m.mfu = m.model_flops / (step * peak);
    m.hfu = m.hardware_flops / (step * peak);
  }
  const double tokens = static_cast<double>(sc.workload.global_batch * sc.model.seq_len);
  if (step > 0) {
    m.tokens_per_s = tokens / step;
    m.samples_per_s = static_cast<double>(sc.workload.global_batch) / step;
  }

  std::map<std::string, LinkClassMetrics> cls;
  for (std::size_t e = 0; e < sc.topology.edges().size(); ++e) {
    const TopoEdge& ed = sc.topology.edges()[e];
    auto& lc = cls[ed.link_class];
    lc.link_class = ed.link_class;
    lc.links += 1;
    const double bytes = e < r.edge_bytes.size() ? r.edge_bytes[e] : 0.0;
    lc.bytes += bytes;
    lc.dynamic_energy_j += bytes * ed.link.energy_per_byte.value();
    lc.static_energy_j += ed.link.static_power.value() * ed.lanes * step;
    lc.utilisation += 2.0 * ed.bandwidth().value() * step;  // capacity, divided below
  }
  for (auto& [k, lc] : cls) {
    lc.utilisation = lc.utilisation > 0 ? lc.bytes / lc.utilisation : 0;
    m.network_dynamic_j += lc.dynamic_energy_j;
    m.network_static_j += lc.static_energy_j;
    m.links.push_back(lc);
  }
  m.it_energy_j = m.device_dynamic_j + m.device_static_j + m.network_dynamic_j + m.network_static_j;
  m.facility_energy_j = m.it_energy_j * sc.pue;
  m.energy_per_token_j = tokens > 0 ? m.it_energy_j / tokens : 0;
  m.average_power_w = step > 0 ? m.it_energy_j / step : 0;
  return m;
}

}  // namespace hcsim
