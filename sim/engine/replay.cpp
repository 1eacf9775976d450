// Task-graph replay on SimGrid 3.32: actor-free activities created incrementally, and
// kernel timers for whatever needs no resource.
//
// SimGrid 3.32 keeps every activity started from maestro on one std::list and removes it with
// std::list::remove when it ends, so each ending costs a walk over all activities alive
// (../shared/simgrid.md §0; fixed upstream in 3.34). Only what shares a resource is an
// activity here: flows (links) and compute on a device whose compute tasks may overlap (the
// host's CPU is shared). A fixed delay (a latency term, a zero-byte send) and compute on a
// device whose compute tasks form a chain (it runs alone, at full speed, for exactly its
// duration) are kernel timers, which no list holds. In flow mode most live activities were
// such compute tasks.
//
// With SM contention (EngineOptions::comm_cores) a chained device's running kernel timer is
// re-armed at the rate left whenever a collective on the device starts or ends, and a device
// of Execs runs at the power state of the SMs its collectives hold.
#include <signal.h>

#include <algorithm>
#include <map>
#include <memory>
#include <optional>
#include <set>
#include <tuple>

#include <simgrid/kernel/Timer.hpp>
#include <simgrid/s4u.hpp>
#include <xbt/log.h>

#include "engine_internal.hpp"
#include "sim/core/error.hpp"
#include "sim/core/run_status.hpp"
#include "sim/engine/collective_replay.hpp"
#include "topologies/routing.hpp"
#include "topologies/transfer_time.hpp"

namespace sg4 = simgrid::s4u;

namespace hcsim::engine {
namespace {

// Host speed: compute tasks carry durations; an Exec of d * kSpeed flops lasts d seconds.
constexpr double kSpeed = 1e12;
constexpr TaskId kNoTask = ~TaskId{0};

struct Platform {
  // Per endpoint (devices, then the topology's memory nodes: TaskGraph::memory_endpoints):
  // its topology node, and its host once build_platform made one (null when unused).
  std::vector<int> endpoint_node;
  std::vector<sg4::Host*> endpoint_host;
  std::vector<char> chained;  // per endpoint: its compute tasks form a chain (chained_compute)
  const Router* router = nullptr;      // hcsim's routes (the planner's), declared to SimGrid pair by pair

  const Route& route(std::uint32_t src, std::uint32_t dst) const {
    return router->route(endpoint_node[src], endpoint_node[dst]);
  }
};

void map_endpoints(const TopologyGraph& topo, const TaskGraph& g, Platform& pf) {
  pf.endpoint_node.clear();
  for (int d = 0; d < topo.device_count(); ++d) pf.endpoint_node.push_back(topo.device_node(d));
  if (g.memory_endpoints == 0) {  // devices only (a graph may leave TaskGraph::devices unset then)
    pf.endpoint_host.assign(pf.endpoint_node.size(), nullptr);
    return;
  }
  HCSIM_ASSERT(g.devices <= pf.endpoint_node.size(), "the task graph spans more devices than the topology has");
  pf.endpoint_node.resize(g.devices, -1);
  const std::vector<int> mem = memory_nodes(topo);
  HCSIM_ASSERT(g.memory_endpoints <= mem.size(), "the task graph uses more memory endpoints than the topology has");
  pf.endpoint_node.insert(pf.endpoint_node.end(), mem.begin(), mem.begin() + g.memory_endpoints);
  pf.endpoint_host.assign(pf.endpoint_node.size(), nullptr);
}

// Endpoint pairs the task graph sends between: point-to-point sends (offload streams to
// memory endpoints included), and the pairs of the collectives' plans (collective_plan.hpp:
// the chosen algorithm's flows).
std::set<std::pair<std::uint32_t, std::uint32_t>> used_pairs(const TaskGraph& g, CollectiveReplay& colls, bool solo) {
  std::set<std::pair<std::uint32_t, std::uint32_t>> pairs;
  for (const Task& t : g.tasks())
    if (t.kind == TaskKind::send && t.device != t.peer) pairs.insert({t.device, t.peer});
  colls.plan_all(pairs, solo);
  return pairs;
}

// Per endpoint: whether each of its compute tasks depends directly on the one before it (in
// task order), so that no two ever run at once. Those run as timers; the others as Execs
// sharing their device's host.
void chained_compute(const TaskGraph& g, Platform& pf) {
  pf.chained.assign(pf.endpoint_node.size(), 1);
  std::vector<TaskId> last(pf.endpoint_node.size(), kNoTask);
  for (TaskId t = 0; t < g.size(); ++t) {
    const Task& task = g[t];
    if (task.kind != TaskKind::compute) continue;
    TaskId& prev = last[task.device];
    if (prev != kNoTask) {
      const auto deps = g.deps(t);
      if (std::find(deps.begin(), deps.end(), prev) == deps.end()) pf.chained[task.device] = 0;
    }
    prev = t;
  }
}

// Hosts only for the endpoints the task graph uses (compute tasks' devices, the ends of the
// used pairs): at scale most devices are symmetric replicas that run nothing, and a host
// costs memory and engine time. Every topology edge a used route crosses is a split-duplex
// link whose UP direction runs from edge.a to edge.b; a memory node's media is one more
// link, shared by reads and writes (bandwidth MemoryMedia::bandwidth, or unbounded when
// zero; its media latency). Routes are hcsim's own (topologies/routing), declared only for
// the pairs used, so the platform stays small at scale.
void build_platform(const TopologyGraph& topo, const TaskGraph& g,
                    const std::set<std::pair<std::uint32_t, std::uint32_t>>& pairs, Platform& pf,
                    const std::vector<int>& comm_cores) {
  auto* zone = sg4::create_full_zone("hcsim");
  auto host = [&](std::uint32_t ep) {
    if (!pf.endpoint_host[ep]) {
      const std::string name = g.is_memory(ep) ? "m" + std::to_string(ep - g.devices) : "d" + std::to_string(ep);
      // Contention on a device of Execs: power state k at 1 - k / cores (Replay::share_host).
      const int cores = ep < comm_cores.size() && !pf.chained[ep] ? comm_cores[ep] : 0;
      std::vector<double> speeds{kSpeed};
      for (int k = 1; k < cores; ++k) speeds.push_back(kSpeed * (1 - static_cast<double>(k) / cores));
      pf.endpoint_host[ep] = zone->create_host(name, speeds);
      pf.endpoint_host[ep]->seal();
    }
    return pf.endpoint_host[ep];
  };
  for (const Task& t : g.tasks())
    if (t.kind == TaskKind::compute && !pf.chained[t.device]) host(t.device);
  std::vector<sg4::SplitDuplexLink*> link(topo.edges().size(), nullptr);
  std::map<int, sg4::Link*> media;  // by memory node
  auto media_link = [&](int node) {
    auto& l = media[node];
    if (!l) {
      const MemoryMedia& m = topo.media(node);
      const double bw = m.bandwidth.value() > 0 ? m.bandwidth.value() : 1e30;
      l = zone->create_link("media" + std::to_string(node), bw);
      l->set_latency(m.latency.value());
      l->seal();
    }
    return sg4::LinkInRoute(l);
  };
  for (const auto& [src, dst] : pairs) {
    const Route& r = pf.route(src, dst);
    HCSIM_ASSERT(r.reachable, "no route between endpoints " + std::to_string(src) + " and " + std::to_string(dst));
    std::vector<sg4::LinkInRoute> links;
    if (g.is_memory(src)) links.push_back(media_link(pf.endpoint_node[src]));
    for (std::size_t h = 0; h < r.edges.size(); ++h) {
      const auto e = static_cast<std::size_t>(r.edges[h]);
      const TopoEdge& ed = topo.edges()[e];
      if (!link[e]) {
        link[e] = zone->create_split_duplex_link("e" + std::to_string(e), ed.effective_bandwidth().value());
        link[e]->set_latency(ed.link().latency.value());
        link[e]->seal();
      }
      const bool forward = r.nodes[h] == ed.a;
      links.emplace_back(link[e], forward ? sg4::LinkInRoute::Direction::UP : sg4::LinkInRoute::Direction::DOWN);
    }
    if (g.is_memory(dst)) links.push_back(media_link(pf.endpoint_node[dst]));
    zone->add_route(host(src)->get_netpoint(), host(dst)->get_netpoint(), nullptr, nullptr, links, false);
  }
  zone->seal();
}

class Replay final : public ActivityHost {
 public:
  Replay(const TopologyGraph& topo, const TaskGraph& g, CollectivePlanner& planner, Platform& pf,
         const EngineOptions& opt)
      : g_(g), pf_(pf), colls_(g, planner, *this, opt.representative_flows) {
    const std::vector<int>& comm_cores = opt.comm_cores;
    if (std::any_of(comm_cores.begin(), comm_cores.end(), [](int c) { return c > 0; })) {
      colls_.set_overlap_sms(opt.tp_overlap_sms);
      cores_ = comm_cores;
      cores_.resize(pf.endpoint_node.size(), 0);
      channels_.assign(cores_.size(), 0);
      running_.resize(cores_.size());
    }
    const std::size_t n = g.size();
    res_.end.assign(n, -1);
    res_.edge_bytes.assign(topo.edges().size(), 0.0);
    missing_.resize(n);
    std::vector<std::uint32_t> count(n + 1, 0);
    for (TaskId t = 0; t < n; ++t) {
      missing_[t] = static_cast<std::uint32_t>(g.deps(t).size());
      for (TaskId d : g.deps(t)) ++count[d + 1];
    }
    for (std::size_t i = 1; i <= n; ++i) count[i] += count[i - 1];
    succ_begin_ = count;
    succ_.resize(count[n]);
    for (TaskId t = 0; t < n; ++t)
      for (TaskId d : g.deps(t)) succ_[count[d]++] = t;
  }

  CollectiveReplay& collectives() { return colls_; }

  EngineResult run() {
    sg4::Activity::on_completion_cb([this](sg4::Activity const& a) { on_done(a); });
    for (TaskId t = 0; t < g_.size(); ++t)
      if (missing_[t] == 0) start(t);
    sg4::Engine::get_instance()->run();
    for (TaskId t = 0; t < g_.size(); ++t)
      HCSIM_ASSERT(res_.end[t] >= 0, "task " + std::to_string(t) + " never finished (dependency cycle?)");
    colls_.account_rest();
    account_mirrors();
    res_.makespan = sg4::Engine::get_clock();
    res_.activities = activities_;
    return std::move(res_);
  }

  // ActivityHost
  void launch_comm(std::uint32_t src, std::uint32_t dst, double bytes, TaskId t, int coll, std::uint32_t item,
                   double stretch) override {
    launch(comm(src, dst, bytes, stretch), t, coll, item, src, dst);
  }
  void launch_timer(Seconds d, TaskId t, int coll, std::uint32_t item) override { timer(d.value(), t, coll, item); }
  void finish(TaskId t) override {
    res_.end[t] = sg4::Engine::get_clock();
    if (contention() && g_[t].kind == TaskKind::collective) collective_cores(t, -1);
    if (status_) {
      status_->tasks_done.fetch_add(1, std::memory_order_relaxed);
      status_->sim_time_s.store(res_.end[t], std::memory_order_relaxed);
    }
    for (std::uint32_t i = succ_begin_[t]; i < succ_begin_[t + 1]; ++i) {
      TaskId s = succ_[i];
      if (--missing_[s] == 0) start(s);
    }
  }
  std::vector<double>& edge_bytes() override { return res_.edge_bytes; }

 private:
  struct Slot {
    TaskId task = 0;
    int coll = -1;  // collective instance, or -1 for a plain task
    std::uint32_t item = 0;
    sg4::ActivityPtr act;
    std::uint32_t src = 0, dst = 0;  // a flow's ends (src == dst: not a flow)
  };

  void start(TaskId t) {
    const Task& task = g_[t];
    switch (task.kind) {
      case TaskKind::compute:
        if (pf_.chained[task.device] && contention() && cores_[task.device] > 0) compute_timer(task.device, t);
        else if (pf_.chained[task.device]) timer(task.duration.value(), t, -1, 0);
        else launch(exec(pf_.endpoint_host[task.device], task.duration.value() * kSpeed), t, -1, 0);
        break;
      case TaskKind::send:
        if (task.device == task.peer || task.bytes <= Bytes{}) timer(0, t, -1, 0);
        else {
          colls_.flow_started(task.device, task.peer);
          const double stretch = colls_.send_stretch(t);
          launch(comm(task.device, task.peer, task.bytes.value(), stretch), t, -1, 0, task.device, task.peer);
        }
        break;
      case TaskKind::collective:
        if (contention()) collective_cores(t, +1);
        colls_.start(t);
        break;
    }
  }

  // SM contention (EngineOptions::comm_cores; docs/models.md "SM contention"): while a
  // collective runs, its channels (CollectiveReplay::channels) hold that many of each of its
  // devices' cores, and the device's compute runs at the share left, 1 - min(held, cores -
  // 1) / cores, held the channels of all its running collectives.
  [[nodiscard]] bool contention() const { return !cores_.empty(); }
  [[nodiscard]] double compute_rate(std::uint32_t d) const {
    const double held = std::min(channels_[d], static_cast<double>(cores_[d]) - 1);
    return 1 - held / cores_[d];
  }
  void collective_cores(TaskId t, int sign) {
    const int ch = colls_.channels(t);
    if (ch <= 0) return;
    for (std::uint32_t d : g_.groups()[g_[t].group]) {
      if (d >= cores_.size() || cores_[d] <= 0) continue;
      channels_[d] += sign * ch;
      if (pf_.chained[d]) rerate(d);
      else if (pf_.endpoint_host[d]) share_host(d);
    }
  }
  // A chained device's running compute task: its work left (seconds at the full rate), the
  // rate it runs at since `since`, and its timer.
  struct Running {
    TaskId t = 0;
    double left = 0, rate = 1, since = 0;
    simgrid::kernel::timer::Timer* timer = nullptr;
  };
  void compute_timer(std::uint32_t d, TaskId t) {
    running_[d] = {t, g_[t].duration.value(), compute_rate(d), sg4::Engine::get_clock(), nullptr};
    arm(d);
    ++activities_;
  }
  void arm(std::uint32_t d) {
    Running& r = running_[d];
    const TaskId t = r.t;
    r.timer = simgrid::kernel::timer::Timer::set(r.since + r.left / r.rate, [this, d, t] {
      graveyard_.clear();
      running_[d].timer = nullptr;
      finish(t);
    });
  }
  void rerate(std::uint32_t d) {
    Running& r = running_[d];
    const double rate = compute_rate(d);
    if (!r.timer || rate == r.rate) return;
    const double now = sg4::Engine::get_clock();
    r.left = std::max(0.0, r.left - (now - r.since) * r.rate);
    r.since = now;
    r.rate = rate;
    r.timer->remove();
    arm(d);
  }
  // A device whose compute tasks are Execs: its host's power state k runs at 1 - k / cores of
  // the full speed (build_platform), k the cores the channels hold.
  void share_host(std::uint32_t d) {
    pf_.endpoint_host[d]->set_pstate(static_cast<unsigned long>(std::min(channels_[d], cores_[d] - 1.0)));
  }

  // Execs created from maestro (no actor): init, size, host, then start.
  static sg4::ActivityPtr exec(sg4::Host* h, double flops) {
    sg4::ExecPtr e = sg4::Exec::init();
    e->set_flops_amount(flops);
    e->set_host(h);
    e->start();
    return e;
  }

  // `stretch`: simulated bytes per real byte, for links shared with mirrors (mirror_load.hpp);
  // the links' byte counts keep the real bytes.
  sg4::ActivityPtr comm(std::uint32_t src, std::uint32_t dst, double bytes, double stretch = 1) {
    account(src, dst, bytes);
    return sg4::Comm::sendto_async(pf_.endpoint_host[src], pf_.endpoint_host[dst],
                                   static_cast<std::uint64_t>(bytes * stretch + 0.5));
  }

  void timer(double d, TaskId t, int coll, std::uint32_t item) {
    simgrid::kernel::timer::Timer::set(sg4::Engine::get_clock() + d, [this, t, coll, item] {
      graveyard_.clear();
      ended(t, coll, item);
    });
    ++activities_;
  }

  void ended(TaskId t, int coll, std::uint32_t item) {
    if (coll < 0) finish(t);
    else colls_.on_activity(coll, item);
  }

  void launch(sg4::ActivityPtr a, TaskId t, int coll, std::uint32_t item, std::uint32_t src = 0, std::uint32_t dst = 0) {
    std::size_t id;
    if (!free_.empty()) {
      id = free_.back();
      free_.pop_back();
    } else {
      id = slots_.size();
      slots_.emplace_back();
    }
    slots_[id] = {t, coll, item, a, src, dst};
    a->set_data(reinterpret_cast<void*>(static_cast<std::uintptr_t>(id + 1)));
    ++activities_;
  }

  // Mirrors' bytes on the routes of their sets, once per distinct set: a send set carries
  // the bytes of all the sends it mirrors; a collective set is planned once per (set,
  // group, op, bytes) and charged once per collective it mirrors.
  void account_mirrors() {
    std::map<std::uint32_t, double> sent;  // send sets: bytes summed
    std::map<std::tuple<std::uint32_t, std::uint32_t, int, double>, std::pair<TaskId, double>> colls;
    for (const auto& mr : g_.mirrors()) {
      const Task& t = g_[mr.task];
      if (t.kind == TaskKind::send) {
        sent[mr.set] += t.bytes.value();
      } else {
        auto& [task, count] = colls[{mr.set, t.group, static_cast<int>(t.op), t.bytes.value()}];
        task = mr.task;
        count += 1;
      }
    }
    for (const auto& [set, bytes] : sent)
      for (const auto& [src, dst] : g_.mirror_sets()[set].pairs) account(src, dst, bytes);
    for (const auto& [key, v] : colls) colls_.account_mirror(v.first, std::get<0>(key), v.second);
  }

  void account(std::uint32_t src, std::uint32_t dst, double bytes) {
    if (g_.is_memory(src) || g_.is_memory(dst)) {
      for (int e : pf_.route(src, dst).edges) res_.edge_bytes[static_cast<std::size_t>(e)] += bytes;
      return;
    }
    // A mirror's route, read as for_link_slots reads it (translated, not kept, where it may be).
    pf_.router->for_link_slots(static_cast<int>(src), static_cast<int>(dst),
                               [&](std::size_t s) { res_.edge_bytes[s / 2] += bytes; });
  }

  void on_done(sg4::Activity const& a) {
    graveyard_.clear();
    auto id = reinterpret_cast<std::uintptr_t>(a.get_data<void>());
    if (id == 0) return;
    const Slot s = slots_[id - 1];
    graveyard_.push_back(std::move(slots_[id - 1].act));
    free_.push_back(id - 1);
    colls_.flow_ended(s.src, s.dst);
    if (s.coll < 0) colls_.send_ended(s.task);
    ended(s.task, s.coll, s.item);
  }

  const TaskGraph& g_;
  Platform& pf_;
  CollectiveReplay colls_;
  EngineResult res_;
  std::vector<std::uint32_t> missing_, succ_begin_;
  std::vector<TaskId> succ_;
  std::vector<Slot> slots_;
  std::vector<std::size_t> free_;
  std::vector<sg4::ActivityPtr> graveyard_;
  std::uint64_t activities_ = 0;
  RunStatus* status_ = run_status();  // the progress line's figures, when one is shown
  std::vector<int> cores_;          // per endpoint (EngineOptions::comm_cores; empty: no contention)
  std::vector<double> channels_;    // per endpoint: channels of its running collectives
  std::vector<Running> running_;    // per chained endpoint
};

}  // namespace

EngineResult simulate_in_process(const TopologyGraph& topo, const TaskGraph& graph, const EngineOptions& opt,
                                 const std::function<void(const EngineResult&)>& deliver) {
  int argc = 1;
  char arg0[] = "hcsim";
  char* argv[] = {arg0, nullptr};
  xbt_log_control_set("root.thres:critical");
  // SimGrid installs its own SIGINT handler (a status dump, then exit() from inside the
  // simulation, which ends in "Segmentation fault."); the process's own handlers
  // (sim/cli/interrupt.cpp: end quietly in the engine process) are put back.
  struct sigaction old_int {}, old_term {};
  ::sigaction(SIGINT, nullptr, &old_int);
  ::sigaction(SIGTERM, nullptr, &old_term);
  sg4::Engine e(&argc, argv);
  ::sigaction(SIGINT, &old_int, nullptr);
  ::sigaction(SIGTERM, &old_term, nullptr);
  // CM02 without TCP window or cross-traffic: a flow of S bytes on a path of latency L and
  // bottleneck B takes L + S/B (../shared/simgrid.md §9.6).
  e.set_config("network/model:CM02");
  e.set_config("network/TCP-gamma:0");
  e.set_config("network/crosstraffic:0");
  std::optional<CollectivePlanner> own;
  if (!opt.planner)
    own.emplace(topo, opt.algorithm, opt.mode == "flow", CostOptions{.deepep = opt.deepep, .routing = opt.routing},
                opt.flow_phases);
  CollectivePlanner& planner = opt.planner ? *opt.planner : *own;
  HCSIM_ASSERT(&planner.model().router().graph() == &topo && planner.flow_mode() == (opt.mode == "flow") &&
                   planner.flow_phases() == (opt.mode == "flow" && opt.flow_phases) &&
                   planner.algorithm() == opt.algorithm && planner.model().options().deepep == opt.deepep &&
                   planner.model().options().routing == opt.routing,
               "EngineOptions::planner was made for another topology, mode, algorithm or MoE dispatch");
  Platform pf;
  pf.router = &planner.router();
  map_endpoints(topo, graph, pf);
  chained_compute(graph, pf);
  if (!opt.compute_timers) pf.chained.assign(pf.chained.size(), 0);
  Replay r(topo, graph, planner, pf, opt);
  build_platform(topo, graph, used_pairs(graph, r.collectives(), opt.solo_collectives), pf, opt.comm_cores);
  EngineResult res = r.run();
  if (deliver) deliver(res);
  return res;
}

}  // namespace hcsim::engine
