#pragma once
// The link family: electrical (NVLink, PCIe, InfiniBand, Ethernet), photonic and CXL
// links reduce to one LinkSpec -- per-direction bandwidth, latency, achievable efficiency,
// energy per byte and static power -- which topologies place on their edges and the
// engine turns into SimGrid links. A topology asks this registry for its links, so any
// shape can be built with any technology (style principle 7).

#include <memory>
#include <string>
#include <string_view>

#include "sim/core/registry.hpp"
#include "sim/core/units.hpp"

namespace hcsim {

struct LinkSpec {
  std::string technology;          // registered type, e.g. "electrical", "photonic", "cxl"
  std::string name;                // preset or user label, e.g. "nvlink3"
  BytesPerSecond bandwidth{};      // per direction, at the wire
  Seconds latency{};               // one traversal, including time of flight
  double efficiency = 1.0;         // achievable fraction of `bandwidth` for large transfers
  JoulesPerByte energy_per_byte{}; // dynamic energy of moving a byte across the link
  Watts static_power{};            // always-on power per link (lasers, SerDes idle)

  [[nodiscard]] BytesPerSecond effective_bandwidth() const { return bandwidth * efficiency; }
};

class LinkModel {
 public:
  virtual ~LinkModel() = default;
  [[nodiscard]] virtual std::string_view type() const = 0;
  [[nodiscard]] virtual LinkSpec spec() const = 0;
};

Registry<LinkModel>& link_models();
PresetLibrary& link_presets();
void register_builtin_links();

// Resolves a link description: {"preset": "nvlink3", ...overrides} or
// {"type": "photonic", ...params}. Problems go to `diag` under `path`. With `resolved`, the
// description with every parameter stated (defaults filled, SI) is stored there: it
// resolves to the same link.
LinkSpec resolve_link(const nlohmann::json& desc, const std::string& path, Diagnostics& diag,
                      nlohmann::json* resolved = nullptr);

}  // namespace hcsim
