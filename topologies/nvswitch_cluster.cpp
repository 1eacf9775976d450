#include "topologies/nvswitch_cluster.hpp"

#include <fmt/format.h>

#include <numeric>

#include "topologies/clos.hpp"
#include "topologies/torus.hpp"

namespace hcsim {

const ParamTable& nvswitch_cluster_params() {
  static const ParamTable table = {
      {.name = "gpus_per_node", .kind = ParamKind::integer, .def = 8, .min = 1, .max = 4096,
       .help = "GPUs joined by one NVSwitch domain"},
      {.name = "nvlink", .kind = ParamKind::object, .def = nlohmann::json{{"preset", "nvlink3"}},
       .help = "link description of one GPU's NVLink bandwidth to the NVSwitch", .schema_ref = "link"},
      {.name = "nvswitch_reduction", .kind = ParamKind::boolean, .def = false,
       .help = "NVSwitch reduces in the switch (NVLink SHARP, NVSwitch gen3 and later)"},
      {.name = "nics_per_node", .kind = ParamKind::integer, .def = nlohmann::json(nullptr), .min = 1, .max = 4096,
       .help = "scale-out NICs per node, dividing gpus_per_node (default: one per GPU)"},
      {.name = "nic", .kind = ParamKind::object, .def = nlohmann::json{{"preset", "ib-hdr"}},
       .help = "link description of one NIC port", .schema_ref = "link"},
      {.name = "fabric", .kind = ParamKind::choice, .def = "fat-tree", .choices = {"fat-tree", "rail-optimised", "torus"},
       .help = "how nodes are joined: one shared leaf/spine tree, one leaf set per NIC rail, or a torus of nodes"},
      {.name = "fabric_dims", .kind = ParamKind::array, .def = nlohmann::json(nullptr),
       .help = "fabric torus: node grid, e.g. [4, 4, 2]; product = nodes"},
      {.name = "fabric_links_per_neighbour", .kind = ParamKind::integer, .def = 1, .min = 1, .max = 64,
       .help = "fabric torus: NIC-rate links from a node to each neighbour node"},
      {.name = "switch_radix", .kind = ParamKind::integer, .def = nlohmann::json(nullptr), .min = 2, .max = 4096,
       .help = "ports per leaf/spine switch (default: the InfiniBand switch of the NIC's rate: 36 up to 100 Gb/s "
               "(SB7800 EDR), 40 up to 200 (QM8700 HDR), 64 up to 400 (QM9700 NDR), 144 above (Q3400 XDR))"},
      {.name = "oversubscription", .kind = ParamKind::number, .def = 1.0, .min = 1, .max = 64,
       .help = "leaf down:up port ratio (1 = non-blocking)"},
      {.name = "switch_latency", .kind = ParamKind::quantity, .dim = Dim::time, .def = "130 ns", .min = 0,
       .help = "latency of a leaf-spine edge (switch port to port; ESTIMATE after Quantum HDR's ~130 ns)"},
      {.name = "fabric_routing", .kind = ParamKind::choice, .def = "d-mod-k", .choices = {"d-mod-k", "ecmp-hash"},
       .help = "how a leaf picks among its equal uplinks: by destination (InfiniBand subnet managers' fat-tree "
               "routing, D-mod-k: ring collectives do not collide) or by a hash of source and destination "
               "(Ethernet ECMP: flows may share an uplink)"},
      {.name = "fabric_reduction", .kind = ParamKind::boolean, .def = false,
       .help = "leaf and spine switches reduce in network (InfiniBand SHARP)"},
  };
  return table;
}

namespace {

struct Shape {
  int nodes = 1, per_node = 1, nics = 1;
};

// Checks the divisibility rules; reports at the offending parameter.
bool shape_of(const Params& p, const TopologyContext& ctx, Shape& s) {
  const int g = static_cast<int>(p.integer("gpus_per_node"));
  s.nics = p.has("nics_per_node") ? static_cast<int>(p.integer("nics_per_node")) : g;
  bool ok = true;
  if (ctx.devices < 1) {
    ctx.diag->error(ctx.path, "a topology needs at least one device");
    return false;
  }
  if (ctx.devices > g && ctx.devices % g != 0) {
    ctx.diag->error(json_child(ctx.path, "gpus_per_node"),
                    fmt::format("{} devices do not fill whole nodes of {} GPUs", ctx.devices, g));
    ok = false;
  }
  if (s.nics > g || g % s.nics != 0) {
    ctx.diag->error(json_child(ctx.path, "nics_per_node"),
                    fmt::format("{} NICs cannot be shared evenly by {} GPUs per node", s.nics, g));
    ok = false;
  }
  s.per_node = std::min(g, ctx.devices);
  s.nodes = ctx.devices / s.per_node;
  return ok;
}

// NIC ports of every node as Clos endpoints; GPUs sharing a NIC reach it over PCIe.
std::vector<ClosEndpoint> attach_nics(TopologyGraph& g, const Shape& s, const LinkSpec& nic, bool rails) {
  std::vector<ClosEndpoint> eps;
  LinkSpec attach = nic;  // GPU -> shared NIC: bandwidth bounded by the NIC, costs counted on its port edge
  attach.latency = Seconds{};
  attach.energy_per_byte = JoulesPerByte{};
  attach.static_power = Watts{};
  const int gpus_per_nic = s.per_node / s.nics, nics = s.nics;
  // Shared NICs as nodes of their own: node n's k-th is first_nic + n * nics + k.
  const int first_nic =
      gpus_per_nic > 1
          ? g.add_switches(s.nodes * nics, [nics](int i) { return fmt::format("node{}/nic{}", i / nics, i % nics); })
          : -1;
  const EdgeKind* pcie = gpus_per_nic > 1 ? &g.edge_kind(attach, 1, "pcie") : nullptr;
  for (int n = 0; n < s.nodes; ++n) {
    for (int k = 0; k < s.nics; ++k) {
      int port = g.device_node(n * s.per_node + k * gpus_per_nic);
      if (pcie) {
        port = first_nic + n * nics + k;
        for (int i = 0; i < gpus_per_nic; ++i)
          g.add_edge(g.device_node(n * s.per_node + k * gpus_per_nic + i), port, *pcie);
      }
      eps.push_back({port, rails ? k : 0});
    }
  }
  return eps;
}

// Nodes as a torus: each node's NIC ports meet at a node router, routers form the torus.
std::string add_node_torus(TopologyGraph& g, const Shape& s, const LinkSpec& nic, const Params& p,
                           const std::vector<int>& dims) {
  std::vector<int> routers;
  const auto eps = attach_nics(g, s, nic, false);
  const std::string cls = link_class_of(nic, "scale-out");
  const int first_router = g.add_switches(s.nodes, [](int n) { return fmt::format("node{}/router", n); });
  for (int n = 0; n < s.nodes; ++n) routers.push_back(first_router + n);
  for (std::size_t i = 0; i < eps.size(); ++i)
    g.add_edge(eps[i].node, routers[i / static_cast<std::size_t>(s.nics)], nic, 1, cls);
  add_torus_edges(g, routers, dims, true, nic, static_cast<int>(p.integer("fabric_links_per_neighbour")), cls);
  std::string t;
  for (std::size_t d = 0; d < dims.size(); ++d) t += (d ? "x" : "") + std::to_string(dims[d]);
  return fmt::format(", {} x {} per node, {} torus of nodes", s.nics, nic.name, t);
}

}  // namespace

int default_switch_radix(BytesPerSecond nic_rate) {
  // Switch ports of the InfiniBand generation built for the port rate (NVIDIA datasheets:
  // SB7800 EDR 36 x 100 Gb/s, QM8700 HDR 40 x 200, QM9700 NDR 64 x 400 (32 OSFP cages of
  // two ports), Quantum-X800 Q3400 XDR 144 x 800). A 400 Gb/s Ethernet fabric built of
  // Tomahawk 4 switches has the same 64 ports.
  const double gbit = nic_rate.value() * 8.0 / 1e9;
  if (gbit <= 100.0 * (1 + 1e-9)) return 36;
  if (gbit <= 200.0 * (1 + 1e-9)) return 40;
  if (gbit <= 400.0 * (1 + 1e-9)) return 64;
  return 144;
}

int switch_radix(const Params& p, BytesPerSecond nic_rate) {
  return p.has("switch_radix") ? static_cast<int>(p.integer("switch_radix")) : default_switch_radix(nic_rate);
}

TopologyGraph NvswitchCluster::build(const TopologyContext& ctx) const {
  HCSIM_ASSERT(ctx.diag != nullptr, "topology build needs diagnostics");
  TopologyGraph g;
  Shape s;
  const std::size_t issues_before = ctx.diag->issues().size();
  const LinkSpec nvlink = topology_link(ctx, p_.raw("nvlink"), json_child(ctx.path, "nvlink"));
  const LinkSpec nic = topology_link(ctx, p_.raw("nic"), json_child(ctx.path, "nic"));
  if (!shape_of(p_, ctx, s) || ctx.diag->issues().size() != issues_before) return g;
  std::vector<int> dims;
  if (p_.string("fabric") == "torus" && s.nodes > 1) {
    if (!p_.has("fabric_dims")) {
      ctx.diag->error(json_child(ctx.path, "fabric_dims"), "a torus fabric needs its node grid, e.g. [4, 4, 2]");
      return g;
    }
    dims = torus_dims(p_.raw("fabric_dims"), s.nodes, json_child(ctx.path, "fabric_dims"), *ctx.diag);
    if (dims.empty()) return g;
  }
  if (nvlink.bandwidth.value() <= 0 || nic.bandwidth.value() <= 0) return g;  // resolver reported it
  const bool rails = p_.string("fabric") == "rail-optimised";
  ClosOptions o;
  o.radix = switch_radix(p_, nic.bandwidth);
  o.oversubscription = p_.number("oversubscription");
  o.endpoint_link = nic;
  o.switch_link = nic;
  o.switch_link.latency = p_.get<Seconds>("switch_latency");
  o.in_switch_reduction = p_.boolean("fabric_reduction");
  {
    // The graph's size: devices, NVSwitches, shared NICs, then the fabric (a Clos, or a torus
    // of node routers).
    const auto devices = static_cast<std::size_t>(ctx.devices), nodes = static_cast<std::size_t>(s.nodes);
    const auto ports = nodes * static_cast<std::size_t>(s.nics);
    const std::size_t shared = s.per_node / s.nics > 1 ? ports : 0;
    std::size_t fabric_nodes = 0, fabric_edges = 0;
    if (s.nodes > 1 && dims.empty()) {
      const std::vector<int> sizes(rails ? static_cast<std::size_t>(s.nics) : 1U, rails ? s.nodes : s.nodes * s.nics);
      const ClosSummary c = clos_shape(sizes, o);
      fabric_nodes = static_cast<std::size_t>(c.leaves + c.spines);
      fabric_edges = ports + static_cast<std::size_t>(c.leaves) * static_cast<std::size_t>(c.spines);
    }
    g.reserve(devices + nodes + shared + fabric_nodes, devices + (shared > 0 ? devices : 0) + fabric_edges, devices);
  }
  const int per_node = s.per_node;
  g.add_devices(ctx.devices, [per_node](int d) { return fmt::format("node{}/gpu{}", d / per_node, d % per_node); });
  for (int d = 0; d < ctx.devices; ++d) g.set_node_of(d, d / per_node);
  const std::string nv_class = link_class_of(nvlink, "nvlink");
  // The node's GPUs and NVSwitch are its scale-up domain: GPUs of one node talk over
  // NVLink only, never through a NIC they share (routing.hpp).
  const int first_switch = g.add_switches(
      s.nodes, [](int n) { return fmt::format("node{}/nvswitch", n); }, p_.boolean("nvswitch_reduction"));
  const EdgeKind* nv = s.per_node > 0 ? &g.edge_kind(nvlink, 1, nv_class) : nullptr;
  for (int n = 0; n < s.nodes; ++n) {
    const int sw = first_switch + n;
    g.set_scale_up_domain(sw, n);
    for (int i = 0; i < s.per_node; ++i) {
      g.set_scale_up_domain(g.device_node(n * s.per_node + i), n);
      g.add_edge(g.device_node(n * s.per_node + i), sw, *nv);
    }
  }
  g.description = fmt::format("{} node{} x {} GPUs, NVSwitch ({}) inside", s.nodes, s.nodes == 1 ? "" : "s",
                              s.per_node, nvlink.name);
  if (s.nodes == 1) return g;
  if (!dims.empty()) {
    g.description += add_node_torus(g, s, nic, p_, dims);
    return g;
  }
  g.destination_routing = p_.string("fabric_routing") == "d-mod-k";
  const int first_nic = static_cast<int>(g.nodes().size());
  const std::vector<ClosEndpoint> eps = attach_nics(g, s, nic, rails);
  const int first_leaf = static_cast<int>(g.nodes().size());
  const int first_port_edge = static_cast<int>(g.edges().size());
  const ClosSummary c = add_two_tier_clos(g, eps, o);
  // Routed by destination, the fabric repeats after whole nodes that fill whole leaves
  // (TopologyGraph::translation_period): shifting the devices by that many moves each host
  // to the same port of another leaf and adds one amount to every host index, so D-mod-k's
  // uplink (host index mod spines) turns by that amount on every route, a relabelling of
  // spines that are all alike (each joined to every leaf by the same link). A rail puts one
  // port of each node on its leaves; one shared tree takes each node's NIC ports in turn.
  const int gpus_per_nic = s.per_node / s.nics;
  if (g.destination_routing) {
    g.translation_period = rails ? s.per_node * c.down : gpus_per_nic * std::lcm(s.nics, c.down);
    // The nodes' moves per period (TopologyGraph::translation_bands), in the order they were
    // added: devices, NVSwitches (one a node), shared NICs (nics a node), each plane's leaves
    // (a rail's one leaf a period; the shared tree's lcm(nics, down) / down leaves), then the
    // spines, turned by the host indices a period adds (D-mod-k takes host index mod spines
    // among the spines in node order).
    const int period = g.translation_period, node_step = period / s.per_node;
    const int hosts_step = rails ? node_step : period / gpus_per_nic;  // host indices a period adds in a plane
    auto& bands = g.translation_bands;
    bands.push_back({0, ctx.devices, period});
    bands.push_back({ctx.devices, s.nodes, node_step});
    if (gpus_per_nic > 1) bands.push_back({first_nic, s.nodes * s.nics, period / gpus_per_nic});
    const int plane_hosts = rails ? s.nodes : s.nodes * s.nics;
    const int plane_leaves = (plane_hosts + c.down - 1) / c.down;
    for (int plane = 0; plane < (rails ? s.nics : 1); ++plane)
      bands.push_back({first_leaf + plane * plane_leaves, plane_leaves, hosts_step / c.down});
    if (c.spines > 0) bands.push_back({first_leaf + c.leaves, c.spines, hosts_step % c.spines});
    // The edges as added (TopologyGraph::edge_bands): NVLink, one a device in device order;
    // a shared NIC's attachments, one a device too; the ports to the leaves, a plane's hosts in
    // order (add_two_tier_clos); then each spine's row of links to every leaf, plane by plane.
    auto& edges = g.edge_bands;
    edges.push_back({.first = 0, .rows = 1, .row_length = ctx.devices, .block = ctx.devices, .step = period});
    if (gpus_per_nic > 1)
      edges.push_back(
          {.first = ctx.devices, .rows = 1, .row_length = ctx.devices, .block = ctx.devices, .step = period});
    edges.push_back({.first = first_port_edge,
                     .rows = 1,
                     .row_length = static_cast<int>(eps.size()),
                     .block = plane_hosts,
                     .step = hosts_step});
    if (c.spines > 0)
      edges.push_back({.first = first_port_edge + static_cast<int>(eps.size()),
                       .rows = c.spines,
                       .row_length = c.leaves,
                       .row_step = hosts_step % c.spines,
                       .block = plane_leaves,
                       .step = hosts_step / c.down});
  }
  // GPUs behind a shared NIC are reached through its port: D-mod-k routes them by its index.
  if (gpus_per_nic > 1)
    for (int d = 0; d < ctx.devices; ++d)
      g.set_host_index(g.device_node(d), g.host_index(eps[static_cast<std::size_t>(d / gpus_per_nic)].node));
  g.description += fmt::format(", {} x {} per node, {} ({} leaves, {} spines{}, {:g}:1)", s.nics, nic.name,
                               p_.string("fabric"), c.leaves, c.spines, c.logical_spines ? " logical" : "",
                               o.oversubscription);
  return g;
}

void register_nvswitch_cluster(Registry<Topology>& r) {
  r.add({"nvswitch-cluster",
         "GPU nodes with an NVSwitch inside, joined by NICs through a fat-tree or rail-optimised leaf/spine fabric",
         nvswitch_cluster_params(), [](const Params& p) { return std::make_unique<NvswitchCluster>(p); },
         "NVIDIA DGX A100/H100 user guides and SuperPOD reference architectures; Leiserson 1985 (fat-trees)"});
}

}  // namespace hcsim
