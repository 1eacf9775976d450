#include "topologies/cxl_pool.hpp"

#include <fmt/format.h>

namespace hcsim {

const ParamTable& cxl_pool_params() {
  static const ParamTable table = {
      {.name = "link", .kind = ParamKind::object, .def = nlohmann::json{{"preset", "cxl2"}},
       .help = "link description of each host's and each memory device's CXL port", .schema_ref = "link"},
      {.name = "memory_devices", .kind = ParamKind::integer, .def = 1, .min = 1, .max = 1024,
       .help = "CXL memory devices (expanders) behind the switch"},
      {.name = "capacity", .kind = ParamKind::quantity, .dim = Dim::data, .def = "1 TiB", .min = 0,
       .min_exclusive = true, .help = "capacity of each memory device"},
      {.name = "media_latency", .kind = ParamKind::quantity, .dim = Dim::time, .def = "90 ns", .min = 0,
       .help = "DRAM access latency inside a memory device (local DRAM ~80-100 ns, hardware.md §5)"},
      {.name = "media_bandwidth", .kind = ParamKind::quantity, .dim = Dim::bandwidth, .def = nlohmann::json(nullptr),
       .min = 0, .min_exclusive = true, .help = "media bandwidth of each memory device (default: bounded by its link)"},
      {.name = "switch_latency", .kind = ParamKind::quantity, .dim = Dim::time, .def = "70 ns", .min = 0,
       .help = "CXL switch traversal (ESTIMATE; switched CXL adds ~100-200 ns in total, hardware.md §5)"},
  };
  return table;
}

TopologyGraph CxlPool::build(const TopologyContext& ctx) const {
  HCSIM_ASSERT(ctx.diag != nullptr, "topology build needs diagnostics");
  TopologyGraph g;
  const std::size_t issues_before = ctx.diag->issues().size();
  const LinkSpec link = topology_link(ctx, p_.raw("link"), json_child(ctx.path, "link"));
  if (ctx.devices < 1) ctx.diag->error(ctx.path, "a topology needs at least one device");
  if (ctx.diag->issues().size() != issues_before || link.bandwidth.value() <= 0) return g;
  const std::string cls = link_class_of(link, "cxl");
  for (int d = 0; d < ctx.devices; ++d) g.add_device(fmt::format("host{}", d), d);
  const int sw = g.add_switch("cxl-switch");
  for (int d = 0; d < ctx.devices; ++d) g.add_edge(g.device_node(d), sw, link, 1, cls);
  LinkSpec mem_link = link;  // switch -> memory device: the switch traversal, no second load penalty
  mem_link.latency = p_.get<Seconds>("switch_latency");
  const int mems = static_cast<int>(p_.integer("memory_devices"));
  const Bytes cap = p_.get<Bytes>("capacity");
  const BytesPerSecond media = p_.has("media_bandwidth") ? p_.get<BytesPerSecond>("media_bandwidth") : BytesPerSecond{};
  for (int m = 0; m < mems; ++m) {
    const int node = g.add_memory(fmt::format("cxl-mem{}", m), cap);
    g.set_memory_performance(node, p_.get<Seconds>("media_latency"), media);
    g.add_edge(sw, node, mem_link, 1, cls);
  }
  g.description = fmt::format("{} host{} sharing {} x {} CXL memory over one switch ({})", ctx.devices,
                              ctx.devices == 1 ? "" : "s", mems, format_quantity(cap.value(), Dim::data), link.name);
  return g;
}

void register_cxl_pool(Registry<Topology>& r) {
  r.add({"cxl-pool", "hosts sharing CXL memory devices through one CXL switch", cxl_pool_params(),
         [](const Params& p) { return std::make_unique<CxlPool>(p); },
         "CXL 2.0 specification (switching, memory pooling); Pond, Li et al., ASPLOS 2023"});
}

}  // namespace hcsim
