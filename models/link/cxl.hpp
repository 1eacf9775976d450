#pragma once
// CXL.mem links over the PCIe PHY (CXL 1.1/2.0 on PCIe 5.0, CXL 3.x on PCIe 6.0).
//
// Model: a load from CXL-attached memory pays the link's added load latency over local
// DRAM plus one switch traversal per CXL switch hop; data streams at the PCIe lanes'
// per-direction bandwidth times a protocol efficiency:
//   latency   = load_latency + switch_hops x switch_hop_latency
//   t(m)      = latency + m / (bandwidth x efficiency)
// Pond (Li et al., ASPLOS 2023) measures CXL adding ~70-90 ns over local DRAM for a
// directly attached device; a switch hop adds more (hardware.md §5). A topology that
// places the CXL switch as a graph node leaves switch_hops at 0 and gives the switch's
// latency to the switch-side edge instead.

#include "models/link/link.hpp"

namespace hcsim {

class CxlLink final : public LinkModel {
 public:
  explicit CxlLink(const Params& p);
  [[nodiscard]] std::string_view type() const override { return "cxl"; }
  [[nodiscard]] LinkSpec spec() const override { return spec_; }
  [[nodiscard]] Seconds switch_hop_latency() const { return switch_hop_latency_; }

 private:
  LinkSpec spec_;
  Seconds switch_hop_latency_{};
};

const ParamTable& cxl_link_params();
void register_cxl_link(Registry<LinkModel>& r);

}  // namespace hcsim
