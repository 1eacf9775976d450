#pragma once
// Inside the engine only: the in-process SimGrid run (one per process).
#include <functional>

#include "engine.hpp"

namespace hcsim::engine {
// `deliver`, when set, receives the result while the engine still stands, so that a forked
// child can send it and _exit without tearing the engine down (at scale, freeing the
// platform and the route caches is a visible part of a run).
EngineResult simulate_in_process(const TopologyGraph& topo, const TaskGraph& graph, const EngineOptions& opt,
                                 const std::function<void(const EngineResult&)>& deliver = {});
}
