#include "sim/cluster/trace_params.hpp"

#include "sim/core/params.hpp"

namespace hcsim {

namespace {

const ParamTable& mapping_table() {
  static const ParamTable t{
      {.name = "workloads", .kind = ParamKind::object, .help = "the job list's workloads, copied as they are"},
      {.name = "rules",
       .kind = ParamKind::array,
       .help = "[{\"max_gpus\": N, \"workload\": name}, ...]: a job of up to N GPUs runs that workload; first match"},
      {.name = "gpus_per_node",
       .kind = ParamKind::integer,
       .def = 8,
       .min = 1,
       .max = 4096,
       .help = "sizes above a node are rounded up to whole nodes"},
      {.name = "pool", .kind = ParamKind::string, .help = "the pool each job's measured duration is work on"},
      {.name = "size_scale",
       .kind = ParamKind::integer,
       .def = 1,
       .min = 1,
       .max = 4096,
       .help = "every trace job's GPU count times this (a cluster larger than the trace's)"},
      {.name = "duration_scale",
       .kind = ParamKind::number,
       .def = 1.0,
       .min = 0,
       .max = 1e6,
       .min_exclusive = true,
       .help = "every trace job's duration times this"},
      {.name = "pool_by_gpu_type",
       .kind = ParamKind::object,
       .def = nlohmann::json::object(),
       .help = "trace GPU type -> pool, over `pool`"},
  };
  return t;
}

const ParamTable& rule_table() {
  static const ParamTable t{
      {.name = "max_gpus", .kind = ParamKind::integer, .min = 1, .max = 1e6, .help = "largest job of this rule"},
      {.name = "workload", .kind = ParamKind::string, .help = "a key of workloads"},
  };
  return t;
}

}  // namespace

TraceJobListParams parse_trace_mapping(const nlohmann::json& doc) {
  Diagnostics diag;
  Params p = resolve_params(mapping_table(), doc, "", diag);
  diag.throw_if_any();
  TraceJobListParams out;
  out.workloads = p.raw("workloads");
  out.gpus_per_node = static_cast<std::uint32_t>(p.integer("gpus_per_node"));
  out.pool = p.string("pool");
  out.size_scale = static_cast<std::uint32_t>(p.integer("size_scale"));
  out.duration_scale = p.number("duration_scale");
  const auto& rules = p.raw("rules");
  for (std::size_t i = 0; i < rules.size(); ++i) {
    Params r = resolve_params(rule_table(), rules[i], json_child("/rules", i), diag);
    if (r.has("max_gpus") && r.has("workload"))
      out.rules.push_back({static_cast<std::uint32_t>(r.integer("max_gpus")), r.string("workload")});
  }
  for (const auto& [type, pool] : p.raw("pool_by_gpu_type").items()) {
    if (!pool.is_string())
      diag.error(json_child("/pool_by_gpu_type", type), "expected a pool name");
    else
      out.pool_by_gpu_type[type] = pool.get<std::string>();
  }
  diag.throw_if_any();
  return out;
}

}  // namespace hcsim
