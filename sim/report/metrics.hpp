#pragma once
// Metrics of one simulated training step, computed in one place from the task graph and
// the engine's task start/end times: time breakdown per device (compute + exposed
// communication by kind + pipeline bubble + idle = step time), bubble fraction, MFU/HFU
// (Korthikanti et al. 2022: model FLOPs vs hardware FLOPs against peak), throughput,
// memory per device (workloads/memory) and energy (device dynamic + idle, link bytes x
// energy per byte + static link power, facility = IT x PUE).

#include <array>
#include <string>
#include <vector>

#include "scenarios/scenario.hpp"
#include "sim/engine/engine.hpp"
#include "workloads/lowering.hpp"
#include "workloads/memory.hpp"

namespace hcsim {

inline constexpr std::size_t kCommClasses = 8;  // indexed by CommClass

struct DeviceMetrics {
  std::uint32_t device = 0;
  int stage = 0;
  int pool = 0;
  bool simulated = true;  // false: a replica of a simulated device (symmetry)
  double compute_s = 0;
  std::array<double, kCommClasses> exposed_comm_s{};
  double bubble_s = 0, idle_s = 0;
  double flops = 0, model_flops = 0;
  MemoryBreakdown memory;
  double capacity_bytes = 0;
  double dynamic_energy_j = 0, static_energy_j = 0;
  [[nodiscard]] double exposed_comm_total() const;
};

struct LinkClassMetrics {
  std::string link_class;
  int links = 0;
  double bytes = 0;            // bytes carried, summed over links traversed
  double dynamic_energy_j = 0;
  double static_energy_j = 0;
  double utilisation = 0;      // bytes / (links x 2 directions x bandwidth x step time)
};

struct Metrics {
  double step_time_s = 0;
  double bubble_fraction = 0;
  std::vector<double> stage_bubble_fraction;
  double model_flops = 0, hardware_flops = 0;
  double mfu = 0, hfu = 0;
  double tokens_per_s = 0, samples_per_s = 0;
  std::array<double, kCommClasses> comm_bytes{};  // payload per collective/send, by kind
  std::vector<DeviceMetrics> devices;
  std::vector<LinkClassMetrics> links;
  double device_dynamic_j = 0, device_static_j = 0, network_dynamic_j = 0, network_static_j = 0;
  double it_energy_j = 0, facility_energy_j = 0, energy_per_token_j = 0, average_power_w = 0;
  bool memory_fits = true;
  std::size_t tasks = 0;
  std::uint64_t activities = 0;
};

Metrics compute_metrics(const Scenario& sc, const TaskGraph& g, const EngineResult& r,
                        const std::vector<StageShape>& shapes);

}  // namespace hcsim
