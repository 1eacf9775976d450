#pragma once
// The resolved scenario (style principle 9): the scenario as the parser understood it, in
// the scenario's own input shape, so that `hcsim run` accepts it and gives the same report.
// Every value is stated: each pool and the model as its preset (if any) with every resolved
// parameter as an override, the topology and its links with every parameter, the strategy
// with its defaults, layer split, stage placement, FSDP keys and codec parameters, the
// simulation and output settings; quantities in SI. "hcsim_version" (informational) says
// which hcsim wrote it.

#include <nlohmann/json.hpp>

#include "scenarios/scenario.hpp"
#include "sim/core/params.hpp"

namespace hcsim {

// What the parser resolved beside the typed scenario: the checked sections and the
// resolved descriptions of the model, topology (links included), FSDP block and codecs.
struct ResolvedParts {
  const Params* workload = nullptr;
  const Params* strategy = nullptr;
  const Params* simulation = nullptr;
  const Params* outputs = nullptr;
  nlohmann::json model, topology, fsdp, compression;
};

nlohmann::json resolved_scenario(const Scenario& sc, const ResolvedParts& parts);

}  // namespace hcsim
