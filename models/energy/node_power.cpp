#include "models/energy/node_power.hpp"

#include <algorithm>
#include <map>

#include "sim/core/params.hpp"

namespace hcsim {
namespace {

struct NodePreset {
  double idle_w, max_w;
  int devices;
};

const std::map<std::string, NodePreset>& presets() {
  static const std::map<std::string, NodePreset> p = {
      {"dgx-a100", {1000, 3300, 8}}, {"dgx-h100", {1300, 4600, 8}}, {"dgx-b200", {1600, 6300, 8}}};
  return p;
}

}  // namespace

const ParamTable& node_power_params() {
  static const ParamTable t{
      {.name = "preset", .kind = ParamKind::choice, .def = nullptr, .choices = {"dgx-a100", "dgx-h100", "dgx-b200"},
       .help = "a server's figures (models/energy/node_power.hpp)"},
      {.name = "idle", .kind = ParamKind::quantity, .dim = Dim::power, .def = nullptr, .min = 0,
       .help = "host power with the accelerators idle (CPUs, DRAM, NICs, switch chips, fans, PSU losses)"},
      {.name = "max", .kind = ParamKind::quantity, .dim = Dim::power, .def = nullptr, .min = 0,
       .help = "host power with the accelerators at full load: the system maximum minus the accelerators' TDP"},
      {.name = "devices_per_node", .kind = ParamKind::integer, .def = nullptr, .min = 1, .max = 1024,
       .help = "accelerators per node"},
  };
  return t;
}

Joules host_energy(const NodePower& n, std::int64_t devices, Joules dynamic, Watts headroom, Seconds step) {
  if (step <= Seconds{} || devices <= 0) return Joules{};
  const double u = headroom > Watts{} ? std::clamp(dynamic / (headroom * step), 0.0, 1.0) : 0.0;
  const auto nodes = static_cast<double>((devices + n.devices_per_node - 1) / n.devices_per_node);
  return n.at(u) * step * nodes;
}

std::optional<NodePower> parse_node_power(const nlohmann::json& v, const std::string& path, Diagnostics& diag) {
  const std::size_t before = diag.issues().size();
  const Params p = resolve_params(node_power_params(), v, path, diag);
  if (diag.issues().size() != before) return std::nullopt;
  NodePower n;
  if (p.has("preset")) {
    n.preset = p.string("preset");
    const NodePreset& pr = presets().at(n.preset);
    n.idle = Watts(pr.idle_w);
    n.max = Watts(pr.max_w);
    n.devices_per_node = pr.devices;
  } else if (!p.has("idle") || !p.has("max")) {
    diag.error(path, "give a \"preset\" (dgx-a100, dgx-h100, dgx-b200) or both \"idle\" and \"max\"");
    return std::nullopt;
  }
  if (p.has("idle")) n.idle = p.get<Watts>("idle");
  if (p.has("max")) n.max = p.get<Watts>("max");
  if (p.has("devices_per_node")) n.devices_per_node = static_cast<int>(p.integer("devices_per_node"));
  if (n.max < n.idle) {
    diag.error(path + "/max", "the host's maximum power is below its idle power");
    return std::nullopt;
  }
  return n;
}

}  // namespace hcsim
