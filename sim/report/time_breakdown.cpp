// Per-device time breakdown: a sweep over the device's task start/end events partitions
// [0, step] into compute, exposed communication by kind, pipeline bubble and idle.
#include <algorithm>
#include <map>

#include "sim/report/metrics_parts.hpp"

namespace hcsim::report_detail {
namespace {

// When several kinds of communication wait at once, the time is charged to the first of
// this list: the one on the critical path of the forward/backward pass comes first.
constexpr std::array<CommClass, 8> kPriority{CommClass::tp, CommClass::sp, CommClass::cp, CommClass::ep, CommClass::pp,
                                             CommClass::zero, CommClass::dp, CommClass::offload};

struct Event {
  double t;
  int delta;  // +1 start, -1 end
  int cls;    // -1 compute, else CommClass
  bool operator<(const Event& o) const { return t != o.t ? t < o.t : delta < o.delta; }
};

void sweep(DeviceMetrics& dm, std::vector<Event>& ev, double pass_end, double step) {
  std::sort(ev.begin(), ev.end());
  int compute = 0;
  std::array<int, kCommClasses> comm{};
  double t = 0;
  auto charge = [&](double a, double b) {
    if (b <= a) return;
    if (compute > 0) { dm.compute += Seconds(b - a); return; }
    for (CommClass c : kPriority)
      if (comm[static_cast<std::size_t>(c)] > 0) { dm.exposed_comm[static_cast<std::size_t>(c)] += Seconds(b - a); return; }
    // Waiting with nothing in flight: pipeline bubble until the pipeline's last pass, idle after.
    const double mid = std::min(std::max(pass_end, a), b);
    dm.bubble += Seconds(mid - a);
    dm.idle += Seconds(b - mid);
  };
  for (const Event& e : ev) {
    charge(t, e.t);
    t = std::max(t, e.t);
    if (e.cls < 0) compute += e.delta;
    else comm[static_cast<std::size_t>(e.cls)] += e.delta;
  }
  charge(t, step);
}

void add_interval(std::vector<Event>& ev, double a, double b, int cls) {
  ev.push_back({a, +1, cls});
  ev.push_back({b, -1, cls});
}

}  // namespace

void time_breakdown(const TaskGraph& g, const EngineResult& r, bool pipelined, Metrics& m) {
  // A device is simulated when it runs compute tasks (compute_metrics' classes); only those
  // get a sweep (the others take their twin's figures), so only their tasks are listed, by
  // slot: a collective of a symmetric run spans mostly others.
  const SimulatedSlots slots(m);
  const std::size_t k = slots.size();
  std::vector<double> pass_end(k, 0.0);  // by slot
  // Each simulated device's tasks in id order (CSR by slot: first[i], first[i + 1]), so that
  // one device's events at a time are held: all of them at once took 32 bytes per task and
  // device.
  std::vector<std::size_t> first(k + 1, 0);
  // Per group, its simulated members' slots in group order, listed when a collective first
  // needs them: a data-parallel group of a symmetric run has a thousand members and one
  // simulated.
  std::map<std::uint32_t, std::vector<std::uint32_t>> simulated_members;
  const auto members = [&](std::uint32_t group) -> const std::vector<std::uint32_t>& {
    auto [it, fresh] = simulated_members.try_emplace(group);
    if (fresh)
      for (std::uint32_t d : g.groups()[group])
        if (slots.simulated(d)) it->second.push_back(slots.slot(d));
    return it->second;
  };
  const auto each_device = [&](const Task& t, auto&& f) {  // f(slot) of each simulated device
    const auto one = [&](std::uint32_t d) {
      if (slots.simulated(d)) f(slots.slot(d));
    };
    switch (t.kind) {
      case TaskKind::compute:
        one(t.device);
        break;
      case TaskKind::send:
        // An offload transfer's memory endpoint (>= devices) has no time breakdown.
        if (!g.is_memory(t.device)) one(t.device);
        if (t.peer != t.device && !g.is_memory(t.peer)) one(t.peer);
        break;
      case TaskKind::collective:
        for (std::uint32_t i : members(t.group)) f(i);
        break;
    }
  };
  for (TaskId id = 0; id < g.size(); ++id) {
    const Task t = g[id];
    switch (t.kind) {
      case TaskKind::compute: {
        auto& dm = m.devices.own(t.device);
        dm.flops += t.flops;
        dm.model_flops += t.model_flops;
        dm.dynamic_energy += t.energy;
        if (t.phase != Phase::optimizer) {
          double& end = pass_end[slots.slot(t.device)];
          end = std::max(end, r.end[id]);
        }
        break;
      }
      case TaskKind::send:
        m.comm_bytes[static_cast<std::size_t>(t.comm)] += t.bytes;
        break;
      case TaskKind::collective:
        m.comm_bytes[static_cast<std::size_t>(t.comm)] += t.bytes * static_cast<double>(g.groups()[t.group].size());
        break;
    }
    each_device(t, [&](std::uint32_t i) { ++first[i + 1]; });
  }
  for (std::size_t i = 0; i < k; ++i) first[i + 1] += first[i];
  std::vector<TaskId> tasks(first[k]);
  {
    std::vector<std::size_t> next(first.begin(), first.end() - 1);
    for (TaskId id = 0; id < g.size(); ++id) each_device(g[id], [&](std::uint32_t i) { tasks[next[i]++] = id; });
  }
  for (const auto& mr : g.mirrors()) {
    const Task t = g[mr.task];
    m.comm_bytes[static_cast<std::size_t>(t.comm)] += t.bytes * g.mirror_sets()[mr.set].copies;
  }
  // The pipeline's span ends with the last forward/backward pass of any device: a stage
  // waiting before it is in the bubble (the closed forms count the drain), after it idle.
  const double span = pipelined && !pass_end.empty() ? *std::max_element(pass_end.begin(), pass_end.end()) : 0.0;
  std::vector<Event> ev;
  for (std::size_t i = 0; i < k; ++i) {
    ev.clear();
    for (std::size_t j = first[i]; j < first[i + 1]; ++j) {
      const TaskId id = tasks[j];
      const Task t = g[id];
      add_interval(ev, r.start[id], r.end[id], t.kind == TaskKind::compute ? -1 : static_cast<int>(t.comm));
    }
    sweep(m.devices.own(slots.devices()[i]), ev, span, m.step_time.value());
  }
}

}  // namespace hcsim::report_detail
