#include "topologies/torus.hpp"

#include <fmt/format.h>

#include "sim/core/nearest.hpp"

namespace hcsim {

const ParamTable& torus_params() {
  static const ParamTable table = {
      {.name = "dims", .kind = ParamKind::array, .help = "size of each dimension, e.g. [4, 4, 8]; product = devices"},
      {.name = "link", .kind = ParamKind::object, .help = "link description of one neighbour link",
       .schema_ref = "link"},
      {.name = "links_per_neighbour", .kind = ParamKind::integer, .def = 1, .min = 1, .max = 64,
       .help = "parallel links to each neighbour"},
      {.name = "wrap", .kind = ParamKind::boolean, .def = true, .help = "wrap-around links (false: a mesh)"},
      {.name = "devices_per_host", .kind = ParamKind::integer, .def = 1, .min = 1, .max = 4096,
       .help = "consecutive devices sharing a host (TPU v4: 4 chips per tray), for locality"},
      {.name = "ocs_reconfiguration_time", .kind = ParamKind::quantity, .dim = Dim::time, .def = "0 s", .min = 0,
       .help = "optical circuit switch reconfiguration time (TPU v4: ~10 s); 0 = static wiring"},
      {.name = "ocs_phases", .kind = ParamKind::array, .def = nullptr,
       .help = "rewiring per job phase: [{\"from_step\": S, \"dims\": [x, y, z]}, ...], steps increasing, same "
               "device count; needs ocs_reconfiguration_time > 0 and workload.average_steps (the job's steps)"},
      {.name = "ocs_ports", .kind = ParamKind::integer, .def = nullptr, .min = 1, .max = 1e9,
       .help = "optical circuit switch ports for this slice (radix x switches); every wiring's wrap-around "
               "links need 2 N/d_k ports per dimension k (TPU v4 4x4x4 cube: 96); unset = not checked"},
  };
  return table;
}

std::vector<int> torus_dims(const nlohmann::json& dims, int count, const std::string& path, Diagnostics& diag) {
  std::vector<int> out;
  if (!dims.is_array() || dims.empty()) {
    diag.error(path, "expected a non-empty array of dimension sizes such as [4, 4, 8]");
    return {};
  }
  long long product = 1;
  for (std::size_t i = 0; i < dims.size(); ++i) {
    if (!dims[i].is_number_integer() || dims[i].get<long long>() < 1 || dims[i].get<long long>() > 1 << 20) {
      diag.error(json_child(path, i), "expected a positive integer, got " + dims[i].dump());
      return {};
    }
    out.push_back(dims[i].get<int>());
    product *= out.back();
    if (product > (1LL << 31)) {
      diag.error(path, "too many devices in this torus");
      return {};
    }
  }
  if (product != count) {
    diag.error(path, fmt::format("dimensions multiply to {}, but there are {} devices", product, count));
    return {};
  }
  return out;
}

int torus_ocs_ports(const std::vector<int>& dims) {
  long long n = 1;
  for (int k : dims) n *= k;
  long long ports = 0;
  for (int k : dims)
    if (k > 1) ports += 2 * (n / k);
  return static_cast<int>(ports);
}

nlohmann::json torus_rewired(const nlohmann::json& desc, const std::vector<int>& dims) {
  nlohmann::json out = desc;
  out["dims"] = dims;
  out.erase("ocs_phases");
  return out;
}

void add_torus_edges(TopologyGraph& g, const std::vector<int>& nodes, const std::vector<int>& dims, bool wrap,
                     const LinkSpec& link, int lanes, const std::string& link_class) {
  const int n = static_cast<int>(nodes.size());
  int stride = 1;
  for (int k : dims) {
    if (k > 1) {
      for (int i = 0; i < n; ++i) {
        const int x = (i / stride) % k;
        const bool last = x == k - 1;
        if (last && (!wrap || k == 2)) continue;
        const int j = last ? i - (k - 1) * stride : i + stride;
        const int l = (k == 2 && wrap) ? 2 * lanes : lanes;
        g.add_edge(nodes[static_cast<std::size_t>(i)], nodes[static_cast<std::size_t>(j)], link, l, link_class);
      }
    }
    stride *= k;
  }
}

namespace {
std::string coord_name(int i, const std::vector<int>& dims) {
  std::string s = "chip(";
  for (std::size_t d = 0; d < dims.size(); ++d) {
    s += (d ? "," : "") + std::to_string(i % dims[d]);
    i /= dims[d];
  }
  return s + ")";
}

void check_ports(const Params& p, const std::vector<int>& dims, const std::string& path, Diagnostics& diag) {
  if (!p.has("ocs_ports")) return;
  const int need = torus_ocs_ports(dims);
  if (need > p.integer("ocs_ports"))
    diag.error(path, fmt::format("wiring {} needs {} optical circuit switch ports (2 N/d per dimension: both ends of "
                                 "every wrap-around link), more than ocs_ports = {}",
                                 torus_dims_text(dims), need, p.integer("ocs_ports")));
}

// Reads `ocs_phases` (checked: objects of from_step and dims, steps increasing, each dims
// of `devices` devices, within the OCS ports); reports under `path`.
std::vector<TopologyGraph::OcsPhase> ocs_phases(const Params& p, int devices, const std::string& topo,
                                                Diagnostics& diag) {
  const std::string path = json_child(topo, "ocs_phases");
  std::vector<TopologyGraph::OcsPhase> out;
  const nlohmann::json& a = p.raw("ocs_phases");
  if (!a.is_array()) {
    diag.error(path, "expected an array of {\"from_step\": S, \"dims\": [x, y, z]} objects");
    return {};
  }
  for (std::size_t i = 0; i < a.size(); ++i) {
    const std::string at = json_child(path, i);
    if (!a[i].is_object()) { diag.error(at, "expected {\"from_step\": S, \"dims\": [x, y, z]}"); continue; }
    for (const auto& [key, v] : a[i].items())
      if (key != "from_step" && key != "dims")
        diag.error(json_child(at, key), "unknown key \"" + key + "\"; " + suggest(key, {"dims", "from_step"}));
    const nlohmann::json step = a[i].value("from_step", nlohmann::json());
    if (!step.is_number_integer() || step.get<long long>() < 0) {
      diag.error(json_child(at, "from_step"), "expected a step number >= 0, got " + step.dump());
      continue;
    }
    TopologyGraph::OcsPhase ph{step.get<std::int64_t>(), {}};
    if (!out.empty() && ph.from_step <= out.back().from_step)
      diag.error(json_child(at, "from_step"), fmt::format("phases must start at increasing steps; {} follows {}",
                                                          ph.from_step, out.back().from_step));
    ph.dims = torus_dims(a[i].value("dims", nlohmann::json()), devices, json_child(at, "dims"), diag);
    if (ph.dims.empty()) continue;
    check_ports(p, ph.dims, json_child(at, "dims"), diag);
    out.push_back(std::move(ph));
  }
  if (!a.empty() && p.get<Seconds>("ocs_reconfiguration_time").value() <= 0)
    diag.error(json_child(topo, "ocs_reconfiguration_time"),
               "ocs_phases rewire the optical circuit switches, which takes time; give it (TPU v4: about 10 s)");
  if (!a.empty() && !p.boolean("wrap"))
    diag.error(json_child(topo, "wrap"),
               "ocs_phases rewire the wrap-around links, and a mesh (wrap false) has none");
  return out;
}
}  // namespace

std::string torus_dims_text(const std::vector<int>& dims) {
  std::string s;
  for (std::size_t d = 0; d < dims.size(); ++d) s += (d ? "x" : "") + std::to_string(dims[d]);
  return s;
}

TopologyGraph Torus::build(const TopologyContext& ctx) const {
  HCSIM_ASSERT(ctx.diag != nullptr, "topology build needs diagnostics");
  TopologyGraph g;
  const std::size_t issues_before = ctx.diag->issues().size();
  const LinkSpec link = topology_link(ctx, p_.raw("link"), json_child(ctx.path, "link"));
  const auto dims = torus_dims(p_.raw("dims"), ctx.devices, json_child(ctx.path, "dims"), *ctx.diag);
  const int per_host = static_cast<int>(p_.integer("devices_per_host"));
  if (!dims.empty() && ctx.devices % per_host != 0)
    ctx.diag->error(json_child(ctx.path, "devices_per_host"),
                    fmt::format("{} devices do not fill whole hosts of {}", ctx.devices, per_host));
  std::vector<TopologyGraph::OcsPhase> phases;
  if (!dims.empty()) {
    check_ports(p_, dims, json_child(ctx.path, "dims"), *ctx.diag);
    if (p_.has("ocs_phases")) phases = ocs_phases(p_, ctx.devices, ctx.path, *ctx.diag);
  }
  if (dims.empty() || ctx.diag->issues().size() != issues_before || link.bandwidth.value() <= 0) return g;
  std::vector<int> nodes;
  for (int d = 0; d < ctx.devices; ++d) {
    nodes.push_back(g.add_device(coord_name(d, dims), d));
    g.set_node_of(d, d / per_host);
    g.set_scale_up_domain(nodes.back(), 0);  // the chips' links (ICI) are the scale-up fabric of the whole torus
  }
  const bool wrap = p_.boolean("wrap");
  add_torus_edges(g, nodes, dims, wrap, link, static_cast<int>(p_.integer("links_per_neighbour")),
                  link_class_of(link, "ici"));
  g.devices_forward = true;
  g.torus_dims = dims;
  g.reconfiguration_time = p_.get<Seconds>("ocs_reconfiguration_time");
  g.ocs_phases = std::move(phases);
  g.description = fmt::format("{} {} of {} devices, {} links", torus_dims_text(dims), wrap ? "torus" : "mesh",
                              ctx.devices, link.name);
  if (g.reconfiguration_time.value() > 0)
    g.description += ", optical circuit switches (" + format_quantity(g.reconfiguration_time.value(), Dim::time) +
                     " to reconfigure)";
  for (const auto& ph : g.ocs_phases)
    g.description += fmt::format(", rewired to {} from step {}", torus_dims_text(ph.dims), ph.from_step);
  return g;
}

void register_torus(Registry<Topology>& r) {
  r.add({"torus", "k-ary n-cube of devices with wrap-around links (TPU ICI style), 2D/3D or any dimensions",
         torus_params(), [](const Params& p) { return std::make_unique<Torus>(p); },
         "Dally & Towles 2004; TPU v4, Jouppi et al., ISCA 2023 (arXiv 2304.01433)"});
}

}  // namespace hcsim
