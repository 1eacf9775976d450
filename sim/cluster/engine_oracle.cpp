#include "sim/cluster/engine_oracle.hpp"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <numeric>
#include <set>

#include <fmt/format.h>

#include "sim/driver/run.hpp"
#include "sim/engine/engine.hpp"
#include "workloads/task_graph_merge.hpp"

namespace hcsim {

EngineOracle::EngineOracle(const ClusterSpec& cluster, const JobList& jobs) : cluster_(cluster), jobs_(jobs) {
  if (cluster_.mode != "analytical")
    planner_ = std::make_shared<CollectivePlanner>(cluster_.shared.topology, "auto", cluster_.mode == "flow");
}

namespace {

// A job scenario's problem, its path moved to where the job list holds it.
std::string job_list_issue(const Issue& i, const ClusterWorkload& w) {
  std::string path = i.path;
  if (path.starts_with("/workload") || path.starts_with("/strategy")) path = json_child("/workloads", w.name) + path;
  return path.empty() ? i.message : path + ": " + i.message;
}

Seconds end_of(const EngineResult& r, TaskId first, TaskId last) {
  double end = 0;
  for (TaskId t = first; t < last; ++t) end = std::max(end, r.end[t]);
  return Seconds{end};
}

}  // namespace

// The job's scenario under one strategy, run alone: its step, energy, tokens and task graph.
EngineOracle::Alone EngineOracle::run_alone(const ClusterWorkload& w, std::size_t strategy, std::uint32_t pool,
                                            std::uint32_t devices) {
  Alone a;
  a.strategy = strategy;
  Scenario sc;
  try {
    sc = parse_scenario(job_scenario_json(cluster_, w, strategy, pool, devices));
  } catch (const InputError& e) {
    a.input_error = true;
    a.why = job_list_issue(e.issues().front(), w);
    return a;
  }
  try {
    RunOutput out = run_scenario(sc);
    ++simulations_;
    ++runs_.alone;
    a.ok = true;
    a.step = out.metrics.step_time;
    a.energy = out.metrics.it_energy;
    a.tokens = out.metrics.tokens_per_step;
    a.deepep = deepep_routing(sc);
    if (!out.engine.end.empty()) {
      a.makespan = end_of(out.engine, 0, static_cast<TaskId>(out.graph.size()));
      a.graph = std::make_shared<const TaskGraph>(std::move(out.graph));
    }
  } catch (const InputError& e) {
    a.why = job_list_issue(e.issues().front(), w);
  }
  return a;
}

const EngineOracle::Alone& EngineOracle::entry(const JobSpec& job, std::uint32_t pool, std::uint32_t devices) {
  const AloneKey key{job.workload, pool, devices};
  if (auto it = alone_.find(key); it != alone_.end()) return it->second;
  const ClusterWorkload& w = jobs_.workloads[job.workload];
  // Every strategy whose replica divides the size; the one with the shortest step (the first
  // on a tie). Refused everywhere: the first reason, an input error only if every one was.
  std::optional<Alone> best, refused;
  for (std::size_t s = 0; s < w.strategies.size(); ++s) {
    if (devices % w.model_parallel[s] != 0) continue;
    Alone a = run_alone(w, s, pool, devices);
    if (a.ok && (!best || a.step < best->step)) best = std::move(a);
    else if (!a.ok && (!refused || (refused->input_error && !a.input_error))) refused = std::move(a);
  }
  if (!best && !refused) {
    refused.emplace();
    refused->input_error = true;
    refused->why = fmt::format("{} devices is not a multiple of any strategy's tp x pp x cp", devices);
  }
  return alone_.emplace(key, best ? std::move(*best) : std::move(*refused)).first->second;
}

const nlohmann::json& EngineOracle::strategy(const JobSpec& job, std::uint32_t pool, std::uint32_t devices) {
  return jobs_.workloads[job.workload].strategies[entry(job, pool, devices).strategy];
}

std::optional<Seconds> EngineOracle::alone(const JobSpec& job, std::uint32_t pool, std::uint32_t devices) {
  const Alone& a = entry(job, pool, devices);
  return a.ok ? std::optional<Seconds>(a.step) : std::nullopt;
}

Joules EngineOracle::step_energy(const JobSpec& job, std::uint32_t pool, std::uint32_t devices) {
  return entry(job, pool, devices).energy;
}

const std::string& EngineOracle::refusal(const JobSpec& job, std::uint32_t pool, std::uint32_t devices) {
  return entry(job, pool, devices).why;
}

bool EngineOracle::refused_by_input(const JobSpec& job, std::uint32_t pool, std::uint32_t devices) {
  return entry(job, pool, devices).input_error;
}

double EngineOracle::tokens_per_step(const JobSpec& job, std::uint32_t pool, std::uint32_t devices) {
  return entry(job, pool, devices).tokens;
}

bool EngineOracle::single_node(const JobPlacement& p) const {
  const TopologyGraph& g = cluster_.shared.topology;
  return g.node_of(static_cast<int>(p.devices.front())) == g.node_of(static_cast<int>(p.devices.back()));
}

std::vector<Seconds> EngineOracle::run_together(const std::vector<const Alone*>& parts,
                                                const std::vector<const JobPlacement*>& at,
                                                std::vector<double>* edge_bytes) {
  std::vector<PlacedGraph> placed;
  for (std::size_t i = 0; i < parts.size(); ++i) placed.push_back({parts[i]->graph.get(), at[i]->devices});
  const auto devices = static_cast<std::uint32_t>(cluster_.shared.topology.device_count());
  MergedGraph m = merge_task_graphs(placed, devices);
  EngineOptions opt;
  opt.mode = cluster_.mode;
  opt.planner = planner_;
  // The engine takes one DeepEP routing a run: the first member's that has one (MoE jobs of
  // different routings simulated together share it; docs/cluster.md).
  for (const Alone* a : parts)
    if (a->deepep && !opt.deepep) opt.deepep = a->deepep;
  EngineResult r = simulate(cluster_.shared.topology, m.graph, opt);
  ++simulations_;
  // Each job's step scales its step alone by how much longer its tasks took here than in
  // its own run (the step time is the engine's makespan plus what the metrics add).
  std::vector<Seconds> out;
  for (std::size_t i = 0; i < parts.size(); ++i) {
    const Seconds end = end_of(r, m.first_task[i], m.first_task[i + 1]);
    const double ratio = parts[i]->makespan > Seconds{} ? end / parts[i]->makespan : 1.0;
    out.push_back(parts[i]->step * ratio);
  }
  if (edge_bytes) *edge_bytes = std::move(r.edge_bytes);
  return out;
}

const EngineOracle::Placed& EngineOracle::placed(const JobSpec& job, const JobPlacement& p) {
  PlacedKey key{job.workload, p.pool, p.devices};
  if (auto it = placed_.find(key); it != placed_.end()) return it->second;
  const Alone& a = entry(job, p.pool, static_cast<std::uint32_t>(p.devices.size()));
  HCSIM_ASSERT(a.ok, "a job placed at a size it cannot run at");
  Placed& out = placed_[key];
  if (!a.graph || single_node(p)) {
    out.step = a.step;
    return out;
  }
  std::vector<double> bytes;
  const auto t0 = std::chrono::steady_clock::now();
  out.step = run_together({&a}, {&p}, &bytes).front();
  ++runs_.placed;
  runs_.placed_s += std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  for (std::size_t e = 0; e < bytes.size(); ++e)
    if (bytes[e] > 0) out.edges.push_back(static_cast<std::uint32_t>(e));
  return out;
}

std::vector<Seconds> EngineOracle::together(std::span<const JobSpec* const> jobs,
                                            std::span<const JobPlacement> placements) {
  const std::size_t n = jobs.size();
  std::vector<Seconds> step(n);
  std::vector<const Placed*> fp(n);
  for (std::size_t i = 0; i < n; ++i) {
    if (!cluster_.contention || cluster_.mode == "analytical") {
      step[i] = entry(*jobs[i], placements[i].pool, static_cast<std::uint32_t>(placements[i].devices.size())).step;
      continue;
    }
    fp[i] = &placed(*jobs[i], placements[i]);
    step[i] = fp[i]->step;
  }
  if (!cluster_.contention || cluster_.mode == "analytical") return step;
  // Groups of jobs whose footprints meet (union-find over the edges they load).
  std::vector<std::size_t> root(n);
  std::iota(root.begin(), root.end(), 0);
  auto find = [&](std::size_t x) {
    while (root[x] != x) x = root[x] = root[root[x]];
    return x;
  };
  std::map<std::uint32_t, std::size_t> owner;
  for (std::size_t i = 0; i < n; ++i)
    for (std::uint32_t e : fp[i]->edges) {
      auto [it, fresh] = owner.emplace(e, i);
      if (!fresh) root[find(i)] = find(it->second);
    }
  std::map<std::size_t, std::vector<std::size_t>> groups;
  for (std::size_t i = 0; i < n; ++i) groups[find(i)].push_back(i);
  for (const auto& [r, members] : groups) {
    if (members.size() < 2) continue;
    std::vector<std::size_t> order = members;
    std::sort(order.begin(), order.end(), [&](std::size_t a, std::size_t b) {
      return std::tie(jobs[a]->workload, placements[a].devices) < std::tie(jobs[b]->workload, placements[b].devices);
    });
    std::vector<PlacedKey> key;
    for (std::size_t i : order) key.emplace_back(jobs[i]->workload, placements[i].pool, placements[i].devices);
    auto it = groups_.find(key);
    if (it == groups_.end()) {
      std::vector<const Alone*> parts;
      std::vector<const JobPlacement*> at;
      for (std::size_t i : order) {
        parts.push_back(&entry(*jobs[i], placements[i].pool, static_cast<std::uint32_t>(placements[i].devices.size())));
        at.push_back(&placements[i]);
      }
      const auto t0 = std::chrono::steady_clock::now();
      it = groups_.emplace(key, run_together(parts, at, nullptr)).first;
      ++runs_.together;
      runs_.members += order.size();
      runs_.together_s += std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    }
    for (std::size_t k = 0; k < order.size(); ++k) step[order[k]] = it->second[k];
  }
  return step;
}

namespace {

// The sizes a job may run at on a pool: multiples of its quantum from min to max.
std::vector<std::uint32_t> sizes_of(const JobSpec& j) {
  std::vector<std::uint32_t> out;
  for (std::uint32_t n = j.min_devices; n <= j.max_devices; n += std::max<std::uint32_t>(1, j.quantum))
    if (n % j.quantum == 0) out.push_back(n);
  return out;
}

}  // namespace

std::vector<Issue> resolve_work(JobList& list, EngineOracle& oracle, const ClusterSpec& cluster) {
  Diagnostics diag;
  std::set<std::string> reported;
  for (std::size_t i = 0; i < list.jobs.size(); ++i) {
    JobSpec& j = list.jobs[i];
    const std::string path = json_child("/jobs", list.source[i]);
    std::vector<std::uint32_t> pools = j.pools;
    if (pools.empty())
      for (std::uint32_t p = 0; p < cluster.layout.pools.size(); ++p) pools.push_back(p);
    std::string first_input, first_memory;
    bool runnable = false;
    double tokens = 0;  // per step, at the first pool and size it runs at (the same at every size)
    for (std::uint32_t p : pools)
      for (std::uint32_t n : sizes_of(j)) {
        if (n > cluster.layout.pools[p].devices) continue;
        if (oracle.alone(j, p, n)) {
          if (!runnable) tokens = oracle.tokens_per_step(j, p, n);
          runnable = true;
          continue;
        }
        std::string& slot = oracle.refused_by_input(j, p, n) ? first_input : first_memory;
        if (slot.empty())
          slot =
              fmt::format("at {} devices of pool \"{}\": {}", n, cluster.layout.pools[p].name, oracle.refusal(j, p, n));
      }
    if (!runnable && !first_input.empty()) {
      // A workload that cannot be built is reported once, at the workload.
      const std::size_t colon = first_input.find(": /workloads/");
      if (colon == std::string::npos) {
        diag.error(path, fmt::format("job \"{}\" can run nowhere: {}", j.name, first_input));
      } else if (reported.insert(first_input.substr(colon + 2)).second) {
        const std::string issue = first_input.substr(colon + 2);
        const std::size_t sep = issue.find(": ");
        diag.error(issue.substr(0, sep),
                   issue.substr(sep + 2) + fmt::format(" (job \"{}\" {})", j.name, first_input.substr(0, colon)));
      }
      continue;
    }
    if (!runnable) {
      diag.warn(path, fmt::format("job \"{}\" fits on no pool{}", j.name,
                                  first_memory.empty() ? ": every pool is smaller than it" : ": " + first_memory));
      continue;
    }
    const JobWork& w = list.work[i];
    if (w.kind == JobWork::Kind::steps) {
      j.steps = w.amount;
    } else if (w.kind == JobWork::Kind::tokens) {
      j.steps = std::ceil(w.amount / tokens);
    } else {
      std::optional<Seconds> step;
      for (std::uint32_t n : sizes_of(j))
        if (auto s = oracle.alone(j, w.pool, n)) step = s;  // the largest size that runs there
      if (!step) {
        diag.error(json_child(json_child(path, "work"), "pool"),
                   fmt::format("job \"{}\" cannot run on pool \"{}\" at any of its sizes", j.name,
                               cluster.layout.pools[w.pool].name));
        continue;
      }
      j.steps = std::max(1.0, std::round(w.duration / *step));
    }
  }
  diag.throw_if_any();
  return diag.warnings();
}

}  // namespace hcsim
