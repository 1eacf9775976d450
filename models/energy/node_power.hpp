#pragma once
// Power of a server node beside its accelerators: host CPUs, DRAM, NICs, NVSwitch chips,
// fans and power-supply losses, from the system's datasheet maximum (the node's figure
// minus its accelerators' TDP) and an idle floor, linear in between with the accelerators'
// load (SPECpower-style linear server power model: Fan, Weber and Barroso, "Power
// provisioning for a warehouse-sized computer", ISCA 2007, section 4):
//   P_host = idle + (max - idle) * u,   u = accelerators' dynamic power / their (TDP - idle)
// Node energy per step = nodes * P_host * T, nodes = devices / devices_per_node (rounded
// up). Reports give it beside the accelerators' and links' energy; facility = PUE x all.
//
// Presets (cluster.node_power.preset):
//   dgx-a100  DGX A100 datasheet [P]: 6.5 kW max system power; 8 x 400 W GPUs -> host max
//             3.3 kW [D]. Idle 1.0 kW [U]: 2 x AMD EPYC 7742 (~90 W each idle), 32 DIMMs
//             (~3 W), 6 NVSwitch and 10 ConnectX-6 at idle (~0.3 kW), fans and PSU losses.
//   dgx-h100  DGX H100 datasheet [P]: ~10.2 kW max; 8 x 700 W GPUs -> host max 4.6 kW [D].
//             Idle 1.3 kW [U] (2 x Xeon 8480C, 2 TB DDR5, 4 NVSwitch, 10 ConnectX-7, fans).
//   dgx-b200  DGX B200 datasheet [P]: ~14.3 kW max; 8 x 1000 W GPUs -> host max 6.3 kW [D].
//             Idle 1.6 kW [U].
// The idle floors are estimates from component idle powers, not measurements; give
// "idle" and "max" explicitly for a measured node.

#include <optional>
#include <string>

#include <nlohmann/json.hpp>

#include "sim/core/error.hpp"
#include "sim/core/params.hpp"
#include "sim/core/units.hpp"

namespace hcsim {

struct NodePower {
  std::string preset;          // "" when given explicitly
  Watts idle{}, max{};         // the host's (everything but the accelerators)
  int devices_per_node = 8;

  // Host power at accelerator load u in [0, 1].
  [[nodiscard]] Watts at(double u) const { return idle + (max - idle) * u; }
};

// The hosts' energy over a step of length `step` for `devices` accelerators whose dynamic
// energy over the step is `dynamic` and whose summed dynamic range (TDP - idle) is
// `headroom`: nodes * P_host(u) * step, u = dynamic / (headroom * step) clipped to [0, 1].
Joules host_energy(const NodePower& n, std::int64_t devices, Joules dynamic, Watts headroom, Seconds step);

// The keys of cluster.node_power (parse_node_power, the JSON Schema).
const ParamTable& node_power_params();

// cluster.node_power: {"preset": NAME} or {"idle", "max", "devices_per_node"} (a preset's
// values may be overridden one by one); problems go to `diag` at `path`.
std::optional<NodePower> parse_node_power(const nlohmann::json& v, const std::string& path, Diagnostics& diag);

}  // namespace hcsim
