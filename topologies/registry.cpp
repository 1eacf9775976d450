#include "topologies/topology.hpp"

#include "topologies/cxl_pool.hpp"
#include "topologies/nvswitch_cluster.hpp"
#include "topologies/torus.hpp"

namespace hcsim {

Registry<Topology>& topologies() {
  static Registry<Topology> r("topology");
  return r;
}

void register_builtin_topologies() {
  static bool done = false;
  if (done) return;
  done = true;
  register_builtin_links();
  register_nvswitch_cluster(topologies());
  register_torus(topologies());
  register_cxl_pool(topologies());
}

LinkSpec topology_link(const TopologyContext& ctx, const nlohmann::json& desc, const std::string& path) {
  if (ctx.link) return ctx.link(desc, path);
  HCSIM_ASSERT(ctx.diag != nullptr, "a topology context needs a link resolver or diagnostics");
  return resolve_link(desc, path, *ctx.diag);
}

TopologyGraph build_topology(const nlohmann::json& desc, int devices, const std::string& path, Diagnostics& diag) {
  register_builtin_topologies();
  if (!desc.is_object() || !desc.contains("type") || !desc.at("type").is_string()) {
    diag.error(desc.is_object() ? json_child(path, "type") : path,
               "a topology needs a \"type\"; " + valid_list(topologies().names()));
    return {};
  }
  auto topo = topologies().build(desc.at("type").get<std::string>(), desc, path, diag);
  if (!topo) return {};
  TopologyContext ctx{devices, path, &diag, {}};
  const std::size_t issues_before = diag.issues().size();
  TopologyGraph g = topo->build(ctx);
  if (diag.issues().size() != issues_before) return {};
  return g;
}

std::string link_class_of(const LinkSpec& link, const std::string& fallback) {
  const std::string& n = link.name;
  auto starts = [&](const char* p) { return n.rfind(p, 0) == 0; };
  if (link.technology == "photonic") return "optical";
  if (link.technology == "cxl") return "cxl";
  if (starts("nvlink")) return "nvlink";
  if (starts("pcie")) return "pcie";
  if (starts("ib-")) return "infiniband";
  if (starts("roce") || starts("ethernet")) return "ethernet";
  return fallback;
}

}  // namespace hcsim
