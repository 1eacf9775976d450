#pragma once
// "torus": k-ary n-cube of devices with wrap-around links (TPU v2-v4 ICI style), any
// number of dimensions, optionally a mesh (no wrap), optionally reconfigured by optical
// circuit switches (TPU v4: slices of 4x4x4 cubes stitched by OCS, ~10 s to reconfigure;
// Jouppi et al., ISCA 2023).
//
// Device index = x0 + d0 * (x1 + d1 * (x2 + ...)): dimension 0 varies fastest. Each device
// links to its +1 neighbour in every dimension of size > 1 (and wraps to 0 when `wrap`);
// a ring of size 2 has a single edge with twice the lanes (the wrap link doubles it).
// With `ocs_phases` the optical circuit switches rewire the slice between phases of a job
// (e.g. 4x4x16 for one phase, 8x8x4 for the next); each wiring's wrap-around links must fit
// in `ocs_ports` when given (see torus_ocs_ports). run_scenario simulates each phase on its
// wiring and adds ocs_reconfiguration_time per change (sim/driver/run.cpp).
// Bisection of a torus cut across dimension k: 2 * N / d_k links (Dally & Towles,
// "Principles and Practices of Interconnection Networks", 2004, §3).

#include <vector>

#include "topologies/topology.hpp"

namespace hcsim {

class Torus final : public Topology {
 public:
  explicit Torus(Params p) : p_(std::move(p)) {}
  [[nodiscard]] std::string_view type() const override { return "torus"; }
  [[nodiscard]] TopologyGraph build(const TopologyContext& ctx) const override;

 private:
  Params p_;
};

const ParamTable& torus_params();
void register_torus(Registry<Topology>& r);

// Reads "dims" (array of positive integers) and checks that its product is `count`;
// reports at `path`. Empty on error.
std::vector<int> torus_dims(const nlohmann::json& dims, int count, const std::string& path, Diagnostics& diag);

// Optical circuit switch ports a wiring needs: both ends of every wrap-around link,
// 2 N/d_k for each dimension k of size > 1 (N devices). A TPU v4 4x4x4 cube: 3 x 32 = 96,
// its 6 faces x 16 optical links (Jouppi et al., ISCA 2023, §2).
int torus_ocs_ports(const std::vector<int>& dims);

// `desc` (a torus description) wired as `dims`, without its ocs_phases: the topology of one
// phase of a rewired job.
nlohmann::json torus_rewired(const nlohmann::json& desc, const std::vector<int>& dims);

// "4x4x8".
std::string torus_dims_text(const std::vector<int>& dims);

// Adds the torus/mesh links between `nodes` (graph node of each coordinate, in index
// order as above).
void add_torus_edges(TopologyGraph& g, const std::vector<int>& nodes, const std::vector<int>& dims, bool wrap,
                     const LinkSpec& link, int lanes, const std::string& link_class);

}  // namespace hcsim
