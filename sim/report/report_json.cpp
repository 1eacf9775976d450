#include <cmath>

#include "hcsim/version.hpp"
#include "report.hpp"

namespace hcsim {
namespace {

nlohmann::json memory_json(const MemoryBreakdown& m, double capacity) {
  return {{"weights_bytes", m.weights.value()},     {"gradients_bytes", m.gradients.value()},
          {"optimizer_bytes", m.optimizer.value()}, {"activations_bytes", m.activations.value()},
          {"buffers_bytes", m.buffers.value()},     {"peak_bytes", m.total().value()},
          {"capacity_bytes", capacity},             {"headroom_bytes", capacity - m.total().value()},
          {"fits", m.total().value() <= capacity}};
}

nlohmann::json by_class(const std::array<double, kCommClasses>& v) {
  nlohmann::json j = nlohmann::json::object();
  for (std::size_t c = 1; c < kCommClasses; ++c) j[std::string(comm_class_name(static_cast<CommClass>(c)))] = v[c];
  return j;
}

}  // namespace

nlohmann::json report_json(const Scenario& sc, const RunOutput& run) {
  const Metrics& m = run.metrics;
  nlohmann::json j;
  j["format"] = kReportFormat;
  j["hcsim_version"] = kVersion;
  j["scenario"] = sc.name;
  j["mode"] = sc.simulation.mode;
  j["devices"] = sc.device_count();
  j["step_time_s"] = m.step_time_s;
  j["bubble_fraction"] = m.bubble_fraction;
  j["stage_bubble_fraction"] = m.stage_bubble_fraction;
  j["tokens_per_s"] = m.tokens_per_s;
  j["samples_per_s"] = m.samples_per_s;
  j["model_flops"] = m.model_flops;
  j["hardware_flops"] = m.hardware_flops;
  j["mfu"] = m.mfu;
  j["hfu"] = m.hfu;
  j["comm_bytes"] = by_class(m.comm_bytes);
  j["memory_fits"] = m.memory_fits;
  j["energy"] = {{"device_dynamic_j", m.device_dynamic_j}, {"device_static_j", m.device_static_j},
                 {"network_dynamic_j", m.network_dynamic_j}, {"network_static_j", m.network_static_j},
                 {"it_j", m.it_energy_j}, {"facility_j", m.facility_energy_j}, {"pue", sc.pue},
                 {"per_token_j", m.energy_per_token_j}, {"average_power_w", m.average_power_w}};
  nlohmann::json links = nlohmann::json::array();
  for (const auto& l : m.links)
    links.push_back({{"class", l.link_class}, {"links", l.links}, {"bytes", l.bytes},
                     {"dynamic_energy_j", l.dynamic_energy_j}, {"static_energy_j", l.static_energy_j},
                     {"utilisation", l.utilisation}});
  j["links"] = links;
  nlohmann::json devs = nlohmann::json::array();
  for (const auto& d : m.devices) {
    devs.push_back({{"device", d.device},
                    {"pool", sc.pools[static_cast<std::size_t>(d.pool)].name},
                    {"stage", d.stage},
                    {"simulated", d.simulated},
                    {"busy_s", d.compute_s},
                    {"compute_s", d.compute_s},
                    {"exposed_comm_s", by_class(d.exposed_comm_s)},
                    {"bubble_s", d.bubble_s},
                    {"idle_s", d.idle_s},
                    {"flops", d.flops},
                    {"memory", memory_json(d.memory, d.capacity_bytes)},
                    {"energy_j", {{"dynamic", d.dynamic_energy_j}, {"static", d.static_energy_j}}}});
  }
  j["per_device"] = devs;
  j["simulation"] = {{"tasks", m.tasks}, {"activities", m.activities}};
  return j;
}

}  // namespace hcsim
