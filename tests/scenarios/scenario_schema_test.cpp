// The scenario's JSON Schema (scenarios/scenario_schema.cpp, `hcsim schema`), as an editor
// would use it: it accepts every shipped run scenario, and of the bad-scenario catalogue
// (tests/bad_scenarios/) it rejects exactly the mistakes a schema can see on its own (an
// unknown key, preset or choice, a wrong type, a unit of another dimension, a number out of
// its declared range); the others need cross-field rules or the models (docs/robustness.md).
// Validated with the JSON Schema subset of tests/report/json_schema_subset.hpp.
#include <algorithm>
#include <filesystem>
#include <regex>
#include <set>
#include <string>
#include <vector>

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "scenarios/scenario.hpp"
#include "scenarios/sections.hpp"
#include "sim/core/quantity.hpp"
#include "tests/report/json_schema_subset.hpp"

namespace hcsim {
namespace {

namespace fs = std::filesystem;
using json = nlohmann::json;

const testing::SchemaSubset& schema() {
  static const testing::SchemaSubset s(sections::scenario_schema());
  return s;
}

std::vector<fs::path> json_files(const fs::path& root) {
  std::vector<fs::path> files;
  for (const auto& e : fs::recursive_directory_iterator(root))
    if (e.is_regular_file() && e.path().extension() == ".json") files.push_back(e.path());
  std::sort(files.begin(), files.end());
  return files;
}

TEST(ScenarioSchema, AcceptsEveryShippedRunScenario) {
  int n = 0;
  for (const auto& f : json_files(fs::path(HCSIM_SOURCE_DIR) / "scenarios")) {
    const json doc = read_json_file(f.string());
    // Sweeps, searches, checks, suites' expected.json, and cluster studies (no workload).
    if (!doc.is_object() || !doc.contains("cluster") || !doc.contains("workload")) continue;
    ++n;
    for (const auto& e : schema().validate(doc)) ADD_FAILURE() << f.string() << ": " << e;
  }
  EXPECT_GE(n, 20);
}

// The catalogue's cases the schema rejects. The others: JSON syntax and file limits (not a
// document to validate), and rules across fields or needing the models: dp*tp*pp against the
// devices, divisibility, a preset of another type than the one given, pool names, memory,
// the task bound, a model's own parameter rules, quantities outside the physical range.
const std::set<std::string> kRejectedBySchema = {
    "cluster_pue_below_one.json", "cluster_pue_negative.json", "cluster_pue_string.json",
    "cluster_unknown_key.json", "cxl_capacity_zero.json", "cxl_link_bandwidth_as_size.json",
    "cxl_memory_devices_zero.json", "link_bandwidth_as_size.json", "link_bandwidth_zero.json",
    "link_efficiency_zero.json", "link_energy_wrong_unit.json", "link_latency_garbage.json",
    "link_no_preset_no_type.json", "link_not_object.json", "link_preset_number.json",
    "link_type_missing_bandwidth.json", "link_unknown_key.json", "link_unknown_preset.json",
    "link_unknown_type.json", "model_head_dim_on_gpt.json", "model_head_dim_zero.json",
    "model_hidden_huge.json", "model_million_layers.json", "model_missing.json",
    "model_negative_seq_len.json", "model_no_preset_no_type.json", "model_override_unknown_key.json",
    "model_type_missing_dims.json", "model_unknown_preset.json", "model_unknown_type.json",
    "model_zero_layers.json", "outputs_format_unknown.json", "outputs_trace_number.json",
    "outputs_unknown_key.json", "pool_count_billion.json", "pool_count_bool.json", "pool_count_fraction.json",
    "pool_count_huge_float.json", "pool_count_int64_min.json", "pool_count_missing.json",
    "pool_count_negative.json", "pool_count_null.json", "pool_count_string.json", "pool_count_uint64_max.json",
    "pool_count_zero.json", "pool_name_number.json", "pool_no_preset_no_type.json", "pool_not_object.json",
    "pool_override_bandwidth_as_size.json", "pool_override_capacity_as_bandwidth.json",
    "pool_override_efficiency_above_one.json", "pool_override_efficiency_percent_string.json",
    "pool_override_garbage_quantity.json", "pool_override_inf_string.json", "pool_override_nan_string.json",
    "pool_override_negative_capacity.json", "pool_override_rate_wrong_unit.json",
    "pool_override_sm_count_zero.json", "pool_override_unknown_key.json", "pool_override_unknown_prefix.json",
    "pool_overrides_not_object.json", "pool_preset_number.json", "pool_second_unknown_preset.json",
    "pool_type_missing_required.json", "pool_unknown_key.json", "pool_unknown_preset.json",
    "pool_unknown_type.json", "pools_empty.json", "pools_missing.json", "pools_not_array.json",
    "simulation_algorithm_unknown.json", "simulation_flow_schedule_unknown.json", "simulation_max_tasks_huge.json",
    "simulation_max_tasks_zero.json",
    "simulation_mode_ok_max_tasks_bad.json", "simulation_mode_unknown.json", "simulation_symmetry_string.json",
    "simulation_unknown_key.json", "stage_pools_index_not_name.json", "stage_pools_not_array.json",
    "strategy_dp_bucket_wrong_unit.json", "strategy_dp_bucket_zero.json", "strategy_dp_negative.json",
    "strategy_dp_ok_tp_bad.json", "strategy_etp_zero.json", "strategy_fsdp_prefetch_negative.json",
    "strategy_fsdp_unknown_key.json", "strategy_fsdp_unknown_preset.json", "strategy_interleave_too_large.json",
    "strategy_layers_per_stage_not_array.json", "strategy_layers_per_stage_string.json",
    "strategy_layers_per_stage_zero.json", "strategy_moe_dispatch_unknown.json",
    "strategy_moe_fp8_dispatch_string.json", "strategy_null.json",
    "strategy_pp_string.json",
    "strategy_pp_too_large.json", "strategy_recompute_unknown.json", "strategy_schedule_unknown.json",
    "strategy_sequence_parallel_string.json", "strategy_tp_too_large.json", "strategy_tp_zero.json",
    "strategy_unknown_key.json", "strategy_zero_stage_four.json", "top_array.json", "top_cluster_null.json",
    "top_description_array.json", "top_empty_object.json", "top_huge_string.json", "top_missing_cluster.json",
    "top_missing_strategy.json", "top_missing_workload.json", "top_name_number.json", "top_null.json",
    "top_number.json", "top_outputs_array.json", "top_simulation_not_object.json", "top_string.json",
    "top_unknown_key.json", "topology_fabric_unknown.json", "topology_gpus_per_node_zero.json",
    "topology_missing.json", "topology_no_type.json", "topology_not_object.json",
    "topology_oversubscription_below_one.json", "topology_switch_latency_wrong_unit.json",
    "topology_switch_radix_one.json", "topology_type_number.json", "topology_unknown_param.json",
    "topology_unknown_type.json", "torus_dims_string.json", "torus_links_per_neighbour_zero.json",
    "torus_missing_link.json", "torus_wrap_string.json", "workload_global_batch_above_range.json",
    "workload_global_batch_missing.json", "workload_global_batch_string.json",
    "workload_global_batch_zero.json", "workload_micro_batch_negative.json", "workload_micro_batch_zero.json",
    "workload_optimizer_unknown.json", "workload_precision_unknown.json", "workload_unknown_key.json",
};

TEST(ScenarioSchema, RejectsExactlyTheCataloguedMistakesASchemaCanExpress) {
  const fs::path dir = fs::path(HCSIM_SOURCE_DIR) / "tests" / "bad_scenarios";
  std::set<std::string> rejected;
  int documents = 0;
  for (const auto& f : json_files(dir)) {
    if (f.filename() == "expected.json") continue;
    json doc;
    try {
      doc = read_json_file(f.string());
    } catch (const InputError&) {
      continue;  // not a JSON document: hcsim's reader refuses it before any schema applies
    }
    ++documents;
    if (!schema().validate(doc).empty()) rejected.insert(f.filename().string());
  }
  for (const auto& r : rejected) EXPECT_TRUE(kRejectedBySchema.count(r)) << r << " is rejected but not listed";
  for (const auto& r : kRejectedBySchema) EXPECT_TRUE(rejected.count(r)) << r << " is listed but accepted";
  RecordProperty("rejected", static_cast<int>(rejected.size()));
  RecordProperty("documents", documents);
}

TEST(ScenarioSchema, DescribesPresetsTypesAndOverrides) {
  const json s = sections::scenario_schema();
  const json& pool = s["properties"]["cluster"]["properties"]["pools"]["items"];
  EXPECT_THAT(pool["properties"]["preset"]["enum"].get<std::vector<json>>(), ::testing::Contains(json("nvidia-a100-80gb-sxm")));
  EXPECT_FALSE(pool["properties"]["overrides"]["additionalProperties"].get<bool>());
  EXPECT_THAT(s["$defs"]["link"]["properties"]["preset"]["enum"].get<std::vector<std::string>>(),
              ::testing::Contains("ib-hdr"));
  EXPECT_EQ(s["properties"]["cluster"]["properties"]["topology"]["properties"]["nic"]["$ref"], "#/$defs/link");
  const json base = read_json_file(std::string(HCSIM_SOURCE_DIR) + "/scenarios/quickstart.json");
  auto rejects = [&](const std::string& ptr, const json& v) {
    json d = base;
    d[json::json_pointer(ptr)] = v;
    return !schema().validate(d).empty();
  };
  EXPECT_FALSE(rejects("/cluster/pools/0/overrides/memory_bandwidth", "2 TB/s"));
  EXPECT_TRUE(rejects("/cluster/pools/0/overrides/memory_bandwidth", "2 TB"));   // a size for a bandwidth
  EXPECT_TRUE(rejects("/cluster/pools/0/overrides/memory_bandwith", "2 TB/s"));  // an unknown key
  EXPECT_TRUE(rejects("/cluster/pools/0/preset", "nvidia-a100"));
  EXPECT_TRUE(rejects("/cluster/topology/nic/preset", "ib-hdx"));
  EXPECT_FALSE(rejects("/cluster/topology/nic/bandwidth", "25 GB/s"));
  EXPECT_TRUE(rejects("/cluster/topology/gpus_per_nod", 8));
  EXPECT_TRUE(rejects("/strategy/schedule", "zero-bubble"));
  EXPECT_TRUE(rejects("/strategy/dp", 0));
  EXPECT_TRUE(rejects("/simulation/mode", "fast"));
  EXPECT_TRUE(rejects("/strategy/compression", json{{"dp", {{"type", "int4"}}}}));
  EXPECT_FALSE(rejects("/strategy/compression", json{{"dp", {{"type", "fp16"}}}}));
  EXPECT_FALSE(rejects("/$schema", "https://example.org/hcsim-scenario.json"));
  EXPECT_TRUE(rejects("/$schema", 1));
}

// The unit pattern accepts what parse_quantity accepts, and what it refuses it refuses.
TEST(ScenarioSchema, QuantityPatternAgreesWithTheParser) {
  struct Case { Dim dim; const char* text; };
  const std::vector<Case> cases = {
      {Dim::bandwidth, "600 GB/s"}, {Dim::bandwidth, "25 Gb/s"},  {Dim::bandwidth, "600 GB"},
      {Dim::bandwidth, "1e3 B/s"},  {Dim::bandwidth, ".5TB/s"},   {Dim::bandwidth, "fast"},
      {Dim::time, "1.2 us"},        {Dim::time, "3 min"},         {Dim::time, "3 kmin"},
      {Dim::time, "2 µs"},          {Dim::data, "80 GiB"},        {Dim::data, "80 GiB/s"},
      {Dim::power, "700 W"},        {Dim::power, "700 J"},        {Dim::ratio, "85 %"},
      {Dim::ratio, "85"},           {Dim::flop_rate, "19.5 TFLOPS"}, {Dim::energy_per_byte, "5 pJ/bit"},
      {Dim::data, " 12 MB "},       {Dim::data, "12 M B"},        {Dim::data, "-"},
  };
  for (const auto& c : cases) {
    const std::regex re(quantity_pattern(c.dim), std::regex::ECMAScript);
    EXPECT_EQ(std::regex_search(std::string(c.text), re), parse_quantity(std::string_view(c.text), c.dim).value.has_value())
        << c.text;
  }
}

}  // namespace
}  // namespace hcsim
