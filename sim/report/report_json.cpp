// The JSON report (format hcsim-report/2; schema docs/report.schema.json).
#include <algorithm>

#include "hcsim/version.hpp"
#include "report.hpp"

namespace hcsim {
namespace {

using nlohmann::json;

json memory_json(const MemoryBreakdown& m, double capacity) {
  return {{"weights_bytes", m.weights.value()},     {"gradients_bytes", m.gradients.value()},
          {"optimizer_bytes", m.optimizer.value()}, {"activations_bytes", m.activations.value()},
          {"buffers_bytes", m.buffers.value()},     {"peak_bytes", m.total().value()},
          {"capacity_bytes", capacity},             {"headroom_bytes", capacity - m.total().value()},
          {"fits", m.total().value() <= capacity}};
}

json tiers_json(const std::array<TierUsage, kMemoryTiers>& tiers) {
  json j = json::object();
  for (std::size_t t = 0; t < kMemoryTiers; ++t)
    j[std::string(memory_tier_name(static_cast<MemoryTier>(t)))] = {{"used_bytes", tiers[t].used.value()},
                                                                     {"capacity_bytes", tiers[t].capacity.value()}};
  return j;
}

template <class Q>
json by_class(const std::array<Q, kCommClasses>& v) {
  json j = json::object();
  for (std::size_t c = 1; c < kCommClasses; ++c) j[std::string(comm_class_name(static_cast<CommClass>(c)))] = v[c].value();
  return j;
}

json breakdown_json(Seconds compute, const std::array<Seconds, kCommClasses>& comm, Seconds bubble, Seconds idle) {
  return {{"compute_s", compute.value()}, {"exposed_comm_s", by_class(comm)}, {"bubble_s", bubble.value()},
          {"idle_s", idle.value()}};
}

json run_json(const Scenario& sc, const Metrics& m) {
  json pools = json::array();
  for (const auto& p : sc.pools)
    pools.push_back({{"name", p.name}, {"type", p.type}, {"preset", p.preset}, {"count", p.count},
                     {"first_device", p.first_device}, {"attach_to", p.attach_to}});
  const auto& st = sc.strategy;
  json strategy = {{"dp", st.dp},
                   {"tp", st.tp},
                   {"pp", st.pp},
                   {"cp", st.cp},
                   {"ep", st.ep},
                   {"schedule", st.schedule},
                   {"interleave", st.interleave},
                   {"micro_batch", sc.workload.micro_batch},
                   {"global_batch", sc.workload.global_batch},
                   {"micro_batches", sc.workload.micro_batches(st.dp)}};
  if (st.etp > 1) strategy["etp"] = st.etp;  // expert tensor parallelism, when used
  return {{"format", kReportFormat},
          {"hcsim_version", kVersion},
          {"scenario", sc.name},
          {"mode", sc.simulation.mode},
          {"devices", sc.device_count()},
          {"simulated_devices", m.simulated_devices},
          {"pools", pools},
          {"strategy", strategy}};
}

json energy_json(const Scenario& sc, const Metrics& m) {
  return {{"device_dynamic_j", m.device_dynamic.value()},
          {"device_static_j", m.device_static.value()},
          {"network_dynamic_j", m.network_dynamic.value()},
          {"network_static_j", m.network_static.value()},
          {"accelerator_j", m.accelerator_energy.value()},
          {"host_j", m.host_energy.value()},
          {"it_j", m.it_energy.value()},
          {"pue", sc.pue},
          {"facility_j", m.facility_energy.value()},
          {"per_token_j", m.energy_per_token.value()},
          {"facility_per_token_j", m.tokens_per_step > 0 ? m.facility_energy.value() / m.tokens_per_step : 0.0},
          {"train_facility_j", m.tokens_per_step > 0 ? m.facility_energy.value() / m.tokens_per_step * m.train_tokens : 0.0},
          {"average_power_w", m.average_power.value()},
          {"peak_power_w", m.peak_power.value()},
          {"facility_average_power_w", m.average_power.value() * sc.pue}};
}

json memory_summary(const Metrics& m) {
  const DeviceMetrics* worst = nullptr;
  for (const auto& d : m.devices)
    if (!worst || d.headroom() < worst->headroom()) worst = &d;
  json j = {{"fits", m.memory_fits}, {"tiers", tiers_json(m.tiers)}};
  if (worst) {
    j["worst_device"] = worst->device;
    j["worst_stage"] = worst->stage;
    j["peak_bytes"] = worst->memory.total().value();
    j["capacity_bytes"] = worst->capacity.value();
    j["headroom_bytes"] = worst->headroom().value();
  }
  return j;
}

json mean_breakdown(const Metrics& m) {
  Seconds c{}, b{}, i{};
  std::array<Seconds, kCommClasses> x{};
  for (const auto& d : m.devices) {
    c += d.compute;
    b += d.bubble;
    i += d.idle;
    for (std::size_t k = 0; k < kCommClasses; ++k) x[k] += d.exposed_comm[k];
  }
  const double n = std::max<double>(1.0, static_cast<double>(m.devices.size()));
  for (Seconds& v : x) v /= n;
  return breakdown_json(c / n, x, b / n, i / n);
}

json stages_json(const Scenario& sc, const Metrics& m) {
  json out = json::array();
  for (const auto& s : m.stages) {
    json j = breakdown_json(s.compute, s.exposed_comm, s.bubble, s.idle);
    j["stage"] = s.stage;
    j["pool"] = sc.pools[static_cast<std::size_t>(s.pool)].name;
    j["devices"] = s.devices;
    j["layers"] = s.layers;
    j["bubble_fraction"] = s.bubble_fraction;
    j["memory"] = memory_json(s.memory, s.capacity.value());
    j["energy_j"] = s.energy.value();
    out.push_back(std::move(j));
  }
  return out;
}

json devices_json(const Scenario& sc, const Metrics& m) {
  json out = json::array();
  for (const auto& d : m.devices) {
    json j = breakdown_json(d.compute, d.exposed_comm, d.bubble, d.idle);
    j["device"] = d.device;
    j["pool"] = sc.pools[static_cast<std::size_t>(d.pool)].name;
    j["stage"] = d.stage;
    j["simulated"] = d.simulated;
    j["twin"] = d.twin;
    j["flops"] = d.flops.value();
    j["model_flops"] = d.model_flops.value();
    j["memory"] = memory_json(d.memory, d.capacity.value());
    j["memory"]["tiers"] = tiers_json(d.tiers);
    j["energy_j"] = {{"dynamic", d.dynamic_energy.value()}, {"static", d.static_energy.value()}, {"total", d.energy().value()}};
    j["idle_power_w"] = d.idle_power.value();
    j["peak_power_w"] = d.peak_power.value();
    out.push_back(std::move(j));
  }
  return out;
}

json links_json(const Metrics& m) {
  json links = json::array();
  for (const auto& l : m.links)
    links.push_back({{"class", l.link_class}, {"links", l.links}, {"bytes", l.bytes.value()},
                     {"dynamic_energy_j", l.dynamic_energy.value()}, {"static_energy_j", l.static_energy.value()},
                     {"utilisation", l.utilisation}, {"max_utilisation", l.max_utilisation}});
  return links;
}

}  // namespace

nlohmann::json report_json(const Scenario& sc, const RunOutput& run, bool per_device) {
  const Metrics& m = run.metrics;
  json j = run_json(sc, m);
  if (json moe = moe_json(sc, run); !moe.is_null()) j["strategy"]["moe"] = std::move(moe);
  j["step_time_s"] = m.step_time.value();
  j["bubble_fraction"] = m.bubble_fraction;
  j["stage_bubble_fraction"] = m.stage_bubble_fraction;
  j["tokens_per_step"] = m.tokens_per_step;
  j["samples_per_step"] = m.samples_per_step;
  j["tokens_per_s"] = m.tokens_per_s;
  j["samples_per_s"] = m.samples_per_s;
  j["train_tokens"] = m.train_tokens;
  j["time_to_train_s"] = m.time_to_train.value();
  j["model_flops"] = m.model_flops.value();
  j["hardware_flops"] = m.hardware_flops.value();
  j["peak_flops_per_s"] = m.peak_flops_rate.value();
  j["mfu"] = m.mfu;
  j["hfu"] = m.hfu;
  j["breakdown"] = mean_breakdown(m);
  j["comm_bytes"] = by_class(m.comm_bytes);
  j["memory_fits"] = m.memory_fits;
  j["memory"] = memory_summary(m);
  j["energy"] = energy_json(sc, m);
  std::vector<double> power;
  for (Watts w : m.power) power.push_back(w.value());
  j["power"] = {{"interval_s", m.power_interval.value()}, {"it_w", power}};
  j["links"] = links_json(m);
  j["stages"] = stages_json(sc, m);
  if (per_device) j["per_device"] = devices_json(sc, m);
  if (run.uncompressed) j["compression"] = compression_json(sc, run);
  if (const json o = ocs_json(sc, run); !o.is_null()) j["ocs"] = o;
  j["simulation"] = {{"tasks", m.tasks}, {"activities", m.activities}};
  return j;
}

}  // namespace hcsim
