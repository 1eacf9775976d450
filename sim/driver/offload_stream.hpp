#pragma once
// Optimizer-state offload to a memory pool (strategy.offload = "pool", workloads/offload.hpp)
// as the run driver and the search's fast path cost and check it: one copy of both.
//
// Device d of the layout keeps its optimizer state on memory node d mod M (the pool's M
// memory devices shared round-robin, so a uniform cluster loads them evenly). In analytical
// mode every device streams its stage's state shard at once, each on its route to its
// memory node; the closed form of those shared streams (topologies/transfer_time.hpp) is
// each stage's stream time (the stages of a pipeline finish close together).

#include <optional>
#include <vector>

#include "sim/core/error.hpp"
#include "sim/core/units.hpp"
#include "topologies/routing.hpp"
#include "workloads/layout.hpp"

namespace hcsim {

// Memory node of each device of `layout`: d mod M, M = memory_nodes(topology).size().
std::vector<std::uint32_t> offload_endpoints(const TopologyGraph& topology, const Layout& layout);

// One stream's time when every device of `layout` moves the state of its stage
// (`state[stage]`, bytes per device) to or from its memory node at once.
Seconds offload_stream_time(const TopologyGraph& topology, const Router& router, const Layout& layout,
                            const std::vector<Bytes>& state);

// The pool holds every device's offloaded state: the issue at /strategy/offload when it
// does not, none when it does.
std::optional<Issue> pool_shortfall(const TopologyGraph& topology, const Layout& layout,
                                    const std::vector<Bytes>& state);

}  // namespace hcsim
