#include "scenarios/resolved.hpp"

#include "hcsim/version.hpp"

namespace hcsim {

nlohmann::json resolved_scenario(const Scenario& sc, const ResolvedParts& parts) {
  nlohmann::json r;
  r["hcsim_version"] = kVersion;
  r["name"] = sc.name;
  r["description"] = sc.description;
  nlohmann::json pools = nlohmann::json::array();
  for (const auto& p : sc.pools) {
    nlohmann::json pool = {{"name", p.name}, {"type", p.type}, {"overrides", p.params}, {"count", p.count}};
    if (!p.preset.empty()) pool["preset"] = p.preset;
    if (!p.attach_to.empty()) pool["attach_to"] = p.attach_to;
    pools.push_back(std::move(pool));
  }
  r["cluster"]["pools"] = std::move(pools);
  r["cluster"]["topology"] = parts.topology;
  r["cluster"]["pue"] = sc.pue;
  if (sc.node_power) {
    nlohmann::json np = {{"idle", sc.node_power->idle.value()}, {"max", sc.node_power->max.value()},
                         {"devices_per_node", sc.node_power->devices_per_node}};
    if (!sc.node_power->preset.empty()) np["preset"] = sc.node_power->preset;
    r["cluster"]["node_power"] = std::move(np);
  }
  r["workload"] = parts.workload->json();
  r["workload"]["model"] = parts.model;
  r["strategy"] = parts.strategy->json();
  r["strategy"]["layers_per_stage"] = sc.layers_per_stage;
  nlohmann::json stage_pools = nlohmann::json::array();
  for (int p : sc.stage_pool) stage_pools.push_back(sc.pools[static_cast<std::size_t>(p)].name);
  r["strategy"]["stage_pools"] = std::move(stage_pools);
  r["strategy"]["fsdp"] = sc.strategy.zero == 3 ? parts.fsdp : nlohmann::json();
  r["strategy"]["compression"] = parts.compression.empty() ? nlohmann::json() : parts.compression;
  r["simulation"] = parts.simulation->json();
  r["outputs"] = parts.outputs->json();
  return r;
}

}  // namespace hcsim
