#pragma once
// Electrical SerDes links: NVLink, PCIe, InfiniBand, RoCE and Ethernet.
//
// Model (Hockney's alpha-beta model, as used by NCCL's tuning model and by
// Thakur, Rabenseifner & Gropp, IJHPCA 2005): moving m bytes one way across the link costs
//   t(m) = latency + m / (bandwidth * efficiency)
// and a dynamic energy E = m * energy_per_byte (presets are written in pJ/bit), on top of the always-on static_power.
// `bandwidth` is per direction: NVIDIA quotes NVLink as the sum of both directions, so an
// A100's "600 GB/s" is 300 GB/s here (nccl issue #1442).

#include "models/link/link.hpp"

namespace hcsim {

class ElectricalLink final : public LinkModel {
 public:
  explicit ElectricalLink(const Params& p);
  [[nodiscard]] std::string_view type() const override { return "electrical"; }
  [[nodiscard]] LinkSpec spec() const override { return spec_; }

 private:
  LinkSpec spec_;
};

const ParamTable& electrical_link_params();
void register_electrical_link(Registry<LinkModel>& r);

}  // namespace hcsim
