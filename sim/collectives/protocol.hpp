#pragma once
// NCCL's three wire protocols and its channels, as its tuning model sees them
// (NVIDIA/nccl 2.30.7: src/graph/tuning.cc, src/enqueue.cc, src/include/comm.h).
//
// A protocol p turns the network time of a schedule (cost.hpp: per step the path latency,
// plus the busiest link's load) into a collective's time:
//   T_p = base_p + sum over steps of (path latency + step_latency_p(hw))
//       + max(bandwidth term, V / (c x channel_bandwidth_p)) / fraction_p(family)
// with V the most bytes one rank sends (summed over the steps) and c the channels NCCL
// runs: the most, up to max_channels, that leave every channel at least
// channel_grain_p of the buffer (enqueue.cc: nBytes >= nc x nthreads x threadThreshold;
// the ring LL grain scales with the ranks, as NCCL's does). hw is "net" for a step with
// a transfer between nodes and "nvlink" otherwise. Defaults:
//   fraction (ring family)  LL 0.5, LL128 0.92 (120 of 128 bytes), Simple 1     (tuning.cc)
//   fraction (tree family)  LL 0.92/3.8, LL128 0.92 x 120/128, Simple 0.92      (tuning.cc)
//   base latency            LL 6.6 us, LL128 14 us, Simple 8.4 us               (baseLat, ring)
//   step latency            NCCL's hwLat (ring) less its LL figure, which the link presets'
//                           latencies already carry (models/link/presets.cpp):
//                           NVLink LL 0, LL128 1.3, Simple 2.8 us; net LL 0, LL128 1.3,
//                           Simple 11.3 us (hwLat NVLINK 0.6/1.9/3.4, NET 2.7/4.0/14.0)
//   channel bandwidth       LL128 36.7 GB/s (perChMaxRingLL128Bw, Hopper), Simple 40 GB/s and
//                           LL 20 GB/s (speedArrayIntra's top figure, search.cc; LL half of it)
//   channel grain           512 threads x 8 B (LL, x ranks), 640 x 8 B (LL128), 512 x 64 B (Simple)
//   max channels            32
// NVLink SHARP (NCCL's NVLS on one node, NVLS_TREE across nodes) runs Simple only, with its
// own figures (NvlsCost, tuning.cc):
//   efficiency              nvlsEfficiency (Hopper 0.85) x (nChannels - 1)/nChannels, 16 channels
//                           (NVLS_NCHANNELS_SM90, src/transport/nvls.cc): the share of the
//                           NVLink bandwidth the switch's multimem traffic gets
//   latency                 hwLat[NVLINK][NVLS, NVLS_TREE][Simple] 25 us, once (baseLat is 0)
//   tree net latency        hwLat[NET][NVLS_TREE][Simple] 20.9 us per tree level, 2 log2(nodes) levels
//   tree channel bandwidth  perChMaxNVLSTreeBws (Hopper) 57.7 GB/s on 2 nodes, 45.5 GB/s beyond
// A "direct" protocol (fraction 1, no latency, no channel limit) stands for no protocol:
// the algorithms of non-NCCL fabrics (torus rings on TPU ICI) and the closed-form tests.

#include <array>
#include <string_view>
#include <vector>

#include "sim/core/params.hpp"
#include "sim/core/units.hpp"

namespace hcsim {

enum class Protocol : std::uint8_t { ll, ll128, simple, direct };
std::string_view protocol_name(Protocol p);

// Which fraction table an algorithm's busbw follows in NCCL's tuning model; nvls: NVLink
// SHARP, Simple only, with NvlsCost's latency and channel limit.
enum class ProtocolFamily : std::uint8_t { ring, tree, nvls };

// NVLS figures of tuning.cc; the defaults (efficiency 1, no latency, no limit) are ideal().
struct NvlsCost {
  double efficiency = 1;  // nvlsEfficiency, before the (channels - 1)/channels of tuning.cc
  int channels = 0;       // 0: no channel left out, no per-channel limit
  Seconds latency{}, tree_net_latency{};
  BytesPerSecond tree_channel_bandwidth_2_nodes{}, tree_channel_bandwidth{};

  // The share of NVLink bandwidth multimem traffic gets: efficiency x (channels - 1)/channels.
  [[nodiscard]] double bandwidth_share() const {
    return channels > 1 ? efficiency * (channels - 1) / channels : efficiency;
  }
  // NVLS_TREE's latency on `nodes` nodes: latency + 2 floor(log2 nodes) x tree_net_latency.
  [[nodiscard]] Seconds tree_latency(int nodes) const;
  // NVLS_TREE's per-channel limit on `nodes` nodes (zero: none).
  [[nodiscard]] BytesPerSecond tree_channel_limit(int nodes) const {
    return nodes <= 2 ? tree_channel_bandwidth_2_nodes : tree_channel_bandwidth;
  }
};

struct ProtocolCost {
  Protocol protocol = Protocol::direct;
  double ring_fraction = 1, tree_fraction = 1;
  Seconds base_latency{}, nvlink_step_latency{}, net_step_latency{};
  BytesPerSecond channel_bandwidth{};  // zero: no per-channel limit
  Bytes channel_grain{};               // buffer per channel below which NCCL drops a channel
  bool grain_scales_with_ranks = false;

  [[nodiscard]] double fraction(ProtocolFamily f) const { return f == ProtocolFamily::tree ? tree_fraction : ring_fraction; }
};

struct ProtocolSet {
  std::vector<ProtocolCost> protocols;  // the candidates, in order of preference on equal time
  int max_channels = 1;
  NvlsCost nvls{};

  // NCCL's LL, LL128 and Simple from `params` (protocol_params(); defaults when omitted).
  static ProtocolSet nccl(const Params& params);
  static ProtocolSet nccl();
  // One "direct" protocol: the network schedule's time alone.
  static ProtocolSet ideal();

  // Channels NCCL runs for a collective of `bytes` per rank on `ranks` ranks.
  [[nodiscard]] int channels(const ProtocolCost& p, Bytes bytes, int ranks) const;
  [[nodiscard]] const ProtocolCost* find(Protocol p) const;
};

// The protocol parameters (ll_*, ll128_*, simple_*, max_channels, nvls_*) with NCCL's defaults.
const ParamTable& protocol_params();

}  // namespace hcsim
