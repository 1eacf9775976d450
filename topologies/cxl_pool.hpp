#pragma once
// "cxl-pool": hosts (the devices) sharing CXL-attached memory through a CXL switch, as
// in CXL 2.0 memory pooling (one switch, several hosts, several memory devices) and
// Pond (Li et al., ASPLOS 2023).
//
// Each host has one CXL link to the switch; each memory device one to the switch. A load
// from the pool crosses host -> switch -> memory:
//   latency = host link load latency + switch latency + media latency
//   bandwidth = min(host link, memory link, media bandwidth) x efficiency
// The host links carry the link preset's added load latency; the switch-to-memory edge
// carries the switch traversal; the memory node carries its media latency and bandwidth.
// Hosts may also reach each other through the switch (CXL 3.x peer traffic).

#include "topologies/topology.hpp"

namespace hcsim {

class CxlPool final : public Topology {
 public:
  explicit CxlPool(Params p) : p_(std::move(p)) {}
  [[nodiscard]] std::string_view type() const override { return "cxl-pool"; }
  [[nodiscard]] TopologyGraph build(const TopologyContext& ctx) const override;

 private:
  Params p_;
};

const ParamTable& cxl_pool_params();
void register_cxl_pool(Registry<Topology>& r);

}  // namespace hcsim
