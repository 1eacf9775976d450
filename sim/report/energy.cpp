// Energy of the step and power over it.
//   E_accelerators = Σ_devices (E_dynamic + P_idle·T) + Σ_links (bytes·e_byte + P_static·lanes·T)
//   E_IT = E_accelerators + E_hosts (cluster.node_power, models/energy/node_power.hpp: the
//          servers' CPUs, DRAM, NICs, switch chips and fans at the accelerators' mean load)
//   E_facility = PUE · E_IT (The Green Grid, "PUE: a comprehensive examination of the metric", 2012)
// Power over time: each device draws its idle power, plus a compute task's dynamic energy
// spread evenly over the task; the network draws its static power all step, and its dynamic
// energy is spread over the communication tasks in proportion to their payload. The
// samples are exact means of that curve over equal intervals, so they integrate to E_IT.
#include <algorithm>
#include <cmath>
#include <map>
#include <vector>

#include "models/energy/energy_table.hpp"
#include "models/energy/node_power.hpp"
#include "sim/report/metrics_parts.hpp"

namespace hcsim::report_detail {
namespace {

void link_energy(const Scenario& sc, const EngineResult& r, Metrics& m) {
  const Seconds step = m.step_time;
  // Each edge kind's class, looked up once (a fabric has millions of edges and a handful of
  // kinds); the classes are reported in name order, each summed in edge order.
  std::map<std::string, std::size_t> slot_of;
  for (const EdgeKind& k : sc.topology.edge_kinds()) slot_of.try_emplace(k.link_class, slot_of.size());
  std::vector<std::size_t> kind_slot;
  kind_slot.reserve(sc.topology.edge_kinds().size());
  for (const EdgeKind& k : sc.topology.edge_kinds()) kind_slot.push_back(slot_of.at(k.link_class));
  std::vector<LinkClassMetrics> cls(slot_of.size());
  std::vector<Bytes> capacities(slot_of.size());  // per class: bytes its links carry at full bandwidth
  for (std::size_t e = 0; e < sc.topology.edges().size(); ++e) {
    const TopoEdge& ed = sc.topology.edges()[e];
    const std::size_t c = kind_slot[static_cast<std::size_t>(ed.kind->index)];
    auto& lc = cls[c];
    lc.links += 1;
    const Bytes bytes(e < r.edge_bytes.size() ? r.edge_bytes[e] : 0.0);
    lc.bytes += bytes;
    lc.dynamic_energy += bytes * ed.link().energy_per_byte;
    lc.static_energy += ed.link().static_power * static_cast<double>(ed.lanes()) * step;
    const Bytes capacity = 2.0 * (ed.bandwidth() * step);  // both directions
    capacities[c] += capacity;
    if (capacity > Bytes{}) lc.max_utilisation = std::max(lc.max_utilisation, bytes / capacity);
  }
  for (const auto& [name, c] : slot_of) {
    LinkClassMetrics& lc = cls[c];
    if (lc.links == 0) continue;  // a kind of a copy of the graph that none of these edges has
    lc.link_class = name;
    const Bytes capacity = capacities[c];
    lc.utilisation = capacity > Bytes{} ? lc.bytes / capacity : 0;
    m.network_dynamic += lc.dynamic_energy;
    m.network_static += lc.static_energy;
    m.links.push_back(lc);
  }
}

struct Timeline {
  std::vector<Delta> deltas;
  std::vector<Delta> impulses;  // t, joules (tasks of zero duration)
};

void spread(Timeline& tl, double a, double b, double joules) {
  if (joules == 0) return;
  if (b > a) {
    tl.deltas.push_back({a, joules / (b - a)});
    tl.deltas.push_back({b, -joules / (b - a)});
  } else {
    tl.impulses.push_back({a, joules});
  }
}

// Dynamic energy of devices (each simulated device stands for its replicas) and network.
Timeline dynamic_timeline(const TaskGraph& g, const EngineResult& r, const Metrics& m) {
  std::vector<double> weight(m.devices.size(), 0.0);
  for (std::size_t d = 0; d < m.devices.size(); ++d)
    if (const int twin = m.devices.twin(d); twin >= 0) weight[static_cast<std::size_t>(twin)] += 1.0;
  std::vector<Bytes> mirrored(g.size());  // payload of mirrors, by the task they mirror
  for (const auto& mr : g.mirrors()) mirrored[mr.task] += g[mr.task].bytes * g.mirror_sets()[mr.set].copies;
  auto payload = [&](TaskId id) {
    const Task& t = g[id];
    const Bytes p = t.kind == TaskKind::send ? t.bytes : t.bytes * static_cast<double>(g.groups()[t.group].size());
    return p + mirrored[id];
  };
  Bytes total_payload{};
  for (TaskId id = 0; id < g.size(); ++id)
    if (g[id].kind != TaskKind::compute) total_payload += payload(id);
  Timeline tl;
  for (TaskId id = 0; id < g.size(); ++id) {
    const Task& t = g[id];
    if (t.kind == TaskKind::compute) spread(tl, r.start[id], r.end[id], (t.energy * weight[t.device]).value());
    else if (total_payload > Bytes{})
      spread(tl, r.start[id], r.end[id], (m.network_dynamic * payload(id) / total_payload).value());
  }
  return tl;
}

// Mean of the curve over `n` equal intervals of [0, step].
std::vector<double> sample(const Series& s, const std::vector<Delta>& impulses, double step, int n) {
  std::vector<double> e(static_cast<std::size_t>(n), 0.0);
  const double w = step / n;
  auto bin = [&](double t) {
    return std::min<std::size_t>(e.size() - 1, static_cast<std::size_t>(std::max(0.0, t / w)));
  };
  for (std::size_t i = 0; i < s.t.size(); ++i) {
    double a = s.t[i];
    const double b = i + 1 < s.t.size() ? s.t[i + 1] : step;
    for (std::size_t k = bin(a); a < b; ++k) {
      const double end = k + 1 >= e.size() ? b : std::min(b, static_cast<double>(k + 1) * w);
      e[k] += s.v[i] * (end - a);
      a = end;
    }
  }
  for (const Delta& im : impulses) e[bin(im.t)] += im.dv;
  for (double& x : e) x /= w;
  return e;
}

}  // namespace

void energy_and_power(const Scenario& sc, const TaskGraph& g, const EngineResult& r, int samples, Metrics& m) {
  const Seconds step = m.step_time;
  Watts idle_w{}, headroom{};
  for (std::size_t d = 0; d < m.devices.size(); ++d) {
    const DeviceMetrics& dm = m.devices.shared(d);
    m.device_dynamic += dm.dynamic_energy;
    m.device_static += dm.static_energy;
    idle_w += dm.idle_power;
    headroom += sc.pools[static_cast<std::size_t>(dm.pool)].device->max_power() - dm.idle_power;
  }
  link_energy(sc, r, m);
  m.accelerator_energy = m.device_dynamic + m.device_static + m.network_dynamic + m.network_static;
  m.host_energy = sc.node_power ? host_energy(*sc.node_power, static_cast<std::int64_t>(m.devices.size()),
                                              m.device_dynamic, headroom, step)
                                : Joules{};
  m.it_energy = m.accelerator_energy + m.host_energy;
  m.facility_energy = facility_energy(m.it_energy, sc.pue);
  m.energy_per_token = m.tokens_per_step > 0 ? m.it_energy / m.tokens_per_step : Joules{};
  if (step <= Seconds{}) return;
  m.average_power = m.it_energy / step;
  if (samples < 0) return;
  // Without a timeline (analytical mode) the dynamic energy is drawn evenly over the step.
  const Watts untimed = g.size() == 0 ? (m.device_dynamic + m.network_dynamic) / step : Watts{};
  Timeline tl = dynamic_timeline(g, r, m);
  const Watts host = m.host_energy / step;  // drawn evenly: the hosts follow the step's mean load
  const Series s = step_series(std::move(tl.deltas), (idle_w + m.network_static / step + untimed + host).value());
  m.peak_power = Watts(s.max());
  if (samples <= 0) return;
  m.power_interval = step / samples;
  m.power.clear();
  for (double w : sample(s, tl.impulses, step.value(), samples)) m.power.push_back(Watts(w));
}

}  // namespace hcsim::report_detail
