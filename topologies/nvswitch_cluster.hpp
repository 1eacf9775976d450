#pragma once
// "nvswitch-cluster": DGX/HGX-style nodes of GPUs joined by an NVSwitch, nodes joined by
// NICs through a leaf/spine fabric (fat-tree or rail-optimised; see clos.hpp).
//
// Inside a node every GPU has one edge to the node's NVSwitch carrying its full NVLink
// bandwidth (the several physical NVSwitch chips of an HGX board act as one non-blocking
// crossbar: NVIDIA DGX A100/H100 user guides). Between nodes, GPU i uses NIC
// floor(i * nics / gpus); with one NIC per GPU (DGX A100 / H100: 8 x HDR or NDR) the NIC
// edge joins the GPU to its leaf directly, otherwise a NIC node is shared by its GPUs over
// PCIe. A single node (devices <= gpus_per_node) has no scale-out fabric at all.

#include "topologies/topology.hpp"

namespace hcsim {

class NvswitchCluster final : public Topology {
 public:
  explicit NvswitchCluster(Params p) : p_(std::move(p)) {}
  [[nodiscard]] std::string_view type() const override { return "nvswitch-cluster"; }
  [[nodiscard]] TopologyGraph build(const TopologyContext& ctx) const override;

 private:
  Params p_;
};

const ParamTable& nvswitch_cluster_params();
// Leaf and spine ports when a scenario does not set switch_radix: those of the InfiniBand
// switch generation built for the NIC's port rate (36, 40, 64, 144 up to 100, 200, 400 Gb/s
// and above).
int default_switch_radix(BytesPerSecond nic_rate);
// The radix a topology of these (resolved) parameters builds its leaves and spines with:
// switch_radix where given, else default_switch_radix of its NIC's rate.
int switch_radix(const Params& p, BytesPerSecond nic_rate);
void register_nvswitch_cluster(Registry<Topology>& r);

}  // namespace hcsim
