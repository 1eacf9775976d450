#include "sim/cluster/cluster_file.hpp"

#include <algorithm>
#include <cmath>
#include <map>
#include <numeric>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "models/link/link.hpp"
#include "sim/core/params.hpp"
#include "topologies/clos.hpp"
#include "topologies/nvswitch_cluster.hpp"

namespace hcsim {

namespace {

const ParamTable& cluster_top() {
  static const ParamTable t{
      {.name = "name", .kind = ParamKind::string, .def = nullptr, .help = "name of the cluster study"},
      {.name = "description", .kind = ParamKind::string, .def = "", .help = "one line on what it is"},
      {.name = "cluster",
       .kind = ParamKind::object,
       .help = "pools and topology, as a scenario's cluster (docs/scenario.md)"},
      {.name = "scheduler",
       .kind = ParamKind::object,
       .def = nlohmann::json{{"type", "fifo"}},
       .help = "{\"type\": ...} and its parameters: `hcsim list cluster`"},
      {.name = "simulation",
       .kind = ParamKind::object,
       .def = nlohmann::json::object(),
       .help = "how jobs' steps are simulated and when the loop stops"},
  };
  return t;
}

const ParamTable& cluster_simulation() {
  static const ParamTable t{
      {.name = "mode",
       .kind = ParamKind::choice,
       .def = "event",
       .choices = {"analytical", "event", "flow"},
       .help = "how each job's step is simulated (analytical: no contention between jobs)"},
      {.name = "horizon",
       .kind = ParamKind::quantity,
       .dim = Dim::time,
       .def = "365 d",
       .min = 0,
       .min_exclusive = true,
       .help = "the loop stops there; jobs not done are reported as such"},
      {.name = "contention",
       .kind = ParamKind::boolean,
       .def = true,
       .help = "simulate the running jobs' steps together on the shared fabric (false: each alone)"},
  };
  return t;
}

const ParamTable& job_list_top() {
  static const ParamTable t{
      {.name = "workloads",
       .kind = ParamKind::object,
       .help = "name -> {\"workload\": ..., \"strategy\": ...}, as in a scenario, without dp"},
      {.name = "jobs", .kind = ParamKind::array, .help = "the jobs, in any order"},
  };
  return t;
}

const ParamTable& workload_entry() {
  static const ParamTable t{
      {.name = "workload", .kind = ParamKind::object, .help = "a scenario's workload section"},
      {.name = "strategy",
       .kind = ParamKind::object,
       .def = nullptr,
       .help = "a scenario's strategy section without dp (the job's size sets it); default {}"},
      {.name = "strategies",
       .kind = ParamKind::array,
       .def = nullptr,
       .help = "instead of strategy: the strategies the scheduler may choose from (at each pool and size the "
               "one with the shortest step alone)"},
      {.name = "description", .kind = ParamKind::string, .def = "", .help = "one line on what it is"},
  };
  return t;
}

const ParamTable& job_entry() {
  static const ParamTable t{
      {.name = "name", .kind = ParamKind::string, .help = "unique name"},
      {.name = "arrival",
       .kind = ParamKind::quantity,
       .dim = Dim::time,
       .def = "0 s",
       .min = 0,
       .help = "when it is submitted"},
      {.name = "workload", .kind = ParamKind::string, .help = "a key of `workloads`"},
      {.name = "devices",
       .kind = ParamKind::integer,
       .min = 1,
       .max = 1e6,
       .help = "its size; with max_devices, its smallest size"},
      {.name = "max_devices",
       .kind = ParamKind::integer,
       .def = nullptr,
       .min = 1,
       .max = 1e6,
       .help = "elastic: the scheduler starts it at any size from devices to this"},
      {.name = "work",
       .kind = ParamKind::object,
       .help = "{\"steps\": N}, {\"tokens\": N}, or {\"duration\": \"5 h\", \"pool\": NAME}: what it does "
               "in that long alone on that pool at its largest size"},
      {.name = "priority",
       .kind = ParamKind::integer,
       .def = 0,
       .min = -1e6,
       .max = 1e6,
       .help = "higher is more urgent (priority scheduler)"},
      {.name = "pools", .kind = ParamKind::array, .def = nullptr, .help = "pools it may run on (default: any)"},
      {.name = "checkpoint_restart",
       .kind = ParamKind::quantity,
       .dim = Dim::time,
       .def = "0 s",
       .min = 0,
       .help = "time to save and reload its state, charged once per preemption"},
  };
  return t;
}

const ParamTable& work_entry() {
  static const ParamTable t{
      {.name = "steps",
       .kind = ParamKind::number,
       .def = nullptr,
       .min = 0,
       .max = 1e15,
       .min_exclusive = true,
       .help = "training steps"},
      {.name = "tokens",
       .kind = ParamKind::number,
       .def = nullptr,
       .min = 0,
       .max = 1e18,
       .min_exclusive = true,
       .help = "tokens trained (steps: tokens / (global batch x sequence))"},
      {.name = "duration",
       .kind = ParamKind::quantity,
       .dim = Dim::time,
       .def = nullptr,
       .min = 0,
       .min_exclusive = true,
       .help = "with pool: the steps it takes this long to do alone there"},
      {.name = "pool", .kind = ParamKind::string, .def = nullptr, .help = "with duration"},
  };
  return t;
}

// Devices of one fabric leaf's down ports, in nodes (the placement's leaf; a hint only:
// contention itself is simulated on the routes): a two-tier Clos leaf of radix k and
// oversubscription r has floor(k r / (1 + r)) down ports (topologies/clos.hpp), k as the
// topology takes it (switch_radix, by default the switch of the NIC's rate).
std::uint32_t nodes_per_leaf(const nlohmann::json& topo, std::uint32_t gpus_per_node) {
  Diagnostics d;  // the topology's own build reports what is wrong with it
  const Params p = resolve_params(nvswitch_cluster_params(), topo, "/cluster/topology", d, {"type"});
  if (!d.ok() || p.string("fabric") != "fat-tree") return 0;
  const LinkSpec nic = resolve_link(p.raw("nic"), "/cluster/topology/nic", d);
  if (!d.ok()) return 0;
  const int radix = switch_radix(p, nic.bandwidth);
  const auto down = static_cast<std::uint32_t>(clos_down_ports(radix, p.number("oversubscription")));
  const std::uint32_t nics =
      p.has("nics_per_node") ? static_cast<std::uint32_t>(p.integer("nics_per_node")) : gpus_per_node;
  return std::max<std::uint32_t>(1, down / std::max<std::uint32_t>(1, nics));
}

void build_layout(ClusterSpec& c, Diagnostics& diag) {
  const nlohmann::json& topo = c.shared.resolved["cluster"]["topology"];
  if (c.shared.topology_type != "nvswitch-cluster") {
    diag.error("/cluster/topology/type", fmt::format("a shared cluster is placed on whole nodes of an "
                                                     "\"nvswitch-cluster\" topology; \"{}\" is not supported yet",
                                                     c.shared.topology_type));
    return;
  }
  if (topo.value("fabric", "") == "torus") {
    diag.error("/cluster/topology/fabric",
               "a torus of nodes is sized for one job (fabric_dims); a shared cluster "
               "needs \"fat-tree\" or \"rail-optimised\"");
    return;
  }
  c.layout.gpus_per_node = topo.value("gpus_per_node", 8u);
  c.layout.nodes_per_leaf = nodes_per_leaf(topo, c.layout.gpus_per_node);
  for (std::size_t i = 0; i < c.shared.pools.size(); ++i) {
    const DevicePool& p = c.shared.pools[i];
    if (!p.attach_to.empty()) continue;
    const std::string path = json_child(json_child("/cluster/pools", i), "count");
    if (p.count % static_cast<int>(c.layout.gpus_per_node) != 0 || p.first_device % c.layout.gpus_per_node != 0)
      diag.error(path, fmt::format("a shared cluster's pools hold whole nodes of {} devices; got {}",
                                   c.layout.gpus_per_node, p.count));
    ClusterPoolInfo info;
    info.name = p.name;
    info.device = p.preset.empty() ? p.type : p.preset;
    info.first_device = static_cast<std::uint32_t>(p.first_device);
    info.devices = static_cast<std::uint32_t>(p.count);
    info.idle_power = p.device ? p.device->idle_power() : Watts{};
    c.layout.pools.push_back(std::move(info));
    c.pool_index.push_back(static_cast<std::uint32_t>(i));
  }
}

}  // namespace

ClusterSpec parse_cluster_file(const nlohmann::json& doc, const std::string& file) {
  Diagnostics diag;
  ClusterSpec c;
  c.file = file;
  Params top = resolve_params(cluster_top(), doc, "", diag);
  diag.throw_if_any();
  c.name = top.has("name") ? top.string("name") : file;
  c.description = top.string("description");
  c.cluster = top.raw("cluster");
  c.shared = parse_cluster_section(c.cluster, file);
  c.warnings = c.shared.warnings;
  Params sim = resolve_params(cluster_simulation(), top.raw("simulation"), "/simulation", diag);
  if (diag.ok()) {
    c.mode = sim.string("mode");
    c.horizon = sim.get<Seconds>("horizon");
    c.contention = sim.boolean("contention");
  }
  c.scheduler = top.raw("scheduler");
  if (!c.scheduler.contains("type") || !c.scheduler["type"].is_string())
    diag.error("/scheduler/type", "required key is missing or not a string");
  build_layout(c, diag);
  diag.throw_if_any();
  return c;
}

ClusterSpec load_cluster_file(const std::string& file, const std::vector<std::string>& overrides) {
  nlohmann::json doc = read_json_file(file);
  try {
    for (const auto& o : overrides) apply_override(doc, o);
    return parse_cluster_file(doc, file);
  } catch (const InputError& e) { throw e.with_file(file); }
}

namespace {

// A degree of the strategy as written (the scenario parser checks it); 1 where it is absent
// or not a positive integer, and at most a cluster's device bound.
std::uint64_t strategy_degree(const nlohmann::json& st, const char* key) {
  if (!st.contains(key) || !st[key].is_number_integer() || st[key].get<std::int64_t>() <= 0) return 1;
  return std::min<std::uint64_t>(st[key].get<std::uint64_t>(), 1'000'000);
}

// One strategy of a workload: no dp; its tp x pp x cp, bounded.
std::uint32_t strategy_devices(const nlohmann::json& st, const std::string& path, Diagnostics& diag) {
  if (!st.is_object()) {
    diag.error(path, "expected a strategy object");
    return 1;
  }
  if (st.contains("dp")) diag.error(json_child(path, "dp"), "a job's size sets dp: leave it out");
  const std::uint64_t mp = strategy_degree(st, "tp") * strategy_degree(st, "pp") * strategy_degree(st, "cp");
  if (mp > 1'000'000) diag.error(path, fmt::format("tp x pp x cp = {} devices is more than any cluster", mp));
  return static_cast<std::uint32_t>(std::min<std::uint64_t>(mp, 1'000'000));
}

void parse_workloads(const nlohmann::json& obj, JobList& out, Diagnostics& diag) {
  for (const auto& [name, v] : obj.items()) {
    const std::string path = json_child("/workloads", name);
    Params p = resolve_params(workload_entry(), v, path, diag);
    if (!p.has("workload")) continue;
    ClusterWorkload w;
    w.name = name;
    w.workload = p.raw("workload");
    if (p.has("strategy") && p.has("strategies"))
      diag.error(json_child(path, "strategies"), "give strategy or strategies, not both");
    if (p.has("strategies")) {
      const auto& arr = p.raw("strategies");
      if (arr.empty()) diag.error(json_child(path, "strategies"), "an empty list: give at least one strategy");
      for (std::size_t i = 0; i < arr.size(); ++i) {
        w.strategies.push_back(arr[i]);
        w.model_parallel.push_back(strategy_devices(arr[i], json_child(json_child(path, "strategies"), i), diag));
      }
    } else {
      w.strategies.push_back(p.has("strategy") ? p.raw("strategy") : nlohmann::json::object());
      w.model_parallel.push_back(strategy_devices(w.strategies.back(), json_child(path, "strategy"), diag));
    }
    w.quantum = 0;
    for (std::uint32_t mp : w.model_parallel) w.quantum = std::gcd(w.quantum, mp);
    w.quantum = std::max<std::uint32_t>(w.quantum, 1);
    out.workloads.push_back(std::move(w));
  }
}

std::optional<std::uint32_t> pool_named(const ClusterSpec& c, const nlohmann::json& v) {
  if (!v.is_string()) return std::nullopt;
  for (std::uint32_t i = 0; i < c.layout.pools.size(); ++i)
    if (c.layout.pools[i].name == v.get<std::string>()) return i;
  return std::nullopt;
}

std::string pool_names(const ClusterSpec& c) {
  std::vector<std::string> names;
  for (const auto& p : c.layout.pools) names.push_back(p.name);
  return valid_list(names);
}

void parse_work(const Params& w, const std::string& path, const ClusterSpec& c, JobWork& out, Diagnostics& diag) {
  const int given =
      static_cast<int>(w.has("steps")) + static_cast<int>(w.has("tokens")) + static_cast<int>(w.has("duration"));
  if (given != 1) {
    diag.error(path, "give exactly one of steps, tokens, or duration with pool");
    return;
  }
  if (w.has("steps")) {
    out.kind = JobWork::Kind::steps;
    out.amount = w.number("steps");
  } else if (w.has("tokens")) {
    out.kind = JobWork::Kind::tokens;
    out.amount = w.number("tokens");
  } else {
    out.kind = JobWork::Kind::duration;
    out.duration = w.get<Seconds>("duration");
    if (!w.has("pool")) {
      diag.error(json_child(path, "pool"), "duration needs the pool it was measured on; " + pool_names(c));
      return;
    }
    if (auto p = pool_named(c, w.raw("pool")))
      out.pool = *p;
    else
      diag.error(json_child(path, "pool"), "no pool named " + w.raw("pool").dump() + "; " + pool_names(c));
  }
  if (w.has("pool") && out.kind != JobWork::Kind::duration)
    diag.error(json_child(path, "pool"), "pool goes with duration only");
}

// Sizes: multiples of one of the strategies' model-parallel sizes; above one node, whole nodes.
void check_sizes(const JobSpec& j, const ClusterWorkload& w, std::uint32_t node, const std::string& path,
                 Diagnostics& diag) {
  for (std::uint32_t n : {j.min_devices, j.max_devices}) {
    const std::string at = json_child(path, n == j.min_devices ? "devices" : "max_devices");
    if (std::none_of(w.model_parallel.begin(), w.model_parallel.end(), [&](std::uint32_t mp) { return n % mp == 0; }))
      diag.error(at, fmt::format("{} devices is not a multiple of workload \"{}\"'s tp x pp x cp = {}", n, w.name,
                                 fmt::join(w.model_parallel, " or ")));
    else if (n > node && n % node != 0)
      diag.error(at, fmt::format("a job of more than one node takes whole nodes: {} is not a multiple of {}", n, node));
  }
  if (j.max_devices < j.min_devices)
    diag.error(json_child(path, "max_devices"),
               fmt::format("smaller than devices ({} < {})", j.max_devices, j.min_devices));
}

void parse_job(const nlohmann::json& v, std::size_t i, const ClusterSpec& c, JobList& out,
               std::map<std::string, std::size_t, std::less<>>& names, Diagnostics& diag) {
  const std::string path = json_child("/jobs", i);
  const std::size_t before = diag.issues().size();
  Params p = resolve_params(job_entry(), v, path, diag);
  if (diag.issues().size() != before) return;
  JobSpec j;
  j.name = p.string("name");
  if (auto [it, fresh] = names.emplace(j.name, i); !fresh)
    diag.error(json_child(path, "name"), fmt::format("name \"{}\" is used by /jobs/{} too", j.name, it->second));
  j.arrival = p.get<Seconds>("arrival");
  j.priority = static_cast<int>(p.integer("priority"));
  j.checkpoint_restart = p.get<Seconds>("checkpoint_restart");
  const std::string wname = p.string("workload");
  auto w = std::find_if(out.workloads.begin(), out.workloads.end(), [&](const auto& x) { return x.name == wname; });
  if (w == out.workloads.end()) {
    std::vector<std::string> known;
    for (const auto& x : out.workloads) known.push_back(x.name);
    diag.error(json_child(path, "workload"), "no workload named \"" + wname + "\"; " + valid_list(known));
    return;
  }
  j.workload = static_cast<std::uint32_t>(w - out.workloads.begin());
  j.min_devices = static_cast<std::uint32_t>(p.integer("devices"));
  j.max_devices = p.has("max_devices") ? static_cast<std::uint32_t>(p.integer("max_devices")) : j.min_devices;
  j.elastic = j.max_devices != j.min_devices;
  j.quantum = w->quantum;
  check_sizes(j, *w, c.layout.gpus_per_node, path, diag);
  if (p.has("pools")) {
    const auto& arr = p.raw("pools");
    for (std::size_t k = 0; k < arr.size(); ++k) {
      if (auto q = pool_named(c, arr[k]))
        j.pools.push_back(*q);
      else
        diag.error(json_child(json_child(path, "pools"), k), "no pool named " + arr[k].dump() + "; " + pool_names(c));
    }
    std::sort(j.pools.begin(), j.pools.end());
    j.pools.erase(std::unique(j.pools.begin(), j.pools.end()), j.pools.end());
    if (arr.empty()) diag.error(json_child(path, "pools"), "an empty list: leave it out to allow every pool");
  }
  JobWork work;
  Params wp = resolve_params(work_entry(), p.raw("work"), json_child(path, "work"), diag);
  parse_work(wp, json_child(path, "work"), c, work, diag);
  if (work.kind == JobWork::Kind::duration && !j.pools.empty() &&
      !std::binary_search(j.pools.begin(), j.pools.end(), work.pool))
    diag.error(json_child(json_child(path, "work"), "pool"), "the job may not run on that pool (see its pools)");
  out.jobs.push_back(std::move(j));
  out.work.push_back(work);
}

}  // namespace

JobList parse_job_list(const nlohmann::json& doc, const ClusterSpec& cluster, const std::string& file) {
  Diagnostics diag;
  JobList out;
  out.file = file;
  Params top = resolve_params(job_list_top(), doc, "", diag);
  diag.throw_if_any();
  parse_workloads(top.raw("workloads"), out, diag);
  if (out.workloads.empty() && diag.ok()) diag.error("/workloads", "at least one workload is needed");
  const auto& jobs = top.raw("jobs");
  if (jobs.empty()) diag.error("/jobs", "at least one job is needed");
  std::map<std::string, std::size_t, std::less<>> names;
  if (diag.ok())
    for (std::size_t i = 0; i < jobs.size(); ++i) parse_job(jobs[i], i, cluster, out, names, diag);
  diag.throw_if_any();
  // Arrival order, ties in list order: the order every scheduler and report reads.
  std::vector<std::size_t> order(out.jobs.size());
  for (std::size_t i = 0; i < order.size(); ++i) order[i] = i;
  std::stable_sort(order.begin(), order.end(),
                   [&](std::size_t a, std::size_t b) { return out.jobs[a].arrival < out.jobs[b].arrival; });
  JobList sorted{out.file, out.workloads, {}, {}, {}};
  for (std::size_t k : order) {
    sorted.jobs.push_back(out.jobs[k]);
    sorted.work.push_back(out.work[k]);
    sorted.source.push_back(k);
  }
  return sorted;
}

JobList load_job_list(const std::string& file, const ClusterSpec& cluster) {
  nlohmann::json doc = read_json_file(file);
  try {
    return parse_job_list(doc, cluster, file);
  } catch (const InputError& e) { throw e.with_file(file); }
}

std::string describe_cluster_inputs() {
  const std::pair<const char*, const ParamTable*> tables[] = {
      {"cluster file (top level)", &cluster_top()}, {"cluster file /simulation", &cluster_simulation()},
      {"job list (top level)", &job_list_top()},    {"job list /workloads/NAME", &workload_entry()},
      {"job list /jobs/N", &job_entry()},           {"job list /jobs/N/work", &work_entry()}};
  std::string out;
  for (const auto& [name, table] : tables) out += fmt::format("  {}\n", name) + describe_params(*table, "    ");
  return out;
}

nlohmann::json job_scenario_json(const ClusterSpec& c, const ClusterWorkload& w, std::size_t strategy,
                                 std::uint32_t pool, std::uint32_t devices) {
  const DevicePool& host = c.shared.pools[c.pool_index[pool]];
  nlohmann::json pools = nlohmann::json::array();
  const nlohmann::json& given = c.cluster["pools"];
  nlohmann::json hp = given[c.pool_index[pool]];
  hp["count"] = devices;
  pools.push_back(hp);
  // Processing-in-memory stacks attached to the pool's devices come with them.
  for (std::size_t i = 0; i < c.shared.pools.size(); ++i) {
    const DevicePool& q = c.shared.pools[i];
    if (q.attach_to != host.name) continue;
    nlohmann::json qp = given[i];
    qp["count"] = static_cast<std::int64_t>(q.count / host.count) * devices;
    pools.push_back(qp);
  }
  nlohmann::json cluster = c.cluster;
  cluster["pools"] = pools;
  nlohmann::json st = w.strategies[strategy];
  st["dp"] = devices / w.model_parallel[strategy];
  return {{"name", w.name},
          {"cluster", cluster},
          {"workload", w.workload},
          {"strategy", st},
          {"simulation", {{"mode", c.mode}}}};
}

}  // namespace hcsim
