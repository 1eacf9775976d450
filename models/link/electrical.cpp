#include "models/link/electrical.hpp"

namespace hcsim {

const ParamTable& electrical_link_params() {
  static const ParamTable table = {
      {.name = "bandwidth", .kind = ParamKind::quantity, .dim = Dim::bandwidth, .min = 0, .min_exclusive = true,
       .help = "signalling rate per direction (NVIDIA's bidirectional totals halved)"},
      {.name = "latency", .kind = ParamKind::quantity, .dim = Dim::time, .min = 0,
       .help = "one traversal of the link, endpoint overheads included"},
      {.name = "efficiency", .kind = ParamKind::quantity, .dim = Dim::ratio, .def = 1.0, .min = 0,
       .max = 1, .min_exclusive = true, .help = "achievable fraction of bandwidth for large transfers"},
      {.name = "energy_per_byte", .kind = ParamKind::quantity, .dim = Dim::energy_per_byte, .def = 0.0, .min = 0,
       .help = "dynamic energy per byte moved (\"5 pJ/bit\" accepted; a plain number is J/B)"},
      {.name = "static_power", .kind = ParamKind::quantity, .dim = Dim::power, .def = 0.0, .min = 0,
       .help = "always-on power of the link (both ends, both directions)"},
  };
  return table;
}

ElectricalLink::ElectricalLink(const Params& p) {
  spec_.technology = "electrical";
  spec_.bandwidth = p.get<BytesPerSecond>("bandwidth");
  spec_.latency = p.get<Seconds>("latency");
  spec_.efficiency = p.number("efficiency");
  spec_.energy_per_byte = p.get<JoulesPerByte>("energy_per_byte");
  spec_.static_power = p.get<Watts>("static_power");
}

void register_electrical_link(Registry<LinkModel>& r) {
  r.add({"electrical", "SerDes link (NVLink, PCIe, InfiniBand, Ethernet): latency + bytes / (bandwidth x efficiency)",
         electrical_link_params(), [](const Params& p) { return std::make_unique<ElectricalLink>(p); },
         "Hockney alpha-beta model; Thakur, Rabenseifner & Gropp, IJHPCA 19(1), 2005"});
}

}  // namespace hcsim
