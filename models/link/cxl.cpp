#include "models/link/cxl.hpp"

namespace hcsim {

const ParamTable& cxl_link_params() {
  static const ParamTable table = {
      {.name = "bandwidth", .kind = ParamKind::quantity, .dim = Dim::bandwidth, .min = 0, .min_exclusive = true,
       .help = "PCIe PHY bandwidth per direction (e.g. Gen5 x16: 64 GB/s)"},
      {.name = "load_latency", .kind = ParamKind::quantity, .dim = Dim::time, .min = 0,
       .help = "latency a load adds over local DRAM, directly attached"},
      {.name = "switch_hops", .kind = ParamKind::integer, .def = 0, .min = 0, .max = 16,
       .help = "CXL switches crossed and folded into this link"},
      {.name = "switch_hop_latency", .kind = ParamKind::quantity, .dim = Dim::time, .def = 0.0, .min = 0,
       .help = "latency added by one CXL switch traversal"},
      {.name = "efficiency", .kind = ParamKind::quantity, .dim = Dim::ratio, .def = 1.0, .min = 0, .max = 1,
       .min_exclusive = true, .help = "achievable fraction of bandwidth (flit and protocol overhead)"},
      {.name = "energy_per_byte", .kind = ParamKind::quantity, .dim = Dim::energy_per_byte, .def = 0.0, .min = 0,
       .help = "dynamic energy per byte moved (\"5 pJ/bit\" accepted; a plain number is J/B)"},
      {.name = "static_power", .kind = ParamKind::quantity, .dim = Dim::power, .def = 0.0, .min = 0,
       .help = "always-on power of the link"},
  };
  return table;
}

CxlLink::CxlLink(const Params& p) {
  switch_hop_latency_ = p.get<Seconds>("switch_hop_latency");
  spec_.technology = "cxl";
  spec_.bandwidth = p.get<BytesPerSecond>("bandwidth");
  spec_.latency = p.get<Seconds>("load_latency") + switch_hop_latency_ * static_cast<double>(p.integer("switch_hops"));
  spec_.efficiency = p.number("efficiency");
  spec_.energy_per_byte = p.get<JoulesPerByte>("energy_per_byte");
  spec_.static_power = p.get<Watts>("static_power");
}

void register_cxl_link(Registry<LinkModel>& r) {
  r.add({"cxl", "CXL.mem over the PCIe PHY: latency = load latency + hops x switch latency",
         cxl_link_params(), [](const Params& p) { return std::make_unique<CxlLink>(p); },
         "CXL 2.0/3.0 specifications (PCIe 5.0/6.0 PHY); Pond, Li et al., ASPLOS 2023"});
}

}  // namespace hcsim
