#include "metrics.hpp"

#include <algorithm>
#include <limits>

#include "sim/report/metrics_parts.hpp"

namespace hcsim {

std::string_view memory_tier_name(MemoryTier t) {
  switch (t) {
    case MemoryTier::hbm: return "hbm";
    case MemoryTier::host_dram: return "host_dram";
    case MemoryTier::cxl_pool: return "cxl_pool";
  }
  return "?";
}

Seconds DeviceMetrics::exposed_comm_total() const {
  Seconds s{};
  for (Seconds x : exposed_comm) s += x;
  return s;
}

Seconds DeviceMetrics::accounted() const { return compute + exposed_comm_total() + bubble + idle; }

void DeviceTable::push_back(DeviceMetrics dm) {
  dm.device = static_cast<std::uint32_t>(size());
  class_of_.push_back(static_cast<std::uint32_t>(classes_.size()));
  classes_.push_back({dm, false});
}

void DeviceTable::assign(std::vector<DeviceMetrics> figures, std::vector<std::uint32_t> class_of) {
  classes_.clear();
  classes_.reserve(figures.size());
  for (DeviceMetrics& f : figures) {
    HCSIM_ASSERT(f.device < class_of.size() && class_of[f.device] == classes_.size(),
                 "a class's first device is its member");
    classes_.push_back({f, false});
  }
  class_of_ = std::move(class_of);
}

void DeviceTable::append_class(DeviceMetrics dm, std::size_t count) {
  if (count == 0) return;
  dm.device = static_cast<std::uint32_t>(size());
  dm.simulated = true;
  dm.twin = static_cast<int>(dm.device);
  class_of_.insert(class_of_.end(), count, static_cast<std::uint32_t>(classes_.size()));
  classes_.push_back({dm, true});
}

DeviceMetrics DeviceTable::operator[](std::size_t d) const {
  const Class& c = classes_[class_of_[d]];
  DeviceMetrics v = c.figures;
  if (v.device == d) return v;
  v.device = static_cast<std::uint32_t>(d);
  if (c.all_simulated) {
    v.twin = static_cast<int>(d);
    return v;
  }
  // A replica: its twin's figures, its own idle power under the twin's peak (one pool: equal).
  v.simulated = false;
  v.twin = static_cast<int>(c.figures.device);
  v.peak_power = c.figures.peak_power - c.figures.idle_power + v.idle_power;
  return v;
}

std::size_t DeviceTable::least_headroom() const {
  std::size_t at = 0;
  for (std::size_t d = 1; d < size(); ++d)
    if (shared(d).headroom() < shared(at).headroom()) at = d;
  return at;
}

bool DeviceTable::simulated(std::size_t d) const {
  const Class& c = classes_[class_of_[d]];
  return c.all_simulated || (c.figures.device == d && c.figures.simulated);
}

int DeviceTable::twin(std::size_t d) const {
  const Class& c = classes_[class_of_[d]];
  if (c.all_simulated) return static_cast<int>(d);
  return c.figures.device == d ? c.figures.twin : static_cast<int>(c.figures.device);
}

DeviceMetrics& DeviceTable::own(std::size_t d) {
  Class& c = classes_[class_of_[d]];
  HCSIM_ASSERT(c.figures.device == d && !c.all_simulated, "a device's own figures are its class's");
  return c.figures;
}

namespace {

// Each class's memory, capacity and idle power: those of its stage and pool (a class's devices
// are of one stage and pool).
void init_devices(const Scenario& sc, const std::vector<StageShape>& shapes, Metrics& m) {
  const auto n = static_cast<std::size_t>(sc.device_count());
  const int per_stage = sc.strategy.grad_ranks() * sc.strategy.tp;
  HCSIM_ASSERT(m.devices.size() == n, "one figure per device");
  // One memory breakdown per stage: every device of a stage holds the same shard.
  std::vector<MemoryBreakdown> stage_mem;
  stage_mem.reserve(shapes.size());
  for (const StageShape& shape : shapes) stage_mem.push_back(stage_memory(sc.model, sc.strategy, sc.workload, shape));
  for (std::size_t c = 0; c < m.devices.classes(); ++c) {
    auto& dm = m.devices.figures(c);
    dm.stage = static_cast<int>(dm.device) / per_stage;
    dm.pool = sc.stage_pool[static_cast<std::size_t>(dm.stage)];
    const auto& dev = *sc.pools[static_cast<std::size_t>(dm.pool)].device;
    dm.memory = stage_mem[static_cast<std::size_t>(dm.stage)];
    dm.capacity = dev.memory_capacity();
    dm.tiers = {};
    dm.tiers[static_cast<std::size_t>(MemoryTier::hbm)] = {dm.memory.total(), dm.capacity};
    dm.tiers[static_cast<std::size_t>(MemoryTier::cxl_pool)].used = dm.memory.offloaded;
    if (dm.memory.total() > dm.capacity) m.memory_fits = false;
    dm.idle_power = dev.idle_power();
    dm.static_energy = dev.idle_power() * m.step_time;
  }
  // Memory pools of the topology (CXL): capacity shared by the cluster, holding the
  // optimizer state offloaded to it (strategy.offload = "pool").
  auto& cxl = m.tiers[static_cast<std::size_t>(MemoryTier::cxl_pool)];
  for (std::size_t n = 0; n < sc.topology.nodes().size(); ++n)
    if (sc.topology.nodes()[n].kind == TopoNode::Kind::memory)
      cxl.capacity += sc.topology.media(static_cast<int>(n)).capacity;
  Bytes offloaded{};
  for (std::size_t d = 0; d < n; ++d) offloaded += m.devices.shared(d).memory.offloaded;
  if (offloaded > cxl.capacity) m.memory_fits = false;
}

// The devices of an engine run in classes: each device that ran a compute task (simulated)
// in a class of its own, every other one a replica in its twin's class (`custom`, or the
// first simulated device of its stage), or alone where it has none.
DeviceTable twin_classes(const Scenario& sc, const TaskGraph& g, const std::vector<int>& custom) {
  const auto n = static_cast<std::size_t>(sc.device_count());
  const auto per_stage = static_cast<std::size_t>(sc.strategy.grad_ranks() * sc.strategy.tp);
  std::vector<char> ran(n, 0);
  for (const Task& t : g.tasks())
    if (t.kind == TaskKind::compute && t.device < n) ran[t.device] = 1;
  std::vector<int> first(static_cast<std::size_t>(sc.strategy.pp), -1);  // first simulated device per stage
  for (std::size_t d = n; d-- > 0;)
    if (ran[d]) first[d / per_stage] = static_cast<int>(d);
  HCSIM_ASSERT(custom.empty() || custom.size() == n, "one twin per device");
  const auto twin_of = [&](std::size_t d) { return custom.empty() ? first[d / per_stage] : custom[d]; };
  constexpr auto kNone = std::numeric_limits<std::uint32_t>::max();
  std::vector<std::uint32_t> class_of(n, kNone);
  std::vector<DeviceMetrics> figures;
  for (std::size_t d = 0; d < n; ++d) {
    if (!ran[d] && twin_of(d) >= 0) continue;
    class_of[d] = static_cast<std::uint32_t>(figures.size());
    DeviceMetrics f;
    f.device = static_cast<std::uint32_t>(d);
    f.simulated = ran[d] != 0;
    f.twin = ran[d] ? static_cast<int>(d) : -1;
    figures.push_back(f);
  }
  for (std::size_t d = 0; d < n; ++d) {
    if (class_of[d] != kNone) continue;
    const auto t = static_cast<std::size_t>(twin_of(d));
    HCSIM_ASSERT(ran[t] && t / per_stage == d / per_stage, "a twin is a simulated device of its replica's stage");
    class_of[d] = class_of[t];
  }
  DeviceTable table;
  table.assign(std::move(figures), std::move(class_of));
  return table;
}

void stage_metrics(const Scenario& sc, Metrics& m) {
  m.stages.resize(static_cast<std::size_t>(sc.strategy.pp));
  for (int s = 0; s < sc.strategy.pp; ++s) {
    auto& st = m.stages[static_cast<std::size_t>(s)];
    st.stage = s;
    st.pool = sc.stage_pool[static_cast<std::size_t>(s)];
    st.layers = sc.layers_per_stage[static_cast<std::size_t>(s)];
  }
  for (std::size_t d = 0; d < m.devices.size(); ++d) {
    const DeviceMetrics& dm = m.devices.shared(d);
    auto& st = m.stages[static_cast<std::size_t>(dm.stage)];
    ++st.devices;
    st.compute += dm.compute;
    for (std::size_t c = 0; c < kCommClasses; ++c) st.exposed_comm[c] += dm.exposed_comm[c];
    st.bubble += dm.bubble;
    st.idle += dm.idle;
    st.energy += dm.energy();
    if (dm.memory.total() >= st.memory.total()) {
      st.memory = dm.memory;
      st.capacity = dm.capacity;
    }
  }
  Seconds bubble{};
  for (auto& st : m.stages) {
    bubble += st.bubble;
    if (st.devices == 0) continue;
    const double k = st.devices;
    st.compute /= k;
    for (Seconds& x : st.exposed_comm) x /= k;
    st.idle /= k;
    st.bubble /= k;
    st.bubble_fraction = m.step_time > Seconds{} ? st.bubble / m.step_time : 0;
    m.stage_bubble_fraction.push_back(st.bubble_fraction);
  }
  const double n = static_cast<double>(m.devices.size());
  m.bubble_fraction = m.step_time > Seconds{} && n > 0 ? bubble / n / m.step_time : 0;
}

void throughput(const Scenario& sc, double train_tokens, Metrics& m) {
  const Seconds step = m.step_time;
  for (std::size_t d = 0; d < m.devices.size(); ++d) {
    const DeviceMetrics& dm = m.devices.shared(d);
    m.model_flops += dm.model_flops;
    m.hardware_flops += dm.flops;
    if (m.devices.simulated(d)) ++m.simulated_devices;
    for (std::size_t t = 0; t < kMemoryTiers; ++t) {
      m.tiers[t].used += dm.tiers[t].used;
      m.tiers[t].capacity += dm.tiers[t].capacity;
    }
  }
  for (const auto& p : sc.pools)
    if (p.attach_to.empty()) m.peak_flops_rate += p.count * p.device->peak(sc.workload.precision);
  if (step > Seconds{} && m.peak_flops_rate > FlopsPerSecond{}) {
    m.mfu = m.model_flops / (step * m.peak_flops_rate);
    m.hfu = m.hardware_flops / (step * m.peak_flops_rate);
  }
  m.samples_per_step = static_cast<double>(sc.workload.global_batch);
  m.tokens_per_step = m.samples_per_step * static_cast<double>(sc.model.seq_len);
  m.train_tokens = train_tokens;
  if (step > Seconds{}) {
    m.tokens_per_s = m.tokens_per_step / step.value();
    m.samples_per_s = m.samples_per_step / step.value();
    m.time_to_train = Seconds(train_tokens / m.tokens_per_s);
  }
}

// Stages, throughput, energy and power, from the per-device figures.
void finish(const Scenario& sc, const TaskGraph& g, const EngineResult& r, const MetricsOptions& opt, Metrics& m) {
  stage_metrics(sc, m);
  throughput(sc, opt.train_tokens, m);
  report_detail::energy_and_power(sc, g, r, opt.power_curve ? opt.power_samples : -1, m);
}

}  // namespace

Metrics compute_metrics(const Scenario& sc, const TaskGraph& g, const EngineResult& r,
                        const std::vector<StageShape>& shapes, const MetricsOptions& opt) {
  Metrics m;
  m.step_time = Seconds(r.makespan);
  m.tasks = g.size();
  m.activities = r.activities;
  m.devices = twin_classes(sc, g, opt.twin);
  init_devices(sc, shapes, m);
  report_detail::time_breakdown(g, r, sc.strategy.pp > 1, m);
  if (opt.power_curve) {
    const auto power = report_detail::device_power_series(g, r, m);
    for (std::size_t i = 0; i < power.slots.size(); ++i)
      m.devices.own(power.slots.devices()[i]).peak_power = Watts(power.series[i].max());
  }
  finish(sc, g, r, opt, m);
  return m;
}

Metrics complete_metrics(const Scenario& sc, Metrics partial, const std::vector<StageShape>& shapes,
                         const MetricsOptions& opt) {
  Metrics m;
  m.step_time = partial.step_time;
  m.tasks = partial.tasks;
  m.activities = partial.activities;
  HCSIM_ASSERT(partial.devices.size() == static_cast<std::size_t>(sc.device_count()), "one partial figure per device");
  // The partial figures' classes become the result's; each keeps only the figures taken from
  // the partial ones.
  m.devices = std::move(partial.devices);
  for (std::size_t c = 0; c < m.devices.classes(); ++c) {
    DeviceMetrics& dm = m.devices.figures(c);
    const DeviceMetrics p = dm;
    dm = DeviceMetrics{};
    dm.device = p.device;
    dm.simulated = p.simulated;
    dm.twin = p.twin;
    dm.compute = p.compute;
    dm.exposed_comm = p.exposed_comm;
    dm.bubble = p.bubble;
    dm.idle = p.idle;
    dm.flops = p.flops;
    dm.model_flops = p.model_flops;
    dm.dynamic_energy = p.dynamic_energy;
  }
  init_devices(sc, shapes, m);  // keeps the figures above; sets memory, capacity and idle power
  // No timeline: the dynamic energy at its mean over the step.
  for (std::size_t c = 0; c < m.devices.classes(); ++c) {
    DeviceMetrics& dm = m.devices.figures(c);
    dm.peak_power = dm.idle_power + (m.step_time > Seconds{} ? dm.dynamic_energy / m.step_time : Watts{});
  }
  finish(sc, TaskGraph{}, EngineResult{}, opt, m);
  return m;
}

}  // namespace hcsim
