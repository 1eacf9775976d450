#pragma once
// Photonic links: co-packaged optics and optical I/O chiplets with wavelength-division
// multiplexing (WDM).
//
// Model:
//   bandwidth (per direction) = lane_rate x wavelengths x fibres
//   latency                   = fixed_latency + time_of_flight_per_metre x length
//   dynamic energy            = bytes x energy_per_byte   (modulation + detection + drivers)
//   static power              = laser_power_per_lane x wavelengths x fibres x 2 directions
// Time of flight in silica fibre is L·n/c with group index n ~ 1.47, i.e. ~4.9 ns per
// metre. The fixed part covers serialisation, (de)modulation and, where used, FEC: Ayar
// Labs quotes 5 ns per TeraPHY chiplet plus time of flight, no FEC (hardware.md §6).
// Unlike SerDes, laser power is drawn whether or not data moves, hence the separate term.

#include "models/link/link.hpp"

namespace hcsim {

class PhotonicLink final : public LinkModel {
 public:
  explicit PhotonicLink(const Params& p);
  [[nodiscard]] std::string_view type() const override { return "photonic"; }
  [[nodiscard]] LinkSpec spec() const override { return spec_; }
  [[nodiscard]] int lanes_per_direction() const { return lanes_; }

 private:
  LinkSpec spec_;
  int lanes_ = 1;
};

const ParamTable& photonic_link_params();
void register_photonic_link(Registry<LinkModel>& r);

}  // namespace hcsim
