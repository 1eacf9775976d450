#pragma once
// What a sweep is checked for before any point runs (docs/sweeps.md, docs/robustness.md):
// every pointer an axis or derived value sets names a field of the scenario, or of the
// cluster file for a cluster sweep (else every point would fail the same way and the sweep
// would report them all "infeasible"), and the warnings of its scenarios (implausible
// values), gathered once.

#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "sim/core/error.hpp"
#include "sim/sweep/sweep_spec.hpp"

namespace hcsim::sweep {

// Why setting `ptr` to `value` in `base` names no scenario field, with the nearest valid
// pointer when one is close; "" when it does. A pointer is valid when it is in the base or
// in the scenario schema; where the schema leaves an object open (device overrides, the
// topology), the base with the value set is parsed and its unknown keys are asked.
std::string unknown_pointer(const nlohmann::json& base, const std::string& ptr, const nlohmann::json& value);

// The same for a cluster sweep: `ptr` names a field when it is in the base cluster file or
// when the base with `choice` (the first axis choice that sets it, all its assignments)
// parses with no unknown key at or above it (the cluster file, then its scheduler's
// parameters, which depend on the scheduler type the same choice may set).
std::string unknown_cluster_pointer(const nlohmann::json& base, const std::string& ptr,
                                    const nlohmann::ordered_json& choice);

// An error at each axis (its path in the sweep file) and derived value whose pointer is unknown.
void check_sweep_pointers(const SweepSpec& spec, Diagnostics& d);

// The warnings of the sweep's scenarios, each once: those of the first point that parses
// for each choice of every axis, in sweep order (at most 256 points parsed, among the
// first 4096).
std::vector<Issue> sweep_warnings(const SweepSpec& spec, const std::vector<SweepPoint>& points);

}  // namespace hcsim::sweep
