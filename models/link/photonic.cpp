#include "models/link/photonic.hpp"

namespace hcsim {

const ParamTable& photonic_link_params() {
  static const ParamTable table = {
      {.name = "lane_rate", .kind = ParamKind::quantity, .dim = Dim::bandwidth, .min = 0, .min_exclusive = true,
       .help = "data rate of one wavelength, one direction"},
      {.name = "wavelengths", .kind = ParamKind::integer, .def = 8, .min = 1, .max = 1024,
       .help = "WDM lanes per fibre"},
      {.name = "fibres", .kind = ParamKind::integer, .def = 1, .min = 1, .max = 4096,
       .help = "fibres per direction"},
      {.name = "fixed_latency", .kind = ParamKind::quantity, .dim = Dim::time, .min = 0,
       .help = "serialisation, modulation, detection and FEC at both ends"},
      {.name = "time_of_flight_per_metre", .kind = ParamKind::quantity, .dim = Dim::time, .def = "4.9 ns", .min = 0,
       .help = "propagation delay per metre of fibre (group index 1.47)"},
      {.name = "length", .kind = ParamKind::quantity, .dim = Dim::length, .def = "1 m", .min = 0,
       .help = "fibre length"},
      {.name = "energy_per_byte", .kind = ParamKind::quantity, .dim = Dim::energy_per_byte, .min = 0,
       .help = "modulation + detection energy per byte moved (\"5 pJ/bit\" accepted; a plain number is J/B)"},
      {.name = "laser_power_per_lane", .kind = ParamKind::quantity, .dim = Dim::power, .def = 0.0, .min = 0,
       .help = "always-on laser power per wavelength per direction"},
      {.name = "efficiency", .kind = ParamKind::quantity, .dim = Dim::ratio, .def = 1.0, .min = 0, .max = 1,
       .min_exclusive = true, .help = "achievable fraction of bandwidth for large transfers"},
  };
  return table;
}

PhotonicLink::PhotonicLink(const Params& p) {
  lanes_ = static_cast<int>(p.integer("wavelengths") * p.integer("fibres"));
  spec_.technology = "photonic";
  spec_.bandwidth = p.get<BytesPerSecond>("lane_rate") * static_cast<double>(lanes_);
  spec_.latency = p.get<Seconds>("fixed_latency") + p.get<Seconds>("time_of_flight_per_metre") * p.number("length");
  spec_.efficiency = p.number("efficiency");
  spec_.energy_per_byte = p.get<JoulesPerByte>("energy_per_byte");
  spec_.static_power = p.get<Watts>("laser_power_per_lane") * (2.0 * lanes_);
}

void register_photonic_link(Registry<LinkModel>& r) {
  r.add({"photonic",
         "WDM optical link: bandwidth = lane_rate x wavelengths x fibres, latency = fixed + time of flight x length, "
         "laser static power per lane",
         photonic_link_params(), [](const Params& p) { return std::make_unique<PhotonicLink>(p); },
         "Ayar Labs TeraPHY (5 ns per chiplet + time of flight); fibre group index 1.47"});
}

}  // namespace hcsim
