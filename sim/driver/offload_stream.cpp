#include "sim/driver/offload_stream.hpp"

#include <fmt/format.h>

#include "sim/core/quantity.hpp"
#include "topologies/transfer_time.hpp"

namespace hcsim {

std::vector<std::uint32_t> offload_endpoints(const TopologyGraph& topology, const Layout& layout) {
  const auto mems = static_cast<std::uint32_t>(memory_nodes(topology).size());
  HCSIM_ASSERT(mems > 0, "offload to a pool without memory nodes passed validation");
  std::vector<std::uint32_t> out;
  for (std::int64_t d = 0; d < layout.devices(); ++d) out.push_back(static_cast<std::uint32_t>(d) % mems);
  return out;
}

Seconds offload_stream_time(const TopologyGraph& topology, const Router& router, const Layout& layout,
                            const std::vector<Bytes>& state) {
  const std::vector<int> mem = memory_nodes(topology);
  const std::vector<std::uint32_t> endpoint = offload_endpoints(topology, layout);
  std::vector<NodeTransfer> reads;
  reads.reserve(endpoint.size());
  for (std::size_t d = 0; d < endpoint.size(); ++d) {
    const auto s = static_cast<std::size_t>(layout.stage_of(static_cast<int>(d)));
    reads.push_back({mem[endpoint[d]], topology.device_node(static_cast<int>(d)), state[s]});
  }
  return concurrent_transfer_time(router, reads);
}

std::optional<Issue> pool_shortfall(const TopologyGraph& topology, const Layout& layout,
                                    const std::vector<Bytes>& state) {
  Bytes need, cap;
  for (int s = 0; s < layout.pp; ++s) need += state[static_cast<std::size_t>(s)] * layout.per_stage();
  for (int n : memory_nodes(topology)) cap += topology.media(n).capacity;
  if (need <= cap) return std::nullopt;
  return Issue{"/strategy/offload",
               fmt::format("the optimizer state of all {} devices, {}, does not fit in the pool's {}, short by {}; "
                           "give the pool more or larger memory devices (cluster.topology: memory_devices, "
                           "capacity), or use ZeRO to shard the state",
                           layout.devices(), format_quantity(need.value(), Dim::data),
                           format_quantity(cap.value(), Dim::data), format_quantity((need - cap).value(), Dim::data))};
}

}  // namespace hcsim
