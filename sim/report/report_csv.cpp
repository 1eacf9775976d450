// Per-rank CSV (RFC 4180): one row per device, SI units, shortest round-trip numbers.
#include <fmt/format.h>

#include "report.hpp"

namespace hcsim {
namespace {

std::string field(const std::string& s) {
  if (s.find_first_of(",\"\n\r") == std::string::npos) return s;
  std::string out = "\"";
  for (char c : s) out += c == '"' ? std::string("\"\"") : std::string(1, c);
  return out + "\"";
}

std::string csv_header() {
  std::string h = "device,pool,stage,simulated,twin,step_s,compute_s";
  for (std::size_t c = 1; c < kCommClasses; ++c)
    h += fmt::format(",exposed_{}_s", comm_class_name(static_cast<CommClass>(c)));
  h += ",bubble_s,idle_s,flops,model_flops,weights_bytes,gradients_bytes,optimizer_bytes,activations_bytes,"
       "buffers_bytes,peak_bytes,capacity_bytes,headroom_bytes,host_dram_bytes,cxl_pool_bytes,dynamic_energy_j,"
       "static_energy_j,energy_j,idle_power_w,peak_power_w\n";
  return h;
}

}  // namespace

std::string report_csv(const Scenario& sc, const RunOutput& run) {
  const Metrics& m = run.metrics;
  std::string out = csv_header();
  for (const auto& d : m.devices) {
    out += fmt::format("{},{},{},{},{},{},{}", d.device, field(sc.pools[static_cast<std::size_t>(d.pool)].name),
                       d.stage, d.simulated ? 1 : 0, d.twin, m.step_time.value(), d.compute.value());
    for (std::size_t c = 1; c < kCommClasses; ++c) out += fmt::format(",{}", d.exposed_comm[c].value());
    const MemoryBreakdown& mb = d.memory;
    out += fmt::format(",{},{},{},{},{},{},{},{},{},{},{},{}", d.bubble.value(), d.idle.value(), d.flops.value(), d.model_flops.value(),
                       mb.weights.value(), mb.gradients.value(), mb.optimizer.value(), mb.activations.value(),
                       mb.buffers.value(), mb.total().value(), d.capacity.value(), d.headroom().value());
    out += fmt::format(",{},{},{},{},{},{},{}\n",
                       d.tiers[static_cast<std::size_t>(MemoryTier::host_dram)].used.value(),
                       d.tiers[static_cast<std::size_t>(MemoryTier::cxl_pool)].used.value(), d.dynamic_energy.value(),
                       d.static_energy.value(), d.energy().value(), d.idle_power.value(), d.peak_power.value());
  }
  return out;
}

}  // namespace hcsim
