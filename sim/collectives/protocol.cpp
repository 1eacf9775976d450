#include "sim/collectives/protocol.hpp"

#include <algorithm>
#include <cmath>
#include <iterator>
#include <string>

#include "sim/core/error.hpp"

namespace hcsim {
namespace {

// NVIDIA/nccl 2.30.7 defaults of one protocol (see protocol.hpp for each figure's origin).
struct Defaults {
  const char* name;
  double ring_fraction, tree_fraction;
  const char *base, *nvlink_step, *net_step, *channel_bw, *grain;
};

constexpr Defaults kDefaults[] = {
    {"ll", 0.5, 0.92 / 3.8, "6.6 us", "0 us", "0 us", "20 GB/s", "4096 B"},
    {"ll128", 0.92, 0.92 * 120.0 / 128.0, "14 us", "1.3 us", "1.3 us", "36.7 GB/s", "5120 B"},
    {"simple", 1.0, 0.92, "8.4 us", "2.8 us", "11.3 us", "40 GB/s", "32768 B"},
};

void add_protocol(ParamTable& t, const Defaults& d) {
  const std::string p = d.name;
  auto ratio = [&](const char* key, double def, const char* help) {
    t.push_back({.name = p + "_" + key, .kind = ParamKind::quantity, .dim = Dim::ratio, .def = def, .min = 0,
                 .max = 1, .min_exclusive = true, .help = help});
  };
  auto time = [&](const char* key, const char* def, const char* help) {
    t.push_back({.name = p + "_" + key, .kind = ParamKind::quantity, .dim = Dim::time, .def = def, .min = 0,
                 .help = help});
  };
  ratio("fraction", d.ring_fraction, "share of the link bandwidth the protocol delivers on rings (tuning.cc)");
  ratio("tree_fraction", d.tree_fraction, "share of the link bandwidth the protocol delivers on trees (tuning.cc)");
  time("base_latency", d.base, "fixed cost of one collective (tuning.cc baseLat)");
  time("nvlink_step_latency", d.nvlink_step, "per-step cost inside a node beyond the links' latency (hwLat - LL)");
  time("net_step_latency", d.net_step, "per-step cost of a step between nodes beyond the links' latency");
  t.push_back({.name = p + "_channel_bandwidth", .kind = ParamKind::quantity, .dim = Dim::bandwidth,
               .def = d.channel_bw, .min = 0, .min_exclusive = true,
               .help = "most one channel (one CTA) moves per direction"});
  t.push_back({.name = p + "_channel_grain", .kind = ParamKind::quantity, .dim = Dim::data, .def = d.grain, .min = 1,
               .help = "buffer per channel below which NCCL runs fewer channels (nthreads x threadThreshold)"});
}

// NVLink SHARP's figures (protocol.hpp): tuning.cc's names in the help.
void add_nvls(ParamTable& t) {
  t.push_back({.name = "nvls_efficiency", .kind = ParamKind::quantity, .dim = Dim::ratio, .def = 0.85, .min = 0,
               .max = 1, .min_exclusive = true,
               .help = "share of NVLink bandwidth NVLS multimem traffic gets (tuning.cc nvlsEfficiency, Hopper)"});
  t.push_back({.name = "nvls_channels", .kind = ParamKind::integer, .def = 16, .min = 1, .max = 64,
               .help = "NVLS channels; one of them is left out of the bandwidth (NVLS_NCHANNELS_SM90, nvls.cc)"});
  t.push_back({.name = "nvls_latency", .kind = ParamKind::quantity, .dim = Dim::time, .def = "25 us", .min = 0,
               .help = "once per NVLS or NVLS tree collective (tuning.cc hwLat[NVLINK][NVLS][Simple])"});
  t.push_back({.name = "nvls_tree_net_latency", .kind = ParamKind::quantity, .dim = Dim::time, .def = "20.9 us",
               .min = 0, .help = "per network tree level, 2 log2(nodes) of them (hwLat[NET][NVLSTree][Simple])"});
  t.push_back({.name = "nvls_tree_channel_bandwidth_2_nodes", .kind = ParamKind::quantity, .dim = Dim::bandwidth,
               .def = "57.7 GB/s", .min = 0, .min_exclusive = true,
               .help = "NVLS tree busbw per channel on 2 nodes (perChMaxNVLSTreeBws, Hopper N2)"});
  t.push_back({.name = "nvls_tree_channel_bandwidth", .kind = ParamKind::quantity, .dim = Dim::bandwidth,
               .def = "45.5 GB/s", .min = 0, .min_exclusive = true,
               .help = "NVLS tree busbw per channel on more than 2 nodes (perChMaxNVLSTreeBws, Hopper N4)"});
}

}  // namespace

Seconds NvlsCost::tree_latency(int nodes) const {
  int levels = 0;
  for (int x = nodes; x > 1; x >>= 1) ++levels;
  return latency + tree_net_latency * (2.0 * levels);
}

std::string_view protocol_name(Protocol p) {
  switch (p) {
    case Protocol::ll: return "LL";
    case Protocol::ll128: return "LL128";
    case Protocol::simple: return "Simple";
    case Protocol::direct: return "direct";
  }
  return "?";
}

const ParamTable& protocol_params() {
  static const ParamTable table = [] {
    ParamTable t;
    for (const Defaults& d : kDefaults) add_protocol(t, d);
    t.push_back({.name = "max_channels", .kind = ParamKind::integer, .def = 32, .min = 1, .max = 64,
                 .help = "channels NCCL opens (MAXCHANNELS 64; 32 on NVLink systems)"});
    add_nvls(t);
    return t;
  }();
  return table;
}

ProtocolSet ProtocolSet::nccl(const Params& params) {
  ProtocolSet s;
  s.max_channels = static_cast<int>(params.integer("max_channels"));
  const Protocol ids[] = {Protocol::ll, Protocol::ll128, Protocol::simple};
  for (std::size_t i = 0; i < std::size(kDefaults); ++i) {
    const std::string p = kDefaults[i].name;
    ProtocolCost c;
    c.protocol = ids[i];
    c.ring_fraction = params.number(p + "_fraction");
    c.tree_fraction = params.number(p + "_tree_fraction");
    c.base_latency = params.get<Seconds>(p + "_base_latency");
    c.nvlink_step_latency = params.get<Seconds>(p + "_nvlink_step_latency");
    c.net_step_latency = params.get<Seconds>(p + "_net_step_latency");
    c.channel_bandwidth = params.get<BytesPerSecond>(p + "_channel_bandwidth");
    c.channel_grain = params.get<Bytes>(p + "_channel_grain");
    c.grain_scales_with_ranks = ids[i] == Protocol::ll;  // tuning.cc: threadThresholds[RING][LL] *= nRanks
    s.protocols.push_back(c);
  }
  s.nvls.efficiency = params.number("nvls_efficiency");
  s.nvls.channels = static_cast<int>(params.integer("nvls_channels"));
  s.nvls.latency = params.get<Seconds>("nvls_latency");
  s.nvls.tree_net_latency = params.get<Seconds>("nvls_tree_net_latency");
  s.nvls.tree_channel_bandwidth_2_nodes = params.get<BytesPerSecond>("nvls_tree_channel_bandwidth_2_nodes");
  s.nvls.tree_channel_bandwidth = params.get<BytesPerSecond>("nvls_tree_channel_bandwidth");
  return s;
}

ProtocolSet ProtocolSet::nccl() {
  static const Params defaults = [] {
    Diagnostics diag;
    Params p = resolve_params(protocol_params(), nlohmann::json::object(), "", diag);
    HCSIM_ASSERT(diag.ok(), "protocol defaults do not resolve");
    return p;
  }();
  return nccl(defaults);
}

ProtocolSet ProtocolSet::ideal() {
  ProtocolSet s;
  s.protocols.push_back({});
  return s;
}

int ProtocolSet::channels(const ProtocolCost& p, Bytes bytes, int ranks) const {
  if (p.channel_bandwidth.value() <= 0) return max_channels;
  const double grain = p.channel_grain.value() * (p.grain_scales_with_ranks ? ranks : 1);
  const double fit = std::floor(bytes.value() / grain);
  return static_cast<int>(std::clamp(fit, 1.0, static_cast<double>(max_channels)));
}

const ProtocolCost* ProtocolSet::find(Protocol p) const {
  for (const ProtocolCost& c : protocols)
    if (c.protocol == p) return &c;
  return nullptr;
}

}  // namespace hcsim
