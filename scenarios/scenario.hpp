#pragma once
// A scenario: the cluster (device pools and topology), the workload (transformer model,
// batch, precision), the strategy (parallel layout, pipeline schedule, recomputation,
// ZeRO), simulation settings and outputs, parsed from one JSON file, checked strictly
// (unknown keys, types, units, ranges, cross-field rules; every problem reported at once
// with its JSON pointer) and resolved into typed values before anything is built.

#include <memory>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "models/compute/compute_device.hpp"
#include "models/energy/node_power.hpp"
#include "topologies/topology.hpp"
#include "workloads/pipeline_schedule.hpp"
#include "workloads/strategy.hpp"
#include "workloads/transformer.hpp"

namespace hcsim {

struct DevicePool {
  std::string name;
  std::string type;    // compute-device registry key
  std::string preset;  // "" when given explicitly
  int count = 0;
  int first_device = 0;
  nlohmann::json params;  // resolved parameters (SI)
  std::shared_ptr<const ComputeDevice> device;  // with attached PIM stacks folded in (models/compute/attached_pim)
  std::string attach_to;  // a PIM pool: the pool whose devices carry these stacks; not in the layout
};

struct SimulationSpec {
  std::string mode = "event";               // analytical | event | flow
  std::string collective_algorithm = "auto";
  bool symmetry = true;
  std::string flow_schedule = "steps";  // flow mode: steps | phases (EngineOptions::flow_phases)
  bool representative_flows = true;     // EngineOptions::representative_flows
  bool check_memory = true;
  bool sm_contention = false;  // EngineOptions::comm_cores (docs/models.md, "SM contention")
  std::int64_t max_tasks = 20'000'000;
};

struct OutputsSpec {
  std::string format = "table";  // table | json
  std::string trace;             // Chrome/Perfetto trace file, "" for none
};

struct Scenario {
  std::string file;
  std::string name;
  std::string description;
  std::vector<DevicePool> pools;
  std::string topology_type;
  TopologyGraph topology;
  double pue = 1.0;
  std::optional<NodePower> node_power;  // cluster.node_power; none: host power not counted
  std::string model_preset;
  TransformerConfig model;
  WorkloadSpec workload;
  StrategySpec strategy;
  std::vector<int> stage_pool;          // pool index per pipeline stage
  std::shared_ptr<const Codec> dp_codec, pp_codec;  // strategy.compression
  std::vector<int> layers_per_stage;    // resolved
  SimulationSpec simulation;
  OutputsSpec outputs;
  nlohmann::json resolved;              // defaults filled, units normalised, hcsim version
  std::vector<Issue> warnings;          // legal but implausible input, in parse order (docs/robustness.md)

  [[nodiscard]] int device_count() const;
  [[nodiscard]] const DevicePool& pool_of_device(int device) const;
  [[nodiscard]] const PipelineSchedule& schedule() const;
  [[nodiscard]] Layout layout() const { return strategy.layout(); }
};

// What the layout rules (workloads/layout.hpp) read of a scenario.
LayoutRequest layout_request(const Scenario& sc);
// Two pools of one device model (same preset, same resolved parameters): stages on them
// split the layers evenly (else by device speed).
bool same_device_model(const DevicePool& a, const DevicePool& b);
// The compute pools in device order (attached PIM pools hold no layout devices); with
// `index`, the position in sc.pools of each.
std::vector<PoolSpan> compute_pool_spans(const Scenario& sc, std::vector<int>* index = nullptr);

// Registers every built-in family (devices, links, topologies, models, schedules).
void register_builtins();

// Reads FILE, applies "--set /json/pointer=value" overrides, parses and validates.
// Throws InputError (with the file name) listing every problem.
Scenario load_scenario(const std::string& file, const std::vector<std::string>& overrides = {});
Scenario parse_scenario(const nlohmann::json& doc, const std::string& file = "");
// The cluster section alone (pools, pue, node power, topology), checked as in a scenario,
// its paths under /cluster: the shared cluster of `hcsim cluster` (sim/cluster/).
Scenario parse_cluster_section(const nlohmann::json& cluster, const std::string& file = "");

// Parses a JSON document (comments allowed), or a YAML one for a .yaml/.yml file
// (scenarios/yaml_io.hpp), reporting syntax errors with line and column.
nlohmann::json read_json_file(const std::string& file);
// "/a/b=value": value parsed as JSON when it is valid JSON, else taken as a string.
void apply_override(nlohmann::json& doc, const std::string& assignment);

}  // namespace hcsim
