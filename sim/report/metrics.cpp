#include "metrics.hpp"

#include <algorithm>

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

std::vector<int> default_twins(const Metrics& m) {
  std::vector<int> first;  // first simulated device per stage
  for (const auto& dm : m.devices) {
    const auto s = static_cast<std::size_t>(dm.stage);
    if (first.size() <= s) first.resize(s + 1, -1);
    if (dm.simulated && first[s] < 0) first[s] = static_cast<int>(dm.device);
  }
  std::vector<int> twin(m.devices.size(), -1);
  for (std::size_t d = 0; d < m.devices.size(); ++d)
    twin[d] = m.devices[d].simulated ? static_cast<int>(d) : first[static_cast<std::size_t>(m.devices[d].stage)];
  return twin;
}

void apply_twins(Metrics& m, const std::vector<int>& twin) {
  HCSIM_ASSERT(twin.size() == m.devices.size(), "one twin per device");
  for (std::size_t d = 0; d < m.devices.size(); ++d) {
    auto& dm = m.devices[d];
    if (dm.simulated) {
      dm.twin = static_cast<int>(d);
      continue;
    }
    dm.twin = twin[d];
    if (twin[d] < 0) continue;
    const auto& tw = m.devices[static_cast<std::size_t>(twin[d])];
    HCSIM_ASSERT(tw.simulated, "a twin must be a simulated device");
    dm.compute = tw.compute;
    dm.exposed_comm = tw.exposed_comm;
    dm.bubble = tw.bubble;
    dm.idle = tw.idle;
    dm.flops = tw.flops;
    dm.model_flops = tw.model_flops;
    dm.dynamic_energy = tw.dynamic_energy;
    dm.peak_power = tw.peak_power - tw.idle_power + dm.idle_power;
  }
}

namespace {

void init_devices(const Scenario& sc, const std::vector<StageShape>& shapes, Metrics& m) {
  const auto n = static_cast<std::size_t>(sc.device_count());
  const int per_stage = sc.strategy.grad_ranks() * sc.strategy.tp;
  m.devices.resize(n);
  // One memory breakdown per stage: every device of a stage holds the same shard.
  std::vector<MemoryBreakdown> stage_mem;
  stage_mem.reserve(shapes.size());
  for (const StageShape& shape : shapes) stage_mem.push_back(stage_memory(sc.model, sc.strategy, sc.workload, shape));
  for (std::size_t d = 0; d < n; ++d) {
    auto& dm = m.devices[d];
    dm.device = static_cast<std::uint32_t>(d);
    dm.stage = static_cast<int>(d) / per_stage;
    dm.pool = sc.stage_pool[static_cast<std::size_t>(dm.stage)];
    const auto& dev = *sc.pools[static_cast<std::size_t>(dm.pool)].device;
    dm.memory = stage_mem[static_cast<std::size_t>(dm.stage)];
    dm.capacity = dev.memory_capacity();
    dm.tiers[static_cast<std::size_t>(MemoryTier::hbm)] = {dm.memory.total(), dm.capacity};
    dm.tiers[static_cast<std::size_t>(MemoryTier::cxl_pool)].used = dm.memory.offloaded;
    if (dm.memory.total() > dm.capacity) m.memory_fits = false;
    dm.idle_power = dev.idle_power();
    dm.static_energy = dev.idle_power() * m.step_time;
  }
  // Memory pools of the topology (CXL): capacity shared by the cluster, holding the
  // optimizer state offloaded to it (strategy.offload = "pool").
  auto& cxl = m.tiers[static_cast<std::size_t>(MemoryTier::cxl_pool)];
  for (const auto& node : sc.topology.nodes())
    if (node.kind == TopoNode::Kind::memory) cxl.capacity += node.memory_capacity;
  Bytes offloaded{};
  for (const auto& dm : m.devices) offloaded += dm.memory.offloaded;
  if (offloaded > cxl.capacity) m.memory_fits = false;
}

void stage_metrics(const Scenario& sc, Metrics& m) {
  m.stages.resize(static_cast<std::size_t>(sc.strategy.pp));
  for (int s = 0; s < sc.strategy.pp; ++s) {
    auto& st = m.stages[static_cast<std::size_t>(s)];
    st.stage = s;
    st.pool = sc.stage_pool[static_cast<std::size_t>(s)];
    st.layers = sc.layers_per_stage[static_cast<std::size_t>(s)];
  }
  for (const auto& dm : m.devices) {
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
  for (const auto& dm : m.devices) {
    m.model_flops += dm.model_flops;
    m.hardware_flops += dm.flops;
    if (dm.simulated) ++m.simulated_devices;
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

// Twins, stages, throughput, energy and power, from the per-device figures.
void finish(const Scenario& sc, const TaskGraph& g, const EngineResult& r, const MetricsOptions& opt, Metrics& m) {
  apply_twins(m, opt.twin.empty() ? default_twins(m) : opt.twin);
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
  init_devices(sc, shapes, m);
  report_detail::time_breakdown(g, r, sc.strategy.pp > 1, m);
  if (opt.power_curve) {
    const auto power = report_detail::device_power_series(g, r, m);
    for (std::size_t d = 0; d < m.devices.size(); ++d)
      if (m.devices[d].simulated) m.devices[d].peak_power = Watts(power[d].max());
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
  // The partial figures' vector becomes the result's (a million devices: one vector, not two);
  // each entry keeps only the figures taken from the partial ones.
  m.devices = std::move(partial.devices);
  for (DeviceMetrics& dm : m.devices) {
    const DeviceMetrics p = dm;
    dm = DeviceMetrics{};
    dm.simulated = p.simulated;
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
  for (DeviceMetrics& dm : m.devices)
    dm.peak_power = dm.idle_power + (m.step_time > Seconds{} ? dm.dynamic_energy / m.step_time : Watts{});
  finish(sc, TaskGraph{}, EngineResult{}, opt, m);
  return m;
}

}  // namespace hcsim
