// Scenario parsing and validation: sections resolved against their declarations, then the
// cross-field rules (layout = device count, divisibility, batch, placement), then the
// topology is built. Every problem is collected before InputError is thrown.
#include <algorithm>
#include <numeric>

#include <fmt/format.h>

#include "fsdp.hpp"
#include "models/compute/attached_pim.hpp"
#include "models/link/link.hpp"
#include "precision.hpp"
#include "preset_ref.hpp"
#include "resolved.hpp"
#include "scenario.hpp"
#include "sections.hpp"
#include "topologies/transfer_time.hpp"
#include "workloads/stage_layout.hpp"
#include "workloads/step_plan.hpp"

namespace hcsim {

namespace {

using scenario_detail::build_ref;
using sections::kMaxDevices;

struct Parser {
  const std::string& file;
  Diagnostics diag;
  Scenario sc;

  // Whether the last section resolved without a problem: a key that failed its check is
  // absent from the resolved values, so only a clean section is read into typed fields.
  bool last_clean = true;
  ResolvedParts res;  // what the resolved scenario states beside the typed values

  Params section(const ParamTable& t, const nlohmann::json& v, const std::string& path) {
    const std::size_t before = diag.issues().size();
    Params p = resolve_params(t, v, path, diag);
    last_clean = diag.issues().size() == before;
    return p;
  }

  void pools(const nlohmann::json& arr) {
    if (arr.empty()) { diag.error("/cluster/pools", "at least one device pool is required"); return; }
    int first = 0;
    for (std::size_t i = 0; i < arr.size(); ++i) {
      const std::string path = json_child("/cluster/pools", i);
      Params p = section(sections::pool(), arr[i], path);
      // A preset or type that failed its own check is absent: "give one" would be noise.
      const bool named = last_clean || p.has("preset") || p.has("type");
      if (!p.has("count")) continue;
      DevicePool pool;
      pool.name = p.has("name") ? p.string("name") : fmt::format("pool{}", i);
      pool.count = static_cast<int>(p.integer("count"));
      pool.first_device = first;
      if (p.has("attach_to")) {
        pool.attach_to = p.string("attach_to");
        first -= pool.count;  // attached stacks are not devices of the layout
      }
      if (first > kMaxDevices - pool.count) {
        diag.error(json_child(path, "count"), fmt::format("the pools hold more than {} devices in total", kMaxDevices));
        return;
      }
      first += pool.count;
      if (std::any_of(sc.pools.begin(), sc.pools.end(), [&](const DevicePool& q) { return q.name == pool.name; }))
        diag.error(json_child(path, "name"), "pool name \"" + pool.name + "\" used twice");
      if (!p.json().contains("overrides") || !named) continue;
      auto dev = build_ref(p, path, compute_devices(), compute_presets(), diag, pool.type, pool.preset, pool.params);
      pool.device = std::shared_ptr<const ComputeDevice>(std::move(dev));
      sc.pools.push_back(std::move(pool));
    }
  }

  // A PIM pool's stacks live in the memory of another pool's devices: fold them into
  // that pool's device model so its memory-bound kernels run on the stacks.
  void attach_pim() {
    for (std::size_t i = 0; i < sc.pools.size(); ++i) {
      const DevicePool& pim = sc.pools[i];
      if (pim.attach_to.empty() || !pim.device) continue;
      const std::string path = json_child(json_child("/cluster/pools", i), "attach_to");
      auto host = std::find_if(sc.pools.begin(), sc.pools.end(), [&](const DevicePool& q) {
        return q.name == pim.attach_to && q.attach_to.empty();
      });
      if (host == sc.pools.end() || !host->device) {
        std::vector<std::string> names;
        for (const auto& q : sc.pools)
          if (q.attach_to.empty()) names.push_back(q.name);
        diag.error(path, "no compute pool named \"" + pim.attach_to + "\"; " + valid_list(names));
        continue;
      }
      if (pim.count % host->count != 0) {
        diag.error(json_child(json_child("/cluster/pools", i), "count"),
                   fmt::format("{} stacks cannot be shared evenly by the {} devices of pool \"{}\"", pim.count,
                               host->count, host->name));
        continue;
      }
      host->device = std::make_shared<AttachedPimDevice>(host->device, pim.device, pim.count / host->count);
    }
  }

  void model(const nlohmann::json& v) {
    Params ref = section(sections::model_ref(), v, "/workload/model");
    if (!ref.json().contains("overrides") || (!last_clean && !ref.has("preset") && !ref.has("type"))) return;
    std::string type;
    nlohmann::json resolved;
    auto m = build_ref(ref, "/workload/model", transformer_models(), transformer_presets(), diag, type,
                       sc.model_preset, resolved);
    if (!m) return;
    res.model = {{"type", type}, {"overrides", resolved}};
    if (!sc.model_preset.empty()) res.model["preset"] = sc.model_preset;
    sc.model = m->config;
    const auto& c = sc.model;
    if (c.head_size == 0 && c.hidden % c.heads != 0)
      diag.error("/workload/model/overrides/heads",
                 fmt::format("hidden size {} must be divisible by the number of heads {}", c.hidden, c.heads));
    if (c.heads % c.kv_heads != 0)
      diag.error("/workload/model/overrides/kv_heads",
                 fmt::format("heads {} must be divisible by kv_heads {}", c.heads, c.kv_heads));
    moe_rules(c, resolved);
    mla_rules(c, resolved);
  }

  // Mixture of experts: the MoE keys need experts > 0, k of E experts, an MoE layer at all.
  void moe_rules(const TransformerConfig& c, const nlohmann::json& resolved) {
    const std::string at = "/workload/model/overrides/";
    if (!c.is_moe()) {
      for (const char* k : {"top_k", "expert_ffn_hidden", "shared_ffn_hidden", "moe_first_dense", "moe_every",
                            "capacity_factor", "router_skew", "max_nodes_per_token"})
        if (resolved.is_object() && resolved.contains(k) && !resolved[k].is_null())
          diag.error(at + k, fmt::format("\"{}\" is an MoE setting: it needs \"experts\" > 0", k));
      return;
    }
    if (c.moe.top_k > c.moe.experts)
      diag.error(at + "top_k", fmt::format("top_k = {} exceeds the {} experts", c.moe.top_k, c.moe.experts));
    if (c.moe_layers(0, c.layers) == 0)
      diag.error(at + "moe_first_dense",
                 fmt::format("no MoE layer: the first {} of {} layers are dense", c.moe.first_dense, c.layers));
  }

  // Multi-head latent attention: its dimensions need kv_lora_rank > 0.
  void mla_rules(const TransformerConfig& c, const nlohmann::json& resolved) {
    if (c.is_mla() || !resolved.is_object()) return;
    for (const char* k : {"q_lora_rank", "qk_nope_head_dim", "qk_rope_head_dim", "v_head_dim"})
      if (resolved.contains(k) && !resolved[k].is_null())
        diag.error("/workload/model/overrides/" + std::string(k),
                   fmt::format("\"{}\" is a multi-head latent attention setting: it needs \"kv_lora_rank\" > 0", k));
  }

  void workload(const Params& w) {
    if (!w.has("global_batch")) return;
    sc.workload.global_batch = w.integer("global_batch");
    sc.workload.micro_batch = w.integer("micro_batch");
    parse_dtype(w.string("precision"), sc.workload.precision);
    sc.workload.optimizer = w.string("optimizer");
    sc.workload.train_tokens = w.number("train_tokens");
    if (w.has("step")) sc.strategy.step = w.integer("step");
    if (w.has("average_steps")) sc.strategy.average_steps = w.integer("average_steps");
  }

  void strategy(const Params& s) {
    auto& st = sc.strategy;
    st.dp = static_cast<int>(s.integer("dp"));
    st.tp = static_cast<int>(s.integer("tp"));
    st.pp = static_cast<int>(s.integer("pp"));
    st.cp = static_cast<int>(s.integer("cp"));
    st.ep = static_cast<int>(s.integer("ep"));
    st.etp = static_cast<int>(s.integer("etp"));
    st.schedule = s.string("schedule");
    st.interleave = static_cast<int>(s.integer("interleave"));
    st.sequence_parallel = s.boolean("sequence_parallel");
    st.recompute = recompute_named(s.string("recompute")).value_or(Recompute::none);
    st.zero = static_cast<int>(s.integer("zero"));
    st.offload = s.string("offload") == "pool" ? Offload::pool : Offload::none;
    st.flash_attention = s.boolean("flash_attention");
    st.attention_flash2 = s.string("attention_kernel") == "flash2";
    sections::read_framework_keys(s, st);
    st.scatter_gather = s.boolean("scatter_gather");
    st.overlap_dp = s.boolean("overlap_dp");
    st.dp_bucket = s.get<Bytes>("dp_bucket");
    st.overlap_param_gather = s.boolean("overlap_param_gather");
    st.align_param_gather = s.boolean("align_param_gather");
    if (st.overlap_param_gather && (st.zero < 1 || st.zero > 2))
      diag.warn("/strategy/overlap_param_gather",
                fmt::format("has no effect with zero {}: only ZeRO-1 and ZeRO-2 gather the updated parameters after "
                            "the optimizer",
                            st.zero));
    if (st.align_param_gather && !st.overlap_param_gather)
      diag.warn("/strategy/align_param_gather", "has no effect without overlap_param_gather");
    if (st.deepep_dispatch && !sc.model.is_moe())
      diag.error("/strategy/moe_dispatch", "\"deepep\" is an MoE dispatch: it needs \"experts\" > 0 in the model");
    // A setting that only FP8 training has, refused at its path under another precision.
    auto needs_fp8 = [&](bool on, const char* path, const char* what) {
      if (on && sc.workload.precision != DType::fp8)
        diag.error(path, std::string(what) + ": it needs /workload/precision \"fp8\"");
    };
    if (st.fp8_dispatch && !sc.model.is_moe())
      diag.error("/strategy/moe_fp8_dispatch",
                 "FP8 dispatch is an MoE dispatch: it needs \"experts\" > 0 in the model");
    else
      needs_fp8(st.fp8_dispatch, "/strategy/moe_fp8_dispatch", "FP8 dispatch feeds the experts' FP8 GEMMs");
    needs_fp8(st.fp8_delayed, "/strategy/fp8_scaling", "delayed scaling is an FP8 recipe");
    st.sharding = resolve_sharding(s.has("fsdp") ? s.raw("fsdp") : nlohmann::json(), "/strategy/fsdp", st, diag,
                                   &res.fsdp);
    needs_fp8(st.sharding.fp8_all_gather, "/strategy/fsdp/fp8_all_gather", "gathers the weights as FP8 for FP8 GEMMs");
    if (pipeline_schedules().find(st.schedule) && sc.schedule().splits_backward() && sharded_parameters(st))
      diag.error("/strategy/schedule", st.schedule +
                                           " splits the backward into B and W passes, which is not modelled with "
                                           "ZeRO-3 / FSDP parameter sharding (zero 3)");
    if (s.has("layers_per_stage")) {
      const auto& a = s.raw("layers_per_stage");
      for (std::size_t i = 0; i < a.size(); ++i) {
        if (!a[i].is_number_integer() || a[i].get<std::int64_t>() < 1 || a[i].get<std::int64_t>() > 100000) {
          diag.error(json_child("/strategy/layers_per_stage", i), "expected a positive integer, got " + a[i].dump());
          continue;
        }
        st.layers_per_stage.push_back(static_cast<int>(a[i].get<std::int64_t>()));
      }
    }
  }

  void compression(const Params& s) {
    if (!s.has("compression")) return;
    const auto& c = s.raw("compression");
    for (const auto& [k, v] : c.items()) {
      const std::string path = json_child("/strategy/compression", k);
      if (k != "dp" && k != "pp") {
        diag.error(path, "unknown key \"" + k + "\"; " + suggest(k, {"dp", "pp"}));
        continue;
      }
      auto cfg = resolve_compression(v, path, diag, &res.compression[k]);
      if (!cfg) continue;
      std::shared_ptr<const Codec> codec(std::move(cfg->codec));
      if (k == "dp") {
        if (sc.strategy.zero == 3)
          diag.error(path, "a gradient codec does not apply under zero 3: its per-unit reduce-scatters are not compressed");
        if (sc.model.is_moe())
          diag.error(path,
                     "a gradient codec of an MoE model is not modelled (its experts' gradients reduce over other "
                     "groups)");
        sc.dp_codec = codec;
        sc.strategy.dp_codec = codec.get();
        sc.strategy.dp_on_incompatible = cfg->on_incompatible;
      } else {
        sc.pp_codec = codec;
        sc.strategy.pp_codec = codec.get();
      }
    }
  }

  // The layout rules (workloads/layout.hpp: check_layout), then the stages' placement.
  void layout_rules(const Params& s) {
    LayoutRequest req = layout_request(sc);
    std::vector<int> compute_pool;  // index in sc.pools of each span
    const std::vector<PoolSpan> spans = compute_pool_spans(sc, &compute_pool);
    if (!s.has("stage_pools")) req.pools = &spans;  // placed by device order
    bool placed = true;
    check_layout(req, [&](LayoutIssue code, std::string_view path, const std::function<std::string()>& message) {
      diag.error(std::string(path), message());
      if (code == LayoutIssue::placement) placed = false;
      return true;
    });
    if (s.has("stage_pools")) {
      placement(s);
    } else if (placed && sc.layout().devices() <= sc.device_count()) {
      for (int p : stage_pools(sc.layout(), spans)) sc.stage_pool.push_back(compute_pool[static_cast<std::size_t>(p)]);
    }
  }

  // Stages placed by strategy.stage_pools, in the pools' order, filling each pool.
  void placement(const Params& s) {
    const auto& st = sc.strategy;
    const int per_stage = st.grad_ranks() * st.tp;
    const auto& a = s.raw("stage_pools");
    if (static_cast<int>(a.size()) != st.pp) {
      diag.error("/strategy/stage_pools", fmt::format("{} entries given for pp = {} stages", a.size(), st.pp));
      return;
    }
    std::vector<std::int64_t> need(sc.pools.size(), 0);
    int last = -1;
    for (std::size_t i = 0; i < a.size(); ++i) {
      const std::string path = json_child("/strategy/stage_pools", i);
      auto it = std::find_if(sc.pools.begin(), sc.pools.end(),
                             [&](const DevicePool& p) { return a[i].is_string() && p.name == a[i].get<std::string>(); });
      if (it == sc.pools.end()) {
        std::vector<std::string> names;
        for (const auto& p : sc.pools) names.push_back(p.name);
        diag.error(path, "unknown pool " + a[i].dump() + "; " + valid_list(names));
        return;
      }
      const int idx = static_cast<int>(it - sc.pools.begin());
      if (!it->attach_to.empty()) {
        diag.error(path, "pool \"" + it->name + "\" is processing-in-memory attached to \"" + it->attach_to +
                             "\", not a compute pool");
        return;
      }
      if (idx < last) {
        diag.error(path, "stages must follow the pools' order (devices are numbered stage by stage)");
        return;
      }
      last = idx;
      need[idx] += per_stage;
      sc.stage_pool.push_back(idx);
    }
    for (std::size_t k = 0; k < sc.pools.size(); ++k)
      if (sc.pools[k].attach_to.empty() && need[k] != sc.pools[k].count)
        diag.error(json_child(json_child("/cluster/pools", k), "count"),
                   fmt::format("pool \"{}\" has {} devices but its stages need {} ({} = {} per stage)",
                               sc.pools[k].name, sc.pools[k].count, need[k], st.cp > 1 ? "dp*cp*tp" : "dp*tp",
                               per_stage));
  }

  void topology(const nlohmann::json& t) {
    if (!t.contains("type") || !t["type"].is_string()) {
      diag.error("/cluster/topology/type", "required key is missing or not a string");
      return;
    }
    sc.topology_type = t["type"].get<std::string>();
    TopologyContext ctx;
    ctx.devices = sc.device_count();
    ctx.path = "/cluster/topology";
    ctx.diag = &diag;
    // Each link is stated with every parameter where the topology holds it.
    std::vector<std::pair<std::string, nlohmann::json>> links;
    ctx.link = [&](const nlohmann::json& desc, const std::string& path) {
      nlohmann::json resolved;
      LinkSpec spec = resolve_link(desc, path, diag, &resolved);
      if (!resolved.is_null()) links.emplace_back(path, std::move(resolved));
      return spec;
    };
    auto topo = topologies().build(sc.topology_type, t, ctx.path, diag, {"type"}, &res.topology);
    if (!topo) return;
    const std::size_t before = diag.issues().size();
    TopologyGraph g = topo->build(ctx);
    if (diag.issues().size() != before) return;
    sc.topology = std::move(g);
    res.topology["type"] = sc.topology_type;
    for (auto& [path, link] : links)
      if (path.starts_with(ctx.path + "/"))
        res.topology[nlohmann::json::json_pointer(path.substr(ctx.path.size()))] = std::move(link);
  }
};

}  // namespace

Scenario parse_cluster_section(const nlohmann::json& cluster, const std::string& file) {
  register_builtins();
  Parser ps{file, {}, {}, true, {}};
  auto& sc = ps.sc;
  sc.file = file;
  Params c = ps.section(sections::cluster(), cluster, "/cluster");
  if (c.has("pools")) {
    ps.pools(c.raw("pools"));
    ps.attach_pim();
  }
  if (c.has("pue")) sc.pue = c.number("pue");
  if (c.has("node_power")) sc.node_power = parse_node_power(c.raw("node_power"), "/cluster/node_power", ps.diag);
  if (ps.diag.ok()) ps.topology(c.raw("topology"));
  ps.diag.throw_if_any();
  sc.resolved = {{"cluster", {{"topology", ps.res.topology}}}};
  sc.warnings = ps.diag.warnings();
  return std::move(ps.sc);
}

Scenario parse_scenario(const nlohmann::json& doc, const std::string& file) {
  register_builtins();
  Parser ps{file, {}, {}, true, {}};
  auto& sc = ps.sc;
  sc.file = file;
  Params top = ps.section(sections::top(), doc, "");
  if (!doc.is_object()) ps.diag.throw_if_any();
  sc.name = top.has("name") ? top.string("name") : "";
  if (sc.name.empty()) {
    auto slash = file.find_last_of('/');
    sc.name = file.substr(slash == std::string::npos ? 0 : slash + 1);
    for (const std::string ext : {".json", ".yaml", ".yml"})
      if (sc.name.size() > ext.size() && sc.name.ends_with(ext)) sc.name.resize(sc.name.size() - ext.size());
  }
  sc.description = top.has("description") ? top.string("description") : "";
  const nlohmann::json empty = nlohmann::json::object();
  auto sub = [&](const char* k) -> const nlohmann::json& { return top.json().contains(k) ? top.raw(k) : empty; };

  // A missing or malformed section is reported once, not once more per required key inside it.
  auto present = [&](const char* k) { return top.json().contains(k); };
  Params cluster = present("cluster") ? ps.section(sections::cluster(), sub("cluster"), "/cluster") : Params();
  if (cluster.has("pools")) {
    ps.pools(cluster.raw("pools"));
    ps.attach_pim();
  }
  if (cluster.has("pue")) sc.pue = cluster.number("pue");
  if (cluster.has("node_power")) sc.node_power = parse_node_power(cluster.raw("node_power"), "/cluster/node_power", ps.diag);
  Params wl = present("workload") ? ps.section(sections::workload(), sub("workload"), "/workload") : Params();
  const bool wl_clean = present("workload") && ps.last_clean;
  if (wl.has("model")) ps.model(wl.raw("model"));
  if (wl_clean) ps.workload(wl);
  Params st = ps.section(sections::strategy(), sub("strategy"), "/strategy");
  if (top.json().contains("strategy") && ps.last_clean) {
    ps.strategy(st);
    ps.compression(st);
  }
  Params sim = ps.section(sections::simulation(), sub("simulation"), "/simulation");
  if (ps.last_clean) {
    sc.simulation.mode = sim.string("mode");
    sc.simulation.collective_algorithm = sim.string("collective_algorithm");
    sc.simulation.symmetry = sim.boolean("symmetry");
    sc.simulation.flow_schedule = sim.string("flow_schedule");
    if (sub("simulation").contains("flow_schedule") && sc.simulation.mode != "flow")
      ps.diag.warn("/simulation/flow_schedule",
                   "applies to flow mode only; mode \"" + sc.simulation.mode + "\" ignores it");
    sc.simulation.representative_flows = sim.boolean("representative_flows");
    if (sub("simulation").contains("representative_flows") &&
        (sc.simulation.mode == "analytical" ||
         (sc.simulation.mode == "flow" && sc.simulation.flow_schedule != "phases")))
      ps.diag.warn("/simulation/representative_flows",
                   "applies to event mode and flow mode by phases only; this run ignores it");
    sc.simulation.check_memory = sim.boolean("check_memory");
    sc.simulation.sm_contention = sim.boolean("sm_contention");
    sc.simulation.max_tasks = sim.integer("max_tasks");
  }
  Params out = ps.section(sections::outputs(), sub("outputs"), "/outputs");
  if (ps.last_clean) {
    sc.outputs.format = out.string("format");
    sc.outputs.trace = out.string("trace");
  }
  // Cross-field rules only once every section parsed on its own.
  if (ps.diag.ok()) check_precision(sc, ps.diag);
  if (ps.diag.ok() && sc.simulation.sm_contention && sc.simulation.mode == "analytical") {
    // The closed forms without SM contention (docs/models.md, "SM contention").
    const bool moe = sc.model.moe.experts > 0;
    const char* without = sc.strategy.overlap_param_gather            ? "strategy.overlap_param_gather"
                          : moe && sc.strategy.moe_a2a_overlap        ? "strategy.moe_a2a_overlap"
                          : moe && sc.strategy.schedule == "dualpipe" ? "DualPipe's pairs"
                                                                      : nullptr;
    if (without)
      ps.diag.error("/simulation/sm_contention",
                    fmt::format("analytical mode has no closed form of SM contention with {}; use mode \"event\" "
                                "or \"flow\", or set it false",
                                without));
  }
  if (ps.diag.ok()) ps.layout_rules(st);
  if (ps.diag.ok()) ps.topology(cluster.raw("topology"));
  if (ps.diag.ok() && !sc.topology.ocs_phases.empty() && sc.strategy.average_steps == 0)
    ps.diag.error("/workload/average_steps", "the topology is rewired in phases (cluster.topology.ocs_phases); give "
                                             "the job's step count, over which the phases are weighted");
  if (ps.diag.ok() && sc.strategy.offload == Offload::pool && memory_nodes(sc.topology).empty())
    ps.diag.error("/strategy/offload", fmt::format("\"pool\" needs memory nodes in the topology, and a \"{}\" "
                                                   "topology has none; use one with a memory pool, such as cxl-pool",
                                                   sc.topology_type));
  if (ps.diag.ok()) {
    std::vector<const ComputeDevice*> stage_dev;
    for (int s = 0; s < sc.strategy.pp; ++s) stage_dev.push_back(sc.pools[sc.stage_pool[s]].device.get());
    if (!sc.strategy.layers_per_stage.empty()) {
      sc.layers_per_stage = sc.strategy.layers_per_stage;
    } else {
      const LayoutRequest req = layout_request(sc);
      bool even = true;
      check_layer_split(req, [&](LayoutIssue, std::string_view path, const std::function<std::string()>& message) {
        ps.diag.error(std::string(path), message());
        even = false;
        return true;
      });
      if (even && req.uniform_stages)
        sc.layers_per_stage.assign(static_cast<std::size_t>(sc.strategy.pp),
                                   static_cast<int>(sc.model.layers / sc.strategy.pp));
      else if (even)
        sc.layers_per_stage = balance_layers(sc.model, sc.strategy, sc.workload, stage_dev,
                                             sc.schedule().placement(sc.strategy.pp, sc.strategy.interleave));
    }
  }
  ps.diag.throw_if_any();

  ps.res.workload = &wl;
  ps.res.strategy = &st;
  ps.res.simulation = &sim;
  ps.res.outputs = &out;
  sc.resolved = resolved_scenario(sc, ps.res);
  sc.warnings = ps.diag.warnings();
  return std::move(ps.sc);
}

}  // namespace hcsim
