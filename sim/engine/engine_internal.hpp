#pragma once
// Inside the engine only: the in-process SimGrid run (one per process).
#include "engine.hpp"

namespace hcsim::engine {
EngineResult simulate_in_process(const TopologyGraph& topo, const TaskGraph& graph, const EngineOptions& opt);
}
